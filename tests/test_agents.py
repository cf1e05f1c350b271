"""Agents, configs, training and evaluation (issue 5): legal play to the end, evaluation numbers
that match a direct count, a tiny training run end to end, config and checkpoint refusals."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml
from scripts import experiment

import solitaire_gym  # noqa: F401  (registers the envs)
from agents import RESIGN, GreedyAgent, RandomAgent, SB3Agent, TorchAgent, play_deals
from agents.config import ConfigError, check_config, load_config
from agents.learned import (
    CheckpointMismatch,
    MaskablePPOAgent,
    UntrustedCheckpoint,
    env_signature,
    read_checkpoint_meta,
)
from agents.play import VARIANTS, eval_deals
from agents.solver_agent import solver_available
from agents.stats import wilson_interval
from experiments.evaluation.records import EPISODE_FIELDS
from solitaire_gym import Game
from solitaire_gym.envs.sb3 import SB3VecEnv

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 60  # steps per game in these tests


def _replay(result) -> Game:
    """Replay a recorded game through the Game API: every move must be legal."""
    g = Game.from_code(result.code)
    for k, move in enumerate(result.trace):
        assert g.is_legal(move), f"{result.code}: move {k + 1} {move!r}: {g.explain(move)}"
        g.play(move)
        assert g.score == result.scores[k]
    return g


def _check_results(results, deals, limit=LIMIT):
    assert [r.deal for r in results] == list(deals)
    for r in results:
        g = _replay(r)
        assert (g.won, g.score, g.moves) == (r.won, r.score, r.moves)
        assert r.steps == len(r.trace)
        if r.end == "won":
            assert g.won
        elif r.end == "stuck":
            assert g.stuck and not g.won
        elif r.end == "truncated":
            assert r.steps == limit and not g.won and not g.stuck
        else:
            assert r.end == "resigned"


def _sb3_model(game, options, cls=None):
    from sb3_contrib import MaskablePPO

    cls = cls or MaskablePPO
    env = SB3VecEnv(game, num_envs=2, seed=0, **options)
    return cls("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu",
               policy_kwargs={"net_arch": [16]})  # fmt: skip


@pytest.mark.parametrize("tag", ["SH1-C4", "TF1-D3N", "DS1-D1V"])
def test_agents_play_whole_games_with_legal_moves(tag):
    game, options = VARIANTS[tag]
    deals = [3, 11, 2**20 - 1]
    sig = env_signature(game, options)
    from stable_baselines3 import PPO

    agents = [
        RandomAgent(seed=1),
        GreedyAgent(game, options),
        SB3Agent(_sb3_model(game, options), name="maskable"),
        SB3Agent(_sb3_model(game, options, PPO), name="ppo-unmasked", deterministic=True),
        TorchAgent(torch.nn.Linear(sig["obs_dim"], sig["n_actions"]), deterministic=False),
    ]
    for agent in agents:
        res = play_deals(agent, game, options, deals, max_episode_steps=LIMIT, record=deals,
                         batch_size=2)  # fmt: skip
        _check_results(res, deals)


@pytest.mark.skipif(not solver_available(), reason="solitaire_gym.solver not built yet")
def test_solver_agent_plays_its_solutions_and_resigns_otherwise():
    from agents.solver_agent import SolverAgent

    game, options = VARIANTS["SH1-C4"]
    deals = [0, 1, 2]
    agent = SolverAgent(max_seconds=20, max_nodes=200_000)
    res = play_deals(agent, game, options, deals, record=deals)
    _check_results(res, deals, limit=500)
    for r in res:
        verdict = agent.verdicts[r.code]["verdict"]
        assert r.won == (verdict == "solvable")
        assert r.end in ("won", "resigned")
    # Seahaven with one cell: most deals are lost from the start; whatever the verdict, the
    # agent wins exactly the deals it found solvable
    res = play_deals(agent, "seahaven_towers", {"cells": 1}, deals, record=deals)
    _check_results(res, deals, limit=500)
    assert all(r.won == (agent.verdicts[r.code]["verdict"] == "solvable") for r in res)


def test_agents_by_name():
    from agents import POLICY_NAMES, make_agent
    from agents.policy import CheckpointError, PolicyAgent, committed_policies
    from agents.solver_agent import SolverAgent

    assert set(POLICY_NAMES) == {"random", "greedy", "learned", "ppo", "search", "puct", "solver"}
    assert isinstance(make_agent("random", "SH1-C4", seed=3), RandomAgent)
    assert isinstance(make_agent("greedy", "TF1-D3N"), GreedyAgent)
    solver = make_agent("solver", "SH1-C4", solver_nodes=7, solver_seconds=1.5)
    assert isinstance(solver, SolverAgent) and (solver.max_nodes, solver.max_seconds) == (7, 1.5)
    # ppo: the committed MaskablePPO baseline of the variant, sampling; none for other variants
    ppo = make_agent("ppo", "TF1-D3N", seed=4)
    assert (ppo.name, ppo.meta["variant"], ppo.deterministic, ppo.seed) == ("ppo", "TF1-D3N",
                                                                          False, 4)  # fmt: skip
    with pytest.raises(ValueError, match="no MaskablePPO baseline for SH1-C2: there is one for "
                                         "DS1-D1N, DS1-D3N, SH1-C4, TF1-D1N, TF1-D3N"):  # fmt: skip
        make_agent("ppo", "SH1-C2")
    # learned: the committed policy of the variant, or of the nearest option of its game
    assert make_agent("learned", "SH1-C2").meta["variant"] == "SH1-C4"
    path = committed_policies()["DS1-D3N"]
    for policy in (path, str(path)):
        agent = make_agent(policy, "DS1-D3N")
        assert isinstance(agent, PolicyAgent) and agent.meta["variant"] == "DS1-D3N"
        # a policy of one variant plays that variant's layout
        game, options = VARIANTS["DS1-D3N"]
        res = play_deals(agent, game, options, [5], max_episode_steps=LIMIT, record=[5])
        _check_results(res, [5])
    with pytest.raises(CheckpointError):
        make_agent(path, "SH1-C4")  # another game's layout
    for policy, variant, what in (("greedier", "SH1-C4", "unknown policy 'greedier'"),
                                  ("greedy", "SH1-C9", "unknown variant 'SH1-C9'")):  # fmt: skip
        with pytest.raises(ValueError, match=what):
            make_agent(policy, variant)


def test_single_env_interface():
    env = gym.make("solitaire_gym/SeahavenTowers-v0", cells=4)
    agent = GreedyAgent("seahaven_towers", {"cells": 4})
    obs, info = env.reset(options={"deal": 5})
    agent.reset()
    for _ in range(500):
        a = agent.act(obs, info["action_mask"])
        assert isinstance(a, int) and info["action_mask"][a]
        obs, reward, terminated, truncated, info = env.step(a)
        assert "illegal_move" not in info
        if terminated or truncated:
            break
    assert terminated or truncated


def test_resign_and_view_contract():
    class Quitter(RandomAgent):
        uses = "position"

        def _act(self, obs, masks, starts, active, view):
            assert view.position(0)["code"].startswith("SH1-C2")
            return np.full(masks.shape[0], RESIGN)

    res = play_deals(Quitter(), "seahaven_towers", {"cells": 2}, [7, 8])
    assert [(r.end, r.moves, r.won) for r in res] == [("resigned", 0, False)] * 2
    with pytest.raises(ValueError, match="view"):
        Quitter().act(np.zeros((1, 851), np.float32), np.ones((1, 1278), bool))


def test_wilson_interval():
    lo, hi = wilson_interval(0, 1000)
    assert lo == 0 and 0.003 < hi < 0.004
    lo, hi = wilson_interval(1000, 1000)
    assert hi == 1 and 0.996 < lo < 0.997
    lo, hi = wilson_interval(300, 1000)
    assert lo < 0.3 < hi and hi - lo == pytest.approx(0.0568, abs=1e-3)


def test_evaluate_table_matches_a_direct_count(tmp_path):
    evaluate = experiment("evaluate")
    out = tmp_path / "ev"
    deals = 6
    evaluate.main(["--policies", "random,greedy", "--variants", "SH1-C4,TF1-D1N", "--deals",
                   str(deals), "--out", str(out), "--traces", "2"])  # fmt: skip
    result = json.loads((out / "results.json").read_text())
    rows = list(csv.DictReader((out / "episodes.csv").open()))
    table = (out / "results.md").read_text()
    assert (out / "win_rates.png").stat().st_size > 0
    for tag in ("SH1-C4", "TF1-D1N"):
        game, options = VARIANTS[tag]
        direct = play_deals(GreedyAgent(game, options), game, options, eval_deals(deals))
        for policy in ("random", "greedy"):
            s = result["summaries"][tag][policy]
            mine = [r for r in rows if r["variant"] == tag and r["policy"] == policy]
            assert len(mine) == s["deals"] == deals
            wins = sum(r["won"] == "True" for r in mine)
            assert s["wins"] == wins
            assert s["mean_score"] == pytest.approx(np.mean([int(r["score"]) for r in mine]))
            assert s["mean_moves"] == pytest.approx(np.mean([int(r["moves"]) for r in mine]))
            lo, hi = wilson_interval(wins, deals)
            assert f"| {tag} | {policy} | {deals} | {wins} | {100 * wins / deals:.1f}% " in table
            assert f"{100 * lo:.1f}% – {100 * hi:.1f}%" in table
            if policy == "greedy":  # the same deals played directly give the same games
                assert [r.won for r in direct] == [r["won"] == "True" for r in mine]
                assert [r.score for r in direct] == [int(r["score"]) for r in mine]
        traces = sorted((out / "traces" / tag).glob("*.json"))
        assert len(traces) == 4
    from solitaire_gym.traces import load_trace

    t = load_trace(traces[0])
    assert t.code.startswith("TF1-D1N")
    # an earlier run merged into a new table gives the same rows
    merged = tmp_path / "merged"
    evaluate.main(["--policies", "", "--include", str(out), "--deals", str(deals), "--out",
                   str(merged), "--no-plots"])  # fmt: skip

    def rows_of(text):
        return [x for x in text.splitlines() if x.startswith(("| SH1", "| TF1"))]

    assert rows_of((merged / "results.md").read_text()) == rows_of(table)


def test_evaluate_checkpoint_option_keeps_its_older_name():
    """``--checkpoint`` takes any checkpoint (a policy network or a MaskablePPO zip); ``--ppo``,
    its first name, still works in scripts that use it."""
    parser = experiment("evaluate").build_parser()
    args = parser.parse_args(["--checkpoint", "net@SH1-C4=a.npz", "--ppo", "b.zip"])
    assert args.checkpoint == ["net@SH1-C4=a.npz", "b.zip"]
    assert "--ppo is its older name" in " ".join(parser.format_help().split())


def test_evaluate_plays_the_networks_on_its_device(tmp_path, monkeypatch, capsys):
    """``--device`` reaches the loading of every network (default ``auto``); a bad name is
    refused before anything is played or written."""
    import agents.policy

    evaluate = experiment("evaluate")
    out = tmp_path / "ev"
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--policies", "learned", "--variants", "SH1-C4", "--deals", "2",
                       "--device", "gpu", "--out", str(out)])  # fmt: skip
    assert e.value.code == 2
    assert "device must be one of 'auto', 'cpu', 'cuda', 'cuda:N'" in capsys.readouterr().err
    assert not out.exists()
    devices = []
    real = agents.policy.load_policy

    def spy(path, **kw):
        devices.append(kw.get("device"))
        return real(path, **kw)

    monkeypatch.setattr(agents.policy, "load_policy", spy)
    common = ["--policies", "learned", "--variants", "SH1-C4", "--deals", "2", "--no-plots"]
    result = evaluate.main_result([*common, "--out", str(out)])
    assert result["summaries"]["SH1-C4"]["learned"]["deals"] == 2
    assert devices == ["auto"]
    evaluate.main_result([*common, "--out", str(tmp_path / "cpu"), "--device", "cpu"])
    assert devices == ["auto", "cpu"]


def test_evaluate_keeps_the_solver_budget_with_its_verdicts(tmp_path):
    """Verdicts read in (``--verdicts``, ``--include``) keep the budget they were made with, and a
    run that would mix verdicts of two budgets stops before it plays."""
    evaluate = experiment("evaluate")
    solver = tmp_path / "solver"
    budget = ["--solver-nodes", "300", "--solver-seconds", "5"]
    evaluate.main(["--policies", "solver", "--variants", "SH1-C4", "--deals", "3", *budget,
                   "--out", str(solver), "--no-plots", "--traces", "0"])  # fmt: skip
    made = json.loads((solver / "verdicts.json").read_text())
    assert made["solver_budget"] == {"max_nodes": 300, "max_seconds": 5.0}
    greedy = tmp_path / "greedy"
    evaluate.main(["--policies", "greedy", "--variants", "SH1-C4", "--deals", "3", "--verdicts",
                   str(solver / "verdicts.json"), "--out", str(greedy), "--no-plots"])  # fmt: skip
    assert json.loads((greedy / "verdicts.json").read_text()) == made
    with pytest.raises(SystemExit, match="budget"):
        evaluate.main(["--policies", "solver", "--variants", "SH1-C4", "--deals", "3",
                       "--include", str(greedy), "--out", str(tmp_path / "mixed"),
                       "--no-plots"])  # fmt: skip
    assert not (tmp_path / "mixed").exists()


def test_evaluate_replaces_one_variants_games(tmp_path):
    """``--replace`` puts a rerun's games (its summary, command and trace files) in the place of
    the included games of the same variant and policy and keeps everything else; two included
    folders with the same games, or a replacement for games nobody included, stop the run before
    it writes anything."""
    evaluate = experiment("evaluate")
    common = ["--deals", "3", "--solver-nodes", "300", "--solver-seconds", "5", "--no-plots"]
    full, rerun = tmp_path / "full", tmp_path / "rerun"
    evaluate.main(["--policies", "random,solver", "--variants", "SH1-C4,TF1-D1N", "--traces", "1",
                   *common, "--out", str(full)])  # fmt: skip
    evaluate.main(["--policies", "random", "--variants", "TF1-D1N", "--seed", "1", "--traces",
                   "1", *common, "--out", str(rerun)])  # fmt: skip

    def read(folder):
        with (folder / "episodes.csv").open() as f:
            rows = list(csv.DictReader(f))
        return rows, json.loads((folder / "results.json").read_text())

    before, before_res = read(full)
    new, new_res = read(rerun)
    key = ("TF1-D1N", "random")
    assert [r for r in before if (r["variant"], r["policy"]) == key] != new  # seeds differ
    trace = full / "traces" / "TF1-D1N" / f"random-{new[0]['code']}.json"
    assert trace.read_bytes() != (rerun / trace.relative_to(full)).read_bytes()
    snapshot = {p: p.read_bytes() for p in full.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit, match="--replace"):
        evaluate.main(["--policies", "", "--include", str(full), "--include", str(rerun),
                       *common, "--out", str(full)])  # fmt: skip
    with pytest.raises(SystemExit, match="no --include folder has"):
        evaluate.main(["--policies", "", "--include", str(rerun), "--replace", str(full),
                       *common, "--out", str(full)])  # fmt: skip
    assert {p: p.read_bytes() for p in full.rglob("*") if p.is_file()} == snapshot

    evaluate.main(["--policies", "", "--include", str(full), "--replace", str(rerun), *common,
                   "--out", str(full)])  # fmt: skip
    after, after_res = read(full)
    place = [i for i, r in enumerate(before) if (r["variant"], r["policy"]) == key]
    assert (
        after[: place[0]] == before[: place[0]]
        and after[place[-1] + 1 :] == before[place[-1] + 1 :]
    )
    assert after[place[0] : place[-1] + 1] == new  # in the place of the old games
    summaries, played = after_res["summaries"], before_res["command"]
    assert summaries["TF1-D1N"]["random"]["played_by"] == new_res["command"]
    assert (
        summaries["TF1-D1N"]["random"]["wins"] == new_res["summaries"]["TF1-D1N"]["random"]["wins"]
    )
    for tag, name in [("SH1-C4", "random"), ("SH1-C4", "solver"), ("TF1-D1N", "solver")]:
        assert summaries[tag][name]["played_by"] == played
        assert summaries[tag][name]["wins"] == before_res["summaries"][tag][name]["wins"]
    assert trace.read_bytes() == (rerun / trace.relative_to(full)).read_bytes()
    assert json.loads((full / "verdicts.json").read_text()) == json.loads(
        snapshot[full / "verdicts.json"]
    )
    # playing a policy again over an included folder also puts its games in their old place
    evaluate.main(["--policies", "random", "--variants", "TF1-D1N", "--seed", "2", "--include",
                   str(full), "--traces", "0", *common, "--out", str(full)])  # fmt: skip
    again, _ = read(full)
    assert [(r["variant"], r["policy"]) for r in again] == [
        (r["variant"], r["policy"]) for r in before
    ]
    assert again[: place[0]] == before[: place[0]]


def test_evaluate_refuses_records_it_did_not_write(tmp_path):
    """A ``results.json`` or ``verdicts.json`` that is not JSON, or lacks a field evaluate.py
    writes, stops the run with an error naming the file, before anything is written."""
    evaluate = experiment("evaluate")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "episodes.csv").write_text("variant,policy\n")
    out = tmp_path / "out"
    for text, match in [("{not json", "not a JSON file"), ("[1, 2]", "has no 'deals'"),
                        ('{"deals": {}}', "has no 'summaries', 'command'"),
                        ("[" * 100_000, "not a JSON file"),
                        ('{"deals": ' + "9" * 5000 + "}", "not a JSON file")]:  # fmt: skip
        (bad / "results.json").write_text(text)
        with pytest.raises(SystemExit, match=match) as e:
            evaluate.main(["--policies", "", "--include", str(bad), "--deals", "3",
                           "--out", str(out)])  # fmt: skip
        assert str(bad / "results.json") in str(e.value)
    (tmp_path / "verdicts.json").write_bytes(b"\xff\xfe")
    with pytest.raises(SystemExit, match=r"verdicts\.json is not a JSON file"):
        evaluate.main(["--policies", "", "--verdicts", str(tmp_path / "verdicts.json"),
                       "--deals", "3", "--out", str(out)])  # fmt: skip
    with pytest.raises(SystemExit, match="no such file"):
        evaluate.main(["--policies", "", "--verdicts", str(tmp_path / "none.json"),
                       "--deals", "3", "--out", str(out)])  # fmt: skip
    # the fields are there, but not as evaluate.py writes them
    good = {"deals": {"first": 0, "count": 3}, "summaries": {}, "command": "x"}
    for change, match in [({"deals": {"first": 0}}, "'deals' is not"),
                          ({"deals": {"first": "0", "count": 3}}, "'deals' is not"),
                          ({"summaries": {"SH1-C4": [1]}}, "'summaries' is not"),
                          ({"command": 3}, "'command' is not")]:  # fmt: skip
        (bad / "results.json").write_text(json.dumps(good | change))
        with pytest.raises(SystemExit, match=match):
            evaluate.main(["--policies", "", "--include", str(bad), "--deals", "3",
                           "--out", str(out)])  # fmt: skip
    (bad / "results.json").write_text(json.dumps(good))
    fields = ",".join(EPISODE_FIELDS)
    row = "SH1-C4,random,SH1-C4-AAAAAAA,0,False,0,3,3,stuck,0"
    for text, match in [("variant,policy\n", "no column"),
                        (f"{fields}\n{row}\n{row.replace(',3,3,', ',3,x,')}\n", "line 3"),
                        (f"{fields}\n{row.replace('SH1-C4,', 'XX1-C4,', 1)}\n", "line 2"),
                        (f"{fields}\n{row.replace('False', 'no')}\n", "line 2")]:  # fmt: skip
        (bad / "episodes.csv").write_text(text)
        with pytest.raises(SystemExit, match=match) as e:
            evaluate.main(["--policies", "", "--include", str(bad), "--deals", "3",
                           "--out", str(out)])  # fmt: skip
        assert str(bad / "episodes.csv") in str(e.value)
    for verdicts, match in [({"SH1-C4": {"zero": "solvable"}}, "'verdicts' is not"),
                            ({"SH1-C4": {"0": "won"}}, "'verdicts' is not"),
                            ([], "'verdicts' is not")]:  # fmt: skip
        (tmp_path / "verdicts.json").write_text(
            json.dumps({"solver_budget": {}, "verdicts": verdicts})
        )
        with pytest.raises(SystemExit, match=match):
            evaluate.main(["--policies", "", "--verdicts", str(tmp_path / "verdicts.json"),
                           "--deals", "3", "--out", str(out)])  # fmt: skip
    assert not out.exists()


# ---- configs ------------------------------------------------------------------------------------
def test_shipped_configs_load():
    from agents.imitation import load_imitation_config

    paths = sorted((ROOT / "configs").glob("*.yaml"))
    assert len(paths) >= 10
    tags = set()
    for p in paths:
        if "\nteacher:" in p.read_text():  # an imitation config (agents/imitation.py)
            assert load_imitation_config(p).variant in VARIANTS
            continue
        cfg = load_config(p)
        tags.add(env_signature(cfg.game, cfg.env_kwargs)["variant"])
        assert cfg.ppo["batch_size"] <= cfg.ppo["n_steps"] * cfg.num_envs
    assert tags == set(VARIANTS)  # a config for every game and option


TINY = {
    "name": "tiny",
    "game": "seahaven_towers",
    "options": {"cells": 4},
    "total_timesteps": 400,  # runs to 512: whole rollouts of 64 steps × 4 envs
    "num_envs": 4,
    "max_episode_steps": 40,
    "ppo": {"n_steps": 64, "batch_size": 128, "n_epochs": 1},
    "eval": {"every_steps": 256, "deals": 4},
    "checkpoint": {"every_steps": 256},  # keep: the default, best and last
    "network": {"net_arch": [16]},
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"learning_rate": 0.1}, "unknown key learning_rate"),
        ({"ppo": {"batchsize": 64}}, "unknown key ppo.batchsize"),
        ({"num_envs": "4"}, "num_envs must be an integer"),
        ({"num_envs": True}, "num_envs must be an integer"),
        ({"ppo": {"gamma": "high"}}, "ppo.gamma must be"),
        ({"network": {"net_arch": [16, "x"]}}, "network.net_arch"),
        ({"reward_mode": "points"}, "reward_mode must be one of"),
        ({"options": {"draw": 3}}, "unknown key options.draw"),
        ({"options": {"cells": 3}}, "options.cells must be one of"),
        ({"total_timesteps": -5}, "total_timesteps must be positive"),
        ({"game": "freecell"}, "game must be one of"),
        ({"checkpoint": {"keep": 0}}, "checkpoint.keep must be a positive integer or 'all'"),
        ({"checkpoint": {"keep": "some"}}, "checkpoint.keep must be a positive integer or 'all'"),
        ({"checkpoint": {"keep": True}}, "checkpoint.keep must be an integer or a string"),
    ],
)
def test_bad_config_is_refused_naming_the_key(tmp_path, change, message):
    data = json.loads(json.dumps(TINY))
    for k, v in change.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict) and k != "options":
            data[k].update(v)
        else:
            data[k] = v
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=message) as e:
        load_config(path)
    assert "bad.yaml" in str(e.value)


def test_missing_key_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="missing key total_timesteps"):
        check_config({"name": "x", "game": "seahaven_towers"})
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)


# ---- training -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The tiny config trained by ``experiments/train.py`` with its progress bar; what it printed
    on stdout and stderr."""
    import contextlib
    import io

    train = experiment("train")
    d = tmp_path_factory.mktemp("train")
    cfg = d / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    out = d / "run"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        assert train.main([str(cfg), "--out", str(out)]) == 0
    return train, cfg, out, (stdout.getvalue(), stderr.getvalue())


