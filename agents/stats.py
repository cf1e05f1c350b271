"""Summaries of evaluation results: win rate with its Wilson interval, means.

>>> lo, hi = wilson_interval(50, 100)
>>> round(lo, 3), round(hi, 3)
(0.404, 0.596)
>>> wilson_interval(0, 0)
(0.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
ENDS = ("won", "stuck", "truncated", "resigned")


def wilson_interval(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if wins == 0 else max(0.0, centre - half)
    hi = 1.0 if wins == n else min(1.0, centre + half)
    return lo, hi


def summarize(results: Sequence, solvable: dict[int, bool] | None = None) -> dict:
    """Aggregate :class:`~agents.play.EpisodeResult` s: deals, wins, win rate and its 95% Wilson
    interval, mean score / moves / foundation cards, how the games ended, and, given
    ``solvable`` (deal -> the solver found a solution), the share of solvable deals won."""
    n = len(results)
    wins = sum(r.won for r in results)
    lo, hi = wilson_interval(wins, n)
    out = {
        "deals": n,
        "wins": wins,
        "win_rate": wins / n if n else 0.0,
        "win_rate_ci95": [lo, hi],
        "mean_score": sum(r.score for r in results) / n if n else 0.0,
        "mean_moves": sum(r.moves for r in results) / n if n else 0.0,
        "mean_foundation": sum(r.foundation for r in results) / n if n else 0.0,
        "ends": {e: sum(r.end == e for r in results) for e in ENDS},
        "solvable_deals": None,
        "solvable_won": None,
        "solvable_won_share": None,
    }
    if solvable is not None:
        known = [r for r in results if r.deal in solvable]
        if len(known) == n:
            good = [r for r in known if solvable[r.deal]]
            out["solvable_deals"] = len(good)
            out["solvable_won"] = sum(r.won for r in good)
            out["solvable_won_share"] = out["solvable_won"] / len(good) if good else None
    return out
