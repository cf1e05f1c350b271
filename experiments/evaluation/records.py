"""The files of an evaluation's output folder: ``results.json`` (the summaries and the command),
``results.md`` (the table), ``episodes.csv`` (one row per game), ``verdicts.json`` (the solver's
verdicts and their budget) and ``traces/``.

What they hold and how each is read back in (``--include``, ``--replace``, ``--verdicts``): as
``evaluate.py`` writes it, or refused with an error that names the file (a file of any size or
content is read without harm: capped, strict JSON, every field of every row checked), and how
they are written (:func:`write_outputs`; each file beside its place and renamed over it, never
through a symbolic link).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from pathlib import Path
from typing import NamedTuple

from agents.play import ENDS, VARIANTS, EpisodeResult
from agents.stats import summarize
from experiments.evaluation.tables import markdown_table
from solitaire_gym.engine.variants import parse_code
from solitaire_gym.errors import SolitaireError, is_int, shown
from solitaire_gym.files import (
    FileFormatError,
    atomic_path,
    read_limited,
    strict_json,
    write_atomic,
)
from solitaire_gym.solver import VERDICTS

EPISODE_FIELDS = ("variant", "policy", *EpisodeResult("", 0, False, 0, 0, 0, "", 0).to_dict())
"""The columns of ``episodes.csv``: the variant, the policy and an ``EpisodeResult``."""

POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}", re.ASCII)
"""A policy's name (``--checkpoint NAME@…``, a column of ``episodes.csv``; ``search@256``): it is part
of its trace files' names, and a cell that starts with a letter or digit is never a spreadsheet
formula."""

INT32_MAX = 2**31 - 1  # the engine's counters (score, move counter) are 32-bit
MAX_RESULTS_BYTES = 16 * 2**20
"""Largest ``results.json`` read in (its summaries take kilobytes)."""
MAX_VERDICTS_BYTES = 64 * 2**20
"""Largest ``verdicts.json`` read in (100,000 deals of every variant: about 20 MB)."""
MAX_EPISODES_BYTES = 256 * 2**20
"""Largest ``episodes.csv`` read in (about 50 bytes a game)."""

Games = dict[tuple[str, str], list[str]]
"""Games by (variant, policy), in the order their rows are written: each game one line of
``episodes.csv`` (its :data:`EPISODE_FIELDS` joined by commas, without the line end). A line
takes a few times fewer bytes than a dict of its fields, and it is written back as it is."""


class _Game(NamedTuple):
    """What :func:`~agents.stats.summarize` reads of a game (an ``EpisodeResult``'s fields)."""

    deal: int
    won: bool
    score: int
    moves: int
    end: str
    foundation: int


def _games_of(lines: list[str]) -> list[_Game]:
    """The games of lines of ``episodes.csv`` (:data:`Games`), as ``summarize`` reads them."""
    out = []
    for line in lines:
        _, _, _, deal, won, score, moves, _, end, foundation = line.split(",")
        out.append(_Game(int(deal), won == "True", int(score), int(moves), end, int(foundation)))
    return out


def csv_line(values) -> str:
    """A row of ``episodes.csv`` (its :data:`EPISODE_FIELDS`' values) as ``csv`` writes it,
    without the line end."""
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="").writerow(values)
    return buf.getvalue()


def shown_path(path: Path) -> str:
    """A path as a message names it: as it is, or quoted and cut when long or odd."""
    text = str(path)
    return text if len(text) <= 200 and text.isprintable() else shown(text, 200)


def read_json(path: Path, fields: tuple[str, ...], limit: int) -> dict:
    """A JSON record that evaluate.py wrote, read in with the fields it must have: a file that is
    missing, is not (strict) JSON, is larger than ``limit`` bytes or lacks one of them stops the
    run with an error that names it."""
    where = shown_path(path)
    if not path.exists():
        raise SystemExit(f"evaluate.py: {where}: no such file")
    try:
        raw = strict_json(read_limited(path, limit).decode("utf-8"))
    except (FileFormatError, UnicodeDecodeError) as e:
        raise SystemExit(
            f"evaluate.py: {where} is not a JSON file evaluate.py wrote ({shown(str(e), 200)})"
        ) from None
    missing = [k for k in fields if k not in raw] if isinstance(raw, dict) else list(fields)
    if missing:
        raise SystemExit(f"evaluate.py: {where} is not a record evaluate.py wrote (it has no "
                         f"{', '.join(repr(k) for k in missing)})")  # fmt: skip
    wrong = _misshapen(raw)
    if wrong:
        raise SystemExit(f"evaluate.py: {where} is not a record evaluate.py wrote ({wrong})")
    return raw


