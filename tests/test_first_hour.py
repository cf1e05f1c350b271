"""The rough edges a newcomer met in the first hour (issue 17), each pinned by a test."""

from __future__ import annotations

import io
import math
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import solitaire_gym
from solitaire_gym import Game, SolitaireEnv, SolitaireVectorEnv, UndoError
from solitaire_gym.commands.play import play
from solitaire_gym.envs import ENV_IDS
from solitaire_gym.envs.core import option_names

DS, TF, SH = ENV_IDS
CODE = "SH1-C4-AAAAAJ2"


# ---- action masks through gym.make's wrappers ----------------------------------------------------
def test_action_masks_through_wrappers():
    env = gym.make(SH)
    _, info = env.reset(seed=0)
    assert isinstance(env, gym.Wrapper)  # TimeLimit: methods do not pass through
    assert not hasattr(env, "action_masks")
    # The documented routes (SolitaireEnv's docstring, "Legal Actions Mask").
    via_attr = env.get_wrapper_attr("action_masks")()
    via_unwrapped = env.unwrapped.action_masks()
    assert np.array_equal(via_attr, info["action_mask"])
    assert np.array_equal(via_unwrapped, info["action_mask"])
    assert "get_wrapper_attr" in SolitaireEnv.__doc__ and "unwrapped" in SolitaireEnv.__doc__


# ---- step limit of a SolitaireEnv built directly -------------------------------------------------
def _legal(info) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def test_direct_env_has_the_game_step_limit():
    assert SolitaireEnv("seahaven_towers").max_episode_steps == 500
    assert SolitaireEnv("double_solitaire").max_episode_steps == 2000
    env = SolitaireEnv("double_solitaire", max_episode_steps=3)
    _, info = env.reset(options={"deal": 7})
    ends = []
    for _ in range(3):
        _, _, term, trunc, info = env.step(_legal(info))
        ends.append((term, trunc))
    assert ends == [(False, False), (False, False), (False, True)]
    env.reset(options={"deal": 7})  # a reset starts the count again
    _, _, term, trunc, _ = env.step(0)
    assert not trunc


def test_no_limit_and_bad_limits():
    env = SolitaireEnv("double_solitaire", max_episode_steps=None)
    assert env.max_episode_steps is None
    _, info = env.reset(options={"deal": 7})
    for _ in range(5):
        _, _, _, trunc, info = env.step(_legal(info))
        assert not trunc
    for bad in (0, -3, 2.5, "many", True):
        with pytest.raises(ValueError, match="max_episode_steps"):
            SolitaireEnv(max_episode_steps=bad)


def test_gym_make_limit_is_timelimit_alone():
    # The registered env has no limit of its own: TimeLimit's, whatever it is, is the only one.
    env = gym.make(SH, max_episode_steps=700)
    assert env.unwrapped.max_episode_steps is None
    assert env.spec.max_episode_steps == 700
    short = gym.make(SH, max_episode_steps=2)
    _, info = short.reset(options={"code": CODE})
    _, _, _, trunc1, info = short.step(_legal(info))
    _, _, _, trunc2, _ = short.step(_legal(info))
    assert (trunc1, trunc2) == (False, True)
    vec = gym.make_vec(SH, num_envs=2)
    assert vec.max_episode_steps == 500


# ---- unknown options -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: SolitaireEnv("seahaven_towers", **kw),
        lambda **kw: SolitaireVectorEnv(2, "seahaven_towers", **kw),
        lambda **kw: gym.make(SH, **kw),
    ],
    ids=["SolitaireEnv", "SolitaireVectorEnv", "gym.make"],
)
def test_unknown_option_lists_the_options(make):
    with pytest.raises(TypeError) as err:
        make(foo=1)
    text = str(err.value)
    assert "unknown env option 'foo'" in text
    for name in ("reward_mode", "action_mode", "undo", "cells", "max_episode_steps"):
        assert name in text
    with pytest.raises(TypeError, match="did you mean 'reward_mode'"):
        make(reward_mod="fair")


def test_option_names_come_from_the_signature():
    names = option_names()
    assert names[0] == "game" and "split" in names and "render_mode" in names


# ---- info keys -----------------------------------------------------------------------------------
def _keys(info) -> set[str]:
    return {k for k in info if not k.startswith("_")}


