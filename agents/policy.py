"""Policy networks trained from the teacher, and their checkpoints.

Two architectures map an observation to one score per action (illegal actions are masked by the
agent, never chosen):

- ``"mlp"``: the observation vector through ``layers`` fully connected ReLU layers of ``hidden``
  units, then a linear layer to the actions.
- ``"cards"``: a network shaped like the game. Each card row of the observation (where the card
  lies, its depth, ...) plus a learned embedding of the card's identity goes through a small MLP
  shared by all cards; the card embeddings are summed per place (each tableau column, the
  foundations, the waste, the stock, each free cell, and all cells together) using the card's
  location flags; a global vector comes from the pile block and the mean card. The score of an
  action is an MLP of ``layers`` ReLU layers of ``hidden`` units over the sum of the embeddings
  of its source and target places, of its kind and run length, and of the global vector (the
  first layer is that sum), plus a bias per action. Sources and targets come
  from the engine's action table (``engine.actions.decode``) and the places from the observation
  layout (``obs_layout``), so nothing here restates either.

**Heads.** With ``arch["heads"] = "factored"`` a ``cards`` network has two more scores per
legal action beside the policy's, from the same action embedding: a *rank* score, trained to
order the moves as the greedy player does, and a *winnability* logit, trained on the solver's
verdicts on the moves the teacher tried (:func:`agents.teacher.teacher_orders`): the label was
shown to keep the game winnable, the moves greedy ranks above it were not. How such a network
chooses is its *play rule* (``meta["play"]``, :data:`PLAY_RULES`): ``"policy"`` the best policy
score; ``"veto"`` the best policy score among the moves whose predicted winnability is at least
``threshold`` (all of them when none is); ``"factored"`` the best rank score among those moves.
Every rule is the network alone: no solver, greedy code or search at play time.

**Memory.** With ``arch["memory"] = true`` a ``cards`` network also sees, per legal action, how
often its game has already played that action from this very observation (0, 1, 2, 3+: a table
the agent keeps per game, ``agents/memory.py``), as the greedy player and hence the teacher do.
It is what the player has done, never what it has not seen; it is not search (nothing is tried
ahead).

**Piles.** With ``arch["piles"] = true`` a ``cards`` network also adds to each place's summed
card embedding a learned embedding of the place and a linear map of what the pile block says
about that place alone (:func:`game_spec`, ``place_feats``): a column's length and face-down
count, the waste's size, the stock's size and unseen count, whether a free cell is empty. Without
it those counts reach an action only mixed into the global vector, so the network cannot tell
which column a face-down card lies under (what the greedy player's "turns a face-down card
over" reads).

**Moves.** With ``arch["moves"] = true`` a ``cards`` network also adds, per legal action, what
the action touches: projections of the embeddings of the card it moves, the card it goes on and
the card it uncovers (the one below it in its source place; a learned "none" when there is no
such card or it lies face down); an embedding of the rank difference and the two suits of the
moved card against each of those two; and an embedding of the face-up cards its source column
keeps (0 … :data:`LEFT`, and whether face-down cards lie below them). Each card's embedding also
gets embeddings of its rank and suit, shared by both copies of a card in Double Solitaire. The
pooled sums per place cannot say which card lies where in a pile; these can, so an action can see
whether it builds, turns a card over or empties its column (what greedy's order reads). The
cards are found through the observation's card block, each row's face through
``observation.row_faces`` and its rank and suit through the engine's ``rank_of`` / ``suit_of``;
nothing here knows a rule: which pairs build is learned.

**Checkpoints** are single ``.npz`` files (:func:`save_policy`, :func:`load_policy`): the weights
as plain arrays and a JSON record (format, observation layout id, variant, sizes, architecture,
how it was trained, the wins it scored on fixed deals). Loading reads them header first
(:mod:`agents.npz`, as teacher shards are read): no code object is ever unpickled, so a checkpoint from anywhere is safe to load. A checkpoint whose
layout id differs from the package's (``solitaire_gym.envs.observation.layout_id``) is refused:
the observation it was trained on no longer exists. Each array's ``.npy`` header is read and
checked before its data: a weight must have its parameter's shape and be float32 (either byte
order; float64 is refused, not rounded: :func:`save_policy` never writes it) with finite values,
the metadata a byte string of at most :data:`MAX_META_BYTES` and strict JSON, so a damaged or
hostile file (a negative or huge declared shape, a zip bomb) is refused by name
(:class:`CheckpointError`) without allocating more than those sizes.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.dataset import save_npz
from agents.memory import MODES, PlayMemory
from agents.npz import MAX_META_BYTES, Npz
from agents.torch_setup import net_device, resolve_device
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
from solitaire_gym.envs.observation import DEPTH_SCALE, layout, layout_id, row_faces
from solitaire_gym.errors import shown
from solitaire_gym.files import FileFormatError, strict_json

FORMAT = "solitaire_gym-policy"
FORMAT_VERSION = 1
ARCHS = ("mlp", "cards")
HEADS = ("policy", "factored")
PLAY_RULES = ("policy", "veto", "factored")


class CheckpointError(ValueError):
    """A policy checkpoint that cannot be loaded, or not for this game (the message says why)."""


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


PLACE_FEATS = 2
"""Pile-block values per place a ``piles`` network reads (-1 in ``place_feats``: none)."""


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


def build_net(arch: dict[str, Any], spec: dict[str, Any]):
    """The torch module of ``arch`` (``{"kind": "mlp" | "cards", "hidden": int, "layers": int}``)
    for the game of ``spec`` (:func:`game_spec`)."""
    import torch
    from torch import nn

    kind = arch.get("kind")
    hidden = arch.get("hidden")
    layers = arch.get("layers", 2)
    heads = arch.get("heads", "policy")
    lookup = arch.get("lookup", False)
    memory = arch.get("memory", False)
    memory_mode = arch.get("memory_mode", "count")
    piles = arch.get("piles", False)
    moves = arch.get("moves", False)
    for name, v in (("lookup", lookup), ("memory", memory), ("piles", piles), ("moves", moves)):
        if not isinstance(v, bool):
            raise CheckpointError(f"architecture {name}={shown(v)}: expected true or false")
        if v and kind != "cards":
            raise CheckpointError(f"{name}=true needs kind 'cards', not {shown(kind)}")
    if not isinstance(memory_mode, str) or memory_mode not in MODES:
        raise CheckpointError(f"architecture memory_mode={shown(memory_mode)}: expected one of "
                              f"{', '.join(MODES)}")  # fmt: skip
    if kind not in ARCHS:
        raise CheckpointError(f"architecture kind {shown(kind)} is not one of {list(ARCHS)}")
    if heads not in HEADS:
        raise CheckpointError(f"architecture heads {shown(heads)} is not one of {list(HEADS)}")
    if heads != "policy" and kind != "cards":
        raise CheckpointError(f"heads={shown(heads)} needs kind 'cards', not {shown(kind)}")
    # Python ints only, not is_int's numpy integers: arch is written into the checkpoint's JSON
    # metadata as given
    for name, v, hi in (("hidden", hidden, 4096), ("layers", layers, 8)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= hi:
            raise CheckpointError(f"architecture {name}={shown(v)}: expected an integer 1 … {hi}")
    d, n = spec["obs_dim"], spec["n_actions"]

    if kind == "mlp":

        class MLP(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                mods: list[nn.Module] = []
                width = d
                for _ in range(layers):
                    mods += [nn.Linear(width, hidden), nn.ReLU()]
                    width = hidden
                mods.append(nn.Linear(width, n))
                self.body = nn.Sequential(*mods)
                self.prev_emb = nn.Embedding(n + 1, hidden)  # the previous action (n: none)
                nn.init.zeros_(self.prev_emb.weight)

            def forward(self, obs, mask=None, prev=None):
                x = self.body[0](obs)
                if prev is not None:
                    x = x + self.prev_emb(prev)
                out = self.body[1:](x)
                return out if mask is None else out.masked_fill(~mask, float("-inf"))

        return MLP()

    class CardNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            e = hidden
            self.n_cards, self.width = spec["n_cards"], spec["width"]
            self.card_block = spec["card_block"]
            if self.card_block != self.n_cards * self.width:
                raise ValueError("the card block is not one row per card")
            self.register_buffer("places", torch.as_tensor(spec["places"]), persistent=False)
            self.cells = int(spec["cells"])
            n_places = len(spec["places"]) + (1 if self.cells else 0)
            self.card_id = nn.Embedding(self.n_cards, e)
            self.card_in = nn.Linear(self.width, e)
            self.card_mlp = nn.Sequential(nn.ReLU(), nn.Linear(e, e), nn.ReLU())
            pile = d - self.card_block
            self.glob = nn.Sequential(nn.Linear(pile + e, e), nn.ReLU(), nn.Linear(e, e))
            self.src_proj = nn.Linear(e, e)
            self.dst_proj = nn.Linear(e, e, bias=False)
            self.kind_emb = nn.Embedding(11, e)
            self.run_emb = nn.Embedding(14, e)
            self.out = nn.Linear(e, 1)
            self.bias = nn.Parameter(torch.zeros(n))
            self.factored = heads == "factored"
            self.lookup = lookup
            self.memory = memory
            self.memory_mode = memory_mode
            if memory:  # how often this game played the action from here (agents/memory.py)
                self.tried_emb = nn.Embedding(MODES[memory_mode], e)
                nn.init.zeros_(self.tried_emb.weight)
            self.depth_col = int(spec["depth_col"])
            for k in ("mv_depth", "tg_top", "un_depth", "moved"):
                self.register_buffer(k, torch.as_tensor(spec[k]), persistent=False)
            if lookup:  # the embeddings of the card moved and of the card it goes on
                self.none_card = nn.Parameter(torch.zeros(e))
                self.mv_proj = nn.Linear(e, e, bias=False)
                self.tg_proj = nn.Linear(e, e, bias=False)
            if self.factored:  # rank and winnability scores (module docstring)
                self.out_rank = nn.Linear(e, 1)
                self.bias_rank = nn.Parameter(torch.zeros(n))
                self.out_safe = nn.Linear(e, 1)
                self.bias_safe = nn.Parameter(torch.zeros(n))
            # the previous action (n: none), and how an action relates to it: 0 unrelated,
            # 1 takes from the place it filled, 2 fills the place it took from, 3 both (undoes it)
            self.prev_emb = nn.Embedding(n + 1, e)
            self.rel_emb = nn.Embedding(4, e)
            for k in ("src", "dst", "kind", "run"):
                self.register_buffer(k, torch.as_tensor(spec[k]), persistent=False)
            self.n_places = n_places
            # the action MLP's further layers (made last: a one-layer network is initialised
            # exactly as before this option existed)
            self.head = nn.Sequential(
                *(m for _ in range(layers - 1) for m in (nn.Linear(e, e), nn.ReLU()))
            )
            self.piles = piles
            if piles:  # each place's own pile-block values, and the place itself
                feats = torch.as_tensor(spec["place_feats"])
                self.register_buffer("feat_idx", feats.clamp(min=0), persistent=False)
                self.register_buffer("feat_on", (feats >= 0).float(), persistent=False)
                self.place_in = nn.Linear(feats.shape[1], e)
                self.place_emb = nn.Embedding(feats.shape[0], e)
            self.moves = moves
            if moves:  # the cards a move touches, their faces, what its column keeps
                self.rank_emb = nn.Embedding(len(RANKS), e)
                self.suit_emb = nn.Embedding(len(SUITS), e)
                self.none_move = nn.Parameter(torch.zeros(e))
                self.m_mv = nn.Linear(e, e, bias=False)
                self.m_tg = nn.Linear(e, e, bias=False)
                self.m_un = nn.Linear(e, e, bias=False)
                self.pair_tg = nn.Embedding(PAIRS + 1, e)
                self.pair_un = nn.Embedding(PAIRS + 1, e)
                self.left_emb = nn.Embedding(2 * (LEFT + 1) + 1, e)
                feats = torch.as_tensor(spec["place_feats"])[torch.as_tensor(spec["src"])]
                self.register_buffer("src_len", feats[:, 0].clamp(min=0), persistent=False)
                self.register_buffer("src_down", feats[:, 1], persistent=False)
                for k in ("rank", "suit"):  # per card row, then -1 for "no card"
                    v = torch.as_tensor(spec[k])
                    self.register_buffer(k, v, persistent=False)
                    self.register_buffer(f"{k}_ext", torch.cat([v, v.new_full((1,), -1)]),
                                         persistent=False)  # fmt: skip

        def forward(self, obs, mask=None, prev=None, heads=False, tried=None):
            """Scores (B, N); with ``mask`` (B, N) bool only the legal actions are scored (the
            rest are −inf), which is what makes this network cheap: ~15 legal moves of ~1000.
            ``prev`` (B,): the action played just before in each game (N: none). ``tried``
            (B, N), a ``memory`` network only: how often each game has played each action from
            this observation (:class:`agents.memory.PlayMemory`; None: never). With
            ``heads`` (a factored network only) the tuple (policy, rank, winnability logits),
            each (B, N) and −inf where illegal."""
            b = obs.shape[0]
            cards = obs[:, : self.card_block].reshape(b, self.n_cards, self.width)
            h = self.card_in(cards) + self.card_id.weight  # (B, Nc, E)
            if self.moves:  # the face shared by both copies of a card
                h = h + self.rank_emb(self.rank) + self.suit_emb(self.suit)
            h = self.card_mlp(h)
            loc = cards[:, :, self.places]  # (B, Nc, L): where each card lies
            pooled = torch.einsum("bnl,bne->ble", loc, h)  # (B, L, E)
            if self.cells:
                pooled = torch.cat([pooled, pooled[:, -self.cells :].sum(1, keepdim=True)], 1)
            if self.piles:
                feats = obs[:, self.feat_idx] * self.feat_on  # (B, L', F)
                pooled = pooled + self.place_in(feats) + self.place_emb.weight
            g = self.glob(torch.cat([obs[:, self.card_block :], h.mean(1)], 1))
            n_act = self.bias.shape[0]
            if prev is None:
                prev = torch.full((b,), n_act, dtype=torch.long, device=obs.device)
            g = g + self.prev_emb(prev)
            sp, dp = self.src_proj(pooled), self.dst_proj(pooled)  # (B, L', E)
            if mask is None:
                mask = torch.ones(b, self.bias.shape[0], dtype=torch.bool, device=obs.device)
            rows, acts = mask.nonzero(as_tuple=True)
            p = prev[rows]
            had = p < n_act
            pc = p.clamp(max=n_act - 1)
            rel = (had & (self.src[acts] == self.dst[pc])).long() + 2 * (
                had & (self.dst[acts] == self.src[pc])
            ).long()
            z = (
                sp[rows, self.src[acts]] + dp[rows, self.dst[acts]]
                + self.kind_emb(self.kind[acts]) + self.run_emb(self.run[acts]) + g[rows]
                + self.rel_emb(rel)
            )  # fmt: skip
            if self.lookup:
                z = z + self._moved_cards(cards, loc, h, rows, acts)
            if self.moves:
                z = z + self._move_feats(obs, cards, loc, h, rows, acts)
            if self.memory:  # never played from here when not told
                t = torch.zeros_like(acts) if tried is None else tried[rows, acts].long()
                z = z + self.tried_emb(t.clamp(0, self.tried_emb.num_embeddings - 1))
            z = self.head(torch.relu(z))
            out = torch.full(mask.shape, float("-inf"), dtype=obs.dtype, device=obs.device)
            out[rows, acts] = self.out(z).squeeze(-1) + self.bias[acts]
            if not heads:
                return out
            if not self.factored:
                raise ValueError("this network has the policy head only")
            rank = torch.full_like(out, float("-inf"))
            rank[rows, acts] = self.out_rank(z).squeeze(-1) + self.bias_rank[acts]
            safe = torch.full_like(out, float("-inf"))
            safe[rows, acts] = self.out_safe(z).squeeze(-1) + self.bias_safe[acts]
            return out, rank, safe

        def _moved_cards(self, cards, loc, h, rows, acts):
            """Per scored action: projections of the embedding of the card it moves and of
            the card it goes on (a learned "none" where there is no such card)."""
            b = cards.shape[0]
            mv, tg = self.card_ids(cards, loc, rows, acts)
            h_ext = torch.cat([h, self.none_card.expand(b, 1, -1)], 1)
            return self.mv_proj(h_ext[rows, mv]) + self.tg_proj(h_ext[rows, tg])

        def _move_feats(self, obs, cards, loc, h, rows, acts):
            """Per scored action (``moves``): projections of the embeddings of the card it
            moves, of the card it goes on and of the card it uncovers (a learned "none" where
            there is no such card, or it lies face down); embeddings of the rank difference and
            the two suits of the moved card against each of the other two; and an embedding of
            the face-up cards its source column keeps (0 … LEFT, and whether face-down cards
            lie below them; one more value for a source that is no column)."""
            b = cards.shape[0]
            mv, tg, un, left = self.move_keys(obs, cards, loc, rows, acts)
            h_ext = torch.cat([h, self.none_move.expand(b, 1, -1)], 1)
            r, s = self.rank_ext, self.suit_ext
            ft_pair = self.pair_tg(_pair(r[mv], s[mv], r[tg], s[tg]))
            fu_pair = self.pair_un(_pair(r[mv], s[mv], r[un], s[un]))
            return (
                self.m_mv(h_ext[rows, mv]) + self.m_tg(h_ext[rows, tg])
                + self.m_un(h_ext[rows, un]) + ft_pair + fu_pair + self.left_emb(left)
            )  # fmt: skip

        def move_keys(self, obs, cards, loc, rows, acts):
            """Per action ``acts`` of position ``rows`` (``moves``): the card rows it moves, it
            goes on and it uncovers (``n_cards``: none, or face down), and the index of
            ``left_emb``: ``2 * min(kept, LEFT) + (face-down cards below)`` for the face-up
            cards ``kept`` in a column it takes from, ``2 * (LEFT + 1)`` for another source."""
            mv, tg, un = self.card_ids(cards, loc, rows, acts, under=True)
            n_len = (obs[rows, self.src_len[acts]] * DEPTH_SCALE).round().long()
            di = self.src_down[acts]
            n_down = torch.where(di >= 0, obs[rows, di.clamp(min=0)] * DEPTH_SCALE, 0.0)
            n_down = n_down.round().long()
            n_moved = self.moved[acts]
            left = (n_len - n_down - n_moved).clamp(0, LEFT) * 2 + (n_down > 0).long()
            left = torch.where(n_moved > 0, left, 2 * (LEFT + 1))
            return mv, tg, un, left

        def card_ids(self, cards, loc, rows, acts, under=False):
            """Per action ``acts`` of position ``rows``: the card row it moves (the card at
            depth ``mv_depth`` of its source place) and the top card of its target column,
            each ``n_cards`` for none; with ``under`` also the card it uncovers (depth
            ``un_depth`` of its source place)."""
            b, n_cards, _ = cards.shape
            n_loc = loc.shape[2]
            depth = (cards[:, :, self.depth_col] * DEPTH_SCALE).round().long()
            depth = depth.clamp(0, DEPTHS - 1)
            placed = loc.sum(2) > 0
            key = torch.where(placed, loc.argmax(2) * DEPTHS + depth, n_loc * DEPTHS)
            table = torch.full((b, n_loc * DEPTHS + 1), n_cards, dtype=torch.long,
                               device=cards.device)  # fmt: skip
            ids = torch.arange(n_cards, device=cards.device).expand(b, n_cards)
            table.scatter_(1, key, ids)  # (place, depth) -> the card there (n_cards: none)
            md = self.mv_depth[acts]
            src = self.src[acts].clamp(max=n_loc - 1)
            mv = torch.where(md >= 0, table[rows, src * DEPTHS + md.clamp(min=0)], n_cards)
            dst = self.dst[acts].clamp(max=n_loc - 1)
            tg = torch.where(self.tg_top[acts], table[rows, dst * DEPTHS], n_cards)
            if not under:
                return mv, tg
            ud = self.un_depth[acts]
            un = torch.where(ud >= 0, table[rows, src * DEPTHS + ud.clamp(0, DEPTHS - 1)], n_cards)
            return mv, tg, un

    return CardNet()


DEPTHS = 64
"""Depths a ``lookup`` network tells apart in a place (deeper cards share the last)."""

PAIRS = (2 * len(RANKS) + 1) * len(SUITS) ** 2
"""Pairs of cards a ``moves`` network tells apart: rank difference (−12 … 12, in 27 slots) times
the two suits; one more value for a pair with no second card."""

LEFT = 4
"""Face-up cards left in a column that a ``moves`` network tells apart (more count as this)."""


def _pair(rank_a, suit_a, rank_b, suit_b):
    """The :data:`PAIRS` index of cards ``a`` and ``b`` from their ranks and suits (tensors;
    rank −1: no card)."""
    import torch

    idx = (rank_b - rank_a + len(RANKS)) * len(SUITS) ** 2 + suit_a * len(SUITS) + suit_b
    return torch.where((rank_a >= 0) & (rank_b >= 0), idx, PAIRS)


class PolicyAgent(Agent):
    """A policy network playing deterministically (the highest-scoring legal action) or by
    sampling (``deterministic=False``). Uses the observation and the mask only."""

    def __init__(self, net, meta: dict[str, Any], *, name: str = "learned",
                 deterministic: bool = True, seed: int = 0) -> None:  # fmt: skip
        self.prev: np.ndarray | None = None  # per game: the action it played last
        self.memory: PlayMemory | None = None  # per game: what it played from where
        self.net = net.eval()
        self.meta = complete_meta(meta)
        self.name = name
        self.deterministic = deterministic
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.rule = play_rule(self.meta)  # checked now, not at the first move

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.prev = None
        self.memory = None

    def check_env(self, game: str, options: dict | None = None) -> None:
        check_game(self.meta, game, options, f"policy {self.name!r}")

    def scores(
        self,
        obs: np.ndarray,
        masks: np.ndarray | None = None,
        prev: np.ndarray | None = None,
        tried: np.ndarray | None = None,
    ) -> np.ndarray:
        """The scores (B, N) the play rule (``meta["play"]``) takes the best of; with
        ``masks``, −inf for the illegal actions; ``prev`` (B,) the action each game played last
        (``N``, the action count: none); ``tried`` (B, N) for a ``memory`` network, how often
        each game played each action from this observation (None: never)."""
        import torch

        rule, threshold = self.rule
        dev = net_device(self.net)
        m = None if masks is None else torch.as_tensor(np.asarray(masks, bool), device=dev)
        p = None if prev is None else torch.as_tensor(np.asarray(prev, np.int64), device=dev)
        t = None if tried is None else torch.as_tensor(np.asarray(tried, np.int64), device=dev)
        x = torch.as_tensor(obs, dtype=torch.float32, device=dev)
        kw = {"tried": t} if getattr(self.net, "memory", False) else {}
        with torch.no_grad():
            if rule == "policy":
                return self.net(x, m, p, **kw).cpu().numpy()
            policy, rank, safe = (t.cpu().numpy() for t in self.net(x, m, p, heads=True, **kw))
        return rule_scores(rule, threshold, policy, rank, safe)

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        from agents.learned import masked_choice

        scores = self.preferences(obs, masks, starts)
        out = masked_choice(scores, masks, self.deterministic, self.rng)
        self.commit(obs, masks, out, active)
        return out

    def preferences(self, obs: np.ndarray, masks: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The scores (B, N) this agent plays the best of now (−inf for illegal actions), the
        games of ``starts`` forgotten first. The memory is read, not changed: :meth:`commit`
        records the move played (``agents/veto.py`` plays another move in between)."""
        b, n = masks.shape
        if self.prev is None or self.prev.shape[0] != b:
            self.prev = np.full(b, n, np.int64)
        self.prev[starts] = n  # a new game: no move before
        tried = None
        if getattr(self.net, "memory", False):
            if self.memory is None or self.memory.n != b:
                self.memory = PlayMemory(b, self.net.memory_mode)
            self.memory.forget(np.asarray(starts, bool))
            tried = self.memory.counts(obs, masks)
        return self.scores(obs, masks, self.prev, tried)

    def commit(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               active: np.ndarray) -> None:  # fmt: skip
        """Remember that each ``active`` game plays ``actions`` from ``obs`` (after
        :meth:`preferences` on the same batch)."""
        self.prev[active] = actions[active]
        if getattr(self.net, "memory", False):
            self.memory.record(obs, actions, np.asarray(active, bool) & masks.any(axis=1))


