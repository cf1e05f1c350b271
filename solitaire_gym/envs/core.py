"""What the single env, the vector env and the SB3 adapter share: options and their validation,
deal splits, and :class:`EnvCore`, a batch of games with its env-side buffers (rewards, masks,
observations) stepped by ``kernels.step_rows``.
"""

from __future__ import annotations

import difflib
import inspect
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from solitaire_gym.engine import actions as engine_actions
from solitaire_gym.engine import position, threads
from solitaire_gym.engine.batch import Batch, int_array
from solitaire_gym.engine.rules import R_BAD_ACTION, refusal_text
from solitaire_gym.engine.state import allocate
from solitaire_gym.engine.variants import (
    G_COLS,
    G_PILES,
    L_CELLS,
    L_STOCK,
    MAX_DEAL,
    Variant,
    parse_code,
)
from solitaire_gym.envs import deal_lists, kernels
from solitaire_gym.envs.observation import OBS_DTYPES, layout
from solitaire_gym.errors import ArgumentError, GameCodeError, MoveSyntaxError, is_int, shown

# ---- deal splits -------------------------------------------------------------------------------
EVAL_SPLIT_END = 2**20
"""Deal numbers ``0 … 2^20 − 1`` (codes ``AAA····`` to ``AAD7777``) are the **evaluation split**;
``2^20 … 2^35 − 1`` the **training split**. Envs draw training deals unless told otherwise, so an
agent is judged on deals it never trained on."""

SPLITS = {"train": (EVAL_SPLIT_END, MAX_DEAL + 1), "eval": (0, EVAL_SPLIT_END)}


def sample_deals(rng: np.random.Generator, n: int, split: str) -> np.ndarray:
    lo, hi = SPLITS[split]
    return rng.integers(lo, hi, size=n, dtype=np.int64)


MAX_GAMES = 2**20  # games in one vector env
MAX_STEPS = 2**40  # largest max_episode_steps (the step counters are int64)


def count_in(value: Any, high: int) -> bool:
    """``value`` is an integer (not a bool) in ``1 … high``."""
    return is_int(value) and 1 <= value <= high


def check_seed(seed: Any) -> int | None:
    """A reset seed: None or an integer >= 0 (what ``np.random.default_rng`` takes)."""
    if seed is None:
        return None
    if not is_int(seed) or seed < 0:
        raise ArgumentError(f"seed must be None or an integer >= 0, not {shown(seed)}")
    return int(seed)


# ---- options -----------------------------------------------------------------------------------
REWARD_MODES = {
    "app": kernels.REWARD_APP,
    "fair": kernels.REWARD_FAIR,
    "win": kernels.REWARD_WIN,
    "foundation": kernels.REWARD_FOUNDATION,
}
DEAL_SOURCES = ("random", "solvable")
ACTION_MODES = {"move": kernels.MODE_MOVE, "tap": kernels.MODE_TAP}
# Fewest games for which a step runs on all cores (fewer run on one thread). Waking the threads
# costs 60–70 µs with numba's omp layer as the package starts it (``engine/threads.py``) and
# 105–115 µs with workqueue (``benchmarks/bench_launch.py``), against ~1 µs of work per game; on
# 2 cores parallel steps paid from about 250 games with omp and about 600 with workqueue. None:
# by the threading layer in use.
PARALLEL_MIN: int | None = None


def runs_parallel(games: int) -> bool:
    """Whether a step or refresh of ``games`` games runs on all cores."""
    return threads.use_parallel(games, threaded=256, workqueue=640, fixed=PARALLEL_MIN)


DEFAULT_MAX_EPISODE_STEPS = {"DS1": 2000, "TF1": 1000, "SH1": 500}