def test_info_keys_agree_across_envs():
    single = gym.make(SH)
    native = gym.make_vec(SH, num_envs=2, vectorization_mode="vector_entry_point")
    sync = gym.make_vec(SH, num_envs=2, vectorization_mode="sync")
    _, i1 = single.reset(seed=1)
    _, i2 = native.reset(seed=1)
    _, i3 = sync.reset(seed=1)
    assert _keys(i1) == _keys(i2) == _keys(i3)
    assert {"code", "deal", "score", "score_text", "moves", "action_mask", "won", "stuck"} <= _keys(
        i1
    )
    assert isinstance(i1["deal"], int) and i2["score_text"].dtype == object
    assert solitaire_gym.Variant.from_names("seahaven_towers").code(i1["deal"]) == i1["code"]
    # A refused action adds 'illegal_move', marked for the refusing games only, in every env.
    refused = np.array([int(np.flatnonzero(m == 0)[0]) for m in i2["action_mask"]])
    _, _, _, _, i1 = single.step(int(np.flatnonzero(i1["action_mask"] == 0)[0]))
    legal = _legal({"action_mask": i2["action_mask"][1]})
    _, r2, _, _, i2 = native.step(np.array([refused[0], legal]))
    _, r3, _, _, i3 = sync.step(
        np.array([int(np.flatnonzero(i3["action_mask"][0] == 0)[0]), _legal(
            {"action_mask": i3["action_mask"][1]}
        )])
    )  # fmt: skip
    assert _keys(i1) == _keys(i2) == _keys(i3)
    assert "illegal_move" in i1
    assert list(i2["_illegal_move"]) == list(i3["_illegal_move"]) == [True, False]
    assert i2["illegal_move"][1] is None and i3["illegal_move"][1] is None
    # ... and a step where every action is legal has no 'illegal_move' anywhere.
    _, _, _, _, i2 = native.step(np.array([_legal({"action_mask": m}) for m in i2["action_mask"]]))
    assert "illegal_move" not in i2


def test_score_text_in_vector_env_vegas():
    env = SolitaireVectorEnv(3, "double_solitaire", scoring="vegas")
    _, info = env.reset(seed=0)
    assert list(info["score_text"]) == ["-$104"] * 3
    env.step(np.array([_legal({"action_mask": m}) for m in info["action_mask"]]))
    _, _, _, _, info = env.step(np.array([_legal({"action_mask": m}) for m in env.action_masks()]))
    for s, t in zip(info["score"], info["score_text"], strict=True):
        assert t == solitaire_gym.engine.scoring.score_text(int(s), True)


def test_reset_forgets_a_refusal():
    env = SolitaireVectorEnv(2, "seahaven_towers")
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(
        np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]])
    )
    assert "illegal_move" in info
    _, info = env.reset(seed=1)
    assert "illegal_move" not in info


# ---- refused step: reward +0.0 ----------------------------------------------------------------------
def test_refused_step_pays_positive_zero():
    env = gym.make(SH)
    _, info = env.reset(seed=0)
    _, r, _, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert "illegal_move" in info
    assert r == 0.0 and math.copysign(1.0, r) == 1.0
    vec = SolitaireVectorEnv(2, "seahaven_towers", illegal_penalty=0.5)
    _, info = vec.reset(seed=0)
    _, rv, *_ = vec.step(np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]]))
    assert list(rv) == [-0.5, -0.5]


# ---- Game --------------------------------------------------------------------------------------
def test_legal_moves_natural_order():
    moves = Game.from_code(CODE).legal_moves()
    assert "t10>c" in moves and "t1>c" in moves
    assert moves.index("t1>c") < moves.index("t2>c") < moves.index("t10>c")
    key = [
        tuple(int(p) if p.isdigit() else p for p in __import__("re").split(r"(\d+)", m))
        for m in moves
    ]
    assert key == sorted(key)


def test_legal_actions_docstring_and_type():
    doc = Game.legal_actions.__doc__
    assert doc and "action ids" in doc
    acts = Game.from_code(CODE).legal_actions()
    assert acts.dtype == np.int32 and list(acts) == sorted(acts)


def test_undo_available_is_a_bool():
    g = Game.from_code(CODE)
    assert g.undo_available is False and g.undo_count == 0
    g.play("t1>t7")
    assert g.undo_available is True and g.undo_count == 1


def test_undo_messages():
    g = Game.from_code(CODE)
    with pytest.raises(UndoError, match="no move has been made"):
        g.undo()
    g.play("t1>t7")
    g.undo()
    with pytest.raises(UndoError) as err:
        g.undo()
    assert "every move made has been undone" in str(err.value)
    assert "keeps the last" not in str(err.value)
    # Only when the history has let go of actions does the message name its depth.
    small = Game.from_code("TF1-D1N-AAAAAAB", undo_depth=2)
    for _ in range(3):
        small.play("draw")
    small.undo()
    small.undo()
    with pytest.raises(UndoError, match="keeps the last 2 actions"):
        small.undo()
    restored = Game.from_dict(g.to_dict())
    with pytest.raises(UndoError, match="no move has been made"):
        restored.undo()


def test_play_says_the_right_thing_after_the_only_move_is_undone():
    out = io.StringIO()
    play(Game.from_code(CODE), io.StringIO("t1>t7\nundo\nundo\nquit\n"), out)
    text = out.getvalue()
    assert "refused: nothing left to undo: every move made has been undone" in text
    assert "the app keeps the last" not in text


