"""The solver's compiled core: a resumable depth-first search over the engine's own kernels.

Nothing here decides a rule. Moves come from ``movegen.legal_actions`` (and, for the waste cards
reachable by tapping the stock, from the predicates ``rules.check_parts`` uses:
``foundation_for`` and ``check_onto_column``), are played with ``play.apply`` after a last
``rules.check_move`` and taken back with ``play.undo_record``. This module only chooses which
legal moves to try, in what order, and remembers which positions it has seen.

Search layout (all arrays owned by the Python driver, so that a search can stop after a chunk of
work, let Python look at the clock, grow an array or restart, and resume exactly where it was)::

    recs[0 .. ctl[C_RECS]-1]   undo records of the current path, root first (int64). The low 11
                               bits of a record are its action id: the path is the solution
    frames[f, F_*]             one row per node of the path (f = 0 is the root): the records that
                               led from its parent, its untried moves moves[cursor .. mv_end-1],
                               Tarjan's index and low link, its stock walk (F_* below)
    moves[..]                  move stack (int32): action | taps << 11, see "Moves"
    wkc, wkj                   stock walks: waste card reachable, taps to reach it
    tt1, tt2, tti              visited set: open addressing, two 64-bit keys, state (see DEAD)
    ts1, ts2                   Tarjan's stack of keys
    ctl                        counters and settings (C_* below)

**Moves.** A node's moves are its legal moves with a few provably useless ones left out, plus
*stock macros*: "tap the stock ``j`` times, then play the waste card" (``j`` = 0 … one full cycle
of the stock). Taps commute with every move that does not touch the waste, so any solution can be
reordered to tap only just before a waste card is played; a macro reaches every waste top that
way, and no position is entered by tapping alone. The waste tops of one cycle (the node's *walk*)
are found by tapping with the engine and undoing the taps; children that leave the stock and
waste alone share their parent's walk. Left out: (1) a move into an empty column other than the
first empty one (columns are interchangeable), (2) moving a whole column into an empty column
(the same position), (3) in Seahaven Towers, taking a card back from a foundation (its foundation
move is then legal and safe, so the automatic play below puts it straight back), (4) with draw 1
and unlimited turn-overs, after a card is played from the waste to a column, any move but one
onto that card, and after a card (not a King) is played from the waste to its foundation, any
move but a foundation move of its suit (``_lazy_waste``).

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

**Dead ends.** In Solitaire Réfléchi a new position is tested before it is expanded: when some
column bottoms provably can never be taken apart (``dead_end``: the cards they could move onto
stay buried, and the foundation of the top card lacks a lower card of its suit that lies frozen
too), no play wins from it and it is marked proven lost at once. Many deals are lost at the
root that way, and many lost subtrees are cut short. The root gets the strong form of the test
(a card in the stock, the waste or on a foundation reaches a column only onto a card it fits on,
so it stays out of reach when those do): it costs more, and decides a few more deals at the root
only.

In Double Solitaire with Vegas scoring (``dead_end_double``) the same argument covers both
copies of each card, face-down cards, and the waste, which the single pass makes a pile that is
only ever taken from the top and never built on: a waste card with nowhere to go holds every card
under it. New positions are tested there too, after a stock macro as well (its taps add to the
waste for good). There the test also plays the rest of the single pass in a relaxed game that can
do everything the real one can and more (``single_pass_lost``: a card leaves the waste or its
column whenever a card it fits on has ever been in view, nothing covers anything): if even that
game ends the stock with a card off the foundations, the position is lost. It looks at the order
of the cards still to come, which the frozen-prefix test does not.

**Hop classes (Solitaire Réfléchi, draw 1).** With one deck a card fits on two cards only, the
two of the next rank in the other colour (*twins*). A *hop* moves an ordered group from the card
it fits on to that card's twin, on top of another column; it splits a built sequence, and a hop
back undoes it at once. So the positions linked by hops (a *hop class*) win or lose together,
and the search takes a whole class as one node: entered at its least member (each group on the
lower-numbered twin, ``_canonical``), keyed by that member, and expanded with every member's
moves but the hops (``gen_node``). A class is a cube: each *site* (a group that can hop) has two
choices independent of the others (``hop_class`` finds classes breadth first; the tests check the
two agree), so a member is a set of sites to hop. Besides the node's own moves, only the members
one hop away contribute, and only the moves onto the card the hop uncovered or sending it home:
any other move of any member has a counterpart from a member with one hop fewer that reaches the
same class (the cases are in ``gen_node``; with draw 1 a waste card going home is kept too where
the cards the hops uncover may follow it). The moves that reach a class by a hop are not
generated at all. A class with more than ``HOP_SITES`` sites is searched position by position.
In the draw-1 proofs that the splits made large this takes a third as many positions or fewer
(``TF1-D1N-AAAAACC``: 2.2 million instead of 7.7 million, in one run).

**Visited set and exactness.** A node is entered at most once per run: a child whose key is in
the table is not expanded again. Every winnable node has a generated child strictly closer to a
win, so a run that finds no win has explored everything reachable, which proves there is none.
Keys are canonical: columns as a multiset (the rules treat them alike), free cells as a set, a
suit's two foundation piles as a pair, the stock and waste as one sequence in drawing order with
the split point between them reduced to its class (draw 1 and unlimited turn-overs: every split
reaches every other, and a node's macros play every waste card of its class, so the split is not
part of the key; draw 3: the splits 0, 3, 6 … and the end form one cycle, the others stand for
themselves; Vegas: the split itself). Two 64-bit Zobrist keys (128 bits) make a false "seen"
vanishingly unlikely (about 10^-20 for a billion positions).

**Restarts.** Solving times are heavy-tailed: a move order that buries the solution under a huge
lost subtree is common, another order finds it at once. The driver restarts the search after a
Luby-sequence number of nodes, with the move scores randomly perturbed. Tarjan's strongly
connected components make the work of a run outlive it: when a component is closed without a
win, all its nodes are lost whatever the order, and are marked DEAD for good; the rest of the
table goes stale. The root marked DEAD is a proof that the deal is lost.

**Side runs.** In Solitaire Réfléchi the driver gives a share of the nodes to side runs that
leave out moves most solutions do without: take-backs from a foundation (``FL_NO_TAKEBACK``) and,
with draw 1, splitting a built sequence between columns (``FL_NO_SPLIT``: only a whole ordered
group moves, uncovering the card under it, as in lonelybot's move set); without them a lost
subtree is far smaller, so such a run finds a win much sooner. A node where such a move was left
out is *incomplete*, and so is every node above it on the path
and every node that reaches a node closed incomplete (``F_INC``, propagated like the low link); a
component that closes incomplete is not proven lost but marked ``CLOSED`` for the rest of the run
(a child found so counts as incomplete), a complete one is marked DEAD as in any run: everything
reachable from it was searched with every move. A side run that ends at the root incomplete
(``ST_RUN_DONE``) proves nothing; the driver then stops giving side runs of that kind.

**Checking the reductions.** Each reduction can be switched off (``FL_*``); with all of them off
(and no restarts) the search is a plain exhaustive search over exact positions and every legal
move, against which the tests compare the verdicts.
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
    enc_tt,
)
from solitaire_gym.engine.borrow import borrow, fields, view
from solitaire_gym.engine.cards import KING, rank_of, suit_of
from solitaire_gym.engine.movegen import legal_actions
from solitaire_gym.engine.play import apply, undo_record
from solitaire_gym.engine.rules import (
    check_move,
    check_onto_column,
    check_parts,
    fits_on,
    foundation_for,
    is_won,
)
from solitaire_gym.engine.variants import (
    DOUBLE,
    G_CELLS,
    G_COLS,
    G_DRAW,
    G_GAME,
    G_PILES,
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
ST_GROW_TSTACK = 7
ST_GROW_WALK = 8
ST_BUG = 9  # a move the search was about to play is illegal: a solver bug
ST_RUN_DONE = 10  # a run without take-backs ended without a win or a proof: restart

# ---- ctl slots ---------------------------------------------------------------------------------
C_DEPTH = 0  # index of the top frame
C_RECS = 1  # records on the path
C_MOVES = 2  # move-stack top
C_NODES = 3  # nodes entered (once per run; again in a later run unless proven lost)
C_TT = 4  # keys in the visited set
C_HITS = 5  # children skipped because already seen
C_MAXDEPTH = 6
C_RNG = 7  # xorshift state for the move-order jitter
C_JITTER = 8  # 0: plain order; else scores get a random 0 .. jitter-1 added
C_GEN = 9  # the run (restarts start a new one)
C_INDEX = 10  # nodes entered in this run (Tarjan's index)
C_TSTACK = 11  # Tarjan stack top
C_ROOTRECS = 12  # records of the root's automatic moves (kept over restarts)
C_DEAD = 13  # positions proven lost
C_FLAGS = 14  # FL_* below: reductions switched off (for tests and measurements)
C_WALK = 15  # stock-walk stack top
C_DEADEND = 16  # new positions that dead_end() proved lost (not expanded)
C_SKIPPED = 17  # set by gen_moves when it left out a move that a side run's flag alone forbids
C_BEST = 18  # the most cards on the foundations in any position entered (a measure of progress)
C_SIZE = 19

# Reductions can be switched off one by one (ctl[C_FLAGS]); with all of them off the search is a
# plain exhaustive depth-first search over exact positions and every legal move, which the tests
# use as the reference for the verdicts.
FL_NO_AUTO = 1  # no safe automatic foundation moves
FL_NO_LAZY = 2  # no restricted nodes after waste moves (draw 1, see _lazy_waste)
FL_NO_MACRO = 4  # stock taps are ordinary moves (implies FL_NO_LAZY and an exact split)
FL_EXACT = 8  # keys of exact positions: no column, cell, pile or stock-split symmetry
FL_NO_PRUNE = 16  # keep moves into any empty column, whole columns to empty ones, take-backs
FL_NO_DEADEND = 32  # expand positions that dead_end() proves lost
# Not a reduction: a run that tries no take-back from a foundation (the driver's side runs). It
# proves lost only the components in which no take-back was left out (the others are CLOSED).
FL_NO_TAKEBACK = 64
# Not a reduction either: a run that splits no built sequence between columns (side runs, like
# FL_NO_TAKEBACK: the nodes where such a move was left out are incomplete).
FL_NO_SPLIT = 128
FL_NO_PASS = 256  # no single-pass bound (``single_pass_lost``) in the Vegas dead-end test
FL_WHOLE_DEADEND = 512  # Réfléchi: dead_end tests every column, not only those a move built on
FL_NO_HOPS = 1024  # Réfléchi: no hop classes (a split is an ordinary move, see ``gen_node``)
FL_HOPS_DRAW3 = 2048  # Réfléchi draw 3: hop classes too (the search sets it late: _classes)

# ---- Zobrist table layout (two rows, one per key) ----------------------------------------------
SEQ = 105  # positions in the stock + waste sequence (104 cards) + 1
Z_COL = 0  # (card, height, face down): 52 * MAX_HEIGHT * 2
Z_FOUND = Z_COL + 52 * MAX_HEIGHT * 2  # Double: (suit, low pile, high pile); else (pile, height)
Z_CELL = Z_FOUND + 4 * 14 * 14  # card in a free cell
Z_SEQ = Z_CELL + 52  # (card, index in the stock + waste sequence)
Z_SPLIT = Z_SEQ + 52 * SEQ  # split point class: 0 … 104, SEQ = "any / the recurrent cycle"
Z_REST = Z_SPLIT + SEQ + 1  # restricted nodes: R_ONTO (+ column), R_FOUND + suit
Z_SIZE = Z_REST + 8

# Restricted nodes (see ``_lazy_waste``): what the next move must do.
R_NONE = 0
R_ONTO = 1  # go onto column rcol (a card just played there from the waste)
R_FOUND = 2  # put a card of suit rcol on a foundation (a card of it just went there from the waste)

MOVE_BITS = 11  # actions < 2048; a move is action | draws << MOVE_BITS | member << MEMBER_SHIFT
MOVE_MASK = (1 << MOVE_BITS) - 1
MEMBER_SHIFT = 20  # the hop-class member the move is played from (0: the node itself)
TAPS_MASK = (1 << (MEMBER_SHIFT - MOVE_BITS)) - 1
HOP_MAX = 16  # members that ``hop_class`` (the tests' reference) enumerates at most
HOP_SITES = 4  # classes with more hop sites (2 ** sites members) are searched position by position
HOP_ITERS = 3  # rounds of (go to the least member, automatic moves) after a move, at most
# Scratch ``tmp`` (int64): the stock walk's undo records and the dead-end tests' locations use
# the start; ``single_pass_lost`` uses W_HOME and beyond.
W_HOME = 128  # 52: copies of each card on the foundations
W_AVAIL = W_HOME + 52  # 52: copies ever face up in a column, on a foundation or placed
W_FREE = W_AVAIL + 52  # 52: copies placed on the board (not on a foundation)
W_PTR = W_FREE + 52  # 10: cards of each column not yet gone
W_REV = W_PTR + 10  # 10: the lowest face-up height of each column
W_WASTE = W_REV + 10  # 104: the waste, bottom first
TMP_SIZE = max(2 * SEQ + 8, W_WASTE + 104)
# records one move can push: hops to a member, stock taps, the move, automatic plays, the hops to
# the least member of the new class (and their automatic plays)
REC_MARGIN = 2 * SEQ + 128 + (HOP_ITERS + 1) * HOP_MAX
MOVE_MARGIN = 4096  # moves one node can push (generous: about 60 in practice)
SCRATCH = 2048  # legal_actions' buffer (more than any game's action count)

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_K2 = np.uint64(0x9E3779B97F4A7C15)
_S33 = np.uint64(33)


def zobrist_table(seed: int = 0x5EA7A1E) -> np.ndarray:
    """The random keys (fixed seed: a position's key is the same in every run)."""
    rng = np.random.default_rng(seed)
    return rng.integers(
        0, np.iinfo(np.uint64).max, size=(2, Z_SIZE), dtype=np.uint64, endpoint=True
    )


@nb.njit(cache=True, inline="always")
def _fmix(x):
    x ^= x >> _S33
    x *= _M1
    x ^= x >> _S33
    x *= _M2
    x ^= x >> _S33
    return x


@nb.njit(cache=True)
def position_key(
    s, cfg: np.ndarray, Z: np.ndarray, rkind: int, rcol: int, flags: int
) -> tuple[np.uint64, np.uint64]:
    """The canonical 128-bit key of row 0 (see the module docstring); never (0, *). A
    restricted node (``rkind`` > 0, about column ``rcol``) is keyed apart from the same position
    unrestricted, by the restriction and the content of the column it names. The split of the
    stock is reduced to its class only when stock taps come as macros (a node then plays every
    waste card of its class); ``FL_EXACT`` keys exact positions."""
    exact = (flags & FL_EXACT) != 0
    exact_split = exact or (flags & FL_NO_MACRO) != 0
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
        if exact:
            x1 ^= np.uint64(c + 1) * _M1
            x2 ^= np.uint64(c + 1) * _M2
        h1 += _fmix(x1)  # a sum: the columns are a multiset
        h2 += _fmix(x2 ^ _K2)
        if c == rcol and rkind == R_ONTO:
            h1 ^= _fmix(x1 ^ Z[0, Z_REST + rkind])
            h2 ^= _fmix(x2 ^ Z[1, Z_REST + rkind])
    if cfg[G_GAME] == DOUBLE:
        for su in range(4):
            a = np.int64(s.found[0, 2 * su])
            b = np.int64(s.found[0, 2 * su + 1])
            lo = a if exact else min(a, b)
            hi = b if exact else max(a, b)
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
            idx = Z_SEQ + card * SEQ + SEQ - 1 - k if exact else Z_CELL + card
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
    if rkind == R_FOUND:
        h1 ^= Z[0, Z_REST + 4 + rcol]
        h2 ^= Z[1, Z_REST + 4 + rcol]
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
        if cfg[G_VEGAS] or exact_split:
            split = wl
        elif cfg[G_DRAW] == 1 or wl % 3 == 0 or sl == 0:
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


# Visited set. Each entry: two keys and ``info``: DEAD (proven lost, for good: the moves of a
# node do not depend on the order they are tried in), or ``run << IDX_BITS | index`` for a node
# entered in run ``run`` (Tarjan's index there); an entry of an earlier run that was not proven
# lost is stale and counts as unseen.
DEAD = -1
IDX_BITS = 40
IDX_MASK = (1 << IDX_BITS) - 1
CLOSED = IDX_MASK  # "index" of a node of this run whose component closed without a proof
TT_NEW = 0
TT_DEAD = 1
TT_OPEN = 2


@nb.njit(cache=True)
def tt_enter(
    t1: np.ndarray, t2: np.ndarray, ti: np.ndarray, h1: np.uint64, h2: np.uint64, info: int
) -> tuple[int, int]:
    """Look the key up. Unseen (or stale): store ``info``, return (TT_NEW, 1 if a slot was
    taken, else 0). Proven lost: (TT_DEAD, 0). Entered in this run: (TT_OPEN, its index)."""
    m = t1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    run = info >> IDX_BITS
    while True:
        k = t1[i]
        if k == 0:
            t1[i] = h1
            t2[i] = h2
            ti[i] = info
            return TT_NEW, 1
        if k == h1 and t2[i] == h2:
            v = ti[i]
            if v == DEAD:
                return TT_DEAD, 0
            if (v >> IDX_BITS) == run:
                return TT_OPEN, v & IDX_MASK
            ti[i] = info
            return TT_NEW, 0
        i = (i + 1) & m


@nb.njit(cache=True)
def tt_kill(
    t1: np.ndarray, t2: np.ndarray, ti: np.ndarray, h1: np.uint64, h2: np.uint64, v: int = DEAD
) -> None:
    """Mark a stored key proven lost (or store ``v`` for it)."""
    m = t1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    while True:
        if t1[i] == h1 and t2[i] == h2:
            ti[i] = v
            return
        i = (i + 1) & m


@nb.njit(cache=True)
def tt_rehash(
    o1: np.ndarray,
    o2: np.ndarray,
    oi: np.ndarray,
    n1: np.ndarray,
    n2: np.ndarray,
    ni: np.ndarray,
    run: int,
) -> int:
    """Copy the live entries (proven lost, or of run ``run``) into the new table; return how
    many (stale entries are dropped)."""
    count = 0
    for i in range(o1.shape[0]):
        v = oi[i]
        if o1[i] != 0 and (v == DEAD or (v >> IDX_BITS) == run):
            tt_enter(n1, n2, ni, o1[i], o2[i], v)
            count += 1
    return count


# ---- safe automatic foundation moves ---------------------------------------------------------


@nb.njit(cache=True, inline="always")
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


@nb.njit(cache=True, inline="always")
def find_safe(s, cfg: np.ndarray) -> int:
    """A safe automatic foundation move of row 0 (action id), or -1."""
    for c in range(cfg[G_COLS]):
        h = s.tab_len[0, c]
        if h == 0:
            continue
        card = np.int64(s.tab[0, c, h - 1])
        if (
            foundation_for(s, 0, cfg, card) >= 0
            and _safe(s, cfg, card)
            and check_parts(s, 0, cfg, K_TF, c, 0, 1) == 0
        ):
            return cfg[L_TF] + c
    for k in range(cfg[G_CELLS]):
        card = np.int64(s.cells[0, k])
        if (
            card >= 0
            and foundation_for(s, 0, cfg, card) >= 0
            and _safe(s, cfg, card)
            and check_parts(s, 0, cfg, K_CF, k, 0, 1) == 0
        ):
            return cfg[L_CF] + k
    if cfg[L_STOCK] and cfg[G_DRAW] == 1 and s.waste_len[0] > 0:
        card = np.int64(s.waste[0, s.waste_len[0] - 1])
        if (
            foundation_for(s, 0, cfg, card) >= 0
            and _safe(s, cfg, card)
            and check_parts(s, 0, cfg, K_WF, 0, 0, 1) == 0
        ):
            return cfg[L_WF]
    return -1


@nb.njit(cache=True)
def autoplay(s, cfg: np.ndarray, recs: np.ndarray, top: int, flags: int) -> int:
    """Play safe foundation moves until none is left; their records go to ``recs[top ..]``.
    Returns the new top."""
    while not (flags & FL_NO_AUTO) and not _is_won(s, 0, cfg):
        a = find_safe(s, cfg)
        if a < 0:
            break
        recs[top] = _apply(s, 0, cfg, a)
        top += 1
    return top


# ---- dead ends -------------------------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _held(loc: np.ndarray, fh: np.ndarray, c: int, i: int, card: int, bound: bool) -> bool:
    """Does ``card`` stay where it is until ``c[0 .. i]`` changes: in ``c[0 .. i]``, or under a
    frozen card of another column (``bound``: under any card of another column)?"""
    lc = loc[card]
    if lc < 0:
        return False
    d = lc >> 6
    if d == c:
        return (lc & 63) <= i
    return bound or (lc & 63) + 1 < fh[d]


@nb.njit(cache=True)
def _unreachable(
    cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, i: int, t: int, bound: bool
) -> bool:
    """The strong test's view of a card ``t`` that a card of ``c[0 .. i]`` fits on: can ``t``
    never be the top card of a column other than ``c`` before ``c[0 .. i]`` changes? On a
    column: if it is held (``_held``). In the stock, the waste or on a foundation: if it is not a
    King and every card it fits on is held (it can come to a column only onto one of those; onto
    ``c[i]`` itself it is no use to ``c[0 .. i]``, and it leaves ``c`` only onto a card it fits
    on)."""
    if loc[t] >= 0:
        return _held(loc, fh, c, i, t, bound)
    if rank_of(t) == KING:
        return False
    for p_su in range(4):
        p = p_su * 13 + rank_of(t) + 1
        if not fits_on(cfg, t, p):
            continue
        if not _held(loc, fh, c, i, p, bound):
            return False
    return True


@nb.njit(cache=True)
def _stays(
    s, cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, lo: int, i: int, strong: bool
) -> bool:
    """Can the cards ``c[0 .. i]`` never change, given that the bottom ``fh[d]`` cards of every
    column ``d`` never change (see ``dead_end``)? ``c[lo .. i]`` is the ordered group ending at
    height ``i``."""
    for q in range(lo, i + 1):
        b = np.int64(s.tab[0, c, q])
        rb = rank_of(b)
        if rb == KING:  # a King may go to an empty column
            return False
        for t_su in range(4):  # the cards it could go onto must stay covered
            t = t_su * 13 + rb + 1
            if not fits_on(cfg, b, t):
                continue
            if strong:
                if not _unreachable(cfg, loc, fh, c, i, t, False):
                    return False
                continue
            lt = loc[t]
            if lt < 0:  # stock, waste or foundation: may come within reach
                return False
            d = lt >> 6
            if d == c:
                if (lt & 63) > i:  # above: it leaves the column first, and may take the card
                    return False
            elif (lt & 63) + 1 >= fh[d]:
                return False
        if q == i:  # the top card: its foundation must lack a lower card of its suit for good
            su = suit_of(b)
            held = False
            for rz in range(rb):
                lz = loc[su * 13 + rz]
                if lz >= 0:
                    d = lz >> 6
                    if (d == c and (lz & 63) < i) or (d != c and (lz & 63) < fh[d]):
                        held = True
                        break
            if not held:
                return False
    return True


@nb.njit(cache=True)
def _quick_height(s, cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, strong: bool) -> int:
    """``dead_end``'s quick bound for column ``c``: the highest prefix whose group could pass at
    all (no King, nothing it fits on in the stock, the waste, a foundation or above it, a lower
    card of the top card's suit somewhere under it or in another column); 0 if none. An upper
    bound on the height of ``c`` in any set of frozen prefixes (it reads no other column's)."""
    n = np.int64(s.tab_len[0, c])
    h = 0
    run_ok = False
    for i in range(n):
        b = np.int64(s.tab[0, c, i])
        pinned = rank_of(b) != KING
        if pinned:
            for t_su in range(4):
                t = t_su * 13 + rank_of(b) + 1
                if fits_on(cfg, b, t):
                    if strong:
                        if not _unreachable(cfg, loc, fh, c, i, t, True):
                            pinned = False
                            break
                        continue
                    lt = loc[t]
                    if lt < 0 or (lt >> 6 == c and (lt & 63) > i):
                        pinned = False
                        break
        if i == 0 or not fits_on(cfg, b, np.int64(s.tab[0, c, i - 1])):
            run_ok = pinned
        else:
            run_ok = run_ok and pinned
        if run_ok:
            su = suit_of(b)
            for rz in range(rank_of(b)):
                lz = loc[su * 13 + rz]
                if lz >= 0 and not (lz >> 6 == c and (lz & 63) > i):
                    h = i + 1
                    break
    return h


@nb.njit(cache=True)
def dead_end(
    s, cfg: np.ndarray, loc: np.ndarray, strong: bool = False, flags: int = 0, gained: int = -1
) -> bool:
    """Solitaire Réfléchi: is row 0 provably lost because some column bottoms can never be taken
    apart? ``loc``: scratch of ``TMP_SIZE`` entries. (Double Solitaire with Vegas scoring:
    ``dead_end_double``, then ``single_pass_lost`` unless ``flags`` has ``FL_NO_PASS``.)

    Say the bottom ``fh[c]`` cards of each column ``c`` are *frozen*, and test that assumption
    prefix by prefix. The cards ``c[0 .. i]`` stay where they are until a move takes some
    ``c[q]`` off with everything on it, and ``q`` lies in the ordered group ``c[L .. i]`` that
    ends at height ``i`` (a group starting lower is not ordered). That move is impossible if, for
    every such ``q``: ``c[q]`` is not a King (an empty column would take it; Réfléchi has no
    free cells); every card it fits on (``fits_on``) is in ``c[0 .. i]`` (it stays there) or lies
    under a frozen card of another column (never uncovered; a card above ``c[i]``, in the stock,
    the waste or on a foundation may come within reach); and, for the top ``q = i``, a lower card
    of its own suit lies under it in ``c`` or is frozen elsewhere (its foundation pile cannot
    reach it). Each column keeps its highest prefix that passes (the shorter ones cannot change
    either), or none, and the test is repeated until nothing changes. The prefixes left frozen
    justify each other: the earliest change to any of them would need an earlier change to one
    of them. So a frozen card never moves, never reaches its foundation, and no play wins. This
    concludes something about the position only: no move is left out of a position that can
    still be won. (Checked against every position along the 1777 solutions of the solvability
    study, and by the reference search on random positions, see the tests.)

    ``strong``: a card ``t`` that ``c[q]`` fits on and that lies in the stock, the waste or on a
    foundation does not count as within reach when it is not a King and every card ``t`` fits on
    is held as above (``_unreachable``): ``t`` comes to a column only onto one of those (or onto
    ``c[i]`` itself, above ``c[q]``, and it leaves ``c`` again only onto one of those). Costlier;
    the search uses it at the root, where it decides some deals the plain test leaves open.

    ``gained`` (Réfléchi, plain test only): a bit mask of the columns that gained cards since a
    position that the plain test found no dead end in, all the other columns being what they were
    or shorter (cards gone to other columns or home), the other cards anywhere. A set of frozen
    prefixes in none of the ``gained`` columns would have been one there too: where a card is
    counts only as in a frozen prefix, or above or under one, and those did not change. So only
    a set with a gained column can be new: if no gained column passes the quick bound, the answer
    is no, without bounding the other columns. (The search passes the columns its move built on;
    the tests compare this with the whole test along random games.)"""
    if cfg[G_GAME] == DOUBLE:
        if dead_end_double(s, cfg, loc):
            return True
        return not (flags & FL_NO_PASS) and single_pass_lost(s, cfg, loc)
    if cfg[G_GAME] != REFLECHI:
        return False
    cols = cfg[G_COLS]
    fh = loc[52 : 52 + cols]
    for k in range(52):
        loc[k] = -1
    for c in range(cols):
        n = np.int64(s.tab_len[0, c])
        for i in range(n):
            loc[np.int64(s.tab[0, c, i])] = c * 64 + i
    # First the quick bound of each column (``_quick_height``). Most positions stop here.
    if strong:
        gained = -1
    fh[:] = 0
    for c in range(cols):
        if (gained >> c) & 1:
            fh[c] = _quick_height(s, cfg, loc, fh, c, strong)
    if fh.max() == 0:
        return False
    for c in range(cols):
        if not (gained >> c) & 1:
            fh[c] = _quick_height(s, cfg, loc, fh, c, strong)
    changed = True
    while changed:
        changed = False
        for c in range(cols):
            h = fh[c]
            for i in range(h - 1, -2, -1):  # the highest prefix that stays, if any
                if i < 0:
                    fh[c] = 0
                    break
                lo = i
                while lo > 0 and fits_on(
                    cfg, np.int64(s.tab[0, c, lo]), np.int64(s.tab[0, c, lo - 1])
                ):
                    lo -= 1
                if _stays(s, cfg, loc, fh, c, lo, i, strong):
                    fh[c] = i + 1
                    break
            if fh[c] != h:
                changed = True
    return fh.max() > 0


# ---- dead ends in Double Solitaire with Vegas scoring --------------------------------------------
#
# The same argument as ``dead_end``, for two copies of every card, face-down cards and the waste of
# a single pass. A *place* is a column or, with Vegas scoring, the waste (pseudo-column ``cols``):
# the waste is only ever taken from the top and is never built on, so its bottom cards stay until
# every card above them has left. Locations: ``place << 7 | height``.


@nb.njit(cache=True, inline="always")
def _ds_card(s, cols: int, d: int, q: int) -> int:
    if d == cols:
        return np.int64(s.waste[0, q])
    return np.int64(s.tab[0, d, q])


@nb.njit(cache=True, inline="always")
def _ds_kept(at: int, fh: np.ndarray, cols: int, c: int, i: int, covered: bool) -> bool:
    """Does the copy at location ``at`` stay where it is until ``c[0 .. i]`` changes? In
    ``c[0 .. i]`` (strictly under ``c[i]`` unless ``covered``), in the frozen part of the waste,
    or in the frozen part of another column (``covered``: under a frozen card, so that it never
    becomes a column top)."""
    if at < 0:
        return False
    d = at >> 7
    p = at & 127
    if d == c:
        return p <= i if covered else p < i
    if d == cols:
        return p < fh[d]
    return p + 1 < fh[d] if covered else p < fh[d]


@nb.njit(cache=True, inline="always")
def _ds_held(
    loc: np.ndarray, fh: np.ndarray, cols: int, c: int, i: int, card: int, covered: bool
) -> bool:
    """Both copies of ``card`` stay (``_ds_kept``); a copy in the stock or on a foundation never
    counts as held."""
    return _ds_kept(loc[card], fh, cols, c, i, covered) and _ds_kept(
        loc[52 + card], fh, cols, c, i, covered
    )


@nb.njit(cache=True)
def _ds_stays(s, cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, i: int) -> bool:
    """Can the cards ``c[0 .. i]`` of place ``c`` never change, given the frozen heights ``fh``?
    Only the cards of the group that ends at ``c[i]`` can leave first: ``c[i]`` alone in the waste
    or when face down, else the face-up ordered group under it. None of them may have a card to
    go onto (a King: an empty column), and ``c[i]`` none of its foundations."""
    cols = cfg[G_COLS]
    lo = i
    if c < cols and i >= s.tab_down[0, c]:
        down = np.int64(s.tab_down[0, c])
        while lo > down and fits_on(cfg, np.int64(s.tab[0, c, lo]), np.int64(s.tab[0, c, lo - 1])):
            lo -= 1
    for q in range(lo, i + 1):
        b = _ds_card(s, cols, c, q)
        rb = rank_of(b)
        if rb == KING:
            return False
        for t_su in range(4):
            t = t_su * 13 + rb + 1
            if fits_on(cfg, b, t) and not _ds_held(loc, fh, cols, c, i, t, True):
                return False
    b = _ds_card(s, cols, c, i)
    su = suit_of(b)
    held = False
    for rz in range(rank_of(b)):  # a lower card of its suit that never goes up: neither copy
        if _ds_held(loc, fh, cols, c, i, su * 13 + rz, False):
            held = True
            break
    return held


@nb.njit(cache=True)
def dead_end_double(s, cfg: np.ndarray, loc: np.ndarray) -> bool:
    """Double Solitaire with Vegas scoring: is row 0 provably lost because some cards can never
    move? ``loc``: scratch (at least 104 + columns + 1 entries).

    ``dead_end``'s argument, place by place (the columns, and the waste, which the single pass
    makes a pile that is only ever taken from the top and never built on): say the bottom
    ``fh[d]`` cards of every place are frozen, and keep the highest prefix of each place whose
    group (``_ds_stays``) cannot leave given the others; repeat until nothing changes, starting
    from every card frozen (so the result is the largest set of frozen prefixes that justify each
    other). A card counts as a place to go only if it can become a column top: both copies of it
    must lie under a frozen card of another column, in the frozen waste, or in ``c[0 .. i]``; for
    the foundation, both copies of a lower card of the suit must be frozen (no pile ever reaches
    it). Any frozen card then never reaches its foundation: no play wins."""
    if cfg[G_GAME] != DOUBLE or not cfg[G_VEGAS]:
        return False
    cols = cfg[G_COLS]
    fh = loc[104 : 104 + cols + 1]
    for k in range(104):
        loc[k] = -1
    any_cand = False
    for d in range(cols + 1):
        n = np.int64(s.waste_len[0]) if d == cols else np.int64(s.tab_len[0, d])
        fh[d] = n
        for q in range(n):
            card = _ds_card(s, cols, d, q)
            slot = card if loc[card] < 0 else 52 + card
            loc[slot] = (d << 7) | q
    # Quick bound: the top card of a frozen prefix is no King and has both copies of each card
    # it fits on on the board or in the waste. Most positions have no such card.
    for d in range(cols + 1):
        for q in range(np.int64(fh[d])):
            b = _ds_card(s, cols, d, q)
            rb = rank_of(b)
            if rb == KING:
                continue
            ok = True
            for t_su in range(4):
                t = t_su * 13 + rb + 1
                if fits_on(cfg, b, t) and (loc[t] < 0 or loc[52 + t] < 0):
                    ok = False
                    break
            if ok:
                any_cand = True
                break
        if any_cand:
            break
    if not any_cand:
        return False
    changed = True
    while changed:
        changed = False
        for d in range(cols + 1):
            h = np.int64(fh[d])
            nh = 0
            for i in range(h - 1, -1, -1):
                if _ds_stays(s, cfg, loc, fh, d, i):
                    nh = i + 1
                    break
            if nh != h:
                fh[d] = nh
                changed = True
    return fh.max() > 0


# ---- the single pass: what the rest of the stock allows (Double Solitaire, Vegas) --------------
#
# A relaxation of the game that can only do more than the real one, played forward to the end of
# the stock; fewer than all cards home at its end proves the position lost. Each card is in one
# of: a column (in its original order, gone from the top only), the waste (a pile taken from the
# top only), the stock (drawn in order, ``draw`` at a time), *placed* (anywhere on the board,
# never in the way) or home. Relaxed: a card leaves its column or the waste when it can go home,
# or when some copy of a card it fits on has ever been face up, placed or home (capacity, cover
# and the card's place are ignored; a King needs only that some column has ever been empty); a
# placed card goes home whenever its foundation takes it. Every such step only adds possibilities,
# so playing them all before each draw gives the most any play can reach: if even that leaves a
# card off the foundations when the stock is spent, no play wins. The frozen-prefix test above
# looks at the cards in view; this one at the order of the cards still to come.


@nb.njit(cache=True, inline="always")
def _home_takes(home: np.ndarray, card: int) -> bool:
    """Does some foundation pile take ``card``? (Two piles per suit, each built up from the Ace:
    as many piles end just under ``card`` as there are copies of the card below it home beyond
    the copies of ``card`` itself.)"""
    r = rank_of(card)
    if r == 0:
        return home[card] < 2
    return home[card - 1] > home[card]


@nb.njit(cache=True, inline="always")
def _some_place(cfg: np.ndarray, avail: np.ndarray, card: int, empty_ever: bool) -> bool:
    r = rank_of(card)
    if r == KING:
        return empty_ever
    for su in range(4):
        t = su * 13 + r + 1
        if avail[t] > 0 and fits_on(cfg, card, t):
            return True
    return False


@nb.njit(cache=True, inline="always")
def _leave(
    cfg: np.ndarray,
    home: np.ndarray,
    avail: np.ndarray,
    free: np.ndarray,
    card: int,
    empty_ever: bool,
) -> int:
    """A card on top of its column or of the waste, in the relaxed game: 1 if it goes home, 0 if
    it is placed on the board, -1 if it stays."""
    if _home_takes(home, card):
        home[card] += 1
        return 1
    if _some_place(cfg, avail, card, empty_ever):
        free[card] += 1
        return 0
    return -1


@nb.njit(cache=True)
def single_pass_lost(s, cfg: np.ndarray, w: np.ndarray) -> bool:
    """Double Solitaire with Vegas scoring: does row 0 leave a card off the foundations even in
    the relaxed game above, however the rest of the stock is played? ``w``: scratch of
    ``TMP_SIZE`` entries (uses ``W_HOME`` onwards)."""
    if cfg[G_GAME] != DOUBLE or not cfg[G_VEGAS]:
        return False
    cols = cfg[G_COLS]
    home = w[W_HOME : W_HOME + 52]
    avail = w[W_AVAIL : W_AVAIL + 52]
    free = w[W_FREE : W_FREE + 52]
    ptr = w[W_PTR : W_PTR + cols]
    rev = w[W_REV : W_REV + cols]
    wst = w[W_WASTE : W_WASTE + 104]
    for k in range(52):
        home[k] = 0
        avail[k] = 0
        free[k] = 0
    total = 0
    for p in range(cfg[G_PILES]):
        su = p // 2
        for r in range(np.int64(s.found[0, p])):
            home[su * 13 + r] += 1
            avail[su * 13 + r] += 1
            total += 1
    empty_ever = False
    for c in range(cols):
        n = np.int64(s.tab_len[0, c])
        ptr[c] = n
        rev[c] = np.int64(s.tab_down[0, c])
        if n == 0:
            empty_ever = True
        for q in range(rev[c], n):
            avail[np.int64(s.tab[0, c, q])] += 1
    wl = np.int64(s.waste_len[0])
    for q in range(wl):
        wst[q] = s.waste[0, q]
    si = np.int64(s.stock_len[0])
    draw = cfg[G_DRAW]
    while True:
        changed = True
        while changed:
            changed = False
            for card in range(52):
                while free[card] > 0 and _home_takes(home, card):
                    free[card] -= 1
                    home[card] += 1
                    total += 1
                    changed = True
            for c in range(cols):
                while ptr[c] > 0:
                    q = ptr[c] - 1
                    card = np.int64(s.tab[0, c, q])
                    if q < rev[c]:  # turned over
                        rev[c] = q
                        avail[card] += 1
                        changed = True
                    went = _leave(cfg, home, avail, free, card, empty_ever)
                    if went < 0:
                        break
                    total += went
                    ptr[c] = q
                    changed = True
                if ptr[c] == 0 and not empty_ever:
                    empty_ever = True
                    changed = True
            while wl > 0:
                card = wst[wl - 1]
                went = _leave(cfg, home, avail, free, card, empty_ever)
                if went < 0:
                    break
                total += went
                avail[card] += 1
                wl -= 1
                changed = True
        if total == 104:
            return False
        if si == 0:
            return True
        for _ in range(draw):
            if si > 0:
                si -= 1
                wst[wl] = s.stock[0, si]
                wl += 1


# ---- move generation and ordering --------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _score(s, cfg: np.ndarray, kind: int, src: int, dst: int, n: int, j: int) -> int:
    """Move ordering: higher first. Foundations, then moves that uncover a new card or free a
    cell, then the rest; take-backs last."""
    game = cfg[G_GAME]
    if kind == K_TF or kind == K_CF:
        return 1000
    if kind == K_DRAW or kind == K_RECYCLE:
        return 200
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
            sc += 400 + 10 * rest  # turns a face-down card over (deep columns first)
        elif fits_on(cfg, bottom, below) and rest > s.tab_down[0, src]:
            sc -= 250  # splits a built sequence
        else:
            sc += 250 + 10 * rest  # uncovers a card that could not move before
        if foundation_for(s, 0, cfg, below) >= 0:
            sc += 300
    if s.tab_len[0, dst] == 0:
        sc += 50
    return sc


@nb.njit(cache=True)
def stock_walk(
    s, cfg: np.ndarray, tmp: np.ndarray, seen: np.ndarray, wkc: np.ndarray, wkj: np.ndarray, w: int
) -> int:
    """Tap the stock through one whole cycle with the engine (then undo every tap), writing each
    waste top met and the taps it took to ``wkc/wkj[w ..]``; return the end. A node's walk
    depends only on the stock and waste, so children that did not touch them share it."""
    seen[:] = 0
    n_taps = 0
    while True:
        wl = s.waste_len[0]
        seen[wl] = 1
        if wl > 0:
            wkc[w] = s.waste[0, wl - 1]
            wkj[w] = n_taps
            w += 1
        if check_parts(s, 0, cfg, K_DRAW, 0, 0, 1) == 0:
            tap = cfg[L_DRAW]
        elif check_parts(s, 0, cfg, K_RECYCLE, 0, 0, 1) == 0:
            tap = cfg[L_DRAW] + 1
        else:
            break
        tmp[n_taps] = _apply(s, 0, cfg, tap)
        n_taps += 1
        if seen[s.waste_len[0]]:
            break
    _undo_to(s, cfg, tmp, n_taps, 0)
    return w


@nb.njit(cache=True)
def gen_moves(
    s,
    cfg: np.ndarray,
    acts: np.ndarray,
    out: np.ndarray,
    start: int,
    sc: np.ndarray,
    rkind: int,
    rcol: int,
    ctl: np.ndarray,
    wkc: np.ndarray,
    wkj: np.ndarray,
    wk_s: int,
    wk_e: int,
    no_hops: bool = False,
    only: int = -1,
) -> int:
    """Write row 0's moves, best first, to ``out[start ..]``; return how many. ``rkind`` > 0:
    only the moves that a restricted node allows (``R_*``). ``wkc/wkj[wk_s .. wk_e-1]``: the
    node's stock walk. ``no_hops``: leave out the splits (the moves inside a hop class, see
    ``hop_class``); ``only`` (a bit mask of columns, -1: all): leave out the moves that touch
    none of those columns (a waste card going home touches none and is kept)."""
    game = cfg[G_GAME]
    cols = cfg[G_COLS]
    first_empty = -1
    for c in range(cols):
        if s.tab_len[0, c] == 0:
            first_empty = c
            break
    flags = ctl[C_FLAGS]
    macro = cfg[L_STOCK] != 0 and not (flags & FL_NO_MACRO)
    prune = not (flags & FL_NO_PRUNE)
    n_legal = legal_actions(s, 0, cfg, acts)
    k = 0
    for i in range(n_legal):
        a = acts[i]
        kind, src, dst, n = decode(cfg, a)
        if macro and (kind == K_DRAW or kind == K_RECYCLE or kind == K_WT or kind == K_WF):
            continue  # the stock macros below play these
        if rkind != R_NONE and not _allowed(s, rkind, rcol, kind, src, dst, -1):
            continue
        if (flags & FL_NO_TAKEBACK) and kind == K_FT:
            ctl[C_SKIPPED] = 1
            continue
        if kind == K_TT and (no_hops or (flags & FL_NO_SPLIT)) and _splits(s, cfg, src, n):
            if not no_hops:
                ctl[C_SKIPPED] = 1
            continue
        if only != -1 and not (_columns_of(kind, src, dst) & only):
            continue
        if not prune:
            pass
        elif game == SEAHAVEN and (kind == K_FT or kind == K_FC):
            if not (flags & FL_NO_AUTO):
                continue  # automatic play would put the card straight back
        elif (kind == K_TT or kind == K_CT or kind == K_FT) and s.tab_len[0, dst] == 0:
            if dst != first_empty:
                continue
            if kind == K_TT and n == s.tab_len[0, src]:
                continue
        out[start + k] = a
        sc[k] = _score(s, cfg, kind, src, dst, n, 0)
        k += 1
    if macro:
        # The waste cards reachable by tapping (the node's walk, see stock_walk); each is decided
        # as rules.check_parts decides a waste move, on the card that would be on top.
        wf = cfg[L_WF]
        wt = cfg[L_WT]
        for w in range(wk_s, wk_e):
            card = np.int64(wkc[w])
            taps = np.int64(wkj[w])
            if (rkind == R_NONE or _allowed(s, rkind, rcol, K_WF, 0, 0, card)) and foundation_for(
                s, 0, cfg, card
            ) >= 0:
                out[start + k] = wf | (taps << MOVE_BITS)
                sc[k] = _score(s, cfg, K_WF, 0, 0, 1, taps)
                k += 1
            for d in range(cols):
                if only != -1 and not (only >> d) & 1:
                    continue
                if prune and s.tab_len[0, d] == 0 and d != first_empty:
                    continue
                if rkind != R_NONE and not _allowed(s, rkind, rcol, K_WT, 0, d, card):
                    continue
                if check_onto_column(s, 0, cfg, card, d) == 0:
                    out[start + k] = (wt + d) | (taps << MOVE_BITS)
                    sc[k] = _score(s, cfg, K_WT, 0, d, 1, taps)
                    k += 1
    jit = ctl[C_JITTER]
    if jit > 0:
        x = ctl[C_RNG]
        for i in range(k):
            x ^= (x << 13) & 0x7FFFFFFFFFFFFFFF
            x ^= x >> 7
            x ^= (x << 17) & 0x7FFFFFFFFFFFFFFF
            sc[i] += x % jit
        ctl[C_RNG] = x
    _sort_moves(out, start, sc, k)
    return k


@nb.njit(cache=True, inline="always")
def _sort_moves(out: np.ndarray, start: int, sc: np.ndarray, k: int) -> None:
    """Sort ``out[start .. start+k-1]`` by their scores ``sc[0 .. k-1]``, best first, stable
    (insertion sort: a node has a few dozen moves)."""
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


@nb.njit(cache=True, inline="always")
def _splits(s, cfg: np.ndarray, src: int, n: int) -> bool:
    """Would moving the top ``n`` cards of column ``src`` split a built sequence (take a card off
    one that it fits on, face up)?"""
    rest = np.int64(s.tab_len[0, src]) - n
    return rest > s.tab_down[0, src] and fits_on(
        cfg, np.int64(s.tab[0, src, rest]), np.int64(s.tab[0, src, rest - 1])
    )


@nb.njit(cache=True, inline="always")
def _columns_of(kind: int, src: int, dst: int) -> int:
    """The columns a move takes from or puts on, as a bit mask."""
    if kind == K_TT:
        return (1 << src) | (1 << dst)
    if kind == K_TF or kind == K_TC:
        return 1 << src
    if kind == K_WT or kind == K_FT or kind == K_CT:
        return 1 << dst
    return 0


# ---- hop classes (Solitaire Réfléchi) -----------------------------------------------------------


@nb.njit(cache=True)
def hops(s, cfg: np.ndarray, out: np.ndarray) -> int:
    """Row 0's *hops*, written to ``out``; returns how many. A hop is a legal split: the ordered
    group on a card ``p`` (face up, the group's first card fits on it) moves to another card it
    fits on, which lies on top of another column. A hop can always be taken back at once (the
    group fits on ``p``, now on top, and is as ordered as before), so the positions linked by
    hops win or lose together. Candidates come from ``fits_on``; ``check_move`` decides."""
    cols = cfg[G_COLS]
    k = 0
    for src in range(cols):
        h = np.int64(s.tab_len[0, src])
        for n in range(1, h):
            rest = h - n
            if n > 1 and not fits_on(
                cfg, np.int64(s.tab[0, src, rest + 1]), np.int64(s.tab[0, src, rest])
            ):
                break  # the top n cards are no longer one ordered group
            if not _splits(s, cfg, src, n):
                break  # nor are the top n + 1
            base = np.int64(s.tab[0, src, rest])
            for dst in range(cols):
                hd = np.int64(s.tab_len[0, dst])
                if dst == src or hd == 0 or not fits_on(cfg, base, np.int64(s.tab[0, dst, hd - 1])):
                    continue
                a = enc_tt(cfg, src, dst, n)
                if _check_move(s, 0, cfg, a) == 0:
                    out[k] = a
                    k += 1
    return k


@nb.njit(cache=True)
def _to_member(
    s,
    cfg: np.ndarray,
    hpar: np.ndarray,
    hact: np.ndarray,
    i: int,
    path: np.ndarray,
    recs: np.ndarray,
    top: int,
) -> int:
    """Play the hops from member 0 of the class to member ``i``; records to ``recs[top ..]``.
    Returns the new top."""
    d = 0
    q = i
    while q > 0:
        path[d] = hact[q]
        d += 1
        q = hpar[q]
    for t in range(d - 1, -1, -1):
        recs[top] = _apply(s, 0, cfg, path[t])
        top += 1
    return top


@nb.njit(cache=True)
def hop_class(
    s,
    cfg: np.ndarray,
    Z: np.ndarray,
    flags: int,
    hk1: np.ndarray,
    hk2: np.ndarray,
    hpar: np.ndarray,
    hact: np.ndarray,
    hbuf: np.ndarray,
    path: np.ndarray,
    hrec: np.ndarray,
) -> int:
    """Row 0's *hop class*: the positions reachable from it by hops alone (``hops``), found
    breadth first, member 0 being row 0; the reference that the tests check the search's view of
    a class against (a cube of ``2 ** sites`` members, ``_canonical``, ``gen_node``), which does
    not call it. Member ``i``: its keys ``hk1/hk2[i]`` and the member it was reached from
    ``hpar[i]`` by the hop ``hact[i]``. Returns the number of members, or ``HOP_MAX + 1`` if
    there are more (the search takes a class of more than ``HOP_SITES`` sites position by
    position: each member its own node, hops ordinary moves). Row 0 is left as it was."""
    h1, h2 = position_key(s, cfg, Z, R_NONE, -1, flags)
    hk1[0] = h1
    hk2[0] = h2
    hpar[0] = -1
    hact[0] = -1
    size = 1
    i = 0
    while i < size:
        top = _to_member(s, cfg, hpar, hact, i, path, hrec, 0)
        nh = hops(s, cfg, hbuf)
        for q in range(nh):
            r = _apply(s, 0, cfg, hbuf[q])
            g1, g2 = position_key(s, cfg, Z, R_NONE, -1, flags)
            _undo(s, 0, cfg, r)
            new = True
            for t in range(size):
                if hk1[t] == g1 and hk2[t] == g2:
                    new = False
                    break
            if not new:
                continue
            if size > HOP_MAX - 1:
                _undo_to(s, cfg, hrec, top, 0)
                return HOP_MAX + 1
            hk1[size] = g1
            hk2[size] = g2
            hpar[size] = i
            hact[size] = hbuf[q]
            size += 1
        _undo_to(s, cfg, hrec, top, 0)
        i += 1
    return size


@nb.njit(cache=True)
def _sites(
    s,
    cfg: np.ndarray,
    hbuf: np.ndarray,
    base: np.ndarray,
    parent: np.ndarray,
    target: np.ndarray,
) -> int:
    """Row 0's hop *sites*, one per hop (``hops``, kept in ``hbuf``): the group's first card
    ``base``, the card it lies on ``parent``, and the card on top of another column it can hop to
    ``target``. Returns how many."""
    nh = hops(s, cfg, hbuf)
    for q in range(nh):
        _kind, src, dst, n = decode(cfg, np.int64(hbuf[q]))
        rest = np.int64(s.tab_len[0, src]) - n
        base[q] = s.tab[0, src, rest]
        parent[q] = s.tab[0, src, rest - 1]
        target[q] = s.tab[0, dst, s.tab_len[0, dst] - 1]
    return nh


@nb.njit(cache=True)
def _hop(s, cfg: np.ndarray, base: int, target: int) -> int:
    """The legal move of the group that starts at card ``base`` onto card ``target``, on top of
    a column; -1 if there is none."""
    cols = cfg[G_COLS]
    src = -1
    at = -1
    dst = -1
    for c in range(cols):
        h = np.int64(s.tab_len[0, c])
        if h > 0 and s.tab[0, c, h - 1] == target:
            dst = c
        for i in range(h):
            if s.tab[0, c, i] == base:
                src = c
                at = i
    if src < 0 or dst < 0 or src == dst:
        return -1
    a = enc_tt(cfg, src, dst, np.int64(s.tab_len[0, src]) - at)
    return a if _check_move(s, 0, cfg, a) == 0 else -1


@nb.njit(cache=True)
def _to_sites(
    s,
    cfg: np.ndarray,
    sub: int,
    base: np.ndarray,
    target: np.ndarray,
    recs: np.ndarray,
    top: int,
) -> int:
    """Play the hops of the sites in the bit set ``sub``, in order; records to ``recs[top ..]``.
    Returns the new top, or -1 - (the records played) if one of them is not legal (then the
    sites were not independent: a solver bug, see ``hop_class``)."""
    q = 0
    while sub >> q:
        if (sub >> q) & 1:
            a = _hop(s, cfg, np.int64(base[q]), np.int64(target[q]))
            if a < 0:
                return -1 - top
            recs[top] = _apply(s, 0, cfg, a)
            top += 1
        q += 1
    return top


@nb.njit(cache=True)
def _canonical(s, cfg: np.ndarray, recs: np.ndarray, top: int, flags: int, hs: np.ndarray) -> int:
    """Bring row 0 to its hop class's *least* member: every site's group on the lower-numbered
    of the two cards it fits on. (The sites are independent, ``hop_class``: the class holds
    every choice of twin for every site, and this one choice is the same from any member.) Then
    the safe automatic moves, and again if they played (``HOP_ITERS`` rounds at most; where the
    rounds run out the node is simply keyed as the position it is). Records to ``recs[top ..]``;
    returns the new top, or -1 - top when a hop was not legal (a bug). A class with more than
    ``HOP_SITES`` sites is left as it is: its members are nodes of their own."""
    hbuf, base, parent, target = _hs_views(hs)
    for _ in range(HOP_ITERS):
        k = _sites(s, cfg, hbuf, base, parent, target)
        if k == 0 or k > HOP_SITES:
            return top
        sub = 0
        for q in range(k):
            if target[q] < parent[q]:
                sub |= 1 << q
        if sub == 0:
            return top
        top = _to_sites(s, cfg, sub, base, target, recs, top)
        if top < 0:
            return top
        after = autoplay(s, cfg, recs, top, flags)
        if after == top:
            return top
        top = after
    return top


@nb.njit(cache=True, inline="always")
def _hs_views(hs: np.ndarray):
    """The sites' arrays in a hop scratch (``_sites``): hops, bases, parents, targets."""
    return (
        hs[0:SCRATCH],
        hs[SCRATCH : SCRATCH + 64],
        hs[SCRATCH + 64 : SCRATCH + 128],
        hs[SCRATCH + 128 : SCRATCH + 192],
    )


HS_RECS = SCRATCH + 192  # a hop scratch: _hs_views, then the records of a member's hops
HS_SIZE = HS_RECS + 64


@nb.njit(cache=True)
def gen_node(
    s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e, classes, hs
) -> int:
    """A node's moves (``gen_moves``); with ``classes`` on and no restriction, those of its
    whole hop class. A member is reached from the node by hopping the sites in a set ``H``
    (``_sites``; a site: a group ``g`` on a card ``p``, and ``p``'s twin ``p'`` on top of
    another column); ``H`` marks its moves (``MEMBER_SHIFT``). The node itself contributes all
    its moves but hops. Every other member's move has a counterpart from a member with one hop
    fewer that reaches the same class, unless, for each site ``q`` in ``H``, it puts something
    on ``p_q`` (which the hop uncovered) or sends ``p_q`` home. For a site ``q`` that a move does
    not so use, the counterpart in ``H - {q}`` (where ``g_q`` lies on ``p_q``, not ``p_q'``) is:

    * the same move, if it moves neither ``g_q`` (or a part of it) nor ``p_q``; a move onto the
      last card of ``g_q`` included. The children differ by the hop of ``g_q`` (with whatever
      came on it);
    * ``g_q``, or an upper part of it, moved or sent home from ``p_q`` instead of ``p_q'``
      (what stays, a lower part of ``g_q``, then lies on ``p_q``: again one hop apart);
    * a group ending at ``p_q`` moved with ``g_q`` on it, and a group running from below
      ``p_q'`` through ``g_q`` moved without ``g_q``. Then ``g_q`` hops to the other twin.

    One move puts something on one card or sends one card home, so no move qualifies for two
    sites: only the members of one hop ``{q}`` add moves, those onto ``p_q`` (on top of the
    column the hop took ``g_q`` from) and ``p_q`` home. A waste move is followed by a
    restricted node (``_lazy_waste``), a position rather than a class, which the argument must
    look into:

    * after a card ``W`` goes to a column, only moves onto ``W`` are tried, and the children of
      a move and of its counterpart offer the same ones, by the same three cases;
    * after a card goes home from the waste, only foundation moves of its suit are tried, and
      each ``p_q`` in ``H`` may be the next of that suit, with no counterpart. So a member ``H``
      contributes the foundation moves from the waste of a suit when every card its hops
      uncover is of that suit. They need not be generated there: whether a waste card can go
      home does not depend on the tableau."""
    if not classes or rkind != R_NONE:
        return gen_moves(s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e)
    hbuf, base, parent, target = _hs_views(hs)
    k = _sites(s, cfg, hbuf, base, parent, target)
    if k == 0 or k > HOP_SITES:
        return gen_moves(s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e)
    hrec = hs[HS_RECS:]
    n = gen_moves(s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e, True, -1)
    n0 = n
    for q in range(k):
        _kind, pcol, _dst, _n = decode(cfg, np.int64(hbuf[q]))  # p_q stays on top there
        top = _to_sites(s, cfg, 1 << q, base, target, hrec, 0)
        if top < 0:
            _undo_to(s, cfg, hrec, -1 - top, 0)
            return -1
        c = gen_moves(
            s, cfg, acts, out, start + n, sc[n:], rkind, rcol, ctl, wkc, wkj, wk_s, wk_e, True,
            1 << pcol,
        )  # fmt: skip
        _undo_to(s, cfg, hrec, top, 0)
        kept = 0
        for i in range(c):
            m = out[start + n + i]
            kind, src, dst, _n = decode(cfg, np.int64(m & MOVE_MASK))
            if kind == K_TF:
                ok = src == pcol
            else:
                ok = (kind == K_TT or kind == K_WT or kind == K_FT) and dst == pcol
            if ok:
                out[start + n + kept] = m | ((1 << q) << MEMBER_SHIFT)
                sc[n + kept] = sc[n + i]
                kept += 1
        n += kept
    if _lazy_waste(cfg):
        wf = cfg[L_WF]
        for sub in range(1, 1 << k):
            su = -1  # the suit of every card the hops of sub uncover; -2: not one suit
            for q in range(k):
                if (sub >> q) & 1:
                    x = suit_of(np.int64(parent[q]))
                    su = x if su == -1 or su == x else -2
            if su < 0:
                continue
            for i in range(n0):
                m = np.int64(out[start + i])
                if (m & MOVE_MASK) != wf:
                    continue
                taps = (m >> MOVE_BITS) & TAPS_MASK
                for w in range(wk_s, wk_e):
                    if wkj[w] == taps and suit_of(np.int64(wkc[w])) == su:
                        out[start + n] = m | (sub << MEMBER_SHIFT)
                        sc[n] = sc[i]
                        n += 1
                        break
    _sort_moves(out, start, sc, n)  # the whole (each member's moves came sorted)
    return n


@nb.njit(cache=True, inline="always")
def _allowed(s, rkind: int, rcol: int, kind: int, src: int, dst: int, card: int) -> bool:
    """May a restricted node (``R_*``) try this move? ``card``: the waste card of a macro."""
    if rkind == R_ONTO:  # only a move onto the card just played
        return (kind == K_TT or kind == K_WT or kind == K_FT) and dst == rcol
    # R_FOUND: only a card of that suit to a foundation
    if kind == K_TF:
        return s.tab[0, src, s.tab_len[0, src] - 1] // 13 == rcol
    return kind == K_WF and card // 13 == rcol


@nb.njit(cache=True)
def _lazy_waste(cfg: np.ndarray) -> bool:
    """Draw 1 with unlimited turn-overs: every stock and waste card can be brought to the top of
    the waste at any time, so a card need be played from the waste to a column only just before
    a card is put on it. Any solution can be reordered so: a card played there that nothing ever
    covers can stay in the stock until it goes to its foundation, and one that is covered later
    can wait until then (the moves in between do not touch it, and whatever was put on the card
    it lies on may wait too; taking the last move back first, each such move slides forward to
    just before the move that covers it, without disturbing the later ones). The node after such
    a move therefore tries only the moves onto that card; it is keyed apart from the same position
    unrestricted. When automatic moves followed, the restriction is dropped (the reordering
    argument would have to see through them).

    The same holds for a card played from the waste to its foundation (but a King): it need go
    there only just before the next card of its suit follows it (from the stock it could be
    taken straight to a column as well as from the foundation). The node after it tries only
    foundation moves of that suit (of any rank: in Double Solitaire the other pile may take one
    without it, so this keeps a superset of what the reordering needs)."""
    return cfg[L_STOCK] != 0 and cfg[G_DRAW] == 1 and cfg[G_VEGAS] == 0


# ---- borrowed views ---------------------------------------------------------------------------
#
# The search works on views that own nothing (``engine/borrow.py``): counting references to the
# state and the arrays, atomically, at every call and field read was about half of its time.


# The engine's own kernels, compiled into the solver's loops instead of called: a call passes the
# state struct, whose reference count each call takes up and puts down atomically.
_apply = nb.njit(inline="always")(apply.py_func)
_undo = nb.njit(inline="always")(undo_record.py_func)
_check_move = nb.njit(inline="always")(check_move.py_func)
_is_won = nb.njit(inline="always")(is_won.py_func)


@nb.njit(cache=True)
def _undo_to(s, cfg: np.ndarray, recs: np.ndarray, top: int, r0: int) -> None:
    """Take back the records ``recs[r0 .. top-1]``, last first."""
    for r in range(top - 1, r0 - 1, -1):
        _undo(s, 0, cfg, recs[r])


@nb.njit(cache=True)
def _taps(s, cfg: np.ndarray, recs: np.ndarray, top: int, j: int) -> int:
    """Tap the stock ``j`` times (draw, or turn the waste over when the stock is empty); the
    records go to ``recs[top ..]``. Returns the new top."""
    for _ in range(j):
        tap = cfg[L_DRAW] if s.stock_len[0] > 0 else cfg[L_DRAW] + 1
        recs[top] = _apply(s, 0, cfg, tap)
        top += 1
    return top


@nb.njit(cache=True)
def _move(s, cfg: np.ndarray, recs: np.ndarray, top: int, a: int, flags: int) -> int:
    """Play ``a`` after a last ``check_move``, then the safe automatic moves; the records go to
    ``recs[top ..]``. Returns the new top (``top + 1``: no automatic move followed), or -1 if
    ``a`` is illegal (a solver bug)."""
    if _check_move(s, 0, cfg, a) != 0:
        return -1
    recs[top] = _apply(s, 0, cfg, a)
    return autoplay(s, cfg, recs, top + 1, flags)


# ---- the search --------------------------------------------------------------------------------
#
# Depth-first, with Tarjan's strongly-connected-component bookkeeping so that whatever a run
# proves lost stays proven when the search restarts (with another move order): a node whose
# lowest reachable open index is its own closes a component that is fully explored and holds no
# win; every node of it is marked DEAD. Restarts are the Python driver's choice (``restart``).
# frames[f] = (rec_start, mv_start, mv_end, cursor, index, low, tarjan stack position).
F_REC = 0
F_MV = 1
F_END = 2
F_CUR = 3
F_IDX = 4
F_LOW = 5
F_TPOS = 6
F_WKS = 7  # the node's stock walk: wkc/wkj[F_WKS .. F_WKE-1]
F_WKE = 8
F_WKTOP = 9  # walk-stack top before the node
F_INC = 10  # 1: a take-back was left out at the node or below it (FL_NO_TAKEBACK runs)
F_SIZE = 11


@nb.njit(cache=True)
def _hop_scratch(cfg: np.ndarray):
    """Scratch for ``hop_class``: keys, parents and hops of up to ``HOP_MAX`` members; the hops
    of one position; a path and its records."""
    hk1 = np.zeros(HOP_MAX, np.uint64)
    hk2 = np.zeros(HOP_MAX, np.uint64)
    hpar = np.zeros(HOP_MAX, np.int64)
    hact = np.zeros(HOP_MAX, np.int64)
    hbuf = np.zeros(SCRATCH, np.int64)
    path = np.zeros(HOP_MAX, np.int64)
    hrec = np.zeros(HOP_MAX, np.int64)
    return hk1, hk2, hpar, hact, hbuf, path, hrec


@nb.njit(cache=True, inline="always")
def _classes(cfg: np.ndarray, flags: int) -> bool:
    """Does the search treat hop classes as nodes? Solitaire Réfléchi (one deck: a group fits on
    two cards only, and every split is a hop) with draw 1, unless switched off or in a run
    without splits. Draw 3 only with ``FL_HOPS_DRAW3``, as exact there: the search sets it in
    the runs that start after ``search._CLASSES_AFTER`` nodes (docs/solver.md)."""
    draw_ok = cfg[G_DRAW] == 1 or (flags & FL_HOPS_DRAW3) != 0
    return cfg[G_GAME] == REFLECHI and draw_ok and not (flags & (FL_NO_HOPS | FL_NO_SPLIT))


@nb.njit(cache=True)
def _enter_root(
    s, cfg, Z, tt1, tt2, tti, frames, moves, ctl, acts, sc, tmp, seen, ts1, ts2, wkc, wkj
):
    h1, h2 = position_key(s, cfg, Z, R_NONE, -1, ctl[C_FLAGS])
    run = ctl[C_GEN]
    code, fresh = tt_enter(tt1, tt2, tti, h1, h2, run << IDX_BITS)
    if code == TT_DEAD:
        return ST_EXHAUSTED
    ctl[C_TT] += fresh
    if not (ctl[C_FLAGS] & FL_NO_DEADEND) and dead_end(s, cfg, tmp, True, ctl[C_FLAGS]):
        tt_kill(tt1, tt2, tti, h1, h2)
        ctl[C_DEAD] += 1
        ctl[C_DEADEND] += 1
        return ST_EXHAUSTED
    ts1[0] = h1
    ts2[0] = h2
    ctl[C_TSTACK] = 1
    ctl[C_INDEX] = 1
    ctl[C_NODES] += 1
    we = 0
    if cfg[L_STOCK] and not (ctl[C_FLAGS] & FL_NO_MACRO):
        we = stock_walk(s, cfg, tmp, seen, wkc, wkj, 0)
    ctl[C_WALK] = we
    ctl[C_SKIPPED] = 0
    hs = np.zeros(HS_SIZE, np.int64)
    classes = _classes(cfg, ctl[C_FLAGS])
    cnt = gen_node(s, cfg, acts, moves, 0, sc, R_NONE, -1, ctl, wkc, wkj, 0, we, classes, hs)
    if cnt < 0:
        return ST_BUG
    frames[0, F_INC] = ctl[C_SKIPPED]
    frames[0, F_WKS] = 0
    frames[0, F_WKE] = we
    frames[0, F_WKTOP] = 0
    frames[0, F_REC] = 0
    frames[0, F_MV] = 0
    frames[0, F_END] = cnt
    frames[0, F_CUR] = 0
    frames[0, F_IDX] = 0
    frames[0, F_LOW] = 0
    frames[0, F_TPOS] = 0
    ctl[C_MOVES] = cnt
    ctl[C_DEPTH] = 0
    return ST_BUDGET


@nb.njit(cache=True)
def init_root(
    s, cfg, Z, tt1, tt2, tti, recs, frames, moves, ctl, acts, sc, tmp, seen, ts1, ts2, wkc, wkj
):
    """Play the root's safe moves, enter the root, generate its moves (run 0)."""
    rng = ctl[C_RNG]
    jit = ctl[C_JITTER]
    flags = ctl[C_FLAGS]
    ctl[:] = 0
    ctl[C_RNG] = rng
    ctl[C_JITTER] = jit
    ctl[C_FLAGS] = flags
    top = autoplay(s, cfg, recs, 0, ctl[C_FLAGS])
    if _classes(cfg, flags) and not is_won(s, 0, cfg):
        top = _canonical(s, cfg, recs, top, flags, np.zeros(HS_SIZE, np.int64))
        if top < 0:
            return ST_BUG
    ctl[C_RECS] = top
    ctl[C_ROOTRECS] = top
    if is_won(s, 0, cfg):
        return ST_WON
    return _enter_root(
        s, cfg, Z, tt1, tt2, tti, frames, moves, ctl, acts, sc, tmp, seen, ts1, ts2, wkc, wkj
    )


@nb.njit(cache=True)
def restart(
    s, cfg, Z, tt1, tt2, tti, recs, frames, moves, ctl, acts, sc, tmp, seen, ts1, ts2, wkc, wkj
):
    """Abandon the current run (back to the root) and start the next one. What was proven lost
    stays so; the rest of the visited set goes stale. ST_EXHAUSTED if the root is proven lost."""
    for r in range(ctl[C_RECS] - 1, ctl[C_ROOTRECS] - 1, -1):
        undo_record(s, 0, cfg, recs[r])
    ctl[C_RECS] = ctl[C_ROOTRECS]
    ctl[C_GEN] += 1
    return _enter_root(
        s, cfg, Z, tt1, tt2, tti, frames, moves, ctl, acts, sc, tmp, seen, ts1, ts2, wkc, wkj
    )


@nb.njit(cache=True)
def search(
    state,
    cfg: np.ndarray,
    Z: np.ndarray,
    tt1: np.ndarray,
    tt2: np.ndarray,
    tti: np.ndarray,
    recs: np.ndarray,
    frames: np.ndarray,
    moves: np.ndarray,
    ctl: np.ndarray,
    acts: np.ndarray,
    sc: np.ndarray,
    tmp: np.ndarray,
    seen: np.ndarray,
    ts1: np.ndarray,
    ts2: np.ndarray,
    wkc: np.ndarray,
    wkj: np.ndarray,
    node_limit: int,
    work_limit: int,
) -> int:
    """Continue the run until a win, exhaustion, ``ctl[C_NODES]`` reaching ``node_limit``,
    ``work_limit`` steps, or an array that needs to grow (the caller grows it and calls again;
    nothing is lost)."""
    views = borrow(state)  # views that own nothing: no atomic reference counts below
    s = fields(views)
    cfg = view(cfg)
    Z = view(Z)
    tt1 = view(tt1)
    tt2 = view(tt2)
    tti = view(tti)
    recs = view(recs)
    frames = view(frames)
    moves = view(moves)
    ctl = view(ctl)
    acts = view(acts)
    sc = view(sc)
    tmp = view(tmp)
    seen = view(seen)
    ts1 = view(ts1)
    ts2 = view(ts2)
    wkc = view(wkc)
    wkj = view(wkj)
    depth = ctl[C_DEPTH]
    top = ctl[C_RECS]
    mtop = ctl[C_MOVES]
    nodes = ctl[C_NODES]
    ttn = ctl[C_TT]
    hits = ctl[C_HITS]
    maxdepth = ctl[C_MAXDEPTH]
    best = ctl[C_BEST]
    run = ctl[C_GEN]
    index = ctl[C_INDEX]
    tsp = ctl[C_TSTACK]
    dead = ctl[C_DEAD]
    wtop = ctl[C_WALK]
    status = ST_BUDGET
    work = 0
    flags = ctl[C_FLAGS]
    lazy_waste = _lazy_waste(cfg) and not (flags & (FL_NO_LAZY | FL_NO_MACRO))
    macro = cfg[L_STOCK] != 0 and not (flags & FL_NO_MACRO)
    vegas = cfg[G_GAME] == DOUBLE and cfg[G_VEGAS] != 0
    deadends_on = (cfg[G_GAME] == REFLECHI or vegas) and not (flags & FL_NO_DEADEND)
    # Réfléchi: the columns a move builds on, for dead_end (every expanded position passed it)
    refl = deadends_on and cfg[G_GAME] == REFLECHI and not (flags & FL_WHOLE_DEADEND)
    cols = np.int64(cfg[G_COLS])
    tl0 = np.zeros(cols, np.int64)
    n_deadend = ctl[C_DEADEND]
    classes = _classes(cfg, flags)
    hs = np.zeros(HS_SIZE, np.int64)
    hbuf, base, parent, target = _hs_views(hs)
    while True:
        if nodes >= node_limit or work >= work_limit:
            status = ST_BUDGET
            break
        work += 1
        cur = frames[depth, F_CUR]
        if cur >= frames[depth, F_END]:  # every move of this node tried: back up
            low = frames[depth, F_LOW]
            inc = frames[depth, F_INC]
            if low == frames[depth, F_IDX]:  # a whole component explored, no win: lost
                tp = frames[depth, F_TPOS]
                # unless a take-back was left out in it or below it: then closed, not lost
                mark = (run << IDX_BITS) | CLOSED if inc else DEAD
                for q in range(tsp - 1, tp - 1, -1):
                    tt_kill(tt1, tt2, tti, ts1[q], ts2[q], mark)
                if not inc:
                    dead += tsp - tp
                tsp = tp
            elif depth > 0 and low < frames[depth - 1, F_LOW]:
                frames[depth - 1, F_LOW] = low
            if inc and depth > 0:
                frames[depth - 1, F_INC] = 1
            if depth == 0:
                status = ST_RUN_DONE if inc else ST_EXHAUSTED
                break
            r0 = frames[depth, F_REC]
            _undo_to(s, cfg, recs, top, r0)
            top = r0
            mtop = frames[depth, F_MV]
            wtop = frames[depth, F_WKTOP]
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
        if tsp + 2 > ts1.shape[0]:
            status = ST_GROW_TSTACK
            break
        if 2 * (ttn + 1) > tt1.shape[0]:
            status = ST_GROW_TT
            break
        if wtop + SEQ + 8 > wkc.shape[0]:
            status = ST_GROW_WALK
            break
        frames[depth, F_CUR] = cur + 1
        sl0 = s.stock_len[0]
        wl0 = s.waste_len[0]
        m = np.int64(moves[cur])
        a = m & MOVE_MASK
        j = (m >> MOVE_BITS) & TAPS_MASK
        member = m >> MEMBER_SHIFT
        r_start = top
        hopped = member > 0
        if hopped:  # hops to the member of the node's class the move is played from
            _sites(s, cfg, hbuf, base, parent, target)
            top = _to_sites(s, cfg, member, base, target, recs, top)
            if top < 0:
                top = -1 - top
                status = ST_BUG
                break
        if j > 0:
            top = _taps(s, cfg, recs, top, j)
        kind, src, dst, _n = decode(cfg, a)
        played = np.int64(s.waste[0, s.waste_len[0] - 1]) if kind == K_WF else -1
        before_auto = top + 1
        if refl:
            for c in range(cols):
                tl0[c] = s.tab_len[0, c]
        after = _move(s, cfg, recs, top, a, flags)
        if after < 0:
            status = ST_BUG
            break
        top = after
        if _is_won(s, 0, cfg):
            status = ST_WON
            break
        rkind = R_NONE
        rcol = -1
        if lazy_waste and top == before_auto:  # (after automatic moves: no restriction)
            if kind == K_WT:
                rkind = R_ONTO
                rcol = dst
            elif kind == K_WF and played % 13 != 12:
                rkind = R_FOUND
                rcol = played // 13
        if classes and rkind == R_NONE:
            after = _canonical(s, cfg, recs, top, flags, hs)
            if after < 0:
                top = -1 - after
                status = ST_BUG
                break
            if after != top:
                hopped = True
                top = after
                if _is_won(s, 0, cfg):
                    status = ST_WON
                    break
        h1, h2 = position_key(s, cfg, Z, rkind, rcol, flags)
        code, val = tt_enter(tt1, tt2, tti, h1, h2, (run << IDX_BITS) | index)
        if code != TT_NEW:
            hits += 1
            if code == TT_OPEN:
                if val == CLOSED:  # closed without a proof in this run: no proof here either
                    frames[depth, F_INC] = 1
                elif val < frames[depth, F_LOW]:
                    frames[depth, F_LOW] = val
            _undo_to(s, cfg, recs, top, r_start)
            top = r_start
            continue
        ttn += val
        # Proven lost: not expanded, remembered as such. (A card put on its foundation never
        # makes a position a dead end that was none, so such moves are not tested; but with
        # Vegas scoring the taps before it may: they add to the waste, which stays.)
        check = deadends_on and (hopped or (kind != K_TF and (kind != K_WF or (vegas and j > 0))))
        gained = -1
        if check and refl and not hopped:  # (after hops: the whole test)
            gained = 0
            for c in range(cols):
                if s.tab_len[0, c] > tl0[c]:
                    gained |= 1 << c
            check = gained != 0
        if check and dead_end(s, cfg, tmp, False, flags, gained):
            tt_kill(tt1, tt2, tti, h1, h2)
            dead += 1
            n_deadend += 1
            _undo_to(s, cfg, recs, top, r_start)
            top = r_start
            continue
        ts1[tsp] = h1
        ts2[tsp] = h2
        nodes += 1
        depth += 1
        if depth > maxdepth:
            maxdepth = depth
        home = 0
        for p in range(cfg[G_PILES]):
            home += s.found[0, p]
        if home > best:
            best = home
        ws = frames[depth - 1, F_WKS]
        we = frames[depth - 1, F_WKE]
        wtop0 = wtop
        if macro and (s.stock_len[0] != sl0 or s.waste_len[0] != wl0):
            ws = wtop
            we = stock_walk(s, cfg, tmp, seen, wkc, wkj, wtop)
            wtop = we
        ctl[C_SKIPPED] = 0
        cnt = gen_node(
            s, cfg, acts, moves, mtop, sc, rkind, rcol, ctl, wkc, wkj, ws, we, classes, hs
        )
        if cnt < 0:
            status = ST_BUG
            break
        frames[depth, F_INC] = ctl[C_SKIPPED]
        frames[depth, F_WKS] = ws
        frames[depth, F_WKE] = we
        frames[depth, F_WKTOP] = wtop0
        frames[depth, F_REC] = r_start
        frames[depth, F_MV] = mtop
        frames[depth, F_END] = mtop + cnt
        frames[depth, F_CUR] = mtop
        frames[depth, F_IDX] = index
        frames[depth, F_LOW] = index
        frames[depth, F_TPOS] = tsp
        tsp += 1
        index += 1
        mtop += cnt
    # The app's counter is no business of the solver's (nor may it overflow); this use of
    # ``views`` also keeps its struct alive until here, which ``s`` points into.
    views.moves[0] = 0
    ctl[C_DEPTH] = depth
    ctl[C_RECS] = top
    ctl[C_MOVES] = mtop
    ctl[C_NODES] = nodes
    ctl[C_TT] = ttn
    ctl[C_HITS] = hits
    ctl[C_MAXDEPTH] = maxdepth
    ctl[C_BEST] = best
    ctl[C_INDEX] = index
    ctl[C_TSTACK] = tsp
    ctl[C_DEAD] = dead
    ctl[C_WALK] = wtop
    ctl[C_DEADEND] = n_deadend
    return status


# ---- shortening a solution ---------------------------------------------------------------------


@nb.njit(cache=True)
def _map_put(mk1, mk2, mv, h1, h2, v) -> None:
    m = mk1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    while mk1[i] != 0 and not (mk1[i] == h1 and mk2[i] == h2):
        i = (i + 1) & m
    mk1[i] = h1
    mk2[i] = h2
    mv[i] = v


@nb.njit(cache=True)
def _map_get(mk1, mk2, mv, h1, h2) -> int:
    m = mk1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    while mk1[i] != 0:
        if mk1[i] == h1 and mk2[i] == h2:
            return mv[i]
        i = (i + 1) & m
    return -1


@nb.njit(cache=True)
def shorten(s, cfg: np.ndarray, Z: np.ndarray, path: np.ndarray, acts: np.ndarray, out: np.ndarray):
    """Shorten the solution ``path`` (action ids) from row 0's position: wherever one legal move
    reaches a position that the solution reaches later (exact positions), take it and skip the
    detour. Writes the new solution to ``out`` and returns its length; row 0 ends won. The
    result is replayed and checked by the caller like any solution."""
    n = path.shape[0]
    size = 1
    while size < 2 * (n + 1):
        size *= 2
    mk1 = np.zeros(size, np.uint64)
    mk2 = np.zeros(size, np.uint64)
    mv = np.zeros(size, np.int64)
    recs = np.zeros(n + 1, np.int64)
    h1, h2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
    _map_put(mk1, mk2, mv, h1, h2, 0)
    for i in range(n):
        recs[i] = apply(s, 0, cfg, path[i])
        h1, h2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
        _map_put(mk1, mk2, mv, h1, h2, i + 1)  # the last visit wins: loops are cut
    for i in range(n - 1, -1, -1):
        undo_record(s, 0, cfg, recs[i])
    i = 0
    k = 0
    while i < n:
        h1, h2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
        i = max(i, _map_get(mk1, mk2, mv, h1, h2))
        if i >= n:
            break
        best = path[i]
        best_j = i + 1
        n_legal = legal_actions(s, 0, cfg, acts)
        for q in range(n_legal):
            rec = apply(s, 0, cfg, acts[q])
            g1, g2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
            j = _map_get(mk1, mk2, mv, g1, g2)
            undo_record(s, 0, cfg, rec)
            if j > best_j:
                best_j = j
                best = acts[q]
        apply(s, 0, cfg, best)
        out[k] = best
        k += 1
        i = best_j
    return k
