"""The rules: whether a move is legal, and if not, which rule forbids it.

:func:`check_move` is the single place where legality is decided. It returns 0 for a legal move,
else a reason code (``R_*``) in the low byte and, for the run limit, the limit in the bits above.
``REASONS`` holds the plain-words rule for each code (the apps' "interactive rules"). Move
generation (``movegen.py``) only proposes candidates and asks :func:`check_move`.

Per game (``cfg[G_GAME]``):

* building on a column: opposite colour and one rank lower (Klondike games), same suit and one
  rank lower (Seahaven); an empty column accepts only a King (with what lies on it);
* what moves as a run: any face-up cards with all above (Double Solitaire: only the first must
  fit); an ordered group, alternate colours (Réfléchi); an ordered same-suit run, no longer than
  ``(empty cells + 1) · 2^(empty columns)`` (Seahaven; an empty target column is not counted);
* foundations: one card at a time, Ace up, by suit; Double Solitaire has two piles per suit and
  the first of the row that accepts the card takes it.
"""

from __future__ import annotations

import numba as nb
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
from solitaire_gym.engine.bits import bit
from solitaire_gym.engine.cards import KING, is_red, rank_of, suit_of
from solitaire_gym.engine.variants import (
    DOUBLE,
    G_CARDS,
    G_CELLS,
    G_COLS,
    G_GAME,
    G_PILES,
    G_VEGAS,
    L_N,
    REFLECHI,
    SEAHAVEN,
)

R_OK = 0
R_WON = 1
R_STOCK_EMPTY = 2
R_STOCK_NOT_EMPTY = 3
R_NOTHING_TO_RECYCLE = 4
R_VEGAS_ONE_PASS = 5
R_SRC_EMPTY = 6
R_TOO_FEW = 7
R_FACE_DOWN = 8
R_GROUP_UNORDERED = 9
R_RUN_UNORDERED = 10
R_RUN_LIMIT = 11
R_EMPTY_KING = 12
R_BUILD_ALT = 13
R_BUILD_SUIT = 14
R_FOUNDATION = 15
R_WASTE_EMPTY = 16
R_CELL_MISSING = 17
R_CELL_EMPTY = 18
R_CELLS_FULL = 19
R_PILE_EMPTY = 20
R_BAD_ACTION = 21

# Templates: {src} and {dst} are the move's piles, {n} its card count, {aux} the number the
# kernel returns beside the code (the run limit).
REASONS = {
    R_WON: "the game is won: every card is on the foundations",
    R_STOCK_EMPTY: "the stock is empty: tap it to turn the waste over ('recycle')",
    R_STOCK_NOT_EMPTY: "the waste is turned over only when the stock is empty",
    R_NOTHING_TO_RECYCLE: "the stock and the waste are both empty: there is nothing to turn over",
    R_VEGAS_ONE_PASS: "Vegas scoring: the waste is never turned over; the stock is gone through once",
    R_SRC_EMPTY: "{src} is empty",
    R_TOO_FEW: "{src} does not hold {n} cards",
    R_FACE_DOWN: "a face-down card cannot move: {src} does not have {n} face-up cards",
    R_GROUP_UNORDERED: (
        "a group moves only if it is already in sequence: each card one rank lower than the one "
        "under it, colours alternating"
    ),
    R_RUN_UNORDERED: "a run moves only if it is in sequence: same suit, each card one rank lower",
    R_RUN_LIMIT: (
        "a run of {n} cards is too long: with the free cells and empty columns there are now, "
        "at most {aux} cards can move at once"
    ),
    R_EMPTY_KING: "an empty column accepts only a King",
    R_BUILD_ALT: "a card goes on a card of the opposite colour and one rank higher",
    R_BUILD_SUIT: "a card goes on a card of the same suit and one rank higher",
    R_FOUNDATION: (
        "a foundation takes the next card of its suit, Ace first, then 2, 3 … King, "
        "one card at a time"
    ),
    R_WASTE_EMPTY: "the waste is empty",
    R_CELL_MISSING: "{src} is not in play: this game has fewer free cells",
    R_CELL_EMPTY: "{src} is empty",
    R_CELLS_FULL: "every free cell is full: a free cell holds one card",
    R_PILE_EMPTY: "{src} is empty",
    R_BAD_ACTION: "no such action",
}


@nb.njit(cache=True)
def is_won(s, b: int, cfg: np.ndarray) -> bool:
    total = 0
    for p in range(cfg[G_PILES]):
        total += s.found[b, p]
    return total == cfg[G_CARDS]


