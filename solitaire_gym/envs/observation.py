"""The observation: the player's information state as a fixed-size float32 vector (or, with the
envs' ``obs_dtype="uint8"``, the same values as whole counts: :data:`OBS_DTYPES`).

Its layout depends on the game: a feature that a game can never have (free cells
in Double Solitaire, a stock in Seahaven Towers) takes no room. :func:`layout` gives the offsets
of every feature for an env (``env.unwrapped.obs_layout``). It does not depend on the options
(draw, scoring, free cells in play), so a policy trained with one option can play another. Two
blocks, for ``N`` = 52 · copies cards (104 in Double Solitaire), ``C`` columns (9 / 7 / 10) and
``K`` free cells (0 in the Klondike games, 4 in Seahaven whatever the number in play):

**Card block** ``(N, W)``, row ``face · copies + k`` for the ``k``-th copy of card face
``face = suit · 13 + rank`` (suits ♠ ♥ ♦ ♣, ranks A … K). Copies of one face are ordered by where
they lie (columns t1 … tC, foundations, waste, stock, cells), unseen copies last. Its columns, in
this order (those marked with a game exist in that game only):

================  =============================================================================
column            meaning
================  =============================================================================
``C``             lies in column t1 … tC
1                 lies on a foundation
1 (DS, TF)        ``waste``: lies in the waste
1 (DS, TF)        ``stock``: lies in the stock, and the player has seen it there (a card drawn
                  before and turned back with the waste, or put back by an undo)
``K`` (SH)        ``cell``: lies in free cell c1 … c4 (only the cells in play hold cards)
1 (DS, TF)        ``unseen``: the player has never seen this copy (face down, or in the stock
                  before its first draw). Nothing else in the row is set.
1                 ``depth``: cards lying above it in its column, waste or stock, / 32
1 (DS)            ``down``: it is face down (seen before, turned back by an undo)
================  =============================================================================

So ``W`` is 15 in Double Solitaire, 12 in Solitaire Réfléchi and 16 in Seahaven Towers.

**Pile block**, after the card block: column lengths / 32 (``C``); face-down counts / 32 (``C``,
DS only); foundation heights / 13 (8 in DS, else 4); stock size / N, unseen stock cards / N and
waste size / N (DS, TF); free cell empty and in play (``K``, SH); empty columns / 10 (1).

Sizes: Double Solitaire 1,590; Solitaire Réfléchi 639; Seahaven Towers 851.

An observation never reveals a card the player has not seen: two positions that differ only in
where the unseen cards lie give the same vector (tested).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numba as nb
import numpy as np

from solitaire_gym.engine.bits import bit, pop_lowest
from solitaire_gym.engine.rules import pile_suit
from solitaire_gym.engine.variants import (
    DOUBLE,
    G_CARDS,
    G_CELLS,
    G_COLS,
    G_DECKS,
    G_GAME,
    G_PILES,
    L_CELLS,
    L_STOCK,
)
from solitaire_gym.errors import ArgumentError

DEPTH_SCALE = 32.0
EMPTY_SCALE = 10.0
HEIGHT_SCALE = 13.0
ALL_FACES = np.uint64((1 << 52) - 1)
ABSENT = -1  # offset of a feature the game does not have


@nb.njit(cache=True, inline="always")
def offsets(cfg: np.ndarray):
    """The layout of the module docstring as a tuple of offsets (``ABSENT`` for a feature the
    game lacks): card row width, then the card columns t1 (first column), foundation, waste,
    stock, cell (first),
    unseen, depth, down; then the pile block's parts column lengths (where the block starts),
    face-down counts, foundation heights, stock size, unseen stock, waste size, cell empty
    (first), empty columns; then the size. The one place where the layout is decided."""
    cols = cfg[G_COLS]
    cells = cfg[L_CELLS]  # 4 in Seahaven whatever the number in play: one layout per game
    stock = cfg[L_STOCK] != 0
    down = cfg[G_GAME] == DOUBLE
    f_cols = 0
    k = f_cols + cols + 1
    f_waste = k if stock else ABSENT
    f_stock = k + 1 if stock else ABSENT
    k += 2 if stock else 0
    f_cell = k if cells else ABSENT
    k += cells
    f_unseen = k if stock else ABSENT  # hidden cards: the Klondike games' stock (and DS's columns)
    k += 1 if stock else 0
    f_depth = k
    k += 1
    f_down = k if down else ABSENT
    k += 1 if down else 0
    width = k
    p_len = cfg[G_CARDS] * width
    q = p_len + cols
    p_down = q if down else ABSENT
    q += cols if down else 0
    p_found = q
    q += cfg[G_PILES]
    p_stock = q if stock else ABSENT
    p_unseen = q + 1 if stock else ABSENT
    p_waste = q + 2 if stock else ABSENT
    q += 3 if stock else 0
    p_cell = q if cells else ABSENT
    q += cells
    p_empty = q
    q += 1
    return (
        width, f_cols, f_cols + cols, f_waste, f_stock, f_cell, f_unseen, f_depth, f_down,
        p_len, p_down, p_found, p_stock, p_unseen, p_waste, p_cell, p_empty, q,
    )  # fmt: skip


class Layout(NamedTuple):
    """Offsets into an observation (see the module docstring); -1 marks a feature the game does
    not have. Card features are columns of a card row: card ``r``'s feature ``f`` is at
    ``r * width + f``; pile features are absolute offsets."""

    width: int  # features per card row
    columns: int  # card column of t1; t2 … tC follow
    found: int
    waste: int
    stock: int
    cell: int  # c1; c2 … cK follow
    unseen: int
    depth: int
    down: int
    lengths: int  # column lengths t1 … tC: the start of the pile block
    downs: int  # face-down counts t1 … tC
    heights: int  # foundation heights
    stock_size: int
    stock_unseen: int
    waste_size: int
    cell_empty: int  # c1; c2 … cK follow
    empty_columns: int
    size: int


def layout(cfg: np.ndarray) -> Layout:
    """The observation layout of a variant's ``cfg`` (``Variant.cfg``)."""
    return Layout(*(int(v) for v in offsets(cfg)))


