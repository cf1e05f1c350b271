"""Building the lists of solvable training deals that ``deals="solvable"`` plays
(:mod:`solitaire_gym.envs.deal_lists` reads them and says what they hold): the solver's verdicts
on a range of deals, kept resumably, and the solvable ones written as a variant's list.
``experiments/solvable_deals.py`` is its command."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from solitaire_gym.engine.variants import MAX_DEAL, Variant
from solitaire_gym.envs.deal_lists import (
    TRAIN_START,
    DealListError,
    check_variant,
    write_solvable,
)
from solitaire_gym.errors import is_int, shown
from solitaire_gym.solver.batch import read_results, solve_many
from solitaire_gym.solver.search import VERDICTS


def build_solvable(
    variant: Variant,
    tried: int,
    *,
    max_nodes: int,
    first: int = TRAIN_START,
    jobs: int | None = None,
    work: str | os.PathLike[str] = "runs/solvable_deals",
    data: str | os.PathLike[str] | None = None,
    command: str = "",
    progress: bool = True,
    solve: bool = True,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Solve deals ``first … first + tried − 1`` of ``variant`` (``max_nodes`` positions each,
    no time limit; ``jobs`` processes), keep the solver's records in ``work/<TAG>.jsonl``
    (resumable: deals already there are not solved again), and write the solvable ones to
    ``data/<TAG>.npy`` and their summary to ``data/index.json``
    (:func:`~solitaire_gym.envs.deal_lists.write_solvable`). Returns the summary. ``on_record``
    sees each new record. With ``solve=False`` nothing is solved: the list is
    written from the records already in ``work`` (an interrupted run), for the deals from
    ``first`` on that were all solved, which the summary's ``tried`` then counts."""
    check_variant(variant)
    for name, value in (("tried", tried), ("first", first)):
        if not is_int(value):
            raise TypeError(f"{name} must be an integer, not {shown(value)}")
    if int(tried) < 1:
        raise ValueError(f"tried must be 1 or more, not {tried!r}")
    if int(first) < TRAIN_START or int(first) + int(tried) - 1 > MAX_DEAL:
        raise ValueError(
            f"deals {first} … {int(first) + int(tried) - 1} are not all in the training split "
            f"({TRAIN_START} … {MAX_DEAL})"
        )
    if not is_int(max_nodes) or max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive integer, not {max_nodes!r}")
    first, tried = int(first), int(tried)
    raw = Path(work) / f"{variant.tag}.jsonl"
    done = read_results(raw, variant) if raw.exists() else {}
    other = [r for r in done.values() if r.get("max_nodes") != max_nodes or r.get("max_seconds")]
    if other:
        raise ValueError(
            f"{raw} holds deal {other[0]['deal']} solved with another budget (max_nodes "
            f"{other[0].get('max_nodes')}, max_seconds {other[0].get('max_seconds')}): use "
            "another work folder"
        )
    if solve:
        for rec in solve_many(
            variant, range(first, first + tried), max_seconds=None, max_nodes=max_nodes,
            jobs=jobs, out=raw, progress=progress,
        ):  # fmt: skip
            if on_record is not None:
                on_record(rec)
        done = read_results(raw, variant)
    recs = []
    for deal in range(first, first + tried):
        if deal not in done:
            break
        recs.append(done[deal])
    if not recs:
        raise DealListError(f"{raw} holds no result for deal {first}: nothing to write")
    counts = {v: sum(r["verdict"] == v for r in recs) for v in VERDICTS}
    good = np.array(sorted(r["deal"] for r in recs if r["verdict"] == "solvable"), np.int64)
    summary = {
        "first": first,
        "tried": len(recs),
        "max_nodes": int(max_nodes),
        **counts,
        "command": command,
    }
    write_solvable(variant, good, summary, data)
    return summary
