"""The policy interface shared by every agent, and the view of the games some agents may ask for.

An agent maps a batch of observations and legal-action masks to one action per game::

    actions = agent.act(obs, masks)                   # (B, D) float32, (B, N) -> (B,) int64
    a = agent.act(obs, info["action_mask"])           # one game: (D,), (N,) -> int

Stateful agents (the greedy agent remembers what it tried, the solver agent its plan) keep one
memory per game (row); :meth:`Agent.reset` clears all rows, ``starts`` (B,) bool marks the rows
that begin a new game in this call. Call ``agent.reset()`` after ``env.reset()`` with a single
env.

What an agent may look at is part of its contract, written in its ``uses`` attribute:

- ``"observation"``: the observation and the mask only (the player's information);
- ``"information"``: the information state through ``view`` (a :class:`GameView`): the search
  player (``agents/search``) copies the games' engine state and deals every card the player has
  not seen anew before it reads anything (``solitaire_gym.engine.information``), so what it does
  depends on what the player has seen only (tested: hidden cards permuted, same moves);
- ``"position"``: the whole position, hidden cards included, through ``view`` (a
  :class:`GameView`): an upper bound, not a player. Only :class:`~agents.SolverAgent` and the
  win finder (``agents/search/finder.py``, which looks for wins to certify) do this.

An agent may answer :data:`RESIGN` for a game (it gives up: the game counts as lost where it
stands); the evaluation harness honours it, an env does not (it is no action id).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solitaire_gym.envs.observation import to_float

RESIGN = -1
"""Action value meaning "I give up this game" (evaluation harness only)."""


class GameView:
    """Read access to the games behind a batch, for agents whose ``uses`` is ``"position"``.

    Built from an env with :func:`view_of` (``SolitaireEnv``, ``SolitaireVectorEnv``,
    ``SB3VecEnv`` or an ``EnvCore``)."""

    def __init__(self, core) -> None:
        self._core = core

    @property
    def num(self) -> int:
        return self._core.num

    def position(self, row: int) -> dict:
        """``Game.to_dict()`` of game ``row``: the whole position, hidden cards included."""
        return self._core.to_dict(int(row))

    @property
    def state(self):
        """The engine state of the whole batch (``solitaire_gym.engine.state``), hidden cards
        included; an agent whose ``uses`` is ``"information"`` deals the unseen cards of its
        copies anew (``solitaire_gym.engine.information.redeal_unseen``) before it reads them."""
        return self._core.state

    @property
    def options(self):
        """The env's options (:class:`~solitaire_gym.envs.core.EnvOptions`)."""
        return self._core.opts

    def code(self, row: int) -> str:
        return str(self._core.codes[int(row)])

    def move_to_action(self, move: str) -> int:
        return self._core.move_to_action(move)

    def action_to_move(self, action: int) -> str:
        return self._core.action_to_move(int(action))


def view_of(env: Any) -> GameView:
    """The :class:`GameView` of an env of this package (wrappers are looked through)."""
    if isinstance(env, GameView):
        return env
    core = getattr(env, "_core", None)
    if core is None:
        base = getattr(env, "unwrapped", None)
        core = getattr(base, "_core", None)
    if core is None and hasattr(env, "batch") and hasattr(env, "masks"):
        core = env  # an EnvCore
    if core is None:
        venv = getattr(env, "venv", None)  # an SB3 VecEnvWrapper
        if venv is not None:
            return view_of(venv)
        raise TypeError(f"{type(env).__name__} is not an env of solitaire_gym")
    return GameView(core)


class Agent:
    """Base class: subclasses implement :meth:`_act` on 2-D batches.

    Attributes: ``name`` (shown in tables), ``uses`` (see the module docstring)."""

    name = "agent"
    uses = "observation"

    def reset(self, n: int | None = None) -> None:
        """Forget every game's memory (``n``: the batch size to come, if known)."""

    def check_env(self, game: str, options: dict | None = None) -> None:
        """Raise if this agent cannot play ``game`` with ``options`` (a checkpoint trained on
        another game); the harness calls it before the first move."""

    def act(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        *,
        starts: np.ndarray | None = None,
        active: np.ndarray | None = None,
        view: Any = None,
    ) -> np.ndarray | int:
        """One action per game. ``obs`` (B, D) or (D,), float32 or uint8 (an env's
        ``obs_dtype``), ``masks`` (B, N) or (N,) (non-zero = legal); ``starts`` (B,) rows that
        begin a new game; ``active`` (B,) rows still playing (the others' actions are ignored,
        an agent may skip them); ``view`` the env (or a :class:`GameView`), needed only by
        agents that use the position."""
        single = np.ndim(masks) == 1
        obs = self.observations(np.asarray(obs))
        if single:
            obs = obs if obs.dtype == np.uint8 else obs.astype(np.float32, copy=False)
        obs2 = obs.reshape(1, -1) if single else obs
        masks2 = np.asarray(masks).reshape(1, -1) if single else np.asarray(masks)
        masks2 = masks2.astype(bool, copy=False)
        b = masks2.shape[0]
        starts2 = np.zeros(b, bool) if starts is None else np.asarray(starts, bool).reshape(b)
        active2 = np.ones(b, bool) if active is None else np.asarray(active, bool).reshape(b)
        if self.uses in ("position", "information"):
            if view is None:
                raise ValueError(f"{self.name} plays from the engine's state: pass view=env")
            view = view_of(view)
        out = np.asarray(self._act(obs2, masks2, starts2, active2, view), np.int64)
        return int(out[0]) if single else out

    def observations(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` as this player reads them: float32 (a uint8 observation, an env's
        ``obs_dtype="uint8"``, becomes the float32 one it stands for), as the package's
        networks learned them."""
        return to_float(obs) if obs.dtype == np.uint8 else obs

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class RandomAgent(Agent):
    """Uniformly random legal moves (uses the mask only). Reproducible from ``seed``."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        from solitaire_gym.envs.sampling import random_legal_actions

        return random_legal_actions(masks.view(np.int8), self.rng)
