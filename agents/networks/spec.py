"""What a policy network reads of a game: :func:`game_spec` (sizes, the places of the
observation's card block, and each action's source place, target place, kind and run length),
taken from the engine's action table (``engine.actions.decode``) and the observation layout
(``obs_layout``), so no network restates either; and the sizes of the tables the ``cards``
network (:mod:`agents.networks.cards`) indexes. Needs numpy only, not torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solitaire_gym.engine.actions import (
    K_CF,
    K_CT,
    K_DRAW,
    K_FC,
    K_FT,
    K_RECYCLE,
    K_TC,
    K_TF,
    K_TT,
    K_WF,
    K_WT,
    decode,
)
from solitaire_gym.engine.cards import RANKS, SUITS, rank_of, suit_of
from solitaire_gym.engine.variants import G_COLS, L_N
from solitaire_gym.envs.core import EnvOptions
from solitaire_gym.envs.observation import layout, row_faces

PLACE_FEATS = 2
"""Pile-block values per place a ``piles`` network reads (-1 in ``place_feats``: none)."""

DEPTHS = 64
"""Depths a ``lookup`` network tells apart in a place (deeper cards share the last)."""

PAIRS = (2 * len(RANKS) + 1) * len(SUITS) ** 2
"""Pairs of cards a ``moves`` network tells apart: rank difference (−12 … 12, in 27 slots) times
the two suits; one more value for a pair with no second card."""

LEFT = 4
"""Face-up cards left in a column that a ``moves`` network tells apart (more count as this)."""


def game_spec(game: str, options: dict | None = None) -> dict[str, Any]:
    """What a network for ``game`` needs to know: sizes, the places of the observation's card
    block, and each action's source place, target place, kind and run length."""
    opts = EnvOptions.build(game, **(options or {}))
    cfg = opts.variant.cfg
    lay = layout(cfg)
    n_actions = int(cfg[L_N])
    n_cards = opts.variant.n_cards
    cols = int(cfg[G_COLS])
    places = [*(lay.columns + c for c in range(cols)), lay.found]
    for f in (lay.waste, lay.stock):
        if f >= 0:
            places.append(f)
    cells = 0
    if lay.cell >= 0:
        cells = (lay.unseen if lay.unseen >= 0 else lay.depth) - lay.cell
        places += [lay.cell + k for k in range(cells)]
    slot = {f: i for i, f in enumerate(places)}
    faces = row_faces(cfg)
    all_cells = len(places)  # one more place: every free cell together
    src = np.zeros(n_actions, np.int64)
    dst = np.zeros(n_actions, np.int64)
    kind = np.zeros(n_actions, np.int64)
    run = np.zeros(n_actions, np.int64)
    # the card an action moves: the one at this depth of its source place (-1: none known, as
    # for a draw or a card leaving a foundation); whether its target is a column's top card
    mv_depth = np.full(n_actions, -1, np.int64)
    tg_top = np.zeros(n_actions, bool)
    # the cards a column source gives up (0: the source is no column), and the depth in its
    # source place of the card the move uncovers (-1: none, as for a free cell or a draw)
    moved = np.zeros(n_actions, np.int64)
    un_depth = np.full(n_actions, -1, np.int64)
    for a in range(n_actions):
        k, s, d, n = (int(v) for v in decode(cfg, a))
        kind[a], run[a] = k, n
        if k == K_TT:
            mv_depth[a] = max(n - 1, 0)
        elif k in (K_TF, K_TC, K_WT, K_WF, K_CT, K_CF):
            mv_depth[a] = 0
        tg_top[a] = k in (K_TT, K_WT, K_CT, K_FT)
        if k in (K_TT, K_TF, K_TC):
            moved[a] = n if k == K_TT else 1
        if k in (K_TT, K_TF, K_TC, K_WT, K_WF):
            un_depth[a] = mv_depth[a] + 1
        if k in (K_DRAW, K_RECYCLE):
            src[a], dst[a] = slot[lay.stock], slot[lay.waste]
        elif k == K_TT:
            src[a], dst[a] = s, d
        elif k == K_TF:
            src[a], dst[a] = s, slot[lay.found]
        elif k == K_WT:
            src[a], dst[a] = slot[lay.waste], d
        elif k == K_WF:
            src[a], dst[a] = slot[lay.waste], slot[lay.found]
        elif k == K_TC:
            src[a], dst[a] = s, all_cells
        elif k == K_CT:
            src[a], dst[a] = slot[lay.cell + s], d
        elif k == K_CF:
            src[a], dst[a] = slot[lay.cell + s], slot[lay.found]
        elif k == K_FT:
            src[a], dst[a] = slot[lay.found], d
        elif k == K_FC:
            src[a], dst[a] = slot[lay.found], all_cells
        else:  # a kind this table does not know: fail loudly rather than guess
            raise ValueError(f"action {a}: unknown kind {k}")
    return {
        "variant": opts.variant.tag,
        "prefix": opts.variant.prefix,
        "obs_dim": int(lay.size),
        "n_actions": n_actions,
        "n_cards": n_cards,
        "width": int(lay.width),
        "card_block": int(lay.lengths),  # the card block ends where the pile block starts
        "places": np.array(places, np.int64),
        "cells": cells,
        "src": src,
        "dst": dst,
        "kind": kind,
        "run": run,
        "mv_depth": mv_depth,
        "tg_top": tg_top,
        "moved": moved,
        "un_depth": un_depth,
        "face": faces,
        # each card row's rank and suit, as the engine reads a card id
        "rank": np.array([rank_of(f) for f in faces], np.int64),
        "suit": np.array([suit_of(f) for f in faces], np.int64),
        "depth_col": int(lay.depth),
        "place_feats": _place_feats(lay, slot, cols, cells),
    }


def _place_feats(lay, slot: dict[int, int], cols: int, cells: int) -> np.ndarray:
    """(places, :data:`PLACE_FEATS`) observation indices of the pile-block values that belong to
    each place of :func:`game_spec` (``slot``: its place index of each card-block place column;
    the all-cells place last), -1 for none. The foundations get none: their heights are per
    pile, not per place."""
    out = np.full((len(slot) + (1 if cells else 0), PLACE_FEATS), -1, np.int64)
    for c in range(cols):
        out[slot[lay.columns + c]] = (lay.lengths + c, lay.downs + c if lay.downs >= 0 else -1)
    if lay.waste >= 0:
        out[slot[lay.waste]] = (lay.waste_size, -1)
        out[slot[lay.stock]] = (lay.stock_size, lay.stock_unseen)
    for c in range(cells):
        out[slot[lay.cell + c]] = (lay.cell_empty + c, -1)
    return out
