"""``solitaire-gym warmup``: compile every numba kernel of the package now, and the agents', so
that no later first call waits for the compiler.

    solitaire-gym warmup               # everything: Game, envs, vector env, batches, solver, agents
    solitaire-gym warmup --skip solver
    solitaire-gym warmup --jobs 1      # one process (the default is two where there are 2 cores)

Each part runs the public calls that load its kernels (a Game played and undone and moves of every
kind read, an env stepped in both action modes, a vector env large enough to step on all cores
and a small one with each observation dtype, batches dealt, stepped, undone and redealt, the
solver on a short deal, the greedy player, the search player and the play memory of ``agents``
over a few moves as the evaluation and the demo play them) and prints
how long it took and how many kernels it compiled; kernels already in numba's on-disk cache only
load (a second run takes seconds). While a part compiles, a line shows its seconds so far, how
many of its kernels have compiled and which one is compiling (on a terminal, one line rewritten
every second; elsewhere, a line every :data:`PERIOD` seconds). The ``agents`` part is skipped
when the ``agents`` package (shipped beside this one) cannot be imported. With ``--jobs 2`` (the
default on two cores or more) the solver part, the longest, compiles in a second process while
this one runs the others, and both print a line every :data:`PERIOD` seconds. The Makefile's
setup runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from numba.core import event

from solitaire_gym import _compile_notice
from solitaire_gym.errors import ArgumentError

CODE = "SH1-C4-AAAAAJ2"
PERIOD = 10.0
"""Seconds between progress lines when the output is not a terminal."""
OURS = ("solitaire_gym.", "agents.")
"""The modules whose kernels warmup counts: the package's and the agents'."""


def _first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _first_illegal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


def _game() -> None:
    from solitaire_gym import Game
    from solitaire_gym.engine.actions import move_to_action
    from solitaire_gym.engine.cards import rank_of, suit_of

    g = Game.from_code(CODE)
    g.explain("t3>t5")
    g.play(g.legal_moves()[0])
    g.undo()
    g.tap("t1")
    g.double_tap("t10")
    h = Game.from_dict(g.to_dict())
    h.copy().legal_actions()
    k = Game.from_code("DS1-D1N-AAAAAAB")
    k.play("draw")
    k.undo()
    # kernels that Python code calls directly, not only from other kernels: a position with a
    # card on a foundation (to_dict names it), and a card's rank and suit (agents.networks)
    k = Game.from_code("SH1-C4-AAAAAAF")  # a deal with a card for a foundation at once
    k.play(next(m for m in k.legal_moves() if m.endswith(">f")))
    k.to_dict()
    rank_of(0), suit_of(0)
    # a move of each kind read from text: Python calls the action encoders itself there (the
    # demo's teacher reads the solver's plans so)
    for move in ("t3>t5", "t3:2>t5", "c1>t2", "f1>t2"):
        move_to_action(g.cfg, move)


def _env() -> None:
    from solitaire_gym import SolitaireEnv

    for mode in ("move", "tap"):
        env = SolitaireEnv("double_solitaire", action_mode=mode, undo=True)
        _, info = env.reset(seed=0)
        _, _, _, _, info = env.step(_first_legal(info["action_mask"]))
        env.step(_first_illegal(info["action_mask"]))
        env.step(env.action_space.n - 1)  # undo
        env.reset(options={"state": env.to_dict()})


def _vector_env() -> None:
    from solitaire_gym import SolitaireVectorEnv
    from solitaire_gym.envs.sampling import random_legal_actions

    rng = np.random.default_rng(0)
    # one thread, then all cores (from 256 games; 640 with workqueue); the uint8 observation on
    # one thread (its step on all cores is a minute of compiling more, paid at its first use)
    for n, dtype in ((2, "float32"), (2, "uint8"), (640, "float32")):
        env = SolitaireVectorEnv(n, "seahaven_towers", obs_dtype=dtype)
        _, info = env.reset(seed=0)
        for _ in range(2):
            _, _, _, _, info = env.step(random_legal_actions(info["action_mask"], rng))
        env.reset(seed=1, options={"reset_mask": np.arange(n) % 2 == 0})
    random_legal_actions(np.ones((2048, 4), np.int8), rng)  # the sampler on all cores


def _batch() -> None:
    from solitaire_gym.engine.batch import Batch
    from solitaire_gym.engine.information import redeal_unseen
    from solitaire_gym.engine.variants import parse_code

    batch = Batch(parse_code("TF1-D1N-AAAAAAB")[0], 8, undo_depth=4)
    batch.deal(np.arange(8))
    masks = batch.masks()
    batch.step(np.array([_first_legal(m) for m in masks]))
    batch.undo(np.arange(8))
    # deals consistent with what the player has seen: the search players' determinizations
    redeal_unseen(batch.state, np.arange(8), np.random.default_rng(0))
    redeal_unseen(batch.state, np.arange(8))


def _solver() -> None:
    from solitaire_gym import Game
    from solitaire_gym.solver import solve, warm_up

    warm_up()
    solve(CODE, max_seconds=30)
    Game.from_code(CODE).hint()


class Skipped(Exception):
    """A part that cannot run here (what it warms is not installed); the message says why."""


def _agents() -> None:
    """The greedy player's kernels (``agents/greedy.py``: evaluation, the search player, the
    teacher), the search player's own (``agents/search/rollouts.py``: its noisy rollouts) and the
    play memory's (``agents/memory.py``: the networks' memory, teacher data), called as the
    agents call them."""
    try:
        from agents.greedy import GreedyAgent, obs_hashes
        from agents.memory import PlayMemory, tried_counts
        from agents.play import play_deals
        from agents.search import RolloutSearch
    except ImportError as e:
        raise Skipped(f"the agents package cannot be imported ({e})") from None
    from solitaire_gym import SolitaireVectorEnv

    for game in ("double_solitaire", "seahaven_towers"):
        play_deals(GreedyAgent(), game, None, [0, 1], max_episode_steps=4)
    # the search player's own kernels (its noisy rollouts), on a game that hides nothing
    search = RolloutSearch("seahaven_towers", None, nodes=64)
    play_deals(search, "seahaven_towers", None, [0], max_episode_steps=2)
    env = SolitaireVectorEnv(2, "double_solitaire")
    obs, info = env.reset(seed=0)
    masks = info["action_mask"].astype(bool)
    obs_hashes(np.ascontiguousarray(obs, np.float32))
    played = np.array([_first_legal(m) for m in masks])
    for mode in ("count", "relative"):
        memory = PlayMemory(2, mode)
        memory.counts(obs, masks)
        memory.record(obs, played, np.ones(2, bool))
        tried_counts(obs, masks, played, np.zeros(2, np.int64), mode)


PARTS: dict[str, Callable[[], None]] = {
    "game": _game,
    "env": _env,
    "vector": _vector_env,
    "batch": _batch,
    "solver": _solver,
    "agents": _agents,
}


SIDE = ("solver",)
"""The parts that ``jobs`` of 2 or more runs in a second process: the solver's search compiles for
minutes, about three quarters of a cold warmup."""


class _Progress(event.Listener):
    """Counts the kernels of :data:`OURS` that compile (numba's ``numba:compile`` event: not those
    loaded from the cache) and shows, while a part runs, its seconds so far, its kernels compiled
    so far and the one compiling now: ``live`` (a terminal), one line rewritten every second and at
    each kernel; else a line every :data:`PERIOD` seconds. A ticking thread keeps the line going
    through one long kernel (the solver's search compiles for minutes; numba's compiler lets
    other threads run meanwhile)."""

    def __init__(self, out, live: bool) -> None:
        self.out, self.live = out, live
        self.lock = threading.Lock()
        self.compiled = 0
        self.part, self.before, self.start = "", 0, 0.0
        self.compiling: list[str] = []  # ours, nested: the innermost last
        self.running = False  # a part is running: the ticker shows it
        self.stop = threading.Event()
        self.ticker = threading.Thread(target=self._tick, daemon=True)

    def _write(self, text: str, newline: bool) -> None:  # with the lock held
        print(text, end="\n" if newline else "", file=self.out, flush=True)

    def line(self) -> str:
        """The progress of the running part, as one line."""
        now = time.perf_counter()
        text = f"warmup: {self.part} ... {now - self.start:.0f} s, kernels compiled: "
        text += str(self.compiled - self.before)
        if self.compiling:
            text += f", now {self.compiling[-1]}"
        return text

    def _show(self) -> None:  # with the lock held
        if not self.running:
            return
        if self.live:
            width = shutil.get_terminal_size().columns - 1
            self._write(f"\r{self.line()[:width]}\x1b[K", newline=False)
        else:
            self._write(self.line(), newline=True)

    def _tick(self) -> None:
        while not self.stop.wait(1.0 if self.live else PERIOD):
            with self.lock:
                self._show()

    def begin(self, part: str) -> None:
        with self.lock:
            self.part, self.before = part, self.compiled
            self.start = time.perf_counter()
            self.running = True
            self._write(f"warmup: {part} ...", newline=not self.live)
        if not self.ticker.is_alive() and not self.stop.is_set():
            self.ticker.start()

    def end(self, text: str) -> None:
        """Close the running part's line with ``text``."""
        with self.lock:
            self.running = False
            line = f"warmup: {self.part} ... {text}"
            self._write(f"\r{line}\x1b[K" if self.live else line, newline=True)

    def close(self) -> None:
        self.stop.set()
        if self.ticker.is_alive():
            self.ticker.join()

    @staticmethod
    def _ours(ev: event.Event) -> str | None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        module = getattr(func, "__module__", None) or ""
        if not module.startswith(OURS):
            return None
        return f"{module.removeprefix('solitaire_gym.')}.{func.__qualname__}"

    def on_start(self, ev: event.Event) -> None:
        name = self._ours(ev)
        if name is None:
            return
        with self.lock:
            self.compiled += 1
            self.compiling.append(name)
            if self.live:
                self._show()

    def on_end(self, ev: event.Event) -> None:
        name = self._ours(ev)
        if name is not None:
            with self.lock:
                if name in self.compiling:
                    self.compiling.remove(name)


