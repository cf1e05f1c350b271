"""The package's exceptions. All derive from :class:`SolitaireError`, itself a ``ValueError``."""


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
