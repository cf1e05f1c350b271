"""Shared pieces of the solver tests: the plain exhaustive search the verdicts are checked
against (:data:`REFERENCE`), and positions for the solver, given pile by pile
(:func:`given_position`, :data:`SH_STUCK`) or with the cards scattered at random
(:func:`random_position`)."""

from __future__ import annotations

import random

from solitaire_gym import Game
from solitaire_gym.engine.cards import card_name
from solitaire_gym.solver.layout import (
    FL_EXACT,
    FL_NO_AUTO,
    FL_NO_DEADEND,
    FL_NO_HOPS,
    FL_NO_LAZY,
    FL_NO_MACRO,
    FL_NO_PASS,
    FL_NO_PRUNE,
)

# Every reduction off: exact positions, every legal move, stock taps as moves, no automatic
# moves, no restarts. The plain exhaustive search the verdicts are checked against.
REFERENCE = (
    FL_NO_AUTO
    | FL_NO_LAZY
    | FL_NO_MACRO
    | FL_EXACT
    | FL_NO_PRUNE
    | FL_NO_DEADEND
    | FL_NO_PASS
    | FL_NO_HOPS
)


def given_position(code: str, tableau, foundations, **rest) -> dict:
    d = {"code": code, "tableau": tableau, "foundations": foundations, "score": 0, "moves": 0}
    d.update(rest)
    return d


SH_STUCK = given_position(
    "SH1-C1-AAAAAAB",
    [
        ["AS", "3S", "5S"],
        ["2S", "4S", "7S"],
        ["6S", "9S"],
        ["8S", "JS"],
        ["TS", "KS"],
        ["QS", "AH", "4H"],
        ["2H", "6H"],
        ["3H", "8H"],
        ["5H", "7H", "TH"],
        ["9H", "JH", "QH"],
    ],
    [None, None, "KD", "KC"],
    cells=["KH"],
)


def random_position(code: str, rng: random.Random, off: int) -> dict:
    """A valid position with about ``off`` cards off the foundations, scattered at random."""
    g = Game.from_code(code)
    v = g.variant
    d = g.to_dict()
    double = v.game == 0
    piles = 8 if double else 4
    suit = (lambda p: p // 2) if double else (lambda p: p)
    heights = [13] * piles
    for _ in range(off):
        p = rng.randrange(piles)
        heights[p] = max(0, heights[p] - 1)
    rest = [suit(p) * 13 + r for p in range(piles) for r in range(heights[p], 13)]
    rng.shuffle(rest)
    cols = len(d["tableau"])
    tab: list[list[str]] = [[] for _ in range(cols)]
    stock: list[str] = []
    waste: list[str] = []
    cells: list[str | None] = [None] * v.cells
    for c in rest:
        x = rng.random()
        if v.game == 2 and x < 0.15 and None in cells:
            cells[cells.index(None)] = card_name(c)
        elif v.game != 2 and x < 0.3:
            (stock if rng.random() < 0.6 else waste).append(card_name(c))
        else:
            tab[rng.randrange(cols)].append(card_name(c))
    if double:
        tab = [[c + "*" for c in col[:-1]] + col[-1:] for col in tab]
    d["tableau"] = tab
    d["foundations"] = [
        card_name(suit(p) * 13 + heights[p] - 1) if heights[p] else None for p in range(piles)
    ]
    if v.game == 2:
        d["cells"] = cells
    else:
        d["stock"], d["waste"] = stock, waste
    return d
