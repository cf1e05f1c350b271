"""Issue 16's findings, one regression test (or a few) each: the package's own error naming the
bad part, nothing changed, no crash. Finding 2 (checkpoints) is tested with the checkpoint
format, in test_agents.py."""

import copy
import json
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from solitaire_gym import Game, GameCodeError, MoveSyntaxError, PositionError, SolitaireError
from solitaire_gym.cli import main as cli_main
from solitaire_gym.engine.batch import Batch
from solitaire_gym.engine.variants import parse_code
from solitaire_gym.envs.solitaire_env import SolitaireEnv
from solitaire_gym.envs.vector_env import SolitaireVectorEnv
from solitaire_gym.errors import SHOWN_CHARS, ArgumentError
from solitaire_gym.solver import solve
from solitaire_gym.solver.batch import ResultsFileError, parse_deals, read_results
from solitaire_gym.traces import TraceError, load_trace, save_trace

SH, DS, TF = "SH1-C4-AAAAAJ2", "DS1-D1N-AAAAAAB", "TF1-D1N-AAAAAAB"
MAX_MESSAGE = 400  # what a refusal may print, whatever the size of the input


def refused(error, f, *args, **kwargs) -> str:
    """``f(*args, **kwargs)`` raises ``error`` with a short message; returns the message."""
    with pytest.raises(error) as e:
        f(*args, **kwargs)
    assert len(str(e.value)) <= MAX_MESSAGE
    return str(e.value)


def snapshot(state) -> list[np.ndarray]:
    return [a.copy() for a in state.arrays()]


def same(state, before) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(state.arrays(), before, strict=True))


# ---- 1. memory safety: rows, actions and deals are checked before any kernel ----------------------
def _batch(undo_depth=10):
    b = Batch(parse_code("SH1-C4-AAAAAAB")[0], 4, undo_depth=undo_depth)
    b.deal(np.arange(4))
    return b