def _by_variant(x, ok) -> bool:
    """Is ``x`` {variant: {key: value}} with ``ok(key, value)`` true of every entry?"""
    return isinstance(x, dict) and all(
        isinstance(by, dict) and all(ok(k, v) for k, v in by.items()) for by in x.values()
    )


def _misshapen(raw: dict) -> str:
    """What is wrong with the fields of a ``results.json`` or ``verdicts.json`` that the rest of
    evaluate.py reads (the shapes ``write_outputs`` writes), or "" if nothing."""
    if "deals" in raw:
        d = raw["deals"]
        if not (isinstance(d, dict) and is_int(d.get("count")) and d["count"] >= 0
                and (is_int(d.get("first")) or (d.get("first") is None and not d["count"]))):  # fmt: skip
            return "'deals' is not {'first': deal, 'count': n}"
    if "command" in raw and not isinstance(raw["command"], str):
        return "'command' is not a string"
    if "summaries" in raw:
        if not _by_variant(raw["summaries"], lambda k, v: isinstance(v, dict)):
            return "'summaries' is not {variant: {policy: summary}}"
        for tag, by_policy in raw["summaries"].items():
            for name, summary in by_policy.items():
                wrong = _summary_problem(tag, name, summary)
                if wrong:
                    return f"'summaries', {shown(tag)} {shown(name)}: {wrong}"
    if "solver_budget" in raw and not isinstance(raw["solver_budget"], dict):
        return "'solver_budget' is not an object"
    if "verdicts" in raw and not _by_variant(
        raw["verdicts"], lambda k, v: k.isascii() and k.isdigit() and len(k) < 20 and v in VERDICTS
    ):
        return f"'verdicts' is not {{variant: {{deal: one of {', '.join(VERDICTS)}}}}}"
    return ""


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) < 1e18


_EXTRAS = {  # the fields of an included summary that a merge carries on: what each must be
    "seconds": _number,
    "checkpoint": lambda x: isinstance(x, str),
    "trained_on": lambda x: x is None or isinstance(x, str),
    "solver_budget": lambda x: isinstance(x, dict) and all(_number(v) for v in x.values()),
    "verdicts": lambda x: isinstance(x, dict) and all(is_int(v) for v in x.values()),
    "played_by": lambda x: isinstance(x, str),
    "deterministic": lambda x: isinstance(x, bool),
    "nodes_per_move": _number,
    "cpu_seconds_per_game": _number,
}


def _summary_problem(tag, name, summary: dict) -> str:
    """What is wrong with an included summary's variant, policy name or the fields a merge
    carries on (:data:`_EXTRAS`), or "" if nothing."""
    if tag not in VARIANTS:
        return "not a variant"
    if not isinstance(name, str) or not POLICY_NAME.fullmatch(name):
        return "not a policy name"
    for key, ok in _EXTRAS.items():
        if key in summary and not ok(summary[key]):
            return f"{key!r} is not what evaluate.py writes"
    return ""


def _count(text, low: int, high: int, signed: bool = False) -> int | None:
    """``text`` as an integer of ASCII digits (a leading ``-`` if ``signed``) in ``low … high``,
    as evaluate.py writes one; None otherwise."""
    if not isinstance(text, str) or len(text) > 20:
        return None
    digits = text[1:] if signed and text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    value = int(text)
    return value if low <= value <= high else None


