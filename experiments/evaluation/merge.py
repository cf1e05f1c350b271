"""The games of earlier evaluations taken into this one: ``--include`` folders (their games,
the extra fields of their summaries, their verdicts), and ``--replace`` folders, whose games and
trace files take the place of the included ones of the same variant and policy (a variant rerun,
say). Each folder is read as :mod:`experiments.evaluation.records` reads an output folder."""

from __future__ import annotations

from pathlib import Path

from experiments.evaluation.records import (
    EPISODE_FIELDS,
    MAX_RESULTS_BYTES,
    Games,
    read_episodes,
    read_json,
    read_verdicts,
    shown_path,
    trace_path,
    write_file,
)
from solitaire_gym.files import FileFormatError, read_limited


def load_included(paths: list[str], deals: list[int], replace: list[str] = ()):
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
        res = read_json(d / "results.json", ("deals", "summaries", "command"), MAX_RESULTS_BYTES)
        got = res["deals"]
        if got["count"] and (got["first"], got["count"]) != (deals[0], len(deals)):
            raise SystemExit(f"evaluate.py: {d} played deals {got['first']} … (count "
                             f"{got['count']}), not the {len(deals)} from {deals[0]} asked for")  # fmt: skip
        rows = read_episodes(d / "episodes.csv", range(deals[0], deals[0] + len(deals)))
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
            read_verdicts(d / "verdicts.json", verdicts, budget, solved)
    return by_key, extras, verdicts, budget, replaced


def replace_traces(out: Path, episodes: Games, replaced: dict) -> None:
    """For each variant and policy whose games a ``--replace`` folder supplied: remove the trace
    files ``out`` holds of those games and copy in the ones the folder has (regular files of at
    most a trace's size, never through a symbolic link, and only into ``out``)."""
    from solitaire_gym.traces import MAX_TRACE_BYTES

    for (tag, name), src in replaced.items():
        codes = [line.split(",")[EPISODE_FIELDS.index("code")] for line in episodes[(tag, name)]]
        for code in codes:
            new, old = trace_path(src, tag, name, code), trace_path(out, tag, name, code)
            if new.resolve() == old.resolve():
                continue
            if new.is_symlink():
                raise SystemExit(f"evaluate.py: {shown_path(new)} is a symbolic link: "
                                 "refusing to copy it")  # fmt: skip
            data = None
            if new.exists():
                try:
                    data = read_limited(new, MAX_TRACE_BYTES)
                except FileFormatError as e:
                    raise SystemExit(f"evaluate.py: {shown_path(new)}: {e}") from None
            if data is not None:
                write_file(old, data, out)
            elif old.is_symlink() or old.is_file():
                old.unlink()  # a link itself, never what it points to