def test_batch_undo_far_out_of_range_does_not_crash():
    # It segfaulted: run it in a child, so that a crash fails this test instead of pytest.
    script = (
        "import numpy as np\n"
        "from solitaire_gym.engine.batch import Batch\n"
        "from solitaire_gym.engine.variants import parse_code\n"
        "from solitaire_gym.errors import ArgumentError\n"
        "b = Batch(parse_code('SH1-C4-AAAAAAB')[0], 4, undo_depth=10)\n"
        "b.deal(np.arange(4))\n"
        "for rows in ([100000000], [-5], [2**62]):\n"
        "    try:\n"
        "        b.undo(rows)\n"
        "    except ArgumentError:\n"
        "        continue\n"
        "    raise SystemExit(f'undo({rows}) was accepted')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])


@pytest.mark.parametrize(
    "call",
    [
        lambda b: b.undo([4]),  # one past the end: it "succeeded" on memory past the arrays
        lambda b: b.undo([-1]),
        lambda b: b.undo([0.5]),
        lambda b: b.undo([0, 0]),  # one row twice: two threads on one row
        lambda b: b.undo("0"),
        lambda b: b.deal([1], rows=[4]),
        lambda b: b.deal([1.5, 2, 3, 4]),
        lambda b: b.deal([-1, 2, 3, 4]),
        lambda b: b.step([0.9, 0, 0, 0]),
        lambda b: b.step([True, False, False, False]),
        lambda b: b.step([5000, 0, 0, 0]),
        lambda b: b.step([0, 0, 0]),
    ],
)
def test_batch_refuses_bad_rows_actions_deals(call):
    b = _batch()
    before = snapshot(b.state)
    refused(ArgumentError, call, b)
    assert same(b.state, before)


@pytest.mark.parametrize("size,depth", [(0, 0), (-1, 0), (2.5, 0), (True, 0), (2, -1), (2, 1.5)])
def test_batch_refuses_bad_sizes(size, depth):
    refused(ArgumentError, Batch, parse_code(SH)[0], size, undo_depth=depth)


# ---- 3. a config's name is a plain name; --restart deletes only a run folder ----------------------
TINY = {"name": "tiny", "game": "seahaven_towers", "total_timesteps": 512}


@pytest.mark.parametrize("name", ["/some/folder", "", "..", ".", "a/b", "../up", "x\\y", "ü"])
def test_config_name_is_a_plain_name(name):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, check_config

    message = refused(ConfigError, check_config, dict(TINY, name=name))
    assert "name" in message


def test_restart_deletes_only_a_run_folder(tmp_path, monkeypatch):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, remove_run_folder

    monkeypatch.chdir(tmp_path)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    (precious / "config.yaml").write_text("name: x\n")
    assert "thesis.tex" in refused(ConfigError, remove_run_folder, precious)
    assert (precious / "thesis.tex").exists()
    for folder in (tmp_path, tmp_path.parent, tmp_path / "."):
        refused(ConfigError, remove_run_folder, folder)
    assert (precious / "thesis.tex").exists()
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("name: run\n")
    (run / "eval.csv").write_text("step\n")
    remove_run_folder(run)
    assert not run.exists()


def test_train_restart_refuses_a_folder_that_is_not_a_run(tmp_path):
    pytest.importorskip("sb3_contrib")
    from agents.config import ConfigError, check_config
    from agents.training import TrainRun

    out = tmp_path / "notes"
    out.mkdir()
    (out / "todo.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="run folder"):
        TrainRun(check_config(TINY), out, progress=False).train(restart=True)
    assert (out / "todo.txt").read_text() == "keep me"


# ---- 4. counters do not wrap around --------------------------------------------------------------
def test_move_counter_stops_at_int32_max():
    d = Game.from_code(SH).to_dict()
    d["moves"] = 2**31 - 1
    g = Game.from_dict(d)
    g.play(g.legal_moves()[0])
    assert g.moves == 2**31 - 1
    assert Game.from_dict(g.to_dict()).to_dict() == g.to_dict()  # the package reads its output


def test_score_stops_at_int32_max_and_undo_restores_it():
    d = _seahaven_48_found()  # four Kings on four Queens: t1>f … t4>f each score 10
    d["moves"] = 2**31 - 1
    d["score"] = 2147483645  # a multiple of 5, two below the end of the range
    g = Game.from_dict(d, undo_depth=5)
    g.play("t1>f")
    assert g.score == 2**31 - 1  # stops there: it wrapped to a negative number
    assert g.moves == 2**31 - 1
    again = Game.from_dict(g.to_dict())  # the package reads its own output
    assert again.to_dict() == g.to_dict()
    g.play("t2>f")
    assert g.score == 2**31 - 1
    g.undo()
    g.undo()
    assert g.score == 2147483645


def test_positions_refuse_out_of_range_counters():
    for field, value in [("moves", 2**31), ("moves", -1), ("score", 2**40), ("score", -(2**31))]:
        d = Game.from_code(SH).to_dict()
        d["moves"] = 10
        d[field] = value
        refused(PositionError, Game.from_dict, d)


# ---- 5. foreign exceptions become the package's own ------------------------------------------------
def _write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


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
    p = _write(tmp_path, "t.json", text.encode())
    refused(TraceError, load_trace, p)


def test_trace_of_a_folder_and_of_bytes(tmp_path):
    refused(TraceError, load_trace, tmp_path)
    refused(TraceError, load_trace, _write(tmp_path, "b.json", b"\xff\xfe\x00"))


def test_move_with_5000_digits():
    g = Game.from_code(SH)
    before = g.to_dict()
    for move in ["t" + "1" * 5000 + ">t2", "t1:" + "2" * 5000 + ">t2", "c" + "9" * 5000 + ">f"]:
        refused(MoveSyntaxError, g.play, move)
        refused(MoveSyntaxError, g.explain, move)
        refused(MoveSyntaxError, g.tap, move)
    assert g.to_dict() == before


def test_config_not_utf8(tmp_path):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, load_config

    refused(ConfigError, load_config, _write(tmp_path, "c.yaml", b"name: \xff\xfe\n"))
    refused(ConfigError, load_config, tmp_path)  # a folder
    refused(ConfigError, load_config, _write(tmp_path, "d.yaml", b"[" * 50_000))


@pytest.mark.parametrize("table_mb", [float("inf"), float("nan"), 0, -1, 2**70, "64", True])
def test_solve_table_mb(table_mb):
    refused(ArgumentError, solve, SH, table_mb=table_mb)


@pytest.mark.parametrize(
    "options",
    [
        5,
        "deal",
        [1],
        {"deal": 5.0},
        {"deal": "5"},
        {"deal": [1, 2]},
        {"deal": True},
        {"code": 5},
        {"code": ["SH1-C4-AAAAAJ2", SH]},
        {"state": "SH1-C4-AAAAAJ2"},
        {1: 2},
        {"seed": 3},
    ],
    ids=repr,
)
def test_single_env_reset_options(options):
    env = SolitaireEnv()
    env.reset(seed=3)
    before, rng = env.to_dict(), copy.deepcopy(env.np_random.bit_generator.state)
    refused(SolitaireError, env.reset, options=options)
    assert env.to_dict() == before
    assert env.np_random.bit_generator.state == rng


@pytest.mark.parametrize(
    "mask",
    [[True], [True] * 5, [0, 1, 2, 3], [1, 0, 1, 0], [0.0, 1.0, 0.0, 1.0], "1010", [[True] * 4]],
    ids=repr,
)
def test_vector_reset_mask_must_be_one_boolean_per_game(mask):
    env = SolitaireVectorEnv(4)
    env.reset(seed=1)
    codes = [env.to_dict(i) for i in range(4)]
    refused(ArgumentError, env.reset, options={"reset_mask": mask})
    assert [env.to_dict(i) for i in range(4)] == codes


def _render_args(tmp_path):
    pytest.importorskip("PIL")
    trace = save_trace(tmp_path / "t.json", SH, ["t1>t7"])
    return ["render", str(trace)]


@pytest.mark.parametrize("fps", ["1e-300", "0", "-1", "nan", "inf", "1e300", "٣"])
def test_render_fps_out_of_range(tmp_path, capsys, fps):
    args = _render_args(tmp_path)
    try:
        code = cli_main([*args, "--gif", str(tmp_path / "a.gif"), "--fps", fps])
    except SystemExit as e:  # argparse refuses text that is no number: usage and one line
        code = e.code
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and len(err) < MAX_MESSAGE + 400


def test_render_png_naming_a_folder(tmp_path, capsys):
    args = _render_args(tmp_path)
    folder = tmp_path / "pictures"
    folder.mkdir()
    assert cli_main([*args, "--png", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "folder" in err and len(err.strip().splitlines()) == 1


def test_resume_file_deeply_nested_or_a_folder(tmp_path):
    refused(ResultsFileError, read_results, _write(tmp_path, "r.jsonl", b"[" * 100_000))
    refused(ResultsFileError, read_results, tmp_path)
    refused(ResultsFileError, read_results, _write(tmp_path, "u.jsonl", b"\xff\n"))
    refused(ResultsFileError, read_results, _write(tmp_path, "i.jsonl", b"9" * 5000 + b"\n"))


# ---- 6. notation is ASCII --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "code", ["SH1-C4-AAAAAß", "SH1-C4-AAAAAJ２", "ＳH1-C4-AAAAAJ2", "SH1-C4-AAAAAJ\u0662"]
)
def test_codes_are_ascii(code):
    refused(GameCodeError, Game.from_code, code)


@pytest.mark.parametrize("move", ["t٣>t5", "t３>t5", "t1>t٥", "t1:２>t2", "ｔ1>t2", "draw\u0301"])
def test_moves_are_ascii(move):
    g = Game.from_code(SH)
    before = g.to_dict()
    refused(MoveSyntaxError, g.play, move)
    refused(MoveSyntaxError, g.explain, move)
    assert g.to_dict() == before


@pytest.mark.parametrize("pile", ["t٣", "t３", "c١"])
def test_taps_are_ascii(pile):
    refused(MoveSyntaxError, Game.from_code(SH).tap, pile)


@pytest.mark.parametrize("deals", ["١..٣", "1..３", "²"])
def test_deal_lists_are_ascii(deals, tmp_path, capsys):
    refused(GameCodeError, parse_deals, deals)
    out = tmp_path / "r.jsonl"
    assert cli_main(["solve", "--deals", deals, "--game", "SH1-C4", "--out", str(out)]) == 2
    assert not out.exists()


# ---- 7. no meaning taken silently ------------------------------------------------------------------
def test_state_option_is_a_position_not_deal_numbers():
    env = SolitaireEnv()
    env.reset(seed=0)
    refused(ArgumentError, env.reset, options={"state": [5]})
    refused(ArgumentError, env.reset, options={"state": 5})


def test_vector_seed_list_uses_every_seed():
    def first_codes(seed):
        env = SolitaireVectorEnv(3)
        _, info = env.reset(seed=seed)
        return list(info["code"])

    assert first_codes([1, 2, 3]) == first_codes([1, 2, 3])  # deterministic
    assert first_codes([1, 2, 3]) != first_codes([1, 2, 4])  # the last seed counts
    assert first_codes(7) == first_codes(7)
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=[1, 2])  # one per game
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=[1, None, 2])
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=-1)
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=1.5)


