"""The main job (``make demo``): the solver teaches a network Seahaven Towers (4 free cells).

1. teacher data: the solver-backed teacher (``agents/teacher.py``) plays 300 training deals,
   labelling every position; a small network is cloned from it, then plays 150 more deals that
   the teacher labels (one DAgger round) and is trained again (``agents/imitation.py``,
   ``configs/demo_imitate_seahaven_c4.yaml``);
2. evaluates random, greedy, the freshly trained network, the committed ``learned`` policy
   (``agents/checkpoints/SH1-C4.npz``) and the solver on held-out deals (evaluation split, deals
   0 … n−1), prints the table, saves the win-rate plot and the learning curve;
3. saves a playthrough of the fresh network (its best game of the first 50 deals: a win if it
   has one) as a trace file, rendered to GIF and HTML.

Everything goes to ``--out`` (default ``runs/demo/``)::

    train/       the imitation run (teacher shards, round*.npz, best.npz, train.csv, timing.json)
    eval/        results.md, results.json, episodes.csv, win_rates.png, learning_curve.png
    playthrough.json / .gif / .html   one game of the trained network
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

from agents.imitation import ImitationRun, load_imitation_config, plot_imitation  # noqa: E402
from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402


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
    p.add_argument("--config", default=str(ROOT / "configs" / "demo_imitate_seahaven_c4.yaml"))
    p.add_argument("--deals", type=int, default=200, help="evaluation deals (default 200)")
    args = p.parse_args(argv)
    out = Path(args.out)
    t0 = time.time()

    cfg = load_imitation_config(args.config)
    print(f"== 1. the solver teaches a network Seahaven Towers (4 cells): "
          f"{cfg.teacher['deals']} teacher games, {cfg.dagger['rounds']} DAgger round(s) of "
          f"{cfg.dagger['deals']}")  # fmt: skip
    best = ImitationRun(cfg, out / "train").run()
    print(f"   checkpoint {best} ({time.time() - t0:.0f} s so far)")

    print(f"\n== 2. evaluating random, greedy, the new network, the committed learned policy and "
          f"the solver on {args.deals} held-out deals")  # fmt: skip
    result = evaluate.main_result([
        "--policies", "random,greedy,learned,solver", "--ppo", f"new network@{best}",
        "--variants", "SH1-C4", "--deals", str(args.deals), "--out", str(out / "eval"),
    ])  # fmt: skip
    greedy = result["summaries"]["SH1-C4"]["greedy"]["win_rate"]
    plot_imitation(out / "train" / "train.csv", out / "eval" / "learning_curve.png",
                   cfg.validation["deals"], greedy)  # fmt: skip

    print("\n== 3. a playthrough of the new network: its best game of the first 50 deals")
    from agents.policy import load_policy

    game, options = VARIANTS["SH1-C4"]
    agent = load_policy(best, game=game, options=options)
    deals = eval_deals(min(args.deals, 50))
    results = play_deals(agent, game, options, deals, record=deals)
    best_game = max(results, key=lambda r: (r.won, r.foundation, -r.moves))
    print(f"   {best_game.code}: {'won' if best_game.won else best_game.end}, "
          f"{best_game.foundation} cards on the foundations, {best_game.moves} moves")  # fmt: skip
    from solitaire_gym.traces import save_trace

    trace = save_trace(out / "playthrough.json", best_game.code, best_game.trace,
                       agent="learned (demo)", scores=best_game.scores)  # fmt: skip
    print(f"   trace {trace}")
    for f in render(trace):
        print(f"   rendered {f}")
    print(
        f"\nplot: {out / 'eval' / 'win_rates.png'}; learning curve: "
        f"{out / 'eval' / 'learning_curve.png'}; table: {out / 'eval' / 'results.md'}"
    )
    print(f"demo done in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
