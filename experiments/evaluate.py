"""Policies × games on a fixed set of evaluation-split deals.

    python experiments/evaluate.py --policies random,greedy,solver --variants all --deals 1000 \\
        --out runs/baselines
    python experiments/evaluate.py --policies random,greedy \\
        --ppo runs/seahaven_c4/checkpoints/best.zip --variants SH1-C4 --deals 1000 \\
        --verdicts runs/baselines/verdicts.json --out runs/ppo_sh
    python experiments/evaluate.py --policies "" --include runs/baselines --include runs/ppo_sh \\
        --out runs/all          # one table and plot from earlier runs (same deals)
    python experiments/evaluate.py --policies "" --include runs/all --replace runs/tf_d3n \\
        --out runs/all          # runs/tf_d3n's games in place of the same variant and policy's
    python experiments/evaluate.py --policies random,greedy,solver --deals 100000 --ray auto \\
        --out runs/big          # the deals in ranges on a Ray cluster: the same results

Every policy plays the same deals ``0 … n−1`` of each variant (the evaluation split: no training
game is dealt from it). Reports per variant and policy: wins, win rate with its 95% Wilson
interval, mean app score (Vegas: dollars), mean moves, mean cards on the foundations, how the
games ended, and the share of the solver-solvable deals that the policy won (from the solver's
verdicts: this run's if ``solver`` is among the policies, else ``--verdicts``, else those of the
``--include`` folders; all of one solver budget, or the run stops before it plays).

Writes into ``--out``: ``results.json`` (the summaries and the command), ``results.md`` (the
table), ``episodes.csv`` (one row per game), ``verdicts.json`` (the solver's verdicts and the
budget they were made with),
``win_rates.png`` (win rate per policy and variant, with the intervals), ``learning_curves.png``
(from ``--runs`` training folders), and ``traces/`` (the first ``--traces`` games of each policy,
as trace files, when ``solitaire_gym.traces`` exists).

Policies: ``random``, ``greedy``, ``solver`` (``--solver-nodes`` / ``--solver-seconds`` per deal;
a deal it finds no solution for within them counts as not won), and each ``--ppo
[NAME@][TAG=]CHECKPOINT`` (evaluated on the variant it was trained on, or on TAG, e.g.
``SH1-C2``; shown as NAME, e.g. ``ppo-best@runs/seahaven_c4/checkpoints/best.zip``).

The networks of ``learned`` and ``--ppo`` play on ``--device`` (default ``auto``: CUDA when torch
sees it, else the CPU) with ``--torch-threads`` CPU threads (``agents/torch_setup.py``).
"""

from __future__ import annotations

import os

# numba's and torch's OpenMP threads spin-wait between calls by default; when the env kernels and
# the policy take turns in one process on few cores, that spinning starves the other side (10x
# slower evaluation measured on 2 cores). Set before numba or torch start their threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import contextlib
import copy
import csv
import functools
import io
import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.named import POLICY_NAMES, is_policy_name, make_agent
from agents.play import ENDS, VARIANTS, EpisodeResult, eval_deals, play_chunk, play_deals
from agents.stats import summarize
from agents.torch_setup import add_device_argument, resolve_device
from solitaire_gym.distributed import add_ray_argument
from solitaire_gym.engine.threads import SHARED_CORE_THREADS, set_torch_threads
from solitaire_gym.engine.variants import parse_code
from solitaire_gym.errors import ArgumentError, SolitaireError, is_int, shown
from solitaire_gym.files import (
    FileFormatError,
    atomic_path,
    read_limited,
    strict_json,
    write_atomic,
)
from solitaire_gym.solver import VERDICTS

BATCH = 256
"""Games played together (``play_deals``' batch size); Ray tasks are cut at multiples of it, so
that a sampling policy, whose generator restarts with every batch, plays the same games."""

POLICY_ORDER = ("random", "greedy", "learned", "ppo", "search", "puct", "solver")

EPISODE_FIELDS = ("variant", "policy", *EpisodeResult("", 0, False, 0, 0, 0, "", 0).to_dict())
"""The columns of ``episodes.csv``: the variant, the policy and an ``EpisodeResult``."""

POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}", re.ASCII)
"""A policy's name (``--ppo NAME@…``, a column of ``episodes.csv``; ``search@256``): it is part
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


def _ppo_specs(items: list[str]) -> list[tuple[str | None, str, Path]]:
    """``[NAME@][TAG=]PATH`` (or ``NAME=PATH``) -> (tag or None, name, path)."""
    out = []
    for k, item in enumerate(items):
        left, eq, path = item.partition("=")
        if not eq:
            name, at, path = item.partition("@")
            if not at:
                name, path = "", item
            tag = ""
        else:
            name, at, tag = left.rpartition("@")
            if not at and tag.upper() not in VARIANTS:
                name, tag = tag, ""
        name = name or ("ppo" if len(items) == 1 else f"ppo{k + 1}")
        if not POLICY_NAME.fullmatch(name):
            raise SystemExit(f"evaluate.py: --ppo name {shown(name)} is not a policy name (1 to "
                             "64 letters, digits, '_', '.', '-', from a letter or digit)")  # fmt: skip
        out.append((tag.upper() or None, name, Path(path)))
    return out


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


def _csv_line(values) -> str:
    """A row of ``episodes.csv`` (its :data:`EPISODE_FIELDS`' values) as ``csv`` writes it,
    without the line end."""
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="").writerow(values)
    return buf.getvalue()


def _name(path: Path) -> str:
    """A path as a message names it: as it is, or quoted and cut when long or odd."""
    text = str(path)
    return text if len(text) <= 200 and text.isprintable() else shown(text, 200)


def _read_json(path: Path, fields: tuple[str, ...], limit: int) -> dict:
    """A JSON record that evaluate.py wrote, read in with the fields it must have: a file that is
    missing, is not (strict) JSON, is larger than ``limit`` bytes or lacks one of them stops the
    run with an error that names it."""
    where = _name(path)
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


def _row_problem(r: dict, deals: range) -> str:
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


def _read_episodes(path: Path, deals: range) -> Games:
    """The rows of an ``episodes.csv`` that evaluate.py wrote, by variant and policy (each one
    line, its fields in the order of :data:`EPISODE_FIELDS`); a file without its columns, or
    with a value that is not what it wrote (:func:`_row_problem`: every field, so no cell can be
    a spreadsheet formula, hold a comma or leave the output folder as part of a trace file's
    name), stops the run with an error that names the file, the line and the field. The text is
    decoded as it is parsed, never held whole as a string."""
    rows: Games = {}
    where = _name(path)
    try:
        data = read_limited(path, MAX_EPISODES_BYTES)
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="")
        reader = csv.DictReader(text)
        missing = [k for k in EPISODE_FIELDS if k not in (reader.fieldnames or [])]
        if missing or len(reader.fieldnames) != len(EPISODE_FIELDS):
            raise SystemExit(f"evaluate.py: {where} is not a table evaluate.py wrote (no "
                             f"column {', '.join(missing) or 'list as it writes'})")  # fmt: skip
        for r in reader:
            wrong = _row_problem(r, deals)
            if wrong:
                raise SystemExit(f"evaluate.py: {where}, line {reader.line_num}: not a row "
                                 f"evaluate.py wrote ({wrong})")  # fmt: skip
            line = ",".join([r[k] for k in EPISODE_FIELDS])
            rows.setdefault((r["variant"], r["policy"]), []).append(line)
    except (FileFormatError, UnicodeDecodeError, csv.Error) as e:
        raise SystemExit(f"evaluate.py: {where} is not a table evaluate.py wrote "
                         f"({shown(str(e), 200)})") from None  # fmt: skip
    return rows


def _read_verdicts(path: Path, verdicts: dict, budget: dict, tags=None) -> None:
    """Add the verdicts of a ``verdicts.json`` (of the variants ``tags``, default all) to
    ``verdicts`` and its solver budget to ``budget`` (all verdicts one file records come from one
    budget, so merged ones must too)."""
    raw = _read_json(path, ("solver_budget", "verdicts"), MAX_VERDICTS_BYTES)
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


def _load_included(paths: list[str], deals: list[int], replace: list[str] = ()):
    """Episodes, extra summary fields, verdicts and their solver budget of earlier runs
    (``--include``), with the games of ``--replace`` folders put in the place of the included
    games of the same variant and policy. Each included summary names the command that played
    its games (``played_by``). Also returns, for each replaced variant and policy, the folder
    whose games (and trace files) replaced them."""
    by_key: Games = {}
    came_from: dict[tuple[str, str], Path] = {}
    replaced: dict[tuple[str, str], Path] = {}
    extras: dict[tuple[str, str], dict] = {}
    verdicts: dict[str, dict[int, str]] = {}
    budget: dict = {}
    for d, replacing in [(Path(d), False) for d in paths] + [(Path(d), True) for d in replace]:
        flag = "--replace" if replacing else "--include"
        if not (d / "results.json").is_file() or not (d / "episodes.csv").is_file():
            raise SystemExit(f"evaluate.py: {flag} {d}: not an output folder of evaluate.py "
                             "(no results.json and episodes.csv)")  # fmt: skip
        res = _read_json(d / "results.json", ("deals", "summaries", "command"), MAX_RESULTS_BYTES)
        got = res["deals"]
        if got["count"] and (got["first"], got["count"]) != (deals[0], len(deals)):
            raise SystemExit(f"evaluate.py: {d} played deals {got['first']} … (count "
                             f"{got['count']}), not the {len(deals)} from {deals[0]} asked for")  # fmt: skip
        rows = _read_episodes(d / "episodes.csv", range(deals[0], deals[0] + len(deals)))
        for key, games in rows.items():
            if replacing and key not in by_key:
                raise SystemExit(f"evaluate.py: --replace {d} holds games of {key[0]} "
                                 f"{key[1]}, which no --include folder has: include them "
                                 "instead")  # fmt: skip
            if not replacing and key in by_key:
                raise SystemExit(f"evaluate.py: --include {d} and {came_from[key]} both hold "
                                 f"games of {key[0]} {key[1]}: include one, and pass the newer "
                                 "one with --replace to put its games in their place")  # fmt: skip
            by_key[key] = games  # a replaced key keeps its place in the files
            came_from[key] = d
            if replacing:
                replaced[key] = d
        for tag, by_policy in res["summaries"].items():
            for name, s in by_policy.items():
                keep = ("seconds", "checkpoint", "trained_on", "solver_budget", "verdicts",
                        "nodes_per_move", "cpu_seconds_per_game")  # fmt: skip
                extras[(tag, name)] = {k: s[k] for k in keep if k in s}
                # the command that played these games (a merge carries it on from its own runs)
                extras[(tag, name)]["played_by"] = s.get("played_by", res["command"])
        if (d / "verdicts.json").exists():  # a --replace folder: of the solver games it replaces
            solved = {t for t, name in rows if name == "solver"} if replacing else None
            _read_verdicts(d / "verdicts.json", verdicts, budget, solved)
    return by_key, extras, verdicts, budget, replaced


def _trace_path(folder: Path, tag: str, name: str, code: str) -> Path:
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
        raise SystemExit(f"evaluate.py: {_name(path)} leads out of {_name(folder)} "
                         "(a symbolic link in it?): refusing to read or write it")  # fmt: skip
    return path


def _replace_traces(out: Path, episodes: Games, replaced: dict) -> None:
    """For each variant and policy whose games a ``--replace`` folder supplied: remove the trace
    files ``out`` holds of those games and copy in the ones the folder has (regular files of at
    most a trace's size, never through a symbolic link, and only into ``out``)."""
    from solitaire_gym.traces import MAX_TRACE_BYTES

    for (tag, name), src in replaced.items():
        codes = [line.split(",")[EPISODE_FIELDS.index("code")] for line in episodes[(tag, name)]]
        for code in codes:
            new, old = _trace_path(src, tag, name, code), _trace_path(out, tag, name, code)
            if new.resolve() == old.resolve():
                continue
            if new.is_symlink():
                raise SystemExit(f"evaluate.py: {_name(new)} is a symbolic link: "
                                 "refusing to copy it")  # fmt: skip
            data = None
            if new.exists():
                try:
                    data = read_limited(new, MAX_TRACE_BYTES)
                except FileFormatError as e:
                    raise SystemExit(f"evaluate.py: {_name(new)}: {e}") from None
            if data is not None:
                _write(old, data, out)
            elif old.is_symlink() or old.is_file():
                old.unlink()  # a link itself, never what it points to


def _write(path: Path, data: str | bytes, out: Path) -> None:
    """``data`` into ``path`` in the output folder ``out`` (written beside it and renamed: an old
    file survives a failed run; a symbolic link there is refused, never followed)."""
    try:
        write_atomic(path, data, inside=out)
    except FileFormatError as e:
        raise SystemExit(f"evaluate.py: cannot write {e}") from None


def _verdict(known: dict, r) -> str:
    k = known.get(r.code)
    if k is not None:
        return k["verdict"]
    return "unsolvable" if r.end == "stuck" and r.steps == 0 else "unknown"


def _load_ppo(path: str, data: bytes, kwargs: dict):
    """A MaskablePPOAgent from ``path``, or, where that path does not exist (another machine
    of a cluster), from the checkpoint's bytes, shipped with the task."""
    import tempfile

    from agents.learned import MaskablePPOAgent

    if Path(path).exists():
        return MaskablePPOAgent.load(path, **kwargs)
    with tempfile.TemporaryDirectory() as d:
        local = Path(d) / Path(path).name
        local.write_bytes(data)
        return MaskablePPOAgent.load(local, **kwargs)


def warm_here(make, game: str, options: dict, deals: list[int]) -> None:
    """Compile (or load) here, once, the kernels that the workers of a local Ray call to play
    ``deals`` with the player that ``make()`` builds, so that they only load them from numba's
    cache instead of each compiling them at the same time (issue 43): the player plays a few moves
    of the first deal, recorded as a trace is (the solver, whose games have no step limit, the
    whole game), and the random player a few moves of a batch as large as a task's (the env's
    kernels on all cores). The player is a copy: what it plays here leaves nothing behind (the
    solver's solutions)."""
    from agents.base import RandomAgent

    first, batch = deals[:1], deals[:BATCH]
    agent = copy.deepcopy(make)()
    play_deals(agent, game, options, first, batch_size=BATCH, max_episode_steps=2, record=first)
    play_deals(RandomAgent(), game, options, batch, batch_size=BATCH, max_episode_steps=2)


def play(args, make, game: str, options: dict, deals: list[int], record) -> tuple[list, dict, dict]:
    """Every deal played by the agent that ``make()`` builds: here, or with ``--ray`` in
    ranges of deals on Ray. Returns the results (in the order of ``deals``), what the agent
    learnt of each deal's solvability (the solver's verdicts, by code) and, for the search
    player played here, its mean nodes per move."""
    if args.ray is None:
        agent = make()
        results = play_deals(agent, game, options, deals, batch_size=BATCH, record=record,
                             torch_threads=args.torch_threads)  # fmt: skip
        search = {}
        if getattr(agent, "decisions", 0):  # the search player: the nodes it spent
            search["nodes_per_move"] = round(agent.nodes_spent / agent.decisions, 1)
        return results, dict(getattr(agent, "verdicts", None) or {}), search
    from solitaire_gym.distributed import (
        LOCAL,
        check_address,
        chunk_size,
        chunks,
        cluster_cpus,
        connect,
        map_chunks,
    )

    if check_address(args.ray) == LOCAL and deals:
        warm_here(make, game, options, deals)
    r = connect(args.ray, jobs=args.jobs)
    size = args.chunk or chunk_size(len(deals), cluster_cpus(r))
    kwargs = {"batch_size": BATCH, "record": sorted(record), "torch_threads": args.torch_threads}
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(deals), desc=f"{game} {make.keywords.get('name', '')}".strip(),
                   unit="deal", file=sys.stderr)  # fmt: skip
    by_deal: dict[int, EpisodeResult] = {}
    known: dict = {}
    try:
        for _part, out in map_chunks(play_chunk, chunks(deals, size, align=BATCH),
                                     args=(make, game, options, kwargs), address=args.ray):  # fmt: skip
            for res, k in out:
                by_deal.setdefault(res.deal, res)
                if k is not None:
                    known[res.code] = k
            if bar is not None:
                bar.update(len(out))
    finally:
        if bar is not None:
            bar.close()
    return [by_deal[d] for d in deals], known, {}


def evaluate(args) -> dict:
    """Run the evaluation described by the parsed ``args``; write the outputs; return the
    results dict."""
    out = Path(args.out)
    tags = list(VARIANTS) if args.variants == "all" else [t.strip().upper() for t in
                                                          args.variants.split(",")]  # fmt: skip
    for t in tags:
        if t not in VARIANTS:
            raise SystemExit(f"evaluate.py: unknown variant {t!r}; use {', '.join(VARIANTS)}")
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    for p in policies:
        try:
            known = is_policy_name(p)
        except ValueError as e:
            raise SystemExit(f"evaluate.py: {e}") from None
        if not known:
            raise SystemExit(f"evaluate.py: unknown policy {p!r} ({', '.join(POLICY_NAMES)}, "
                             "search@N, puct@N; other checkpoints with --ppo)")  # fmt: skip
    if "solver" in policies:
        from agents.solver_agent import solver_available

        if not solver_available():
            print("evaluate.py: solitaire_gym.solver is not available: skipping the solver",
                  file=sys.stderr)  # fmt: skip
            policies.remove("solver")
    ppo = _ppo_specs(args.ppo or [])
    ppo_meta = {}
    for _, _, path in ppo:
        from agents.learned import CheckpointMismatch, read_checkpoint_meta
        from agents.policy import CheckpointError, read_policy_meta

        if not path.exists():
            raise SystemExit(f"evaluate.py: no checkpoint at {path}")
        try:
            ppo_meta[path] = (
                read_policy_meta(path)
                if path.suffix == ".npz"
                else read_checkpoint_meta(path, trusted=args.trusted)
            )
        except (CheckpointError, CheckpointMismatch) as e:
            raise SystemExit(f"evaluate.py: {e}") from None
    deals = eval_deals(args.deals, args.first_deal)
    episodes, extras, verdicts, budget, replaced = _load_included(
        args.include or [], deals, args.replace or []
    )
    if args.verdicts:  # they replace the included folders' verdicts
        verdicts, budget = {}, {}
        _read_verdicts(Path(args.verdicts), verdicts, budget)
    solver_budget = {"max_nodes": args.solver_nodes, "max_seconds": args.solver_seconds}
    if "solver" in policies and budget and budget != solver_budget:
        raise SystemExit(f"evaluate.py: the solver would play with the budget {solver_budget}, "
                         f"the verdicts read in were made with {budget}: pass the same "
                         "--solver-nodes and --solver-seconds, or rerun them all")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    record = deals[: args.traces]
    have_traces = False
    if args.traces:
        try:
            from solitaire_gym.traces import save_trace

            have_traces = True
        except ImportError:
            print("evaluate.py: solitaire_gym.traces is not available: no traces written",
                  file=sys.stderr)  # fmt: skip
    _replace_traces(out, episodes, replaced)
    solver_cache: dict = {}
    started = time.time()

    def write_outputs() -> dict:
        """Summaries from the episodes (this run's and the included ones), written out; called
        after every policy and variant, so an interrupted run keeps what it finished."""
        summaries: dict[str, dict[str, dict]] = {}
        for (tag, name), lines in episodes.items():
            if not lines:
                continue
            solvable = {d: v == "solvable" for d, v in verdicts.get(tag, {}).items()} or None
            s = summarize(_games_of(lines), solvable)
            summaries.setdefault(tag, {})[name] = s | extras.get((tag, name), {})
        summaries = {t: summaries[t] for t in VARIANTS if t in summaries}
        result = {
            "command": "python experiments/evaluate.py "
            + " ".join(shlex.quote(a) for a in args.argv),
            "deals": {"first": deals[0] if deals else None, "count": len(deals)},
            "seconds": round(time.time() - started, 1),
            "summaries": summaries,
        }
        _write(out / "results.json", json.dumps(result, indent=2) + "\n", out)
        _write(out / "results.md", markdown_table(result) + "\n", out)
        table = ""
        if any(episodes.values()):  # csv's line ends, as csv.writer writes them
            rows = (line for games in episodes.values() for line in games)
            table = "\r\n".join([",".join(EPISODE_FIELDS), *rows, ""])
        _write(out / "episodes.csv", table, out)
        if verdicts:
            _write(out / "verdicts.json", json.dumps(
                {"solver_budget": budget,
                 "verdicts": {t: {str(d): v for d, v in vs.items()} for t, vs in verdicts.items()}}
            ) + "\n", out)  # fmt: skip
        return result

    for tag in tags:
        game, options = VARIANTS[tag]
        plan = [(p, p, None) for p in policies]
        for ptag, name, path in ppo:
            if ptag == tag or (ptag is None and ppo_meta[path].get("variant") in (None, tag)):
                plan.append((name, "ppo", path))
        for name, kind, path in plan:
            if kind == "ppo" and path.suffix == ".npz":  # a policy network (agents/policy.py)
                from agents.policy import CheckpointError, load_policy

                kw = {"game": game, "options": options, "name": name, "deterministic": True,
                      "device": args.device}  # fmt: skip
                try:
                    load_policy(path, **kw)  # refused here, before any task runs
                except CheckpointError as e:
                    raise SystemExit(f"evaluate.py: {e}") from None
                make = functools.partial(load_policy, str(path), **kw)
            elif kind == "ppo":
                from agents.learned import CheckpointMismatch, MaskablePPOAgent

                kw = {"game": game, "options": options, "name": name,
                      "deterministic": args.deterministic, "seed": args.seed,
                      "trusted": args.trusted, "device": args.device}  # fmt: skip
                try:
                    MaskablePPOAgent.load(path, **kw)  # refused here, before any task runs
                except CheckpointMismatch as e:
                    raise SystemExit(f"evaluate.py: {e}") from None
                data = path.read_bytes() if args.ray is not None else b""
                make = functools.partial(_load_ppo, str(path), data, kw)
            else:
                make = functools.partial(make_agent, kind, tag, seed=args.seed,
                                         solver_nodes=args.solver_nodes,
                                         solver_seconds=args.solver_seconds,
                                         solver_cache=solver_cache,
                                         device=args.device)  # fmt: skip
            t0, cpu0 = time.time(), time.process_time()
            results, known, search = play(args, make, game, options, deals,
                                          record if have_traces else ())  # fmt: skip
            extra: dict = {"seconds": round(time.time() - t0, 1)}
            if search:  # the search player: its nodes per move and CPU seconds per game
                extra |= search
                extra["cpu_seconds_per_game"] = round((time.process_time() - cpu0) / len(deals), 3)
            if kind == "ppo":
                extra["checkpoint"] = str(path)
                extra["trained_on"] = ppo_meta[path].get("variant")
                extra["deterministic"] = bool(args.deterministic)
            if kind == "solver":
                extra["solver_budget"] = dict(solver_budget)
                budget.update(solver_budget)
                verdicts[tag] = {r.deal: _verdict(known, r) for r in results}
                extra["verdicts"] = {v: sum(x == v for x in verdicts[tag].values())
                                     for v in VERDICTS}  # fmt: skip
            extras[(tag, name)] = extra
            # a replaced variant and policy keeps its place in the files
            episodes[(tag, name)] = [_csv_line((tag, name, *r.to_dict().values())) for r in results]
            solvable = {d: v == "solvable" for d, v in verdicts.get(tag, {}).items()} or None
            print(_line(tag, name, summarize(results, solvable) | extra), flush=True)
            write_outputs()
            for r in results:
                if have_traces and r.trace is not None and (r.trace or kind != "solver"):
                    try:
                        save_trace(_trace_path(out, tag, name, r.code), r.code, r.trace,
                                   agent=name, scores=r.scores)  # fmt: skip
                    except SolitaireError as e:
                        raise SystemExit(f"evaluate.py: {e}") from None
    result = write_outputs()
    summaries = result["summaries"]
    if not args.no_plots and summaries:
        with _output(out / "win_rates.png", out) as tmp:
            plot_win_rates(result, tmp)
        if args.runs:
            with _output(out / "learning_curves.png", out) as tmp:
                plot_learning_curves(args.runs, tmp, summaries)
    return result


@contextlib.contextmanager
def _output(path: Path, out: Path):
    """A temporary file beside ``path`` in ``out`` for a writer that takes a path, renamed over
    ``path`` when it is done (:func:`solitaire_gym.files.atomic_path`)."""
    try:
        with atomic_path(path, inside=out) as tmp:
            yield tmp
    except FileFormatError as e:
        raise SystemExit(f"evaluate.py: cannot write {e}") from None


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _line(tag: str, name: str, s: dict) -> str:
    lo, hi = s["win_rate_ci95"]
    share = s["solvable_won_share"]
    return (
        f"{tag:<8} {name:<7} win {_pct(s['win_rate']):>6} [{_pct(lo)}, {_pct(hi)}]  "
        f"score {s['mean_score']:8.1f}  moves {s['mean_moves']:7.1f}  "
        f"foundation {s['mean_foundation']:5.1f}  solvable won {_pct(share)}  ({s['seconds']} s)"
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
        names = sorted(by_policy, key=lambda n: (
            [i for i, p in enumerate(POLICY_ORDER) if n.startswith(p)] or [9])[0])  # fmt: skip
        for name in names:
            s = by_policy[name]
            lo, hi = s["win_rate_ci95"]
            solvable = "–" if s["solvable_deals"] is None else str(s["solvable_deals"])
            lines.append(
                f"| {tag} | {name} | {s['deals']} | {s['wins']} | {_pct(s['win_rate'])} "
                f"| {_pct(lo)} – {_pct(hi)} | {s['mean_score']:.1f} | {s['mean_moves']:.1f} "
                f"| {s['mean_foundation']:.1f} | {solvable} | {_pct(s['solvable_won_share'])} |"
            )
    return "\n".join(lines)


def plot_win_rates(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    tags = list(result["summaries"])
    names = []
    for by_policy in result["summaries"].values():
        for n in by_policy:
            if n not in names:
                names.append(n)
    names.sort(key=lambda n: ([i for i, p in enumerate(POLICY_ORDER) if n.startswith(p)] or
                              [9])[0])  # fmt: skip
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(tags) + 2), 4))
    x = np.arange(len(tags))
    for k, name in enumerate(names):
        rates, low, high, xs = [], [], [], []
        for i, tag in enumerate(tags):
            s = result["summaries"][tag].get(name)
            if s is None:
                continue
            lo, hi = s["win_rate_ci95"]
            xs.append(x[i] + (k - (len(names) - 1) / 2) * width)
            rates.append(100 * s["win_rate"])
            low.append(100 * (s["win_rate"] - lo))
            high.append(100 * (hi - s["win_rate"]))
        ax.bar(xs, rates, width, yerr=[low, high], capsize=2, label=name)
    ax.set_xticks(x, tags)
    ax.set_ylabel("win rate, % (95% Wilson interval)")
    n = result["deals"]["count"]
    ax.set_title(f"Win rate per policy, {n} evaluation deals per variant")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