@pytest.mark.parametrize(
    "text", ["SH1 - C4 - AAAAAJ2", " sh1-c4-aaaaaj2 ", "SH1-C4-AAA AAJ2", "SH1-\tC4-AAAAAJ2\n"]
)
def test_from_code_ignores_spaces_as_documented(text):
    assert "ignored" in Game.from_code.__doc__
    assert Game.from_code(text).code == CODE


# ---- command line, README, packaging -------------------------------------------------------------------
def test_version():
    out = subprocess.run(
        [sys.executable, "-m", "solitaire_gym.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"solitaire-gym {solitaire_gym.__version__}"


def test_readme_says_where_random_legal_actions_lives():
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "solitaire_gym.envs.sampling.random_legal_actions" in readme
    from solitaire_gym.envs.sampling import random_legal_actions  # noqa: F401


def test_license_is_an_spdx_string():
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    req = [r for r in meta["build-system"]["requires"] if r.startswith("setuptools")]
    assert req == ["setuptools>=77"]  # the first setuptools that takes an SPDX string


def test_extras_take_any_torch_2_and_what_their_snippets_need():
    """A user with another torch 2.x (a CUDA build) keeps it when installing an extra; the
    Makefile, not the extras, installs this machine's CPU build; SB3's progress bars need rich."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for name in ("agents", "ray"):
        torch = [r for r in extras[name] if r.startswith("torch")]
        assert torch == ["torch>=2.3,<3"], (name, torch)
    assert {"rich", "tqdm"} <= set(extras["agents"])
    assert "TORCH_CPU := torch==" in (root / "Makefile").read_text()


# ---- first start ---------------------------------------------------------------------------------
def _child(code: str, cache, **env) -> subprocess.CompletedProcess:
    import os

    full = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=full
    )


@pytest.mark.slow  # compiles, in an empty cache
def test_compile_notice_once_and_only_when_cold(tmp_path):
    from solitaire_gym._compile_notice import MESSAGE

    # The package compiles its rule tables at import, so an import with an empty cache compiles.
    code = (
        "import solitaire_gym\n"
        "from solitaire_gym.engine.bits import bit\n"
        "bit(3)\n"  # a second kernel: no second line
    )
    cold = _child(code, tmp_path)
    assert cold.stderr.count(MESSAGE) == 1
    assert "warmup" in MESSAGE and "first use" in MESSAGE
    warm = _child(code, tmp_path)
    assert MESSAGE not in warm.stderr
    quiet = _child(code, tmp_path / "other", SOLITAIRE_GYM_COMPILE_NOTICE="0")
    assert MESSAGE not in quiet.stderr


def test_warmup_command_runs_every_part(tmp_path):
    from solitaire_gym.commands.warmup import PARTS, warmup

    out = io.StringIO()
    results = warmup(["game", "batch"], out=out)
    assert set(results) == {"game", "batch"} and set(results) <= set(PARTS)
    text = out.getvalue()
    assert "warmup: game ..." in text and "warmup: done in" in text
    for seconds, compiled in results.values():
        assert seconds >= 0 and compiled >= 0


@pytest.mark.slow  # compiles, in an empty cache
def test_after_the_warmup_a_game_compiles_nothing(tmp_path):
    """After ``solitaire-gym warmup`` (its game part), a new process that plays to a foundation,
    writes the position as a dict and asks a card's rank and suit compiles no kernel of the
    package: every kernel Python code calls directly is warmed too."""
    _child("from solitaire_gym.commands.warmup import warmup\nwarmup(['game'])", tmp_path)
    code = (
        "from numba.core import event\n"
        "seen = []\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev):\n"
        "        f = getattr(ev.data.get('dispatcher'), 'py_func', None)\n"
        "        if (getattr(f, '__module__', None) or '').startswith('solitaire_gym.'):\n"
        "            seen.append(f.__name__)\n"
        "    def on_end(self, ev): pass\n"
        "event.register('numba:compile', L())\n"
        "from solitaire_gym import Game\n"
        "from solitaire_gym.engine.cards import rank_of, suit_of\n"
        "g = Game.from_code('SH1-C4-AAAAAAF')\n"
        "g.play(next(m for m in g.legal_moves() if m.endswith('>f')))\n"
        "assert any(g.to_dict()['foundations'])\n"
        "rank_of(5), suit_of(40)\n"
        "print('compiled:', sorted(set(seen)))\n"
    )
    assert _child(code, tmp_path).stdout.strip() == "compiled: []"


def test_warmup_is_on_the_command_line():
    from solitaire_gym.cli import build_parser

    args = build_parser().parse_args(["warmup", "--skip", "solver", "vector"])
    assert args.skip == ["solver", "vector"]
    makefile = (__import__("pathlib").Path(__file__).parents[1] / "Makefile").read_text()
    # Every setup stamp (a rule that makes $(STAMP_...)) ends with the warmup.
    stamps = [r for r in makefile.split("\n\n") if r.startswith("$(STAMP_")]
    assert len(stamps) >= 2
    for rule in stamps:
        assert "$(BIN)/solitaire-gym warmup\n\ttouch $@" in rule, rule
