"""The three games, their options, and game codes (``DS1-D1N-AAAAAAB``).

A :class:`Variant` is a game with its options. The compiled kernels do not see it: they receive
``cfg``, a small ``int64`` array built once per variant by :func:`make_cfg`, whose slots are named
by the ``G_*`` constants (rules) and ``L_*`` constants (the action layout, see ``actions.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from solitaire_gym.errors import GameCodeError, is_int, is_int_dtype, shown

# ---- game kinds ------------------------------------------------------------------------------
DOUBLE = 0  # Double Solitaire: 2 decks, 9 columns, face-down cards, alternate-colour building
REFLECHI = 1  # Solitaire Réfléchi: 1 deck, 7 columns all face up, ordered groups only
SEAHAVEN = 2  # Seahaven Towers: 1 deck, 10 columns, free cells, same-suit building, run limit

PREFIX = {DOUBLE: "DS1", REFLECHI: "TF1", SEAHAVEN: "SH1"}
GAME_NAMES = {
    DOUBLE: "Double Solitaire",
    REFLECHI: "Solitaire Réfléchi",
    SEAHAVEN: "Seahaven Towers",
}
_ALIASES = {
    "ds1": DOUBLE,
    "double": DOUBLE,
    "double_solitaire": DOUBLE,
    "doublesolitaire": DOUBLE,
    "tf1": REFLECHI,
    "reflechi": REFLECHI,
    "réfléchi": REFLECHI,
    "solitaire_reflechi": REFLECHI,
    "solitaire_réfléchi": REFLECHI,
    "solitairereflechi": REFLECHI,
    "thoughtful": REFLECHI,
    "sh1": SEAHAVEN,
    "seahaven": SEAHAVEN,
    "seahaven_towers": SEAHAVEN,
    "seahaventowers": SEAHAVEN,
}
UNDO_DEPTH = {DOUBLE: 200, REFLECHI: 100, SEAHAVEN: 100}  # the apps' undo depths, in actions

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
DEAL_DIGITS = 7
_BASE32_BYTES = np.frombuffer(BASE32.encode(), np.uint8)
MAX_DEAL = 32**DEAL_DIGITS - 1  # 2^35 - 1

# ---- cfg slots -------------------------------------------------------------------------------
G_GAME = 0  # DOUBLE / REFLECHI / SEAHAVEN
G_COLS = 1  # tableau columns: 9 / 7 / 10
G_PILES = 2  # foundation piles: 8 / 4 / 4
G_CELLS = 3  # free cells in play: 0 (Klondike games) or 4, 2, 1
G_DRAW = 4  # cards per draw: 1 or 3 (0 in Seahaven, which has no stock)
G_VEGAS = 5  # 1 for Vegas scoring (no recycle, dollars, no floor)
G_CARDS = 6  # cards in the game: 104 or 52
G_DECKS = 7  # copies of each card: 2 or 1
L_CELLS = 8  # free-cell slots in the action layout (4 in Seahaven whatever is in play, else 0)
L_STOCK = 9  # 1 if the layout has draw/recycle
L_DRAW = 10  # offsets of each block of the action layout, see actions.py
L_TT = 11
L_TF = 12
L_WT = 13
L_WF = 14
L_TC = 15
L_CT = 16
L_CF = 17
L_FT = 18
L_FC = 19
L_N = 20  # number of actions
CFG_SIZE = 21

MAX_RUN = 13  # longest run that can move: King down to Ace
MAX_HEIGHT = 32  # slots per tableau column (the longest reachable column has 21 cards)
MAX_CELLS = 4


@dataclass(frozen=True)
class Variant:
    """A game and its options. ``draw``: 1 or 3 (Klondike games); ``vegas``: Double Solitaire's
    Vegas scoring; ``cells``: Seahaven Towers' free cells (4, 2 or 1)."""

    game: int
    draw: int | None = None
    vegas: bool = False
    cells: int | None = None

    def __post_init__(self) -> None:
        if not is_int(self.game) or self.game not in PREFIX:
            raise GameCodeError(f"unknown game {shown(self.game)}")
        name = GAME_NAMES[self.game]
        for option in ("draw", "cells"):
            value = getattr(self, option)
            if value is not None and not is_int(value):
                raise GameCodeError(f"{option} must be an integer, not {shown(value)}")
        if not isinstance(self.vegas, (bool, np.bool_)):
            raise GameCodeError(f"vegas must be True or False, not {shown(self.vegas)}")
        if self.game == SEAHAVEN:
            if self.draw is not None or self.vegas:
                raise GameCodeError(f"{name} has no stock: draw and scoring are not its options")
            cells = 4 if self.cells is None else int(self.cells)
            if cells not in (4, 2, 1):
                raise GameCodeError(f"{name} has 4, 2 or 1 free cells, not {shown(self.cells)}")
            object.__setattr__(self, "cells", cells)
            object.__setattr__(self, "draw", 0)
        else:
            if self.cells is not None:
                raise GameCodeError(f"{name} has no free cells: cells is not its option")
            draw = 1 if self.draw is None else int(self.draw)
            if draw not in (1, 3):
                raise GameCodeError(f"{name} draws 1 or 3 cards, not {shown(self.draw)}")
            if self.vegas and self.game != DOUBLE:
                raise GameCodeError(f"{name} offers only Normal scoring, not Vegas")
            object.__setattr__(self, "draw", draw)
            object.__setattr__(self, "cells", 0)
        object.__setattr__(self, "vegas", bool(self.vegas))

    @property
    def name(self) -> str:
        return GAME_NAMES[self.game]

    @property
    def prefix(self) -> str:
        return PREFIX[self.game]

    @property
    def options(self) -> str:
        """The options part of a game code: ``D1N``, ``D3V``, ``C4`` …"""
        if self.game == SEAHAVEN:
            return f"C{self.cells}"
        return f"D{self.draw}{'V' if self.vegas else 'N'}"

    @property
    def tag(self) -> str:
        """Game and options, e.g. ``SH1-C4``: a code without its deal number."""
        return f"{self.prefix}-{self.options}"

    @property
    def n_cards(self) -> int:
        return 104 if self.game == DOUBLE else 52

    @property
    def undo_depth(self) -> int:
        return UNDO_DEPTH[self.game]

    def code(self, deal: int) -> str:
        return f"{self.tag}-{format_deal(deal)}"

    def codes(self, deals: np.ndarray) -> np.ndarray:
        """:meth:`code` of many deal numbers at once: a 1-D object array of str (the vector env
        names every new game; a Python call per game would cost more than its first step)."""
        d = np.asarray(deals)
        if d.ndim != 1 or (d.size and not is_int_dtype(d.dtype)):
            raise GameCodeError(f"deal numbers must be a 1-D array of integers, not {d!r:.60}")
        d = d.astype(np.int64)
        if d.size and (d.min() < 0 or d.max() > MAX_DEAL):
            bad = int(d[(d < 0) | (d > MAX_DEAL)][0])
            raise GameCodeError(f"deal number {bad} is outside 0 … {MAX_DEAL}")
        head = np.frombuffer(f"{self.tag}-".encode(), np.uint8)
        shifts = 5 * np.arange(DEAL_DIGITS - 1, -1, -1, dtype=np.int64)
        digits = _BASE32_BYTES[(d[:, None] >> shifts) & 31]
        chars = np.concatenate([np.broadcast_to(head, (d.size, head.size)), digits], axis=1)
        width = chars.shape[1]
        text = np.ascontiguousarray(chars).view(f"S{width}").ravel()
        return text.astype(f"U{width}").astype(object)

    @property
    def cfg(self) -> np.ndarray:
        return make_cfg(self)

    @classmethod
    def from_names(
        cls,
        game: str,
        *,
        draw: int | None = None,
        scoring: str | None = None,
        cells: int | None = None,
    ) -> Variant:
        """Build a variant from readable names: ``Variant.from_names("seahaven", cells=2)``.
        An option the game does not have (``cells`` for a Klondike game, ``draw`` or ``scoring``
        for Seahaven Towers) is refused; omitted options take the apps' defaults."""
        name = (
            game.strip().lower().replace(" ", "_").replace("-", "_")
            if isinstance(game, str)
            else None
        )
        kind = _ALIASES.get(name) if name is not None else None
        if kind is None:
            raise GameCodeError(
                f"unknown game {shown(game)}: expected 'double_solitaire', 'solitaire_reflechi' "
                "or 'seahaven_towers'"
            )
        vegas = False
        if scoring is not None:
            scoring_l = scoring.strip().lower() if isinstance(scoring, str) else None
            if scoring_l not in ("normal", "vegas"):
                raise GameCodeError(
                    f"unknown scoring {shown(scoring)}: expected 'normal' or 'vegas'"
                )
            if kind == SEAHAVEN:
                raise GameCodeError("Seahaven Towers has no scoring option")
            vegas = scoring_l == "vegas"
        return cls(kind, draw=draw, vegas=vegas, cells=cells)


