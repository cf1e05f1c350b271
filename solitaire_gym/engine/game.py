"""One game, readable, in the notation of docs/rules.md: a batch of one over the engine, with
its rules, moves, undo, taps and position dicts. :class:`solitaire_gym.Game` is this class with
the solver's hints (``solitaire_gym/game.py``)."""

from __future__ import annotations

import re
from typing import Any, Self

import numpy as np

from solitaire_gym.engine import actions, movegen, play, position, rules, taps
from solitaire_gym.engine.batch import MAX_UNDO_DEPTH
from solitaire_gym.engine.scoring import score_text
from solitaire_gym.engine.shuffle import deal_into
from solitaire_gym.engine.state import State, allocate, copy_state
from solitaire_gym.engine.variants import (
    L_N,
    SEAHAVEN,
    Variant,
    parse_code,
)
from solitaire_gym.errors import (
    ArgumentError,
    GameCodeError,
    IllegalMoveError,
    MoveSyntaxError,
    UndoError,
    is_int,
    shown,
)
from solitaire_gym.rendering.ansi import board_text

_WHERE_RE = re.compile(r"^(?:(w)|([tc])([1-9]\d{0,2}))$", re.ASCII)  # ASCII digits, a few
_DIGITS_RE = re.compile(r"(\d+)")


def _natural_key(text: str) -> tuple:
    """Sort key that compares the numbers in ``text`` as numbers (``t2`` before ``t10``)."""
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS_RE.split(text))