@contextlib.contextmanager
def _listening(out, live: bool) -> Iterator[_Progress]:
    """A :class:`_Progress` on ``out`` that hears numba's compiles while the block runs (the
    compile notice is not printed: its lines say it instead)."""
    _compile_notice.NOTICE.shown = True
    progress = _Progress(out, live=live)
    event.register("numba:compile", progress)
    try:
        yield progress
    finally:
        event.unregister("numba:compile", progress)
        progress.close()


def _run(parts: list[str], progress: _Progress) -> dict[str, tuple[float, int]]:
    results: dict[str, tuple[float, int]] = {}
    for name in parts:
        progress.begin(name)
        try:
            PARTS[name]()
        except Skipped as e:
            progress.end(f"skipped: {e}")
            continue
        took = time.perf_counter() - progress.start
        compiled = progress.compiled - progress.before
        results[name] = (took, compiled)
        done = f"{compiled} kernels compiled" if compiled else "all cached"
        progress.end(f"{took:.1f} s ({done})")
    return results


def _side(parts: list[str]) -> dict[str, tuple[float, int]]:
    """The second process of :func:`warmup` runs this: ``parts``, its progress on its standard
    output (one line every :data:`PERIOD` seconds). It ends when its parent does (killed, it
    would not tell this process)."""
    parent = os.getppid()

    def orphaned() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=orphaned, daemon=True).start()
    with _listening(sys.stdout, live=False) as progress:
        return _run(parts, progress)


