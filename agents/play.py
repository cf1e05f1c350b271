"""The evaluation harness: an agent plays a fixed list of deals to the end, in batches.

Games run on the envs' own batch (:class:`~solitaire_gym.envs.core.EnvCore`), with the same
observations, masks and episode ends as ``SolitaireEnv``: a game ends when it is won, when no
legal move is left, or after ``max_episode_steps`` actions (the registered limits: Double
Solitaire 2000, Solitaire Réfléchi 1000, Seahaven Towers 500; not for an agent whose
``unlimited_steps`` is true, the solver), or when the agent resigns. A game
that has ended stays as it is while the rest of its batch plays on (no autoreset).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from agents.base import RESIGN, Agent, GameView
from solitaire_gym.engine.catalog import VARIANTS  # noqa: F401  (also agents.play.VARIANTS)
from solitaire_gym.engine.threads import SHARED_CORE_THREADS, torch_threads_at_most
from solitaire_gym.envs import kernels
from solitaire_gym.envs.core import DEFAULT_MAX_EPISODE_STEPS, EVAL_SPLIT_END, EnvCore, EnvOptions

VALIDATION_START = EVAL_SPLIT_END // 2
"""Periodic evaluation during training plays deals from here on (``2^19 …``), the final
evaluation (:func:`eval_deals`) from 0 on: both lie in the evaluation split, which no training
game is dealt from, and a checkpoint chosen on the first is judged on the second."""


def eval_deals(n: int, start: int = 0) -> list[int]:
    """The fixed evaluation deals: ``start, start+1, …`` (evaluation split)."""
    if start < 0 or n < 0 or start + n > EVAL_SPLIT_END:
        raise ValueError(f"deals {start} … {start + n - 1} leave the evaluation split")
    return list(range(start, start + n))


def variant_tag(game: str, options: dict) -> str:
    """``("seahaven_towers", {"cells": 4})`` -> ``"SH1-C4"``."""
    return EnvOptions.build(game, **options).variant.tag


ENDS = ("won", "stuck", "truncated", "resigned")
"""How a game of :func:`play_deals` ends (``EpisodeResult.end``)."""


@dataclass
class EpisodeResult:
    code: str
    deal: int
    won: bool
    score: int  # the app's score at the end (Vegas: dollars)
    moves: int  # the app's move counter
    steps: int  # actions taken (as many as moves here: no undo)
    end: str  # how the game ended: one of ENDS
    foundation: int  # cards on the foundations at the end
    trace: list[str] | None = field(default=None, repr=False)  # moves, if recorded
    scores: list[int] | None = field(default=None, repr=False)  # score after each move

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("trace")
        d.pop("scores")
        return d


def play_deals(
    agent: Agent,
    game: str,
    options: dict | None,
    deals: Sequence[int],
    *,
    max_episode_steps: int | None = None,
    batch_size: int = 256,
    record: Iterable[int] = (),
    progress=None,
    torch_threads: int | None = SHARED_CORE_THREADS,
) -> list[EpisodeResult]:
    """Play every deal of ``deals`` once with ``agent``; results in the order of ``deals``.

    ``record``: deal numbers whose moves (docs/rules.md) and scores are kept, for traces.
    ``progress``: called with the number of games finished after each batch.
    ``torch_threads``: while the games are played, torch (if it is loaded) uses at most this
    many CPU threads, since the env kernels share the cores with a network-driven agent
    (:func:`agents.torch_setup.torch_threads_at_most`); None leaves torch as it is."""
    opts = EnvOptions.build(game, **(options or {}), split="eval")
    agent.check_env(game, options or {})
    limit = max_episode_steps or DEFAULT_MAX_EPISODE_STEPS[opts.variant.prefix]
    if getattr(agent, "unlimited_steps", False):
        limit = np.iinfo(np.int64).max  # the solver agent: see SolverAgent
    deals = [int(d) for d in deals]
    record = set(int(d) for d in record)
    with torch_threads_at_most(torch_threads):
        return _play_batches(agent, opts, limit, deals, record, batch_size, progress)


def _play_batches(
    agent: Agent,
    opts: EnvOptions,
    limit: int,
    deals: list[int],
    record: set[int],
    batch_size: int,
    progress,
) -> list[EpisodeResult]:
    """The games of :func:`play_deals`, ``batch_size`` at a time."""
    results: list[EpisodeResult] = []
    for lo in range(0, len(deals), batch_size):
        chunk = deals[lo : lo + batch_size]
        core = EnvCore(opts, len(chunk))
        rows = np.arange(len(chunk), dtype=np.int64)
        core.deal(rows, np.array(chunk, np.int64))
        view = GameView(core)
        names = None
        if record.intersection(chunk):
            names = [core.action_to_move(a) for a in range(core.n_actions)]
        traces = {i: ([], []) for i, d in enumerate(chunk) if d in record}
        active = np.ones(len(chunk), bool)
        steps = np.zeros(len(chunk), np.int64)
        ends = np.full(len(chunk), "", dtype=object)
        agent.reset(len(chunk))
        starts = np.ones(len(chunk), bool)
        act = np.zeros(len(chunk), np.int64)
        # games over before the first move (Seahaven deals with no legal move) end at once;
        # the agent is still shown them once (the solver records its verdict)
        _close(core, active, ends, steps, limit)
        first = True
        while active.any() or first:
            first = False
            chosen = np.asarray(
                agent.act(core.obs, core.masks, starts=starts, active=active.copy(), view=view),
                np.int64,
            )
            starts[:] = False
            resign = active & (chosen == RESIGN)
            ends[resign] = "resigned"
            active &= ~resign
            act[:] = kernels.ROW_REFRESH
            act[active] = chosen[active]
            bad = active & ~core.masks[rows, np.clip(act, 0, core.n_actions - 1)].astype(bool)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise RuntimeError(
                    f"{agent.name} chose illegal action {int(act[i])} in {core.codes[i]}"
                )
            core.step(act)
            steps[active] += 1
            for i, (mv, sc) in traces.items():
                if active[i]:
                    mv.append(names[int(act[i])])
                    sc.append(int(core.state.score[i]))
            _close(core, active, ends, steps, limit)
        found_cards = core.foundation_cards()
        for i, d in enumerate(chunk):
            found = int(found_cards[i])
            mv, sc = traces.get(i, (None, None))
            results.append(
                EpisodeResult(
                    code=str(core.codes[i]),
                    deal=d,
                    won=bool(core.won[i]),
                    score=int(core.state.score[i]),
                    moves=int(core.state.moves[i]),
                    steps=int(steps[i]),
                    end=str(ends[i]),
                    foundation=found,
                    trace=mv,
                    scores=sc,
                )
            )
        if progress is not None:
            progress(len(results))
    return results


def _close(core: EnvCore, active, ends, steps, limit: int) -> None:
    won = active & core.won
    stuck = active & ~core.won & (core.counts == 0)
    trunc = active & ~won & ~stuck & (steps >= limit)
    ends[won] = "won"
    ends[stuck] = "stuck"
    ends[trunc] = "truncated"
    active &= ~(won | stuck | trunc)


def play_chunk(
    deals: list[int], make_agent: Callable[[], Agent], game: str, options: dict | None, kwargs: dict
) -> list[tuple[EpisodeResult, dict | None]]:
    """One task of a distributed evaluation (``experiments/evaluate.py --ray``): a fresh agent
    from ``make_agent`` plays ``deals`` (:func:`play_deals` with ``kwargs``); each result comes
    with what the agent knows of its deal's solvability (``agent.verdicts``, the solver), else
    None. Cut the deals at multiples of the batch size and the results are those of one
    :func:`play_deals` call over all of them."""
    agent = make_agent()
    results = play_deals(agent, game, options, deals, **kwargs)
    known = getattr(agent, "verdicts", None) or {}
    return [(r, known.get(r.code)) for r in results]
