"""The solver's Python face: budgets, the result, the certificate, hints.

:func:`solve` runs the compiled search (``loop.py``, and the modules it calls) in chunks, looking
at the clock between chunks, growing its arrays when the search asks, and replays every solution
it returns through :class:`~solitaire_gym.Game` from the starting position before handing it out.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from solitaire_gym.engine.actions import action_to_move
from solitaire_gym.engine.game import RulesGame
from solitaire_gym.engine.play import undo_record
from solitaire_gym.engine.state import allocate, copy_state
from solitaire_gym.engine.variants import G_DRAW, G_GAME, REFLECHI, SEAHAVEN
from solitaire_gym.errors import ArgumentError, SolitaireError, is_int, shown
from solitaire_gym.solver import keys, loop, shortcuts
from solitaire_gym.solver.layout import (
    C_BEST,
    C_DEAD,
    C_DEADEND,
    C_FLAGS,
    C_GEN,
    C_HITS,
    C_JITTER,
    C_MAXDEPTH,
    C_NODES,
    C_RECS,
    C_RNG,
    C_SIZE,
    C_TT,
    F_SIZE,
    FL_HOPS_DRAW3,
    FL_NO_SPLIT,
    FL_NO_TAKEBACK,
    MOVE_MARGIN,
    MOVE_MASK,
    SCRATCH,
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
    TMP_SIZE,
)

VERDICTS = ("solvable", "unsolvable", "unknown")
THOUGHTFUL_NOTE = (
    "thoughtful solving: the solver sees every card, face-down cards and the stock order "
    "included, which the player does not; 'solvable' means winnable by a player who knew the "
    "whole deal (an upper bound on what can be won by play), 'unsolvable' means no play wins"
)
EXACT_NOTE = "full information: Seahaven Towers hides no card, so the verdict is exact"

DEFAULT_SECONDS = 10.0
DEFAULT_TABLE_MB = 1024
MAX_TABLE_MB = 2**20  # 1 TiB: beyond any machine (and inf would overflow the table's size)
_CHUNK_WORK = 4096  # search steps between looks at the clock (a few ms)
_TT_START = 1 << 16
_RESTART_UNIT = 4096  # nodes per unit of the Luby sequence
# The last run (off: None): once the runs so far have expanded this many nodes, the next run is
# never cut (no more restarts; plain move order). A proof of loss is one run's work, and every
# restart throws away the open part of the visited set: with restarts to the end a proof costs
# 20-56% more nodes. But the wins that take that long are found by restarts with a fresh order,
# which a last run gives up: on the 83 Réfléchi deals of the study it could change (undecided, or
# decided in over 2^19 nodes; 10 s each), a last run after 2^19 nodes proved 2 more deals lost
# and lost 9 of the 14 wins, so it stays off (benchmarks/bench_restarts.py measures it).
_FINAL_AFTER: int | None = None
_JITTER = 1000  # random noise added to move scores after the first run (they span about 1500)
# Side runs: a share of the nodes goes to runs that leave out moves most solutions do without
# (layout.FL_NO_SPLIT: splitting a built sequence between columns; FL_NO_TAKEBACK: taking a card
# back from a foundation). Such a run finds a win much sooner when one exists without those
# moves, and still proves lost the components in which nothing was left out. By (game, draw):
# the flag sets, taken in turn, and the share of the nodes. Double Solitaire wins at once with
# Normal scoring; with Vegas scoring its undecided deals are proofs of loss, which side runs
# only slow down. Draw 3 leaves out both kinds of move: on the 422 draw-3 deals of the study that
# take more than the first run, with 10 s each, side runs without either won 3 deals more than
# side runs without take-backs alone (127, 458 and 754; the first two in under 0.1 s), lost no
# win, and took 13% less time; both kinds in turn won 2 more (docs/solver.md).
_SIDE_RUNS: dict[tuple[int, int], tuple[tuple[int, ...], float]] = {
    (REFLECHI, 1): ((FL_NO_SPLIT, FL_NO_SPLIT | FL_NO_TAKEBACK), 0.5),
    (REFLECHI, 3): ((FL_NO_SPLIT | FL_NO_TAKEBACK,), 0.1),
}
_SIDE_RNG = 0x2545F4914F6CDD1D
# With a last run, by (game, draw): a side run that comes uncut before it, while no run of its kind
# has ended without a win. It ends in a win or at the end of the smaller game it searches (far
# smaller than the whole: Réfléchi draw 1 without splits), after which the last run proves the
# loss with whatever that run proved lost. Draw 3 has none: without take-backs its game is nearly
# the whole.
_LAST_SIDE_RUN: dict[tuple[int, int], int] = {(REFLECHI, 1): FL_NO_SPLIT}
# Hop classes late, by (game, draw): once the runs so far have expanded this many nodes, every
# later run of the Luby sequence treats hop classes as nodes (layout.FL_HOPS_DRAW3); the side
# runs stay without. Réfléchi draw 3 only: there a class costs about twice a position, which the
# many short searches (most wins) do not earn back, while the large proofs of loss take half the
# time with classes. Exact either way: a class is won or lost with each of its members and is
# keyed by one of them, so what one kind of run proves lost holds in the other (docs/solver.md).
_CLASSES_AFTER: dict[tuple[int, int], int] = {(REFLECHI, 3): 2**17}


class SolverBug(AssertionError):
    """The solver produced a solution that does not replay to a win: a bug, never a result."""


@dataclass
class SolveResult:
    """What :func:`solve` found.

    ``verdict`` is ``"solvable"`` (``solution`` wins, replayed and checked), ``"unsolvable"``
    (every reachable position was searched: no play wins) or ``"unknown"`` (the budget named in
    ``reason`` ran out first). ``thoughtful`` is True for Solitaire Réfléchi and Double
    Solitaire, where the solver sees the hidden cards (see ``THOUGHTFUL_NOTE``); Seahaven Towers
    hides nothing and its verdict is exact. ``position`` is the starting position when it was not
    the deal of ``code`` itself (a game already under way), else None. ``nodes``: positions
    expanded (a position expanded again after a restart counts again); ``seconds``: the search,
    without loading the kernels and without the replay check; ``stats``: more counters."""

    code: str
    verdict: str
    solution: list[str]
    nodes: int
    seconds: float
    thoughtful: bool
    game: str
    reason: str | None = None
    max_seconds: float | None = None
    max_nodes: int | None = None
    note: str = ""
    position: dict[str, Any] | None = None
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def solved(self) -> bool:
        return self.verdict == "solvable"

    @property
    def decided(self) -> bool:
        return self.verdict != "unknown"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """One line of JSON (the format of ``solitaire-gym solve --out``)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    def summary(self) -> str:
        """A few readable lines: verdict, nodes, time, the thoughtful note, the solution."""
        lines = [
            f"{self.code}  {self.game}",
            f"verdict: {self.verdict}"
            + (f" (budget spent: {self.reason})" if self.verdict == "unknown" else ""),
            f"nodes: {self.nodes}  time: {self.seconds:.3f} s",
            f"note: {self.note}",
        ]
        if self.solved:
            lines.append(f"solution ({len(self.solution)} moves):")
            lines.append(" ".join(self.solution) if self.solution else "(already won)")
        return "\n".join(lines)


