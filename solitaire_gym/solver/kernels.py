"""The solver's compiled core: a resumable depth-first search over the engine's own kernels.

Nothing here decides a rule. Moves come from ``movegen.legal_actions`` and ``rules.check_parts``,
are played with ``play.apply`` and taken back with ``play.undo_record``; this module only chooses
which legal moves to try, in what order, and remembers which positions it has seen.

Search layout (all arrays owned by the Python driver, so that a search can stop after a chunk of
work, let Python look at the clock, grow an array, and resume exactly where it was)::

    recs[0 .. ctl[C_RECS]-1]        undo records of the current path, root first (int64). The low
                                    11 bits of a record are its action id: the path is the solution
    frames[f] = (rec_start, mv_start, mv_end, cursor)
                                    one row per node of the path (f = 0 is the root): the records
                                    that led from its parent (rec_start .. next frame's rec_start),
                                    and its untried moves moves[cursor .. mv_end-1]
    moves[..]                       move stack (int32): action | draws << 11, see below
    tt1, tt2                        visited set: open addressing, two independent 64-bit keys
    ctl                             counters (C_* below)

**Moves.** A node's moves are its legal moves with three kinds of provably useless ones left out,
plus *stock macros*: "tap the stock ``j`` times, then play the waste card" (``j`` = 0 … one full
cycle of the stock). Taps on the stock commute with every move that does not touch the waste, so
any solution can be reordered to tap the stock only just before a waste card is played; the macro
enumerates every waste top reachable that way, and no position is reached by tapping alone.
Left out: (1) a move into an empty column other than the first empty one (columns are
interchangeable), (2) moving a whole column into an empty column (the same position), (3) in
Seahaven Towers, taking a card back from a foundation (the card's foundation move is then legal and
safe, so the automatic play below puts it straight back: the same position).

**Safe automatic moves.** After every move, foundation moves that provably cannot turn a winnable
position into a lost one are played without branching (they are still moves of the solution):

* Seahaven Towers: any legal foundation move (building is by suit, so the only card that could
  ever lie on the card is the one below it in its suit, already on the foundation);
* Solitaire Réfléchi: a card of rank ``r`` from a column, or from the waste with draw 1, when both
  opposite-colour foundations hold rank ``r−1`` and the other same-colour foundation ``r−2``.
  Every card that could ever be built on it, directly or in a chain, is then on a foundation, so a
  solution that uses the card on the board can be replayed without it; that holds even with
  take-backs from the foundations. Not from the waste with draw 3: removing a waste card shifts
  the groups of three for the rest of the game;
* Double Solitaire: the same with both copies (all four opposite-colour piles at ``r−1`` or more,
  both piles of the other same-colour suit at ``r−2``, and the card's own suit's other pile
  already past ``r``, i.e. the second copy); any Ace.

**Visited set and exactness.** A position is entered at most once: a child whose key is in the
table (on the current path, or fully explored) is not expanded again. Because every winnable
position has a generated child strictly closer to a win, the search finds a win whenever one
exists, and exhausting the table proves there is none. Keys are canonical: columns as a multiset
(the rules treat them alike), free cells as a set, a suit's two foundation piles as a pair, the
stock and waste as one sequence in drawing order with the split point between them reduced to
its class (draw 1 and unlimited turn-overs: every split reaches every other, so the split is not
part of the key; draw 3: the splits 0, 3, 6 … and the end form one cycle, the others stand for
themselves; Vegas: the split itself). Two 64-bit Zobrist keys (128 bits) make a false "seen"
vanishingly unlikely (below 10^-20 for a billion positions).
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
from solitaire_gym.engine.movegen import legal_actions
from solitaire_gym.engine.play import apply, undo_record
from solitaire_gym.engine.rules import check_parts, fits_on, foundation_for, is_won
from solitaire_gym.engine.variants import (
    DOUBLE,
    G_CELLS,
    G_COLS,
    G_DRAW,
    G_GAME,
    G_VEGAS,
    L_CF,
    L_DRAW,
    L_STOCK,
    L_TF,
    L_WF,
    L_WT,
    MAX_HEIGHT,
    REFLECHI,
    SEAHAVEN,
)

# ---- statuses returned by search() -------------------------------------------------------------
ST_BUDGET = 0  # the chunk's work or node limit is spent: call again
ST_WON = 1  # recs[0 .. ctl[C_RECS]-1] is a solution
ST_EXHAUSTED = 2  # every position reachable from the root was expanded: no solution
ST_GROW_TT = 3  # the visited set is half full: grow it (rehash) and call again
ST_GROW_RECS = 4
ST_GROW_FRAMES = 5
ST_GROW_MOVES = 6

# ---- ctl slots ---------------------------------------------------------------------------------
C_DEPTH = 0  # index of the top frame
C_RECS = 1  # records on the path
C_MOVES = 2  # move-stack top
C_NODES = 3  # positions expanded (each once)
C_TT = 4  # keys in the visited set
C_HITS = 5  # children skipped because already seen
C_MAXDEPTH = 6
C_SIZE = 8

# ---- Zobrist table layout (two rows, one per key) ----------------------------------------------
SEQ = 105  # positions in the stock + waste sequence (104 cards) + 1
Z_COL = 0  # (card, height, face down): 52 * MAX_HEIGHT * 2
Z_FOUND = Z_COL + 52 * MAX_HEIGHT * 2  # Double: (suit, low pile, high pile); else (pile, height)
Z_CELL = Z_FOUND + 4 * 14 * 14  # card in a free cell
Z_SEQ = Z_CELL + 52  # (card, index in the stock + waste sequence)
Z_SPLIT = Z_SEQ + 52 * SEQ  # split point class: 0 … 104, SEQ = "any / the recurrent cycle"
Z_SIZE = Z_SPLIT + SEQ + 1

MOVE_BITS = 11  # actions < 2048; a move is action | draws << MOVE_BITS
MOVE_MASK = (1 << MOVE_BITS) - 1
REC_MARGIN = 2 * SEQ + 128  # records one move can push: stock taps, the move, automatic plays
MOVE_MARGIN = 4096  # moves one node can push (generous: about 60 in practice)
SCRATCH = 2048  # legal_actions' buffer (more than any game's action count)

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_K2 = np.uint64(0x9E3779B97F4A7C15)
_S33 = np.uint64(33)


def zobrist_table(seed: int = 0x5EA7A1E) -> np.ndarray:
    """The random keys (fixed seed: a position's key is the same in every run)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, np.iinfo(np.uint64).max, size=(2, Z_SIZE), dtype=np.uint64, endpoint=True)


@nb.njit(cache=True, inline="always")
def _fmix(x):
    x ^= x >> _S33
    x *= _M1
    x ^= x >> _S33
    x *= _M2
    x ^= x >> _S33
    return x


@nb.njit(cache=True)
def position_key(s, cfg: np.ndarray, Z: np.ndarray) -> tuple[np.uint64, np.uint64]:
    """The canonical 128-bit key of row 0 (see the module docstring); never (0, *)."""
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for c in range(cfg[G_COLS]):
        n = np.int64(s.tab_len[0, c])
        if n == 0:
            continue
        down = np.int64(s.tab_down[0, c])
        x1 = np.uint64(0)
        x2 = np.uint64(0)
        for i in range(n):
            idx = Z_COL + (np.int64(s.tab[0, c, i]) * MAX_HEIGHT + i) * 2 + (1 if i < down else 0)
            x1 ^= Z[0, idx]
            x2 ^= Z[1, idx]
        h1 += _fmix(x1)  # a sum: the columns are a multiset
        h2 += _fmix(x2 ^ _K2)
    if cfg[G_GAME] == DOUBLE:
        for su in range(4):
            a = np.int64(s.found[0, 2 * su])
            b = np.int64(s.found[0, 2 * su + 1])
            lo = min(a, b)
            hi = max(a, b)
            idx = Z_FOUND + (su * 14 + lo) * 14 + hi
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
    else:
        for p in range(4):
            idx = Z_FOUND + p * 14 + np.int64(s.found[0, p])
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
    for k in range(cfg[G_CELLS]):
        card = np.int64(s.cells[0, k])
        if card >= 0:
            h1 ^= Z[0, Z_CELL + card]
            h2 ^= Z[1, Z_CELL + card]
    if cfg[L_STOCK]:
        wl = np.int64(s.waste_len[0])
        sl = np.int64(s.stock_len[0])
        for i in range(wl):
            idx = Z_SEQ + np.int64(s.waste[0, i]) * SEQ + i
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
        for i in range(sl):  # stock[sl-1] is drawn first: sequence index wl
            idx = Z_SEQ + np.int64(s.stock[0, i]) * SEQ + wl + sl - 1 - i
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
        if cfg[G_VEGAS]:
            split = wl
        elif cfg[G_DRAW] == 1:
            split = SEQ
        elif wl % 3 == 0 or sl == 0:
            split = SEQ
        else:
            split = wl
        h1 ^= Z[0, Z_SPLIT + split]
        h2 ^= Z[1, Z_SPLIT + split]
    h1 = _fmix(h1)
    h2 = _fmix(h2 + _K2)
    if h1 == 0:
        h1 = np.uint64(1)
    return h1, h2


@nb.njit(cache=True)
def tt_insert(t1: np.ndarray, t2: np.ndarray, h1: np.uint64, h2: np.uint64) -> bool:
    """Add the key; False if it was there already."""
    mask = np.uint64(t1.shape[0] - 1)
    i = np.int64(h1 & mask)
    m = t1.shape[0] - 1
    while True:
        k = t1[i]
        if k == 0:
            t1[i] = h1
            t2[i] = h2
            return True
        if k == h1 and t2[i] == h2:
            return False
        i = (i + 1) & m


@nb.njit(cache=True)
def tt_rehash(o1: np.ndarray, o2: np.ndarray, n1: np.ndarray, n2: np.ndarray) -> None:
    for i in range(o1.shape[0]):
        if o1[i] != 0:
            tt_insert(n1, n2, o1[i], o2[i])


# ---- safe automatic foundation moves ---------------------------------------------------------


@nb.njit(cache=True)
def _safe(s, cfg: np.ndarray, card: int) -> bool:
    """May ``card`` (whose foundation move is legal) be played there without branching?
    See the module docstring for why each condition suffices."""
    game = cfg[G_GAME]
    if game == SEAHAVEN:
        return True
    r = card % 13  # 0 = Ace
    su = card // 13
    red = su == 1 or su == 2
    if game == REFLECHI:
        for p in range(4):
            if p == su:
                continue
            need = r if (p == 1 or p == 2) != red else r - 1
            if s.found[0, p] < need:
                return False
        return True
    if r == 0:
        return True
    for p in range(8):
        ps = p // 2
        if ps == su:
            continue
        need = r if (ps == 1 or ps == 2) != red else r - 1
        if s.found[0, p] < need:
            return False
    return max(s.found[0, 2 * su], s.found[0, 2 * su + 1]) >= r + 1


@nb.njit(cache=True)
def find_safe(s, cfg: np.ndarray) -> int:
    """A safe automatic foundation move of row 0 (action id), or -1."""
    for c in range(cfg[G_COLS]):
        h = s.tab_len[0, c]
        if h == 0:
            continue
        card = np.int64(s.tab[0, c, h - 1])
        if foundation_for(s, 0, cfg, card) >= 0 and _safe(s, cfg, card):
            if check_parts(s, 0, cfg, K_TF, c, 0, 1) == 0:
                return cfg[L_TF] + c
    for k in range(cfg[G_CELLS]):
        card = np.int64(s.cells[0, k])
        if card >= 0 and foundation_for(s, 0, cfg, card) >= 0 and _safe(s, cfg, card):
            if check_parts(s, 0, cfg, K_CF, k, 0, 1) == 0:
                return cfg[L_CF] + k
    if cfg[L_STOCK] and cfg[G_DRAW] == 1 and s.waste_len[0] > 0:
        card = np.int64(s.waste[0, s.waste_len[0] - 1])
        if foundation_for(s, 0, cfg, card) >= 0 and _safe(s, cfg, card):
            if check_parts(s, 0, cfg, K_WF, 0, 0, 1) == 0:
                return cfg[L_WF]
    return -1


@nb.njit(cache=True)
def autoplay(s, cfg: np.ndarray, recs: np.ndarray, top: int) -> int:
    """Play safe foundation moves until none is left; their records go to ``recs[top ..]``.
    Returns the new top."""
    while not is_won(s, 0, cfg):
        a = find_safe(s, cfg)
        if a < 0:
            break
        recs[top] = apply(s, 0, cfg, a)
        top += 1
    return top


# ---- move generation and ordering --------------------------------------------------------------


@nb.njit(cache=True)
def _score(s, cfg: np.ndarray, kind: int, src: int, dst: int, n: int, j: int) -> int:
    """Move ordering: higher first. Foundations, then moves that uncover a new card or free a
    cell, then the rest; take-backs last."""
    game = cfg[G_GAME]
    if kind == K_TF or kind == K_CF:
        return 1000
    if kind == K_WF:
        return 990 - j
    if kind == K_FT or kind == K_FC:
        return -500
    if kind == K_WT:
        return 450 - j
    if kind == K_CT:
        return 600 if s.tab_len[0, dst] > 0 else 560
    h = np.int64(s.tab_len[0, src])
    rest = h - n
    if kind == K_TC:
        sc = 100
        if rest > 0:
            below = np.int64(s.tab[0, src, rest - 1])
            if foundation_for(s, 0, cfg, below) >= 0:
                sc += 700
        else:
            sc += 50
        return sc
    # K_TT
    sc = 300
    if rest == 0:
        sc += 100
    else:
        below = np.int64(s.tab[0, src, rest - 1])
        bottom = np.int64(s.tab[0, src, rest])
        if game == DOUBLE and rest <= s.tab_down[0, src]:
            sc += 400  # turns a face-down card over
        elif fits_on(cfg, bottom, below) and rest > s.tab_down[0, src]:
            sc -= 250  # splits a built sequence
        else:
            sc += 250  # uncovers a card that could not move before
        if foundation_for(s, 0, cfg, below) >= 0:
            sc += 300
    if s.tab_len[0, dst] == 0:
        sc += 50
    return sc


@nb.njit(cache=True)
def gen_moves(
    s,
    cfg: np.ndarray,
    acts: np.ndarray,
    out: np.ndarray,
    start: int,
    sc: np.ndarray,
    tmp: np.ndarray,
    seen: np.ndarray,
) -> int:
    """Write row 0's moves, best first, to ``out[start ..]``; return how many."""
    game = cfg[G_GAME]
    cols = cfg[G_COLS]
    first_empty = -1
    for c in range(cols):
        if s.tab_len[0, c] == 0:
            first_empty = c
            break
    n_legal = legal_actions(s, 0, cfg, acts)
    k = 0
    for i in range(n_legal):
        a = acts[i]
        kind, src, dst, n = decode(cfg, a)
        if kind == K_DRAW or kind == K_RECYCLE or kind == K_WT or kind == K_WF:
            continue  # the stock macros below play these
        if game == SEAHAVEN and (kind == K_FT or kind == K_FC):
            continue  # automatic play would put the card straight back
        if (kind == K_TT or kind == K_CT or kind == K_FT) and s.tab_len[0, dst] == 0:
            if dst != first_empty:
                continue
            if kind == K_TT and n == s.tab_len[0, src]:
                continue
        out[start + k] = a
        sc[k] = _score(s, cfg, kind, src, dst, n, 0)
        k += 1
    if cfg[L_STOCK]:
        # Walk the stock through one whole cycle (apply, then undo every tap), noting each waste
        # card that can be played after j taps.
        seen[:] = 0
        n_taps = 0
        wf = cfg[L_WF]
        wt = cfg[L_WT]
        while True:
            wl = s.waste_len[0]
            seen[wl] = 1
            if wl > 0:
                if check_parts(s, 0, cfg, K_WF, 0, 0, 1) == 0:
                    out[start + k] = wf | (n_taps << MOVE_BITS)
                    sc[k] = _score(s, cfg, K_WF, 0, 0, 1, n_taps)
                    k += 1
                for d in range(cols):
                    if s.tab_len[0, d] == 0 and d != first_empty:
                        continue
                    if check_parts(s, 0, cfg, K_WT, 0, d, 1) == 0:
                        out[start + k] = (wt + d) | (n_taps << MOVE_BITS)
                        sc[k] = _score(s, cfg, K_WT, 0, d, 1, n_taps)
                        k += 1
            if check_parts(s, 0, cfg, K_DRAW, 0, 0, 1) == 0:
                tap = cfg[L_DRAW]
            elif check_parts(s, 0, cfg, K_RECYCLE, 0, 0, 1) == 0:
                tap = cfg[L_DRAW] + 1
            else:
                break
            tmp[n_taps] = apply(s, 0, cfg, tap)
            n_taps += 1
            if seen[s.waste_len[0]]:
                break
        for r in range(n_taps - 1, -1, -1):
            undo_record(s, 0, cfg, tmp[r])
    # Insertion sort, best first, stable.
    for i in range(1, k):
        m = out[start + i]
        v = sc[i]
        q = i - 1
        while q >= 0 and sc[q] < v:
            out[start + q + 1] = out[start + q]
            sc[q + 1] = sc[q]
            q -= 1
        out[start + q + 1] = m
        sc[q + 1] = v
    return k


# ---- the search --------------------------------------------------------------------------------


@nb.njit(cache=True)
def init_root(
    s,
    cfg: np.ndarray,
    Z: np.ndarray,
    tt1: np.ndarray,
    tt2: np.ndarray,
    recs: np.ndarray,
    frames: np.ndarray,
    moves: np.ndarray,
    ctl: np.ndarray,
    acts: np.ndarray,
    sc: np.ndarray,
    tmp: np.ndarray,
    seen: np.ndarray,
) -> int:
    """Play the root's safe moves, enter the root, generate its moves."""
    ctl[:] = 0
    top = autoplay(s, cfg, recs, 0)
    ctl[C_RECS] = top
    if is_won(s, 0, cfg):
        return ST_WON
    h1, h2 = position_key(s, cfg, Z)
    tt_insert(tt1, tt2, h1, h2)
    ctl[C_TT] = 1
    ctl[C_NODES] = 1
    cnt = gen_moves(s, cfg, acts, moves, 0, sc, tmp, seen)
    frames[0, 0] = 0
    frames[0, 1] = 0
    frames[0, 2] = cnt
    frames[0, 3] = 0
    ctl[C_MOVES] = cnt
    return ST_BUDGET


@nb.njit(cache=True)
def search(
    s,
    cfg: np.ndarray,
    Z: np.ndarray,
    tt1: np.ndarray,
    tt2: np.ndarray,
    recs: np.ndarray,
    frames: np.ndarray,
    moves: np.ndarray,
    ctl: np.ndarray,
    acts: np.ndarray,
    sc: np.ndarray,
    tmp: np.ndarray,
    seen: np.ndarray,
    node_limit: int,
    work_limit: int,
) -> int:
    """Continue the depth-first search until a win, exhaustion, ``ctl[C_NODES]`` reaching
    ``node_limit``, ``work_limit`` steps, or an array that needs to grow (the caller grows it and
    calls again; nothing is lost)."""
    depth = ctl[C_DEPTH]
    top = ctl[C_RECS]
    mtop = ctl[C_MOVES]
    nodes = ctl[C_NODES]
    ttn = ctl[C_TT]
    hits = ctl[C_HITS]
    maxdepth = ctl[C_MAXDEPTH]
    status = ST_BUDGET
    work = 0
    draw_a = cfg[L_DRAW]
    while True:
        if nodes >= node_limit or work >= work_limit:
            status = ST_BUDGET
            break
        work += 1
        cur = frames[depth, 3]
        if cur >= frames[depth, 2]:  # every move of this node tried: back up
            if depth == 0:
                status = ST_EXHAUSTED
                break
            r0 = frames[depth, 0]
            for r in range(top - 1, r0 - 1, -1):
                undo_record(s, 0, cfg, recs[r])
            top = r0
            mtop = frames[depth, 1]
            depth -= 1
            continue
        if top + REC_MARGIN > recs.shape[0]:
            status = ST_GROW_RECS
            break
        if mtop + MOVE_MARGIN > moves.shape[0]:
            status = ST_GROW_MOVES
            break
        if depth + 2 > frames.shape[0]:
            status = ST_GROW_FRAMES
            break
        if 2 * (ttn + 1) > tt1.shape[0]:
            status = ST_GROW_TT
            break
        frames[depth, 3] = cur + 1
        m = np.int64(moves[cur])
        a = m & MOVE_MASK
        j = m >> MOVE_BITS
        r_start = top
        for _ in range(j):
            tap = draw_a if s.stock_len[0] > 0 else draw_a + 1
            recs[top] = apply(s, 0, cfg, tap)
            top += 1
        recs[top] = apply(s, 0, cfg, a)
        top += 1
        top = autoplay(s, cfg, recs, top)
        if is_won(s, 0, cfg):
            status = ST_WON
            break
        h1, h2 = position_key(s, cfg, Z)
        if not tt_insert(tt1, tt2, h1, h2):
            hits += 1
            for r in range(top - 1, r_start - 1, -1):
                undo_record(s, 0, cfg, recs[r])
            top = r_start
            continue
        ttn += 1
        nodes += 1
        depth += 1
        if depth > maxdepth:
            maxdepth = depth
        cnt = gen_moves(s, cfg, acts, moves, mtop, sc, tmp, seen)
        frames[depth, 0] = r_start
        frames[depth, 1] = mtop
        frames[depth, 2] = mtop + cnt
        frames[depth, 3] = mtop
        mtop += cnt
    s.moves[0] = 0  # the app's counter is no business of the solver's (and must not overflow)
    ctl[C_DEPTH] = depth
    ctl[C_RECS] = top
    ctl[C_MOVES] = mtop
    ctl[C_NODES] = nodes
    ctl[C_TT] = ttn
    ctl[C_HITS] = hits
    ctl[C_MAXDEPTH] = maxdepth
    return status
