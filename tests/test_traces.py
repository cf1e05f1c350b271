"""Trace files: recording through the envs, round trips, refusal of bad traces (and of files that
are no trace at all: deep nesting, huge integers, a folder, bytes), and the memory a long trace
costs."""

import json
import os
import threading
import tracemalloc

import gymnasium as gym
import numpy as np
import pytest
from refusing import refused, write_file

import solitaire_gym
from solitaire_gym import Game, SolitaireError
from solitaire_gym.cli import main
from solitaire_gym.traces import (
    FORMAT,
    TraceError,
    TraceRecorder,
    VectorTraceRecorder,
    load_trace,
    save_trace,
)

SH = "solitaire_gym/SeahavenTowers-v0"
TF = "solitaire_gym/SolitaireReflechi-v0"
DS = "solitaire_gym/DoubleSolitaire-v0"


def play_episode(env, rng, options=None, illegal_every=0):
    """Random legal actions (and now and then an illegal one) until the episode ends; returns
    the last position and info."""
    obs, info = env.reset(seed=int(rng.integers(1 << 30)), options=options)
    k = 0
    while True:
        k += 1
        mask = info["action_mask"]
        if illegal_every and k % illegal_every == 0 and not mask.all():
            action = int(np.flatnonzero(mask == 0)[0])
        else:
            action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return env.unwrapped.to_dict(), info


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        (SH, {"cells": 2}),
        (TF, {"draw": 3}),
        (DS, {"draw": 3, "scoring": "vegas"}),
        (SH, {"action_mode": "tap", "undo": True}),
        (DS, {"undo": True}),
    ],
)
def test_recorder_round_trip(tmp_path, env_id, kwargs):
    env = TraceRecorder(gym.make(env_id, max_episode_steps=60, **kwargs), tmp_path, agent="random")
    rng = np.random.default_rng(7)
    finals = [play_episode(env, rng, illegal_every=9) for _ in range(2)]
    assert len(env.paths) == 2
    for path, (final, info) in zip(env.paths, finals, strict=True):
        trace = load_trace(path)
        assert trace.code == info["code"] and path.name.endswith(f"-{info['code']}.json")
        assert trace.agent == "random"
        assert trace.final == final  # the same position, score and move counter
        assert trace.scores[-1] == info["score"] == trace.final["score"]
        played = [m for m in trace.moves if m != "undo"]  # an undo leaves the counter as it is
        assert trace.final["moves"] == info["moves"] == len(played)
        assert trace.won == info["won"]
    if kwargs.get("undo"):
        moves = [m for p in env.paths for m in load_trace(p).moves]
        assert "undo" in moves


def test_recorder_keeps_a_custom_start(tmp_path):
    g = Game.from_code("SH1-C4-AAAAAJ2")
    for move in ("t1>t7", "t10>c"):
        g.play(move)
    start = g.to_dict()
    env = TraceRecorder(gym.make(SH, max_episode_steps=20), tmp_path)
    final, info = play_episode(env, np.random.default_rng(1), options={"state": start})
    trace = load_trace(env.paths[0])
    assert trace.start == start and trace.positions[0] == start
    assert trace.final == final
    assert trace.final["moves"] == 2 + len(trace.moves)


def test_vector_recorder_round_trip(tmp_path):
    venv = gym.make_vec(TF, num_envs=3, max_episode_steps=25, draw=3)
    env = VectorTraceRecorder(venv, tmp_path, agent="vec")
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=5)
    ended = []  # (code, final position) in the order the recorder writes them
    for _ in range(80):
        actions = np.array(
            [rng.choice(np.flatnonzero(m)) for m in info["action_mask"]], dtype=np.int64
        )
        obs, rewards, terminated, truncated, info = env.step(actions)
        for i in np.flatnonzero(terminated | truncated):
            ended.append((info["code"][i], venv.unwrapped.to_dict(int(i))))
    assert len(ended) >= 6 and len(env.paths) == len(ended)
    codes = set()
    for path, (code, final) in zip(env.paths, ended, strict=True):
        trace = load_trace(path)
        assert trace.code == code and trace.final == final and trace.agent == "vec"
        codes.add(code)
    assert len(codes) == len(ended)  # every episode its own deal, none run together


def test_save_and_load(tmp_path):
    g = Game.from_code("DS1-D1N-AAAAAAB")
    moves, scores = [], []
    for _ in range(12):
        move = sorted(g.legal_moves())[-1]
        g.play(move)
        moves.append(move)
        scores.append(g.score)
    path = save_trace(tmp_path / "sub" / "t.json", "ds1-d1n-aaaaaab", moves, scores=scores)
    d = json.loads(path.read_text())
    assert d == {
        "format": FORMAT,
        "version": 1,
        "code": "DS1-D1N-AAAAAAB",
        "moves": moves,
        "scores": scores,
    }
    trace = load_trace(path)
    assert trace.final == g.to_dict() and trace.agent is None and trace.start is None
    assert len(trace.positions) == 13 and trace.positions[0] == Game.from_code(g.code).to_dict()
    again = trace.save(tmp_path / "again.json")
    assert load_trace(again).final == trace.final


