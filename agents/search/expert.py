"""Expert iteration: the search player labels the positions a game reaches, and a policy learns them.

The expert is :class:`~agents.search.rollouts.RolloutSearch`, blind to hidden cards: in every
position it searches with ``nodes`` nodes and its move is the label. In the first round it plays
its own labels; in the next ones a student (the policy trained so far) plays and the expert
labels every position the student reaches, so the student learns what to do where its own
mistakes lead (the scheme of DAgger, with the search in place of the solver-backed teacher of
``agents/teacher.py``). The labels are those of a player who sees what the student sees: unlike
the solver's, a student can learn them exactly.

A label is **safe** when a copy of the game the search simulated was won after it: a proof that
the position is winnable in Seahaven Towers (the copy is the game itself), a win on one sampled
deal of the unseen cards in the Klondike games. A forced move is safe. ``stop_unsafe`` ends a
game after that many unsafe labels in a row, as the teacher's does, and trainers weigh unsafe
labels by ``train.unsafe_weight``.

:func:`search_episodes` plays a batch of deals at once (the search batches all their copies in
one engine) and returns one :class:`~agents.dataset.Episode` per deal, the records that
:func:`agents.dataset.write_shard` stores; ``agents.teacher.make_shards(..., teacher="search")``
writes them as shards, and an imitation config with ``teacher: {kind: search}`` runs expert
iteration (``agents/imitation.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.base import Agent, GameView
from agents.dataset import Episode
from agents.search.rollouts import DEFAULT_NODES, RolloutSearch
from solitaire_gym.envs import kernels
from solitaire_gym.envs.core import DEFAULT_MAX_EPISODE_STEPS, MAX_DEAL, EnvCore, EnvOptions
from solitaire_gym.errors import ArgumentError, is_int, shown


def search_episodes(
    game: str,
    options: dict | None,
    deals: Sequence[int],
    *,
    nodes: int = DEFAULT_NODES,
    student: Agent | None = None,
    seed: int = 0,
    max_steps: int | None = None,
    stop_unsafe: int = 0,
) -> list[Episode]:
    """Play ``deals`` (deal numbers, all in one batch) to their ends with the search's labels, or
    with ``student``'s moves labelled by the search; one :class:`Episode` per deal, in order.

    A game ends when won, stuck, after ``max_steps`` moves (the env's step limit by default), or
    after ``stop_unsafe`` unsafe labels in a row (0: never; module docstring)."""
    deals = list(deals)
    if not deals:
        raise ArgumentError("search_episodes needs at least one deal")
    for d in deals:
        if not is_int(d) or not 0 <= d <= MAX_DEAL:
            raise ArgumentError(f"a deal is a number in 0 … {MAX_DEAL}, not {shown(d)}")
    deals = [int(d) for d in deals]
    for name, v in (("stop_unsafe", stop_unsafe), ("max_steps", max_steps or 1)):
        if not is_int(v) or v < 0:
            raise ArgumentError(f"{name} must be a non-negative integer, not {shown(v)}")
    opts = EnvOptions.build(game, **(options or {}), split="eval")
    expert = RolloutSearch(game, options, nodes=nodes, seed=seed)
    if student is not None:
        student.check_env(game, options)
    n = len(deals)
    core = EnvCore(opts, n)
    rows = np.arange(n, dtype=np.int64)
    core.deal(rows, np.array(deals, np.int64))
    view = GameView(core)
    expert.reset(n)
    if student is not None:
        student.reset(n)
    limit = max_steps or DEFAULT_MAX_EPISODE_STEPS[opts.variant.prefix]
    records: list[list[tuple]] = [[] for _ in range(n)]
    steps = np.zeros(n, np.int64)  # positions recorded per game
    unsafe_run = np.zeros(n, np.int64)
    starts = np.ones(n, bool)
    act = np.empty(n, np.int64)

    def still(active: np.ndarray) -> np.ndarray:
        over = (stop_unsafe > 0) & (unsafe_run >= stop_unsafe)
        return active & ~core.won & (core.counts > 0) & (steps < limit) & ~over

    active = still(np.ones(n, bool))
    while active.any():
        obs, masks = core.obs.copy(), core.masks.astype(bool)
        labels, safe = expert.label(obs, masks, starts=starts, active=active, view=view)
        played = labels
        if student is not None:
            played = np.asarray(
                student.act(obs, masks, starts=starts, active=active.copy(), view=view), np.int64
            )
        expert.played(obs, masks, played, active)
        starts[:] = False
        for i in np.flatnonzero(active):
            records[i].append((obs[i], masks[i], labels[i], safe[i], played[i]))
        steps += active
        unsafe_run = np.where(safe, 0, unsafe_run + 1)
        act[:] = kernels.ROW_REFRESH
        act[active] = played[active]
        core.step(act)
        active = still(active)
    out = []
    for i, d in enumerate(deals):
        rec = records[i]
        out.append(
            Episode(
                deal=d,
                obs=np.array([r[0] for r in rec], np.float32).reshape(-1, core.obs_dim),
                masks=np.array([r[1] for r in rec], bool).reshape(-1, core.n_actions),
                labels=np.array([r[2] for r in rec], np.int16),
                safe=np.array([r[3] for r in rec], bool),
                played=np.array([r[4] for r in rec], np.int16),
                won=bool(core.won[i]),
                solver_calls=0,
            )
        )
    return out
