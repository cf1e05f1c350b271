"""Building test positions by hand: a few given piles, every other card placed by a rule."""

from __future__ import annotations

from collections import Counter

from solitaire_gym import Game

RANKS = "A23456789TJQK"
DECK = [r + s for s in "SHDC" for r in RANKS]


def position(
    code,
    tableau=None,
    *,
    foundations=None,
    stock=(),
    waste=(),
    cells=None,
    score=None,
    moves=None,
    rest="stock",
):
    """A position (``Game.to_dict`` form) of ``code``'s game: the given piles, every other card
    placed by ``rest``.

    ``tableau`` maps 1-based columns to cards (bottom to top, "7D*" face down); ``foundations``
    lists each pile's top card (or None). ``rest`` is "stock" (drawn after the given stock),
    "waste" (under the given waste) or a list of column numbers (round-robin, under the given
    cards; face down in Double Solitaire). ``score`` and ``moves`` default to the deal's."""
    d = Game.from_code(code).to_dict()
    decks = 2 if code.startswith("DS1") else 1
    tab = [[] for _ in d["tableau"]]
    for k, cards in (tableau or {}).items():
        tab[k - 1] = list(cards)
    founds = list(foundations) if foundations else [None] * len(d["foundations"])
    need = Counter({c: decks for c in DECK})
    for col in tab:
        need.subtract(c.rstrip("*") for c in col)
    for top in founds:
        if top:
            need.subtract(r + top[1] for r in RANKS[: RANKS.index(top[0]) + 1])
    need.subtract(stock)
    need.subtract(waste)
    need.subtract(c for c in cells or () if c)
    assert min(need.values()) >= 0, need
    extra = [c for c in DECK for _ in range(need[c])]
    stock, waste = list(stock), list(waste)
    if rest == "stock":
        stock += extra
    elif rest == "waste":
        waste = extra + waste
    else:
        under = {k: [] for k in rest}
        for i, card in enumerate(extra):
            under[rest[i % len(rest)]].append(card + ("*" if decks == 2 else ""))
        for k, cards in under.items():
            if not tab[k - 1] and cards:  # a column of only these cards: its top is face up
                cards[-1] = cards[-1].rstrip("*")
            tab[k - 1] = cards + tab[k - 1]
    d["tableau"], d["foundations"] = tab, founds
    if "cells" in d:
        assert not stock and not waste, "Seahaven Towers has no stock: give rest=[columns]"
        d["cells"] = list(cells) if cells is not None else [None] * len(d["cells"])
    else:
        d["stock"], d["waste"] = stock, waste
    if score is not None:
        d["score"] = score
    if moves is not None:
        d["moves"] = moves
    return d
