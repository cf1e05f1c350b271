"""Playthroughs as trace files: save, load (replayed and checked through the engine), record.

A trace is one game played from its start, as a JSON object (``"format": "solitaire_gym.trace"``,
``"version": 1``)::

    {
      "format": "solitaire_gym.trace",
      "version": 1,
      "code": "SH1-C4-AAAAAJ2",         the game code (its variant gives the rules)
      "agent": "random",                optional: who played (a name), or null
      "start": {...},                   optional: a position dict (Game.to_dict()) to start from
                                        instead of the code's deal; its "code" is the trace's code
      "moves": ["t1>t7", "t10>c", ...], the actions in order, in the notation of docs/rules.md;
                                        "undo" undoes the last action, as the app's undo button does
      "scores": [0, 0, 10, ...]         optional: the app's score after each move (Vegas: dollars)
    }

:func:`load_trace` replays the moves through :class:`~solitaire_gym.Game` and refuses a trace
that is not valid JSON, has the wrong format or version, an unknown field, a bad code or start
position, or a move the rules refuse, or whose scores differ from the engine's, with a
:class:`TraceError` that names the first bad field or move, e.g.
``move 17 ('t3>t9'): a card goes on a card of the same suit and one rank higher``.

:class:`TraceRecorder` wraps a :class:`~solitaire_gym.SolitaireEnv` and writes one trace per
finished episode; :class:`VectorTraceRecorder` does the same for a
:class:`~solitaire_gym.SolitaireVectorEnv` (next-step autoreset).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.json"
>>> _ = save_trace(path, "SH1-C4-AAAAAJ2", ["t1>t7", "t10>c"], agent="doctest")
>>> trace = load_trace(path)
>>> trace.final["moves"], trace.agent
(2, 'doctest')
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from solitaire_gym.engine import actions as engine_actions
from solitaire_gym.engine.scoring import score_text
from solitaire_gym.engine.variants import L_N, parse_code
from solitaire_gym.envs.kernels import ACT_UNDO
from solitaire_gym.envs.solitaire_env import SolitaireEnv
from solitaire_gym.envs.vector_env import SolitaireVectorEnv
from solitaire_gym.errors import SolitaireError, is_int, shown
from solitaire_gym.files import FileFormatError, read_limited, strict_json, write_atomic
from solitaire_gym.game import Game
from solitaire_gym.rendering import MAX_RENDER_MOVES

FORMAT = "solitaire_gym.trace"
VERSION = 1
UNDO = "undo"
_FIELDS = ("format", "version", "code", "agent", "start", "moves", "scores")
MAX_TRACE_BYTES = 64 * 2**20
"""Largest trace file :func:`load_trace` reads (about 8 million moves of notation)."""
MAX_TRACE_MOVES = 1_000_000
"""Most moves a trace may hold (the apps' games run to a few hundred)."""
_CHECKPOINT_EVERY = 256  # Trace.positions keeps a copy of the game every this many moves


class TraceError(SolitaireError):
    """A trace file that cannot be read or replayed. ``field`` names the bad field and ``move``
    the 1-based number of the first bad move (or None)."""

    def __init__(self, message: str, *, field: str | None = None, move: int | None = None):
        super().__init__(message)
        self.field = field
        self.move = move


class Positions(Sequence):
    """The positions of a replayed trace, as a read-only sequence of ``Game.to_dict()`` dicts:
    ``[0]`` is the start, ``[k]`` the position after move ``k``. Built on demand from a copy of
    the game kept every 256 moves, so a trace costs a few bytes per move, not a dict per move;
    reading them in order (iterating, or ``[k]`` then ``[k + 1]``) replays each move once."""

    def __init__(self, checkpoints: list[Game], moves: Sequence[str], final: dict) -> None:
        self._checkpoints = checkpoints
        self._moves = moves
        self._final = final
        self._cursor: tuple[int, Game] | None = None

    def __len__(self) -> int:
        return len(self._moves) + 1

    @staticmethod
    def _apply(game: Game, move: str) -> None:
        if engine_actions.notation_text(move) == UNDO:
            game.undo()
        else:
            game.play(move)

    def _game_at(self, k: int) -> Game:
        cur = self._cursor
        if cur is None or not 0 <= k - cur[0] < _CHECKPOINT_EVERY:
            base = k // _CHECKPOINT_EVERY * _CHECKPOINT_EVERY
            cur = (base, self._checkpoints[k // _CHECKPOINT_EVERY].copy())
        at, game = cur
        for i in range(at, k):
            self._apply(game, self._moves[i])
        self._cursor = (k, game)
        return game

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if not is_int(k):
            raise TypeError(f"positions are indexed by integers, not {type(k).__name__}")
        n = len(self)
        k = int(k) + n if k < 0 else int(k)
        if not 0 <= k < n:
            raise IndexError(f"position {k} is outside 0 … {n - 1}")
        if k == n - 1:
            return dict(self._final)
        return self._game_at(k).to_dict()

    def __iter__(self) -> Iterator[dict]:
        game = self._checkpoints[0].copy()
        yield game.to_dict()
        for move in self._moves:
            self._apply(game, move)
            yield game.to_dict()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Positions, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} positions>"


@dataclass
class Trace:
    """A replayed trace. ``positions[0]`` is the start; ``positions[k]`` the position after move
    ``k`` (``Game.to_dict()`` dicts, each with its score and move counter; a :class:`Positions`
    sequence that builds them on demand)."""

    code: str
    moves: list[str]
    agent: str | None = None
    scores: list[int] | None = None
    start: dict[str, Any] | None = None
    positions: Sequence[dict[str, Any]] = field(default_factory=list, repr=False)
    won: bool = False  # the last position is a won game

    @property
    def final(self) -> dict[str, Any]:
        return self.positions[-1]

    @property
    def vegas(self) -> bool:
        return parse_code(self.code)[0].vegas

    def score_text(self, step: int) -> str:
        """The app's display of the score at ``positions[step]`` (``1220``, ``-$104``)."""
        return score_text(self.positions[step]["score"], self.vegas)

    def _repr_html_(self) -> str:
        """Jupyter: the replay page (step, play, jump), inline; the last board only without
        Pillow (the ``render`` extra) or past :data:`MAX_RENDER_MOVES` moves."""
        from solitaire_gym.rendering import notebook

        if len(self.moves) > MAX_RENDER_MOVES or notebook.png(self.positions[0]) is None:
            caption = f"{self.code}: {len(self.moves)} moves, final position"
            return notebook.boards_html([self.final], [caption])
        return notebook.replay_html(self)

    def _repr_png_(self) -> bytes | None:
        """Jupyter (where HTML does not show): the picture of the last position."""
        from solitaire_gym.rendering import notebook

        return notebook.png(self.final)

    def to_dict(self) -> dict[str, Any]:
        return _trace_dict(self.code, self.moves, self.agent, self.scores, self.start)

    def save(self, path: str | os.PathLike) -> Path:
        return save_trace(
            path, self.code, self.moves, agent=self.agent, scores=self.scores, start=self.start
        )

    @classmethod
    def from_dict(cls, d: Any) -> Trace:
        """Check ``d`` (a parsed trace file) field by field and replay it; raises
        :class:`TraceError` naming the first bad field or move."""
        if not isinstance(d, dict):
            raise TraceError(f"a trace is a JSON object, not {type(d).__name__}")
        if "format" not in d:
            raise TraceError(f"missing field 'format' (expected {FORMAT!r})", field="format")
        if d["format"] != FORMAT:
            raise TraceError(
                f"field 'format' is {shown(d['format'])}, expected {FORMAT!r}", field="format"
            )
        if type(d.get("version")) is not int or d["version"] != VERSION:
            raise TraceError(
                f"field 'version' is {shown(d.get('version'))}; this package reads version "
                f"{VERSION}",
                field="version",
            )
        unknown = sorted((k for k in d if k not in _FIELDS), key=repr)
        if unknown:
            raise TraceError(f"unknown field {shown(unknown[0])}", field=shown(unknown[0]))
        for name in ("code", "moves"):
            if name not in d:
                raise TraceError(f"missing field {name!r}", field=name)
        try:
            variant, deal = parse_code(d["code"])
        except SolitaireError as e:
            raise TraceError(f"field 'code': {e}", field="code") from None
        code = variant.code(deal)
        agent = d.get("agent")
        if agent is not None and not isinstance(agent, str):
            raise TraceError(
                f"field 'agent' must be a string or null, not {shown(agent)}", field="agent"
            )
        moves = d["moves"]
        if not isinstance(moves, list):
            raise TraceError("field 'moves' must be a list of move strings", field="moves")
        if len(moves) > MAX_TRACE_MOVES:
            raise TraceError(
                f"field 'moves' holds {len(moves)} moves; a trace holds at most {MAX_TRACE_MOVES}",
                field="moves",
            )
        for k, m in enumerate(moves, 1):
            if not isinstance(m, str):
                raise TraceError(
                    f"move {k}: {shown(m)} is not a move string", field="moves", move=k
                )
        scores = d.get("scores")
        if scores is not None:
            if not isinstance(scores, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) for s in scores
            ):
                raise TraceError("field 'scores' must be a list of integers", field="scores")
            if len(scores) != len(moves):
                raise TraceError(
                    f"field 'scores' has {len(scores)} entries for {len(moves)} moves",
                    field="scores",
                )
        start = d.get("start")
        if start is None:
            game = Game(variant, deal)
        else:
            try:
                game = Game.from_dict(start)
            except SolitaireError as e:
                raise TraceError(f"field 'start': {e}", field="start") from None
            if game.code != code:
                raise TraceError(
                    f"field 'start' is a position of {game.code}, but field 'code' is {code}",
                    field="start",
                )
        trace = cls(code, list(moves), agent, None if scores is None else list(scores), start)
        trace.positions = _replay(game, trace.moves, scores)
        trace.won = game.won
        return trace


def _replay(game: Game, moves: Sequence[str], scores: Sequence[int] | None) -> Positions:
    """Play ``moves`` on ``game`` (checking each, and the scores), keeping a copy of the game
    every ``_CHECKPOINT_EVERY`` moves for :class:`Positions`."""
    checkpoints = [game.copy()]
    for k, move in enumerate(moves, 1):
        try:
            Positions._apply(game, move)
        except SolitaireError as e:
            raise TraceError(f"move {k} ({shown(move)}): {e}", field="moves", move=k) from None
        if scores is not None and scores[k - 1] != game.score:
            raise TraceError(
                f"move {k} ({shown(move)}): the score after it is {game.score}, but field "
                f"'scores' says {shown(scores[k - 1])}",
                field="scores",
                move=k,
            )
        if k % _CHECKPOINT_EVERY == 0:
            checkpoints.append(game.copy())
    return Positions(checkpoints, tuple(moves), game.to_dict())


def load_trace(path: str | os.PathLike) -> Trace:
    """Read, check and replay the trace file at ``path`` (see the module docstring). The file
    is read as strict JSON (:func:`solitaire_gym.files.strict_json`: no key given twice, no lone
    surrogate, no ``NaN``), at most :data:`MAX_TRACE_BYTES`, and never blocks on a named pipe."""
    if not isinstance(path, (str, os.PathLike)):
        raise TraceError(f"a trace path is a string or a path, not {type(path).__name__}")
    name = shown(os.fspath(path))
    try:
        text = read_limited(path, MAX_TRACE_BYTES).decode("utf-8")
    except FileFormatError as e:
        raise TraceError(f"cannot read trace {name}: {e}") from None
    except UnicodeDecodeError as e:
        raise TraceError(f"cannot read trace {name}: not UTF-8 text (byte {e.start})") from None
    try:
        d = strict_json(text)
    except FileFormatError as e:
        raise TraceError(f"trace {name} is not valid JSON: {e}") from None
    return Trace.from_dict(d)


def _trace_dict(code, moves, agent, scores, start) -> dict[str, Any]:
    variant, deal = parse_code(code)
    d: dict[str, Any] = {"format": FORMAT, "version": VERSION, "code": variant.code(deal)}
    if agent is not None:
        if not isinstance(agent, str) or not _utf8(agent):
            raise TraceError(f"agent must be a string (UTF-8), not {shown(agent)}", field="agent")
        d["agent"] = agent
    if start is not None:
        try:
            Game.from_dict(start)
        except SolitaireError as e:
            raise TraceError(f"start: {e}", field="start") from None
        d["start"] = start
    if not isinstance(moves, (list, tuple)):
        raise TraceError(f"moves must be a list of move strings, not {shown(moves)}", field="moves")
    d["moves"] = list(moves)
    for k, m in enumerate(d["moves"], 1):
        if not isinstance(m, str) or not m.isascii():
            raise TraceError(
                f"move {k}: {shown(m)} is not a move string (ASCII)", field="moves", move=k
            )
    if scores is not None:
        if not isinstance(scores, (list, tuple)) or not all(is_int(s) for s in scores):
            raise TraceError(
                f"scores must be a list of integers, not {shown(scores)}", field="scores"
            )
        d["scores"] = [int(s) for s in scores]
        if len(d["scores"]) != len(d["moves"]):
            raise TraceError(
                f"scores has {len(d['scores'])} entries for {len(d['moves'])} moves",
                field="scores",
            )
    return d


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def _dumps(d: dict[str, Any]) -> str:
    """JSON with one field per line and long lists wrapped, for people reading the file."""
    lines = []
    for key, value in d.items():
        if isinstance(value, list) and len(value) > 16:
            rows = [
                ", ".join(json.dumps(v) for v in value[i : i + 16])
                for i in range(0, len(value), 16)
            ]
            text = "[\n    " + ",\n    ".join(rows) + "\n  ]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        lines.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def save_trace(
    path: str | os.PathLike,
    code: str,
    moves: Sequence[str],
    *,
    agent: str | None = None,
    scores: Sequence[int] | None = None,
    start: dict[str, Any] | None = None,
) -> Path:
    """Write a trace file (creating its folder) and return its path. ``moves`` are in the notation
    of docs/rules.md (``"undo"`` allowed); ``scores`` the app's score after each move; ``start`` a
    position dict for a game that does not start from the code's deal. The moves are not replayed
    here: :func:`load_trace` checks them. The file is written beside ``path`` and renamed over it
    (an old file survives a failed write); a symbolic link at ``path`` is refused, not followed."""
    d = _trace_dict(code, moves, agent, scores, start)
    try:
        return write_atomic(path, _dumps(d))
    except FileFormatError as e:
        raise TraceError(f"cannot write trace: {e}") from None


