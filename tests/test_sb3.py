"""The stable-baselines3 adapter: VecEnv contract, same-step autoreset, and MaskablePPO on it."""

import numpy as np
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from solitaire_gym.envs.sb3 import SB3VecEnv


def test_masks_in_one_call_and_autoreset():
    env = SB3VecEnv("seahaven_towers", num_envs=8, max_episode_steps=5, seed=0)
    obs = env.reset()
    assert obs.shape == (8, env.observation_space.shape[0])
    assert is_masking_supported(env)
    masks = get_action_masks(env)
    assert masks.shape == (8, 1278) and masks.dtype == bool and masks.any(axis=1).all()
    rng = np.random.default_rng(0)
    saw_done = False
    for _ in range(6):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in get_action_masks(env)])
        obs, rew, dones, infos = env.step(acts)
        for i in np.flatnonzero(dones):
            saw_done = True
            assert "terminal_observation" in infos[i]
            assert infos[i]["TimeLimit.truncated"] in (True, False)
            assert not np.array_equal(infos[i]["terminal_observation"], obs[i])
    assert saw_done  # 5 steps at most per episode


def test_maskable_ppo_trains_out_of_the_box(tmp_path):
    env = SB3VecEnv("seahaven_towers", num_envs=16, seed=1)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=1, verbose=0)
    model.learn(total_timesteps=512)
    model.save(tmp_path / "ppo")
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=get_action_masks(env), deterministic=True)
    assert get_action_masks(env)[np.arange(16), actions].all()


def test_adapter_builds_without_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. SB3's "render_mode attribute is not defined"
        env = SB3VecEnv("solitaire_reflechi", num_envs=3, draw=3)
    assert env.render_mode is None and env.num_envs == 3
