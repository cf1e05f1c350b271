"""The fuzz suite: every public entry point driven with generated bad input. Each call either
works or is refused with the package's own error (a :class:`SolitaireError`), a message of a few
hundred characters at most, and nothing changed; nothing else may escape, and nothing may crash
the interpreter: what reaches compiled code with generated numbers (the engine's batch, env steps)
runs in a child process (``fuzz_child.py``), so that a crash fails a test instead of the run.

``SOLITAIRE_FUZZ_EXAMPLES=2000`` (default 30) and ``SOLITAIRE_FUZZ_RANDOM=1`` (new examples each
run instead of the same ones) make a longer hunt.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from fuzzing import FUZZ, MAX_MESSAGE, code_text, junk, move_text, mutate, refused_or_fine
from hypothesis import given
from hypothesis import strategies as st

from solitaire_gym import Game, SolitaireEnv, SolitaireVectorEnv
from solitaire_gym.cli import main as cli_main
from solitaire_gym.commands.play import play as play_loop
from solitaire_gym.engine.variants import Variant, parse_code
from solitaire_gym.errors import shown
from solitaire_gym.solver import solve
from solitaire_gym.solver.batch import parse_deals, parse_variant, read_results
from solitaire_gym.traces import Trace, load_trace, save_trace

CODES = [
    "SH1-C4-AAAAAJ2",
    "SH1-C1-AAAAAJ2",
    "DS1-D1N-AAAAAAB",
    "DS1-D3V-AAAAAAB",
    "TF1-D3N-AAAAAAB",
]
codes = st.sampled_from(CODES)


def played(code: str, n: int) -> Game:
    g = Game.from_code(code)
    for _ in range(n):
        legal = g.legal_moves()
        if not legal:
            break
        g.play(legal[len(legal) // 2])
    return g


# ---- codes, names, messages ------------------------------------------------------------------------
@FUZZ
@given(st.one_of(code_text, junk))
def test_codes(text):
    if refused_or_fine(lambda: Game.from_code(text)):
        return
    g = Game.from_code(text)  # accepted: a real code, in ASCII
    assert g.code.isascii() and Game.from_code(g.code).to_dict() == g.to_dict()


@FUZZ
@given(junk, junk, junk, junk, junk, junk)
def test_game_new(game, deal, draw, scoring, cells, undo_depth):
    refused_or_fine(
        lambda: Game.new(
            game, deal=deal, draw=draw, scoring=scoring, cells=cells, undo_depth=undo_depth
        )
    )


@FUZZ
@given(junk, junk)
def test_variant_and_parsers(a, b):
    refused_or_fine(lambda: Variant(a, draw=b))
    refused_or_fine(lambda: Variant.from_names(a, scoring=b))
    refused_or_fine(lambda: parse_code(a))
    refused_or_fine(lambda: parse_variant(a))
    if isinstance(a, str) and len(a) < 40:
        refused_or_fine(lambda: parse_deals(a))


def test_shown_is_short():
    for value in ["x" * 10**6, 10**5000, [[[]]] * 10**5, {"k": "v" * 10**5}, b"\xff" * 10**5]:
        assert len(shown(value)) <= 80


# ---- the Game ----------------------------------------------------------------------------------------
@FUZZ
@given(codes, st.integers(0, 12), st.lists(st.one_of(move_text, junk), min_size=1, max_size=6))
def test_game_moves_and_taps(code, n, moves):
    g = played(code, n)

    def snap():
        return (g.to_dict(), g.undo_available)

    for move in moves:
        refused_or_fine(lambda m=move: g.explain(m), snap)
        refused_or_fine(lambda m=move: g.is_legal(m), snap)
        refused_or_fine(lambda m=move: g.action(m), snap)
        refused_or_fine(lambda m=move: g.move_text(m), snap)
        refused_or_fine(lambda m=move: g.tap(m), snap)
        refused_or_fine(lambda m=move: g.double_tap(m), snap)
        refused_or_fine(lambda m=move: g.play(m), snap)
        assert g.moves < 2**31 and g.score < 2**31


@FUZZ
@given(codes, st.integers(0, 30), st.data())
def test_positions(code, n, data):
    d = played(code, n).to_dict()
    bad = mutate(d, data)
    given_copy = copy.deepcopy(bad)
    if refused_or_fine(lambda: Game.from_dict(bad)):
        assert bad == given_copy  # the dict given is never changed
        return
    g = Game.from_dict(bad)  # accepted: it plays, and reads its own output back
    assert Game.from_dict(g.to_dict()).to_dict() == g.to_dict()
    for move in g.legal_moves()[:3]:
        g.copy().play(move)


# ---- envs (the steps themselves run in the child, below) ------------------------------------------------
ENV_KW = st.dictionaries(
    st.sampled_from(["draw", "scoring", "cells", "reward_mode", "action_mode", "undo",
                     "illegal_action", "illegal_penalty", "split", "render_mode", "max_episode_steps",
                     "copy", "win_bonus", "deals", "obs_dtype"]),
    junk,
    max_size=3,
)  # fmt: skip


@FUZZ
@given(st.one_of(st.sampled_from(["seahaven_towers", "double_solitaire"]), junk), ENV_KW)
def test_env_constructors(game, kwargs):
    single = {k: v for k, v in kwargs.items() if k not in ("max_episode_steps", "copy")}
    refused_or_fine(lambda: SolitaireEnv(game, **single))
    refused_or_fine(lambda: SolitaireVectorEnv(2, game, **kwargs))
    refused_or_fine(lambda: SolitaireVectorEnv(kwargs.get("copy", 2), game))


reset_options = st.one_of(
    junk,
    st.dictionaries(
        st.sampled_from(["code", "deal", "state", "reset_mask", "seed"]), junk, max_size=2
    ),
)


@FUZZ
@given(st.one_of(st.none(), junk), reset_options, st.data())
def test_env_resets(seed, options, data):
    single = SolitaireEnv("solitaire_reflechi")
    single.reset(seed=1)
    vec = SolitaireVectorEnv(3, "solitaire_reflechi")
    vec.reset(seed=1)

    def snap_single():
        return (single.to_dict(), single.np_random.bit_generator.state)

    def snap_vec():
        return ([vec.to_dict(i) for i in range(3)], vec.np_random.bit_generator.state)

    refused_or_fine(lambda: single.reset(seed=seed, options=options), snap_single)
    refused_or_fine(lambda: vec.reset(seed=seed, options=options), snap_vec)
    state = mutate(single.to_dict(), data)
    refused_or_fine(lambda: single.reset(options={"state": state}), snap_single)
    refused_or_fine(lambda: single.action_to_move(data.draw(junk)), snap_single)
    refused_or_fine(lambda: vec.move_to_action(data.draw(st.one_of(move_text, junk))), snap_vec)
    refused_or_fine(lambda: vec.to_dict(data.draw(junk)), snap_vec)


@FUZZ
@given(junk)
def test_rllib_wrapper(env):
    from solitaire_gym.envs.wrappers import RLlibMaskWrapper

    refused_or_fine(lambda: RLlibMaskWrapper(env))


def test_rllib_wrapper_refuses_bad_actions():
    from solitaire_gym.envs.wrappers import RLlibMaskWrapper

    env = RLlibMaskWrapper(gym.make("solitaire_gym/SeahavenTowers-v0"))
    env.reset(seed=0)
    before = env.unwrapped.to_dict()
    for action in [-1, 1278, 1.5, "t1>t2", None, [1], True, 2**70]:
        assert refused_or_fine(lambda a=action: env.step(a)), action
    assert env.unwrapped.to_dict() == before


# ---- traces ----------------------------------------------------------------------------------------
def _trace_dict(code, n):
    g = Game.from_code(code)
    moves = []
    for _ in range(n):
        legal = g.legal_moves()
        if not legal:
            break
        moves.append(legal[0])
        g.play(legal[0])
    return {"format": "solitaire_gym.trace", "version": 1, "code": code, "agent": "fuzz",
            "moves": moves, "scores": None}  # fmt: skip


@FUZZ
@given(codes, st.integers(0, 8), st.data())
def test_traces(code, n, data):
    d = mutate(_trace_dict(code, n), data)
    given_copy = copy.deepcopy(d)
    refused_or_fine(lambda: Trace.from_dict(d))
    assert d == given_copy


@FUZZ
@given(st.one_of(st.binary(max_size=300), junk.map(lambda v: json.dumps(v, default=repr).encode())))
def test_trace_files(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("trace") / "t.json"
    path.write_bytes(raw)
    refused_or_fine(lambda: load_trace(path))


@FUZZ
@given(junk, junk, junk, junk)
def test_save_trace_arguments(tmp_path_factory, code, moves, agent, scores):
    folder = tmp_path_factory.mktemp("save")
    refused_or_fine(lambda: save_trace(folder / "t.json", code, moves, agent=agent, scores=scores))


# ---- solver and its results files ----------------------------------------------------------------
budgets = st.one_of(junk, st.floats(-1, 0.05), st.integers(-3, 3))


@FUZZ
@given(st.one_of(code_text, junk), budgets, budgets, budgets)
def test_solve_arguments(code, seconds, nodes, table_mb):
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0.05:
        seconds = 0.05  # keep an accepted call short
    refused_or_fine(lambda: solve(code, max_seconds=seconds, max_nodes=nodes, table_mb=table_mb))


@FUZZ
@given(
    st.lists(
        st.one_of(junk.map(lambda v: json.dumps(v, default=repr)), st.text(max_size=40)), max_size=4
    ),
    st.data(),
)
def test_results_files(tmp_path_factory, lines, data):
    good = {"code": "SH1-C4-AAAAAAB", "deal": 1, "verdict": "unknown", "solution": [],
            "nodes": 1, "seconds": 0.1}  # fmt: skip
    lines = [*lines, json.dumps(mutate(good, data), default=repr)]  # bytes and such as text
    path = tmp_path_factory.mktemp("results") / "r.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    refused_or_fine(lambda: read_results(path))


# ---- configs -------------------------------------------------------------------------------------------
TINY = {"name": "tiny", "game": "seahaven_towers", "options": {"cells": 4}, "total_timesteps": 512,
        "num_envs": 4, "ppo": {"n_steps": 64, "batch_size": 128, "gamma": 0.99},
        "network": {"net_arch": [16]}}  # fmt: skip


@FUZZ
@given(st.data())
def test_configs(data):
    pytest.importorskip("yaml")
    from agents.config import check_config

    bad = mutate(TINY, data)
    given_copy = copy.deepcopy(bad)
    refused_or_fine(lambda: check_config(bad))
    assert bad == given_copy


@FUZZ
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_config_files(tmp_path_factory, raw):
    pytest.importorskip("yaml")
    from agents.config import load_config

    path = tmp_path_factory.mktemp("config") / "c.yaml"
    path.write_bytes(raw)
    refused_or_fine(lambda: load_config(path))


# ---- command lines ----------------------------------------------------------------------------------
def _cli(argv, capsys) -> None:
    """One command line: exit status 0, or non-zero with a short message and no traceback."""
    try:
        status = cli_main(argv)
    except SystemExit as e:  # argparse: usage and one error line
        status = e.code
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    if status != 0:
        assert len(out.err) <= MAX_MESSAGE + 600, out.err[:2000]


arg = st.one_of(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12), st.sampled_from(["1e-300", "nan", "-1", "9" * 5000, "١..٣", "0..34359738367", "SH1-C4", "1..3"]))  # fmt: skip


@FUZZ
@given(deals=arg, game=arg, code=arg)
def test_solve_command(tmp_path_factory, deals, game, code, capsys):
    out = tmp_path_factory.mktemp("solve") / "r.jsonl"
    _cli(["solve", "--deals", deals, "--game", game, "--out", str(out), "--max-nodes", "1",
          "--jobs", "1", "--quiet"], capsys)  # fmt: skip
    _cli(["solve", code, "--max-nodes", "1"], capsys)


@FUZZ
@given(fps=arg, step=arg, raw=st.binary(max_size=200))
def test_render_command(tmp_path_factory, fps, step, raw, capsys):
    pytest.importorskip("PIL")
    folder = tmp_path_factory.mktemp("render")
    good = save_trace(folder / "good.json", "SH1-C4-AAAAAJ2", ["t1>t7"])
    bad = folder / "bad.json"
    bad.write_bytes(raw)
    for trace in (good, bad):
        _cli(["render", str(trace), "--png", str(folder / "p.png"), "--step", step], capsys)
        _cli(["render", str(trace), "--gif", str(folder / "a.gif"), "--fps", fps], capsys)
    _cli(["render", str(good), "--png", str(folder)], capsys)


@FUZZ
@given(st.lists(st.one_of(move_text, st.text(max_size=20)), max_size=8), codes)
def test_play_command(lines, code):
    script = "\n".join(x.replace("\n", " ") for x in lines if not x.strip().startswith("hint"))
    out = io.StringIO()
    assert play_loop(Game.from_code(code), io.StringIO(script + "\nquit\n"), out) == 0


# ---- the crash-prone part, in a child process -------------------------------------------------------
@pytest.mark.parametrize("part", ["batch", "envs", "sb3"])
def test_compiled_entries_in_a_child(part):
    """The engine's batch and the envs' steps, fuzzed in a child: a segfault or an abort there
    is a failed test here (with the child's output), not a dead test run."""
    if part == "sb3":
        pytest.importorskip("stable_baselines3")
    child = Path(__file__).with_name("fuzz_child.py")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(child.parent), *sys.path]))
    done = subprocess.run(
        [sys.executable, str(child), part], capture_output=True, text=True, env=env, timeout=900
    )
    assert done.returncode == 0, (
        f"the child exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