@dataclass(frozen=True)
class EnvOptions:
    """Validated env arguments (see the env docstrings)."""

    variant: Variant
    reward_mode: str = "app"
    action_mode: str = "move"
    undo: bool = False
    illegal_action: str = "penalty"
    illegal_penalty: float = 0.0
    split: str = "train"
    win_bonus: float = 0.0
    deals: str = "random"
    obs_dtype: str = "float32"

    @classmethod
    def build(
        cls,
        game: str,
        *,
        draw: int | None = None,
        scoring: str | None = None,
        cells: int | None = None,
        reward_mode: str = "app",
        action_mode: str = "move",
        undo: bool = False,
        illegal_action: str = "penalty",
        illegal_penalty: float = 0.0,
        split: str = "train",
        win_bonus: float = 0.0,
        deals: str = "random",
        obs_dtype: str = "float32",
        **unknown: Any,
    ) -> EnvOptions:
        if unknown:
            raise TypeError(unknown_option_message(sorted(unknown)[0]))
        variant = Variant.from_names(game, draw=draw, scoring=scoring, cells=cells)

        def pick(name: str, value: Any, allowed) -> None:
            if not isinstance(value, str) or value not in allowed:
                raise ArgumentError(f"{name}={shown(value)} is not one of {sorted(allowed)}")

        pick("reward_mode", reward_mode, REWARD_MODES)
        pick("action_mode", action_mode, ACTION_MODES)
        pick("illegal_action", illegal_action, ("penalty", "raise"))
        pick("split", split, SPLITS)
        pick("deals", deals, DEAL_SOURCES)
        pick("obs_dtype", obs_dtype, OBS_DTYPES)
        if not isinstance(undo, (bool, np.bool_)):
            raise ArgumentError(f"undo must be True or False, not {shown(undo)}")

        def amount(name: str, value: Any) -> float:
            ok = is_int(value) or isinstance(value, (float, np.floating))
            try:
                number = float(value) if ok else -1.0
            except OverflowError:  # an integer too large for a float
                number = float("inf")
            if not np.isfinite(number) or number < 0:
                raise ArgumentError(f"{name} must be a finite number >= 0, not {shown(value)}")
            return number

        penalty = amount("illegal_penalty", illegal_penalty)
        bonus = amount("win_bonus", win_bonus)
        if bonus and reward_mode != "foundation":
            raise ArgumentError(
                f"win_bonus is a part of reward_mode='foundation' only, not of {reward_mode!r}"
            )
        if deals == "solvable":
            if split != "train":
                raise ArgumentError(
                    "deals='solvable' draws from a list of training deals: it cannot be combined "
                    f"with split={split!r} (evaluation deals are drawn as they are)"
                )
            deal_lists.solvable_deals(variant)  # the list is shipped and readable
        return cls(
            variant, reward_mode, action_mode, bool(undo), illegal_action, penalty, split, bonus,
            deals, obs_dtype,
        )  # fmt: skip


ENV_ARGUMENTS = ("render_mode", "max_episode_steps")
"""Arguments the envs take besides :meth:`EnvOptions.build`'s (the vector env also ``num_envs``
and ``copy``)."""


