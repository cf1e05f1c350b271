"""The README's scoreboard, made from the committed summary of the evaluations.

    python experiments/scoreboard.py            # print the table
    python experiments/scoreboard.py --write    # put it in README.md, between its markers

reads ``experiments/results/summary/results.json`` (made by ``experiments/evaluate.py``; its
command is in that folder's ``results.md``) and writes one row per variant the search player was
measured on: the win rate with its 95% Wilson interval of random, greedy, the MaskablePPO
baseline (``ppo``), the committed policy network, the search player at its shipped budget and
the solver, and the search's CPU seconds per game.
``tests/test_scoreboard.py`` fails when the README's table is not this one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "experiments" / "results" / "summary" / "results.json"
README = ROOT / "README.md"
START, END = "<!-- scoreboard -->", "<!-- /scoreboard -->"
COLUMNS = (("random", "random"), ("greedy", "greedy"), ("ppo", "PPO (1M steps)"),
           ("learned", "learned"), ("search", "search (256 nodes)"),
           ("solver", "solver"))  # fmt: skip
"""(policy in the summary, column heading)."""


def cell(s: dict) -> str:
    """A win rate and its interval, as the scoreboard writes them: ``62.0% (59–65)``."""
    lo, hi = s["win_rate_ci95"]
    return f"{100 * s['win_rate']:.1f}% ({100 * lo:.0f}–{100 * hi:.0f})"


def table(summaries: dict) -> str:
    """The scoreboard (Markdown) of ``summaries`` (``results.json``'s ``summaries``)."""
    head = [h for _, h in COLUMNS]
    lines = [
        "| variant | " + " | ".join(head) + " | CPU s per game (search) |",
        "|---" * (len(head) + 2) + "|",
    ]
    order = sorted(
        (v for v, by in summaries.items() if "search" in by),
        key=lambda v: (not v.startswith("SH"), not v.startswith("TF"), v),
    )
    for variant in order:
        by = summaries[variant]
        cells = [cell(by[p]) if p in by else "–" for p, _ in COLUMNS]
        cpu = by["search"]["cpu_seconds_per_game"]
        lines.append(f"| {variant} | " + " | ".join(cells) + f" | {cpu:.3f} |")
    return "\n".join(lines) + "\n"


def readme_block(text: str) -> str:
    """What the README holds between its scoreboard markers."""
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError(f"README.md must hold {START} and {END} once each")
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="replace the table in README.md")
    args = ap.parse_args(argv)
    out = table(json.loads(SUMMARY.read_text(encoding="utf-8"))["summaries"])
    if args.write:
        text = README.read_text(encoding="utf-8")
        readme_block(text)  # both markers present
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1]
        README.write_text(f"{head}{START}\n{out}{END}{tail}", encoding="utf-8")
    else:
        sys.stdout.write(out)
    return out


if __name__ == "__main__":
    main()