def format_deal(deal: int) -> str:
    if not is_int(deal):
        raise GameCodeError(f"deal number must be an integer, not {shown(deal)}")
    deal = int(deal)
    if not 0 <= deal <= MAX_DEAL:
        raise GameCodeError(f"deal number {shown(deal)} is outside 0 … {MAX_DEAL}")
    return "".join(BASE32[(deal >> (5 * i)) & 31] for i in reversed(range(DEAL_DIGITS)))


def parse_deal(text: str) -> int:
    """Base-32 deal number (7 characters, ``A``–``Z`` then ``2``–``7``) to an integer."""
    t = text.strip().upper()
    if len(t) != DEAL_DIGITS:
        raise GameCodeError(
            f"deal number {shown(text)} has {len(t)} characters; it must have {DEAL_DIGITS}"
        )
    value = 0
    for i, ch in enumerate(t):
        d = BASE32.find(ch)
        if d < 0:
            raise GameCodeError(
                f"deal number {shown(text)}: character {ch!r} at position {i + 1} is not in the "
                "base-32 alphabet A–Z, 2–7"
            )
        value = value * 32 + d
    return value


_OPTIONS_RE = {
    DOUBLE: re.compile(r"^D([13])([NV])$"),
    REFLECHI: re.compile(r"^D([13])([NV])$"),
    SEAHAVEN: re.compile(r"^C([0-9])$"),
}