def test_train_prints_its_validations_and_checkpoints(tiny_run):
    """The bar counts to the step the run stops at (whole rollouts past total_timesteps); each
    validation is printed as it is made; the end names the best and the last checkpoint."""
    from agents.training import planned_end

    _, cfg, out, (printed, bar) = tiny_run
    end = planned_end(check_config(TINY), 0)
    assert end > TINY["total_timesteps"]
    assert f"total_timesteps {TINY['total_timesteps']} runs to {end}" in printed
    assert f"{end}/{end}" in bar  # tqdm's count at the end, against its total
    evals = list(csv.DictReader((out / "eval.csv").open()))
    assert [int(r["step"]) for r in evals] == [256, end]
    best, best_row = None, None
    for r in evals:
        win, found = float(r["win_rate"]), float(r["foundation"])
        assert (f"step {int(r['step']):,}: validation win rate {win:.1%} of {TINY['eval']['deals']}"
                f" deals, {found:.1f} cards home") in printed  # fmt: skip
        if best is None or (win, found) > best:
            best, best_row = (win, found), r
    ckpts = out / "checkpoints"
    assert f"best checkpoint: {ckpts / 'best.zip'} (step {int(best_row['step']):,}: " in printed
    assert (
        f"best policy, weights only: {ckpts / 'best.npz'} (loads without trusted=True)" in printed
    )
    assert f"last checkpoint: {ckpts / f'step_{end:010d}.zip'}" in printed
    assert printed.index("best checkpoint") > printed.index(f"step {end:,}: validation")


