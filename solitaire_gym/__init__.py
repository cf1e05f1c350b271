"""solitaire_gym: Double Solitaire, Solitaire Réfléchi and Seahaven Towers as RL environments."""

import os

import numba

# Before any kernel is loaded, a numba cache compiled from older sources is dropped (_cache).
from solitaire_gym import _cache  # noqa: F401

# The batched kernels launch one parallel loop per env step. On idle cores a launch takes ~15 µs
# with numba's omp layer and ~100 µs with its workqueue layer; but when other processes keep every
# core busy, an omp launch often waits a whole time slice (~8 ms) while workqueue stays near
# 100 µs (benchmarks/bench_launch.py). So workqueue is the default, robust choice; on dedicated
# cores NUMBA_THREADING_LAYER=omp makes the vector env faster (see the README). Kept if the user
# chose a layer.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"

from solitaire_gym.engine.variants import Variant, parse_code
from solitaire_gym.envs import SolitaireEnv, SolitaireVectorEnv, register_envs
from solitaire_gym.errors import (
    GameCodeError,
    IllegalMoveError,
    MoveSyntaxError,
    PositionError,
    SolitaireError,
    UndoError,
)
from solitaire_gym.game import Game

register_envs()

__version__ = "0.1.0"

__all__ = [
    "Game",
    "GameCodeError",
    "IllegalMoveError",
    "MoveSyntaxError",
    "PositionError",
    "SolitaireEnv",
    "SolitaireError",
    "SolitaireVectorEnv",
    "UndoError",
    "Variant",
    "parse_code",
]