def row_faces(cfg: np.ndarray) -> np.ndarray:
    """The card face (``suit * 13 + rank``, suits ♠ ♥ ♦ ♣, ranks A … K) of each row of the card
    block of a variant's ``cfg``: row ``face * copies + k`` holds the ``k``-th copy of ``face``."""
    return np.arange(int(cfg[G_CARDS]), dtype=np.int64) // int(cfg[G_DECKS])


OBS_DTYPES = ("float32", "uint8")
"""The observation's dtypes (the envs' ``obs_dtype``): float32, the values above; uint8, each
value as a count (a depth, a length, a height, a number of cards; 0 or 1 for the rest), a quarter
of the bytes. :func:`scales` turns one into the other."""


def scales(cfg: np.ndarray) -> np.ndarray:
    """What each uint8 value of a variant's observation is multiplied by to give the float32 one:
    1/32 for depths, column lengths and face-down counts, 1/13 for foundation heights, 1/N for
    the stock and waste sizes, 1/10 for the empty columns, 1 elsewhere; float64 ``(size,)``."""
    lay = layout(cfg)
    out = np.ones(lay.size, np.float64)
    out[lay.depth : lay.lengths : lay.width] = 1.0 / DEPTH_SCALE
    cols = int(cfg[G_COLS])
    out[lay.lengths : lay.lengths + cols] = 1.0 / DEPTH_SCALE
    if lay.downs != ABSENT:
        out[lay.downs : lay.downs + cols] = 1.0 / DEPTH_SCALE
    out[lay.heights : lay.heights + int(cfg[G_PILES])] = 1.0 / HEIGHT_SCALE
    if lay.stock_size != ABSENT:
        out[[lay.stock_size, lay.stock_unseen, lay.waste_size]] = 1.0 / int(cfg[G_CARDS])
    out[lay.empty_columns] = 1.0 / EMPTY_SCALE
    return out


