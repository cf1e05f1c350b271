"""experiments/ppo_baselines.py: a tiny run, trained with the command it shows, collected into
curves (every validation, with the seconds since the run's start), a plot, a table and a
weights-only final policy that loads without unpickling and plays."""

from __future__ import annotations

import csv
import shlex
import subprocess
import sys

import pytest
import yaml
from scripts import ROOT, experiment

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from agents.named import load_npz
from agents.play import VARIANTS, eval_deals, play_deals

BASELINES = experiment("ppo_baselines")


def test_configs_train_their_variant_and_the_command_fixes_seed_and_threads():
    from agents.config import load_config
    from agents.play import variant_tag

    for curve, path in BASELINES.CONFIGS.items():
        cfg = load_config(ROOT / path)
        rllib = curve.endswith(BASELINES.RLLIB)
        assert variant_tag(cfg.game, cfg.env_kwargs) == curve.removesuffix(BASELINES.RLLIB)
        assert cfg.algorithm == ("rllib_ppo" if rllib else "maskable_ppo")
        assert cfg.torch_threads == 1 and (rllib or cfg.ppo["policy"] == "lean")
        assert cfg.total_timesteps >= 1_000_000
        cmd = BASELINES.shown_command(curve, 2)
        script = "train_rllib.py" if rllib else "train.py"
        assert cmd.startswith(f"NUMBA_NUM_THREADS=1 python experiments/{script} {path}")
        assert "--seed 2" in cmd and f"runs/ppo/{curve}/seed2" in cmd


def test_a_tiny_run_is_collected(tmp_path, monkeypatch, capsys):
    raw = yaml.safe_load((ROOT / BASELINES.CONFIGS["TF1-D3N"]).read_text())
    raw.update(name="tiny", total_timesteps=256, num_envs=8,
               eval={"every_steps": 128, "deals": 2},
               checkpoint={"every_steps": 128, "keep": 1},
               ppo=dict(raw["ppo"], n_steps=16, batch_size=64))  # fmt: skip
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(raw))
    monkeypatch.setattr(BASELINES, "CONFIGS", {"TF1-D3N": str(config)})
    monkeypatch.setattr(BASELINES, "CHECKPOINTS", tmp_path / "checkpoints")
    runs = tmp_path / "runs"
    for seed in (0, 1):
        cmd = BASELINES.run_command("TF1-D3N", seed, runs)
        assert cmd[:2] == [sys.executable, "experiments/train.py"]
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    out = tmp_path / "out"
    assert BASELINES.main(["collect", "--runs", str(runs), "--seeds", "0,1,2",
                           "--variants", "TF1-D3N", "--out", str(out)]) == 0  # fmt: skip
    assert "TF1-D3N: seeds [2] not finished; left out" in capsys.readouterr().out
    with open(out / "TF1-D3N.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["seed"], r["step"]) for r in rows] == [
        (s, step) for s in ("0", "1") for step in ("128", "256")
    ]  # every validation of eval.csv
    for s in ("0", "1"):
        elapsed = [float(r["elapsed_s"]) for r in rows if r["seed"] == s]
        assert 0 <= elapsed[0] <= elapsed[1]
    assert (out / "TF1-D3N.png").stat().st_size > 10_000
    table = (out / "table.md").read_text()
    assert "| TF1-D3N | 0, 1 | 256 |" in table and "--seed 0" in table  # the seeds it has
    assert table in (out / "README.md").read_text()
    # the final policy of seed 0, weights only, with its provenance
    agent = load_npz(tmp_path / "checkpoints" / "TF1-D3N.npz", game="solitaire_reflechi",
                     options={"draw": 3})  # fmt: skip
    assert agent.meta["num_timesteps"] == 256
    assert shlex.split(agent.meta["trained_by"])[2] == "experiments/train.py"
    assert agent.meta["final"]["validation"]["step"] == 256
    game, options = VARIANTS["TF1-D3N"]
    assert len(play_deals(agent, game, options, eval_deals(2), max_episode_steps=50)) == 2


def test_collect_skips_unfinished_runs_and_refuses_bad_arguments(tmp_path, capsys):
    assert BASELINES.main(["collect", "--runs", str(tmp_path), "--variants", "SH1-C4",
                           "--out", str(tmp_path / "out")]) == 0  # fmt: skip
    assert "SH1-C4: seeds [0, 1, 2] not finished; left out" in capsys.readouterr().out
    assert "| SH1-C4 |" not in (tmp_path / "out" / "table.md").read_text()
    for argv in (["run", "--variants", "SH1-C3"], ["run", "--seeds", "a"], ["run", "--jobs", "0"]):
        with pytest.raises(SystemExit):
            BASELINES.main(argv)


def test_committed_baselines_are_the_curves_final_seed_0_policies():
    """Every curve's final seed-0 policy is committed as weights only (MaskablePPO's in
    ``agents/checkpoints/ppo/``, the player ``ppo``; RLlib's beside its curve): its record names
    the curve's command and holds its last validation; the MaskablePPO ones were evaluated in
    ``ppo/`` (whose games ``tests/test_committed_evaluations.py`` replays)."""
    import json

    from agents.named import PPO_DIR, read_npz_meta

    curves = ROOT / BASELINES.OUT_DIR
    sb3 = [v for v in BASELINES.CONFIGS if not v.endswith(BASELINES.RLLIB)]
    assert sorted(p.stem for p in PPO_DIR.glob("*.npz")) == sorted(sb3)
    evaluated = json.loads((ROOT / "experiments/results/ppo/results.json").read_text())
    for curve in BASELINES.CONFIGS:
        rllib = curve.endswith(BASELINES.RLLIB)
        meta = read_npz_meta(curves / f"{curve}.npz" if rllib else PPO_DIR / f"{curve}.npz")
        assert meta["variant"] == curve.removesuffix(BASELINES.RLLIB)
        assert meta["trained_by"] == BASELINES.shown_command(curve, 0)
        with open(curves / f"{curve}.csv", newline="") as fh:
            last = [r for r in csv.DictReader(fh) if r["seed"] == "0"][-1]
        final = meta["final"]["validation"]
        assert (final["step"], final["win_rate"]) == (int(last["step"]), float(last["win_rate"]))
        assert meta["num_timesteps"] == final["step"]
        assert rllib or "ppo" in evaluated["summaries"][curve]