# ---- recording from the envs -------------------------------------------------------------------
class _MoveNames:
    """The move each engine action id plays, for the envs' ``_core.engine_act`` (which holds,
    after a step, the engine action that step played: the action itself in ``action_mode="move"``,
    the move a tap chose in ``"tap"``, or the undo marker)."""

    def __init__(self, core) -> None:
        self.core = core
        n = int(core.cfg[L_N])
        self.names = [engine_actions.action_to_move(core.cfg, a) for a in range(n)]

    def played(self, row: int) -> str:
        e = int(self.core.engine_act[row])
        return UNDO if e == ACT_UNDO else self.names[e]


def _core_of(env, kind: type) -> Any:
    base = getattr(env, "unwrapped", None)
    if not isinstance(base, kind):
        what = type(env if base is None else base).__name__
        raise TypeError(f"a trace recorder wraps a {kind.__name__}, not {what}")
    return base._core


_PREFIX_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")


class _EpisodeLog:
    def __init__(self, directory, agent, prefix) -> None:
        """Checks ``agent`` and ``prefix`` before anything is made or played: a trace file's name
        is ``prefix`` and a few fields, in ``directory`` and nowhere else."""
        if not isinstance(directory, (str, os.PathLike)):
            raise TraceError(f"directory must be a path, not {shown(directory)}")
        if agent is not None and (not isinstance(agent, str) or not _utf8(agent)):
            raise TraceError(f"agent must be a string (UTF-8) or None, not {shown(agent)}")
        if not isinstance(prefix, str) or not _PREFIX_RE.fullmatch(prefix):
            raise TraceError(
                f"name_prefix must be 1 to 64 ASCII letters, digits, '.', '_' or '-' (a file "
                f"name, no folder), not {shown(prefix)}"
            )
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.agent = agent
        self.prefix = prefix
        self.count = 0
        self.paths: list[Path] = []

    def write(self, code: str, moves, scores, start=None) -> Path:
        self.count += 1
        path = self.directory / f"{self.prefix}-{self.count:06d}-{code}.json"
        self.paths.append(
            save_trace(path, code, moves, agent=self.agent, scores=scores, start=start)
        )
        return path


