"""The natively batched Gymnasium vector env: every game stepped in one compiled call."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space
from gymnasium.vector.vector_env import AutoresetMode

from solitaire_gym.engine.scoring import score_text
from solitaire_gym.envs.core import (
    DEFAULT_MAX_EPISODE_STEPS,
    MAX_GAMES,
    MAX_STEPS,
    EnvCore,
    EnvOptions,
    action_array,
    check_seed,
    count_in,
)
from solitaire_gym.envs.observation import Layout, scales
from solitaire_gym.errors import ArgumentError, is_int, is_int_dtype, shown
from solitaire_gym.rendering.ansi import board_text


class SolitaireVectorEnv(VectorEnv):
    """``num_envs`` games of one variant in one engine batch (``gym.make_vec(id, num_envs=n)``).

    Same arguments, spaces, rewards and episode ends as :class:`SolitaireEnv`, plus
    ``max_episode_steps`` (default: the registered value of the game). Autoreset is
    ``AutoresetMode.NEXT_STEP``: the step after an episode ends resets that game (its action is
    ignored, reward 0). ``info`` holds arrays over the games: ``action_mask`` ``(n, N)`` int8,
    ``code``, ``deal``, ``score``, ``score_text``, ``moves``, ``foundation_cards``, ``won``,
    ``stuck``, each with its ``_key`` presence mask (all True), and, when some game's action was
    refused, ``illegal_move`` (the rule; None for the other games) with ``_illegal_move`` marking
    the refused ones: the keys of :class:`SolitaireEnv`'s ``info``, batched as Gymnasium's own
    vector envs batch them. :meth:`action_masks` returns the ``(n, N)`` masks.
    ``reset(options=...)`` takes ``{"code": [...]}`` or ``{"deal": [...]}`` (one per game) and
    ``"reset_mask"`` (which games to reset). ``reset(seed=[s0, s1, ...])`` (one per game) deals
    game ``i`` what ``SolitaireEnv().reset(seed=si)`` deals, as Gymnasium's vector envs seed each
    game from its own entry; ``reset(seed=n)`` seeds one generator that deals every game.

    ``copy`` (default True), as in Gymnasium's own vector envs: observations, rewards and masks
    are returned as arrays that the env never writes again while anything holds them. The step
    kernel writes into a buffer nobody else holds (one handed out before and since let go, else
    a new one), so this costs no copy. With ``copy=False`` they are the env's own buffers,
    overwritten by the next ``step``/``reset``, for a caller that consumes or copies them before
    stepping again (a rollout buffer does).

    From 256 games on (640 with numba's ``workqueue`` threading layer) a step runs on every core,
    one parallel launch per step. numba takes its ``omp`` layer where GNU OpenMP is installed, and
    the package starts its threads with ``OMP_WAIT_POLICY=PASSIVE`` unless that is set
    (``engine/threads.py``): launches then cost 60–70 µs, and stay fast on cores that other
    processes keep busy. On dedicated cores ``OMP_WAIT_POLICY=ACTIVE`` launches in ~15 µs
    (docs/speed.md).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["ansi", "rgb_array"],
    }

    def __init__(
        self,
        num_envs: int = 1,
        game: str = "seahaven_towers",
        *,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        copy: bool = True,
        **kwargs: Any,
    ) -> None:
        if not count_in(num_envs, MAX_GAMES):
            raise ArgumentError(
                f"num_envs must be an integer in 1 … {MAX_GAMES}, not {shown(num_envs)}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ArgumentError(
                f"render_mode={shown(render_mode)} is not one of {self.metadata['render_modes']}"
            )
        self.options = EnvOptions.build(game, **kwargs)
        self.num_envs = int(num_envs)
        if max_episode_steps is None:
            max_episode_steps = DEFAULT_MAX_EPISODE_STEPS[self.options.variant.prefix]
        if not count_in(max_episode_steps, MAX_STEPS):
            raise ArgumentError(
                f"max_episode_steps must be an integer in 1 … {MAX_STEPS}, not "
                f"{shown(max_episode_steps)}"
            )
        self.max_episode_steps = int(max_episode_steps)
        self.render_mode = render_mode
        if not isinstance(copy, (bool, np.bool_)):
            raise ArgumentError(f"copy must be True or False, not {shown(copy)}")
        self.copy = bool(copy)
        self._core = EnvCore(self.options, self.num_envs)
        self.single_observation_space = self._core.observation_space()
        self.single_action_space = self._core.action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._steps = np.zeros(self.num_envs, np.int64)
        self._needs_reset = np.zeros(self.num_envs, np.bool_)
        self._all = np.arange(self.num_envs, dtype=np.int64)
        self._act = np.zeros(self.num_envs, np.int64)
        self._started = False
        self._no_text = np.full(self.num_envs, None, dtype=object)
        self._text_table: tuple[int, np.ndarray] = (0, np.empty(0, dtype=object))

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        # Everything is checked before the generator is reseeded: a refused reset changes nothing.
        seeds = self._check_seeds(seed)
        options = dict(options) if isinstance(options, dict) else options
        mask = options.pop("reset_mask", None) if isinstance(options, dict) else None
        if mask is None:
            rows = self._all
        else:
            if not self._started:
                raise ArgumentError("the first reset must reset every game (no 'reset_mask')")
            m = np.asarray(mask)
            if m.shape != (self.num_envs,) or m.dtype != np.bool_:
                raise ArgumentError(
                    f"reset_mask must be {self.num_envs} booleans (one per game), not {shown(mask)}"
                )
            rows = self._all[m]
        deals = self._core.reset_request(options, rows.size, state=False)
        per_game = seeds is not None and len(seeds) > 1
        if per_game:
            # The generator that deals the games after this reset, seeded from every seed of the
            # list (this reset's deals come from each game's own seed, below).
            self._np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seeds)))
            self._np_random_seed = None
        else:
            super().reset(seed=None if seeds is None else seeds[0])
        if self.copy:
            self._core.detach()  # what the last step returned is never written again
        if deals is None and per_game:
            self._deal_seeded(rows, [seeds[i] for i in rows.tolist()])
        elif deals is None:
            self._core.deal(rows, self._core.draw(self.np_random, rows.size))
            self._core.skip_dead_deals(rows, self.np_random)
        else:
            self._core.deal(rows, deals)
        self._core.reasons[rows] = 0  # a refusal before the reset is not this episode's
        self._steps[rows] = 0
        self._needs_reset[rows] = False
        self._started = True
        return self._core.obs, self._info(None)

    def _deal_seeded(self, rows: np.ndarray, seeds: list[int]) -> None:
        """Gymnasium's convention for a list of seeds: game ``rows[i]`` gets the deal that
        ``seeds[i]`` alone determines, the one ``SolitaireEnv().reset(seed=seeds[i])`` deals (the
        same generator, drawn from in the same order)."""
        gens = [seeding.np_random(s)[0] for s in seeds]
        core = self._core
        core.deal(rows, np.concatenate([core.draw(g, 1) for g in gens]))
        for row, g in zip(rows.tolist(), gens, strict=True):
            core.skip_dead_deals(np.array([row], np.int64), g)

    def _check_seeds(self, seed) -> list[int] | None:
        """None, or the seed(s) as a list: an integer >= 0, or a list of ``num_envs`` of them."""
        if seed is None:
            return None
        if isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ArgumentError(
                    f"seed is an integer or a list of {self.num_envs} (one per game), not "
                    f"{shown(seed)}"
                )
            if all(s is None for s in seed):
                return None
            if any(s is None for s in seed):
                raise ArgumentError("seed: a list of seeds has an integer for every game, or None")
            if self.num_envs == 1:
                return [check_seed(seed[0])]
            return [check_seed(s) for s in seed]
        return [check_seed(seed)]

    def step(self, actions):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        act = action_array(actions)
        if act.shape != (self.num_envs,) or not is_int_dtype(act.dtype):
            raise ArgumentError(f"actions must be {self.num_envs} integers, got {shown(act)}")
        if act.size and (act.min() < 0 or act.max() >= self._core.n_actions):
            bad = int(act[(act < 0) | (act >= self._core.n_actions)][0])
            raise ArgumentError(
                f"action {bad} is outside the action space 0 … {self._core.n_actions - 1}"
            )
        self._act[:] = act
        resetting = self._all[self._needs_reset]
        deals = self._core.draw(self.np_random, resetting.size) if resetting.size else None
        self._steps[resetting] = 0
        # Ended games are dealt anew, not stepped. With copy=True the kernel writes into buffers
        # nobody else holds, which are returned as they are: no copy after the step.
        self._core.step(self._act, resetting, deals, fresh=self.copy)
        if resetting.size:
            self._core.skip_dead_deals(resetting, self.np_random)
        stepped = ~self._needs_reset
        self._steps += stepped  # a bool array: adds 1 where stepped (faster than a masked +=)
        won = self._core.won
        stuck = ~won & (self._core.counts == 0)
        terminated = stepped & (won | stuck)
        truncated = stepped & ~terminated & (self._steps >= self.max_episode_steps)
        self._needs_reset = terminated | truncated
        info = self._info(stuck)
        return (
            self._core.obs,
            self._core.rewards,
            terminated,
            truncated,
            info,
        )

    def _info(self, stuck) -> dict[str, Any]:
        core = self._core
        s = core.state
        if stuck is None:
            stuck = ~core.won & (core.counts == 0)
        illegal = core.reasons != 0
        score = s.score.astype(np.int64)
        info = {
            "action_mask": core.masks,
            "code": core.codes.copy(),
            "deal": core.deals.copy(),
            "score": score,
            "score_text": self._score_texts(score),
            "moves": s.moves.astype(np.int64),
            "foundation_cards": core.foundation_cards(),
            "won": core.won.copy(),
            "stuck": np.asarray(stuck, np.bool_).copy(),
        }
        everyone = np.ones(self.num_envs, np.bool_)
        for key in list(info):
            info["_" + key] = everyone
        refused = np.flatnonzero(illegal).tolist()
        if refused:
            texts = self._no_text.copy()
            for r in refused:
                texts[r] = core.refusal(r)
            info["illegal_move"] = texts
            info["_illegal_move"] = illegal.copy()
        return info

    def _score_texts(self, score: np.ndarray) -> np.ndarray:
        """``score_text`` of every game, from a table of the texts of a range of scores (one
        lookup per step, not one Python call per game), widened when a score falls outside."""
        lo, hi = int(score.min()), int(score.max()) + 1
        first, table = self._text_table
        if lo < first or hi > first + len(table):
            lo, hi = min(lo, first), max(hi, first + len(table))
            vegas = self.options.variant.vegas
            table = np.array([score_text(v, vegas) for v in range(lo, hi)], dtype=object)
            self._text_table = first, table = lo, table
        return table[score - first]

    def action_masks(self) -> np.ndarray:
        return self._core.masks.copy()

    @property
    def obs_layout(self) -> Layout:
        """Where each feature lies in an observation (``envs/observation.py``)."""
        return self._core.layout

    @property
    def obs_scales(self) -> np.ndarray:
        """What each value of a uint8 observation (``obs_dtype="uint8"``) is multiplied by to
        give the float32 one: ``(obs * env.obs_scales).astype(np.float32)`` is exactly what
        ``obs_dtype="float32"`` gives (``envs/observation.py``: :func:`scales`)."""
        return scales(self._core.cfg)

    def action_to_move(self, action: int) -> str:
        return self._core.action_to_move(action)

    def move_to_action(self, move: str) -> int:
        return self._core.move_to_action(move)

    def to_dict(self, index: int) -> dict:
        if not is_int(index):
            raise ArgumentError(f"index must be an integer, not {shown(index)}")
        return self._core.to_dict(int(self._core.check_rows(index)[0]))

    def render(self) -> tuple[str, ...] | tuple[np.ndarray, ...] | None:
        """One board per game: text (``"ansi"``) or an ``(H, W, 3)`` uint8 picture."""
        if self.render_mode == "rgb_array":
            from solitaire_gym.rendering.image import render_position  # Pillow: the render extra

            return tuple(render_position(self._core.to_dict(i)) for i in range(self.num_envs))
        if self.render_mode != "ansi":
            return None
        return tuple(
            board_text(self._core.to_dict(i), won=bool(self._core.won[i]))
            for i in range(self.num_envs)
        )

    def _repr_html_(self) -> str | None:
        """Jupyter: the pictures of the first games (``notebook.MAX_GAMES``) with their codes
        and scores (None before the first reset)."""
        if not self._started:
            return None
        from solitaire_gym.rendering import notebook

        shown = range(min(self.num_envs, notebook.MAX_GAMES))
        s = self._core.state
        vegas = self.options.variant.vegas
        captions = [
            f"game {i}: {self._core.codes[i]}   score {score_text(int(s.score[i]), vegas)}   "
            f"steps {int(self._steps[i])}"
            for i in shown
        ]
        more = self.num_envs - len(shown)
        body = notebook.boards_html([self._core.to_dict(i) for i in shown], captions)
        return body + (f"<p>… and {more} more games</p>" if more else "")

    def _repr_png_(self) -> bytes | None:
        """Jupyter (where HTML does not show): the picture of game 0."""
        if not self._started:
            return None
        from solitaire_gym.rendering import notebook

        return notebook.png(self._core.to_dict(0))

    @property
    def bytes_per_game(self) -> int:
        """Memory per game: engine state plus observation, mask and per-game buffers."""
        core = self._core
        per_row = core.obs.nbytes + core.masks.nbytes + core.rewards.nbytes + core.reasons.nbytes
        per_row += core.engine_act.nbytes + core.counts.nbytes + core.won.nbytes + core.deals.nbytes
        return core.batch.bytes_per_game + per_row // self.num_envs