@nb.njit(cache=True, inline="always")
def pile_suit(cfg: np.ndarray, pile: int) -> int:
    return pile // 2 if cfg[G_GAME] == DOUBLE else pile


@nb.njit(cache=True, inline="always")
def foundation_for(s, b: int, cfg: np.ndarray, card: int) -> int:
    """The pile that accepts ``card`` (the first of its row in Double Solitaire), or -1."""
    r = rank_of(card)
    if cfg[G_GAME] == DOUBLE:
        p = 2 * suit_of(card)
        if s.found[b, p] == r:
            return p
        if s.found[b, p + 1] == r:
            return p + 1
        return -1
    p = suit_of(card)
    return p if s.found[b, p] == r else -1


@nb.njit(cache=True)
def builds_on(seahaven: bool, card: int, target: int) -> bool:
    """The tableau building rule: ``card`` may lie on ``target`` when it is one rank lower and,
    in Seahaven Towers, of the same suit; in the Klondike games, of the other colour."""
    if rank_of(card) + 1 != rank_of(target):
        return False
    if seahaven:
        return suit_of(card) == suit_of(target)
    return is_red(card) != is_red(target)


# builds_on for every pair of card ids, by game (index 1: Seahaven Towers). Move generation asks
# it millions of times a second; a lookup in this 5 KB table (it stays in the L1 cache) is
# several times quicker than the rank and colour arithmetic. It is built from the rule above.
@nb.njit(cache=True)
def _builds_on_table() -> np.ndarray:
    table = np.zeros((2, 52, 52), np.bool_)
    for g in range(2):
        for c in range(52):
            for t in range(52):
                table[g, c, t] = builds_on(g == 1, c, t)
    return table


BUILDS_ON = _builds_on_table()
EMPTY_TOP = 52  # index of WANTS for an empty column: no card builds on it


@nb.njit(cache=True)
def _wants_table() -> np.ndarray:
    """``WANTS[g, t]``: bit ``c`` set when card ``c`` builds on card ``t`` (``BUILDS_ON``); row
    ``EMPTY_TOP`` is 0."""
    table = np.zeros((2, 53), np.uint64)
    for g in range(2):
        for t in range(52):
            for c in range(52):
                if BUILDS_ON[g, c, t]:
                    table[g, t] |= bit(c)
    return table


# The cards that build on each card, as a 52-bit mask: move generation matches a whole run against
# a column top in one AND.
WANTS = _wants_table()


@nb.njit(cache=True, inline="always")
def fits_on(cfg: np.ndarray, card: int, target: int) -> bool:
    """Tableau building: may ``card`` lie on ``target``? (:func:`builds_on`, by table.)"""
    return BUILDS_ON[np.int64(cfg[G_GAME] == SEAHAVEN), np.int64(card), np.int64(target)]


@nb.njit(cache=True, inline="always")
def wants(cfg: np.ndarray, top: int) -> np.uint64:
    """The cards that may lie on ``top`` (a card id, or ``EMPTY_TOP``), as a 52-bit mask: bit
    ``c`` is :func:`fits_on` ``(cfg, c, top)``."""
    return WANTS[np.int64(cfg[G_GAME] == SEAHAVEN), np.int64(top)]


@nb.njit(cache=True, inline="always")
def in_sequence_len(s, b: int, cfg: np.ndarray, col: int) -> int:
    """Cards at the top of ``col`` that lie in building order (each on the one under it)."""
    n = s.tab_len[b, col]
    if n == 0:
        return 0
    k = 1
    while k < n and fits_on(cfg, s.tab[b, col, n - 1 - k + 1], s.tab[b, col, n - 1 - k]):
        k += 1
    return k


@nb.njit(cache=True, inline="always")
def free_cells(s, b: int, cfg: np.ndarray) -> int:
    k = 0
    for i in range(cfg[G_CELLS]):
        if s.cells[b, i] < 0:
            k += 1
    return k


@nb.njit(cache=True, inline="always")
def empty_columns(s, b: int, cfg: np.ndarray) -> int:
    k = 0
    for c in range(cfg[G_COLS]):
        if s.tab_len[b, c] == 0:
            k += 1
    return k


@nb.njit(cache=True, inline="always")
def run_limit(s, b: int, cfg: np.ndarray, dst_empty: bool) -> int:
    """Seahaven's longest movable run: (free cells + 1) · 2^(empty columns), the target column
    not counted when it is empty."""
    e = empty_columns(s, b, cfg) - (1 if dst_empty else 0)
    return (free_cells(s, b, cfg) + 1) << e