def _as_game(game_or_code: Any) -> RulesGame:
    if isinstance(game_or_code, RulesGame):
        return game_or_code
    if isinstance(game_or_code, dict):
        return RulesGame.from_dict(game_or_code, undo_depth=0)  # PositionError names the fault
    if isinstance(game_or_code, str):
        return RulesGame.from_code(game_or_code, undo_depth=0)  # GameCodeError names the fault
    raise ArgumentError(
        f"solve() takes a game code, a Game or a position dict, not {type(game_or_code).__name__}"
    )


def check_budget(max_seconds: Any, max_nodes: Any) -> tuple[float | None, int | None]:
    """``max_seconds`` (a number, or None: no limit) as a float and ``max_nodes`` (a positive
    integer, or None) as an int; :class:`ArgumentError` naming the one that is neither."""
    if max_seconds is not None:
        if not (is_int(max_seconds) or isinstance(max_seconds, (float, np.floating))):
            raise ArgumentError(
                f"max_seconds must be a number of seconds, not {shown(max_seconds)}"
            )
        try:
            max_seconds = float(max_seconds)
        except OverflowError:  # an integer too large for a float: no limit, as inf
            max_seconds = math.inf
        if not max_seconds > 0 or math.isnan(max_seconds):
            raise ArgumentError(f"max_seconds must be more than 0, not {shown(max_seconds)}")
    if max_nodes is not None:
        if not is_int(max_nodes):
            raise ArgumentError(f"max_nodes must be an integer, not {shown(max_nodes)}")
        max_nodes = int(max_nodes)
        if max_nodes <= 0:
            raise ArgumentError(f"max_nodes must be 1 or more, not {shown(max_nodes)}")
    return max_seconds, max_nodes