def test_train_runs_end_to_end_and_resumes(tiny_run, capsys):
    train, cfg, out, _ = tiny_run
    ckpts = out / "checkpoints"
    # checkpoint.keep's default: the best and the last, nothing else
    assert sorted(p.name for p in ckpts.iterdir()) == [
        "best.npz", "best.zip", "step_0000000512.zip"]  # fmt: skip
    evals = list(csv.DictReader((out / "eval.csv").open()))
    assert [int(r["step"]) for r in evals] == [256, 512]
    # the env's foundation reward: an episode's return is its foundation cards (+ 10 when won)
    rows = list(csv.DictReader((out / "train.csv").open()))
    assert rows and any(float(r["foundation"]) > 0 for r in rows)
    for r in rows:
        expected = float(r["foundation"]) + 10.0 * float(r["win_rate"])
        assert float(r["return"]) == pytest.approx(expected, abs=1e-6)
    timing = json.loads((out / "timing.json").read_text())
    assert 0 < timing["share"]["env_step (SB3VecEnv.reset + step_wait)"] < 1
    assert list((out / "tb").iterdir())
    # resume: the same command with more steps continues from the latest checkpoint; which
    # checkpoints it keeps may change (here: all of them from now on)
    capsys.readouterr()
    keep_all = cfg.with_name("keep_all.yaml")
    keep_all.write_text(yaml.safe_dump(dict(TINY, checkpoint={"every_steps": 256, "keep": "all"})))
    argv = [str(keep_all), "--out", str(out), "--no-progress", "--timesteps", "768"]
    assert train.main(argv) == 0
    assert "resuming tiny from" in capsys.readouterr().out
    evals = list(csv.DictReader((out / "eval.csv").open()))
    assert [int(r["step"]) for r in evals] == [256, 512, 768]
    assert sorted(p.name for p in ckpts.iterdir()) == [
        "best.npz", "best.zip", "step_0000000512.zip", "step_0000000768.zip"]  # fmt: skip
    # another config in the same folder is refused
    other = yaml.safe_load(cfg.read_text())
    other["seed"] = 5
    cfg2 = cfg.with_name("other.yaml")
    cfg2.write_text(yaml.safe_dump(other))
    assert train.main([str(cfg2), "--out", str(out), "--no-progress"]) == 2
    assert "key seed differs" in capsys.readouterr().err


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "CPU", ""])
def test_train_refuses_a_bad_device_before_it_starts(tmp_path, capsys, device):
    train = experiment("train")
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    out = tmp_path / "run"
    assert train.main([str(cfg), "--out", str(out), "--device", device]) == 2
    err = capsys.readouterr().err
    assert "train.py: device must be one of 'auto', 'cpu', 'cuda', 'cuda:N'" in err
    assert repr(device) in err
    assert not out.exists()  # refused before anything was written


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_train_refuses_cuda_where_there_is_none(tmp_path, capsys):
    train = experiment("train")
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    assert train.main([str(cfg), "--out", str(tmp_path / "run"), "--device", "cuda"]) == 2
    assert "device 'cuda': torch" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_checkpoint_plays_its_game_and_refuses_others(tiny_run, tmp_path):
    _, _, out, _ = tiny_run
    ckpt = out / "checkpoints" / "best.zip"
    with pytest.raises(UntrustedCheckpoint, match="trusted=True"):
        MaskablePPOAgent.load(ckpt, game="seahaven_towers", options={"cells": 4})
    agent = MaskablePPOAgent.load(ckpt, game="seahaven_towers", options={"cells": 4},
                                  trusted=True)  # fmt: skip
    assert agent.trained_on["variant"] == "SH1-C4"
    res = play_deals(agent, "seahaven_towers", {"cells": 4}, [1, 2], max_episode_steps=LIMIT,
                     record=[1, 2])  # fmt: skip
    _check_results(res, [1, 2])
    # other options of the same game: same action layout, accepted
    MaskablePPOAgent.load(ckpt, game="seahaven_towers", options={"cells": 1}, trusted=True)
    with pytest.raises(CheckpointMismatch, match=r"Seahaven Towers \(SH1-C4\).*Solitaire R"):
        MaskablePPOAgent.load(ckpt, game="solitaire_reflechi", options={"draw": 1},
                              trusted=True)  # fmt: skip
    with pytest.raises(CheckpointMismatch, match="cannot play"):
        play_deals(agent, "double_solitaire", {"draw": 1}, [0])
    # a checkpoint without our record is judged by its spaces
    model = _sb3_model("solitaire_reflechi", {"draw": 1})
    model.save(tmp_path / "plain.zip")
    with pytest.raises(CheckpointMismatch, match="591 actions"):
        MaskablePPOAgent.load(tmp_path / "plain.zip", game="seahaven_towers", trusted=True)


