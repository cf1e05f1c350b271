"""The package's exceptions. All derive from :class:`SolitaireError`, itself a ``ValueError``.

Messages name the bad part of the input but never echo it whole: :func:`shown` cuts what it
quotes to a few dozen characters, so a megabyte of bad input gives a message of one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SHOWN_CHARS = 60
"""At most this many characters of a bad value are quoted in a message (then ``…``)."""


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages. Never raises (a huge
    integer or a value whose ``repr`` fails is described instead)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"<an integer of {value.bit_length()} bits>"
    if isinstance(value, (str, bytes, list, tuple, dict)) and len(value) > 4 * limit:
        value = value[: 4 * limit] if not isinstance(value, dict) else value
    try:
        text = repr(value)
    except (RecursionError, ValueError, TypeError):
        return f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SolitaireError(ValueError):
    """Base class: bad input to the package. Whatever raised it changed nothing."""


class GameCodeError(SolitaireError):
    """A game code, game name or option that is malformed or not offered by the game."""


class MoveSyntaxError(SolitaireError):
    """A move string outside the notation of docs/rules.md (or naming a pile the game lacks)."""


class IllegalMoveError(SolitaireError):
    """A well-formed move that the rules refuse. The message is the rule that forbids it."""


class UndoError(SolitaireError):
    """Undo asked for when there is nothing (left) to undo."""


class PositionError(SolitaireError):
    """A position (``Game.from_dict``) that is not a valid game."""


class ArgumentError(SolitaireError):
    """An argument or option the function does not take: a wrong type, a value out of range,
    rows or actions that do not fit the batch, reset options that do not fit the env."""


def is_int(value: Any) -> bool:
    """Is ``value`` an integer: a Python ``int`` or a numpy integer, and neither a bool nor a
    numpy ``timedelta64`` (which numpy files under its integers)? Every public entry checks
    integers with this, arrays with :func:`is_int_dtype`."""
    if isinstance(value, (bool, np.timedelta64)):
        return False
    return isinstance(value, (int, np.integer))


def is_int_dtype(dtype: Any) -> bool:
    """Is ``dtype`` a numpy integer dtype, signed or unsigned (not bool, not timedelta64)?"""
    return np.dtype(dtype).kind in "iu"