def play_rule(meta: dict[str, Any]) -> tuple[str, float]:
    """The play rule and winnability threshold recorded in ``meta`` (``"policy"`` when none),
    checked against the network's heads."""
    play = meta.get("play", {"rule": "policy"})
    if not isinstance(play, dict):
        raise CheckpointError(f"'play' must be a JSON object, not {shown(play)}")
    rule, threshold = play.get("rule", "policy"), play.get("threshold", 0.5)
    if rule not in PLAY_RULES:
        raise CheckpointError(f"play rule {shown(rule)} is not one of {list(PLAY_RULES)}")
    if (not isinstance(threshold, (int, float)) or isinstance(threshold, bool)
            or not 0.0 <= threshold <= 1.0):  # fmt: skip
        raise CheckpointError(f"play threshold must be a number in 0 … 1, not {shown(threshold)}")
    if rule != "policy" and meta.get("arch", {}).get("heads", "policy") != "factored":
        raise CheckpointError(f"play rule {shown(rule)} needs a network with heads='factored'")
    return rule, float(threshold)


def rule_scores(rule: str, threshold: float, policy: np.ndarray, rank: np.ndarray,
                safe_logits: np.ndarray) -> np.ndarray:  # fmt: skip
    """Scores whose best legal entry is the move ``rule`` chooses (module docstring): the
    policy (``"veto"``) or rank (``"factored"``) score, lowered by 1e6 where the predicted
    winnability is below ``threshold``, so the best vetted move wins and, when every move is
    vetoed, the best of all."""
    base = policy if rule == "veto" else rank
    p = 1.0 / (1.0 + np.exp(-np.clip(safe_logits, -60.0, 60.0)))
    return np.where(p >= threshold, base, base - 1e6)