def test_failing_reset_does_not_reseed():
    for env in (SolitaireEnv(), SolitaireVectorEnv(2)):
        env.reset(seed=5)
        state = copy.deepcopy(env.np_random.bit_generator.state)
        refused(SolitaireError, env.reset, seed=9, options={"code": "XX1-C4-AAAAAAB"})
        assert env.np_random.bit_generator.state == state


def test_single_env_refuses_reset_mask():
    env = SolitaireEnv()
    env.reset(seed=1)
    assert "reset_mask" in refused(ArgumentError, env.reset, options={"reset_mask": [True]})


# ---- 8. SB3 actions are integers -------------------------------------------------------------------
@pytest.mark.parametrize(
    "actions",
    [[np.nan, 0], [0.9, 0], [True, False], [0.0, 1.0], ["1", "2"], [0, 10**6], [-1, 0], [0]],
    ids=repr,
)
def test_sb3_step_async_refuses_non_integer_actions(actions):
    pytest.importorskip("stable_baselines3")
    from solitaire_gym.envs.sb3 import SB3VecEnv

    env = SB3VecEnv(num_envs=2, seed=0)
    env.reset()
    before = [env._core.to_dict(i) for i in range(2)]
    refused(ArgumentError, env.step_async, np.array(actions))
    assert [env._core.to_dict(i) for i in range(2)] == before


