"""A stable-baselines3 ``VecEnv`` over the batched engine (needs the ``agents`` extra).

::

    from sb3_contrib import MaskablePPO
    from solitaire_gym.envs.sb3 import SB3VecEnv

    model = MaskablePPO("MlpPolicy", SB3VecEnv("seahaven_towers", num_envs=64))
    model.learn(100_000)

Same-step autoreset, as SB3 expects: when a game ends, ``infos[i]["terminal_observation"]`` holds
its last observation, ``infos[i]["TimeLimit.truncated"]`` says whether the step limit ended it,
``won``, ``code``, ``score`` and ``foundation_cards`` (cards on the foundations) describe its end,
``episode`` holds its return and length, and the returned observation is already the next game's. ``env_method("action_masks")`` returns
the whole ``(num_envs, n_actions)`` batch in one call.

Building one lowers torch's CPU threads to ``torch_threads`` (default
:data:`~solitaire_gym.engine.threads.SHARED_CORE_THREADS`): see
:mod:`solitaire_gym.engine.threads`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from solitaire_gym.engine.threads import (
    SHARED_CORE_THREADS,
    check_torch_threads,
    lower_torch_threads,
)
from solitaire_gym.envs.core import (
    DEFAULT_MAX_EPISODE_STEPS,
    MAX_GAMES,
    MAX_STEPS,
    EnvCore,
    EnvOptions,
    action_array,
    check_seed,
    count_in,
)
from solitaire_gym.errors import ArgumentError, is_int_dtype, shown


class SB3VecEnv(VecEnv):
    """``num_envs`` games stepped by one compiled call. Arguments as :class:`SolitaireEnv`, plus
    ``max_episode_steps`` (default: the registered value of the game) and ``seed``."""

    def __init__(
        self,
        game: str = "seahaven_towers",
        num_envs: int = 16,
        *,
        max_episode_steps: int | None = None,
        seed: int | None = None,
        torch_threads: int | None = SHARED_CORE_THREADS,
        **kwargs: Any,
    ) -> None:
        """``torch_threads``: torch's CPU threads are lowered to this many if it uses more
        (:func:`solitaire_gym.engine.threads.lower_torch_threads`: the env kernels and the
        policy share the cores); None leaves torch as it is. The other arguments are the
        envs'."""
        if not count_in(num_envs, MAX_GAMES):
            raise ArgumentError(
                f"num_envs must be an integer in 1 … {MAX_GAMES}, not {shown(num_envs)}"
            )
        seed = check_seed(seed)
        if torch_threads is not None:
            check_torch_threads(torch_threads)
        self.options = EnvOptions.build(game, **kwargs)
        if max_episode_steps is None:
            max_episode_steps = DEFAULT_MAX_EPISODE_STEPS[self.options.variant.prefix]
        if not count_in(max_episode_steps, MAX_STEPS):
            raise ArgumentError(
                f"max_episode_steps must be an integer in 1 … {MAX_STEPS}, not "
                f"{shown(max_episode_steps)}"
            )
        self._core = EnvCore(self.options, int(num_envs))
        self.max_episode_steps = int(max_episode_steps)
        self.render_mode = None  # read by VecEnv.__init__ through get_attr (no rendering here)
        self._all = np.arange(int(num_envs), dtype=np.int64)
        super().__init__(int(num_envs), self._core.observation_space(), self._core.action_space())
        self._rng = np.random.default_rng(seed)
        self._steps = np.zeros(self.num_envs, np.int64)
        self._act = np.zeros(self.num_envs, np.int64)
        self._episode_return = np.zeros(self.num_envs, np.float64)
        lower_torch_threads(torch_threads)

    # ---- VecEnv API -----------------------------------------------------------------------------
    def reset(self):
        if self._seeds[0] is not None:
            self._rng = np.random.default_rng(self._seeds[0])
            self._seeds = [None] * self.num_envs
        self._core.deal(self._all, self._core.draw(self._rng, self.num_envs))
        self._core.skip_dead_deals(self._all, self._rng)
        self._steps[:] = 0
        self._episode_return[:] = 0
        self.reset_infos = [{"code": c} for c in self._core.codes]
        return self._core.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        # Integers only: a cast would make NaN a huge negative number (a silent no-op that still
        # counts toward the step limit) and 0.9 the action 0.
        act = action_array(actions)
        if not is_int_dtype(act.dtype):
            raise ArgumentError(f"actions must be integers, not {shown(actions)}")
        act = act.reshape(-1)
        if act.shape[0] != self.num_envs:
            raise ArgumentError(f"expected {self.num_envs} actions, got {act.shape[0]}")
        if act.min() < 0 or act.max() >= self._core.n_actions:
            bad = int(act[(act < 0) | (act >= self._core.n_actions)][0])
            raise ArgumentError(
                f"action {bad} is outside the action space 0 … {self._core.n_actions - 1}"
            )
        self._act[:] = act

    def step_wait(self):
        core = self._core
        # Same-step autoreset: ended games are dealt after this step. The kernel writes into
        # buffers nobody else holds (SB3 keeps the last observation while the next step runs):
        # no copy afterwards.
        core.step(self._act, fresh=True)
        self._steps += 1
        rewards = core.rewards
        self._episode_return += rewards
        won = core.won
        terminated = won | (core.counts == 0)
        truncated = ~terminated & (self._steps >= self.max_episode_steps)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            for r, info in zip(ended.tolist(), self.end_games(ended, truncated[ended]),
                               strict=True):  # fmt: skip
                infos[r] = info
        return core.obs, rewards, dones, infos

    def foundation_cards(self) -> np.ndarray:
        """Cards on the foundations of every game now, ``(num_envs,)`` int64 (a game that just
        ended is its new deal's: its end is in its ``info``)."""
        return self._core.foundation_cards()

    def end_games(self, rows: np.ndarray, truncated: np.ndarray | None = None) -> list[dict]:
        """End the games of ``rows`` now and deal new ones there (what an ended game gets;
        also for a wrapper that ends games early, e.g. when the solver proves one lost).
        Returns each ended game's info: ``terminal_observation``, ``TimeLimit.truncated``
        (``truncated``, default False), ``won``, ``code``, ``score``, ``foundation_cards`` and
        ``episode`` (return and length)."""
        core = self._core
        rows = core.check_rows(rows)
        truncated = np.zeros(rows.size, bool) if truncated is None else np.asarray(truncated)
        if truncated.dtype != np.bool_ or truncated.shape != rows.shape:
            raise ArgumentError(f"truncated must be {rows.size} booleans, one per row")
        final_obs = core.obs[rows].copy()
        found = core.foundation_cards()
        infos = [
            {
                "terminal_observation": final_obs[j],
                "TimeLimit.truncated": bool(truncated[j]),
                "won": bool(core.won[r]),
                "code": core.codes[r],
                "score": int(core.state.score[r]),
                "foundation_cards": int(found[r]),
                "episode": {"r": float(self._episode_return[r]), "l": int(self._steps[r])},
            }
            for j, r in enumerate(rows.tolist())
        ]
        core.deal(rows, core.draw(self._rng, rows.size))
        core.skip_dead_deals(rows, self._rng)
        self._steps[rows] = 0
        self._episode_return[rows] = 0
        return infos

    def close(self) -> None:
        pass

    def seed(self, seed: int | None = None):
        """SB3's seeding (game ``i`` gets ``seed + i``; this env draws every deal from one
        generator, seeded by ``seed`` at the next reset)."""
        return super().seed(check_seed(seed))

    def _rows(self, indices) -> np.ndarray:
        if indices is None:
            return self._all
        return self._core.check_rows(indices if not isinstance(indices, range) else list(indices))

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value] * len(self._rows(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs):
        rows = self._rows(indices)
        if method_name == "action_masks":
            return self._core.masks[rows].astype(bool)
        method = getattr(self, method_name)
        return [method(*method_args, **method_kwargs) for _ in rows]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._rows(indices))

    # ---- extras ---------------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_actions)`` bool masks of the current positions."""
        return self._core.masks.astype(bool)

    def action_to_move(self, action: int) -> str:
        return self._core.action_to_move(action)

    @property
    def codes(self) -> np.ndarray:
        """The game code of every env's current game (after an autoreset: the new game's)."""
        return self._core.codes.copy()
