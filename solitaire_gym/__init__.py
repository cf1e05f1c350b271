"""solitaire_gym: Double Solitaire, Solitaire Réfléchi and Seahaven Towers as RL environments."""

# Before any kernel is loaded, a numba cache compiled from older sources is dropped (_cache),
# and a compile (a cold cache) will say so on stderr, once (_compile_notice).
from solitaire_gym import _cache, _compile_notice  # noqa: F401
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