# ---- 9. positions that play cannot reach ------------------------------------------------------------
def _reflechi_all_in_stock():
    d = Game.from_code(TF).to_dict()
    cards = [c for col in d["tableau"] for c in col] + d["stock"]
    d["tableau"] = [[] for _ in d["tableau"]]
    d["stock"] = cards
    return d


def _double_18_down():
    d = Game.from_code(DS).to_dict()
    cards = [c.rstrip("*") for col in d["tableau"] for c in col] + d["stock"]
    d["tableau"] = [[c + "*" for c in cards[:18]] + [cards[18]]] + [[] for _ in range(8)]
    d["stock"] = cards[19:]
    return d


def _seahaven_48_found():
    d = Game.from_code(SH).to_dict()
    d["foundations"] = ["QS", "QH", "QD", "QC"]
    d["tableau"] = [["KS"], ["KH"], ["KD"], ["KC"]] + [[] for _ in range(6)]
    d["cells"] = [None] * 4
    return d


def _with(d, **changes):
    return {**d, **changes}


@pytest.mark.parametrize(
    "d,words",
    [
        (_with(Game.from_code(SH).to_dict(), version=True), ["version", "True"]),
        (_with(Game.from_code(SH).to_dict(), version=1.0), ["version", "1.0"]),
        (_with(Game.from_code("DS1-D1V-AAAAAAB").to_dict(), score=-105), ["score", "-105"]),
        (_with(Game.from_code("DS1-D1N-AAAAAAB").to_dict(), score=-5), ["score", "-5"]),
        (_with(Game.from_code(SH).to_dict(), score=2**31), ["score"]),
        (_with(Game.from_code(SH).to_dict(), moves=2**31), ["moves"]),
    ],
    ids=["version True", "version 1.0", "Vegas below -104", "negative Normal score",
         "score past int32", "moves past int32"],
)  # fmt: skip
def test_impossible_positions(d, words):
    given = copy.deepcopy(d)
    message = refused(PositionError, Game.from_dict, d)
    for w in words:
        assert w in message
    assert d == given


