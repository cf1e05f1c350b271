"""Training MaskablePPO on ``SB3VecEnv`` from a config (``experiments/train.py`` is its command).

A run writes into one folder::

    config.yaml            the checked config (a resumed run must match it)
    checkpoints/best.zip   the best validation result so far (win rate, then foundation cards)
    checkpoints/best.npz   the same policy as weights only (:mod:`agents.ppo_weights`): it loads
                           without ``trusted=True`` (nothing is unpickled) and plays the same
                           moves; the zip, with the value network and the optimiser, is what
                           training resumes from
    checkpoints/step_*.zip the latest ``checkpoint.keep`` checkpoints (1: the last; ``all``:
                           every one); the run's end is the last of them
    eval.csv               periodic validation: step, win rate, mean foundation cards, score …
    train.csv              training episodes per rollout: win rate, foundation cards, return
    timing.json            where the wall-clock time went (env step, rollouts, updates, eval)
    state.json             the step, the best result and its step, the timing so far
    tb/                    TensorBoard logs (``tb/ppo_1``: SB3's scalars, ``train/*``, ``eval/*``)

Each validation is printed as it is made; :meth:`TrainRun.summary` names the best checkpoint,
its weights-only ``best.npz`` and the last checkpoint. The network trains on the device the run is given (:mod:`agents.torch_setup`).
Running the same command again continues from the latest checkpoint until ``total_timesteps``.
"""

from __future__ import annotations

import csv
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from agents.config import (
    TrainConfig,
    check_run_folder,
    read_run_state,
    remove_run_folder,
    stale_checkpoints,
)
from agents.learned import SB3Agent, env_signature
from agents.play import VALIDATION_START, eval_deals, play_deals
from agents.ppo_weights import activation_class, save_ppo_weights
from agents.torch_setup import AUTO, resolve_device
from solitaire_gym.engine.threads import set_torch_threads
from solitaire_gym.envs.sb3 import SB3VecEnv
from solitaire_gym.errors import is_int
from solitaire_gym.files import atomic_path


# ---- env wrappers --------------------------------------------------------------------------------
class TimedVecEnv(VecEnvWrapper):
    """Counts the seconds spent inside the wrapped env's ``reset`` and ``step_wait``."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.seconds = 0.0
        self.steps = 0

    def reset(self):
        t = time.perf_counter()
        obs = self.venv.reset()
        self.seconds += time.perf_counter() - t
        return obs

    def step_wait(self):
        t = time.perf_counter()
        out = self.venv.step_wait()
        self.seconds += time.perf_counter() - t
        self.steps += 1
        return out

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()


class TrainingReward(VecEnvWrapper):
    """The env's reward (``foundation`` included: the compiled step computes it from the engine,
    see ``SolitaireEnv``) scaled by ``reward_scale``; each ended episode's ``episode["r"]``
    becomes the scaled training return. The cards on the foundations at an episode's end come
    from the env's ``info["foundation_cards"]``, never from the observation."""

    def __init__(self, venv: VecEnv, scale: float, *, gamma: float | None = None,
                 cards=None) -> None:  # fmt: skip
        super().__init__(venv)
        self.scale = float(scale)
        self.ret = np.zeros(self.num_envs, np.float64)
        # potential shaping (config ``shaping: potential``): add (gamma - 1) * Phi(s'), Phi(s')
        # the cards home after the move (an ended game's from its info); cards() reads them
        self.gamma, self.cards = gamma, cards

    def reset(self):
        obs = self.venv.reset()
        self.ret[:] = 0
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        if self.gamma is not None:
            phi = self.cards().astype(np.float64)
            for i in np.flatnonzero(dones).tolist():
                phi[i] = infos[i]["foundation_cards"]
            rewards = (rewards + (self.gamma - 1.0) * phi).astype(np.float32)
        rewards = rewards * np.float32(self.scale)
        self.ret += rewards
        for i in np.flatnonzero(dones).tolist():
            if "episode" in infos[i]:
                infos[i]["episode"] = dict(infos[i]["episode"], r=float(self.ret[i]))
            self.ret[i] = 0
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()