def option_names() -> list[str]:
    """Every keyword an env takes: :meth:`EnvOptions.build`'s, read from its signature, and
    :data:`ENV_ARGUMENTS`."""
    params = inspect.signature(EnvOptions.build).parameters.values()
    names = [p.name for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    return [*names, *ENV_ARGUMENTS]


def unknown_option_message(name: str) -> str:
    valid = option_names()
    close = difflib.get_close_matches(name, valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown env option {shown(name)}{hint}; the options are: {', '.join(valid)}"


class EnvCore:
    """``num`` games with the env's buffers. Row-wise operations; no episode bookkeeping."""

    def __init__(self, opts: EnvOptions, num: int) -> None:
        self.opts = opts
        self.variant = opts.variant
        depth = opts.variant.undo_depth if opts.undo else 0
        self.batch = Batch(opts.variant, num, undo_depth=depth)
        self.state = self.batch.state
        self.cfg = self.batch.cfg
        self.num = num
        self.mode = ACTION_MODES[opts.action_mode]
        self.reward_mode = REWARD_MODES[opts.reward_mode]
        self.n_piles = int(self.cfg[G_PILES])
        self._solvable = (
            deal_lists.solvable_deals(opts.variant) if opts.deals == "solvable" else None
        )
        self.n_actions = kernels.n_env_actions(self.cfg, self.mode, opts.undo)
        self.n_base = self.n_actions - int(opts.undo)
        self.layout = layout(self.cfg)
        self.obs_dim = self.layout.size
        self.obs = np.zeros((num, self.obs_dim), np.dtype(opts.obs_dtype))
        self.masks = np.zeros((num, self.n_actions), np.int8)
        self.counts = np.zeros(num, np.int32)
        self.won = np.zeros(num, np.bool_)
        self.rewards = np.zeros(num, np.float32)
        self.reasons = np.zeros(num, np.int64)
        self.engine_act = np.zeros(num, np.int64)
        self.deals = np.zeros(num, np.int64)
        self._new_deals = np.zeros(num, np.int64)
        self._no_deals = np.zeros(0, np.int64)
        self._spares: dict[str, list[np.ndarray]] = {"obs": [], "masks": [], "rewards": []}
        self.codes = np.empty(num, dtype=object)
        self.parallel = runs_parallel(num)  # steps on all cores

    # spaces
    def observation_space(self) -> spaces.Box:
        if self.obs.dtype == np.uint8:  # counts (observation.scales)
            return spaces.Box(0, 255, shape=(self.obs_dim,), dtype=np.uint8)
        return spaces.Box(0.0, 4.0, shape=(self.obs_dim,), dtype=np.float32)

    def action_space(self) -> spaces.Discrete:
        return spaces.Discrete(self.n_actions)

    # rows
    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` deal numbers for games the env deals itself: from the split, or with
        ``deals="solvable"`` from the shipped list of solvable training deals."""
        if self._solvable is not None:
            return self._solvable[rng.integers(0, self._solvable.size, size=n)]
        return sample_deals(rng, n, self.opts.split)

    def foundation_cards(self) -> np.ndarray:
        """Cards on the foundations of every game, ``(num,)`` int64 (read from the engine)."""
        return self.state.found[:, : self.n_piles].sum(axis=1, dtype=np.int64)

    def refresh(self, rows: np.ndarray, deals: np.ndarray | None = None) -> None:
        """Recompute the env buffers of ``rows``, dealing ``deals`` into them first if given."""
        args = (
            self.state, self.cfg, self.mode, self.n_base, self.opts.undo,
            rows, self._no_deals if deals is None else deals,
            self.masks, self.counts, self.won, self.obs,
        )  # fmt: skip
        if runs_parallel(rows.size):
            kernels.refresh_rows(*args, threads.num_threads())
        else:
            kernels.refresh_rows_serial(*args)

    def skip_dead_deals(self, rows: np.ndarray, rng: np.random.Generator) -> None:
        """Deal again, from the split, into those of ``rows`` whose new game has no legal move at
        all (a few Seahaven deals with 2 or 1 cells): a drawn deal always offers a first move.
        Deals asked for by code or number are never replaced."""
        rows = np.asarray(rows, np.int64)
        dead = rows[(self.counts[rows] == 0) & ~self.won[rows]]
        while dead.size:
            self.deal(dead, self.draw(rng, dead.size))
            dead = dead[(self.counts[dead] == 0) & ~self.won[dead]]

    def deal(self, rows: np.ndarray, deals: np.ndarray) -> None:
        rows = np.asarray(rows, np.int64)
        deals = np.asarray(deals, np.int64)
        if deals.shape != rows.shape:
            raise ArgumentError(f"{deals.size} deal numbers for {rows.size} games")
        self.codes[rows] = self.variant.codes(deals)  # validates the numbers
        self.deals[rows] = deals
        self.refresh(rows, deals)

    def set_position(self, row: int, d: dict) -> None:
        variant, deal = position.variant_of(d)
        self.check_variant(variant, "state")
        position.from_dict(d, self.state, row)
        self.deals[row] = deal
        self.codes[row] = variant.code(deal)
        self.refresh(np.array([row], np.int64))

    def check_variant(self, variant: Variant, what: str) -> None:
        if variant != self.variant:
            raise GameCodeError(
                f"{what} is a {variant.tag} game; this env plays {self.variant.tag}"
            )

    def reset_request(self, options: Any, n: int, *, state: bool):
        """Check ``reset(options=...)`` without touching any game or random generator: the deal
        numbers asked for (an array of ``n``), a checked position dict (``"state"``, where
        ``state`` allows it), or None (draw from the split). Raises :class:`ArgumentError` (or
        the code's or position's own error) naming the bad option."""
        if options is None:
            return None
        if not isinstance(options, dict):
            raise ArgumentError(f"reset options are a dict, not {type(options).__name__}")
        keys = ("code", "deal", "state") if state else ("code", "deal")
        unknown = sorted((k for k in options if k not in keys), key=repr)
        if unknown:
            raise ArgumentError(
                f"unknown reset option {shown(unknown[0])}: use {', '.join(map(repr, keys))}"
            )
        given = [k for k in keys if options.get(k) is not None]
        if len(given) > 1:
            raise ArgumentError(f"reset options {given} conflict: give one of {', '.join(keys)}")
        if not given:
            return None
        key = given[0]
        value = options[key]
        if key == "state":
            if not isinstance(value, dict):
                raise ArgumentError(
                    f"reset option 'state' is a position dict (Game.to_dict()), not "
                    f"{type(value).__name__}"
                )
            variant, _ = position.variant_of(value)
            self.check_variant(variant, "state")
            position.from_dict(
                value, allocate(1, variant.n_cards), 0
            )  # checks, writes nothing here
            return value
        if key == "code":
            values = [value] if isinstance(value, str) else value
            if not isinstance(values, (list, tuple, np.ndarray)) or len(values) != n:
                raise ArgumentError(
                    f"reset option 'code' takes {'a code or ' if n == 1 else ''}a list of {n} "
                    f"codes, not {shown(value)}"
                )
            out = []
            for v in values:
                variant, deal = parse_code(v)
                self.check_variant(variant, f"code {shown(v)}")
                out.append(deal)
            return np.array(out, np.int64)
        one = is_int(value)
        deals = int_array([value] if one else value, "reset option 'deal'")
        if deals.size != n or (not one and np.ndim(value) != 1):
            raise ArgumentError(f"reset option 'deal' takes {n} deal numbers, not {shown(value)}")
        self.variant.codes(deals)  # validates the numbers
        return deals

    def detach(self) -> None:
        """Give the env new observation, mask and reward buffers (copies of the current ones), so
        that arrays handed out before are never written again."""
        self.obs = self.obs.copy()
        self.masks = self.masks.copy()
        self.rewards = self.rewards.copy()

    def _fresh(self, name: str) -> np.ndarray:
        """A buffer like ``self.<name>`` that nobody else holds: one handed out before whose only
        references are ours (no caller, view or tensor keeps it), else a new one. Allocating
        35 MB per step (4096 Double Solitaire observations) costs page faults; reuse does not."""
        current = getattr(self, name)
        spares = self._spares[name]
        spares.append(current)
        for i in range(len(spares) - 1):  # not the current one (the last): it is being replaced
            # References when nobody else holds it: the list, ``a`` and getrefcount's argument.
            a = spares[i]
            if sys.getrefcount(a) == 3:
                del spares[i]
                break
        else:
            a = np.empty_like(current)
        del spares[:-2]  # keep the last two handed out
        return a

    def step(
        self, act: np.ndarray, redeal: np.ndarray | None = None, deals=None, fresh: bool = False
    ) -> None:
        """Play ``act[b]`` in every row (``kernels.ROW_REFRESH``: leave the row as it is); the
        rows in ``redeal`` get the new deal numbers ``deals`` instead of an action. The kernel
        writes every row's observation, mask and reward; with ``fresh`` it writes them into
        buffers nobody else holds (:meth:`_fresh`: what a caller that hands them out needs,
        without a copy afterwards)."""
        if fresh:
            self.obs = self._fresh("obs")
            self.masks = self._fresh("masks")
            self.rewards = self._fresh("rewards")
        if redeal is not None and redeal.size:
            self.codes[redeal] = self.variant.codes(deals)  # validates the numbers
            act[redeal] = kernels.ROW_DEAL
            self._new_deals[redeal] = deals
            self.deals[redeal] = deals
        args = (
            self.state, self.cfg, self.mode, self.n_base, self.opts.undo,
            self.reward_mode, self.opts.illegal_penalty, self.opts.win_bonus, act, self._new_deals,
            self.rewards, self.reasons, self.engine_act, self.masks, self.counts, self.won,
            self.obs,
        )  # fmt: skip
        if self.parallel and threads.parallel_ok():
            kernels.step_rows(*args, threads.num_threads())
        else:
            kernels.step_rows_serial(*args)

    def refusal(self, row: int) -> str:
        code = int(self.reasons[row])
        if code == kernels.R_NOTHING_TO_UNDO:
            return "nothing to undo"
        e = int(self.engine_act[row])
        if e == kernels.ACT_NONE or code == R_BAD_ACTION:
            return "this tap finds no move for the card"
        return refusal_text(self.cfg, e, code)

    # action names
    def action_to_move(self, a: int) -> str:
        a = self.check_action(a)
        if a == self.n_base:
            return "undo"
        if self.mode == kernels.MODE_MOVE:
            return engine_actions.action_to_move(self.cfg, a)
        return self.tap_names()[a]

    def move_to_action(self, move: str) -> int:
        text = engine_actions.notation_text(move)
        if text == "undo" and self.opts.undo:
            return self.n_base
        if self.mode == kernels.MODE_MOVE:
            return engine_actions.move_to_action(self.cfg, move)
        names = self.tap_names()
        if text not in names:
            raise MoveSyntaxError(f"{shown(move)} is not a tap action; expected one of {names}")
        return names.index(text)

    def tap_names(self) -> list[str]:
        cols, cells, stock = int(self.cfg[G_COLS]), int(self.cfg[L_CELLS]), bool(self.cfg[L_STOCK])
        names = ["tap stock"] if stock else []
        names += [f"double tap t{c + 1}" for c in range(cols)]
        names += ["double tap w"] if stock else []
        names += [f"double tap c{k + 1}" for k in range(cells)]
        return names

    def check_action(self, a: Any) -> int:
        if isinstance(a, np.ndarray) and a.shape == ():
            a = a.item()
        if not is_int(a):
            raise ArgumentError(
                f"action must be an integer in 0 … {self.n_actions - 1}, not {shown(a)}"
            )
        if not 0 <= int(a) < self.n_actions:
            raise ArgumentError(
                f"action {shown(int(a))} is outside the action space 0 … {self.n_actions - 1}"
            )
        return int(a)

    def check_rows(self, rows: Any) -> np.ndarray:
        """Row numbers ``0 … num-1`` (an int or integers) as an array; refuses anything else."""
        one = is_int(rows)
        out = int_array([rows] if one else rows, "indices")
        if out.size and (out.min() < 0 or out.max() >= self.num):
            bad = int(out[(out < 0) | (out >= self.num)][0])
            raise ArgumentError(f"index {bad} is outside 0 … {self.num - 1}")
        return out

    def to_dict(self, row: int) -> dict:
        return position.to_dict(self.state, row, self.variant, int(self.deals[row]))


def action_array(actions: Any) -> np.ndarray:
    """``np.asarray(actions)``, or :class:`ArgumentError` for what NumPy cannot make an array of
    (a ragged list, an object that refuses): the batched envs' first check of their actions."""
    try:
        return np.asarray(actions)
    except (ValueError, TypeError) as e:
        raise ArgumentError(
            f"actions must be an array of integers, not {shown(actions)} ({e})"
        ) from None
