"""Shipped lists of training-split deals that the solver proved solvable (``deals="solvable"``).

For each of the nine variants, ``solitaire_gym/data/solvable/<TAG>.npy`` holds the sorted deal
numbers (int64) of the deals ``first … first + tried − 1`` of the training split that the solver
called ``solvable`` within ``max_nodes`` positions each (a budget in positions, not seconds, so
the lists do not depend on the machine or its load: the solver gives the same verdicts again);
``index.json`` records, per variant, ``first``, ``tried``, ``max_nodes`` and the count of each
verdict (``solvable``, ``unsolvable``,
``unknown``), so the share of solvable deals among those tried is known (an honest denominator).
A deal the solver left undecided is not on the list, even if it could be won.

In Solitaire Réfléchi and Double Solitaire the solver sees every card (face-down cards and the
stock order included): ``solvable`` means a player who knew the whole deal could win it, an upper
bound on what a player who sees only the information state can win. Seahaven Towers hides nothing.

:func:`build_solvable` (``experiments/solvable_deals.py`` is its command) writes a list;
:func:`solvable_deals` reads one (a plain ``.npy`` of integers: nothing is unpickled).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from solitaire_gym.engine.variants import MAX_DEAL, Variant
from solitaire_gym.errors import SolitaireError, is_int, shown

DATA = Path(__file__).resolve().parent.parent / "data" / "solvable"
INDEX = "index.json"
TAGS = (
    "DS1-D1N", "DS1-D1V", "DS1-D3N", "DS1-D3V",
    "TF1-D1N", "TF1-D3N",
    "SH1-C4", "SH1-C2", "SH1-C1",
)  # fmt: skip
"""The nine variants, each with a shipped list."""

TRAIN_START = 2**20  # = envs.core.EVAL_SPLIT_END (not imported: core imports this module)


class DealListError(SolitaireError):
    """A shipped deal list that is missing or not what it should be."""


def _index(data: Path) -> dict[str, Any]:
    path = data / INDEX
    if not path.exists():
        return {}
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise DealListError(f"{path} is nested too deeply to be an index of deal lists") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:  # ValueError: JSONDecodeError too
        raise DealListError(f"cannot read {path}: {shown(str(e), 200)}") from None
    if not isinstance(index, dict) or not all(isinstance(v, dict) for v in index.values()):
        raise DealListError(f"{path} is not an index of deal lists ({{variant: summary}})")
    return index


@cache
def _load(tag: str, data: str) -> np.ndarray:
    path = Path(data) / f"{tag}.npy"
    if not path.exists():
        raise DealListError(
            f"no list of solvable deals for {tag} ({path} is missing): build it with "
            f"'python experiments/solvable_deals.py --variants {tag}'"
        )
    try:
        deals = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:  # not an .npy file, or one of Python objects
        raise DealListError(f"{path} is not a list of deal numbers: {e}") from None
    if (
        not isinstance(deals, np.ndarray)
        or deals.ndim != 1
        or deals.dtype != np.int64
        or deals.size == 0
        or deals.min() < TRAIN_START
        or deals.max() > MAX_DEAL
        or np.any(np.diff(deals) <= 0)
    ):
        raise DealListError(
            f"{path} is not a list of training-split deal numbers (1-D int64, sorted, distinct, "
            f"{TRAIN_START} … {MAX_DEAL})"
        )
    deals.setflags(write=False)
    return deals


def _check_variant(variant: Any) -> None:
    if not isinstance(variant, Variant):
        raise TypeError(f"variant must be a Variant (parse_code(...)[0]), not {shown(variant)}")


def solvable_deals(variant: Variant, data: str | os.PathLike[str] | None = None) -> np.ndarray:
    """The shipped training-split deals of ``variant`` that the solver proved solvable: a
    read-only, sorted int64 array (loaded once per process)."""
    _check_variant(variant)
    return _load(variant.tag, str(DATA if data is None else Path(data)))


def solvable_info(variant: Variant, data: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """How ``variant``'s list was made: ``first``, ``tried``, ``max_nodes``, the verdict counts
    and the command (see the module docstring)."""
    _check_variant(variant)
    info = _index(DATA if data is None else Path(data)).get(variant.tag)
    if info is None:
        raise DealListError(f"no list of solvable deals for {variant.tag}")
    return info


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
    ``data/<TAG>.npy`` and their summary to ``data/index.json``. Returns the summary.
    ``on_record`` sees each new record. With ``solve=False`` nothing is solved: the list is
    written from the records already in ``work`` (an interrupted run), for the deals from
    ``first`` on that were all solved, which the summary's ``tried`` then counts."""
    from solitaire_gym.solver.batch import read_results, solve_many
    from solitaire_gym.solver.search import VERDICTS

    _check_variant(variant)
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
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
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
    out_dir = DATA if data is None else Path(data)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.save(out_dir / f"{variant.tag}.npy", good, allow_pickle=False)
    summary = {
        "first": first,
        "tried": len(recs),
        "max_nodes": int(max_nodes),
        **counts,
        "command": command,
    }
    index = _index(out_dir)
    index[variant.tag] = summary
    ordered = {t: index[t] for t in TAGS if t in index}
    (out_dir / INDEX).write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")
    _load.cache_clear()
    return summary