_warm = False


def warm_up() -> None:
    """Load (or compile, the first time on a machine) the kernels, so that a budget measures
    search and not compilation."""
    global _warm
    if not _warm:
        S = _Search(RulesGame.from_code("TF1-D1N-AAAAAAB", undo_depth=0), 1.0)
        loop.init_root(*S.args())
        loop.search(*S.args(), 2, 100)
        loop.restart(*S.args())
        S.rehash(S.tt[0].shape[0])
        _warm = True


def _grow(a: np.ndarray, fill: int = 0) -> np.ndarray:
    b = np.full((a.shape[0] * 2, *a.shape[1:]), fill, a.dtype)
    b[: a.shape[0]] = a
    return b


def luby(i: int) -> int:
    """The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, … (i >= 1): restart lengths that waste at most a
    logarithmic factor whatever the distribution of solving times."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while i != (1 << k) - 1:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


class _Search:
    """The arrays of one search, grown on demand."""

    def __init__(self, game: RulesGame, table_mb: float) -> None:
        self.cfg = game.cfg
        src = game.state
        s = allocate(1, game.variant.n_cards, 0)
        for dst, a in zip(s.arrays(), src.arrays(), strict=True):
            if dst.ndim > 1 and dst.shape[1] == 0:
                continue  # the undo history
            dst[0] = a[0]
        s.moves[0] = 0
        self.s = s
        self.Z = _zobrist()
        self.tt_cap = max(_TT_START, 1 << int(math.log2(max(1.0, table_mb * 2**20 / 24))))
        size = min(_TT_START, self.tt_cap)
        self.tt = [np.zeros(size, np.uint64), np.zeros(size, np.uint64), np.zeros(size, np.int64)]
        self.recs = np.zeros(1 << 12, np.int64)
        self.frames = np.zeros((1 << 10, F_SIZE), np.int64)
        self.moves = np.zeros(1 << 14, np.int32)
        self.ctl = np.zeros(C_SIZE, np.int64)
        self.acts = np.zeros(SCRATCH, np.int32)
        self.sc = np.zeros(MOVE_MARGIN, np.int64)
        self.tmp = np.zeros(TMP_SIZE, np.int64)
        self.seen = np.zeros(SEQ + 8, np.int8)
        self.ts = [np.zeros(1 << 12, np.uint64), np.zeros(1 << 12, np.uint64)]
        self.wk = [np.zeros(1 << 12, np.int8), np.zeros(1 << 12, np.int32)]

    def args(self) -> tuple:
        return (
            self.s,
            self.cfg,
            self.Z,
            *self.tt,
            self.recs,
            self.frames,
            self.moves,
            self.ctl,
            self.acts,
            self.sc,
            self.tmp,
            self.seen,
            *self.ts,
            *self.wk,
        )

    def rehash(self, size: int) -> None:
        new = [np.zeros(size, np.uint64), np.zeros(size, np.uint64), np.zeros(size, np.int64)]
        self.ctl[C_TT] = keys.tt_rehash(*self.tt, *new, self.ctl[C_GEN])
        self.tt = new

    def grow(self, status: int) -> bool:
        """Grow what the search asked for; False if the visited set may not grow (memory)."""
        if status == ST_GROW_TT:
            size = self.tt[0].shape[0]
            self.rehash(size)  # drops stale entries
            if 2 * (self.ctl[C_TT] + 1) > size * 0.8:
                if size * 2 <= self.tt_cap:
                    self.rehash(size * 2)
                elif 2 * (self.ctl[C_TT] + 64) > size:
                    return False
        elif status == ST_GROW_RECS:
            self.recs = _grow(self.recs)
        elif status == ST_GROW_FRAMES:
            self.frames = _grow(self.frames)
        elif status == ST_GROW_MOVES:
            self.moves = _grow(self.moves)
        elif status == ST_GROW_TSTACK:
            self.ts = [_grow(a) for a in self.ts]
        elif status == ST_GROW_WALK:
            self.wk = [_grow(a) for a in self.wk]
        elif status == ST_BUG:
            raise SolverBug("the search was about to play an illegal move")
        return True


def run_search(
    game: RulesGame,
    max_seconds: float | None,
    max_nodes: int | None,
    table_mb: float,
    flags: int = 0,
    restarts_on: bool = True,
    shorten: bool = True,
    clock: str = "wall",
) -> tuple[str, str | None, list[int], dict[str, int], float]:
    """The search proper: (verdict, reason, action ids of the solution, stats, seconds).

    Runs are restarted after a Luby-sequence number of nodes, each with a new random tie-break of
    the move order (the first run uses the plain order): solving times are heavy-tailed and a
    fresh order usually finds a solution that the first one had buried. Whatever a run proves lost
    stays proven, so the search still ends when everything reachable is explored. With
    ``_FINAL_AFTER`` set (off by default), after that many nodes the next run is the last (after
    an uncut side run where ``_LAST_SIDE_RUN`` names one): it runs to the end of the budget, so
    that a proof of loss is not cut short again and again. In Réfléchi draw 3 the runs of the
    Luby sequence that start after ``_CLASSES_AFTER`` nodes take hop classes."""
    now = time.process_time if clock == "cpu" else time.perf_counter
    t0 = now()
    deadline = None if max_seconds is None else t0 + max_seconds
    S = _Search(game, table_mb)
    ctl = S.ctl
    ctl[C_RNG] = 88172645463325252
    # Side runs (see _SIDE_RUNS): one comes after a run of the Luby sequence while they have had
    # less than their share of the nodes; a kind of side run stops when one of its runs ends
    # without a win (none exists without those moves). They draw their move-order noise from their
    # own generator, so the runs of the Luby sequence get the same noise as without them.
    key = (int(game.cfg[G_GAME]), int(game.cfg[G_DRAW]))
    side_kinds, side_share = _SIDE_RUNS.get(key, ((), 0))
    last_side = _LAST_SIDE_RUN.get(key, 0)
    if not restarts_on or flags & (FL_NO_TAKEBACK | FL_NO_SPLIT):
        side_kinds = ()
    side_kinds = list(side_kinds)
    classes_after = _CLASSES_AFTER.get(key) if restarts_on else None
    side_next = 0
    side = 0  # the flags of the side run under way, 0 for a run of the Luby sequence
    side_nodes = 0
    side_rng = _SIDE_RNG
    full_rng = 0  # the Luby sequence's generator while a side run has its own
    side_jitter = 0  # the first side run takes the plain order
    ctl[C_FLAGS] = flags
    status = loop.init_root(*S.args())
    reason = None
    restarts = 0
    run_start = 0
    run_len = _RESTART_UNIT * luby(1)
    final_from = -1  # the node count at which the last run began (-1: not yet)
    uncut_side = False  # the side run under way is the one before the last run
    node_cap = np.iinfo(np.int64).max if max_nodes is None else max_nodes
    while status not in (ST_WON, ST_EXHAUSTED):
        if status == ST_BUG:  # from entering the root (init_root, restart): no run to go on with
            raise SolverBug("the search was about to play an illegal move")
        last = not restarts_on or final_from >= 0
        limit = node_cap if last or uncut_side else min(node_cap, run_start + run_len)
        status = loop.search(*S.args(), limit, _CHUNK_WORK)
        if status in (ST_WON, ST_EXHAUSTED):
            break
        if ctl[C_NODES] >= node_cap:
            reason = "nodes"
            break
        if deadline is not None and now() >= deadline:
            reason = "seconds"
            break
        if status == ST_RUN_DONE and last:
            reason = "incomplete"  # (only when the caller asked for a side run's flag)
            break
        if status not in (ST_BUDGET, ST_RUN_DONE) and not S.grow(status):
            reason = "memory"
            break
        if not last and (
            status == ST_RUN_DONE
            or (status == ST_BUDGET and ctl[C_NODES] >= run_start + run_len and not uncut_side)
        ):
            if side:
                side_nodes += int(ctl[C_NODES]) - run_start
                if status == ST_RUN_DONE:
                    side_kinds.remove(side)  # no win without those moves: no more of this kind
                side = 0  # back to the Luby sequence, with its own noise
                side_rng, ctl[C_RNG] = int(ctl[C_RNG]), full_rng
                ctl[C_JITTER] = _JITTER
            else:
                restarts += 1
                run_len = _RESTART_UNIT * luby(restarts + 1)
                ctl[C_JITTER] = _JITTER
                if (
                    side_kinds
                    and side_nodes < side_share * int(ctl[C_NODES])
                    and not (_FINAL_AFTER is not None and ctl[C_NODES] >= _FINAL_AFTER)
                ):
                    side = side_kinds[side_next % len(side_kinds)]
                    side_next += 1
                    full_rng, ctl[C_RNG] = int(ctl[C_RNG]), side_rng
                    ctl[C_JITTER], side_jitter = side_jitter, _JITTER
            if _FINAL_AFTER is not None and ctl[C_NODES] >= _FINAL_AFTER:
                # Uncut from here on: the side run named for the game if its kind is still
                # live and none came yet, then the last run (plain order, no side run).
                if not uncut_side and last_side in side_kinds:
                    uncut_side = True
                    side = last_side
                    full_rng, ctl[C_RNG] = int(ctl[C_RNG]), side_rng
                else:
                    uncut_side = False
                    final_from = int(ctl[C_NODES])
                ctl[C_JITTER] = 0
            late = 0  # hop classes late (_CLASSES_AFTER), in the runs of the Luby sequence
            if classes_after is not None and not side and ctl[C_NODES] >= classes_after:
                late = FL_HOPS_DRAW3
            ctl[C_FLAGS] = flags | side | late
            status = loop.restart(*S.args())
            run_start = int(ctl[C_NODES])
    seconds = now() - t0
    stats = {
        "nodes": int(ctl[C_NODES]),
        "seen_again": int(ctl[C_HITS]),
        "proven_lost": int(ctl[C_DEAD]),
        "dead_ends": int(ctl[C_DEADEND]),
        "max_depth": int(ctl[C_MAXDEPTH]),
        "most_home": int(ctl[C_BEST]),
        "restarts": restarts,
        "last_run_from": final_from,
        "table_size": int(S.tt[0].shape[0]),
    }
    if status == ST_WON:
        path = (S.recs[: ctl[C_RECS]] & MOVE_MASK).astype(np.int64)
        if shorten and len(path):
            t = copy_state(S.s)
            for r in S.recs[ctl[C_RECS] - 1 :: -1]:
                undo_record(t, 0, S.cfg, r)  # back to the start
            out = np.zeros(len(path), np.int64)
            path = out[: shortcuts.shorten(t, S.cfg, S.Z, path, S.acts, out)]
        stats["solution_found"] = int(ctl[C_RECS])
        return "solvable", None, [int(a) for a in path], stats, seconds
    if status == ST_EXHAUSTED:
        return "unsolvable", None, [], stats, seconds
    return "unknown", reason, [], stats, seconds


_Z: np.ndarray | None = None


def _zobrist() -> np.ndarray:
    global _Z
    if _Z is None:
        _Z = keys.zobrist_table()
    return _Z


def certify(start: dict[str, Any], solution: list[str]) -> None:
    """Replay ``solution`` through :class:`Game` from ``start``; raise :class:`SolverBug` unless
    every move is legal and the game ends won (:class:`ArgumentError` if ``solution`` is not a
    list of move strings)."""
    if not isinstance(solution, (list, tuple)) or not all(isinstance(m, str) for m in solution):
        raise ArgumentError(f"a solution is a list of move strings, not {shown(solution)}")
    g = RulesGame.from_dict(start, undo_depth=0)
    for i, move in enumerate(solution):
        try:
            g.play(move)
        except SolitaireError as e:
            raise SolverBug(
                f"{start['code']}: move {i + 1} of the solution, {move!r}, is refused: {e}"
            ) from e
    if not g.won:
        raise SolverBug(f"{start['code']}: the solution ({len(solution)} moves) does not win")


def solve(
    game_or_code: RulesGame | str | dict[str, Any],
    *,
    max_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    table_mb: float = DEFAULT_TABLE_MB,
    clock: str = "wall",
    _flags: int = 0,
    _restarts: bool = True,
) -> SolveResult:
    """Solve a deal (a code such as ``"SH1-C4-AAAAAJ2"``), a :class:`Game` from its current
    position, or a position dict (``Game.to_dict``'s format).

    Returns a :class:`SolveResult`. ``"solvable"`` comes with a solution in the notation of
    docs/rules.md, replayed through :class:`Game` before it is returned (a solution that fails to
    replay raises :class:`SolverBug`). ``"unsolvable"`` only when every position reachable under the
    exact rules was searched. ``"unknown"`` when ``max_seconds``, ``max_nodes`` or the visited-set
    memory (``table_mb``, MiB) ran out first; None means no limit of that kind. ``clock``: what
    ``max_seconds`` (and the result's ``seconds``) count: ``"wall"``, elapsed time (the default),
    or ``"cpu"``, this process's CPU time (a budget that does not shrink when other work shares the
    cores: for studies on a busy machine). ``_flags``
    (``layout.FL_*``) and ``_restarts=False`` switch reductions off, for tests and measurements.

    **Thoughtful solving.** Solitaire Réfléchi and Double Solitaire hide cards from the player
    (the stock; Double Solitaire's face-down cards); the solver plays them with every card known.
    Its verdict is the upper bound of winnability: a "solvable" deal may still be lost by a player
    who cannot see the hidden cards. Seahaven Towers shows every card: its verdict is exact.

    Raises :class:`~solitaire_gym.GameCodeError` (malformed code),
    :class:`~solitaire_gym.PositionError` (malformed position),
    :class:`~solitaire_gym.errors.ArgumentError` (a budget of zero or less, or not a number; an
    unknown ``clock``).

    >>> r = solve("SH1-C4-AAAAAJ2", max_seconds=5)
    >>> r.verdict, r.thoughtful
    ('solvable', False)
    """
    max_seconds, max_nodes = check_budget(max_seconds, max_nodes)
    if clock not in ("wall", "cpu"):
        raise ArgumentError(f"clock must be 'wall' or 'cpu', not {shown(clock)}")
    if (
        isinstance(table_mb, bool)
        or not isinstance(table_mb, (int, float))
        or not 0 < table_mb <= MAX_TABLE_MB
    ):
        raise ArgumentError(
            f"table_mb must be a number of MiB in (0, {MAX_TABLE_MB}], not {shown(table_mb)}"
        )
    game = _as_game(game_or_code)
    warm_up()
    start = game.to_dict()
    fresh = RulesGame.from_code(game.code, undo_depth=0).to_dict()
    thoughtful = game.variant.game != SEAHAVEN
    verdict, reason, path, stats, seconds = run_search(
        game, max_seconds, max_nodes, table_mb, _flags, _restarts, clock=clock
    )
    solution = [action_to_move(game.cfg, a) for a in path]
    if verdict == "solvable":
        certify(start, solution)
    return SolveResult(
        code=game.code,
        verdict=verdict,
        solution=solution,
        nodes=stats["nodes"],
        seconds=round(seconds, 6),
        thoughtful=thoughtful,
        game=game.variant.name,
        reason=reason,
        max_seconds=max_seconds,
        max_nodes=max_nodes,
        note=THOUGHTFUL_NOTE if thoughtful else EXACT_NOTE,
        position=None if start == fresh else start,
        stats=stats,
    )


def hint(game: RulesGame | str | dict[str, Any], max_seconds: float | None = 2.0) -> str | None:
    """The next move of a solution from the game's current position, or None (no solution found
    within the budget, the position is lost, or the game is already won). Thoughtful in
    Solitaire Réfléchi and Double Solitaire: the hint may rely on cards the player cannot see.

    >>> from solitaire_gym import Game
    >>> hint(Game.from_code("SH1-C4-AAAAAJ2"), max_seconds=5) is not None
    True
    """
    r = solve(game, max_seconds=max_seconds)
    return r.solution[0] if r.solved and r.solution else None


__all__ = [
    "EXACT_NOTE",
    "THOUGHTFUL_NOTE",
    "VERDICTS",
    "SolveResult",
    "SolverBug",
    "certify",
    "hint",
    "solve",
    "warm_up",
]
