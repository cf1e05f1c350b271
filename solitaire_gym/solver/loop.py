"""The solver's compiled core: a resumable depth-first search over the engine's own kernels.

Nothing in the solver decides a rule. Moves come from ``movegen.legal_actions`` (``moves.py``),
are played with ``play.apply`` after a last ``rules.check_move`` (``_move``) and taken back with
``play.undo_record`` (``inline.py``). The solver only chooses which legal moves to try, in what
order, and remembers which positions it has seen. Each technique has its module, whose docstring
gives its part of the argument that the verdicts are exact: ``moves.py`` (stock macros, moves
left out), ``safe_moves.py`` (automatic foundation moves), ``dead_ends.py`` and
``single_pass.py`` (positions lost without search), ``hops.py`` (hop classes), ``keys.py`` (the
visited set); ``layout.py`` holds the arrays' layout and the switches that turn each reduction
off. This module is the search loop, its restarts and side runs.

**Visited set and exactness.** A node is entered at most once per run: a child whose key is in the
table is not expanded again. Every winnable node has a generated child strictly closer to a win,
so a run that finds no win has explored everything reachable, which proves there is none.

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
out is *incomplete*, and so is every node above it on the path and every node that reaches a node
closed incomplete (``F_INC``, propagated like the low link); a component that closes incomplete
is not proven lost but marked ``CLOSED`` for the rest of the run (a child found so counts as
incomplete), a complete one is marked DEAD as in any run: everything reachable from it was
searched with every move. A side run that ends at the root incomplete (``ST_RUN_DONE``) proves
nothing; the driver then stops giving side runs of that kind.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import K_TF, K_WF, K_WT, decode
from solitaire_gym.engine.borrow import borrow, fields, view
from solitaire_gym.engine.play import undo_record
from solitaire_gym.engine.rules import is_won
from solitaire_gym.engine.variants import (
    DOUBLE,
    G_COLS,
    G_DRAW,
    G_GAME,
    G_PILES,
    G_VEGAS,
    L_DRAW,
    L_STOCK,
    REFLECHI,
)
from solitaire_gym.solver.dead_ends import dead_end
from solitaire_gym.solver.hops import (
    HOP_ITERS,
    HOP_MAX,
    HS_SIZE,
    canonical,
    gen_node,
    hs_views,
    sites,
    to_sites,
)
from solitaire_gym.solver.inline import apply_inline, check_move_inline, is_won_inline, undo_to
from solitaire_gym.solver.keys import (
    CLOSED,
    DEAD,
    IDX_BITS,
    TT_DEAD,
    TT_NEW,
    TT_OPEN,
    position_key,
    tt_enter,
    tt_kill,
)
from solitaire_gym.solver.layout import (
    C_BEST,
    C_DEAD,
    C_DEADEND,
    C_DEPTH,
    C_FLAGS,
    C_GEN,
    C_HITS,
    C_INDEX,
    C_JITTER,
    C_MAXDEPTH,
    C_MOVES,
    C_NODES,
    C_RECS,
    C_RNG,
    C_ROOTRECS,
    C_SKIPPED,
    C_TSTACK,
    C_TT,
    C_WALK,
    F_CUR,
    F_END,
    F_IDX,
    F_INC,
    F_LOW,
    F_MV,
    F_REC,
    F_TPOS,
    F_WKE,
    F_WKS,
    F_WKTOP,
    FL_HOPS_DRAW3,
    FL_NO_DEADEND,
    FL_NO_HOPS,
    FL_NO_LAZY,
    FL_NO_MACRO,
    FL_NO_SPLIT,
    FL_WHOLE_DEADEND,
    MEMBER_SHIFT,
    MOVE_BITS,
    MOVE_MARGIN,
    MOVE_MASK,
    R_FOUND,
    R_NONE,
    R_ONTO,
    SEQ,
    ST_BUDGET,
    ST_BUG,
    ST_EXHAUSTED,
    ST_GROW_FRAMES,
    ST_GROW_MOVES,
    ST_GROW_RECS,
    ST_GROW_TSTACK,
    ST_GROW_TT,
    ST_GROW_WALK,
    ST_RUN_DONE,
    ST_WON,
    TAPS_MASK,
)
from solitaire_gym.solver.moves import lazy_waste, stock_walk
from solitaire_gym.solver.safe_moves import autoplay

# records one move can push: hops to a member, stock taps, the move, automatic plays, the hops to
# the least member of the new class (and their automatic plays)
REC_MARGIN = 2 * SEQ + 128 + (HOP_ITERS + 1) * HOP_MAX


@nb.njit(cache=True)
def _taps(s, cfg: np.ndarray, recs: np.ndarray, top: int, j: int) -> int:
    """Tap the stock ``j`` times (draw, or turn the waste over when the stock is empty); the
    records go to ``recs[top ..]``. Returns the new top."""
    for _ in range(j):
        tap = cfg[L_DRAW] if s.stock_len[0] > 0 else cfg[L_DRAW] + 1
        recs[top] = apply_inline(s, 0, cfg, tap)
        top += 1
    return top


@nb.njit(cache=True)
def _move(s, cfg: np.ndarray, recs: np.ndarray, top: int, a: int, flags: int) -> int:
    """Play ``a`` after a last ``check_move``, then the safe automatic moves; the records go to
    ``recs[top ..]``. Returns the new top (``top + 1``: no automatic move followed), or -1 if
    ``a`` is illegal (a solver bug)."""
    if check_move_inline(s, 0, cfg, a) != 0:
        return -1
    recs[top] = apply_inline(s, 0, cfg, a)
    return autoplay(s, cfg, recs, top + 1, flags)


# ---- the search --------------------------------------------------------------------------------
#
# Depth-first, with Tarjan's strongly-connected-component bookkeeping so that whatever a run
# proves lost stays proven when the search restarts (with another move order): a node whose
# lowest reachable open index is its own closes a component that is fully explored and holds no
# win; every node of it is marked DEAD. Restarts are the Python driver's choice (``restart``).


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
        top = canonical(s, cfg, recs, top, flags, np.zeros(HS_SIZE, np.int64))
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
    lazy = lazy_waste(cfg) and not (flags & (FL_NO_LAZY | FL_NO_MACRO))
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
    hbuf, base, parent, target = hs_views(hs)
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
            undo_to(s, cfg, recs, top, r0)
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
            sites(s, cfg, hbuf, base, parent, target)
            top = to_sites(s, cfg, member, base, target, recs, top)
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
        if is_won_inline(s, 0, cfg):
            status = ST_WON
            break
        rkind = R_NONE
        rcol = -1
        if lazy and top == before_auto:  # (after automatic moves: no restriction)
            if kind == K_WT:
                rkind = R_ONTO
                rcol = dst
            elif kind == K_WF and played % 13 != 12:
                rkind = R_FOUND
                rcol = played // 13
        if classes and rkind == R_NONE:
            after = canonical(s, cfg, recs, top, flags, hs)
            if after < 0:
                top = -1 - after
                status = ST_BUG
                break
            if after != top:
                hopped = True
                top = after
                if is_won_inline(s, 0, cfg):
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
            undo_to(s, cfg, recs, top, r_start)
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
            undo_to(s, cfg, recs, top, r_start)
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
