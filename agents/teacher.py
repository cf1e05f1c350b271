"""The solver as a teacher: labels for imitation learning, from any position a game reaches.

A solver solution is one winning line among many, so its moves make a noisy label (cloning them
won 2.5% of Seahaven deals with 332k positions). The teacher here labels with a consistent rule
instead: **the greedy player's choice among the moves after which the solver still finds a win**.
In each position it tries the legal moves in the order the greedy player ranks them
(:meth:`agents.greedy.GreedyAgent.ranking`) and takes the first one whose resulting position the
solver proves winnable within ``max_nodes`` nodes. So the label keeps the game winnable whenever
the solver can show how, and makes progress the way the greedy player does.

**Known limit: the teacher can go round in circles.** Every move it labels may keep the game
winnable and yet lead nowhere: the greedy order, with its memory of the moves already played
from a position, can cycle through positions that are all winnable. On Seahaven Towers (4 cells)
the teacher wins 1708 of training deals 0 … 1999 (85.4%); 111 of the 292 others reach the step
limit (500 moves) with every label safe (e.g. training deals 3 and 10), the rest end lost. The
292 games hold 28% of the positions (62,870 of 224,818), and labels in a cycle depend on the
memory, which a student does not see; a trainer may drop them (``train.teacher_wins_only``).

**Breaking the circles** (``on_repeat="plan"``). The teacher remembers every position of its
game. Meeting one again means it is going round, and from there it follows the solver's plan
(the win its last call found, or a fresh call from this position) instead of greedy's choice,
until the game has more cards on the foundations than it ever had before; then greedy's order
takes over again. Every label stays a proven-winnable move, and a teacher game ends in a win
whenever the solver finds its plans. The default, ``on_repeat="greedy"``, is the rule above
without this, as the committed checkpoints were trained. Measured on Double Solitaire, draw 3
(training deals 0 … 449, ``max_nodes`` 20,000): with ``"greedy"`` the teacher won 222 games;
all 228 others reached the step limit (2000 moves), 213 of them with every label safe.

What a position gets when no move is proven to keep it winnable (the position is lost, or every
try ran out of nodes): the greedy player's own first choice, and ``safe = False`` in the record,
so a trainer can weigh or drop it. Trying a move costs one solver call, except when the move is
the next move of the plan the last call found (then the rest of that plan proves it).

**Thoughtful teacher.** In Solitaire Réfléchi and Double Solitaire the solver sees every card,
the stock's order and Double Solitaire's face-down cards included; the student sees only the
observation (the player's information). The labels are those of a player who knows the hidden
cards: a student can only approximate them. In Seahaven Towers every card is in view and the
teacher's information equals the student's.

Play: :func:`teach_deal` plays one deal to its end, either the teacher itself (each label is
played) or a student (``student``: any :class:`~agents.base.Agent`; the teacher labels each
position the student reaches and the student's move is played: DAgger), and returns the
records.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.dataset import Episode, game_starts, read_meta, split_episodes, write_shard
from agents.greedy import GreedyAgent
from solitaire_gym.engine.threads import SHARED_CORE_THREADS, set_torch_threads
from solitaire_gym.envs.core import DEFAULT_MAX_EPISODE_STEPS, EnvCore, EnvOptions
from solitaire_gym.errors import is_int, shown
from solitaire_gym.game import Game
from solitaire_gym.solver.search import run_search

TABLE_MB = 16.0  # the solver's visited-set memory per call: plenty for ``max_nodes``

DEFAULT_MAX_NODES = 20_000
TEACHERS = ("safe-greedy", "search")
"""Who labels: the solver-backed greedy teacher of this module, or the search player
(``agents/search/expert.py``: expert iteration)."""
ON_REPEAT = ("greedy", "plan")
"""What the teacher labels in a position its game has met before (module docstring)."""
MAX_TRIES = 8  # moves the teacher tries per position before it answers greedy's choice
"""Solver nodes per tried move. Seahaven positions are decided in ~2 ms on average at this
budget; a move whose child stays undecided counts as not safe."""


def prove(g: Game, max_nodes: int) -> tuple[str, list[int]]:
    """The solver's verdict on ``g``'s position within ``max_nodes`` nodes, and the actions of
    the win it found (empty unless ``"solvable"``; a won game is solvable with no move left).
    The search itself, without replaying the solution through Game (``solve``'s certificate,
    half the cost here): a caller needs the verdict and a plan to follow, and a plan that
    turned out wrong would be refused by the env, not followed."""
    if g.won:
        return "solvable", []
    verdict, _, path, _, _ = run_search(g, None, max_nodes, TABLE_MB)
    return verdict, ([int(a) for a in path] if verdict == "solvable" else [])


def first_winnable(start: dict, order, plan: list[str], action_to_move, max_nodes: int,
                   max_tries: int) -> tuple[int | None, list[str], int]:  # fmt: skip
    """The first action of ``order[:max_tries]`` after which the solver proves a win from the
    position ``start`` (``Game.to_dict()``), the rest of that win as moves, and the solver calls
    made: ``(action, plan, calls)``, or ``(None, [], calls)`` when no try is proven. An action
    that is the next move of ``plan`` (the rest of the last win found from ``start``) is proven
    by it, without a call. The teacher tries greedy's order with it (:meth:`SafeGreedyTeacher.
    label`), the solver's veto a policy's (``agents/veto.py``)."""
    calls = 0
    for a in order[:max_tries]:
        move = action_to_move(int(a))
        if plan and plan[0] == move:
            return int(a), plan[1:], calls
        g = Game.from_dict(start)
        g.play(move)
        calls += not g.won
        verdict, path = prove(g, max_nodes)
        if verdict == "solvable":
            return int(a), [action_to_move(b) for b in path], calls
    return None, [], calls


class SafeGreedyTeacher:
    """Labels positions of ``game`` / ``options`` (see the module docstring).

    ``max_nodes``: solver budget per tried move; ``max_tries``: moves tried per position before
    the teacher gives up and answers the greedy choice (unsafe); ``on_repeat``: what it labels
    in a position its game has met before (:data:`ON_REPEAT`)."""

    def __init__(
        self,
        game: str,
        options: dict | None = None,
        *,
        max_nodes: int = DEFAULT_MAX_NODES,
        max_tries: int = MAX_TRIES,
        on_repeat: str = "greedy",
    ) -> None:
        if not is_int(max_nodes) or max_nodes < 1:
            raise ValueError(f"max_nodes must be a positive integer, not {max_nodes!r}")
        if not is_int(max_tries) or max_tries < 1:
            raise ValueError(f"max_tries must be a positive integer, not {max_tries!r}")
        check_on_repeat(on_repeat)
        self.on_repeat = on_repeat
        self.game = game
        self.options = dict(options or {})
        self.max_nodes = int(max_nodes)
        self.max_tries = int(max_tries)
        self.greedy = GreedyAgent(game, self.options)
        self.plan: list[str] = []  # the rest of the last solution found, from this position
        self.calls = 0
        self.seen: set[bytes] = set()  # the positions of this game (their observations)
        self.most_home = -1  # the most foundation cards this game has had
        self.following = False  # following the plan out of a circle (``on_repeat="plan"``)

    def reset(self) -> None:
        self.greedy.reset(1)
        self.plan = []
        self.seen = set()
        self.most_home = -1
        self.following = False

    def _out_of_circle(self, core: EnvCore, row: int) -> int | None:
        """With ``on_repeat="plan"``: the plan's next action when this position was met before or
        the teacher is still following its plan out of a circle; ``None`` to label as usual."""
        key = core.obs[row].tobytes()
        repeat = key in self.seen
        self.seen.add(key)
        home = int(core.foundation_cards()[row])
        if home > self.most_home:
            self.most_home = home
            self.following = False
        if not (repeat or self.following):
            return None
        if not self.plan:
            g = Game.from_dict(core.to_dict(row))
            self.calls += 1
            verdict, path = prove(g, self.max_nodes)
            if verdict != "solvable" or not path:
                self.following = False
                return None
            self.plan = [core.action_to_move(b) for b in path]
        self.following = True
        move = self.plan.pop(0)
        return int(core.move_to_action(move))

    def label(self, core: EnvCore, row: int = 0) -> tuple[int, bool]:
        """The teacher's action for game ``row`` of ``core`` and whether it is proven safe."""
        if self.on_repeat == "plan":
            a = self._out_of_circle(core, row)
            if a is not None:
                return a, True
        obs = core.obs[row : row + 1]
        mask = core.masks[row : row + 1].astype(bool)
        ranks = self.greedy.ranking(obs, mask, np.ones(1, bool))[0]
        legal = np.flatnonzero(np.isfinite(ranks))
        if legal.size == 0:
            raise ValueError(f"{core.codes[row]}: no legal move to label")
        order = legal[np.argsort(-ranks[legal], kind="stable")]
        a, self.plan, calls = first_winnable(core.to_dict(row), order, self.plan,
                                             core.action_to_move, self.max_nodes,
                                             self.max_tries)  # fmt: skip
        self.calls += calls
        if a is None:
            return int(order[0]), False
        return a, True

    def played(self, core: EnvCore, action: int, label: int, row: int = 0) -> None:
        """Tell the teacher that ``action`` is played from game ``row``'s current position (call
        before stepping): its greedy memory follows the game, and its plan is kept only if the
        move played is the one it labelled."""
        self.greedy.record(core.obs[row : row + 1], np.array([action]), np.ones(1, bool))
        if action != label:
            self.plan = []
            self.following = False


def check_on_repeat(on_repeat: object) -> None:
    """Refuse an ``on_repeat`` that is not one of :data:`ON_REPEAT`."""
    if on_repeat not in ON_REPEAT:
        raise ValueError(f"on_repeat must be one of {', '.join(ON_REPEAT)}, not {on_repeat!r}")


def teacher_orders(data: dict, game: str, options: dict | None = None,
                   k: int = MAX_TRIES) -> np.ndarray:  # fmt: skip
    """The first ``k`` moves of the greedy order the teacher tried at each position of
    ``data`` (:func:`agents.dataset.load_shards`: positions stored game after game in the order
    played), as (T, k) int16 action ids padded with -1.

    The teacher's order is :meth:`GreedyAgent.ranking` with the greedy memory following the
    moves *played* (``SafeGreedyTeacher.played``), so replaying each game's observations and
    played moves through a fresh greedy player gives it back exactly. With the label and its
    ``safe`` flag it tells what the solver said of each tried move: the moves before the label
    were tried and not shown winnable; the label was shown winnable when ``safe``; an unsafe
    position's first ``max_tries`` moves were all tried and failed. The winnability head of a
    ``heads="factored"`` network learns from these (:func:`agents.imitation.fit`)."""
    greedy = GreedyAgent(game, options)
    obs, masks, played, ep = data["obs"], data["masks"], data["played"], data["episode"]
    n = len(played)
    out = np.full((n, k), -1, np.int16)
    one = np.ones(1, bool)
    for a, b in itertools.pairwise(game_starts(ep).tolist()):
        greedy.reset(1)
        for t in range(a, b):
            o = obs[t : t + 1]
            r = greedy.ranking(o, masks[t : t + 1], one)[0]
            legal = np.flatnonzero(np.isfinite(r))
            order = legal[np.argsort(-r[legal], kind="stable")][:k]
            out[t, : order.size] = order
            greedy.record(o, played[t : t + 1], one)
    return out


def teach_deal(
    game: str,
    options: dict | None,
    deal: int,
    *,
    student: Agent | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_steps: int | None = None,
    stop_unsafe: int = 0,
    on_repeat: str = "greedy",
) -> Episode:
    """Play ``deal`` to its end (won, no legal move, or ``max_steps``: the env's step limit by
    default) with the teacher's labels, or with ``student``'s moves labelled by the teacher.

    ``stop_unsafe`` (0: never) ends the game after that many positions in a row without a safe
    label (all of them recorded). A student's game is then almost always lost already, and the
    rest of it would cost the most solver calls (every try fails) for the labels a trainer
    weighs least; on Réfléchi draw 1 a student's lost game left to the step limit has 30–130
    safe positions of 1000. ``on_repeat``: see :class:`SafeGreedyTeacher`."""
    if not is_int(stop_unsafe) or stop_unsafe < 0:
        raise ValueError(f"stop_unsafe must be a non-negative integer, not {stop_unsafe!r}")
    opts = EnvOptions.build(game, **(options or {}), split="eval")
    core = EnvCore(opts, 1)
    core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
    teacher = SafeGreedyTeacher(game, options, max_nodes=max_nodes, on_repeat=on_repeat)
    teacher.reset()
    if student is not None:
        student.check_env(game, options)
        student.reset(1)
    limit = max_steps or DEFAULT_MAX_EPISODE_STEPS[opts.variant.prefix]
    obs, masks, labels, safe, played = [], [], [], [], []
    act = np.zeros(1, np.int64)
    first = True
    unsafe_run = 0
    while not core.won[0] and core.counts[0] > 0 and len(labels) < limit:
        if stop_unsafe and unsafe_run >= stop_unsafe:
            break
        a, ok = teacher.label(core)
        unsafe_run = 0 if ok else unsafe_run + 1
        p = a
        if student is not None:
            p = int(
                student.act(
                    core.obs.copy(),
                    core.masks.astype(bool),
                    starts=np.array([first]),
                    active=np.ones(1, bool),
                )[0]
            )
        first = False
        obs.append(core.obs[0].copy())
        masks.append(core.masks[0].astype(bool))
        labels.append(a)
        safe.append(ok)
        played.append(p)
        teacher.played(core, p, a)
        act[0] = p
        core.step(act)
    n_act, dim = core.n_actions, core.obs_dim
    return Episode(
        deal=int(deal),
        obs=np.array(obs, np.float32).reshape(-1, dim),
        masks=np.array(masks, bool).reshape(-1, n_act),
        labels=np.array(labels, np.int16),
        safe=np.array(safe, bool),
        played=np.array(played, np.int16),
        won=bool(core.won[0]),
        solver_calls=teacher.calls,
    )


# ---- many deals: shards on disk, resumable -------------------------------------------------------


def chunk_name(lo: int, hi: int) -> str:
    """The shard file of training deals ``lo … hi-1`` (offsets into the training split). A chunk
    whose shard would take more memory to load than a shard may
    (:data:`agents.dataset.MAX_SHARD_MEMORY`) is written as several (:func:`chunk_names`); this
    one is always written last, so that it exists only once its chunk is complete."""
    return f"deals-{lo:09d}-{hi:09d}.npz"


def chunk_names(lo: int, hi: int, parts: int) -> list[str]:
    """The ``parts`` shard files of training deals ``lo … hi-1``, in the order of their deals
    and of writing: ``deals-<lo>-<hi>-part001.npz`` … for all but the last, then
    :func:`chunk_name` (so they sort in that order, and ``*.npz`` finds them all)."""
    stem = chunk_name(lo, hi).removesuffix(".npz")
    return [f"{stem}-part{k:03d}.npz" for k in range(1, parts)] + [chunk_name(lo, hi)]


def _stale_parts(out: Path, names: list[str]) -> list[Path]:
    """The part files in ``out`` of the chunk whose files are ``names`` (:func:`chunk_names`)
    that are not among them: left by an interrupted try that cut the chunk otherwise. They hold
    some of its deals again, so they go before the chunk's last file is written."""
    stem = names[-1].removesuffix(".npz")
    return [
        p
        for p in out.glob(f"{stem}-part*.npz")
        if p.name not in names and p.name[len(stem) + 5 : -4].isdigit()
    ]


def teach_chunk(task: dict) -> dict:
    """Play and label training deals ``task["lo"] … task["hi"]-1`` (offsets into the training
    split) of ``task["variant"]`` and write their shards to ``task["out"]`` (one, or several when
    one would take too much memory to load: :func:`chunk_names`). With ``task["student"]`` (a
    policy checkpoint path) the student plays (DAgger). Returns a summary (deals, positions,
    wins, solver calls, seconds). The unit of work of :func:`make_shards`, and of any other
    scheduler (a process pool, a Ray task): it needs nothing but its ``task``."""
    import time

    from agents.play import VARIANTS
    from solitaire_gym.envs.core import EVAL_SPLIT_END

    t0 = time.perf_counter()
    game, options = VARIANTS[task["variant"]]
    student = None
    if task.get("student"):
        from agents.policy import load_policy

        student = load_policy(task["student"], game=game, options=options)
    max_nodes = task.get("max_nodes", DEFAULT_MAX_NODES)
    stop_unsafe = task.get("stop_unsafe", 0)
    on_repeat = task.get("on_repeat", "greedy")
    kind = task.get("teacher", "safe-greedy")
    deals = [EVAL_SPLIT_END + i for i in range(task["lo"], task["hi"])]
    if kind == "search":
        from agents.search.expert import search_episodes

        episodes = search_episodes(game, options, deals, nodes=task["nodes"], student=student,
                                   stop_unsafe=stop_unsafe, seed=task.get("seed", 0))  # fmt: skip
    else:
        episodes = [
            teach_deal(
                game,
                options,
                d,
                student=student,
                max_nodes=max_nodes,
                stop_unsafe=stop_unsafe,
                on_repeat=on_repeat,
            )
            for d in deals
        ]
    meta = {
        "variant": task["variant"],
        "game": game,
        "options": options,
        "deals": [task["lo"], task["hi"]],
        "student": str(task.get("student") or ""),
        "max_nodes": max_nodes,
        "stop_unsafe": stop_unsafe,
        "teacher": kind,
        "on_repeat": on_repeat,
    }
    if kind == "search":
        meta["nodes"] = task["nodes"]
    from solitaire_gym.envs.observation import layout_id

    meta["layout_id"] = layout_id(EnvOptions.build(game, **options).variant.cfg)
    summary = {
        "deals": len(episodes),
        "positions": int(sum(len(e.labels) for e in episodes)),
        "won": int(sum(e.won for e in episodes)),
        "unsafe": int(sum(int((~e.safe).sum()) for e in episodes)),
        "solver_calls": int(sum(e.solver_calls for e in episodes)),
        "seconds": time.perf_counter() - t0,
    }
    runs = split_episodes(episodes, meta)
    names = chunk_names(task["lo"], task["hi"], len(runs))
    if task.get("return_shard"):  # a worker of a cluster: the driver writes the files
        import io

        shards = []
        for name, run in zip(names, runs, strict=True):
            buf = io.BytesIO()
            write_shard(buf, run, meta)
            shards.append((name, buf.getvalue()))
        return {**summary, "shards": shards}
    out = Path(task["out"])
    for name, run in zip(names, runs, strict=True):
        if name == names[-1]:
            for p in _stale_parts(out, names):
                p.unlink()
        write_shard(out / name, run, meta)
    return summary


def _write_returned(out: Path, r: dict) -> dict:
    """Write the shards a Ray worker sent back (each atomically, the chunk's last file last, as
    :func:`teach_chunk` does), and pass its summary on."""
    out.mkdir(parents=True, exist_ok=True)
    shards = r.pop("shards")
    names = [name for name, _ in shards]
    for name, data in shards:
        if name == names[-1]:
            for p in _stale_parts(out, names):
                p.unlink()
        tmp = out / (name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, out / name)
    return r


def warm_teacher(variant: str, teacher: str = "safe-greedy") -> None:
    """Compile (or load) here every kernel a worker of :func:`make_shards` calls, so that the
    workers load them from numba's cache instead of each compiling them at once: a teacher's
    game long enough to put cards on the foundations (the positions' records name them), a
    solver's solution shortened and replayed, and the search's labels."""
    from agents.play import VARIANTS
    from solitaire_gym.solver import solve
    from solitaire_gym.solver.batch import WARM_CODE
    from solitaire_gym.solver.search import warm_up

    game, options = VARIANTS[variant]
    teach_deal(game, options, 0, max_steps=40, max_nodes=100)
    warm_up()
    solve(WARM_CODE, max_seconds=None, max_nodes=100_000)
    if teacher == "search":
        from agents.search.expert import search_episodes

        search_episodes(game, options, [0], nodes=64, max_steps=2)


@contextlib.contextmanager
def workers_closed(pool, bar):
    """Around the loop over a pool's results: whatever happens, end the ``pool`` (a
    ``multiprocessing`` pool, or None) and close the progress ``bar`` (or None)."""
    try:
        yield
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        if bar is not None:
            bar.close()


def _init_worker() -> None:
    with contextlib.suppress(ImportError):  # no torch: no network to play
        set_torch_threads(SHARED_CORE_THREADS)


def make_shards(
    variant: str,
    lo: int,
    hi: int,
    out: str | os.PathLike[str],
    *,
    student: str | os.PathLike[str] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    stop_unsafe: int = 0,
    on_repeat: str = "greedy",
    teacher: str = "safe-greedy",
    nodes: int = 256,
    chunk: int = 25,
    jobs: int = 1,
    progress: bool = True,
    ray: str | None = None,
) -> dict:
    """Teacher data for training deals ``lo … hi-1`` in shards of ``chunk`` deals under ``out``,
    on ``jobs`` processes, or as Ray tasks with ``ray`` (an address, or ``"local"``: see
    ``solitaire_gym.distributed``; the workers send their shards back and this process writes
    them, so a cluster needs no shared disk). Shards already there are kept (the same command
    resumes; a shard there made with another ``on_repeat`` is refused). ``stop_unsafe``,
    ``on_repeat``: see :func:`teach_deal`. ``teacher`` (:data:`TEACHERS`): ``"search"`` labels
    with the search player at ``nodes`` nodes per move instead of the solver (expert iteration:
    ``agents/search/expert.py``; a chunk's deals are played as one batch). Returns the totals of
    the shards made now."""
    from agents.play import VARIANTS

    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r} is not one of {', '.join(VARIANTS)}")
    for name, v in (("lo", lo), ("hi", hi), ("chunk", chunk), ("jobs", jobs),
                    ("stop_unsafe", stop_unsafe)):  # fmt: skip
        least = 1 if name in ("hi", "chunk", "jobs") else 0
        if not is_int(v) or v < least:
            kind = "a positive" if least else "a non-negative"
            raise ValueError(f"{name} must be {kind} integer, not {v!r}")
    check_on_repeat(on_repeat)
    if teacher not in TEACHERS:
        raise ValueError(f"teacher must be one of {', '.join(TEACHERS)}, not {teacher!r}")
    if not is_int(nodes) or not 1 <= nodes <= 1 << 20:
        raise ValueError(f"nodes must be an integer in 1 … {1 << 20}, not {nodes!r}")
    lo, hi, chunk, jobs, stop_unsafe, nodes = map(int, (lo, hi, chunk, jobs, stop_unsafe, nodes))
    if hi <= lo:
        raise ValueError(f"no deals in {lo} … {hi - 1}")
    out = Path(out)
    tasks = []
    for a in range(lo, hi, chunk):
        b = min(hi, a + chunk)
        done = out / chunk_name(a, b)
        if done.exists():
            meta = read_meta(done)
            mine = {"on_repeat": on_repeat, "teacher": teacher}
            if teacher == "search":
                mine["nodes"] = nodes
            for key, value in mine.items():
                theirs = meta.get(key, {"on_repeat": "greedy", "teacher": "safe-greedy"}.get(key))
                if theirs != value:
                    raise ValueError(f"{done} was made with {key}={shown(theirs)}, not "
                                     f"{value!r}: write these shards to another folder")  # fmt: skip
        else:
            tasks.append({"variant": variant, "lo": a, "hi": b, "out": str(out),
                          "student": str(student) if student else None,
                          "max_nodes": max_nodes, "stop_unsafe": stop_unsafe,
                          "on_repeat": on_repeat, "teacher": teacher,
                          "nodes": nodes})  # fmt: skip
    totals = {"deals": 0, "positions": 0, "won": 0, "unsafe": 0, "solver_calls": 0}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=sum(t["hi"] - t["lo"] for t in tasks), unit="deal", desc=variant)
    if tasks:
        warm_teacher(variant, teacher)
    pool = None
    if ray is not None:
        from solitaire_gym.distributed import map_chunks

        for t in tasks:
            t["return_shard"] = True
        results = (
            _write_returned(out, r)
            for _, r in map_chunks(teach_chunk, tasks, address=ray, jobs=jobs)
        )
    elif jobs == 1 or len(tasks) <= 1:
        _init_worker()
        results = map(teach_chunk, tasks)
    else:
        import multiprocessing as mp

        pool = mp.get_context("spawn").Pool(min(jobs, len(tasks)), initializer=_init_worker)
        results = pool.imap_unordered(teach_chunk, tasks)
    with workers_closed(pool, bar):
        for r in results:
            for k in totals:
                totals[k] += r[k]
            if bar is not None:
                bar.update(r["deals"])
                bar.set_postfix(won=totals["won"], positions=totals["positions"])
    return totals
