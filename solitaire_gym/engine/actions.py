"""The action layout: every move of the notation (docs/rules.md) as one integer, and back.

The layout is fixed per game (it does not depend on the options, so a policy trained with draw 1
sees the same actions with draw 3; Seahaven always has slots for 4 cells). ``C`` = columns
(9 / 7 / 10), ``P`` = foundation piles (8 / 4 / 4), ``K`` = cell slots (Seahaven 4, else 0),
``S`` = 1 if the game has a stock. Blocks, in order:

==========  ===================  =====================================  ==========================
block       size                 id within the block                    notation
==========  ===================  =====================================  ==========================
draw        2·S                  0 draw, 1 recycle                      ``draw``, ``recycle``
t→t         C·(C−1)·13           (src·(C−1) + dst′)·13 + (n−1)          ``t3>t5``, ``t3:4>t7``
t→f         C                    src                                    ``t2>f``
w→t         C·S                  dst                                    ``w>t4``
w→f         S                    0                                      ``w>f``
t→c         C if K               src                                    ``t5>c``
c→t         K·C                  cell·C + dst                           ``c2>t4``
c→f         K                    cell                                   ``c1>f``
f→t         P·C                  pile·C + dst                           ``f3>t4``
f→c         P if K               pile                                   ``f3>c``
==========  ===================  =====================================  ==========================

``dst′`` is ``dst`` with the source column left out (``dst`` if ``dst < src`` else ``dst − 1``),
and ``n`` is the number of cards moved (1 … 13). Totals: Double Solitaire 1029, Solitaire
Réfléchi 591, Seahaven Towers 1278.
"""

from __future__ import annotations

import re

import numba as nb
import numpy as np

from solitaire_gym.engine.variants import (
    G_COLS,
    G_GAME,
    G_PILES,
    GAME_NAMES,
    L_CELLS,
    L_CF,
    L_CT,
    L_DRAW,
    L_FC,
    L_FT,
    L_N,
    L_STOCK,
    L_TC,
    L_TF,
    L_TT,
    L_WF,
    L_WT,
    MAX_RUN,
)
from solitaire_gym.errors import IllegalMoveError, MoveSyntaxError, is_int, shown

# Move kinds returned by decode().
K_DRAW = 0
K_RECYCLE = 1
K_TT = 2  # column -> column, n cards
K_TF = 3  # column -> foundation
K_WT = 4  # waste -> column
K_WF = 5  # waste -> foundation
K_TC = 6  # column -> free cell
K_CT = 7  # free cell -> column
K_CF = 8  # free cell -> foundation
K_FT = 9  # foundation -> column (take back)
K_FC = 10  # foundation -> free cell (take back, Seahaven)


@nb.njit(cache=True)
def decode(cfg: np.ndarray, a: int) -> tuple[int, int, int, int]:
    """Action id -> (kind, src, dst, n). Columns, cells and piles are 0-based."""
    c = cfg[G_COLS]
    if a < cfg[L_TT]:
        return (K_DRAW if a == cfg[L_DRAW] else K_RECYCLE), 0, 0, 1
    if a < cfg[L_TF]:
        r = a - cfg[L_TT]
        n = r % MAX_RUN + 1
        pair = r // MAX_RUN
        src = pair // (c - 1)
        d = pair % (c - 1)
        return K_TT, src, (d if d < src else d + 1), n
    if a < cfg[L_WT]:
        return K_TF, a - cfg[L_TF], 0, 1
    if a < cfg[L_WF]:
        return K_WT, 0, a - cfg[L_WT], 1
    if a < cfg[L_TC]:
        return K_WF, 0, 0, 1
    if a < cfg[L_CT]:
        return K_TC, a - cfg[L_TC], 0, 1
    if a < cfg[L_CF]:
        r = a - cfg[L_CT]
        return K_CT, r // c, r % c, 1
    if a < cfg[L_FT]:
        return K_CF, a - cfg[L_CF], 0, 1
    if a < cfg[L_FC]:
        r = a - cfg[L_FT]
        return K_FT, r // c, r % c, 1
    return K_FC, a - cfg[L_FC], 0, 1


@nb.njit(cache=True, inline="always")
def enc_tt(cfg: np.ndarray, src: int, dst: int, n: int) -> int:
    d = dst if dst < src else dst - 1
    return cfg[L_TT] + (src * (cfg[G_COLS] - 1) + d) * MAX_RUN + (n - 1)


@nb.njit(cache=True, inline="always")
def enc_ct(cfg: np.ndarray, cell: int, dst: int) -> int:
    return cfg[L_CT] + cell * cfg[G_COLS] + dst


@nb.njit(cache=True, inline="always")
def enc_ft(cfg: np.ndarray, pile: int, dst: int) -> int:
    return cfg[L_FT] + pile * cfg[G_COLS] + dst


# ---- notation (Python side) ------------------------------------------------------------------


def action_to_move(cfg: np.ndarray, a: int) -> str:
    """Action id -> move string in the notation of docs/rules.md."""
    n_actions = int(cfg[L_N])
    if isinstance(a, np.ndarray) and a.shape == ():
        a = a.item()
    if not is_int(a):
        raise MoveSyntaxError(f"an action id is an integer, not {shown(a)}")
    if not 0 <= int(a) < n_actions:
        raise MoveSyntaxError(f"action {shown(int(a))} is outside 0 … {n_actions - 1}")
    kind, src, dst, n = decode(cfg, int(a))
    if kind == K_DRAW:
        return "draw"
    if kind == K_RECYCLE:
        return "recycle"
    if kind == K_TT:
        run = f":{n}" if n > 1 else ""
        return f"t{src + 1}{run}>t{dst + 1}"
    return {
        K_TF: f"t{src + 1}>f",
        K_WT: f"w>t{dst + 1}",
        K_WF: "w>f",
        K_TC: f"t{src + 1}>c",
        K_CT: f"c{src + 1}>t{dst + 1}",
        K_CF: f"c{src + 1}>f",
        K_FT: f"f{src + 1}>t{dst + 1}",
        K_FC: f"f{src + 1}>c",
    }[kind]