def test_documented_acceptance_counters():
    # engine/position.py: counters are set freely within their ranges (the scoring tables are
    # tested from arbitrary starting scores); play from such a position is sound.
    g = Game.from_dict(_with(_seahaven_48_found(), moves=0, score=7))
    g.play("t1>f")
    assert (g.score, g.moves) == (17, 1)


def test_documented_acceptance_piles_of_any_size():
    # engine/position.py: a column may hide, and the stock hold, more cards than a deal puts
    # there (hand-built positions bury the cards they do not place); play from them is sound.
    g = Game.from_dict(_double_18_down())
    g.play(g.legal_moves()[0])
    g = Game.from_dict(_reflechi_all_in_stock())
    assert g.legal_moves() == ["draw"]
    for _ in range(60):
        g.play("draw" if g.to_dict()["stock"] else "recycle")
    assert sum(len(p) for k in ("stock", "waste") for p in [g.to_dict()[k]]) == 52


def test_possible_positions_still_accepted():
    d = _with(_seahaven_48_found(), moves=48, score=480)
    assert Game.from_dict(d).score == 480
    g = Game.from_code("DS1-D3V-AAAAAAB")
    for _ in range(30):
        g.play(g.legal_moves()[-1])
    assert Game.from_dict(g.to_dict()).to_dict() == g.to_dict()


# ---- 10. every config value is range-checked -----------------------------------------------------
BAD_VALUES = [
    ("ppo.gamma", -1), ("ppo.gamma", 5), ("ppo.gamma", float("nan")), ("ppo.gamma", 0),
    ("ppo.learning_rate", -0.1), ("ppo.learning_rate", float("inf")), ("ppo.clip_range", -1),
    ("ppo.gae_lambda", 2), ("reward_scale", 0), ("win_bonus", float("nan")), ("seed", -1),
    ("seed", 2**40), ("options.cells", True), ("ppo.ent_coef", -1), ("ppo.vf_coef", float("inf")),
    ("ppo.max_grad_norm", 0), ("num_envs", 10**9), ("network.net_arch", [2**30]),
    ("torch_threads", 10**6),
]  # fmt: skip


@pytest.mark.parametrize("key,value", BAD_VALUES, ids=[f"{k}={v!r}" for k, v in BAD_VALUES])
def test_config_values_are_range_checked(key, value):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, check_config

    data = copy.deepcopy(TINY)
    section, _, name = key.rpartition(".")
    (data.setdefault(section, {}) if section else data)[name] = value
    assert key in refused(ConfigError, check_config, data)


def test_config_duplicate_keys(tmp_path):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, load_config

    p = _write(
        tmp_path,
        "dup.yaml",
        b"name: a\ngame: seahaven_towers\ntotal_timesteps: 64\nppo:\n  gamma: 0.9\n  gamma: 0.5\n",
    )
    assert "gamma" in refused(ConfigError, load_config, p)