@nb.njit(cache=True, inline="always")
def check_onto_column(s, b: int, cfg: np.ndarray, card: int, dst: int) -> int:
    """May ``card`` (the lowest card of what moves) go onto column ``dst``?"""
    h = s.tab_len[b, dst]
    if h == 0:
        return R_OK if rank_of(card) == KING else R_EMPTY_KING
    if fits_on(cfg, card, s.tab[b, dst, h - 1]):
        return R_OK
    return R_BUILD_SUIT if cfg[G_GAME] == SEAHAVEN else R_BUILD_ALT


@nb.njit(cache=True, inline="always")
def first_empty_cell(s, b: int, cfg: np.ndarray) -> int:
    for i in range(cfg[G_CELLS]):
        if s.cells[b, i] < 0:
            return i
    return -1


@nb.njit(cache=True)
def check_move(s, b: int, cfg: np.ndarray, a: int) -> int:
    """0 if action ``a`` is legal in row ``b``; else ``reason | (aux << 8)``."""
    if a < 0 or a >= cfg[L_N]:
        return R_BAD_ACTION
    if is_won(s, b, cfg):
        return R_WON
    kind, src, dst, n = decode(cfg, a)
    return check_parts(s, b, cfg, kind, src, dst, n)


@nb.njit(cache=True)
def check_parts(s, b: int, cfg: np.ndarray, kind: int, src: int, dst: int, n: int) -> int:
    """:func:`check_move` for a decoded action in a game that is not won. Compiled once and
    called (not inlined into each caller by numba: LLVM inlines it where that pays), so that
    check_move and move generation share one compiled copy."""
    game = cfg[G_GAME]
    if kind == K_DRAW:
        return R_OK if s.stock_len[b] > 0 else R_STOCK_EMPTY
    if kind == K_RECYCLE:
        if s.stock_len[b] > 0:
            return R_STOCK_NOT_EMPTY
        if cfg[G_VEGAS]:
            return R_VEGAS_ONE_PASS
        return R_OK if s.waste_len[b] > 0 else R_NOTHING_TO_RECYCLE

    # The card that moves (the lowest of a run) or an early refusal.
    card = -1
    if kind == K_TT or kind == K_TF or kind == K_TC:
        h = s.tab_len[b, src]
        if h == 0:
            return R_SRC_EMPTY
        if n > h:
            return R_TOO_FEW
        if n > h - s.tab_down[b, src]:
            return R_FACE_DOWN
        if n > 1 and game != DOUBLE and in_sequence_len(s, b, cfg, src) < n:
            return R_GROUP_UNORDERED if game == REFLECHI else R_RUN_UNORDERED
        card = s.tab[b, src, h - n]
    elif kind == K_WT or kind == K_WF:
        if s.waste_len[b] == 0:
            return R_WASTE_EMPTY
        card = s.waste[b, s.waste_len[b] - 1]
    elif kind == K_CT or kind == K_CF:
        if src >= cfg[G_CELLS]:
            return R_CELL_MISSING
        card = s.cells[b, src]
        if card < 0:
            return R_CELL_EMPTY
    else:  # K_FT, K_FC: the top of a foundation pile
        h = s.found[b, src]
        if h == 0:
            return R_PILE_EMPTY
        card = pile_suit(cfg, src) * 13 + h - 1

    # Where it goes.
    if kind == K_TF or kind == K_WF or kind == K_CF:
        return R_OK if foundation_for(s, b, cfg, card) >= 0 else R_FOUNDATION
    if kind == K_TC or kind == K_FC:
        return R_OK if first_empty_cell(s, b, cfg) >= 0 else R_CELLS_FULL
    r = check_onto_column(s, b, cfg, card, dst)
    if r != R_OK:
        return r
    if kind == K_TT and n > 1 and game == SEAHAVEN:
        limit = run_limit(s, b, cfg, s.tab_len[b, dst] == 0)
        if n > limit:
            return R_RUN_LIMIT | (limit << 8)
    return R_OK


def refusal_text(cfg: np.ndarray, a: int, code: int) -> str:
    """Plain words for :func:`check_move`'s answer ``code`` (non-zero) about action ``a``."""
    reason, aux = code & 0xFF, code >> 8
    if reason == R_BAD_ACTION:
        return REASONS[reason]
    kind, src, _dst, n = decode(cfg, a)
    if kind in (K_TT, K_TF, K_TC):
        where = f"t{src + 1}"
    elif kind in (K_CT, K_CF):
        where = f"c{src + 1}"
    elif kind in (K_FT, K_FC):
        where = f"f{src + 1}"
    else:
        where = "the waste"
    return REASONS[reason].format(src=where, n=n, aux=aux)