_ASCII_BLANKS = " \t\n\r\x0b\x0c"


def notation_text(text: object) -> str | None:
    """``text`` as the notation reads it (moves, taps, "undo"): lower case, without the ASCII
    blanks around it; None if it is not a string or holds any character that is not ASCII, a
    Unicode blank included (``str.strip()`` alone would drop a no-break space or an ideographic
    space, and the ASCII separators ``\x1c`` … ``\x1f``, and let the rest through)."""
    if not isinstance(text, str) or not text.isascii():
        return None
    return text.strip(_ASCII_BLANKS).lower()


# ASCII digits only (re.ASCII: "\d" would take "٣" and fullwidth digits), and few of them: a pile
# number or run length has at most 2 digits, so "t" + 5000 digits is not a move (and Python's
# int() never sees it).
_MOVE_RE = re.compile(
    r"^(?:(draw|recycle)|([twcf])(\d{0,3})(?::(\d{1,3}))?>([tfc])(\d{0,3}))$", re.ASCII
)


def move_to_action(cfg: np.ndarray, move: str) -> int:
    """Move string -> action id. Raises :class:`MoveSyntaxError` for text that is not a move of
    this game, and :class:`IllegalMoveError` for a move that no position allows (a run to a
    foundation, a card onto its own column)."""
    if not isinstance(move, str):
        raise MoveSyntaxError(f"a move is a string, not {type(move).__name__}")
    text = notation_text(move)
    game = GAME_NAMES[int(cfg[G_GAME])]
    m = _MOVE_RE.match(text) if text is not None else None
    if m is None:
        raise MoveSyntaxError(
            f"{shown(move)} is not a move: expected e.g. 'draw', 'recycle', 't3>t5', 't3:4>t7', "
            "'w>f', 'f3>t4', 't5>c', 'c2>t4'"
        )
    move = text  # short and ASCII from here on: messages may quote it whole
    word, sk, sn, runs, dk, dn = m.groups()
    has_stock = bool(cfg[L_STOCK])
    cols, piles, cells = int(cfg[G_COLS]), int(cfg[G_PILES]), int(cfg[L_CELLS])
    if word:
        if not has_stock:
            raise MoveSyntaxError(f"{game} has no stock: {word!r} is not a move of this game")
        return int(cfg[L_DRAW]) + (0 if word == "draw" else 1)

    def number(kind: str, digits: str, limit: int, what: str) -> int:
        if kind == "w":
            if digits:
                raise MoveSyntaxError(f"{move!r}: the waste is written 'w', without a number")
            return 0
        if not digits:
            raise MoveSyntaxError(f"{move!r}: {kind} needs a {what} number, e.g. '{kind}1'")
        k = int(digits)
        if not 1 <= k <= limit or digits[0] == "0":
            raise MoveSyntaxError(f"{move!r}: {game} has {what}s {kind}1 … {kind}{limit}")
        return k - 1

    # Sources
    if sk == "w" and not has_stock:
        raise MoveSyntaxError(f"{move!r}: {game} has no waste")
    if (sk == "c" or dk == "c") and not cells:
        raise MoveSyntaxError(f"{move!r}: {game} has no free cells")
    limits = {
        "t": (cols, "column"),
        "w": (1, "waste"),
        "c": (cells, "free cell"),
        "f": (piles, "foundation"),
    }
    src = number(sk, sn, *limits[sk])
    if dk in ("f", "c") and dn:
        raise MoveSyntaxError(
            f"{move!r}: write '>{dk}' without a number; the rules choose the {limits[dk][1]}"
        )
    n = 1
    if runs is not None:
        if sk != "t":
            raise MoveSyntaxError(f"{move!r}: only a tableau column can move a run ('t3:4>t7')")
        n = int(runs)
        if n == 1:
            raise MoveSyntaxError(f"{move!r}: a single card is written without ':1', e.g. 't3>t5'")
        if n == 0 or runs[0] == "0":
            raise MoveSyntaxError(
                f"{move!r}: a run length is a number from 2 to {MAX_RUN}, without leading zeros"
            )
    if n > 1 and dk != "t":
        where = "a foundation takes" if dk == "f" else "a free cell holds"
        raise IllegalMoveError(f"{where} one card at a time")
    if n > MAX_RUN:
        raise IllegalMoveError(f"no run is longer than {MAX_RUN} cards (King down to Ace)")
    if dk == "t":
        dst = number("t", dn, cols, "column")
        if sk == "t":
            if src == dst:
                raise IllegalMoveError("a card cannot move onto its own column")
            return int(enc_tt(cfg, src, dst, n))
        if sk == "w":
            return int(cfg[L_WT]) + dst
        if sk == "c":
            return int(enc_ct(cfg, src, dst))
        return int(enc_ft(cfg, src, dst))
    if dk == "f":
        if sk == "f":
            raise IllegalMoveError("a card cannot move from one foundation to another")
        return int({"t": cfg[L_TF] + src, "w": cfg[L_WF], "c": cfg[L_CF] + src}[sk])
    # dk == "c"
    if sk == "c":
        raise IllegalMoveError(
            "a card in a free cell moves to a column or a foundation, not to another cell"
        )
    if sk == "w":
        raise MoveSyntaxError(f"{move!r}: {game} has no waste")
    return int({"t": cfg[L_TC] + src, "f": cfg[L_FC] + src}[sk])
