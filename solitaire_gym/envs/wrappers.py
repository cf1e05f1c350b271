"""Wrappers for other libraries' conventions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class RLlibMaskWrapper(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """RLlib's action-masking convention: a Dict observation
    ``{"observations": <the env's Box>, "action_mask": int8 Box of 0/1}``.

    >>> import gymnasium as gym, solitaire_gym
    >>> env = RLlibMaskWrapper(gym.make("solitaire_gym/SeahavenTowers-v0"))
    >>> obs, info = env.reset(seed=0)
    >>> sorted(obs), obs["action_mask"].shape
    (['action_mask', 'observations'], (1278,))
    """

    def __init__(self, env: gym.Env) -> None:
        if not isinstance(env, gym.Env) or not isinstance(env.action_space, spaces.Discrete):
            from solitaire_gym.errors import ArgumentError

            raise ArgumentError(
                f"RLlibMaskWrapper wraps a solitaire_gym env, not {type(env).__name__}"
            )
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict(
            {
                "observations": env.observation_space,
                "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
            }
        )

    def observation(self, observation: np.ndarray) -> dict[str, Any]:
        return {
            "observations": observation,
            "action_mask": self.env.get_wrapper_attr("action_masks")(),
        }


class RLlibMaskVectorWrapper(gym.vector.VectorObservationWrapper):
    """:class:`RLlibMaskWrapper` for the native vector env (``gym.make_vec``, or
    :class:`~solitaire_gym.envs.vector_env.SolitaireVectorEnv`): every observation is
    ``{"observations": (n, D) array, "action_mask": (n, N) int8 array}``, so that RLlib's env
    runners step all their games in one compiled call (``gym_env_vectorize_mode=
    "vector_entry_point"``).

    >>> import gymnasium as gym, solitaire_gym
    >>> env = RLlibMaskVectorWrapper(gym.make_vec("solitaire_gym/SeahavenTowers-v0", num_envs=3))
    >>> obs, info = env.reset(seed=0)
    >>> obs["observations"].shape[0], obs["action_mask"].shape
    (3, (3, 1278))
    """

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        super().__init__(env)
        n = int(env.single_action_space.n)
        self.single_observation_space = spaces.Dict(
            {
                "observations": env.single_observation_space,
                "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
            }
        )
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, env.num_envs
        )

    def observations(self, observations: np.ndarray) -> dict[str, Any]:
        # gymnasium's vector wrappers do not forward attributes: ask the vector env itself
        return {"observations": observations, "action_mask": self.env.unwrapped.action_masks()}