def default_jobs() -> int:
    """Two processes where there are two cores or more and numba's cache saves are serialised
    (``fcntl``: not on Windows, where two processes saving at once could mix their entries),
    else one."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return 1
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def warmup(parts: list[str], out=sys.stdout, jobs: int = 1) -> dict[str, tuple[float, int]]:
    """Run ``parts`` (names in :data:`PARTS`); returns ``{part: (seconds, kernels compiled)}``
    (a part skipped because what it warms is not installed is left out).

    With ``jobs`` of 2 or more, the parts of :data:`SIDE` among ``parts`` run in a second process
    (spawned) while this one runs the others; the second process prints its lines on the standard
    output, and both print a line every :data:`PERIOD` seconds (no line rewritten in place). Two
    processes may compile the same kernel at once: numba's saves are serialised
    (``solitaire_gym._cache.guard_concurrent_saves``), and each process runs the kernel it
    compiled."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ArgumentError(f"jobs must be a whole number of at least 1, not {jobs!r}")
    unknown = [name for name in parts if name not in PARTS]
    if unknown:
        raise ArgumentError(f"no warmup part {unknown[0]!r}: the parts are {', '.join(PARTS)}")
    side = [name for name in parts if name in SIDE] if jobs > 1 else []
    here = [name for name in parts if name not in side]
    if not here:  # nothing to run beside it
        here, side = side, []
    live = getattr(out, "isatty", lambda: False)() and not side
    start = time.perf_counter()
    results: dict[str, tuple[float, int]] = {}
    with _listening(out, live) as progress:
        if side:
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(1, mp_context=context) as pool:
                future = pool.submit(_side, side)
                results.update(_run(here, progress))
                results.update(future.result())
        else:
            results.update(_run(here, progress))
    total = time.perf_counter() - start
    print(f"warmup: done in {total:.1f} s; later first calls load from the cache", file=out)
    return {name: results[name] for name in parts if name in results}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "warmup",
        help="compile every numba kernel now (the first use of each part is then fast)",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument(
        "--skip",
        nargs="+",
        default=[],
        choices=list(PARTS),
        metavar="PART",
        help=f"parts to leave out ({', '.join(PARTS)})",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=default_jobs(),
        metavar="N",
        help="processes: with 2 or more, the solver part compiles in a second process beside "
        "the others (default: 2 where there are two cores or more)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    warmup([name for name in PARTS if name not in args.skip], jobs=args.jobs)
    return 0
