"""agents.masked_policy: the lean masked categorical is the stock one's distribution, and the lean
policy gives the stock policy's actions, log probabilities, entropies and values."""

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

from agents.config import ConfigError, check_config, load_config
from agents.masked_policy import LeanMaskableCategoricalDistribution, LeanMaskablePolicy
from agents.ppo_weights import policy_arch
from solitaire_gym.envs.sb3 import SB3VecEnv


def _logits_and_masks(rows=64, n=300, seed=0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, n, generator=g) * 3
    masks = torch.rand(rows, n, generator=g) < 0.05
    masks[torch.arange(rows), torch.randint(0, n, (rows,), generator=g)] = True
    return logits, masks


@pytest.mark.parametrize("masked", [True, False])
def test_lean_distribution_is_the_stock_distribution(masked):
    logits, masks = _logits_and_masks()
    lean = LeanMaskableCategoricalDistribution(logits.shape[1]).proba_distribution(logits)
    stock = MaskableCategoricalDistribution(logits.shape[1]).proba_distribution(logits)
    if masked:
        lean.apply_masking(masks)
        stock.apply_masking(masks)
    actions = stock.sample()
    if masked:
        assert masks[torch.arange(len(actions)), actions].all()
        assert masks[torch.arange(len(actions)), lean.sample()].all()
    torch.testing.assert_close(lean.log_prob(actions), stock.log_prob(actions))
    torch.testing.assert_close(lean.entropy(), stock.entropy())
    torch.testing.assert_close(lean.distribution.probs, stock.distribution.probs)
    assert torch.equal(lean.mode(), stock.mode())


def test_lean_distribution_builds_once_and_forgets_old_masks():
    logits, masks = _logits_and_masks(rows=4, n=20, seed=1)
    d = LeanMaskableCategoricalDistribution(20).proba_distribution(logits)
    d.apply_masking(masks)
    assert d.distribution is d.distribution  # built once, on first use after the masks
    d.proba_distribution(logits)  # new logits: no masks any more
    assert d.distribution.masks is None
    assert (d.distribution.probs > 0).all()


def test_lean_policy_matches_the_stock_policy():
    env = SB3VecEnv("seahaven_towers", num_envs=8, seed=3)
    kw = dict(n_steps=8, batch_size=32, seed=0, device="cpu", verbose=0,
              policy_kwargs={"net_arch": [32, 32]})  # fmt: skip
    lean = MaskablePPO(LeanMaskablePolicy, env, **kw)
    stock = MaskablePPO("MlpPolicy", env, **kw)
    stock.policy.load_state_dict(lean.policy.state_dict())  # same parameters, same names
    assert policy_arch(lean) == policy_arch(stock)
    obs = torch.as_tensor(env.reset())
    masks = torch.as_tensor(env.action_masks())
    acts = torch.as_tensor([int(np.flatnonzero(m)[0]) for m in masks.numpy()])
    with torch.no_grad():
        a = lean.policy.evaluate_actions(obs, acts, action_masks=masks)
        b = stock.policy.evaluate_actions(obs, acts, action_masks=masks)
        for x, y in zip(a, b, strict=True):
            torch.testing.assert_close(x, y)
        np.testing.assert_array_equal(
            lean.predict(obs.numpy(), action_masks=masks.numpy(), deterministic=True)[0],
            stock.predict(obs.numpy(), action_masks=masks.numpy(), deterministic=True)[0],
        )


def test_config_policy_is_lean_or_sb3():
    cfg = load_config("configs/seahaven_c4.yaml")
    assert cfg.ppo["policy"] == "lean"
    raw = dict(cfg.raw, ppo=dict(cfg.raw["ppo"], policy="fast"))
    with pytest.raises(ConfigError, match=r"ppo\.policy must be one of lean, sb3, not 'fast'"):
        check_config(raw, cfg.path)


def test_potential_shaping_adds_gamma_minus_one_times_the_cards_home():
    """``shaping: potential`` gives gamma * Phi(s') - Phi(s) (scaled): the env's reward plus
    (gamma - 1) * Phi(s'), Phi(s') the cards home after the move (an ended game's, not its new
    deal's); ``difference`` is the env's reward as it is."""
    from agents.training import make_train_env

    cfg = load_config("configs/reflechi_d1.yaml")
    assert cfg.raw["shaping"] == "difference"
    small = dict(cfg.raw, num_envs=6, max_episode_steps=30, ppo=dict(cfg.raw["ppo"], batch_size=64))
    plain, _ = make_train_env(check_config(small, cfg.path), seed=5)
    shaped, _ = make_train_env(check_config(dict(small, shaping="potential"), cfg.path), seed=5)
    gamma, scale = cfg.ppo["gamma"], cfg.reward_scale
    plain.reset()
    shaped.reset()
    rng = np.random.default_rng(0)
    ended, home = 0, 0.0
    for _ in range(70):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in plain.action_masks()])
        _, r0, d0, i0 = plain.step(acts)
        _, r1, d1, i1 = shaped.step(acts)
        assert np.array_equal(d0, d1)
        phi = shaped.venv.venv.foundation_cards().astype(float)
        for i in np.flatnonzero(d1):
            phi[i] = i1[i]["foundation_cards"]
            ended += 1
        np.testing.assert_allclose(r1, r0 + scale * (gamma - 1) * phi, rtol=1e-5, atol=1e-6)
        home = max(home, phi.max())
    assert home > 0  # some cards went home: the two rewards differed
    assert ended >= 6  # games ended at the step limit on the way
    with pytest.raises(ConfigError, match="shaping must be one of difference, potential"):
        check_config(dict(cfg.raw, shaping="discounted"), cfg.path)
    # nothing else would read it: refused rather than ignored
    for other in ({"reward_mode": "win"}, {"algorithm": "rllib_ppo"}):
        with pytest.raises(ConfigError, match="shaping potential is for reward_mode foundation"):
            check_config(dict(cfg.raw, shaping="potential", **other), cfg.path)