def make_train_env(cfg: TrainConfig, seed: int | None = None) -> tuple[VecEnv, TimedVecEnv]:
    """The training env of ``cfg``: ``SB3VecEnv`` (training split), timed, with its reward."""
    raw = SB3VecEnv(
        cfg.game,
        num_envs=cfg.num_envs,
        max_episode_steps=cfg.max_episode_steps,
        seed=cfg.seed if seed is None else seed,
        torch_threads=None,  # TrainRun.train sets cfg.torch_threads
        **cfg.env_reward_kwargs,
        deals=cfg.deals,
        **cfg.env_kwargs,
    )
    timed = TimedVecEnv(raw)
    potential = cfg.raw["shaping"] == "potential" and cfg.reward_mode == "foundation"
    env = TrainingReward(timed, cfg.reward_scale, gamma=cfg.ppo["gamma"] if potential else None,
                         cards=raw.foundation_cards)  # fmt: skip
    return env, timed


def build_model(cfg: TrainConfig, env: VecEnv, tb_dir: str | None, device: str = "cpu"):
    """A new MaskablePPO of ``cfg`` on ``env``, on ``device`` (a torch device, as
    :func:`agents.torch_setup.resolve_device` returns), logging to TensorBoard in ``tb_dir``."""
    from sb3_contrib import MaskablePPO

    from agents.masked_policy import LeanMaskablePolicy

    arch = list(cfg.network["net_arch"])
    act = activation_class(cfg.network["activation"])
    p = cfg.ppo
    model = MaskablePPO(
        LeanMaskablePolicy if p["policy"] == "lean" else "MlpPolicy",
        env,
        n_steps=p["n_steps"],
        batch_size=p["batch_size"],
        n_epochs=p["n_epochs"],
        learning_rate=p["learning_rate"],
        gamma=p["gamma"],
        gae_lambda=p["gae_lambda"],
        clip_range=p["clip_range"],
        ent_coef=p["ent_coef"],
        vf_coef=p["vf_coef"],
        max_grad_norm=p["max_grad_norm"],
        policy_kwargs={"net_arch": {"pi": arch, "vf": arch}, "activation_fn": act},
        tensorboard_log=tb_dir,
        seed=cfg.seed,
        device=device,
        verbose=0,
    )
    model.solitaire_gym = checkpoint_meta(cfg)
    return model


def planned_end(cfg: TrainConfig, start: int) -> int:
    """The step a run of ``cfg`` that is at ``start`` stops at: stable-baselines3 collects whole
    rollouts (``ppo.n_steps`` × ``num_envs`` steps) until ``total_timesteps`` is reached."""
    rollout = cfg.ppo["n_steps"] * cfg.num_envs
    remaining = cfg.total_timesteps - start
    return start + math.ceil(remaining / rollout) * rollout if remaining > 0 else start


def checkpoint_meta(cfg: TrainConfig) -> dict[str, Any]:
    meta = env_signature(cfg.game, cfg.env_kwargs)
    meta.update(
        options=dict(cfg.env_kwargs),
        game_id=cfg.game,
        config=cfg.name,
        reward_mode=cfg.reward_mode,
    )
    return meta


# ---- callbacks -----------------------------------------------------------------------------------
class ProgressBar(BaseCallback):
    """A tqdm bar over the run's timesteps, from ``start`` to ``total``."""

    def __init__(self, total: int, start: int, desc: str) -> None:
        super().__init__()
        self.total, self.start, self.desc = total, start, desc
        self.bar = None

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=self.total, initial=self.start, desc=self.desc, unit="step",
                        dynamic_ncols=True, mininterval=2.0)  # fmt: skip

    def _on_step(self) -> bool:
        self.bar.update(self.training_env.num_envs)
        return True

    def _on_training_end(self) -> None:
        self.bar.close()
        self.bar = None

    def write(self, line: str) -> bool:
        """Print ``line`` above the bar; False (nothing printed) when the bar is not shown."""
        if self.bar is None:
            return False
        self.bar.write(line)
        return True


