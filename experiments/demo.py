"""The main job (``make demo``): a short, complete run on Seahaven Towers with 4 free cells.

1. trains a small MaskablePPO (``configs/demo_seahaven_c4.yaml``, 300k steps);
2. evaluates random, greedy, the trained PPO and the solver on held-out deals (evaluation
   split, deals 0 … n−1), prints the table, saves the win-rate plot and the learning curve;
3. saves a playthrough of the trained agent (its best game of the first 50 deals: a win if it
   has one) as a trace file, and renders it to GIF and HTML
   when the ``solitaire-gym render`` command is there.

Everything goes to ``--out`` (default ``runs/demo/``)::

    train/       the training run (checkpoints, TensorBoard logs, eval.csv, timing.json)
    eval/        results.md, results.json, episodes.csv, win_rates.png, learning_curves.png
    playthrough.json / .gif / .html   one game of the trained agent
"""

from __future__ import annotations

import os

# numba's and torch's OpenMP threads spin-wait between calls by default; when the env kernels and
# the policy take turns in one process on few cores, that spinning starves the other side (10x
# slower evaluation measured on 2 cores). Set before numba or torch start their threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

import evaluate  # noqa: E402  (experiments/evaluate.py)

from agents.config import check_config, load_config  # noqa: E402
from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402
from agents.training import TrainRun  # noqa: E402


def render(trace: Path) -> list[Path]:
    """Render ``trace`` with ``solitaire-gym render`` if that command exists."""
    try:
        from solitaire_gym.commands import render as _  # noqa: F401
    except ImportError:
        print("(no solitaire-gym render command yet: the trace is not rendered)")
        return []
    gif, html = trace.with_suffix(".gif"), trace.with_suffix(".html")
    cmd = [sys.executable, "-m", "solitaire_gym.cli", "render", str(trace), "--gif", str(gif),
           "--html", str(html)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"(render failed: {done.stderr.strip() or done.stdout.strip()})")
        return []
    return [p for p in (gif, html) if p.exists()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    p.add_argument("--config", default=str(ROOT / "configs" / "demo_seahaven_c4.yaml"))
    p.add_argument("--timesteps", type=int, help="override the config's total_timesteps")
    p.add_argument("--deals", type=int, default=200, help="evaluation deals (default 200)")
    args = p.parse_args(argv)
    out = Path(args.out)
    t0 = time.time()

    cfg = load_config(args.config)
    if args.timesteps:
        cfg = check_config(dict(cfg.raw, total_timesteps=args.timesteps), cfg.path)
    print(f"== 1. training MaskablePPO on Seahaven Towers (4 cells), {cfg.total_timesteps} steps")
    run = TrainRun(cfg, out / "train")
    ckpt = run.train(restart=True)
    share = run.timing_report()["share"]
    print(f"   checkpoint {ckpt}; time in the env: "
          f"{100 * share['env_step (SB3VecEnv.reset + step_wait)']:.0f}% of training")  # fmt: skip

    print(f"\n== 2. evaluating random, greedy, PPO and solver on {args.deals} held-out deals")
    evaluate.main([
        "--policies", "random,greedy,solver", "--ppo", str(ckpt), "--variants", "SH1-C4",
        "--deals", str(args.deals), "--out", str(out / "eval"), "--runs", str(out / "train"),
    ])  # fmt: skip

    print("\n== 3. a playthrough of the trained agent: its best game of the first 50 deals")
    from agents.learned import MaskablePPOAgent

    game, options = VARIANTS["SH1-C4"]
    agent = MaskablePPOAgent.load(ckpt, game=game, options=options)
    deals = eval_deals(min(args.deals, 50))
    results = play_deals(agent, game, options, deals, record=deals)
    best = max(results, key=lambda r: (r.won, r.foundation, -r.moves))
    print(f"   {best.code}: {'won' if best.won else best.end}, {best.foundation} cards on the "
          f"foundations, score {best.score}, {best.moves} moves")  # fmt: skip
    try:
        from solitaire_gym.traces import save_trace
    except ImportError:
        print("(solitaire_gym.traces is not there yet: no trace file)")
    else:
        trace = save_trace(out / "playthrough.json", best.code, best.trace, agent="ppo (demo)",
                           scores=best.scores)  # fmt: skip
        print(f"   trace {trace}")
        for f in render(trace):
            print(f"   rendered {f}")
    print(
        f"\nplot: {out / 'eval' / 'win_rates.png'}; learning curve: "
        f"{out / 'eval' / 'learning_curves.png'}; table: {out / 'eval' / 'results.md'}"
    )
    print(f"demo done in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