# ---- 11. bounded resources --------------------------------------------------------------------------
def test_long_trace_costs_little_memory_per_move(tmp_path):
    moves = ["t1>c"] + ["c3>t7", "t7>c"] * 5_000  # 6D between a cell and 7D, on and on
    path = save_trace(tmp_path / "long.json", SH, moves)
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

    d = {"format": traces.FORMAT, "version": 1, "code": SH, "moves": ["t1>c"] * 3}
    old = traces.MAX_TRACE_MOVES
    traces.MAX_TRACE_MOVES = 2
    try:
        refused(TraceError, traces.Trace.from_dict, d)
    finally:
        traces.MAX_TRACE_MOVES = old


def test_huge_deal_range_is_refused(tmp_path, capsys):
    refused(GameCodeError, parse_deals, "0..34359738367")
    out = tmp_path / "r.jsonl"
    args = ["solve", "--deals", "0..34359738367", "--game", "SH1-C4", "--out", str(out)]
    assert cli_main(args) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda big: Game.from_code(SH).play(big),
        lambda big: Game.from_code(big),
        lambda big: Game.from_code(SH).tap(big),
        lambda big: Game.new(big),
        lambda big: parse_deals(big),
        lambda big: Game.from_dict({**Game.from_code(SH).to_dict(), "format": big}),
        lambda big: Game.from_dict({**Game.from_code(SH).to_dict(), big: 1}),
    ],
)
def test_messages_do_not_echo_the_whole_input(call):
    big = "x" * 1_000_000
    with pytest.raises(SolitaireError) as e:
        call(big)
    assert len(str(e.value)) <= MAX_MESSAGE
    assert "x" * (SHOWN_CHARS + 1) not in str(e.value)


# ---- 12. resume files: every line is checked ------------------------------------------------------
def _result_line(**changes):
    rec = {"code": "SH1-C4-AAAAAAB", "deal": 1, "verdict": "unknown", "solution": [],
           "nodes": 10, "seconds": 0.5}  # fmt: skip
    rec.update(changes)
    return json.dumps(rec)


@pytest.mark.parametrize(
    "line,words",
    [
        (_result_line(deal=True), ["line 2", "deal"]),
        (_result_line(verdict="solvable"), ["line 2", "solution"]),
        (_result_line(verdict="solvable", solution=[1]), ["line 2", "solution"]),
        (_result_line(solution=["t1>c"]), ["line 2", "solution"]),
        (_result_line(verdict=["unknown"]), ["line 2", "verdict"]),
        (_result_line(deal=1.0), ["line 2", "deal"]),
        (_result_line(nodes=-1), ["line 2", "nodes"]),
        (_result_line(code="SH1-C4-AAAAAAß"), ["line 2"]),
    ],
)
def test_resume_lines_are_validated(tmp_path, line, words):
    p = tmp_path / "r.jsonl"
    p.write_text(_result_line(deal=1) + "\n" + line + "\n")
    message = refused(ResultsFileError, read_results, p)
    for w in words:
        assert w in message


def test_good_resume_file_still_read(tmp_path):
    p = tmp_path / "r.jsonl"
    good = _result_line(verdict="solvable", solution=["t1>c"], deal=1)
    p.write_text(good + "\n\n" + _result_line(code="SH1-C4-AAAAAAC", deal=2) + "\n")
    assert sorted(read_results(p, parse_code("SH1-C4-AAAAAAA")[0])) == [1, 2]


def test_write_gif_and_mp4_check_fps_from_python(tmp_path):
    """The range the CLI's --fps has is checked by the writers themselves (finding 5)."""
    pytest.importorskip("PIL")
    from solitaire_gym.errors import SolitaireError
    from solitaire_gym.rendering import replay

    trace = load_trace(save_trace(tmp_path / "t.json", "SH1-C4-AAAAAJ2", ["t1>t7"]))
    for bad in (1e-300, 0, -1, float("nan"), 1e9, True, "4"):
        for write in (replay.write_gif, replay.write_mp4):
            with pytest.raises(SolitaireError, match="fps"):
                write(trace, tmp_path / "x.gif", fps=bad)
    assert not (tmp_path / "x.gif").exists()


