"""Gymnasium environments over the engine: single, natively vectorised, and adapters."""

from solitaire_gym.envs.core import EVAL_SPLIT_END, SPLITS, sample_deals
from solitaire_gym.envs.registration import ENV_IDS, register_envs
from solitaire_gym.envs.solitaire_env import SolitaireEnv
from solitaire_gym.envs.vector_env import SolitaireVectorEnv

__all__ = [
    "ENV_IDS",
    "EVAL_SPLIT_END",
    "SPLITS",
    "SolitaireEnv",
    "SolitaireVectorEnv",
    "register_envs",
    "sample_deals",
]