def row_problem(r: dict, deals: range) -> str:
    """What is wrong with a row of an ``episodes.csv`` (its fields as evaluate.py writes them:
    a known variant, a policy name, a game code of that variant and deal, a deal of ``deals``,
    the counters in range, an end from :data:`~agents.play.ENDS`), or "" if nothing."""
    if None in r or any(v is None for v in r.values()):
        return "not as many fields as columns"
    if r["variant"] not in VARIANTS:
        return "field 'variant': not a variant"
    if not POLICY_NAME.fullmatch(r["policy"]):
        return "field 'policy': not a policy name (letters, digits, '_', '.', '-')"
    deal = _count(r["deal"], deals.start, deals.stop - 1)
    if deal is None:
        return f"field 'deal': not a deal of {deals.start} … {deals.stop - 1}"
    try:
        variant, code_deal = parse_code(r["code"])
    except SolitaireError:
        return "field 'code': not a game code"
    if variant.tag != r["variant"] or code_deal != deal or variant.code(deal) != r["code"]:
        return "field 'code': not the code of the row's variant and deal"
    if r["won"] not in ("True", "False"):
        return "field 'won': not True or False"
    if r["end"] not in ENDS or (r["end"] == "won") != (r["won"] == "True"):
        return f"field 'end': not one of {', '.join(ENDS)} (won when 'won' is True)"
    checks = (("score", -INT32_MAX - 1, INT32_MAX, True), ("moves", 0, INT32_MAX, False),
              ("steps", 0, 2**63 - 1, False), ("foundation", 0, variant.n_cards, False))  # fmt: skip
    for key, low, high, signed in checks:
        if _count(r[key], low, high, signed) is None:
            return f"field {key!r}: not an integer in {low} … {high}"
    return ""


def read_episodes(path: Path, deals: range) -> Games:
    """The rows of an ``episodes.csv`` that evaluate.py wrote, by variant and policy (each one
    line, its fields in the order of :data:`EPISODE_FIELDS`); a file without its columns, or
    with a value that is not what it wrote (:func:`row_problem`: every field, so no cell can be
    a spreadsheet formula, hold a comma or leave the output folder as part of a trace file's
    name), stops the run with an error that names the file, the line and the field. The text is
    decoded as it is parsed, never held whole as a string."""
    rows: Games = {}
    where = shown_path(path)
    try:
        data = read_limited(path, MAX_EPISODES_BYTES)
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="")
        reader = csv.DictReader(text)
        missing = [k for k in EPISODE_FIELDS if k not in (reader.fieldnames or [])]
        if missing or len(reader.fieldnames) != len(EPISODE_FIELDS):
            raise SystemExit(f"evaluate.py: {where} is not a table evaluate.py wrote (no "
                             f"column {', '.join(missing) or 'list as it writes'})")  # fmt: skip
        for r in reader:
            wrong = row_problem(r, deals)
            if wrong:
                raise SystemExit(f"evaluate.py: {where}, line {reader.line_num}: not a row "
                                 f"evaluate.py wrote ({wrong})")  # fmt: skip
            line = ",".join([r[k] for k in EPISODE_FIELDS])
            rows.setdefault((r["variant"], r["policy"]), []).append(line)
    except (FileFormatError, UnicodeDecodeError, csv.Error) as e:
        raise SystemExit(f"evaluate.py: {where} is not a table evaluate.py wrote "
                         f"({shown(str(e), 200)})") from None  # fmt: skip
    return rows


def read_verdicts(path: Path, verdicts: dict, budget: dict, tags=None) -> None:
    """Add the verdicts of a ``verdicts.json`` (of the variants ``tags``, default all) to
    ``verdicts`` and its solver budget to ``budget`` (all verdicts one file records come from one
    budget, so merged ones must too)."""
    raw = read_json(path, ("solver_budget", "verdicts"), MAX_VERDICTS_BYTES)
    if tags is not None:
        raw["verdicts"] = {t: v for t, v in raw["verdicts"].items() if t in tags}
        if not raw["verdicts"]:
            return
    if budget and budget != raw["solver_budget"]:
        raise SystemExit(f"evaluate.py: {path} was made with the solver budget "
                         f"{raw['solver_budget']}, other verdicts of this run with {budget}: "
                         "rerun the solver so that they agree")  # fmt: skip
    budget.update(raw["solver_budget"])
    for t, vs in raw["verdicts"].items():
        verdicts[t] = {int(k): v for k, v in vs.items()}


