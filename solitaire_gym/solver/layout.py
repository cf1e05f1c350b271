"""The arrays of a search and the meaning of their slots, shared by every part of the solver.

All arrays are owned by the Python driver (``search.py``), so that a search can stop after a chunk
of work, let Python look at the clock, grow an array or restart, and resume exactly where it was::

    recs[0 .. ctl[C_RECS]-1]   undo records of the current path, root first (int64). The low 11
                               bits of a record are its action id: the path is the solution
    frames[f, F_*]             one row per node of the path (f = 0 is the root): the records that
                               led from its parent, its untried moves moves[cursor .. mv_end-1],
                               Tarjan's index and low link, its stock walk (F_* below)
    moves[..]                  move stack (int32): action | taps << 11, see ``moves.py``
    wkc, wkj                   stock walks: waste card reachable, taps to reach it
    tt1, tt2, tti              visited set: open addressing, two 64-bit keys, state (``keys.py``)
    ts1, ts2                   Tarjan's stack of keys
    ctl                        counters and settings (C_* below)

**Checking the reductions.** Each reduction can be switched off (``FL_*``); with all of them off
(and no restarts) the search is a plain exhaustive search over exact positions and every legal
move, against which the tests compare the verdicts.
"""

from __future__ import annotations

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
FL_NO_LAZY = 2  # no restricted nodes after waste moves (draw 1, see moves.lazy_waste)
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
FL_HOPS_DRAW3 = 2048  # Réfléchi draw 3: hop classes too (the search sets it late: loop._classes)

SEQ = 105  # positions in the stock + waste sequence (104 cards) + 1

# Restricted nodes (see ``moves.lazy_waste``): what the next move must do.
R_NONE = 0
R_ONTO = 1  # go onto column rcol (a card just played there from the waste)
R_FOUND = 2  # put a card of suit rcol on a foundation (a card of it just went there from the waste)

MOVE_BITS = 11  # actions < 2048; a move is action | draws << MOVE_BITS | member << MEMBER_SHIFT
MOVE_MASK = (1 << MOVE_BITS) - 1
MEMBER_SHIFT = 20  # the hop-class member the move is played from (0: the node itself)
TAPS_MASK = (1 << (MEMBER_SHIFT - MOVE_BITS)) - 1
# Scratch ``tmp`` (int64): the stock walk's undo records and the dead-end tests' locations use
# the start; ``single_pass_lost`` uses W_HOME and beyond.
W_HOME = 128  # 52: copies of each card on the foundations
W_AVAIL = W_HOME + 52  # 52: copies ever face up in a column, on a foundation or placed
W_FREE = W_AVAIL + 52  # 52: copies placed on the board (not on a foundation)
W_PTR = W_FREE + 52  # 10: cards of each column not yet gone
W_REV = W_PTR + 10  # 10: the lowest face-up height of each column
W_WASTE = W_REV + 10  # 104: the waste, bottom first
TMP_SIZE = max(2 * SEQ + 8, W_WASTE + 104)
MOVE_MARGIN = 4096  # moves one node can push (generous: about 60 in practice)
SCRATCH = 2048  # legal_actions' buffer (more than any game's action count)

# frames[f] = (rec_start, mv_start, mv_end, cursor, index, low, tarjan stack position, ...).
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