def complete_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (with ``game`` and ``options``) plus what it implies: the game's prefix, the
    observation size and action count, and the observation layout id."""
    spec = game_spec(meta["game"], meta["options"])
    cfg = EnvOptions.build(meta["game"], **meta["options"]).variant.cfg
    return {**meta, "prefix": spec["prefix"], "obs_dim": spec["obs_dim"],
            "n_actions": spec["n_actions"], "layout_id": layout_id(cfg)}  # fmt: skip


def check_game(meta: dict[str, Any], game: str, options: dict | None, what: str) -> None:
    """Raise :class:`CheckpointError` unless a policy recorded as ``meta`` can play ``game``."""
    want = game_spec(game, options)
    if meta.get("prefix") != want["prefix"]:
        raise CheckpointError(
            f"{what} was trained on {shown(meta.get('variant'))}; it cannot play {want['variant']}"
        )
    for key in ("obs_dim", "n_actions"):
        if meta.get(key) != want[key]:
            raise CheckpointError(
                f"{what} has {key}={shown(meta.get(key))}; {want['variant']} has {want[key]}"
            )


def save_policy(path: str | os.PathLike[str], net, meta: dict[str, Any]) -> None:
    """Write ``net``'s weights and ``meta`` (JSON-able; ``arch``, ``variant``, ``game``,
    ``options`` required) to ``path`` (``.npz``), atomically."""
    full = {**complete_meta(meta), "format": FORMAT, "format_version": FORMAT_VERSION}
    arrays = {f"w/{k}": v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    arrays["meta"] = np.frombuffer(json.dumps(full, sort_keys=True).encode("ascii"), np.uint8)

    save_npz(path, arrays)


def _checkpoint_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path`; a :class:`TypeError` naming it when it is no path at all."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"checkpoint path must be a str or os.PathLike, not {shown(path)}")
    return Path(path)


def read_weight(z: Npz, name: str, what: str, like) -> np.ndarray:
    """The weight stored as array ``name`` of ``z``, for the parameter tensor ``like``: its
    header must declare ``like``'s shape and dtype (either byte order) before any data is read,
    and its values must be finite; a :class:`CheckpointError` naming ``what`` otherwise. Returns
    a writable array in native byte order."""
    want = like.detach().cpu().numpy().dtype
    shape_want = tuple(like.shape)

    def check(shape, dtype) -> str:
        if dtype.newbyteorder("<") != want.newbyteorder("<"):
            return f"is {dtype}, not {want}"
        if shape != shape_want:
            return f"has shape {shown(shape)}, not {shape_want}"
        return ""

    w = np.array(z.read(name, math.prod(shape_want) * want.itemsize, check, what), dtype=want)
    if w.dtype.kind in "fc" and not np.isfinite(w).all():
        raise CheckpointError(f"{what} holds NaN or infinite values")
    return w


def _byte_string(shape, dtype) -> str:
    """What is wrong with a metadata array's header ("" if nothing): a 1-D array of bytes."""
    if dtype.newbyteorder("<") != np.dtype(np.uint8) or len(shape) != 1:
        return "is not a short byte string"
    return ""


