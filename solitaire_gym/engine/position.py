"""Positions as plain dicts (JSON-serialisable), hidden cards included, and their validation.

Format (``"format": "solitaire_gym.position"``, ``"version": 1``)::

    code         the game code the position came from (its variant gives the rules)
    tableau      one list per column, bottom to top; a face-down card ends in '*' ("7D*")
    foundations  one entry per pile (f1 …): its top card ("5S") or null when empty
    stock        Klondike games: cards in the order they will be drawn (first drawn first)
    waste        Klondike games: bottom to top (the last card plays)
    cells        Seahaven Towers: one entry per cell in play, a card or null
    score        the app's score (Vegas: dollars, may be negative)
    moves        the move counter

The undo history is not part of a position.

What :func:`from_dict` accepts. Besides the format (every card exactly once per deck, each field
of the right type and length, face-down cards only at the bottom of a Double Solitaire column and
never on top, face-up cards of a Double Solitaire column in sequence, columns short enough never
to outgrow the state), it refuses what play can never reach, because nothing a game does brings
it back:

* more face-down cards in a column than the deal put there (face-down cards never move; they are
  only turned over), and more cards in stock and waste together than the deal put in the stock
  (cards leave them, never come back);
* fewer moves than cards on the foundations (each card got there by an action, and the counter
  never goes down), and a score above what that many moves can earn (at most 15 points per
  action in Double Solitaire, 10 in the other games, 5 dollars in Vegas);
* a score the tables cannot produce: outside Vegas a multiple of 5 and not negative; in Vegas
  ``-104`` plus a multiple of 5;
* numbers outside the counters' range (``0 … 2^31 - 1``; the engine's counters stop there).

Everything else is accepted, although play may not reach it: a position is a puzzle to set up as
much as a game to resume (tests and the solver build positions by hand), and deciding whether
play can reach a position is as hard as solving it.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import numpy as np

from solitaire_gym.engine.cards import N_FACES, card_name, parse_card
from solitaire_gym.engine.rules import in_sequence_len, pile_suit
from solitaire_gym.engine.scoring import FLIP, SCORE_MAX, TO_FOUNDATION, TO_FOUNDATION_VEGAS
from solitaire_gym.engine.shuffle import VEGAS_START, deal_into
from solitaire_gym.engine.state import MOVES_MAX, State, allocate
from solitaire_gym.engine.variants import DOUBLE, MAX_HEIGHT, MAX_RUN, SEAHAVEN, Variant, parse_code
from solitaire_gym.errors import GameCodeError, PositionError, shown

FORMAT = "solitaire_gym.position"
VERSION = 1


def to_dict(s: State, b: int, variant: Variant, deal: int) -> dict[str, Any]:
    cfg = variant.cfg
    cols = int(cfg[1])
    tableau = []
    for c in range(cols):
        h, down = int(s.tab_len[b, c]), int(s.tab_down[b, c])
        tableau.append(
            [card_name(int(s.tab[b, c, i])) + ("*" if i < down else "") for i in range(h)]
        )
    piles = 8 if variant.game == DOUBLE else 4
    foundations = []
    for p in range(piles):
        h = int(s.found[b, p])
        foundations.append(card_name(int(pile_suit(cfg, p)) * 13 + h - 1) if h else None)
    d: dict[str, Any] = {"format": FORMAT, "version": VERSION, "code": variant.code(deal)}
    d["tableau"] = tableau
    d["foundations"] = foundations
    if variant.game == SEAHAVEN:
        d["cells"] = [card_name(int(x)) if x >= 0 else None for x in s.cells[b, : variant.cells]]
    else:
        n = int(s.stock_len[b])
        d["stock"] = [card_name(int(s.stock[b, n - 1 - i])) for i in range(n)]
        d["waste"] = [card_name(int(x)) for x in s.waste[b, : int(s.waste_len[b])]]
    d["score"] = int(s.score[b])
    d["moves"] = int(s.moves[b])
    return d


@cache
def dealt_shape(variant: Variant) -> tuple[tuple[int, ...], int]:
    """The face-down cards of each column and the stock's size right after a deal (the same for
    every deal number of ``variant``), read from the engine's deal."""
    s = allocate(1, variant.n_cards)
    deal_into(s, 0, variant.cfg, np.uint64(0))
    return tuple(int(x) for x in s.tab_down[0]), int(s.stock_len[0])


