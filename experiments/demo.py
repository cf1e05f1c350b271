"""The main job (``make demo``): the solver teaches a network Double Solitaire from nothing.

1. teacher data: the solver-backed teacher (``agents/teacher.py``) plays the training deals of
   Double Solitaire, draw 3, Normal scoring, that the config names (250), labelling every
   position; a small network is cloned from it (``agents/imitation.py``,
   ``configs/demo_imitate_double_d3n.yaml``);
2. evaluates random, greedy, the freshly trained network, the committed ``learned`` policy
   (``agents/checkpoints/DS1-D3N.npz``), the search player at a small budget (``DEMO_SEARCH``:
   greedy with look-ahead, ``agents/search``) and the solver on held-out deals (evaluation split,
   deals 0 … n−1), prints the table and whether the new network beats greedy (95% Wilson
   intervals apart), saves the win-rate plot and the learning curve;
3. saves a playthrough of the fresh network (its best game of the first 50 deals: a win if it
   has one) as a trace file, rendered to GIF and HTML.

``--config`` takes any imitation config; ``configs/demo_imitate_seahaven_c4.yaml`` is the same
job on Seahaven Towers (4 free cells), where a network this small and this quickly trained
stays below greedy (experiments/results/README.md says what limits it).

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

from agents.imitation import ImitationRun, load_imitation_config, plot_imitation
from agents.play import VARIANTS, eval_deals, play_deals
from experiments import evaluate

ROOT = Path(__file__).resolve().parents[1]

NEW = "new-network"
"""The freshly trained network's name in the table (a policy name: no blanks)."""
DEMO_SEARCH = "search@64"
"""The search player's budget in the demo's table: small, so that it fits the demo's time."""


def render(trace: Path) -> list[Path]:
    """Render ``trace`` to GIF and HTML with ``solitaire-gym render``; the files it wrote (none,
    with the reason printed, if it failed: the pictures need the ``render`` extra)."""
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
    p.add_argument(
        "--config",
        default=str(ROOT / "configs" / "demo_imitate_double_d3n.yaml"),
        help="an imitation config (default configs/demo_imitate_double_d3n.yaml)",
    )
    p.add_argument("--deals", type=int, default=200, help="evaluation deals (default 200)")
    args = p.parse_args(argv)
    out = Path(args.out)
    t0 = time.time()

    cfg = load_imitation_config(args.config)
    variant = cfg.variant
    game, options = VARIANTS[variant]
    title = (
        f"{game.replace('_', ' ').title()} ({', '.join(f'{k} {v}' for k, v in options.items())})"
    )
    rounds = f", {cfg.dagger['rounds']} DAgger round(s) of {cfg.dagger['deals']}"
    print(f"== 1. the solver teaches a network {title}, from nothing: {cfg.teacher['deals']} "
          f"teacher games{rounds if cfg.dagger['rounds'] else ''}")  # fmt: skip
    best = ImitationRun(cfg, out / "train").run()
    trained_s = time.time() - t0
    print(f"   checkpoint {best} ({trained_s:.0f} s so far)")

    print(f"\n== 2. evaluating random, greedy, the new network, the committed learned policy, "
          f"the search player ({DEMO_SEARCH}) and the solver on {args.deals} held-out "
          "deals")  # fmt: skip
    result = evaluate.main_result([
        "--policies", f"random,greedy,learned,{DEMO_SEARCH},solver",
        "--checkpoint", f"{NEW}@{best}",
        "--variants", variant, "--deals", str(args.deals), "--out", str(out / "eval"),
    ])  # fmt: skip
    rows = result["summaries"][variant]
    greedy, new = rows["greedy"], rows[NEW]
    plot_imitation(out / "train" / "train.csv", out / "eval" / "learning_curve.png",
                   cfg.validation["deals"], greedy["win_rate"])  # fmt: skip

    def against_greedy(row: dict) -> str:
        if row["win_rate_ci95"][0] > greedy["win_rate_ci95"][1]:
            return "beats greedy (the 95% intervals do not overlap)"
        if row["win_rate"] > greedy["win_rate"]:
            return "is above greedy, but the 95% intervals overlap"
        return "does not beat greedy"

    print(f"\n   greedy wins {greedy['win_rate']:.1%}; the new network, trained from nothing in "
          f"{trained_s:.0f} s, wins {new['win_rate']:.1%} and {against_greedy(new)}; the "
          f"committed learned policy wins {rows['learned']['win_rate']:.1%} and "
          f"{against_greedy(rows['learned'])}; greedy with look-ahead ({DEMO_SEARCH}) "
          f"wins {rows[DEMO_SEARCH]['win_rate']:.1%} and "
          f"{against_greedy(rows[DEMO_SEARCH])}")  # fmt: skip

    print("\n== 3. a playthrough of the new network: its best game of the first 50 deals")
    from agents.policy import load_policy

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
