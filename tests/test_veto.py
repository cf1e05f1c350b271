"""The solver veto (``agents/veto.py``, ``experiments/veto.py``): greedy with the veto plays the
teacher's labels, the sampled veto never reads the order of the unseen stock, and what cannot be
vetoed is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.base import RandomAgent  # noqa: E402
from agents.greedy import GreedyAgent  # noqa: E402
from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402
from agents.teacher import teach_deal, teacher_orders  # noqa: E402
from solitaire_gym import Game  # noqa: E402


def test_greedy_with_the_solver_veto_plays_the_teachers_labels():
    """agents/veto.py: greedy with the veto is the teacher (on_repeat="greedy"): move for move,
    the same choices as the teacher's labels, and it replaces greedy's first choice where the
    teacher did."""
    from agents.veto import SolverVetoAgent
    from solitaire_gym.engine.actions import action_to_move

    game, options = VARIANTS["SH1-C4"]
    cfg = Game.new(game, **options).cfg
    replaced = 0
    for deal in (0, 3):
        ep = teach_deal(game, options, deal, max_steps=80)
        agent = SolverVetoAgent(GreedyAgent(game, options))
        (r,) = play_deals(agent, game, options, [deal], max_episode_steps=80, record=[deal])
        assert r.trace == [action_to_move(cfg, int(a)) for a in ep.labels]
        assert agent.moves == len(ep.labels)
        data = {"obs": ep.obs, "masks": ep.masks, "played": ep.labels,
                "episode": np.full(len(ep.labels), deal)}  # fmt: skip
        greedy_first = teacher_orders(data, game, options, k=1)[:, 0]
        assert agent.vetoed == int((greedy_first != ep.labels).sum())
        replaced += agent.vetoed
    assert replaced > 0, "the veto never replaced greedy's choice: the test shows nothing"


def test_the_veto_refuses_what_it_cannot_veto(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    from agents.veto import SolverVetoAgent

    with pytest.raises(TypeError, match="cannot be vetoed"):
        SolverVetoAgent(RandomAgent(seed=0))
    game, options = VARIANTS["SH1-C4"]
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="max_nodes"):
            SolverVetoAgent(GreedyAgent(game, options), max_nodes=bad)
    path = Path(__file__).resolve().parents[1] / "experiments" / "veto.py"
    spec = importlib.util.spec_from_file_location("_exp_veto", path)
    veto = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(veto)
    for argv in (["SH1-C4", "random"], ["SH1-C4", str(tmp_path / "missing.npz")],
                 ["SH1-C4", "greedy", "--deals", "0"],
                 ["SH1-C4", "greedy", "--samples", "3"]):  # fmt: skip
        with pytest.raises(SystemExit):
            veto.main(argv)
    with pytest.raises(SystemExit):
        veto.main(["SH1-C4", "greedy", "--decide", "-1"])
    out = tmp_path / "veto.json"
    assert veto.main(["SH1-C4", "greedy", "--deals", "3", "--decide", "5000", "--json",
                      str(out)]) == 0  # fmt: skip
    rows = json.loads(out.read_text())
    assert [r["deal"] for r in rows] == list(eval_deals(3, 2**19))
    text = capsys.readouterr().out
    won = sum(r["won"] for r in rows)
    assert f"policy         won {won:>5} of 3" in text
    lost = [r for r in rows if not r["won_with_veto"]]
    assert f"the {len(lost)} deals lost with the veto, decided" in text
    assert all(r["deal_verdict"] in ("solvable", "unsolvable", "unknown") for r in lost)
    assert all(r["deal_verdict"] is None for r in rows if r["won_with_veto"])


def test_the_sampled_veto_never_reads_the_order_of_the_unseen_stock(monkeypatch, tmp_path):
    """agents/veto.py with samples: the solver is asked about reshuffles of the stock that
    depend on its cards, never on their real order; and only Réfléchi is sampled."""
    import agents.veto as veto

    asked: list[list] = []

    def prove(g, max_nodes):  # records the stocks the veto asks about
        asked[-1].append(g.to_dict()["stock"])
        return "solvable", []

    monkeypatch.setattr(veto, "prove", prove)
    game, options = VARIANTS["TF1-D3N"]
    real = Game.new(game, **options, deal=4).to_dict()
    for position in (real, dict(real, stock=real["stock"][::-1])):
        asked.append([])
        agent = veto.SolverVetoAgent(GreedyAgent(game, options), samples=5)
        assert agent._sampled(position, "draw")
    assert len(asked[0]) == 5 and asked[0] == asked[1]
    assert len({tuple(s) for s in asked[0]}) > 1  # reshuffles, not one order
    with pytest.raises(ValueError, match="samples"):
        veto.SolverVetoAgent(GreedyAgent(game, options), samples=-1)
    sh = VARIANTS["SH1-C4"]
    with pytest.raises(ValueError, match="samples"):
        veto.SolverVetoAgent(GreedyAgent(*sh), samples=3).check_env(*sh)