def _card(text: Any, where: str) -> int:
    try:
        return parse_card(text)
    except ValueError as e:
        raise PositionError(f"{where}: {e}") from None


def from_dict(d: Any, s: State, b: int) -> tuple[Variant, int]:
    """Validate ``d`` and write it into row ``b`` of ``s`` (a state of the right variant, which
    the caller allocates from ``variant_of(d)``). Nothing is written unless ``d`` is valid."""
    variant, deal = variant_of(d)
    cfg = variant.cfg
    cols = int(cfg[1])
    klondike = variant.game != SEAHAVEN
    expected = {"format", "version", "code", "tableau", "foundations", "score", "moves"}
    expected |= {"stock", "waste"} if klondike else {"cells"}
    unknown = sorted(set(d) - expected, key=repr)
    if unknown:
        raise PositionError(f"unknown field {shown(unknown[0])} for {variant.name}")
    missing = sorted(expected - set(d) - {"format", "version"})
    if missing:
        raise PositionError(f"missing field {missing[0]!r}")
    if d.get("format", FORMAT) != FORMAT:
        raise PositionError(f"field 'format' is {shown(d['format'])}, expected {FORMAT!r}")
    version = d.get("version", VERSION)
    if type(version) is not int or version != VERSION:
        raise PositionError(f"field 'version' is {shown(version)}; this package reads {VERSION}")
    dealt_down, dealt_stock = dealt_shape(variant)

    tmp = State(*(np.zeros_like(a[b : b + 1]) for a in s))
    tmp.tab[:] = -1
    tmp.stock[:] = -1
    tmp.waste[:] = -1
    tmp.cells[:] = -1
    seen: Counter[int] = Counter()

    tab = d["tableau"]
    if not isinstance(tab, list) or len(tab) != cols:
        raise PositionError(f"field 'tableau' must be a list of {cols} columns")
    for c, col in enumerate(tab):
        name = f"tableau column t{c + 1}"
        if not isinstance(col, list):
            raise PositionError(f"{name} must be a list of cards")
        if len(col) > MAX_HEIGHT:
            raise PositionError(f"{name} holds {len(col)} cards; at most {MAX_HEIGHT} fit")
        down = 0
        for i, text in enumerate(col):
            hidden = isinstance(text, str) and text.endswith("*")
            card = _card(text[:-1] if hidden else text, f"{name}, card {i + 1}")
            if hidden:
                if variant.game != DOUBLE:
                    raise PositionError(
                        f"{name}, card {i + 1} ({text}) is face down, but every card of "
                        f"{variant.name} is face up"
                    )
                if down != i:
                    raise PositionError(
                        f"{name}, card {i + 1} ({text}) is face down above a face-up card"
                    )
                down += 1
            tmp.tab[0, c, i] = card
            seen[card] += 1
        if col and down == len(col):
            raise PositionError(f"{name}: its top card is face down; the app turns it over at once")
        if down > dealt_down[c]:
            raise PositionError(
                f"{name} holds {down} face-down cards; the deal puts {dealt_down[c]} there, and "
                "face-down cards never move"
            )
        tmp.tab_len[0, c] = len(col)
        tmp.tab_down[0, c] = down
        tmp.tab_unknown[0, c] = down
        if variant.game == DOUBLE and col:
            up = len(col) - down
            if in_sequence_len(tmp, 0, cfg, c) < up:
                raise PositionError(
                    f"{name}: its face-up cards are not in sequence (opposite colours, each one "
                    "rank lower), which play never produces in Double Solitaire"
                )
        base = len(col) - (in_sequence_len(tmp, 0, cfg, c) if col else 0)
        if base + MAX_RUN > MAX_HEIGHT:
            raise PositionError(f"{name} is too tall: it could grow past {MAX_HEIGHT} cards")

    founds = d["foundations"]
    piles = int(cfg[2])
    if not isinstance(founds, list) or len(founds) != piles:
        raise PositionError(
            f"field 'foundations' must be a list of {piles} entries (f1 … f{piles})"
        )
    for p, text in enumerate(founds):
        if text is None:
            continue
        card = _card(text, f"foundation f{p + 1}")
        suit = int(pile_suit(cfg, p))
        if card // 13 != suit:
            raise PositionError(
                f"foundation f{p + 1} holds {'SHDC'[suit]} cards only, not {shown(text)}"
            )
        tmp.found[0, p] = card % 13 + 1
        for r in range(card % 13 + 1):
            seen[suit * 13 + r] += 1

    if klondike:
        for field, arr, lens in (
            ("stock", tmp.stock, tmp.stock_len),
            ("waste", tmp.waste, tmp.waste_len),
        ):
            cards = d[field]
            if not isinstance(cards, list):
                raise PositionError(f"field {field!r} must be a list of cards")
            if len(cards) > arr.shape[1]:
                raise PositionError(f"field {field!r} holds {len(cards)} cards, more than the game")
            parsed = [_card(t, f"{field}, card {i + 1}") for i, t in enumerate(cards)]
            if field == "stock":
                parsed = parsed[::-1]  # the array keeps the next card drawn at the end
            for i, card in enumerate(parsed):
                arr[0, i] = card
                seen[card] += 1
            lens[0] = len(parsed)
        tmp.stock_unknown[0] = tmp.stock_len[0]
        left = int(tmp.stock_len[0]) + int(tmp.waste_len[0])
        if left > dealt_stock:
            raise PositionError(
                f"stock and waste hold {left} cards; the deal puts {dealt_stock} in the stock, "
                "and no card goes back there"
            )
    else:
        cells = d["cells"]
        if not isinstance(cells, list) or len(cells) != variant.cells:
            raise PositionError(f"field 'cells' must be a list of {variant.cells} entries")
        for k, text in enumerate(cells):
            if text is not None:
                card = _card(text, f"free cell c{k + 1}")
                tmp.cells[0, k] = card
                seen[card] += 1

    decks = 2 if variant.game == DOUBLE else 1
    for card in range(N_FACES):
        if seen[card] != decks:
            what = "is missing" if seen[card] < decks else "is duplicated"
            raise PositionError(
                f"card {card_name(card)} {what}: it appears {seen[card]} times, expected {decks}"
            )
    _check_counters(d, variant, int(tmp.found[0].sum()))
    tmp.score[0] = d["score"]
    tmp.moves[0] = d["moves"]
    for dst, src in zip(s, tmp, strict=True):
        if dst.ndim > 1 and dst.shape[1] == 0:
            continue
        dst[b] = src[0]
    s.hist_len[b] = 0
    s.hist_top[b] = 0
    return variant, deal


