"""Registered ids: ``gym.make(id, **options)`` and ``gym.make_vec(id, num_envs=n, **options)``."""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from solitaire_gym.envs.core import DEFAULT_MAX_EPISODE_STEPS

ENV_IDS = {
    "solitaire_gym/DoubleSolitaire-v0": ("double_solitaire", "DS1"),
    "solitaire_gym/SolitaireReflechi-v0": ("solitaire_reflechi", "TF1"),
    "solitaire_gym/SeahavenTowers-v0": ("seahaven_towers", "SH1"),
}


def register_envs() -> None:
    for env_id, (game, prefix) in ENV_IDS.items():
        if env_id in registry:
            continue
        register(
            id=env_id,
            entry_point="solitaire_gym.envs.solitaire_env:SolitaireEnv",
            vector_entry_point="solitaire_gym.envs.vector_env:SolitaireVectorEnv",
            max_episode_steps=DEFAULT_MAX_EPISODE_STEPS[prefix],
            # TimeLimit (above) counts the steps; the env gets no limit of its own. The vector
            # entry point reads None as the game's default.
            kwargs={"game": game, "max_episode_steps": None},
        )