def trace_path(folder: Path, tag: str, name: str, code: str) -> Path:
    """Where an output folder keeps the trace file of policy ``name``'s game of deal ``code``:
    built from a variant, a policy name and a game code checked as such, and checked to lie in
    ``folder`` (a symbolic link planted in it that leads out is refused)."""
    try:
        variant, deal = parse_code(code)
        canonical = variant.code(deal) == code
    except SolitaireError:
        canonical = False
    if tag not in VARIANTS or not POLICY_NAME.fullmatch(name) or not canonical:
        raise SystemExit(f"evaluate.py: no trace file for {shown(tag)} {shown(name)} "
                         f"{shown(code)}: not a variant, a policy name and a game code")  # fmt: skip
    path = folder / "traces" / tag / f"{name}-{code}.json"
    root = folder.resolve()
    if root not in path.parent.resolve().parents and path.parent.resolve() != root:
        raise SystemExit(f"evaluate.py: {shown_path(path)} leads out of {shown_path(folder)} "
                         "(a symbolic link in it?): refusing to read or write it")  # fmt: skip
    return path


def write_file(path: Path, data: str | bytes, out: Path) -> None:
    """``data`` into ``path`` in the output folder ``out`` (written beside it and renamed: an old
    file survives a failed run; a symbolic link there is refused, never followed)."""
    try:
        write_atomic(path, data, inside=out)
    except FileFormatError as e:
        raise SystemExit(f"evaluate.py: cannot write {e}") from None


@contextlib.contextmanager
def atomic_output(path: Path, out: Path):
    """A temporary file beside ``path`` in ``out`` for a writer that takes a path, renamed over
    ``path`` when it is done (:func:`solitaire_gym.files.atomic_path`)."""
    try:
        with atomic_path(path, inside=out) as tmp:
            yield tmp
    except FileFormatError as e:
        raise SystemExit(f"evaluate.py: cannot write {e}") from None


def write_outputs(out: Path, command: str, deals: list[int], seconds: float, episodes: Games,
                  extras: dict, verdicts: dict, budget: dict) -> dict:  # fmt: skip
    """The summaries of the games ``episodes`` (with the fields ``extras`` adds to each, and the
    share of the solvable deals that ``verdicts`` show won), written into ``out`` with the
    ``command`` that ran, the ``deals`` and the ``seconds`` taken: ``results.json``,
    ``results.md``, ``episodes.csv`` and, if there are verdicts, ``verdicts.json`` (made with the
    solver ``budget``). Returns what ``results.json`` holds."""
    summaries: dict[str, dict[str, dict]] = {}
    for (tag, name), lines in episodes.items():
        if not lines:
            continue
        solvable = {d: v == "solvable" for d, v in verdicts.get(tag, {}).items()} or None
        s = summarize(_games_of(lines), solvable)
        summaries.setdefault(tag, {})[name] = s | extras.get((tag, name), {})
    summaries = {t: summaries[t] for t in VARIANTS if t in summaries}
    result = {
        "command": command,
        "deals": {"first": deals[0] if deals else None, "count": len(deals)},
        "seconds": seconds,
        "summaries": summaries,
    }
    write_file(out / "results.json", json.dumps(result, indent=2) + "\n", out)
    write_file(out / "results.md", markdown_table(result) + "\n", out)
    table = ""
    if any(episodes.values()):  # csv's line ends, as csv.writer writes them
        rows = (line for games in episodes.values() for line in games)
        table = "\r\n".join([",".join(EPISODE_FIELDS), *rows, ""])
    write_file(out / "episodes.csv", table, out)
    if verdicts:
        write_file(out / "verdicts.json", json.dumps(
            {"solver_budget": budget,
             "verdicts": {t: {str(d): v for d, v in vs.items()} for t, vs in verdicts.items()}}
        ) + "\n", out)  # fmt: skip
    return result
