"""The tables that quote the committed evaluations agree with them: the README's scoreboard is
what ``experiments/scoreboard.py`` makes of ``summary/results.json``, and every win rate in
``experiments/results/README.md``'s table of win rates is that summary's."""

from __future__ import annotations

import json
import re

from scripts import experiment

from experiments.scoreboard import README, SUMMARY, readme_block, table

RESULTS_README = SUMMARY.parents[1] / "README.md"
RATE = re.compile(r"^(\d+\.\d)% \((\d+\.\d)–(\d+\.\d)\)")


def _summaries() -> dict:
    return json.loads(SUMMARY.read_text(encoding="utf-8"))["summaries"]


def test_readme_scoreboard_is_the_summarys():
    assert readme_block(README.read_text(encoding="utf-8")) == table(_summaries()), (
        "README.md's scoreboard is stale: python experiments/scoreboard.py --write"
    )


def test_scoreboard_script_prints_the_table(capsys):
    out = experiment("scoreboard").main([])
    assert out == capsys.readouterr().out == table(_summaries())
    assert out.count("\n") == 2 + sum("search" in by for by in _summaries().values())


def test_results_readme_win_rates_are_the_summarys():
    text = RESULTS_README.read_text(encoding="utf-8")
    part = text.split("## Win rates (95% Wilson intervals)", 1)[1].split("\n\n", 2)[1]
    rows = [r for r in part.splitlines() if r.startswith("| ") and not r.startswith("| variant")]
    head = [h.strip() for h in part.splitlines()[0].strip("|").split("|")]
    policies = [h.split(" ")[0] for h in head[1:]]  # "learned (policy network)" -> learned
    summaries = _summaries()
    checked = 0
    for row in rows:
        cells = [c.strip().replace("**", "") for c in row.strip("|").split("|")]
        by = summaries[cells[0]]
        for policy, c in zip(policies, cells[1:], strict=True):
            m = RATE.match(c)
            if m is None:
                assert c == "–" or c.startswith(f"{100 * by[policy]['win_rate']:.1f}%"), c
                continue
            lo, hi = by[policy]["win_rate_ci95"]
            want = (f"{100 * by[policy]['win_rate']:.1f}", f"{100 * lo:.1f}", f"{100 * hi:.1f}")
            assert m.groups() == want, (cells[0], policy, c, want)
            checked += 1
    assert checked >= 30
