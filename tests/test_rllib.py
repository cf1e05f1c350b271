"""RLlib smoke test: PPO on the new API stack, action masking over RLlibMaskWrapper's Dict
observation, the env registered with ray.tune and stepped as the native vector env; a couple of
training iterations on local Ray, with the outputs of experiments/train.py, and a resume."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the ray extra: pip install -e '.[ray]'")
pytest.importorskip("torch")

from agents.config import ConfigError, check_config, load_config

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "name": "tiny_rllib",
    "game": "seahaven_towers",
    "options": {"cells": 4},
    "algorithm": "rllib_ppo",
    "total_timesteps": 128,
    "num_envs": 4,
    "max_episode_steps": 40,
    "ppo": {"n_steps": 16, "batch_size": 32, "n_epochs": 1},
    "eval": {"every_steps": 64, "deals": 4},
    "checkpoint": {"every_steps": 64, "keep": 2},
    "network": {"net_arch": [16]},
    "rllib": {"num_env_runners": 0},
}


def test_env_creator_gives_masked_native_vector_env():
    from agents.rllib_training import make_env
    from solitaire_gym.envs import SolitaireVectorEnv

    cfg = check_config(TINY)
    from agents.rllib_training import env_config

    venv = make_env(dict(env_config(cfg), num_envs=3))  # what RLlib's vector_entry_point asks
    assert isinstance(venv.unwrapped, SolitaireVectorEnv) and venv.num_envs == 3
    obs, info = venv.reset(seed=1)
    assert set(obs) == {"observations", "action_mask"}
    assert venv.single_observation_space.contains(
        {"observations": obs["observations"][0], "action_mask": obs["action_mask"][0]}
    )
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    one = make_env(env_config(cfg))  # one game (vectorize: sync)
    o, _ = one.reset(seed=1)
    assert set(o) == {"observations", "action_mask"}


def test_rllib_config_checks():
    with pytest.raises(ConfigError, match="rllib section is for algorithm rllib_ppo"):
        check_config(dict(TINY, algorithm="maskable_ppo"))
    with pytest.raises(ConfigError, match=r"rllib\.vectorize"):
        check_config(dict(TINY, rllib={"vectorize": "fast"}))
    sb3 = check_config({k: v for k, v in TINY.items() if k not in ("rllib", "algorithm")})
    assert "rllib" not in sb3.raw  # an SB3 config is what it was
    shipped = load_config(ROOT / "configs" / "rllib_seahaven_c4.yaml")
    assert shipped.algorithm == "rllib_ppo" and shipped.rllib["vectorize"] == "native"


@pytest.mark.slow
def test_rllib_trains_with_masks_and_resumes(tmp_path):
    import ray

    from agents.rllib_training import RLlibRun, build_config

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cfg = check_config(TINY)
    assert build_config(cfg).gym_env_vectorize_mode == "vector_entry_point"
    out = tmp_path / "run"
    try:
        final = RLlibRun(cfg, out, progress=False).train()
        assert final.is_dir() and (out / "checkpoints" / "final").is_dir()
        assert (out / "checkpoints" / "best").is_dir()
        rows = list(csv.DictReader((out / "eval.csv").open()))
        # the evaluation plays 4 validation deals with the trained module: an illegal action
        # would have stopped it (play_deals refuses one)
        assert rows and all(int(r["deals"]) == 4 for r in rows)
        assert 0.0 <= float(rows[-1]["win_rate"]) <= 1.0
        train = list(csv.DictReader((out / "train.csv").open()))
        assert len(train) >= 2 and int(train[-1]["step"]) >= 128
        assert any((out / "tb").iterdir())  # TensorBoard events
        assert (out / "timing.json").exists()
        # the final module's actor as weights only: the module's logits on the legal actions
        import torch
        from ray.rllib.core.rl_module.rl_module import RLModule

        from agents.named import load_npz
        from agents.rllib_training import save_rllib_weights
        from solitaire_gym.envs.sb3 import SB3VecEnv

        module = RLModule.from_checkpoint(
            (final / "learner_group/learner/rl_module/default_policy").resolve()
        )
        record = save_rllib_weights(tmp_path / "w.npz", module, cfg, num_timesteps=7)
        assert record["num_timesteps"] == 7 and record["trained_on"]["algorithm"] == "rllib_ppo"
        agent = load_npz(tmp_path / "w.npz", game="seahaven_towers", options={"cells": 4})
        env = SB3VecEnv("seahaven_towers", num_envs=8, seed=0, cells=4)
        obs, masks = env.reset(), env.action_masks()
        batch = {"obs": {"observations": torch.from_numpy(obs.astype(np.float32)),
                         "action_mask": torch.from_numpy(masks.astype(np.float32))}}  # fmt: skip
        with torch.no_grad():
            want = module.forward_inference(batch)["action_dist_inputs"].numpy()
        np.testing.assert_allclose(agent.logits(obs)[masks], want[masks], rtol=1e-6, atol=1e-6)
        steps = int(train[-1]["step"])
        bigger = check_config(dict(TINY, total_timesteps=steps + 64))
        RLlibRun(bigger, out, progress=False).train()  # resumes from the latest checkpoint
        again = list(csv.DictReader((out / "train.csv").open()))
        assert len(again) > len(train) and int(again[-1]["step"]) >= steps + 64
    finally:
        ray.shutdown()