def test_training_writes_weights_that_play_as_best_zip(tiny_run, tmp_path):
    """``best.npz`` is written with ``best.zip``: it loads without trust, records the validation
    that made it the best, and plays the zip's games, sampled or not, in evaluate.py too."""
    from agents.ppo_weights import PPOWeightsAgent

    _, _, out, _ = tiny_run
    ckpts = out / "checkpoints"
    weights = MaskablePPOAgent.load(ckpts / "best.npz", game="seahaven_towers",
                                    options={"cells": 4}, deterministic=True)  # fmt: skip
    assert isinstance(weights, PPOWeightsAgent)
    state = json.loads((out / "state.json").read_text())
    meta = weights.meta
    assert meta["validation"]["step"] == state["best_step"] == meta["num_timesteps"]
    assert [meta["validation"][k] for k in ("win_rate", "foundation")] == state["best"]
    assert meta["trained_on"]["config"] == "tiny" and meta["arch"]["net_arch"] == [16]
    zipped = MaskablePPOAgent.load(ckpts / "best.zip", game="seahaven_towers",
                                   options={"cells": 4}, deterministic=True, trusted=True)  # fmt: skip
    deals = [3, 4]
    a, b = (play_deals(x, "seahaven_towers", {"cells": 4}, deals, max_episode_steps=LIMIT,
                       record=deals) for x in (weights, zipped))  # fmt: skip
    assert [r.trace for r in a] == [r.trace for r in b]
    # evaluate.py: the .npz needs no --trusted; the zip beside it does, and plays the same games
    evaluate = experiment("evaluate")
    common = ["--policies", "", "--variants", "SH1-C4", "--deals", "3", "--no-plots"]
    res = evaluate.main_result([*common, "--checkpoint", f"w@{ckpts / 'best.npz'}",
                                "--checkpoint", f"z@{ckpts / 'best.zip'}", "--trusted",
                                "--out", str(tmp_path / "ev")])  # fmt: skip
    assert res["summaries"]["SH1-C4"]["w"]["deals"] == 3
    rows = list(csv.DictReader((tmp_path / "ev" / "episodes.csv").open()))
    games = {p: [(r["code"], r["won"], r["score"], r["moves"]) for r in rows if r["policy"] == p]
             for p in ("w", "z")}  # fmt: skip
    assert games["w"] == games["z"] and len(games["w"]) == 3


