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

What :func:`from_dict` accepts: every card exactly once per deck; each field of the right type
and length (``version`` the integer 1, not ``True``); face-down cards only in Double Solitaire, at
the bottom of a column and never on top; the face-up cards of a Double Solitaire column in
sequence; columns short enough never to outgrow the state; ``moves`` in ``0 … 2^31 - 1`` and
``score`` in ``0 … 2^31 - 1`` (Vegas: from ``-104``, where it starts, as it never goes down).
The engine's counters stop at ``2^31 - 1`` rather than wrap around.

Everything else is accepted, although play may not reach it, because a position is a puzzle to
set up as much as a game to resume: tests, the solver and users build positions by hand, and
deciding whether play can reach a position is as hard as solving it. In particular:

* a column may hold more face-down cards, and the stock and waste more cards, than a deal puts
  there: hand-built positions bury there the cards they do not place (the tests' ``positions.py``
  does by default). The state is sized for every card in any pile, no rule depends on those
  counts, and an observation shows a column's face-down cards as unseen whatever their number;
* ``score`` and ``moves`` are set freely within their ranges (cards on the foundations after
  ``moves = 0``, a Seahaven score of 7): the scoring tables are tested from arbitrary starting
  scores, and the engine only ever adds a table's points to the score it is given.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from solitaire_gym.engine.cards import N_FACES, card_name, parse_card
from solitaire_gym.engine.rules import in_sequence_len, pile_suit
from solitaire_gym.engine.scoring import SCORE_MAX
from solitaire_gym.engine.shuffle import VEGAS_START
from solitaire_gym.engine.state import MOVES_MAX, State
from solitaire_gym.engine.variants import DOUBLE, MAX_HEIGHT, MAX_RUN, SEAHAVEN, Variant, parse_code
from solitaire_gym.errors import GameCodeError, PositionError, is_int, shown

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
    _check_counters(d, variant)
    tmp.score[0] = d["score"]
    tmp.moves[0] = d["moves"]
    for dst, src in zip(s, tmp, strict=True):
        if dst.ndim > 1 and dst.shape[1] == 0:
            continue
        dst[b] = src[0]
    s.hist_len[b] = 0
    s.hist_top[b] = 0
    return variant, deal


def _check_counters(d: dict, variant: Variant) -> None:
    """``score`` and ``moves``: integers the engine's counters hold, on the score's side of its
    start (see the module docstring for what else is accepted, and why)."""
    for field in ("score", "moves"):
        v = d[field]
        if not is_int(v):
            raise PositionError(f"field {field!r} must be an integer, not {shown(v)}")
    moves, score = d["moves"], d["score"]
    if not 0 <= moves <= MOVES_MAX:
        raise PositionError(f"field 'moves' must lie in 0 … {MOVES_MAX}, not {shown(moves)}")
    low = VEGAS_START if variant.vegas else 0
    if not low <= score <= SCORE_MAX:
        raise PositionError(
            f"field 'score' must lie in {low} … {SCORE_MAX} in {variant.name}"
            f"{' (Vegas: it starts at -104 and never goes down)' if variant.vegas else ''}, "
            f"not {shown(score)}"
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