GOOD = {"format": FORMAT, "version": 1, "code": "SH1-C4-AAAAAJ2", "moves": ["t1>t7", "t10>c"]}


def write(tmp_path, d):
    path = tmp_path / "t.json"
    path.write_text(d if isinstance(d, str) else json.dumps(d))
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        ('{"format": "solitaire_gym.trace", "moves": [', "is not valid JSON"),
        ([1, 2], "a trace is a JSON object, not list"),
        ({"format": None}, "missing field 'format'"),
        ({"format": "solitaire_gym.position"}, "field 'format' is 'solitaire_gym.position'"),
        ({"version": 2}, "field 'version' is 2; this package reads version 1"),
        ({"version": None}, "field 'version' is None"),
        ({"version": True}, "field 'version' is True"),
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"code": None}, "missing field 'code'"),
        ({"code": "XX1-C4-AAAAAJ2"}, "field 'code': unknown game 'XX1'"),
        ({"code": "TF1-D1V-AAAAAJ2"}, "field 'code': options 'D1V'"),
        ({"moves": "t1>t7"}, "field 'moves' must be a list"),
        ({"moves": ["t1>t7", 5]}, "move 2: 5 is not a move string"),
        ({"agent": 3}, "field 'agent' must be a string or null"),
        ({"scores": [0]}, "field 'scores' has 1 entries for 2 moves"),
        ({"scores": [0, "0"]}, "field 'scores' must be a list of integers"),
        (
            {"scores": [0, 10]},
            "move 2 ('t10>c'): the score after it is 0, but field 'scores' says 10",
        ),
        ({"moves": ["t1>t7", "t3>t5"]}, "move 2 ('t3>t5'): a card goes on a card of the same suit"),
        ({"moves": ["t1>t7", "w>f"]}, "move 2 ('w>f'): "),
        ({"moves": ["t1>t7", "t10>c", "bogus"]}, "move 3 ('bogus'): 'bogus' is not a move"),
        ({"moves": ["undo"]}, "move 1 ('undo'): nothing to undo"),
        ({"moves": ["\u00a0t1>t7"]}, "move 1 ('\\xa0t1>t7'): "),  # a blank that is not ASCII
        ({"moves": ["t1>t7", "\u3000UNDO"]}, "move 2 ('\\u3000UNDO'): "),
        ({"start": {"code": "SH1-C4-AAAAAJ2"}}, "field 'start': missing field"),
        ({"start": "x"}, "field 'start': a position is a dict"),
        (
            {"start": Game.from_code("SH1-C2-AAAAAJ2").to_dict()},
            "field 'start' is a position of SH1-C2-AAAAAJ2, but field 'code' is SH1-C4-AAAAAJ2",
        ),
    ],
)
def test_refusals(tmp_path, change, message):
    if isinstance(change, dict):
        d = {**GOOD, **change}
        d = {k: v for k, v in d.items() if v is not None or k in ("version", "agent")}
    else:
        d = change
    path = write(tmp_path, d)
    with pytest.raises(TraceError) as e:
        load_trace(path)
    assert message in str(e.value)
    assert isinstance(e.value, SolitaireError)


def test_refusal_names_move_k(tmp_path):
    g = Game.from_code("TF1-D1N-AAAAAAB")
    moves = []
    for _ in range(16):
        move = sorted(g.legal_moves())[0]
        g.play(move)
        moves.append(move)
    bad = next(m for m in ("t1>t2", "t2>t1", "t3>t1", "w>t1") if not g.is_legal(m))
    path = save_trace(tmp_path / "t.json", g.code, [*moves, bad, "draw"])
    with pytest.raises(TraceError) as e:
        load_trace(path)
    assert str(e.value) == f"move 17 ({bad!r}): {g.explain(bad)}"
    assert e.value.move == 17 and e.value.field == "moves"


def test_save_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(TraceError, match="move 2: 7 is not a move string"):
        save_trace(tmp_path / "t.json", "SH1-C4-AAAAAJ2", ["t1>t7", 7])
    with pytest.raises(TraceError, match="scores has 1 entries for 2 moves"):
        save_trace(tmp_path / "t.json", "SH1-C4-AAAAAJ2", ["t1>t7", "t10>c"], scores=[0])
    with pytest.raises(SolitaireError, match="unknown game"):
        save_trace(tmp_path / "t.json", "XX1-C4-AAAAAJ2", [])
    assert not (tmp_path / "t.json").exists()


