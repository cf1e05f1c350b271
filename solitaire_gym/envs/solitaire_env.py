"""The single Gymnasium environment (a batch of one over the engine)."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from solitaire_gym.engine.scoring import score_text
from solitaire_gym.envs.core import DEFAULT_MAX_EPISODE_STEPS, EnvCore, EnvOptions, check_seed
from solitaire_gym.envs.observation import Layout, scales
from solitaire_gym.errors import ArgumentError, IllegalMoveError, is_int, shown
from solitaire_gym.rendering.ansi import board_text


class SolitaireEnv(gym.Env):
    """Double Solitaire, Solitaire Réfléchi or Seahaven Towers, exactly as the apps play them.

    ## Description
    One game per episode, dealt from a game code (``DS1-D1N-AAAAAAB`` …) that reproduces it. The
    rules (``docs/rules.md``) live in ``solitaire_gym.engine``; this class only wires them.

    ## Action Space
    ``Discrete(N)``. ``action_mode="move"`` (default): one id per move of the notation
    (``docs/rules.md``), runs of every length included — Double Solitaire 1029, Solitaire Réfléchi
    591, Seahaven Towers 1278 (the layout is documented in ``solitaire_gym/engine/actions.py`` and
    does not depend on the options). ``action_mode="tap"``: the apps' taps — tap the stock, or
    double-tap the top card of a column, the waste or a cell and let the app pick the target (DS 11,
    TF 9, SH 14). ``undo=True`` adds one last id that undoes the last action (app depth).
    :meth:`action_to_move` and :meth:`move_to_action` translate.

    ## Observation Space
    ``Box(0, 4, (D,), float32)``, the player's information state: D = 1590 (Double Solitaire),
    639 (Solitaire Réfléchi), 851 (Seahaven Towers), whatever the options. Field by field
    in ``solitaire_gym/envs/observation.py``; :attr:`obs_layout` gives every offset. Unseen cards
    (face down, the stock before its first draw) are "unseen"; cards seen in the waste stay known
    after a turn-over. ``obs_dtype="uint8"``: ``Box(0, 255, (D,), uint8)``, the same information
    in a quarter of the bytes, each value as a count (a depth, a length, a height; 0 or 1 for the
    rest); ``(obs * env.unwrapped.obs_scales).astype(np.float32)`` is exactly the float32
    observation, and the package's network players read either.

    ## Legal Actions Mask
    :meth:`action_masks` (what sb3-contrib's MaskablePPO calls) and ``info["action_mask"]``:
    int8 of length N, so ``action_space.sample(mask)`` works. Never all zero before the end.
    ``gym.make`` returns the env inside Gymnasium's wrappers (``TimeLimit`` …), which do not
    pass methods through: call ``env.get_wrapper_attr("action_masks")()`` (works through any
    wrappers) or ``env.unwrapped.action_masks()``, or read ``info["action_mask"]``. The same
    holds for :meth:`action_to_move`, :meth:`move_to_action`, :attr:`code` and :attr:`obs_layout`.

    ## Rewards
    ``reward_mode="app"`` (default): the change in the app's score (Vegas: dollars). The apps give
    points for a card placed on a foundation and take none back when it is taken off again, so a
    policy can farm points by cycling a card between a foundation and the tableau: a known
    loophole of the apps' tables, kept for fidelity (Seahaven's +5 for a card from a free cell to
    a column can be farmed the same way). ``"fair"``: the same, but a take-back costs what placing
    the card earned and a card put into a free cell costs what taking it out earns, so no cycle
    gains anything. ``"win"``: 1 on the winning move. ``"foundation"``: +1 for each card put on a
    foundation, −1 for each card taken back (by a move or an undo), plus ``win_bonus`` (default 0)
    on the winning move. The compiled step computes it from the engine's foundation piles: an
    episode's rewards add up to the cards on the foundations at its end (less those at its start,
    0 for a new deal), plus ``win_bonus`` when it ends won, and no cycle of moves gains anything.
    An illegal action: reward ``-illegal_penalty`` (default 0).

    ## Episode End
    Terminated when the game is won or no legal move is left (``info["stuck"]``). Truncated after
    ``max_episode_steps`` steps (defaults: Double Solitaire 2000, Solitaire Réfléchi 1000,
    Seahaven Towers 500). ``gym.make`` applies the limit with Gymnasium's ``TimeLimit`` wrapper
    (``gym.make(id, max_episode_steps=n)`` changes it) and builds the env with
    ``max_episode_steps=None``: no limit of its own. Built directly, ``SolitaireEnv(...)`` counts
    the steps itself: ``max_episode_steps`` (default ``"default"``: the game's default above; an
    integer; None: no limit).

    ## Info
    Every step and reset: ``code``, ``deal`` (the deal number), ``score``, ``score_text`` (as the
    app shows it: ``"$52"`` in Vegas scoring), ``moves``, ``foundation_cards`` (cards on the
    foundations), ``action_mask``, ``won``, ``stuck``; after a refused action also
    ``illegal_move`` (the rule, in words). Read these rather than decoding the observation. The
    vector env's ``info`` has the same keys, as arrays over its games.

    ## Arguments
    ``game`` ("double_solitaire", "solitaire_reflechi", "seahaven_towers"), ``draw`` (1 or 3;
    Klondike games), ``scoring`` ("normal" or "vegas"; Double Solitaire), ``cells`` (4, 2 or 1;
    Seahaven), ``reward_mode``, ``action_mode``, ``undo``, ``illegal_action`` ("penalty": the
    position does not change and ``info["illegal_move"]`` holds the rule; "raise": raise
    :class:`~solitaire_gym.IllegalMoveError`), ``illegal_penalty``, ``win_bonus`` (a number >= 0;
    ``reward_mode="foundation"`` only), ``split`` ("train" or "eval": which deal numbers a reset
    without options draws from; see ``envs/core.py``), ``deals`` ("random", default: any deal of
    the split; "solvable": a deal drawn uniformly from the shipped list of training deals that
    the solver proved solvable, for curricula and honest denominators; ``split="train"`` only;
    how each list was made, with how many deals were tried and how many were solvable, is in
    ``solitaire_gym/envs/deal_lists.py`` and ``solitaire_gym/data/solvable/index.json``),
    ``obs_dtype`` ("float32", default, or "uint8": above), ``max_episode_steps`` (above),
    ``render_mode`` ("ansi": text; "rgb_array": an ``(H, W, 3)`` uint8 picture of constant size,
    needs the ``render`` extra).

    ``reset(seed=..., options={"code": "..."} | {"deal": n} | {"state": Game.to_dict()})``.
    A deal drawn from the split that offers no legal move at all (a few Seahaven deals with 2 or
    1 cells are dead on arrival) is replaced by the next draw; a deal asked for by code or number
    is dealt as it is (its episode then ends at the first step, with ``info["stuck"]``).

    ## Registered Versions
    ``solitaire_gym/DoubleSolitaire-v0``, ``solitaire_gym/SolitaireReflechi-v0``,
    ``solitaire_gym/SeahavenTowers-v0``.

    ## Version History
    v0: first release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        game: str = "seahaven_towers",
        *,
        render_mode: str | None = None,
        max_episode_steps: int | str | None = "default",
        **kwargs: Any,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ArgumentError(
                f"render_mode={shown(render_mode)} is not one of {self.metadata['render_modes']}"
            )
        self.options = EnvOptions.build(game, **kwargs)
        if isinstance(max_episode_steps, str) and max_episode_steps == "default":
            max_episode_steps = DEFAULT_MAX_EPISODE_STEPS[self.options.variant.prefix]
        if max_episode_steps is not None and (
            not is_int(max_episode_steps) or max_episode_steps < 1
        ):
            raise ValueError(
                "max_episode_steps must be a positive integer, None (no limit) or 'default', "
                f"not {shown(max_episode_steps)}"
            )
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self._steps = 0
        self.render_mode = render_mode
        self._core = EnvCore(self.options, 1)
        self.observation_space = self._core.observation_space()
        self.action_space = self._core.action_space()
        self._act = np.zeros(1, np.int64)
        self._rows = np.zeros(1, np.int64)
        self._started = False

    # ---- API ----------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # Everything is checked before the generator is reseeded: a refused reset changes nothing.
        seed = check_seed(seed)
        how = self._core.reset_request(options, 1, state=True)
        super().reset(seed=seed)
        if isinstance(how, dict):
            self._core.set_position(0, how)
        elif how is not None:
            self._core.deal(self._rows, how)
        else:
            self._core.deal(self._rows, self._core.draw(self.np_random, 1))
            self._core.skip_dead_deals(self._rows, self.np_random)
        self._started = True
        self._steps = 0
        return self._core.obs[0].copy(), self._info()

    def step(self, action):
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        self._act[0] = self._core.check_action(action)
        self._core.step(self._act)  # an illegal action changes nothing but the reason buffer
        info = self._info()
        if self._core.reasons[0] != 0:
            info["illegal_move"] = self._core.refusal(0)
            if self.options.illegal_action == "raise":
                raise IllegalMoveError(info["illegal_move"])
        terminated = bool(info["won"] or info["stuck"])
        self._steps += 1
        limit = self.max_episode_steps
        truncated = not terminated and limit is not None and self._steps >= limit
        return self._core.obs[0].copy(), float(self._core.rewards[0]), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """int8 mask of the legal actions (for MaskablePPO). On an env from ``gym.make``:
        ``env.get_wrapper_attr("action_masks")()`` or ``env.unwrapped.action_masks()`` (the
        wrappers do not pass methods through)."""
        return self._core.masks[0].copy()

    def action_to_move(self, action: int) -> str:
        return self._core.action_to_move(action)

    def move_to_action(self, move: str) -> int:
        return self._core.move_to_action(move)

    @property
    def code(self) -> str:
        return self._core.codes[0]

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

    def to_dict(self) -> dict:
        """The current position (hidden cards included: for replay and debugging, not for agents)."""
        return self._core.to_dict(0)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return board_text(self.to_dict(), won=bool(self._core.won[0]))
        if self.render_mode == "rgb_array":
            from solitaire_gym.rendering.image import render_position  # Pillow: the render extra

            return render_position(self.to_dict())
        return None

    def _repr_png_(self) -> bytes | None:
        """Jupyter: the picture of the current position (None before the first reset, or without
        Pillow). An env from ``gym.make`` is wrapped: display ``env.unwrapped``."""
        if not self._started:
            return None
        from solitaire_gym.rendering import notebook

        return notebook.png(self.to_dict())

    def _repr_html_(self) -> str | None:
        """Jupyter: the current position's picture with its code, score and steps."""
        if not self._started:
            return None
        from solitaire_gym.rendering import notebook

        info = self._info()
        caption = (
            f"{info['code']}   score {info['score_text']}   moves {info['moves']}   "
            f"steps {self._steps}"
            + ("   won" if info["won"] else "   stuck" if info["stuck"] else "")
        )
        return notebook.boards_html([self.to_dict()], [caption])

    # ---- helpers ------------------------------------------------------------------------------
    def _info(self) -> dict[str, Any]:
        s = self._core.state
        won = bool(self._core.won[0])
        score = int(s.score[0])
        return {
            "code": self._core.codes[0],
            "deal": int(self._core.deals[0]),
            "score": score,
            "score_text": score_text(score, self.options.variant.vegas),
            "moves": int(s.moves[0]),
            "foundation_cards": int(self._core.foundation_cards()[0]),
            "action_mask": self._core.masks[0].copy(),
            "won": won,
            "stuck": (not won) and int(self._core.counts[0]) == 0,
        }
