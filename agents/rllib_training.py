"""PPO with RLlib (new API stack, action masking) from a config: ``experiments/train_rllib.py``.

The env is registered with ``ray.tune.register_env`` (:data:`ENV_NAME`, :func:`make_env`). RLlib's
env runners build it through its ``vector_entry_point``: each runner steps its
``rllib.num_envs_per_env_runner`` games in one compiled call (:class:`SolitaireVectorEnv` under
:class:`RLlibMaskVectorWrapper`), not one Python env per game (``rllib.vectorize: native``;
``sync`` is gymnasium's one-env-per-game vector env, for comparison). Observations are
``{"observations", "action_mask"}``; the policy is RLlib's action-masking PPO RLModule
(``ActionMaskingTorchRLModule``): illegal actions get probability 0 when acting and training.

A run writes the same files as ``agents.training`` (the SB3 run)::

    config.yaml            the checked config (a resumed run must match it)
    checkpoints/step_*     the latest ``checkpoint.keep`` RLlib checkpoints (directories;
                           ``all``: every one); best (best validation win rate, then foundation
                           cards); final
    eval.csv               periodic validation on deals 2^19 … : step, win rate, foundation …
    train.csv              training episodes per iteration: win rate, foundation cards, return
    timing.json            where the wall-clock time went (sampling, updates, eval, checkpoints)
    tb/                    TensorBoard logs

Running the same command again continues from the latest checkpoint.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent
from agents.config import (
    ConfigError,
    TrainConfig,
    check_run_folder,
    read_run_state,
    stale_checkpoints,
)
from agents.play import VALIDATION_START, eval_deals, play_deals
from solitaire_gym.engine.threads import set_torch_threads

ENV_NAME = "solitaire_gym_masked"
"""The name :func:`register` gives :func:`make_env` in Ray's registry."""

VECTORIZE = {"native": "vector_entry_point", "sync": "sync"}


# ---- the env -------------------------------------------------------------------------------------
class ScaledRewardVector(gym.vector.VectorWrapper):
    """The env's reward (``foundation`` included: the compiled step computes it) times
    ``scale``, as ``agents.training.TrainingReward`` does for SB3."""

    def __init__(self, env: gym.vector.VectorEnv, scale: float):
        super().__init__(env)
        self.scale = np.float32(scale)

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return obs, rewards * self.scale, terminated, truncated, info


def make_env(env_config: dict) -> gym.Env | gym.vector.VectorEnv:
    """The env of ``env_config`` (``game``, ``options``, ``max_episode_steps``, ``reward``: the
    env's reward arguments, ``reward_scale``): with ``num_envs`` (RLlib's
    ``vector_entry_point``) the native vector env of that many games, else one game; either with
    RLlib's masked observations and the scaled reward."""
    from solitaire_gym.envs import SolitaireVectorEnv
    from solitaire_gym.envs.registration import ENV_IDS
    from solitaire_gym.envs.wrappers import RLlibMaskVectorWrapper, RLlibMaskWrapper

    c = dict(env_config)
    kw = dict(c.get("options") or {}, **c.get("reward", {}))
    scale = float(c.get("reward_scale", 1.0))
    steps = c.get("max_episode_steps")
    if c.get("num_envs") is not None:
        venv = SolitaireVectorEnv(int(c["num_envs"]), c["game"], max_episode_steps=steps, **kw)
        return RLlibMaskVectorWrapper(ScaledRewardVector(venv, scale))
    env_id = next(i for i, (game, _) in ENV_IDS.items() if game == c["game"])
    env = gym.make(env_id, max_episode_steps=steps, **kw)
    return RLlibMaskWrapper(gym.wrappers.TransformReward(env, lambda r: r * scale))


def register() -> None:
    """Register :func:`make_env` as :data:`ENV_NAME` with ``ray.tune.register_env``."""
    from ray.tune import register_env

    register_env(ENV_NAME, make_env)


def env_config(cfg: TrainConfig) -> dict[str, Any]:
    return {
        "game": cfg.game,
        "options": dict(cfg.env_kwargs),
        "max_episode_steps": cfg.max_episode_steps,
        "reward": cfg.env_reward_kwargs,
        "reward_scale": float(cfg.reward_scale),
    }