class TraceRecorder(gym.Wrapper):
    """Write one trace file per finished episode (terminated or truncated) of a
    :class:`~solitaire_gym.SolitaireEnv` (``gym.make`` wrappers around it are fine) into
    ``directory``, as ``{name_prefix}-{n:06d}-{code}.json``; ``paths`` lists the files written.
    Refused (illegal) actions change nothing and are not recorded; an env undo is written as
    ``"undo"``; a game reset from ``options={"state": ...}`` keeps its start position. An episode
    cut short by a reset is not written. ``name_prefix`` is a plain file name (1 to 64 ASCII
    letters, digits, ``.``, ``_`` or ``-``) and ``agent`` a string or None; both are checked
    when the recorder is made (:class:`TraceError`)."""

    def __init__(
        self,
        env: gym.Env,
        directory: str | os.PathLike,
        *,
        agent: str | None = None,
        name_prefix: str = "episode",
    ) -> None:
        core = _core_of(env, SolitaireEnv)
        self._log = _EpisodeLog(directory, agent, name_prefix)
        super().__init__(env)
        self._names = _MoveNames(core)
        self._code: str | None = None
        self._moves: list[str] = []
        self._scores: list[int] = []
        self._start: dict | None = None

    @property
    def paths(self) -> list[Path]:
        return self._log.paths

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._code, self._moves, self._scores = info["code"], [], []
        custom = options is not None and options.get("state") is not None
        self._start = self.env.unwrapped.to_dict() if custom else None
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "illegal_move" not in info:
            self._moves.append(self._names.played(0))
            self._scores.append(int(info["score"]))
        if (terminated or truncated) and self._code is not None:
            self._log.write(self._code, self._moves, self._scores, self._start)
            self._code = None  # written once, even if the caller steps on
        return obs, reward, terminated, truncated, info