def _check_counters(d: dict, variant: Variant, on_foundations: int) -> None:
    """``score`` and ``moves``: integers in range, and what the scoring tables can produce."""
    for field in ("score", "moves"):
        v = d[field]
        if not isinstance(v, int) or isinstance(v, bool):
            raise PositionError(f"field {field!r} must be an integer, not {shown(v)}")
    moves, score = d["moves"], d["score"]
    if not 0 <= moves <= MOVES_MAX:
        raise PositionError(f"field 'moves' must lie in 0 … {MOVES_MAX}, not {shown(moves)}")
    if moves < on_foundations:
        raise PositionError(
            f"field 'moves' is {moves}, but {on_foundations} cards are on the foundations: each "
            "got there by a move, and the counter never goes down"
        )
    if variant.vegas:
        low, step, per_move = VEGAS_START, 5, TO_FOUNDATION_VEGAS
    else:
        low, step = 0, 5
        per_move = TO_FOUNDATION + (FLIP if variant.game == DOUBLE else 0)
    high = min(SCORE_MAX, low + per_move * moves)
    if not low <= score <= high:
        raise PositionError(
            f"field 'score' must lie in {low} … {high} after {moves} moves of {variant.name}"
            f"{' (Vegas)' if variant.vegas else ''}, not {shown(score)}"
        )
    if (score - low) % step and score != SCORE_MAX:
        raise PositionError(
            f"field 'score' is {score}: the scoring tables give {low} plus multiples of {step}"
        )


def variant_of(d: Any) -> tuple[Variant, int]:
    if not isinstance(d, dict):
        raise PositionError(f"a position is a dict, not {type(d).__name__}")
    if "code" not in d:
        raise PositionError("missing field 'code'")
    try:
        return parse_code(d["code"])
    except GameCodeError as e:
        raise PositionError(f"field 'code': {e}") from None