# ---- the algorithm -------------------------------------------------------------------------------
def build_config(cfg: TrainConfig):
    """RLlib's ``PPOConfig`` for ``cfg`` (new API stack, masked PPO RLModule)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    r, p = cfg.rllib, cfg.ppo
    runners = r["num_env_runners"]
    per_runner = cfg.num_envs
    rollout = p["n_steps"] * per_runner * max(1, runners)
    arch = list(cfg.network["net_arch"])
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(ENV_NAME, env_config=env_config(cfg))
        .framework("torch")
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=per_runner,
            gym_env_vectorize_mode=VECTORIZE[r["vectorize"]],
            rollout_fragment_length=p["n_steps"],
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=rollout,
            minibatch_size=p["batch_size"],
            num_epochs=p["n_epochs"],
            lr=p["learning_rate"],
            gamma=p["gamma"],
            lambda_=p["gae_lambda"],
            clip_param=p["clip_range"],
            entropy_coeff=p["ent_coef"],
            vf_loss_coeff=p["vf_coef"],
            grad_clip=p["max_grad_norm"],
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                model_config={
                    "fcnet_hiddens": arch,
                    "fcnet_activation": cfg.network["activation"],
                    "vf_share_layers": False,
                },
            )
        )
        .callbacks(on_episode_end=_on_episode_end)
        .debugging(seed=cfg.seed)
    )


def _on_episode_end(*, episode, metrics_logger=None, **kwargs) -> None:
    """Each training episode's end: won or not, and its foundation cards (train.csv)."""
    info = episode.get_infos(-1)
    if metrics_logger is not None:
        metrics_logger.log_value("solitaire/won", float(bool(info.get("won"))), reduce="mean")
        metrics_logger.log_value(
            "solitaire/foundation", float(info.get("foundation_cards", 0)), reduce="mean"
        )