class VectorTraceRecorder(gym.vector.VectorWrapper):
    """:class:`TraceRecorder` for a :class:`~solitaire_gym.SolitaireVectorEnv`: one move list per
    game, one trace file per finished episode. The vector env resets a finished game on the next
    step (whose action it ignores); that step starts the game's new move list."""

    def __init__(
        self,
        env,
        directory: str | os.PathLike,
        *,
        agent: str | None = None,
        name_prefix: str = "episode",
    ) -> None:
        core = _core_of(env, SolitaireVectorEnv)
        self._log = _EpisodeLog(directory, agent, name_prefix)
        super().__init__(env)
        self._names = _MoveNames(core)
        n = env.unwrapped.num_envs
        self._codes: list[str | None] = [None] * n
        self._moves: list[list[str]] = [[] for _ in range(n)]
        self._scores: list[list[int]] = [[] for _ in range(n)]
        self._resetting = np.zeros(n, np.bool_)

    @property
    def paths(self) -> list[Path]:
        return self._log.paths

    def _begin(self, i: int, code: str) -> None:
        self._codes[i], self._moves[i], self._scores[i] = str(code), [], []

    def reset(self, *, seed=None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        rows = range(self.num_envs) if mask is None else np.flatnonzero(mask).tolist()
        for i in rows:
            self._begin(i, info["code"][i])
            self._resetting[i] = False
        return obs, info

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        # 'illegal_move' is in info only when some game's action was refused (as in Gymnasium's
        # own vector envs), with '_illegal_move' marking those games.
        illegal = info.get("_illegal_move", np.zeros(self.num_envs, np.bool_))
        for i in range(self.num_envs):
            if self._resetting[i]:  # this step dealt game i anew and ignored its action
                self._begin(i, info["code"][i])
                continue
            if not illegal[i]:
                self._moves[i].append(self._names.played(i))
                self._scores[i].append(int(info["score"][i]))
            if (terminated[i] or truncated[i]) and self._codes[i] is not None:
                self._log.write(self._codes[i], self._moves[i], self._scores[i])
                self._codes[i] = None
        self._resetting = np.asarray(terminated | truncated, np.bool_).copy()
        return obs, rewards, terminated, truncated, info
