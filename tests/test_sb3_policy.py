"""The cards network as a MaskablePPO policy (agents/sb3_policy.py): it plays what the policy
checkpoint plays, it trains, and it exports to an ordinary checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from agents.play import VARIANTS  # noqa: E402
from agents.policy import build_net, game_spec, load_policy, save_policy  # noqa: E402
from agents.sb3_policy import (  # noqa: E402
    CardsPolicy,
    LostPositionEnd,
    PrevActionVecEnv,
    export_policy,
)
from solitaire_gym.envs.sb3 import SB3VecEnv  # noqa: E402

GAME, OPTIONS = VARIANTS["SH1-C4"]
ARCH = {"kind": "cards", "hidden": 16, "layers": 1}


@pytest.fixture(params=["plain", "piles+moves"])
def checkpoint(tmp_path, request):
    """A cards network as the committed Seahaven policy has been: plain, then with two layers,
    ``piles`` and ``moves``."""
    arch = ARCH
    if request.param != "plain":
        arch = {**ARCH, "layers": 2, "piles": True, "moves": True}
    torch.manual_seed(3)
    net = build_net(arch, game_spec(GAME, OPTIONS))
    p = tmp_path / "c.npz"
    save_policy(p, net, {"game": GAME, "options": OPTIONS, "variant": "SH1-C4", "arch": arch})
    return p


def test_prev_action_wrapper_appends_the_last_action():
    env = PrevActionVecEnv(SB3VecEnv(GAME, num_envs=3, seed=0, max_episode_steps=4, **OPTIONS))
    n = env.action_space.n
    obs = env.reset()
    assert obs.shape == (3, env.venv.observation_space.shape[0] + 1)
    assert (obs[:, -1] == n).all()
    for _ in range(4):
        masks = env.action_masks()
        acts = masks.argmax(1)
        obs, _, dones, infos = env.step(acts)
        want = np.where(dones, n, acts)
        assert np.array_equal(obs[:, -1], want)
    assert dones.all()  # the step limit ended every game: the next ones start with no move
    assert infos[0]["terminal_observation"][-1] == acts[0]


def test_cards_policy_plays_what_the_checkpoint_plays(checkpoint):
    env = PrevActionVecEnv(SB3VecEnv(GAME, num_envs=4, seed=1, **OPTIONS))
    model = MaskablePPO(CardsPolicy, env, n_steps=32, batch_size=64, device="cpu", seed=0,
                        policy_kwargs={"game": GAME, "options": OPTIONS, "init": checkpoint})  # fmt: skip
    agent = load_policy(checkpoint)
    obs = env.reset()
    for _ in range(5):
        masks = env.action_masks()
        a_ppo, _ = model.predict(obs, deterministic=True, action_masks=masks)
        scores = agent.scores(obs[:, :-1], masks, obs[:, -1].astype(np.int64))
        assert np.array_equal(a_ppo, scores.argmax(1))
        obs, *_ = env.step(a_ppo)


def test_cards_policy_trains_and_exports(tmp_path, checkpoint):
    env = PrevActionVecEnv(SB3VecEnv(GAME, num_envs=4, seed=2, reward_mode="foundation",
                                     **OPTIONS))  # fmt: skip
    model = MaskablePPO(CardsPolicy, env, n_steps=32, batch_size=64, n_epochs=2, device="cpu",
                        learning_rate=1e-3, seed=0,
                        policy_kwargs={"game": GAME, "options": OPTIONS, "init": checkpoint})  # fmt: skip
    before = {k: v.clone() for k, v in model.policy.card_net.state_dict().items()}
    model.learn(128)
    after = model.policy.card_net.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # the network learnt
    p = tmp_path / "ft.npz"
    export_policy(model, p, {"variant": "SH1-C4"})
    agent = load_policy(p, game=GAME, options=OPTIONS)
    obs = env.reset()
    masks = env.action_masks()
    with torch.no_grad():
        want = model.policy.card_net(torch.as_tensor(obs[:, :-1]), torch.as_tensor(masks),
                                     torch.as_tensor(obs[:, -1]).long()).numpy()  # fmt: skip
    assert np.allclose(agent.scores(obs[:, :-1], masks, obs[:, -1].astype(np.int64)), want)


def test_cards_policy_refuses_what_it_cannot_play(checkpoint):
    raw = SB3VecEnv(GAME, num_envs=2, **OPTIONS)
    with pytest.raises(ValueError, match="PrevActionVecEnv"):
        MaskablePPO(CardsPolicy, raw, device="cpu",
                    policy_kwargs={"game": GAME, "options": OPTIONS, "init": checkpoint})  # fmt: skip
    env = PrevActionVecEnv(raw)
    with pytest.raises(ValueError, match="not 'mlp'"):
        MaskablePPO(CardsPolicy, env, device="cpu",
                    policy_kwargs={"game": GAME, "options": OPTIONS,
                                   "arch": {"kind": "mlp", "hidden": 8}})  # fmt: skip


def test_lost_position_end_ends_exactly_the_games_the_solver_proves_lost():
    """Random play: every game the wrapper ends is lost (checked with the public solver on the
    position it ended in), gets the penalty, and the env goes on with a new game."""
    from solitaire_gym.solver import solve

    raw = SB3VecEnv(GAME, num_envs=6, seed=4, reward_mode="foundation", **OPTIONS)
    env = LostPositionEnd(raw, penalty=5.0, max_nodes=5000)
    ended_at = []
    end_games = raw.end_games

    def spy(rows, truncated=None):
        if truncated is None:  # the wrapper's call (the env's own passes truncated)
            ended_at.extend(raw._core.to_dict(int(r)) for r in rows)
        return end_games(rows, truncated)

    raw.end_games = spy
    rng = np.random.default_rng(0)
    env.reset()
    n_lost = 0
    for _ in range(150):
        masks = env.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, rewards, dones, infos = env.step(acts)
        for r in np.flatnonzero(dones):
            if infos[r].get("lost"):
                n_lost += 1
                assert rewards[r] <= -5.0 + 1  # the penalty (+ at most one card placed)
        if n_lost >= 2:
            break
    assert n_lost >= 2 and env.ended == n_lost == len(ended_at)
    for pos in ended_at:
        assert solve(pos, max_seconds=None, max_nodes=200_000).verdict == "unsolvable"
    with pytest.raises(TypeError, match="wraps an SB3VecEnv"):
        LostPositionEnd(PrevActionVecEnv(raw))
    with pytest.raises(ValueError, match="penalty"):
        LostPositionEnd(raw, penalty=float("nan"))


def test_finetune_script_writes_its_table_row_by_row(tmp_path, checkpoint, monkeypatch):
    import csv
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "finetune_ppo.py"
    spec = importlib.util.spec_from_file_location("finetune_ppo", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    seen = []
    real = csv.DictWriter.writerow

    def spy(self, row):  # the file already holds every earlier row when a new one is written
        if row["step"] != "step":  # not the header
            seen.append(len(list(csv.DictReader((tmp_path / "ft" / "eval.csv").open()))))
        return real(self, row)

    monkeypatch.setattr(csv.DictWriter, "writerow", spy)
    out = tmp_path / "ft"
    code = script.main([str(checkpoint), "--out", str(out), "--timesteps", "64",
                        "--eval-every", "32", "--num-envs", "2", "--n-steps", "16",
                        "--batch-size", "32", "--n-epochs", "1", "--val-deals", "2"])  # fmt: skip
    assert code == 0
    rows = list(csv.DictReader((out / "eval.csv").open()))
    assert [int(r["step"]) for r in rows] == [0, 32, 64]
    assert seen == [0, 1, 2]
    assert (out / "best.npz").exists() and (out / "final.npz").exists()
    assert load_policy(out / "final.npz", game=GAME, options=OPTIONS) is not None


def test_cards_policy_refuses_a_memory_network(tmp_path):
    env = PrevActionVecEnv(SB3VecEnv(GAME, num_envs=2, seed=0, **OPTIONS))
    with pytest.raises(ValueError, match="memory"):
        MaskablePPO(CardsPolicy, env, n_steps=8, batch_size=8, device="cpu",
                    policy_kwargs={"game": GAME, "options": OPTIONS,
                                   "arch": {**ARCH, "memory": True}})  # fmt: skip