# ---- evaluation ----------------------------------------------------------------------------------
class RLlibAgent(Agent):
    """A trained RLlib RLModule as an :class:`~agents.base.Agent`: its masked action logits,
    argmax (``deterministic``) or sampled with the agent's own seed."""

    name = "rllib-ppo"

    def __init__(
        self, module, *, deterministic: bool = False, seed: int = 0, name: str | None = None
    ):
        self.module = module
        self.deterministic = deterministic
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        if name:
            self.name = name

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        import torch

        batch = {
            "obs": {
                "observations": torch.from_numpy(np.ascontiguousarray(obs, np.float32)),
                "action_mask": torch.from_numpy(masks.astype(np.float32)),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"].numpy()
        logits = np.where(masks, logits.astype(np.float64), -np.inf)
        if self.deterministic:
            return logits.argmax(axis=1)
        g = self.rng.gumbel(size=logits.shape)  # Gumbel-max: a sample of softmax(logits)
        return (logits + g).argmax(axis=1)


def save_rllib_weights(
    path: str | Path, module, cfg: TrainConfig, *, num_timesteps: int, extra: dict | None = None
) -> dict[str, Any]:
    """Write the actor of a trained RLlib PPO ``module`` of ``cfg`` (its actor encoder, an MLP
    of ``network.net_arch`` with ``network.activation``, and its ``pi`` head, one Linear layer)
    in the weights-only format of :mod:`agents.ppo_weights`, under the names a MaskablePPO policy
    gives the same layers, and return the record. The file loads without unpickling anything
    and plays the module's distribution (its masked logits' softmax); its samples are drawn as
    :class:`~agents.ppo_weights.PPOWeightsAgent` draws them, not as :class:`RLlibAgent` does. A
    module of another shape raises ``ValueError`` naming what does not fit."""
    import ray
    import torch

    from agents.ppo_weights import activation_class, write_ppo_weights

    act = activation_class(cfg.network["activation"])
    hidden = list(cfg.network["net_arch"])
    encoder = list(module.encoder.actor_encoder.net.mlp)
    head = list(module.pi.net.mlp)
    fits = (
        len(encoder) == 2 * len(hidden)
        and all(type(m) is torch.nn.Linear for m in encoder[::2])
        and all(type(m) is act for m in encoder[1::2])
        and [m.out_features for m in encoder[::2]] == hidden
        and len(head) == 1
        and type(head[0]) is torch.nn.Linear
    )
    if not fits:
        raise ValueError(f"the module's actor is not an MLP of {hidden} with {act.__name__} and "
                         f"one Linear head: {[type(m).__name__ for m in encoder + head]}")  # fmt: skip
    weights = {}
    for k in range(len(hidden)):
        for p in ("weight", "bias"):
            weights[f"mlp_extractor.policy_net.{2 * k}.{p}"] = getattr(encoder[2 * k], p)
    for p in ("weight", "bias"):
        weights[f"action_net.{p}"] = getattr(head[0], p)
    arch = {"net_arch": hidden, "activation": cfg.network["activation"]}
    record = {"algorithm": cfg.algorithm, "config": cfg.name, "reward_mode": cfg.reward_mode,
              "game_id": cfg.game, "options": dict(cfg.env_kwargs)}  # fmt: skip
    return write_ppo_weights(
        path, cfg.game, cfg.env_kwargs, arch, weights,
        obs_dim=(encoder or head)[0].in_features, n_actions=head[0].out_features,
        trained_on=record, num_timesteps=num_timesteps,
        versions={"ray": ray.__version__, "torch": torch.__version__}, extra=extra,
    )  # fmt: skip


# ---- the run -------------------------------------------------------------------------------------
class RLlibRun:
    """One RLlib training run of ``cfg`` in ``out`` (see the module docstring)."""

    def __init__(self, cfg: TrainConfig, out: str | Path, *, progress: bool = True) -> None:
        if cfg.algorithm != "rllib_ppo":
            raise ConfigError(
                f"{cfg.path}: algorithm is {cfg.algorithm!r}; experiments/train_rllib.py trains "
                "'rllib_ppo' configs (experiments/train.py the others)"
            )
        self.cfg = cfg
        self.out = Path(out)
        self.ckpt_dir = self.out / "checkpoints"
        self.progress = progress
        self.timing = {"total": 0.0, "sampling": 0.0, "updates": 0.0, "eval": 0.0,
                       "checkpoints": 0.0}  # fmt: skip
        self.best: tuple[float, float] | None = None
        self.steps = 0
        self.writer = None

    def append_csv(self, name: str, row: dict) -> None:
        path = self.out / name
        new = not path.exists()
        with path.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            if new:
                w.writeheader()
            w.writerow(row)

    def latest_checkpoint(self) -> Path | None:
        found = sorted(p for p in self.ckpt_dir.glob("step_*") if p.is_dir())
        return found[-1] if found else None

    def _check_saved_config(self) -> None:
        check_run_folder(self.out, dict(self.cfg.raw))

    def _scalar(self, tag: str, value: float) -> None:
        if self.writer is not None:
            self.writer.add_scalar(tag, value, self.steps)

    def evaluate(self, algo) -> dict:
        t = time.perf_counter()
        cfg = self.cfg
        module = algo.get_module()
        agent = RLlibAgent(module, deterministic=cfg.deterministic_eval, seed=cfg.seed)
        deals = eval_deals(cfg.eval["deals"], VALIDATION_START)
        res = play_deals(
            agent, cfg.game, cfg.env_kwargs, deals, max_episode_steps=cfg.max_episode_steps
        )
        row = {
            "step": self.steps,
            "deals": len(res),
            "win_rate": float(np.mean([r.won for r in res])),
            "foundation": float(np.mean([r.foundation for r in res])),
            "score": float(np.mean([r.score for r in res])),
            "moves": float(np.mean([r.moves for r in res])),
            "seconds": 0.0,
        }
        dt = time.perf_counter() - t
        row["seconds"] = round(dt, 2)
        self.timing["eval"] += dt
        self.append_csv("eval.csv", row)
        for k in ("win_rate", "foundation", "score", "moves"):
            self._scalar(f"eval/{k}", row[k])
        key = (row["win_rate"], row["foundation"])
        if self.best is None or key > self.best:
            self.best = key
            self._save(algo, self.ckpt_dir / "best")
        return row

    def _save(self, algo, path: Path) -> None:
        t = time.perf_counter()
        tmp = path.with_name(path.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        algo.save_to_path(str(tmp.resolve()))
        shutil.rmtree(path, ignore_errors=True)
        tmp.rename(path)  # a checkpoint is there whole or not at all
        self.timing["checkpoints"] += time.perf_counter() - t

    def save(self, algo) -> Path:
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        path = self.ckpt_dir / f"step_{self.steps:010d}"
        self._save(algo, path)
        self._write_state()
        found = sorted(p for p in self.ckpt_dir.glob("step_*") if p.is_dir())
        for p in stale_checkpoints(found, self.cfg.checkpoint["keep"]):
            shutil.rmtree(p)
        return path

    def _write_state(self) -> None:
        state = {
            "step": self.steps,
            "best": list(self.best) if self.best else None,
            "timing": {k: round(v, 3) for k, v in self.timing.items()},
        }
        (self.out / "state.json").write_text(json.dumps(state, indent=2) + "\n")

    def train(self, *, restart: bool = False, address: str | None = None) -> Path:
        """Train (or continue) until ``total_timesteps``; returns the final checkpoint.
        ``address``: the Ray cluster (see ``solitaire_gym.distributed``; default a local Ray)."""
        from torch.utils.tensorboard import SummaryWriter

        from solitaire_gym.distributed import connect

        cfg = self.cfg
        set_torch_threads(cfg.torch_threads)
        if restart and self.out.exists():
            shutil.rmtree(self.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self._check_saved_config()
        (self.out / "config.yaml").write_text(cfg.to_yaml())
        connect(address)
        register()
        latest = self.latest_checkpoint()
        state_path = self.out / "state.json"
        algo = build_config(cfg).build_algo()
        if latest is not None and state_path.exists():
            st = read_run_state(state_path)
            self.timing.update(st["timing"])
            self.best = tuple(st["best"]) if st.get("best") else None
            self.steps = int(st["step"])
            algo.restore_from_path(str(latest.resolve()))
            print(f"resuming {cfg.name} from {latest} ({self.steps} steps)", flush=True)
        self.writer = SummaryWriter(str(self.out / "tb"))
        every_e, every_c = cfg.eval["every_steps"], cfg.checkpoint["every_steps"]
        next_eval = (self.steps // every_e + 1) * every_e
        next_ckpt = (self.steps // every_c + 1) * every_c
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=cfg.total_timesteps, initial=self.steps, desc=cfg.name, unit="step",
                       dynamic_ncols=True, mininterval=2.0)  # fmt: skip
        last_eval = -1
        try:
            while self.steps < cfg.total_timesteps:
                t0 = time.perf_counter()
                result = algo.train()
                dt = time.perf_counter() - t0
                runners = result.get("env_runners", {})
                new = int(runners.get("num_env_steps_sampled", 0))
                sample_s = float(result.get("timers", {}).get("env_runner_sampling_timer", 0.0))
                self.timing["sampling"] += min(sample_s, dt)
                self.timing["updates"] += dt - min(sample_s, dt)
                self.timing["total"] += dt
                self.steps += new
                if bar is not None:
                    bar.update(new)
                row = {
                    "step": self.steps,
                    "episodes": int(runners.get("num_episodes", 0)),
                    "win_rate": float(runners.get("solitaire/won", float("nan"))),
                    "foundation": float(runners.get("solitaire/foundation", float("nan"))),
                    "return": float(runners.get("episode_return_mean", float("nan"))),
                }
                self.append_csv("train.csv", row)
                for k in ("win_rate", "foundation", "return"):
                    self._scalar(f"train/{k}", row[k])
                if self.steps >= next_eval:
                    self.evaluate(algo)
                    last_eval = self.steps
                    next_eval = (self.steps // every_e + 1) * every_e
                if self.steps >= next_ckpt:
                    self.save(algo)
                    next_ckpt = (self.steps // every_c + 1) * every_c
            if last_eval != self.steps:
                self.evaluate(algo)
            path = self.save(algo)
            self._save(algo, self.ckpt_dir / "final")
            self._write_state()
            (self.out / "timing.json").write_text(json.dumps(self.timing_report(), indent=2) + "\n")
        finally:
            if bar is not None:
                bar.close()
            self.writer.close()
            algo.stop()
        return path

    def timing_report(self) -> dict[str, Any]:
        t = self.timing
        total = max(t["total"] + t["eval"], 1e-9)
        return {
            "seconds": {k: round(v, 2) for k, v in t.items()},
            "share": {
                "sampling (env runners: env steps + policy inference)": round(
                    t["sampling"] / total, 4
                ),
                "updates (learner) and the rest of an iteration": round(t["updates"] / total, 4),
                "periodic evaluation": round(t["eval"] / total, 4),
            },
        }
