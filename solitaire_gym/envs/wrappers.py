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
