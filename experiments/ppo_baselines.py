"""MaskablePPO from scratch on five variants, three seeds each: run the trainings, then collect
the learning curves, the final checkpoints and the table.

    python experiments/ppo_baselines.py run --jobs 2              # resumable; logs per run
    python experiments/ppo_baselines.py collect                  # curves, checkpoints, README

``run`` trains every (variant, seed) of :data:`CONFIGS` and :data:`SEEDS` not yet finished with
``experiments/train.py <config> --seed <seed> --out <runs>/<variant>/seed<seed>`` (the config's
``total_timesteps``, ``num_envs`` and ``torch_threads`` as committed), ``--jobs`` at a time, each
with one numba thread (``NUMBA_NUM_THREADS=1``); each run's output goes to ``<run>.log``. Running it
again continues the unfinished runs from their last checkpoint (``experiments/train.py`` resumes).

``collect`` reads the runs' ``eval.csv`` (validation every ``eval.every_steps`` on the
validation deals), ``tb/`` (when each validation was logged) and ``state.json``, and writes
into ``experiments/results/ppo_curves/``: one ``<variant>.csv`` (every seed's curve: env steps,
seconds since the run's start, win rate, cards home), one ``<variant>.png`` (win rate and cards
home against env steps, each seed and the mean), ``table.md`` (each seed's final and best
validation, cards home, wall seconds, the command) and ``README.md`` (the table and the
commands); and the final policy of the first seed as weights only (:mod:`agents.ppo_weights`)
into ``agents/checkpoints/ppo/<variant>.npz`` (an RLlib curve's: ``<curve>.npz`` beside its CSV).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONFIGS = {
    "SH1-C4": "configs/seahaven_c4.yaml",
    "TF1-D1N": "configs/reflechi_d1.yaml",
    "TF1-D3N": "configs/reflechi_d3.yaml",
    "DS1-D1N": "configs/double_d1n.yaml",
    "DS1-D3N": "configs/double_d3n.yaml",
    "SH1-C4-rllib": "configs/rllib_seahaven_c4.yaml",
}
"""The curves (a variant, or a variant and ``-rllib`` for RLlib's PPO) and the config that trains
each: MaskablePPO with ``experiments/train.py``, RLlib's PPO (``algorithm: rllib_ppo``) with
``experiments/train_rllib.py``."""
RLLIB = "-rllib"
SEEDS = (0, 1, 2)
RUNS_DIR = Path("runs/ppo")
OUT_DIR = Path("experiments/results/ppo_curves")


def run_command(variant: str, seed: int, runs: Path) -> list[str]:
    """The command that trains curve ``variant`` with ``seed`` into ``runs/<variant>/seed<seed>``."""
    script = "train_rllib.py" if variant.endswith(RLLIB) else "train.py"
    return [sys.executable, f"experiments/{script}", CONFIGS[variant], "--seed", str(seed),
            "--out", str(runs / variant / f"seed{seed}"), "--no-progress"]  # fmt: skip


def shown_command(variant: str, seed: int, runs: Path = RUNS_DIR) -> str:
    """:func:`run_command` as a user types it, with its thread setting."""
    args = ["python", *run_command(variant, seed, runs)[1:-1]]
    return "NUMBA_NUM_THREADS=1 " + " ".join(args)


def finished(run: Path, total: int) -> bool:
    """Whether the run folder ``run`` has reached ``total`` env steps (its ``state.json``, read
    as the trainers read it; none, or one that is not a run state, is not finished)."""
    from agents.config import ConfigError, read_run_state

    try:
        return read_run_state(run / "state.json")["step"] >= total
    except ConfigError:
        return False


def _total(variant: str) -> int:
    from agents.config import load_config

    return load_config(ROOT / CONFIGS[variant]).total_timesteps


def cmd_run(args) -> int:
    runs = Path(args.runs)
    todo = [(v, s) for s in args.seeds for v in args.variants
            if not finished(runs / v / f"seed{s}", _total(v))]  # fmt: skip
    print(f"{len(todo)} runs to train, {args.jobs} at a time", flush=True)
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    active: list[tuple[subprocess.Popen, str, float]] = []
    failed = 0
    while todo or active:
        while todo and len(active) < args.jobs:
            v, s = todo.pop(0)
            log = runs / v / f"seed{s}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "a") as fh:
                proc = subprocess.Popen(run_command(v, s, runs), cwd=ROOT, env=env,
                                        stdout=fh, stderr=subprocess.STDOUT)  # fmt: skip
            active.append((proc, f"{v} seed {s}", time.time()))
            print(f"started {v} seed {s} (log {log})", flush=True)
        time.sleep(2)
        for item in list(active):
            proc, name, t0 = item
            if proc.poll() is not None:
                active.remove(item)
                ok = proc.returncode == 0
                failed += not ok
                print(f"{'finished' if ok else 'FAILED'} {name} in {time.time() - t0:.0f} s",
                      flush=True)  # fmt: skip
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="train the runs not yet finished")
    r.add_argument("--jobs", type=int, default=1, help="runs at once (one core each)")
    c = sub.add_parser("collect", help="curves, checkpoints and README from the runs")
    c.add_argument("--out", default=str(OUT_DIR))
    for p in (r, c):
        p.add_argument("--runs", default=str(RUNS_DIR), help="the runs' folder")
        p.add_argument(
            "--variants",
            default=",".join(v for v in CONFIGS if not v.endswith(RLLIB)),
            help=f"curves, of {', '.join(CONFIGS)} (default: the MaskablePPO ones)",
        )
        p.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    args = ap.parse_args(argv)
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in args.variants if v not in CONFIGS]
    if unknown:
        ap.error(f"unknown variant {unknown[0]!r}: one of {', '.join(CONFIGS)}")
    try:
        args.seeds = [int(s) for s in args.seeds.split(",") if s]
    except ValueError:
        ap.error(f"--seeds must be integers separated by commas, not {args.seeds!r}")
    if args.cmd == "run":
        if not 1 <= args.jobs <= 64:
            ap.error("--jobs must be in 1 … 64")
        return cmd_run(args)
    return cmd_collect(args)


CHECKPOINTS = ROOT / "agents" / "checkpoints" / "ppo"
"""Where ``collect`` puts each variant's final seed-0 policy (weights only)."""
CURVE_FIELDS = ("seed", "step", "elapsed_s", "win_rate", "foundation", "deals")


def _eval_wall_times(run: Path) -> list[tuple[int, float]]:
    """(step, seconds from the run's start) of each ``eval/win_rate`` scalar TensorBoard wrote
    (with the next rollout's scalars, so at the step of that dump; a resumed run's pause is left
    out)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: list[tuple[int, float]] = []
    offset = 0.0
    # train.py: one folder per session (tb/ppo_1, ppo_2 …); train_rllib.py: tb/ itself
    folders = sorted((run / "tb").glob("ppo_*"), key=lambda p: int(p.name.split("_")[1]))
    for folder in folders or [run / "tb"]:
        acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        acc.Reload()
        start = acc.FirstEventTimestamp()
        tags = acc.Tags()["scalars"]
        events = acc.Scalars("eval/win_rate") if "eval/win_rate" in tags else []
        out += [(e.step, offset + e.wall_time - start) for e in events]
        ends = [e.wall_time for t in tags for e in acc.Scalars(t)]
        offset += max([start, *ends]) - start
    return out


def read_curve(run: Path, seed: int) -> list[dict]:
    """One run's validations (``eval.csv``) with the seconds since its start at each: when
    TensorBoard wrote it (at most one rollout later); a validation made after training ended,
    never written there, at the run's end (``state.json``)."""
    from agents.config import read_run_state

    with open(run / "eval.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    state = read_run_state(run / "state.json")
    logged = _eval_wall_times(run)
    if len(logged) > len(rows) or any(
        s < int(r["step"]) for (s, _), r in zip(logged, rows, strict=False)
    ):
        raise SystemExit(f"{run}: eval.csv and tb/ do not hold the same validations")
    walls = [w for _, w in logged] + [float(state["timing"]["total"])] * (len(rows) - len(logged))
    return [{"seed": seed, "step": int(r["step"]), "elapsed_s": round(w, 1),
             "win_rate": float(r["win_rate"]), "foundation": float(r["foundation"]),
             "deals": int(r["deals"])} for r, w in zip(rows, walls, strict=True)]  # fmt: skip


SUMMARY = ROOT / "experiments" / "results" / "summary" / "results.json"


def plot_curves(variant: str, curves: dict[int, list[dict]], path: Path) -> None:
    """Win rate and cards home against env steps: each seed thin, their mean thick, and greedy's
    figures on the evaluation deals (``summary/``) as a dashed line where they are committed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, label, scale in ((axes[0], "win_rate", "validation win rate (%)", 100),
                                  (axes[1], "foundation", "cards home (mean)", 1)):  # fmt: skip
        for seed, rows in sorted(curves.items()):
            ax.plot([r["step"] for r in rows], [scale * r[key] for r in rows], lw=0.9,
                    alpha=0.6, label=f"seed {seed}")  # fmt: skip
        n = min(len(rows) for rows in curves.values())
        steps = [curves[min(curves)][i]["step"] for i in range(n)]
        mean = [scale * sum(c[i][key] for c in curves.values()) / len(curves) for i in range(n)]
        ax.plot(steps, mean, lw=2.2, color="black", label="mean")
        greedy = _greedy(variant.removesuffix(RLLIB))
        if greedy is not None:
            value = scale * greedy["win_rate" if key == "win_rate" else "mean_foundation"]
            ax.axhline(value, ls="--", color="grey", label="greedy (evaluation deals)")
        ax.set_xlabel("env steps")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    algorithm = "RLlib's PPO" if variant.endswith(RLLIB) else "MaskablePPO"
    fig.suptitle(f"{algorithm} from scratch, {variant} ({len(curves)} seeds; validation deals)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _greedy(variant: str) -> dict | None:
    """Greedy's committed summary on ``variant``'s evaluation deals, if there is one."""
    try:
        return json.loads(SUMMARY.read_text(encoding="utf-8"))["summaries"][variant]["greedy"]
    except (OSError, ValueError, KeyError):
        return None


def _provenance(variant: str, seed: int, step: int, last: dict) -> dict:
    """What an exported policy's record says of where it comes from: the command, the step,
    ``last`` (the run's last validation, a row of :func:`read_curve`)."""
    return {"trained_by": shown_command(variant, seed),
            "final": {"step": int(step), "validation": last}}  # fmt: skip


def export_final(variant: str, run: Path, seed: int, last: dict, path: Path) -> dict:
    """The run's last checkpoint's policy as weights only at ``path``, its record with
    :func:`_provenance`. Loads our own zip (``trusted``: it is the run's)."""
    from sb3_contrib import MaskablePPO

    from agents.ppo_weights import save_ppo_weights

    zips = sorted((run / "checkpoints").glob("step_*.zip"))
    if not zips:
        raise SystemExit(f"{run}: no step checkpoint")
    model = MaskablePPO.load(zips[-1], device="cpu")
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = _provenance(variant, seed, model.num_timesteps, last)
    return save_ppo_weights(path, model, extra=extra)


RLLIB_MODULE = Path("checkpoints/final/learner_group/learner/rl_module/default_policy")
"""Where an RLlib run keeps its final module (under the run's folder)."""


def export_final_rllib(variant: str, run: Path, seed: int, last: dict, path: Path) -> dict:
    """The RLlib run's final module's actor as weights only at ``path``
    (:func:`agents.rllib_training.save_rllib_weights`), its record with :func:`_provenance`.
    Loads our own checkpoint (it is the run's)."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    from agents.config import load_config, read_run_state
    from agents.rllib_training import save_rllib_weights

    module = RLModule.from_checkpoint((run / RLLIB_MODULE).resolve())
    step = read_run_state(run / "state.json")["step"]
    cfg = load_config(ROOT / CONFIGS[variant])
    extra = _provenance(variant, seed, step, last)
    return save_rllib_weights(path, module, cfg, num_timesteps=step, extra=extra)


def seeds_and_mean(values: list[float]) -> str:
    """``3.5 / 4.0 / 6.0 (4.5)``: each seed's figure, then their mean."""
    return " / ".join(f"{x:.1f}" for x in values) + f" ({sum(values) / len(values):.1f})"


README = """# PPO from scratch: learning curves

MaskablePPO on five variants and RLlib's PPO on SH1-C4 (`SH1-C4-rllib`), three seeds each; 1M
env steps a run, the committed configs (`configs/seahaven_c4.yaml`, `reflechi_d1.yaml`,
`reflechi_d3.yaml`, `double_d1n.yaml`, `double_d3n.yaml`, `rllib_seahaven_c4.yaml`: the
`foundation` reward, 128 envs, minibatches of 4,096). Each run validates on 200 validation
deals (`2^19 …`) every 100,000 steps and at its end, sampling its moves. The files:
`<curve>.csv` (every validation of every seed: `elapsed_s` is the seconds since the run started,
as TensorBoard logged it), `<curve>.png` (each seed, their mean and greedy's figure on the
evaluation deals). The MaskablePPO runs went two at a time on a 2-core machine (load average
2-3), as did the RLlib runs of seeds 1 and 2 (seed 0 ran alone; each run is a driver and one env
runner), so the wall seconds are under that load. Each variant's final seed-0 MaskablePPO policy
is `agents/checkpoints/ppo/<variant>.npz` (weights only), the player `ppo`; its games on
evaluation deals 0 … 999 are in `../ppo/`. The RLlib run's final seed-0 actor is
`SH1-C4-rllib.npz` here, in the same format (`evaluate.py --checkpoint` plays it).

{table}
Made by:

```bash
python experiments/ppo_baselines.py run --jobs 2      # the 15 MaskablePPO runs
python experiments/ppo_baselines.py run --variants SH1-C4-rllib --seeds 0,1,2 --jobs 2   # RLlib
python experiments/ppo_baselines.py collect --variants SH1-C4,TF1-D1N,TF1-D3N,DS1-D1N,DS1-D3N,SH1-C4-rllib
```
"""


def cmd_collect(args) -> int:
    runs, out = Path(args.runs), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for variant in args.variants:
        total = _total(variant)
        done = {s: runs / variant / f"seed{s}" for s in args.seeds}
        missing = [s for s, r in done.items() if not finished(r, total)]
        if missing:
            print(f"{variant}: seeds {missing} not finished; left out", flush=True)
        done = {s: r for s, r in done.items() if s not in missing}
        if not done:
            continue
        curves = {s: read_curve(r, s) for s, r in done.items()}
        with open(out / f"{variant}.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=CURVE_FIELDS, lineterminator="\n")
            w.writeheader()
            for s in sorted(curves):
                w.writerows(curves[s])
        plot_curves(variant, curves, out / f"{variant}.png")
        first = min(done)
        if variant.endswith(RLLIB):
            export_final_rllib(variant, done[first], first, curves[first][-1],
                               out / f"{variant}.npz")  # fmt: skip
        else:
            export_final(variant, done[first], first, curves[first][-1],
                         CHECKPOINTS / f"{variant}.npz")  # fmt: skip
        finals = [curves[s][-1] for s in sorted(curves)]
        wins = [100 * f["win_rate"] for f in finals]
        best = [max(100 * r["win_rate"] for r in curves[s]) for s in sorted(curves)]
        cards = [f["foundation"] for f in finals]
        seconds = [f["elapsed_s"] for f in finals]
        lines.append(
            f"| {variant} | {', '.join(map(str, sorted(done)))} | {finals[0]['step']:,} | "
            f"{seeds_and_mean(wins)} | "
            f"{seeds_and_mean(best)} | {seeds_and_mean(cards)} | {min(seconds):.0f}–"
            f"{max(seconds):.0f} | `{shown_command(variant, min(done))}` |"
        )
        print(f"{variant}: {len(curves)} seeds collected", flush=True)
    table = (
        "| curve | seeds | env steps | final validation win rate %, each seed (mean) | best "
        "validation win rate %, each seed (mean) | final cards home (mean) | wall s per run | "
        "command (the first seed; --seed N for the others) |\n"
        "|---|---|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n"
    )
    (out / "table.md").write_text(table, encoding="utf-8")
    (out / "README.md").write_text(README.format(table=table), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
