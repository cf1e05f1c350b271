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

:func:`write_solvable` writes a list (:func:`solitaire_gym.solver.solvable.build_solvable`
solves the deals for it; ``experiments/solvable_deals.py`` is its command); :func:`solvable_deals`
reads one (a plain ``.npy`` of integers: nothing is unpickled).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from solitaire_gym.engine.catalog import VARIANTS
from solitaire_gym.engine.variants import MAX_DEAL, Variant
from solitaire_gym.errors import SolitaireError, shown

DATA = Path(__file__).resolve().parent.parent / "data" / "solvable"
INDEX = "index.json"
TAGS = tuple(VARIANTS)
"""The variants, each with a shipped list."""

TRAIN_START = 2**20  # = envs.core.EVAL_SPLIT_END (not imported: core imports this module)


class DealListError(SolitaireError):
    """A shipped deal list that is missing or not what it should be."""


def read_index(data: Path) -> dict[str, Any]:
    """The index of the lists in folder ``data`` (:data:`INDEX`): {variant: summary}, empty when
    there is none; :class:`DealListError` when it is not readable or not such a record."""
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


def check_variant(variant: Any) -> None:
    """A ``TypeError`` unless ``variant`` is a :class:`~solitaire_gym.engine.variants.Variant`."""
    if not isinstance(variant, Variant):
        raise TypeError(f"variant must be a Variant (parse_code(...)[0]), not {shown(variant)}")


def solvable_deals(variant: Variant, data: str | os.PathLike[str] | None = None) -> np.ndarray:
    """The shipped training-split deals of ``variant`` that the solver proved solvable: a
    read-only, sorted int64 array (loaded once per process)."""
    check_variant(variant)
    return _load(variant.tag, str(DATA if data is None else Path(data)))


def solvable_info(variant: Variant, data: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """How ``variant``'s list was made: ``first``, ``tried``, ``max_nodes``, the verdict counts
    and the command (see the module docstring)."""
    check_variant(variant)
    info = read_index(DATA if data is None else Path(data)).get(variant.tag)
    if info is None:
        raise DealListError(f"no list of solvable deals for {variant.tag}")
    return info


def write_solvable(
    variant: Variant,
    deals: np.ndarray,
    summary: dict[str, Any],
    data: str | os.PathLike[str] | None = None,
) -> None:
    """Write ``deals`` (sorted, distinct int64 training-split deal numbers) as ``variant``'s list
    of solvable deals in folder ``data`` (default: the shipped lists) and ``summary`` as its entry
    of the index (variants in the order of :data:`TAGS`); a list read before is read anew."""
    check_variant(variant)
    out_dir = DATA if data is None else Path(data)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.save(out_dir / f"{variant.tag}.npy", np.asarray(deals, np.int64), allow_pickle=False)
    index = read_index(out_dir)
    index[variant.tag] = summary
    ordered = {t: index[t] for t in TAGS if t in index}
    (out_dir / INDEX).write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")
    _load.cache_clear()