class RunMonitor(BaseCallback):
    """Timing, training-episode statistics, periodic validation and checkpoints."""

    def __init__(self, run: TrainRun) -> None:
        super().__init__()
        self.run = run
        self.won: list[bool] = []
        self.found: list[int] = []
        self.returns: list[float] = []
        self.rollout_t0 = 0.0
        self.side0 = 0.0

    def _on_rollout_start(self) -> None:
        self.rollout_t0 = time.perf_counter()
        self.side0 = self.run.timing["eval"] + self.run.timing["checkpoints"]

    def _on_rollout_end(self) -> None:
        side = self.run.timing["eval"] + self.run.timing["checkpoints"] - self.side0
        self.run.timing["rollouts"] += time.perf_counter() - self.rollout_t0 - side
        if self.won:
            row = {
                "step": self.num_timesteps,
                "episodes": len(self.won),
                "win_rate": float(np.mean(self.won)),
                "foundation": float(np.mean(self.found)),
                "return": float(np.mean(self.returns)),
            }
            self.logger.record("train/win_rate", row["win_rate"])
            self.logger.record("train/foundation", row["foundation"])
            self.run.append_csv("train.csv", row)
            self.won, self.found, self.returns = [], [], []

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", ()):
            if "terminal_observation" in info:
                self.won.append(bool(info.get("won")))
                self.found.append(int(info["foundation_cards"]))
                self.returns.append(float(info.get("episode", {}).get("r", 0.0)))
        run = self.run
        if self.num_timesteps >= run.next_eval:
            run.evaluate(self.model, self.logger)
            run.next_eval = (self.num_timesteps // run.cfg.eval["every_steps"] + 1) * run.cfg.eval[
                "every_steps"
            ]
        if self.num_timesteps >= run.next_ckpt:
            run.save(self.model)
            every = run.cfg.checkpoint["every_steps"]
            run.next_ckpt = (self.num_timesteps // every + 1) * every
        return True


# ---- the run -------------------------------------------------------------------------------------
class TrainRun:
    """One training run of ``cfg`` in ``out`` (see the module docstring)."""

    def __init__(
        self, cfg: TrainConfig, out: str | Path, *, progress: bool = True, device: str = AUTO
    ) -> None:
        """``device``: where the network trains (:func:`agents.torch_setup.resolve_device`; a bad
        name or a missing CUDA device is refused here, before anything is written)."""
        self.cfg = cfg
        self.device = resolve_device(device)
        self.out = Path(out)
        self.ckpt_dir = self.out / "checkpoints"
        self.progress = progress
        self.timing = {"total": 0.0, "env": 0.0, "rollouts": 0.0, "eval": 0.0, "checkpoints": 0.0}
        self.best: tuple[float, float] | None = None
        self.best_step: int | None = None
        self.last_row: dict | None = None
        self.last_path: Path | None = None
        self.bar: ProgressBar | None = None
        self.next_eval = 0
        self.next_ckpt = 0
        self.timed: TimedVecEnv | None = None
        self.last_eval_step = -1
        self.session_t0: float | None = None

    # files
    def append_csv(self, name: str, row: dict) -> None:
        path = self.out / name
        new = not path.exists()
        with path.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            if new:
                w.writeheader()
            w.writerow(row)

    def latest_checkpoint(self) -> Path | None:
        found = sorted(self.ckpt_dir.glob("step_*.zip"))
        return found[-1] if found else None

    def _check_saved_config(self) -> None:
        check_run_folder(self.out, dict(self.cfg.raw))

    def say(self, line: str) -> None:
        """Print ``line``, above the progress bar while it is shown."""
        if self.bar is None or not self.bar.write(line):
            print(line, flush=True)

    def _save_zip(self, model, path: Path) -> None:
        with atomic_path(path) as tmp:  # a checkpoint is there whole or not at all
            model.save(tmp)

    # evaluation and checkpoints
    def evaluate(self, model, logger=None) -> dict:
        t = time.perf_counter()
        cfg = self.cfg
        agent = SB3Agent(model, name="ppo", deterministic=cfg.deterministic_eval, seed=cfg.seed)
        deals = eval_deals(cfg.eval["deals"], VALIDATION_START)
        res = play_deals(
            agent, cfg.game, cfg.env_kwargs, deals, max_episode_steps=cfg.max_episode_steps
        )
        row = {
            "step": int(model.num_timesteps),
            "deals": len(res),
            "win_rate": float(np.mean([r.won for r in res])),
            "foundation": float(np.mean([r.foundation for r in res])),
            "score": float(np.mean([r.score for r in res])),
            "moves": float(np.mean([r.moves for r in res])),
            "seconds": 0.0,
        }
        dt = time.perf_counter() - t
        row["seconds"] = round(dt, 2)
        self.last_eval_step = row["step"]
        self.timing["eval"] += dt
        self.append_csv("eval.csv", row)
        if logger is not None:
            for k in ("win_rate", "foundation", "score", "moves"):
                logger.record(f"eval/{k}", row[k])
        key = (row["win_rate"], row["foundation"])
        better = self.best is None or key > self.best
        if better:
            self.best, self.best_step = key, row["step"]
            self._save_zip(model, self.ckpt_dir / "best.zip")
            validation = {k: row[k] for k in ("step", "deals", "win_rate", "foundation", "score")}
            save_ppo_weights(self.ckpt_dir / "best.npz", model, extra={"validation": validation})
        self.last_row = row
        self.say(
            f"{cfg.name} step {row['step']:,}: validation win rate {row['win_rate']:.1%} of "
            f"{row['deals']} deals, {row['foundation']:.1f} cards home"
            + (" (best so far)" if better else "")
        )
        return row

    def save(self, model) -> Path:
        t = time.perf_counter()
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        path = self.ckpt_dir / f"step_{model.num_timesteps:010d}.zip"
        self._save_zip(model, path)
        self._write_state(model)
        found = sorted(self.ckpt_dir.glob("step_*.zip"))
        for p in stale_checkpoints(found, self.cfg.checkpoint["keep"]):
            p.unlink()
        self.timing["checkpoints"] += time.perf_counter() - t
        self.last_path = path
        return path

    def _write_state(self, model) -> None:
        t = dict(self.timing)
        if self.timed is not None:
            t["env"] = self.timing["env"] + self.timed.seconds
        if self.session_t0 is not None:  # a run in progress: its time so far
            t["total"] = self.timing["total"] + time.perf_counter() - self.session_t0
        state = {
            "step": int(model.num_timesteps),
            "best": list(self.best) if self.best else None,
            "best_step": self.best_step,
            "timing": {k: round(v, 3) for k, v in t.items()},
        }
        (self.out / "state.json").write_text(json.dumps(state, indent=2) + "\n")

    # main
    def train(self, *, restart: bool = False) -> Path:
        """Train (or continue) until ``total_timesteps``; returns the last checkpoint."""
        from sb3_contrib import MaskablePPO

        cfg = self.cfg
        set_torch_threads(cfg.torch_threads)
        if restart:
            remove_run_folder(self.out)  # only a folder that holds a run, nothing else
        self.out.mkdir(parents=True, exist_ok=True)
        self._check_saved_config()
        (self.out / "config.yaml").write_text(cfg.to_yaml())
        latest = self.latest_checkpoint()
        state_path = self.out / "state.json"
        start = 0
        if latest is not None and state_path.exists():
            st = read_run_state(state_path)
            self.timing.update(st["timing"])
            self.best = tuple(st["best"]) if st.get("best") else None
            step = st.get("best_step")
            self.best_step = int(step) if is_int(step) and step >= 0 else None
            start = int(latest.stem.split("_")[1])
        env, self.timed = make_train_env(cfg, seed=cfg.seed + start)
        tb = str(self.out / "tb")
        if latest is not None:
            model = MaskablePPO.load(latest, env=env, device=self.device, tensorboard_log=tb)
            model.solitaire_gym = checkpoint_meta(cfg)
            print(f"resuming {cfg.name} from {latest} ({model.num_timesteps} steps)", flush=True)
        else:
            model = build_model(cfg, env, tb, self.device)
        every_e, every_c = cfg.eval["every_steps"], cfg.checkpoint["every_steps"]
        self.next_eval = (model.num_timesteps // every_e + 1) * every_e
        self.next_ckpt = (model.num_timesteps // every_c + 1) * every_c
        remaining = cfg.total_timesteps - model.num_timesteps
        end = planned_end(cfg, model.num_timesteps)
        if remaining > 0 and end != cfg.total_timesteps:
            print(f"{cfg.name}: total_timesteps {cfg.total_timesteps:,} runs to {end:,}, in "
                  f"whole rollouts of ppo.n_steps {cfg.ppo['n_steps']} × num_envs "
                  f"{cfg.num_envs}", flush=True)  # fmt: skip
        env_before = self.timing["env"]
        t0 = self.session_t0 = time.perf_counter()
        if remaining > 0:
            callbacks: list[BaseCallback] = [RunMonitor(self)]
            if self.progress:
                self.bar = ProgressBar(end, model.num_timesteps, cfg.name)
                callbacks.append(self.bar)
            try:
                model.learn(
                    remaining,
                    callback=callbacks,
                    reset_num_timesteps=latest is None,
                    tb_log_name="ppo",
                )
            finally:
                self.bar = None
        self.timing["total"] += time.perf_counter() - t0
        self.session_t0 = None
        self.timing["env"] = env_before + self.timed.seconds
        self.timed.seconds = 0.0
        if self.last_eval_step != model.num_timesteps:
            final_eval = self.evaluate(model)
            self.timing["total"] += final_eval["seconds"]
        path = self.save(model)
        self._write_state(model)  # with the last checkpoint's time
        (self.out / "timing.json").write_text(json.dumps(self.timing_report(), indent=2) + "\n")
        return path

    def summary(self) -> str:
        """The run's outcome in a few lines: the last validation, the best checkpoint (its step
        and validation result) and its weights-only ``best.npz``, and the last checkpoint."""
        cfg = self.cfg
        lines = []
        if self.last_row is not None:
            r = self.last_row
            lines.append(f"validation at step {r['step']:,}: win rate {r['win_rate']:.1%} of "
                         f"{r['deals']} deals, {r['foundation']:.1f} cards home")  # fmt: skip
        best = self.ckpt_dir / "best.zip"
        if self.best is not None and best.exists():
            at = f"step {self.best_step:,}: " if self.best_step is not None else ""
            lines.append(f"best checkpoint: {best} ({at}validation win rate {self.best[0]:.1%} "
                         f"of {cfg.eval['deals']} deals, {self.best[1]:.1f} cards home)")  # fmt: skip
            weights = self.ckpt_dir / "best.npz"
            if weights.exists():
                lines.append(f"best policy, weights only: {weights} (loads without trusted=True)")
        if self.last_path is not None:
            lines.append(f"last checkpoint: {self.last_path}")
        return "\n".join(lines)

    def timing_report(self) -> dict[str, Any]:
        t = self.timing
        total = max(t["total"], 1e-9)
        updates = t["total"] - t["rollouts"] - t["eval"] - t["checkpoints"]
        return {
            "seconds": {k: round(v, 2) for k, v in t.items()} | {"updates": round(updates, 2)},
            "share": {
                "env_step (SB3VecEnv.reset + step_wait)": round(t["env"] / total, 4),
                "rollouts (policy inference + env + buffer)": round(t["rollouts"] / total, 4),
                "updates (gradient steps)": round(updates / total, 4),
                "periodic evaluation": round(t["eval"] / total, 4),
                "checkpoints": round(t["checkpoints"] / total, 4),
            },
        }