# ---- solve_many, read_results and the deal lists check their arguments first --------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"variant": "SH1-C4"}, ArgumentError, "variant must be a Variant"),
        ({"deals": [1, 2**40]}, GameCodeError, "deal 1099511627776"),
        ({"deals": [1, 2.0]}, GameCodeError, "deal 2.0"),
        ({"max_nodes": -1}, ArgumentError, "max_nodes must be 1 or more"),
        ({"max_seconds": float("nan")}, ArgumentError, "max_seconds"),
        ({"jobs": 1.5}, ArgumentError, "jobs must be an integer"),
        ({"jobs": "x"}, ArgumentError, "jobs must be an integer"),
        ({"chunk": -1}, ArgumentError, "chunk must be an integer"),
        ({"out": 5}, ArgumentError, "out must be a path"),
    ],
)
def test_solve_many_checks_everything_before_it_starts(tmp_path, kwargs, error, message):
    """The call itself refuses (not the first ``next``), before the out file or its folder is
    made and before any deal is solved."""
    from solitaire_gym.solver.batch import parse_variant, solve_many

    out = tmp_path / "new" / "out.jsonl"
    call = {"variant": parse_variant("SH1-C4"), "deals": [1, 2], "max_seconds": 1.0,
            "out": out, "progress": False, **kwargs}  # fmt: skip
    with pytest.raises(error, match=message):
        solve_many(call.pop("variant"), call.pop("deals"), **call)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"solution": ["\u00df\u0663"]}, "list of moves \\(ASCII\\)"),
        ({"solution": ["\u00a0t1>t7"]}, "list of moves \\(ASCII\\)"),
        ({"nodes": 1.5}, "'nodes' must be an integer"),
        ({"nodes": 1e308}, "'nodes' must be an integer"),
    ],
)
def test_results_file_fields(tmp_path, change, message):
    rec = {"code": SH, "deal": parse_code(SH)[1], "verdict": "solvable", "solution": ["t1>t7"],
           "nodes": 10, "seconds": 0.5, **change}  # fmt: skip
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    refused(ResultsFileError, read_results, path)
    with pytest.raises(ResultsFileError, match=message):
        read_results(path)
    with pytest.raises(ArgumentError, match="variant must be a Variant"):
        read_results(path, "SH1-C4")


def test_deal_lists_refuse_bad_arguments_and_index_files(tmp_path):
    from solitaire_gym.envs.deal_lists import DealListError, solvable_deals, solvable_info
    from solitaire_gym.solver.solvable import build_solvable

    v = parse_code(SH)[0]
    with pytest.raises(TypeError, match="variant must be a Variant"):
        solvable_deals("SH1-C4")
    with pytest.raises(TypeError, match="variant must be a Variant"):
        solvable_info("SH1-C4")
    for text in ("[1]", "{bad", '{"SH1-C4": 5}'):
        (tmp_path / "index.json").write_text(text)
        with pytest.raises(DealListError, match=r"index\.json"):
            solvable_info(v, data=tmp_path)
    (tmp_path / "index.json").write_bytes(b"\xff\xfe")
    with pytest.raises(DealListError, match="cannot read"):
        solvable_info(v, data=tmp_path)
    for kwargs in ({"tried": float("nan")}, {"tried": 1.9}, {"tried": 5, "first": "1048576"}):
        with pytest.raises(TypeError, match="must be an integer"):
            build_solvable(v, **{"max_nodes": 10, "work": tmp_path / "w", "solve": False,
                                 **kwargs})  # fmt: skip
    assert not (tmp_path / "w").exists()