def test_unreadable_file(tmp_path):
    with pytest.raises(TraceError, match="cannot read trace"):
        load_trace(tmp_path / "missing.json")
    with pytest.raises(TraceError, match="cannot read trace"):
        load_trace("a\x00b.json")  # a NUL in the path
    with pytest.raises(TraceError, match="not a regular file"):
        load_trace(tmp_path)


def test_cli_render_refuses_a_bad_trace(tmp_path, capsys):
    path = write(tmp_path, {**GOOD, "moves": ["t1>t7", "t3>t5"]})
    assert main(["render", str(path), "--png", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "move 2 ('t3>t5'): a card goes on" in err
    assert not (tmp_path / "x.png").exists()


def test_recorder_needs_our_env(tmp_path):
    with pytest.raises(TypeError, match="wraps a SolitaireEnv"):
        TraceRecorder(gym.make("CartPole-v1"), tmp_path)
    with pytest.raises(TypeError, match="wraps a SolitaireEnv, not str"):
        TraceRecorder("x", tmp_path)
    assert solitaire_gym  # registers the ids used above


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"name_prefix": "../../escaped"}, "name_prefix must be"),
        ({"name_prefix": "a/b"}, "name_prefix must be"),
        ({"name_prefix": ""}, "name_prefix must be"),
        ({"name_prefix": 5}, "name_prefix must be"),
        ({"name_prefix": "\u00e9pisode"}, "name_prefix must be"),
        ({"agent": 5}, "agent must be a string"),
        ({"agent": "\ud800"}, "agent must be a string"),
    ],
)
def test_recorder_checks_its_arguments_first(tmp_path, kwargs, message):
    """A recorder's file names and agent are checked when it is made: nothing is created and no
    step is played with arguments that would fail (or write outside the folder) at the end of the
    first episode."""
    folder = tmp_path / "traces"
    with pytest.raises(TraceError, match=message):
        TraceRecorder(gym.make(SH), folder, **kwargs)
    with pytest.raises(TraceError, match=message):
        VectorTraceRecorder(gym.make_vec(SH, num_envs=2),
                            folder, **kwargs)  # fmt: skip
    assert not folder.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_load_refuses_a_named_pipe_without_waiting(tmp_path):
    """Opening a named pipe for reading waits for a writer; load_trace must not."""
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    seen = {}

    def read():  # in a thread: a load that waits for a writer fails the test, not the run
        with pytest.raises(TraceError, match="not a regular file"):
            load_trace(pipe)
        seen["cli"] = main(["render", str(pipe), "--png", str(tmp_path / "x.png")])

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "load_trace waited on a named pipe"
    assert seen == {"cli": 2}


# ---- files that are no trace, and bounded resources ----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # RecursionError in json
        '{"format": "solitaire_gym.trace", "version": 1, "code": "SH1-C4-AAAAAJ2", "moves": [], '
        '"scores": [' + "9" * 5000 + "]}",  # Python's limit on int digits
        '{"format": "solitaire_gym.trace", "version": ' + "1" * 5000 + "}",
    ],
    ids=["deep", "long int in scores", "long int version"],
)
def test_trace_deep_nesting_and_long_integers(tmp_path, text):
    p = write_file(tmp_path, "t.json", text.encode())
    refused(TraceError, load_trace, p)


def test_trace_of_a_folder_and_of_bytes(tmp_path):
    refused(TraceError, load_trace, tmp_path)
    refused(TraceError, load_trace, write_file(tmp_path, "b.json", b"\xff\xfe\x00"))


def test_long_trace_costs_little_memory_per_move(tmp_path):
    moves = ["t1>c"] + ["c3>t7", "t7>c"] * 5_000  # 6D between a cell and 7D, on and on
    path = save_trace(tmp_path / "long.json", "SH1-C4-AAAAAJ2", moves)
    load_trace(path)  # warm (compiled kernels, caches)
    tracemalloc.start()
    trace = load_trace(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak / len(moves) < 1000, f"{peak / len(moves):.0f} bytes per move"  # was ~9 KB
    assert len(trace.positions) == len(moves) + 1
    assert trace.positions[-1] == trace.final and trace.positions[257]["moves"] == 257
    assert [p["moves"] for p in trace.positions][-3:] == [9999, 10000, 10001]


def test_trace_move_limit(tmp_path):
    from solitaire_gym import traces

    d = {"format": traces.FORMAT, "version": 1, "code": "SH1-C4-AAAAAJ2", "moves": ["t1>c"] * 3}
    old = traces.MAX_TRACE_MOVES
    traces.MAX_TRACE_MOVES = 2
    try:
        refused(TraceError, traces.Trace.from_dict, d)
    finally:
        traces.MAX_TRACE_MOVES = old
