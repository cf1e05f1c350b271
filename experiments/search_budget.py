"""Win rate against the search player's budget: a table and a plot from committed evaluations.

    python experiments/search_budget.py                    # experiments/results/search_budget/

reads ``results.json`` of the budget folder (the search player at several budgets, played by
``experiments/evaluate.py``: its command is in the folder's ``results.md``) and, for the same
deals, the games of the greedy player, the committed policy networks and the solver from
``experiments/results/{baselines,learned,solver}/episodes.csv``; writes ``budget.md`` (win rate
with its 95% Wilson interval, nodes per move, CPU seconds per game) and ``budget.png`` (win rate
against nodes per move, one panel per variant, one series per kind of search (:data:`KINDS`),
greedy, learned and solver as lines).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from agents.named import puct_budget, search_budget
from agents.stats import wilson_interval

RESULTS = Path(__file__).resolve().parent / "results"
LINES = (("greedy", "baselines"), ("learned", "learned"), ("solver", "solver"))
KINDS = {
    "search": ("search (rollouts, level 1)", "o", "tab:blue"),
    "search-l2": ("search, level 2", "s", "tab:purple"),
    "search-v": ("search, rollouts valued by the value network", "^", "tab:red"),
    "puct": ("tree search (PUCT: policy prior, value network)", "D", "tab:green"),
    "search-p": ("search, rollouts played by the policy network", "v", "tab:brown"),
    "search-b": ("search, budget shared over the game", "P", "tab:olive"),
    "search-d": ("search, deep rollouts (4 candidates × 2 copies)", "X", "tab:pink"),
    "search-p-d": ("search, deep rollouts played by the policy network", "<", "tab:cyan"),
    "search-d-b": ("search, deep rollouts and a budget shared over the game", ">", "tab:gray"),
}
"""The searches a budget folder may hold, by kind: how the plot names and draws them (label,
marker, colour)."""


def kind_of(name: str) -> tuple[str, int] | None:
    """The kind (:data:`KINDS`) and nodes per move of a searching player's name; None for
    another player."""
    nodes = puct_budget(name)
    if nodes is not None:
        return "puct", nodes
    budget = search_budget(name)
    if budget is None:
        return None
    if budget.value:
        kind = "search-v"
    elif budget.policy:
        kind = "search-p-d" if budget.deep else "search-p"
    elif budget.bank:
        kind = "search-d-b" if budget.deep else "search-b"
    elif budget.deep:
        kind = "search-d"
    else:
        kind = "search-l2" if budget.level == 2 else "search"
    return kind, budget.nodes


def _rate(wins: int, n: int) -> dict:
    lo, hi = wilson_interval(wins, n)
    return {"wins": wins, "deals": n, "win_rate": wins / n if n else 0.0, "ci95": [lo, hi]}


def references(deals: set[int], results: Path = RESULTS) -> dict[str, dict[str, dict]]:
    """``{variant: {player: rate}}`` of greedy, learned and solver on ``deals``, from the
    committed episodes."""
    out: dict[str, dict[str, dict]] = {}
    for player, folder in LINES:
        games: dict[str, list[bool]] = {}
        with (results / folder / "episodes.csv").open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row["policy"] == player and int(row["deal"]) in deals:
                    games.setdefault(row["variant"], []).append(row["won"] == "True")
        for tag, won in games.items():
            if len(won) == len(deals):
                out.setdefault(tag, {})[player] = _rate(sum(won), len(won))
    return out


def budget_table(folder: Path, results: Path = RESULTS) -> tuple[str, dict]:
    """The Markdown table and the data behind the plot."""
    result = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    first, count = result["deals"]["first"], result["deals"]["count"]
    deals = set(range(first, first + count))
    refs = references(deals, results)
    data: dict[str, dict] = {}
    played = sorted({s.get("played_by", result["command"]) for by in result["summaries"].values()
                     for s in by.values()})  # fmt: skip
    lines = [
        f"Deals {first} … {first + count - 1} of the evaluation split; the searching players "
        "played by:",
        "",
        *[f"    {c}" for c in played],
        "",
        "and this table by `python experiments/search_budget.py`. Greedy, learned and solver: "
        "their committed games on the same deals (`experiments/results/`). Nodes: moves the "
        "engine applied inside the search, per move played; CPU: the process's CPU seconds per "
        "game, all threads (2-core machine, shared with other runs).",
        "",
        "| variant | player | nodes per move | won | win rate (95% CI) | CPU s per game |",
        "|---|---|---|---|---|---|",
    ]
    for tag, by_policy in result["summaries"].items():
        points = []
        for name, s in by_policy.items():
            kind = kind_of(name)
            if kind is not None:
                points.append((list(KINDS).index(kind[0]), kind[1], name, s))
        points.sort(key=lambda p: p[:2])
        for player, _ in LINES:
            r = refs.get(tag, {}).get(player)
            if r is not None:
                lo, hi = r["ci95"]
                lines.append(
                    f"| {tag} | {player} | – | {r['wins']}/{r['deals']} | "
                    f"{100 * r['win_rate']:.1f}% ({100 * lo:.1f}–{100 * hi:.1f}) | – |"
                )
        for _kind, _nodes, name, s in points:
            lo, hi = s["win_rate_ci95"]
            lines.append(
                f"| {tag} | {name} | {s.get('nodes_per_move', '–')} | {s['wins']}/{s['deals']} | "
                f"{100 * s['win_rate']:.1f}% ({100 * lo:.1f}–{100 * hi:.1f}) | "
                f"{s.get('cpu_seconds_per_game', '–')} |"
            )
        data[tag] = {"points": points, "refs": refs.get(tag, {})}
    return "\n".join(lines) + "\n", data


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tags = list(data)
    fig, axes = plt.subplots(1, len(tags), figsize=(3.2 * len(tags), 4.4), squeeze=False)
    styles = {"greedy": ("tab:orange", "--"), "learned": ("tab:green", ":"),
              "solver": ("black", "-.")}  # fmt: skip
    for ax, tag in zip(axes[0], tags, strict=True):
        for k, (label, marker, colour) in enumerate(KINDS.values()):
            pts = [p for p in data[tag]["points"] if p[0] == k]
            if not pts:
                continue
            xs = [p[1] for p in pts]
            ys = [100 * p[3]["win_rate"] for p in pts]
            err = [[100 * (p[3]["win_rate"] - p[3]["win_rate_ci95"][0]) for p in pts],
                   [100 * (p[3]["win_rate_ci95"][1] - p[3]["win_rate"]) for p in pts]]  # fmt: skip
            ax.errorbar(xs, ys, yerr=err, marker=marker, capsize=3, label=label, color=colour)
        for player, (colour, style) in styles.items():
            r = data[tag]["refs"].get(player)
            if r is not None:
                ax.axhline(100 * r["win_rate"], color=colour, linestyle=style, label=player)
        ax.set_xscale("log", base=2)
        ax.set_title(tag)
        ax.set_xlabel("nodes per move (budget)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("win rate, % (95% Wilson interval)")
    labels: dict[str, object] = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(label, handle)
    # the legend in rows of four below the panels, so that no label runs off the figure
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.legend(list(labels.values()), list(labels), loc="lower center",
               ncol=min(4, len(labels)), fontsize=7, frameon=False)  # fmt: skip
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", default=str(RESULTS / "search_budget"),
                   help="the budget folder (default experiments/results/search_budget)")  # fmt: skip
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args(argv)
    folder = Path(args.folder)
    if not (folder / "results.json").is_file():
        raise SystemExit(f"search_budget.py: no results.json in {folder}")
    table, data = budget_table(folder)
    (folder / "budget.md").write_text(table, encoding="utf-8")
    if not args.no_plot:
        plot(data, folder / "budget.png")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
