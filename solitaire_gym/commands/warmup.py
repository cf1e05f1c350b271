"""``solitaire-gym warmup``: compile every numba kernel of the package now, so that no later
first call waits for the compiler.

    solitaire-gym warmup               # everything: Game, envs, vector env, batches, solver
    solitaire-gym warmup --skip solver

Each part runs the public calls that load its kernels (a Game played and undone, an env stepped
in both action modes, a vector env large enough to step on all cores, the solver on a short
deal) and prints how long it took and how many kernels it compiled; kernels already in numba's
on-disk cache only load (a second run takes seconds). The Makefile's setup runs it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np
from numba.core import event

from solitaire_gym import _compile_notice

CODE = "SH1-C4-AAAAAJ2"


def _first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _first_illegal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


def _game() -> None:
    from solitaire_gym import Game
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
    # card on a foundation (to_dict names it), and a card's rank and suit (agents.policy)
    k = Game.from_code("SH1-C4-AAAAAAF")  # a deal with a card for a foundation at once
    k.play(next(m for m in k.legal_moves() if m.endswith(">f")))
    k.to_dict()
    rank_of(0), suit_of(0)


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
    for n in (2, 640):  # one thread, then all cores (from 256 games; 640 with workqueue)
        env = SolitaireVectorEnv(n, "seahaven_towers")
        _, info = env.reset(seed=0)
        for _ in range(2):
            _, _, _, _, info = env.step(random_legal_actions(info["action_mask"], rng))
        env.reset(seed=1, options={"reset_mask": np.arange(n) % 2 == 0})
    random_legal_actions(np.ones((2048, 4), np.int8), rng)  # the sampler on all cores


def _batch() -> None:
    from solitaire_gym.engine.batch import Batch
    from solitaire_gym.engine.variants import parse_code

    batch = Batch(parse_code("TF1-D1N-AAAAAAB")[0], 8, undo_depth=4)
    batch.deal(np.arange(8))
    masks = batch.masks()
    batch.step(np.array([_first_legal(m) for m in masks]))
    batch.undo(np.arange(8))


def _solver() -> None:
    from solitaire_gym import Game
    from solitaire_gym.solver import solve, warm_up

    warm_up()
    solve(CODE, max_seconds=30)
    Game.from_code(CODE).hint()


PARTS: dict[str, Callable[[], None]] = {
    "game": _game,
    "env": _env,
    "vector": _vector_env,
    "batch": _batch,
    "solver": _solver,
}


class _Counter(event.Listener):
    """Counts the package's kernels that compile (not those loaded from the cache)."""

    def __init__(self) -> None:
        self.compiled = 0
        self.depth = 0

    def on_start(self, ev: event.Event) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if (getattr(func, "__module__", None) or "").startswith("solitaire_gym."):
            self.compiled += 1

    def on_end(self, ev: event.Event) -> None:
        pass


def warmup(parts: list[str], out=sys.stdout) -> dict[str, tuple[float, int]]:
    """Run ``parts`` (names in :data:`PARTS`); returns ``{part: (seconds, kernels compiled)}``."""
    _compile_notice.NOTICE.shown = True  # the lines below say it instead
    counter = _Counter()
    event.register("numba:compile", counter)
    results: dict[str, tuple[float, int]] = {}
    try:
        for name in parts:
            print(f"warmup: {name} ...", end="", file=out, flush=True)
            before, start = counter.compiled, time.perf_counter()
            PARTS[name]()
            took, compiled = time.perf_counter() - start, counter.compiled - before
            results[name] = (took, compiled)
            done = f"{compiled} kernels compiled" if compiled else "all cached"
            print(f" {took:.1f} s ({done})", file=out, flush=True)
    finally:
        event.unregister("numba:compile", counter)
    total = sum(t for t, _ in results.values())
    print(f"warmup: done in {total:.1f} s; later first calls load from the cache", file=out)
    return results


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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    warmup([name for name in PARTS if name not in args.skip])
    return 0