def read_meta_record(path: str | os.PathLike[str], kind: str = "policy") -> dict[str, Any]:
    """The JSON record of a ``kind`` checkpoint (``"policy"``, ``"value"``) as it is stored (a
    JSON object; nothing else checked), read header first (:mod:`agents.npz`): at most
    :data:`MAX_META_BYTES`, strict ASCII JSON."""
    path = _checkpoint_path(path)
    if not path.is_file():
        raise CheckpointError(f"no {kind} checkpoint at {path}")
    with Npz(path, CheckpointError) as z:
        if "meta" not in z.names:
            raise CheckpointError(f"{path} is not a {kind} checkpoint: it has no metadata")
        raw = z.read("meta", MAX_META_BYTES, _byte_string, f"{path}: its metadata")
    try:
        meta = strict_json(raw.tobytes().decode("ascii"))
    except (UnicodeDecodeError, FileFormatError) as e:
        raise CheckpointError(
            f"{path} is not a {kind} checkpoint (its metadata: {shown(str(e), 120)})"
        ) from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    return meta


def read_policy_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON record of a policy checkpoint, checked for format and layout."""
    path = _checkpoint_path(path)
    meta = read_meta_record(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has format version {shown(meta.get('format_version'))}; this package reads "
            f"{FORMAT_VERSION}"
        )
    for key in ("game", "options", "arch", "variant", "layout_id"):
        if key not in meta:
            raise CheckpointError(f"{path}: its metadata lacks {key!r}")
    if not isinstance(meta["options"], dict) or not isinstance(meta["arch"], dict):
        raise CheckpointError(f"{path}: 'options' and 'arch' must be JSON objects")
    try:
        play_rule(meta)
    except CheckpointError as e:
        raise CheckpointError(f"{path}: {e}") from None
    try:
        cfg = EnvOptions.build(meta["game"], **meta["options"]).variant.cfg
    except (TypeError, ValueError) as e:
        raise CheckpointError(
            f"{path}: its game or options are not valid ({shown(str(e), 200)})"
        ) from None
    if meta["layout_id"] != layout_id(cfg):
        raise CheckpointError(
            f"{path} was trained on observation layout {shown(meta['layout_id'])}; this "
            f"package's layout for {shown(meta['variant'])} is {layout_id(cfg)!r}: retrain it"
        )
    return meta


def load_policy(
    path: str | os.PathLike[str],
    *,
    game: str | None = None,
    options: dict | None = None,
    name: str = "learned",
    deterministic: bool = True,
    seed: int = 0,
    device: str = "cpu",
) -> PolicyAgent:
    """Load a policy checkpoint as a :class:`PolicyAgent` whose network is on ``device``
    (:func:`agents.torch_setup.resolve_device`); with ``game``, refuse first one that cannot
    play it. Never unpickles anything."""
    import torch

    device = resolve_device(device)

    meta = read_policy_meta(path)
    if game is not None:
        check_game(meta, game, options, f"checkpoint {path}")
    spec = game_spec(meta["game"], meta["options"])
    try:
        net = build_net(meta["arch"], spec)
    except CheckpointError as e:
        raise CheckpointError(f"{path}: {e}") from None
    state = net.state_dict()
    with Npz(path, CheckpointError) as z:
        names = {k[2:] for k in z.names if k.startswith("w/")}
        if names != set(state):
            raise CheckpointError(
                f"{path}: its weights do not fit architecture {shown(meta['arch'], 200)} "
                f"({shown(sorted(names ^ set(state))[:3], 200)} ...)"
            )
        for k, v in state.items():
            w = read_weight(z, f"w/{k}", f"{path}: weight {k!r}", v)
            state[k] = torch.from_numpy(w)
    net.load_state_dict(state)
    return PolicyAgent(net.to(device), meta, name=name, deterministic=deterministic, seed=seed)


CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"
"""The committed policies, one per variant: ``agents/checkpoints/<variant>.npz``."""


def committed_policies() -> dict[str, Path]:
    """Variant tag -> path of each committed policy."""
    return {p.stem: p for p in sorted(CHECKPOINT_DIR.glob("*.npz"))}


def learned_agent(variant: str, **kwargs) -> PolicyAgent:
    """The committed policy of ``variant`` (``"SH1-C4"``, ...), as played by ``evaluate.py
    --policies learned``. A variant without one of its own gets the committed policy of the
    nearest other option of the same game, if any: the one whose tag shares the longest start
    with ``variant``'s (Seahaven 2 or 1 cells: the 4-cell policy; Double Solitaire draw 3 with
    Vegas scoring: draw 3 with Normal scoring; the layouts are the same);
    ``agent.meta["variant"]`` says which it is."""
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a variant tag such as 'SH1-C4', not {shown(variant)}")
    paths = committed_policies()
    if variant not in paths:
        same_game = [t for t in paths if t.split("-")[0] == variant.split("-")[0]]
        if not same_game:
            raise CheckpointError(
                f"no committed policy for {shown(variant)} or its game; there are: "
                f"{', '.join(paths) or 'none'}"
            )

        def shared(tag: str) -> int:  # how many leading characters it shares with variant
            return next((i for i, (a, b) in enumerate(zip(tag, variant, strict=False)) if a != b),
                        min(len(tag), len(variant)))  # fmt: skip

        variant = max(same_game, key=shared)
    return load_policy(paths[variant], **kwargs)