class _Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))  # any call at all: here, create a file


def test_a_foreign_zip_is_not_unpickled_unless_trusted(tmp_path):
    """A stable-baselines3 zip whose data carries a pickled call: without trusted=True neither
    reading its record nor loading it runs anything."""
    import base64
    import pickle
    import zipfile

    marker = tmp_path / "ran"
    blob = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
    p = tmp_path / "evil.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":type:": "x", ":serialized:": blob}}))
    with pytest.raises(UntrustedCheckpoint, match="trusted=True"):
        read_checkpoint_meta(p)
    with pytest.raises(UntrustedCheckpoint, match="trusted=True"):
        MaskablePPOAgent.load(p, game="seahaven_towers")
    assert not marker.exists()


@pytest.mark.parametrize("variant", ["SH1-C4", "DS1-D3N"])
def test_a_network_player_reads_uint8_observations_as_float32_ones(variant):
    """An env with ``obs_dtype="uint8"``: the shipped network player picks, on every game, the
    action it picks from the float32 observation of the same position."""
    from agents import make_agent
    from solitaire_gym import SolitaireVectorEnv

    game, options = VARIANTS[variant]
    f32 = SolitaireVectorEnv(8, game, **(options or {}))
    u8 = SolitaireVectorEnv(8, game, obs_dtype="uint8", **(options or {}))
    of, info = f32.reset(seed=3)
    ou, _ = u8.reset(seed=3)
    one, other = make_agent("learned", variant), make_agent("learned", variant)
    for step in range(30):
        masks = info["action_mask"]
        starts = np.full(8, step == 0)
        act = one.act(of, masks, starts=starts, view=f32)
        assert np.array_equal(other.act(ou, masks, starts=starts, view=u8), act)
        assert other.act(ou[0], masks[0]) == one.act(of[0], masks[0])
        of, _, _, _, info = f32.step(act)
        ou, *_ = u8.step(act)


def test_an_sb3_model_gets_observations_in_the_dtype_it_learned():
    """A model trained on an env with ``obs_dtype="uint8"`` gets uint8 counts from
    :class:`SB3Agent`, whichever dtype the caller's env gives; one trained on float32 gets
    float32."""
    from sb3_contrib import MaskablePPO

    from solitaire_gym import SolitaireVectorEnv

    env = SB3VecEnv("seahaven_towers", num_envs=2, seed=0, obs_dtype="uint8")
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})  # fmt: skip
    u8 = env.reset()
    masks = env.action_masks()
    f32 = (u8 * SolitaireVectorEnv(2, "seahaven_towers").obs_scales).astype(np.float32)
    agent = SB3Agent(model, deterministic=True)
    want, _ = model.predict(u8, action_masks=masks, deterministic=True)
    assert np.array_equal(agent.act(f32, masks), want)
    assert np.array_equal(agent.act(u8, masks), want)
    assert agent.observations(f32).dtype == np.uint8
    floats = SB3Agent(_sb3_model("seahaven_towers", {}), deterministic=True)
    assert np.array_equal(floats.observations(u8), f32)