@functools.cache
def _game_scales(size: int) -> np.ndarray | None:
    """:func:`scales` of the one game whose observation has ``size`` values, if any (the layout
    depends on the game only; each game's size is its own); read-only, computed once a size."""
    from solitaire_gym.engine.variants import PREFIX, Variant

    cfgs = [Variant.from_names(prefix).cfg for prefix in PREFIX.values()]
    found = [scales(cfg) for cfg in cfgs if layout(cfg).size == size]
    if len(found) != 1:
        return None
    found[0].setflags(write=False)
    return found[0]


def to_dtype(obs: np.ndarray, dtype, cfg: np.ndarray | None = None) -> np.ndarray:
    """Observations ``(..., size)`` in ``dtype`` (one of :data:`OBS_DTYPES`), whichever of them
    they are in: a uint8 one becomes exactly the float32 one the env gives (its values times
    :func:`scales`), a float32 one the counts the env gives with ``obs_dtype="uint8"``; in their
    own dtype they are returned as they are. ``cfg``: the variant's (``Variant.cfg``); without it,
    the game whose observation has ``size`` values."""
    obs = np.asarray(obs)
    want = np.dtype(dtype) if isinstance(dtype, (str, np.dtype, type)) else None
    if want is None or want.name not in OBS_DTYPES:
        raise ArgumentError(f"dtype must be one of {', '.join(OBS_DTYPES)}, not {dtype!r}")
    if obs.dtype.name not in OBS_DTYPES or obs.ndim == 0:
        raise ArgumentError(
            f"observations are float32 or uint8 arrays, not {obs.dtype.name} of shape {obs.shape}"
        )
    size = obs.shape[-1]
    if cfg is None:
        factors = _game_scales(size)
        if factors is None:
            raise ArgumentError(f"no game has observations of {size} values")
    elif size != layout(cfg).size:
        raise ArgumentError(
            f"these observations have {size} values; this variant's have {layout(cfg).size}"
        )
    else:
        factors = scales(cfg)
    if obs.dtype == want:
        return obs
    if want == np.float32:
        return (obs * factors).astype(np.float32)
    return np.rint(obs / factors).astype(np.uint8)


def to_float(obs: np.ndarray, cfg: np.ndarray | None = None) -> np.ndarray:
    """:func:`to_dtype` to float32: what the package's networks read."""
    return to_dtype(obs, np.float32, cfg)


LAYOUT_VERSION = 2
"""The version of the observation's meaning: bump it when what a value means changes without
the offsets moving (a new scale, another order of copies). Changes of the offsets show in
:func:`layout_id` by themselves."""


def layout_id(cfg: np.ndarray) -> str:
    """``"<LAYOUT_VERSION>-<digest of the offsets>"`` for a variant's ``cfg``: what a trained
    policy records, and is refused against when the observation it learned from has changed."""
    import hashlib

    digest = hashlib.sha256(repr(tuple(layout(cfg))).encode()).hexdigest()[:12]
    return f"{LAYOUT_VERSION}-{digest}"


@nb.njit(cache=True, inline="always")
def _row(seen0: np.uint64, seen1: np.uint64, decks: int, width: int, face: int):
    """Offset of the next copy of ``face``'s row (unsigned: no negative-index fix-up on the
    stores), and the updated masks of faces seen once and twice (bit masks rather than a count
    array: no allocation per observation)."""
    f = bit(face)
    again = (seen0 >> np.uint64(face)) & np.uint64(1)  # 1 when a copy was met before: no branch
    r = np.uint64((face * decks + np.int64(again)) * width)
    return r, seen0 | f, seen1 | (f & (np.uint64(0) - again))