class RulesGame:
    """One game and its rules, without hints: what :class:`solitaire_gym.Game` adds the solver's
    hints to, and what the solver plays through (``solitaire_gym.solver`` imports this class, so
    that it need not import the class that calls it). Everything but :meth:`Game.hint` is here;
    see :class:`~solitaire_gym.Game`."""

    def __init__(self, variant: Variant, deal: int, *, undo_depth: int | None = None) -> None:
        if not isinstance(variant, Variant):
            raise GameCodeError(f"a Game needs a Variant, not {type(variant).__name__}")
        variant.code(deal)  # validates the deal number
        if undo_depth is not None and (
            not is_int(undo_depth) or not 0 <= undo_depth <= MAX_UNDO_DEPTH
        ):
            raise ArgumentError(
                f"undo_depth must be an integer in 0 … {MAX_UNDO_DEPTH}, not {shown(undo_depth)}"
            )
        self._variant = variant
        self._deal = int(deal)
        self._cfg = variant.cfg
        depth = variant.undo_depth if undo_depth is None else int(undo_depth)
        self._s: State = allocate(1, variant.n_cards, depth)
        self._scratch = np.empty(int(self._cfg[L_N]), np.int32)
        deal_into(self._s, 0, self._cfg, np.uint64(deal))
        self._start_moves = 0  # the move counter when this object took over the game
        self._dropped = False  # whether the undo history has let go of an action

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def from_code(cls, code: str, *, undo_depth: int | None = None) -> Self:
        """A new game from a code such as ``"DS1-D1N-AAAAAAB"``: any case, and spaces (tabs,
        line breaks) anywhere are ignored, so ``"sh1 - c4 - aaaaaj2"`` is ``"SH1-C4-AAAAAJ2"``."""
        variant, deal = parse_code(code)
        return cls(variant, deal, undo_depth=undo_depth)

    @classmethod
    def new(
        cls,
        game: str,
        *,
        deal: int = 0,
        draw: int | None = None,
        scoring: str | None = None,
        cells: int | None = None,
        undo_depth: int | None = None,
    ) -> Self:
        """A new game from names: ``Game.new("seahaven_towers", cells=2, deal=314)``."""
        variant = Variant.from_names(game, draw=draw, scoring=scoring, cells=cells)
        variant.code(deal)  # validates the deal number
        return cls(variant, int(deal), undo_depth=undo_depth)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, undo_depth: int | None = None) -> Self:
        """The game in position ``d`` (as written by :meth:`to_dict`), with an empty undo history.
        Raises :class:`~solitaire_gym.PositionError` naming what is wrong."""
        variant, deal = position.variant_of(d)
        g = cls(variant, deal, undo_depth=undo_depth)
        position.from_dict(d, g._s, 0)
        g._start_moves = g.moves
        return g

    def to_dict(self) -> dict[str, Any]:
        """The full position, hidden cards included (see ``engine/position.py`` for the format)."""
        return position.to_dict(self._s, 0, self._variant, self._deal)

    def copy(self) -> Self:
        g = type(self).__new__(type(self))
        g.__dict__.update(self.__dict__)
        g._s = copy_state(self._s)
        g._scratch = self._scratch.copy()
        return g

    # ---- facts -------------------------------------------------------------------------------
    @property
    def variant(self) -> Variant:
        return self._variant

    @property
    def code(self) -> str:
        return self._variant.code(self._deal)

    @property
    def deal(self) -> int:
        return self._deal

    @property
    def state(self) -> State:
        """The engine's arrays (a batch of one). Read-only by convention."""
        return self._s

    @property
    def cfg(self) -> np.ndarray:
        return self._cfg

    @property
    def score(self) -> int:
        return int(self._s.score[0])

    @property
    def score_text(self) -> str:
        return score_text(self.score, self._variant.vegas)

    @property
    def moves(self) -> int:
        """The app's move counter: every action counts; undo never lowers it."""
        return int(self._s.moves[0])

    @property
    def won(self) -> bool:
        return bool(rules.is_won(self._s, 0, self._cfg))

    @property
    def stuck(self) -> bool:
        """No legal move left and not won (the app never says so; the env ends there)."""
        return not self.won and len(self.legal_actions()) == 0

    @property
    def undo_available(self) -> bool:
        """Whether :meth:`undo` has an action to undo (:attr:`undo_count`: how many)."""
        return bool(self._s.hist_len[0] > 0)

    @property
    def undo_count(self) -> int:
        """How many actions :meth:`undo` can still undo in a row."""
        return int(self._s.hist_len[0])

    # ---- moves -------------------------------------------------------------------------------
    def legal_actions(self) -> np.ndarray:
        """The action ids (``engine/actions.py``) of the legal moves, ascending, as an ``int32``
        array; :meth:`legal_moves` gives the same moves as text."""
        n = movegen.legal_actions(self._s, 0, self._cfg, self._scratch)
        return self._scratch[:n].copy()

    def legal_moves(self) -> list[str]:
        """Every legal move once, in natural order: numbers compare as numbers, so ``t2>c``
        comes before ``t10>c``."""
        moves = (actions.action_to_move(self._cfg, int(a)) for a in self.legal_actions())
        return sorted(moves, key=_natural_key)

    def action(self, move: str) -> int:
        """The action id of ``move`` (see ``engine/actions.py``); raises if it is not a move."""
        return actions.move_to_action(self._cfg, move)

    def move_text(self, action: int) -> str:
        return actions.action_to_move(self._cfg, action)

    def _check(self, move: str | int) -> tuple[int, str | None]:
        if is_int(move):
            a = int(move)
            n = int(self._cfg[L_N])
            if not 0 <= a < n:
                raise MoveSyntaxError(f"action {shown(a)} is outside 0 … {n - 1}")
        else:
            try:
                a = actions.move_to_action(self._cfg, move)
            except IllegalMoveError as e:
                return -1, str(e)
        code = int(rules.check_move(self._s, 0, self._cfg, a))
        return a, (None if code == 0 else rules.refusal_text(self._cfg, a, code))

    def explain(self, move: str | int) -> str | None:
        """None if ``move`` is legal now, else the rule that forbids it, in plain words."""
        return self._check(move)[1]

    def is_legal(self, move: str | int) -> bool:
        return self.explain(move) is None

    def play(self, move: str | int) -> None:
        """Play ``move`` (a string, or an action id). Raises :class:`IllegalMoveError` (the rule)
        or :class:`MoveSyntaxError`; a refused move changes nothing."""
        a, why = self._check(move)
        if why is not None:
            err = IllegalMoveError(why)
            err.move = move  # type: ignore[attr-defined]
            raise err
        depth = self._s.hist.shape[1]
        if depth and self._s.hist_len[0] == depth:
            self._dropped = True  # the oldest action leaves the history
        play.play(self._s, 0, self._cfg, a)

    def undo(self) -> None:
        """Undo the last action: the position and score return; the move counter does not."""
        if not play.undo(self._s, 0, self._cfg):
            if self._s.hist.shape[1] == 0:
                raise UndoError("undo is off for this game (undo_depth=0)")
            if self._dropped:
                raise UndoError(
                    f"nothing left to undo (the app keeps the last {self._s.hist.shape[1]} actions)"
                )
            if self.moves == self._start_moves:
                raise UndoError("nothing to undo: no move has been made")
            raise UndoError("nothing left to undo: every move made has been undone")

    # ---- taps ---------------------------------------------------------------------------------
    def _where(self, pile: str) -> int:
        text = actions.notation_text(pile)
        m = _WHERE_RE.match(text) if text is not None else None
        cfg = self._cfg
        cols, cells = int(cfg[1]), int(self._variant.cells)
        if m is None:
            raise MoveSyntaxError(f"{shown(pile)} is not a pile to tap: expected 't1', 'w' or 'c1'")
        if m.group(1):
            if self._variant.game == SEAHAVEN:
                raise MoveSyntaxError(f"{self._variant.name} has no waste")
            return taps.WHERE_WASTE
        k = int(m.group(3))
        if m.group(2) == "t":
            if k > cols:
                raise MoveSyntaxError(f"{self._variant.name} has columns t1 … t{cols}")
            return k - 1
        if k > cells:
            raise MoveSyntaxError(
                f"{self._variant.name} has {'no free cells' if not cells else f'cells c1 … c{cells}'}"
            )
        return taps.WHERE_CELL + k - 1

    def tap(self, pile: str) -> str | None:
        """The move a single tap on ``pile`` (``"t4"``, ``"w"``, ``"c2"``) makes, or None.
        Nothing is played."""
        a = taps.tap(self._s, 0, self._cfg, self._where(pile))
        return None if a < 0 else self.move_text(a)

    def double_tap(self, pile: str) -> str | None:
        """The move a double tap on ``pile`` makes, or None. Nothing is played."""
        a = taps.double_tap(self._s, 0, self._cfg, self._where(pile))
        return None if a < 0 else self.move_text(a)

    # ---- display ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.code!r}, moves={self.moves}, score={self.score_text!r})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RulesGame) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return board_text(self.to_dict(), won=self.won)

    def _repr_png_(self) -> bytes | None:
        """Jupyter: the board picture (None without Pillow, the ``render`` extra)."""
        from solitaire_gym.rendering import notebook

        return notebook.png(self.to_dict())

    def _repr_html_(self) -> str:
        """Jupyter: the board picture over a line with the code, score, moves and legal moves."""
        from solitaire_gym.rendering import notebook

        n = len(self.legal_actions())
        state = "won" if self.won else "stuck" if n == 0 else f"{n} legal moves"
        caption = f"{self.code}   score {self.score_text}   moves {self.moves}   {state}"
        return notebook.boards_html([self.to_dict()], [caption])
