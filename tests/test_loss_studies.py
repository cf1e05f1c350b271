"""Where and how games are lost: ``experiments/fatal_moves.py`` (the move that lost each game of
a student's DAgger shards) and ``experiments/lost_games.py`` (how each lost game ends)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.base import RandomAgent  # noqa: E402
from agents.dataset import load_shards, won_deals, write_shard  # noqa: E402
from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402
from agents.teacher import teach_deal  # noqa: E402
from solitaire_gym import Game  # noqa: E402
from solitaire_gym.envs.core import EVAL_SPLIT_END  # noqa: E402


def test_fatal_moves_finds_the_move_that_lost_each_game(tmp_path, capsys):
    """experiments/fatal_moves.py on DAgger shards of a random student: each fatal move is the
    student's, made where the teacher's label was safe, just before the first unsafe label; the
    other-stock check rebuilds that very position."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "fatal_moves.py"
    spec = importlib.util.spec_from_file_location("_exp_fatal_moves", path)
    fm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fm)
    tf = VARIANTS["TF1-D1N"]
    eps = [teach_deal(*tf, EVAL_SPLIT_END + d, student=RandomAgent(seed=d), max_steps=60,
                      max_nodes=3000, stop_unsafe=2) for d in range(4)]  # fmt: skip
    shard = tmp_path / "s.npz"
    write_shard(shard, eps, {"variant": "TF1-D1N"})
    data = load_shards([shard], variant="TF1-D1N")
    fatal = fm.fatal_moves(data, *tf)
    assert fatal, "no random game was lost: the test shows nothing"
    won = won_deals(data)
    for f in fatal:
        assert not won[f["deal"]]  # a fatal move loses its game
        t = f["row"]
        assert data["safe"][t] and not data["safe"][t + 1]
        assert data["safe"][t - f["index"] : t + 1].all()  # the first unsafe label follows it
        assert f["played"] == data["played"][t] != data["labels"][t] == f["label"]
    got = fm.other_stocks(data, fatal[0], *tf, 1, np.random.default_rng(0), max_nodes=3000)
    if got is not None:  # no recycle before it: the real stock, then one other order
        assert len(got) == 2
        assert all(v in ("solvable", "unsolvable", "unknown") for pair in got for v in pair)
        assert got[0][1] != "unsolvable"  # the label was shown winnable: never proven lost
    assert fm.main(["TF1-D1N", str(shard)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 4 and report["fatal_moves"] == len(fatal)
    assert 0 <= report["lost_with_every_position_winnable"] <= 4 - len(fatal)
    assert fm.main(["SH1-C4", str(shard), "--stocks", "2"]) == 2  # reshuffles: Réfléchi only
    assert fm.main(["TF1-D1N", str(tmp_path / "none*.npz")]) == 2  # no shard: a clear error


def test_lost_games_says_how_each_lost_game_ends(tmp_path, capsys):
    """experiments/lost_games.py: a game that ends stuck (no legal move) is proven lost at its
    end, the foundation count it replays to is the one the game ended with, and the last
    foundation growth lies within the game."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "lost_games.py"
    spec = importlib.util.spec_from_file_location("_exp_lost_games", path)
    lg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lg)
    game, options = VARIANTS["SH1-C4"]
    deals = eval_deals(6)
    results = play_deals(RandomAgent(seed=0), game, options, deals, record=deals)
    stuck = [r for r in results if r.end == "stuck"]
    assert stuck, "no random game got stuck: the test shows nothing"
    for r in stuck:
        row = lg.lost_game(r, 5000)
        assert row["end_verdict"] == "unsolvable"
        assert 0 <= row["last_growth"] <= r.steps
        g = Game.from_code(r.code)
        for m in r.trace:
            g.play(m)
        assert g.stuck and not g.won
        assert lg.foundation_cards(g.state, 0, g.cfg) == r.foundation
    out = tmp_path / "lost.json"
    assert lg.main(["SH1-C4", "greedy", "--deals", "4", "--max-nodes", "3000", "--json",
                    str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert f"lost {len(rows)}:" in text
    assert all(r["end_verdict"] in ("solvable", "unsolvable", "unknown") for r in rows)
    with pytest.raises(SystemExit):
        lg.main(["SH1-C4", str(tmp_path / "missing.npz")])  # no checkpoint: a clear error