@nb.njit(cache=True)
def observe(s, b: int, cfg: np.ndarray, out: np.ndarray) -> None:
    """Write row ``b``'s observation into ``out`` (1-D, the layout's size): float32, the values of
    the module docstring; uint8, each value as its count (the float divided by :func:`scales`)."""
    (
        width, f_cols, f_found, f_waste, f_stock, f_cell, f_unseen, f_depth, f_down,
        p_len, p_down, p_found, p_stock, p_unseen, p_waste, p_cell, p_empty, _,
    ) = offsets(cfg)  # fmt: skip
    # The state's arrays are read through locals: after every store into ``out`` the compiler
    # would otherwise reload each array's address from the state object (~15% of the time).
    tab = s.tab
    tab_len = s.tab_len
    tab_down = s.tab_down
    tab_unknown = s.tab_unknown
    found = s.found
    waste = s.waste
    stock = s.stock
    cells = s.cells
    out[:] = 0
    # uint8 (a compile-time constant): counts, not scaled (the scales are powers of two or are
    # applied last, so the float values are those that counts times scales() give)
    raw = out.itemsize == 1
    per_depth = 1.0 if raw else 1.0 / DEPTH_SCALE
    per_height = 1.0 if raw else 1.0 / HEIGHT_SCALE
    per_empty = 1.0 if raw else 1.0 / EMPTY_SCALE
    decks = cfg[G_DECKS]
    n = cfg[G_CARDS]
    seen0 = np.uint64(0)
    seen1 = np.uint64(0)
    u_depth = np.uint64(f_depth)
    u_cols = np.uint64(f_cols)
    # Loop bounds and the face-down count are read once: the compiler cannot tell that the
    # stores into ``out`` leave the state alone, so it would read them again after each store.
    for c in range(cfg[G_COLS]):
        h = np.int64(tab_len[b, c])
        down = np.int64(tab_down[b, c])
        u_c = u_cols + np.uint64(c)
        for i in range(np.int64(tab_unknown[b, c]), h):
            r, seen0, seen1 = _row(seen0, seen1, decks, width, tab[b, c, i])
            out[r + u_c] = 1.0
            out[r + u_depth] = (h - 1 - i) * per_depth
            if i < down:  # a seen card turned back face down by an undo: rare, so predicted
                out[r + np.uint64(f_down)] = 1.0
    for p in range(cfg[G_PILES]):
        first = pile_suit(cfg, p) * 13
        for face in range(first, first + np.int64(found[b, p])):
            r, seen0, seen1 = _row(seen0, seen1, decks, width, face)
            out[r + np.uint64(f_found)] = 1.0
    w = s.waste_len[b]
    for i in range(w):
        r, seen0, seen1 = _row(seen0, seen1, decks, width, waste[b, i])
        out[r + np.uint64(f_waste)] = 1.0
        out[r + u_depth] = (w - 1 - i) * per_depth
    sl = s.stock_len[b]
    for i in range(s.stock_unknown[b], sl):
        r, seen0, seen1 = _row(seen0, seen1, decks, width, stock[b, i])
        out[r + np.uint64(f_stock)] = 1.0
        out[r + u_depth] = (sl - 1 - i) * per_depth
    for k in range(cfg[G_CELLS]):
        if cells[b, k] >= 0:
            r, seen0, seen1 = _row(seen0, seen1, decks, width, cells[b, k])
            out[r + np.uint64(f_cell + k)] = 1.0
    # Only the unseen copies are written (the rest are 0 already): their faces are the bits not
    # set in the masks of faces seen once and twice, taken lowest first. (A game without unseen
    # cards has seen every face, so nothing is written.)
    unseen = ~seen0 & ALL_FACES
    while unseen:
        face, unseen = pop_lowest(unseen)
        out[face * decks * width + f_unseen] = 1.0
    unseen = ~seen1 & ALL_FACES if decks == 2 else np.uint64(0)
    while unseen:
        face, unseen = pop_lowest(unseen)
        out[(face * 2 + 1) * width + f_unseen] = 1.0
    # Pile block, without a division.
    empty = 0
    for c in range(cfg[G_COLS]):
        out[p_len + c] = tab_len[b, c] * per_depth
        empty += tab_len[b, c] == 0
    if p_down >= 0:
        for c in range(cfg[G_COLS]):
            out[p_down + c] = tab_down[b, c] * per_depth
    for p in range(cfg[G_PILES]):
        out[p_found + p] = found[b, p] * per_height
    if p_stock >= 0:
        per_card = 1.0 if raw else 1.0 / n
        out[p_stock] = sl * per_card
        out[p_unseen] = s.stock_unknown[b] * per_card
        out[p_waste] = w * per_card
    for k in range(cfg[G_CELLS]):
        out[p_cell + k] = cells[b, k] < 0
    out[p_empty] = empty * per_empty
