"""What an evaluation prints and writes as text: the line per variant and policy printed as each
finishes, and the Markdown table of ``results.md`` (also printed at the end), with the commands
in code spans that no text can break out of."""

from __future__ import annotations

import re

POLICY_ORDER = ("random", "greedy", "learned", "ppo", "search", "puct", "solver")
"""The order of the policies in the table and the plot: by the first of these a name starts
with (``search@256`` with ``search``), then the rest."""


def policy_rank(name: str) -> int:
    """Where the policy ``name`` stands in the table and the plot (:data:`POLICY_ORDER`)."""
    return ([i for i, p in enumerate(POLICY_ORDER) if name.startswith(p)] or [9])[0]


def pct(x) -> str:
    """A share as a percentage with one decimal; a dash for none."""
    return "–" if x is None else f"{100 * x:.1f}%"


def console_line(tag: str, name: str, s: dict) -> str:
    """The line printed when a policy has played a variant: its summary ``s`` in brief."""
    lo, hi = s["win_rate_ci95"]
    share = s["solvable_won_share"]
    return (
        f"{tag:<8} {name:<7} win {pct(s['win_rate']):>6} [{pct(lo)}, {pct(hi)}]  "
        f"score {s['mean_score']:8.1f}  moves {s['mean_moves']:7.1f}  "
        f"foundation {s['mean_foundation']:5.1f}  solvable won {pct(share)}  ({s['seconds']} s)"
    )


def code_span(text: str) -> str:
    """``text`` as a Markdown code span that shows it as it is: fenced with more backticks than
    any run of them inside it, line breaks and other control characters written as escapes
    (``\\n``), so that no text can end the span and be read as Markdown or HTML."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    fence = "`" * (max((len(m) for m in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_table(result: dict) -> str:
    """``results.md``: the deals, the command (and, for a merge, the commands that played the
    games), and a row per variant and policy, the policies in :data:`POLICY_ORDER`."""
    lines = [
        f"Deals {result['deals']['first']} … "
        f"{result['deals']['first'] + result['deals']['count'] - 1} of the evaluation split "
        f"({result['deals']['count']} per variant). Command: {code_span(result['command'])}",
        "",
    ]
    played = [s["played_by"] for by in result["summaries"].values() for s in by.values()
              if "played_by" in s]  # fmt: skip
    if played:  # a merge: the commands that played the games
        lines += ["Games played by:", ""]
        lines += [f"- {code_span(c)}" for c in dict.fromkeys(played)] + [""]
    lines += [
        "| variant | policy | deals | wins | win rate | 95% CI | mean score | mean moves "
        "| mean foundation cards | solver-solvable deals | of them won |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for tag, by_policy in result["summaries"].items():
        names = sorted(by_policy, key=policy_rank)
        for name in names:
            s = by_policy[name]
            lo, hi = s["win_rate_ci95"]
            solvable = "–" if s["solvable_deals"] is None else str(s["solvable_deals"])
            lines.append(
                f"| {tag} | {name} | {s['deals']} | {s['wins']} | {pct(s['win_rate'])} "
                f"| {pct(lo)} – {pct(hi)} | {s['mean_score']:.1f} | {s['mean_moves']:.1f} "
                f"| {s['mean_foundation']:.1f} | {solvable} | {pct(s['solvable_won_share'])} |"
            )
    return "\n".join(lines)