def plot_learning_curves(runs: list[str], path: Path, summaries: dict | None = None) -> None:
    """Validation win rate and foundation cards against training steps, from each run's
    ``eval.csv``; dashed lines: the greedy agent's final-evaluation win rate, if known."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.config import ConfigError, read_yaml

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for run in runs:
        run = Path(run)
        f = run / "eval.csv"
        if not f.exists():
            continue
        rows = list(csv.DictReader(f.open()))
        steps = [int(r["step"]) for r in rows]
        label = run.name
        cfg = run / "config.yaml"
        tag = None
        if cfg.exists():
            try:  # the one reader of configs (no aliases, size and depth capped)
                c = read_yaml(cfg)[0]
            except ConfigError as e:
                raise SystemExit(f"evaluate.py: --runs: {e}") from None
            from agents.play import variant_tag

            tag = variant_tag(c["game"], c.get("options") or {})
            label = f"PPO {c.get('name', run.name)} ({tag})"
        line = a1.plot(steps, [100 * float(r["win_rate"]) for r in rows], marker=".", label=label)
        a2.plot(steps, [float(r["foundation"]) for r in rows], marker=".", label=label)
        greedy = (summaries or {}).get(tag, {}).get("greedy") if tag else None
        if greedy is not None:
            a1.axhline(100 * greedy["win_rate"], ls="--", color=line[0].get_color(), alpha=0.7,
                       label=f"greedy, {tag} (evaluation deals)")  # fmt: skip
    a1.set_xlabel("training steps")
    a1.set_ylabel("validation win rate, %")
    a2.set_xlabel("training steps")
    a2.set_ylabel("validation mean cards on foundations")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle("MaskablePPO learning curves (validation deals 2^19 …)")
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--policies",
        default="random,greedy,solver",
        help="comma-separated: random, greedy, learned (the committed policy network of each "
        "variant, agents/checkpoints/), search (the search player at its shipped budget; "
        "search@N for N nodes per move, search@N-l2 for nested level 2, search@N-v valued by "
        "the value network), puct (the tree search with the policy and value networks; "
        "puct@N), solver (default: "
        "random, greedy, solver)",
    )
    p.add_argument(
        "--ppo",
        action="append",
        metavar="[NAME@][TAG=]CHECKPOINT",
        help="a checkpoint to evaluate (repeatable): a MaskablePPO .zip or a policy network "
        ".npz (agents/policy.py, played deterministically); on the variant it was trained on, "
        "or on TAG; shown as NAME (default ppo)",
    )
    p.add_argument(
        "--trusted",
        action="store_true",
        help="load the stable-baselines3 zips of --ppo: they hold pickled Python objects, and "
        "loading one can run any code its author put in it (SECURITY.md); policy networks "
        "(.npz) never need this",
    )
    p.add_argument(
        "--variants", default="all", help=f"comma-separated tags ({', '.join(VARIANTS)}) or 'all'"
    )
    p.add_argument("--deals", type=int, default=1000, help="deals per variant (default 1000)")
    p.add_argument("--first-deal", type=int, default=0, help="first deal number (default 0)")
    p.add_argument(
        "--solver-nodes",
        type=int,
        default=50_000,
        help="the solver's budget per deal, in search nodes (default 50000: reproducible; "
        "about 1 s on a 2-core machine)",
    )
    p.add_argument(
        "--solver-seconds",
        type=float,
        default=10.0,
        help="and in seconds, a safety bound (default 10)",
    )
    p.add_argument(
        "--verdicts",
        help="verdicts.json of an earlier run with the solver (replaces "
        "the verdicts of the --include folders)",
    )
    p.add_argument("--include", action="append", metavar="DIR",
                   help="merge the games of an earlier run's output folder (same deals) into "
                        "the table and plots (repeatable; two folders may not hold games "
                        "of the same variant and policy)")  # fmt: skip
    p.add_argument("--replace", action="append", metavar="DIR",
                   help="an earlier run's output folder whose games (verdicts, trace files) "
                        "take the place of the --include folders' games of the same variant "
                        "and policy, e.g. one variant rerun (repeatable)")  # fmt: skip
    p.add_argument(
        "--deterministic",
        action="store_true",
        help="PPO plays its most likely action (default: samples)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--traces",
        type=int,
        default=0,
        help="write trace files of the first N games of each policy and variant",
    )
    p.add_argument("--runs", nargs="*", help="training run folders, for learning curves")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--torch-threads", type=int, default=SHARED_CORE_THREADS,
                   help="torch's CPU threads, for the network-driven policies (default "
                   f"{SHARED_CORE_THREADS}: they share the cores with the env kernels)")  # fmt: skip
    add_device_argument(p)
    p.add_argument("--out", default="runs/evaluation", help="output folder")
    add_ray_argument(p)
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="with --ray and no address: the CPUs of the local Ray (default all)",
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=None,
        help=f"with --ray: deals per task (rounded up to a multiple of {BATCH})",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar (with --ray)")
    return p  # fmt: skip


def main_result(argv: list[str] | None = None) -> dict:
    """Run the evaluation of ``argv`` (the command line), print its table, return its result."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    if (args.jobs is not None and args.jobs < 1) or (args.chunk is not None and args.chunk < 1):
        parser.error("--jobs and --chunk must be 1 or more")
    if args.ray is None and (args.jobs is not None or args.chunk is not None):
        parser.error("--jobs and --chunk go with --ray")
    if args.deals < 1:
        parser.error("--deals must be 1 or more")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        parser.error(f"--out {shown(args.out, 200)} is a file, not a folder")
    try:
        resolve_device(args.device)  # each process that loads a network resolves it there
        set_torch_threads(args.torch_threads)
    except ArgumentError as e:  # DeviceError is one
        parser.error(str(e))
    result = evaluate(args)
    print()
    print(markdown_table(result))
    return result


def main(argv: list[str] | None = None) -> int:
    main_result(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