_BLANKS_RE = re.compile(r"[ \t\r\n]+")


def parse_code(code: str) -> tuple[Variant, int]:
    """Split a game code into its variant and deal number, naming the faulty part on error.
    Any case; spaces, tabs and line breaks anywhere are ignored (``"sh1 - c4 - aaaaaj2"``)."""
    if not isinstance(code, str):
        raise GameCodeError(f"a game code is a string, not {type(code).__name__}")
    if not code.isascii():
        bad = next(ch for ch in code if not ch.isascii())
        raise GameCodeError(
            f"game code {shown(code)}: character {bad!r} is not ASCII (codes are written in "
            "A–Z, 0–9 and '-')"
        )
    text = _BLANKS_RE.sub("", code).upper()
    if not text:
        raise GameCodeError("empty game code: expected e.g. 'SH1-C4-AAAAAJ2'")
    parts = text.split("-")
    if len(parts) != 3:
        raise GameCodeError(
            f"game code {shown(code)} must have three parts separated by '-' (game-options-deal), "
            f"e.g. 'DS1-D1N-AAAAAAB'; it has {len(parts)}"
        )
    prefix, options, deal_text = parts
    kind = {v: k for k, v in PREFIX.items()}.get(prefix)
    if kind is None:
        raise GameCodeError(
            f"unknown game {shown(prefix)} in {shown(code)}: expected DS1, TF1 or SH1"
        )
    m = _OPTIONS_RE[kind].match(options)
    offered = {DOUBLE: "D1N, D1V, D3N, D3V", REFLECHI: "D1N, D3N", SEAHAVEN: "C4, C2, C1"}[kind]
    if m is None:
        raise GameCodeError(
            f"options {shown(options)} in {shown(code)} are not offered by {GAME_NAMES[kind]}: "
            f"expected one of {offered}"
        )
    try:
        if kind == SEAHAVEN:
            variant = Variant(kind, cells=int(m.group(1)))
        else:
            variant = Variant(kind, draw=int(m.group(1)), vegas=m.group(2) == "V")
    except GameCodeError as e:
        raise GameCodeError(
            f"options {shown(options)} in {shown(code)} are not offered by {GAME_NAMES[kind]} ({e}): "
            f"expected one of {offered}"
        ) from None
    return variant, parse_deal(deal_text)


def make_cfg(v: Variant) -> np.ndarray:
    """The ``int64`` array of rule parameters and action-layout offsets the kernels read."""
    cfg = np.zeros(CFG_SIZE, dtype=np.int64)
    cols = {DOUBLE: 9, REFLECHI: 7, SEAHAVEN: 10}[v.game]
    piles = 8 if v.game == DOUBLE else 4
    cfg[G_GAME] = v.game
    cfg[G_COLS] = cols
    cfg[G_PILES] = piles
    cfg[G_CELLS] = v.cells
    cfg[G_DRAW] = v.draw
    cfg[G_VEGAS] = int(v.vegas)
    cfg[G_CARDS] = v.n_cards
    cfg[G_DECKS] = 2 if v.game == DOUBLE else 1
    lay_cells = MAX_CELLS if v.game == SEAHAVEN else 0
    stock = 0 if v.game == SEAHAVEN else 1
    cfg[L_CELLS] = lay_cells
    cfg[L_STOCK] = stock
    # Blocks in this order; the sizes are documented in actions.py.
    sizes = [
        (L_DRAW, 2 * stock),
        (L_TT, cols * (cols - 1) * MAX_RUN),
        (L_TF, cols),
        (L_WT, cols * stock),
        (L_WF, stock),
        (L_TC, cols if lay_cells else 0),
        (L_CT, lay_cells * cols),
        (L_CF, lay_cells),
        (L_FT, piles * cols),
        (L_FC, piles if lay_cells else 0),
    ]
    off = 0
    for slot, size in sizes:
        cfg[slot] = off
        off += size
    cfg[L_N] = off
    return cfg
