"""Many deals on all cores, one JSON line per deal, resumable (``solitaire-gym solve --deals``).

Each deal is one task of a process pool (a deal uses one core), or, with ``ray``, ranges of deals
are tasks of a Ray cluster (:mod:`solitaire_gym.distributed`). Results are written as they come,
one line each (the :meth:`SolveResult.to_json` fields plus ``deal``), and flushed, so an
interrupted run loses at most the deals in flight: run the same command again and the deals
already in the file are skipped. A file that is not such a list of results is refused, naming the
line.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from solitaire_gym.engine.variants import MAX_DEAL, Variant, parse_code
from solitaire_gym.errors import ArgumentError, GameCodeError, SolitaireError, is_int, shown
from solitaire_gym.solver.search import VERDICTS, check_budget, solve, warm_up


class ResultsFileError(SolitaireError):
    """A results file (JSON lines) that cannot be resumed: the message names the line."""


def parse_variant(tag: str) -> Variant:
    """``"SH1-C4"`` (a code without its deal number) to a :class:`Variant`."""
    if not isinstance(tag, str) or tag.strip().count("-") != 1:
        raise GameCodeError(
            f"game {shown(tag)}: expected a game and its options, e.g. 'SH1-C4', 'TF1-D3N', "
            "'DS1-D1V'"
        )
    return parse_code(tag.strip() + "-AAAAAAA")[0]


# ASCII digits only, at most 11 of them (deal numbers end at 2^35 - 1, 11 digits).
_RANGE = re.compile(r"^\s*(\d{1,11})\s*(?:\.\.\s*(\d{1,11})\s*)?$", re.ASCII)
MAX_DEALS = 10_000_000
"""Most deals one ``solve --deals`` run takes (the list is held in memory)."""
MAX_LINE = 2**20  # longest line of a results file that is read (a result is under 100 KB)


def parse_deals(text: str) -> list[int]:
    """``"1..1000"``, ``"7"`` or ``"1..10,20,30..35"`` (inclusive ranges) to deal numbers."""
    if not isinstance(text, str):
        raise GameCodeError(f"deals are written as text, e.g. '1..1000', not {shown(text)}")
    deals: dict[int, None] = {}
    for part in text.split(","):
        m = _RANGE.match(part)
        if m is None:
            raise GameCodeError(
                f"deals {shown(text)}: expected numbers and inclusive ranges of ASCII digits, "
                "e.g. '1..1000' or '1..10,20'"
            )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise GameCodeError(f"deals {shown(part.strip())}: the range runs backwards")
        if hi > MAX_DEAL:
            raise GameCodeError(f"deals {shown(part.strip())}: deal numbers end at {MAX_DEAL}")
        if hi - lo + 1 + len(deals) > MAX_DEALS:
            raise GameCodeError(
                f"deals {shown(text)}: more than {MAX_DEALS} deals in one run; split it into "
                "several runs"
            )
        deals.update(dict.fromkeys(range(lo, hi + 1)))
    return list(deals)


def read_results(path: str | os.PathLike[str], variant: Variant | None = None) -> dict[int, dict]:
    """The results already in ``path`` (deal -> record); {} if the file does not exist.
    Raises :class:`ResultsFileError` naming the first line that is not a result (of
    ``variant``, when given): every line is checked, as a line that passed for a result would
    make a resumed run skip its deal."""
    if variant is not None and not isinstance(variant, Variant):
        raise ArgumentError(f"variant must be a Variant or None, not {shown(variant)}")
    p = Path(path)
    if not p.exists():
        return {}
    done: dict[int, dict] = {}
    try:
        with p.open(encoding="utf-8") as f:
            i = 0
            while line := f.readline(MAX_LINE + 1):
                i += 1
                where = f"{shown(str(p))}, line {i}"
                if len(line) > MAX_LINE:
                    raise ResultsFileError(f"{where} is longer than {MAX_LINE} characters")
                if not line.strip():
                    continue
                rec = _parse_result(line, where)
                v, deal = parse_code(rec["code"])
                if variant is not None and v != variant:
                    raise ResultsFileError(
                        f"{where} is a result of {v.tag}, not {variant.tag}: use another --out file"
                    )
                done[deal] = rec
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsFileError(
            f"cannot read results file {shown(str(p))}: {shown(str(e), 200)}"
        ) from None
    return done


def _parse_result(line: str, where: str) -> dict[str, Any]:
    """One line of a results file, checked field by field."""
    try:
        rec = json.loads(line)
    except RecursionError:
        raise ResultsFileError(f"{where} is nested too deeply to be a solver result") from None
    except ValueError as e:  # JSONDecodeError, and integers longer than Python reads
        msg = e.msg if isinstance(e, json.JSONDecodeError) else shown(str(e), 120)
        raise ResultsFileError(
            f"{where} is not valid JSON ({msg}); if a run was cut short while writing it, delete "
            "that line and run again"
        ) from None
    if not isinstance(rec, dict) or not {"code", "verdict", "deal"} <= rec.keys():
        raise ResultsFileError(
            f"{where} is not a solver result (it needs 'code', 'deal' and 'verdict')"
        )
    try:
        _, deal = parse_code(rec["code"])
    except GameCodeError as e:
        raise ResultsFileError(f"{where}: {e}") from None
    if type(rec["deal"]) is not int or rec["deal"] != deal:
        raise ResultsFileError(
            f"{where}: field 'deal' is {shown(rec['deal'])}, but the code's deal number is {deal}"
        )
    if not isinstance(rec["verdict"], str) or rec["verdict"] not in VERDICTS:
        raise ResultsFileError(
            f"{where}: field 'verdict' is {shown(rec['verdict'])}, not one of {', '.join(VERDICTS)}"
        )
    solution = rec.get("solution", [])
    if not isinstance(solution, list) or not all(
        isinstance(m, str) and m.isascii() for m in solution
    ):
        raise ResultsFileError(f"{where}: field 'solution' must be a list of moves (ASCII)")
    if rec["verdict"] == "solvable" and not solution:
        raise ResultsFileError(
            f"{where}: verdict 'solvable' without a solution (a dealt game is never won before "
            "its first move)"
        )
    if rec["verdict"] != "solvable" and solution:
        raise ResultsFileError(f"{where}: a solution with verdict {rec['verdict']!r}")
    for key, kinds in (("nodes", int), ("seconds", (int, float))):
        v = rec.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, kinds) or not 0 <= v < float("inf"):
            what = "an integer" if kinds is int else "a number"
            raise ResultsFileError(f"{where}: field {key!r} must be {what} >= 0, not {shown(v)}")
    return rec


def _solve_one(task: tuple[str, float | None, int | None, str]) -> dict[str, Any]:
    code, max_seconds, max_nodes, clock = task
    r = solve(code, max_seconds=max_seconds, max_nodes=max_nodes, clock=clock)
    d = r.to_dict()
    d["deal"] = parse_code(code)[1]
    return d


def solve_deals(
    deals: list[int],
    tag: str,
    max_seconds: float | None,
    max_nodes: int | None,
    clock: str = "wall",
) -> list[dict[str, Any]]:
    """The result records of ``deals`` of the variant ``tag``: one task of
    :func:`solitaire_gym.distributed.run_deals` (a pool process or a Ray worker)."""
    warm_up()
    variant = parse_variant(tag)
    return [_solve_one((variant.code(d), max_seconds, max_nodes, clock)) for d in deals]


WARM_CODE = "SH1-C4-AAAAAJ2"
"""A deal solved in a few hundred nodes: :func:`_init_worker` solves it."""


def _init_worker() -> None:
    """Load (or compile, with a cold cache) every kernel that solving a deal calls: the search
    (:func:`warm_up`), and what a solution goes through after it (shortened, written in moves,
    replayed through :class:`Game`), from a short solvable deal. A pool runs it in its parent
    before the workers start (:func:`solitaire_gym.distributed.run_deals`), so that they only
    load."""
    warm_up()
    solve(WARM_CODE, max_seconds=None, max_nodes=100_000)


class _Progress:
    """tqdm when installed, else a counter on stderr."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self.bar = None
        self.enabled = enabled
        self.total = total
        self.n = 0
        self.desc = desc
        self.t0 = time.perf_counter()
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="deal", file=sys.stderr)
            except ImportError:
                pass

    def update(self, postfix: str) -> None:
        self.n += 1
        if self.bar is not None:
            self.bar.set_postfix_str(postfix, refresh=False)
            self.bar.update(1)
        elif self.enabled:
            rate = self.n / max(1e-9, time.perf_counter() - self.t0)
            end = "\n" if self.n == self.total else ""
            print(
                f"\r{self.desc}: {self.n}/{self.total} deals ({rate:.1f}/s) {postfix}",
                end=end,
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def solve_many(
    variant: Variant,
    deals: Iterable[int],
    *,
    max_seconds: float | None,
    max_nodes: int | None = None,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    ray: str | None = None,
    chunk: int | None = None,
    clock: str = "wall",
) -> Iterator[dict[str, Any]]:
    """Solve ``deals`` of ``variant``, one process per core (``jobs``, default all), or on Ray
    (``ray``: an address, ``"local"`` for this machine; ``chunk`` deals per task, see
    :mod:`solitaire_gym.distributed`); yield each result record as it comes (in completion
    order) after appending it to ``out``. Deals already in ``out`` are skipped (not yielded).
    Both paths give the same records (up to ``seconds``, and the verdicts of deals that reach
    a time budget). ``clock``: what ``max_seconds`` counts (see :func:`solve`)."""
    from solitaire_gym.distributed import check_address

    # Every argument is checked here, at the call, before a file is opened or a deal solved (the
    # work itself is the generator below).
    if not isinstance(variant, Variant):
        raise ArgumentError(f"variant must be a Variant (parse_variant), not {shown(variant)}")
    deals = list(deals)
    for d in deals:
        if not is_int(d) or not 0 <= d <= MAX_DEAL:
            raise GameCodeError(f"deal {shown(d)} is not a deal number (0 … {MAX_DEAL})")
    deals = [int(d) for d in deals]
    max_seconds, max_nodes = check_budget(max_seconds, max_nodes)
    if ray is not None:
        ray = check_address(ray)
    for name, value in (("jobs", jobs), ("chunk", chunk)):
        if value is not None and (not is_int(value) or value < 1):
            raise ArgumentError(f"{name} must be an integer of 1 or more, not {shown(value)}")
    jobs = None if jobs is None else int(jobs)
    if clock not in ("wall", "cpu"):
        raise ArgumentError(f"clock must be 'wall' or 'cpu', not {shown(clock)}")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise ArgumentError(f"out must be a path, not {shown(out)}")
    done = read_results(out, variant) if out is not None else {}
    return _solve_many(variant, deals, done, max_seconds, max_nodes, jobs, out, progress, ray,
                       chunk, clock)  # fmt: skip


def _solve_many(
    variant, deals, done, max_seconds, max_nodes, jobs, out, progress, ray, chunk, clock
) -> Iterator[dict[str, Any]]:
    from solitaire_gym.distributed import run_deals

    todo = [d for d in deals if d not in done]
    bar = _Progress(len(todo), variant.tag, progress)
    counts = dict.fromkeys(VERDICTS, 0)
    fh = None
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        fh = open(out, "a", encoding="utf-8")  # noqa: SIM115 (closed in finally)
    results = None
    try:
        results = run_deals(
            solve_deals,
            todo,
            args=(variant.tag, max_seconds, max_nodes, clock),
            ray=ray,
            jobs=jobs,
            chunk=chunk,
            seconds_per_deal=max_seconds,
            init=_init_worker,
            key=lambda rec: rec["deal"],
        )
        for rec in results:
            if fh is not None:
                fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
                fh.flush()
            counts[rec["verdict"]] += 1
            bar.update(" ".join(f"{k[:5]}={v}" for k, v in counts.items()))
            yield rec
    finally:
        if results is not None:
            results.close()  # stops the pool, or cancels the Ray tasks in flight
        bar.close()
        if fh is not None:
            fh.close()
