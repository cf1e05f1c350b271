"""The pictures of an evaluation (matplotlib, drawn off screen): ``win_rates.png``, the win
rates of the policies side by side per variant, and ``learning_curves.png``, from the training
folders of ``--runs``."""

from __future__ import annotations

import csv
from pathlib import Path

from experiments.evaluation.tables import policy_rank


def plot_win_rates(result: dict, path: Path) -> None:
    """``win_rates.png``: the win rate of each policy on each variant of ``result`` (what
    ``results.json`` holds), with its 95% Wilson interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    tags = list(result["summaries"])
    names = []
    for by_policy in result["summaries"].values():
        for n in by_policy:
            if n not in names:
                names.append(n)
    names.sort(key=policy_rank)
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(tags) + 2), 4))
    x = np.arange(len(tags))
    for k, name in enumerate(names):
        rates, low, high, xs = [], [], [], []
        for i, tag in enumerate(tags):
            s = result["summaries"][tag].get(name)
            if s is None:
                continue
            lo, hi = s["win_rate_ci95"]
            xs.append(x[i] + (k - (len(names) - 1) / 2) * width)
            rates.append(100 * s["win_rate"])
            low.append(100 * (s["win_rate"] - lo))
            high.append(100 * (hi - s["win_rate"]))
        ax.bar(xs, rates, width, yerr=[low, high], capsize=2, label=name)
    ax.set_xticks(x, tags)
    ax.set_ylabel("win rate, % (95% Wilson interval)")
    n = result["deals"]["count"]
    ax.set_title(f"Win rate per policy, {n} evaluation deals per variant")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


def plot_learning_curves(runs: list[str], path: Path, summaries: dict | None = None) -> None:
    """Validation win rate and foundation cards against training steps, from each run's
    ``eval.csv``; dashed lines: the greedy agent's final-evaluation win rate, if known."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.config import ConfigError, read_yaml

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for run in runs:
        run = Path(run)
        f = run / "eval.csv"
        if not f.exists():
            continue
        rows = list(csv.DictReader(f.open()))
        steps = [int(r["step"]) for r in rows]
        label = run.name
        cfg = run / "config.yaml"
        tag = None
        if cfg.exists():
            try:  # the one reader of configs (no aliases, size and depth capped)
                c = read_yaml(cfg)[0]
            except ConfigError as e:
                raise SystemExit(f"evaluate.py: --runs: {e}") from None
            from agents.play import variant_tag

            tag = variant_tag(c["game"], c.get("options") or {})
            label = f"PPO {c.get('name', run.name)} ({tag})"
        line = a1.plot(steps, [100 * float(r["win_rate"]) for r in rows], marker=".", label=label)
        a2.plot(steps, [float(r["foundation"]) for r in rows], marker=".", label=label)
        greedy = (summaries or {}).get(tag, {}).get("greedy") if tag else None
        if greedy is not None:
            a1.axhline(100 * greedy["win_rate"], ls="--", color=line[0].get_color(), alpha=0.7,
                       label=f"greedy, {tag} (evaluation deals)")  # fmt: skip
    a1.set_xlabel("training steps")
    a1.set_ylabel("validation win rate, %")
    a2.set_xlabel("training steps")
    a2.set_ylabel("validation mean cards on foundations")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle("MaskablePPO learning curves (validation deals 2^19 …)")
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
