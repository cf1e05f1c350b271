"""Vegas solvability bracket: certified wins from below, the solver's proofs of loss from above.

    python experiments/vegas_bracket.py run DS1-D1V --first 1 --deals 100 --out runs/vegas
    python experiments/vegas_bracket.py run DS1-D3V --first 1 --deals 100 --out runs/vegas
    python experiments/vegas_bracket.py collect runs/vegas --out experiments/results/vegas
    python experiments/vegas_bracket.py restore experiments/results/vegas --out runs/vegas

Double Solitaire with Vegas scoring goes through the stock once. **run** plays evaluation deals
``first … first + deals − 1`` of a Vegas variant with the win finder (``agents/search/finder.py``:
the rollout search on the true deal, ``--nodes`` per move, a game given up after ``--patience``
moves without more cards home, ``--max-moves`` at most). It writes ``<out>/<variant>/<first>.json``
per :data:`CHUNK` deals, with each won game's moves; a chunk already there is kept (run the same
command again after an interruption), unless it was played with other settings (an error).

**collect** replays every win through the engine from the deal's code (a win that does not
replay is an error, not a figure), reads the solver's verdicts on deals 1 … 1000 from
``experiments/results/solvability/<variant>.jsonl`` (30 s a deal; it wins none of them) and
writes into ``<out>``: ``README.md`` (the bracket with its commands; ``bracket.md``, the same
without the heading, for the docs; ``bracket.json``, its rows), ``games.csv`` (every game the
finder played) and ``certificates.json`` (the moves of each certified win, by code). On the deals
the finder played, the share of winnable deals lies between the wins certified and one minus the
deals proven lost.

**restore** writes the chunks of a run folder back from such a results folder (checked as a run's
chunks are), so that a run goes on from the committed games on a new checkout: ``restore``, then
``run`` with more deals, then ``collect``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
SOLVABILITY = RESULTS / "solvability"
VEGAS = ("DS1-D1V", "DS1-D3V")
CHUNK = 25
"""Deals per chunk file of a run."""
NODES = 4096
PATIENCE = 120
MAX_MOVES = 500
"""A won Vegas game takes about 300 moves (deals 1 and 3 of DS1-D1V: 307 and 312)."""
MAX_CHUNK_BYTES = 4 << 20
MAX_RESULT_BYTES = 64 << 20
"""The most a results file (``bracket.json``, ``certificates.json``, ``games.csv``) may hold."""
SETTINGS = ("nodes", "patience", "max_moves", "seed")


class BracketError(ValueError):
    """A run folder or chunk file that is not what this script wrote."""


def _settings(args: argparse.Namespace) -> dict:
    return {k: int(getattr(args, k)) for k in SETTINGS}


def play_chunk(variant: str, deals: list[int], settings: dict, bar=None) -> list[dict]:
    """The win finder's games on ``deals``: one record per deal, with the moves of a win."""
    from agents.play import VARIANTS, play_deals
    from agents.search.finder import WinFinder

    game, options = VARIANTS[variant]
    finder = WinFinder(game, options, nodes=settings["nodes"], patience=settings["patience"],
                       seed=settings["seed"])  # fmt: skip
    out = []
    for deal in deals:  # one at a time: a bar that moves, and a CPU time per game
        start = time.process_time()
        [r] = play_deals(finder, game, options, [deal], max_episode_steps=settings["max_moves"],
                         record=[deal])  # fmt: skip
        out.append({
            "deal": r.deal, "code": r.code, "won": bool(r.won), "foundation": r.foundation,
            "moves": r.moves, "end": r.end, "cpu_s": round(time.process_time() - start, 2),
            "trace": list(r.trace) if r.won else None,
        })  # fmt: skip
        if bar is not None:
            bar.update(1)
    return out


def read_chunk(path: Path) -> dict:
    """A chunk file, checked: its settings, and for each game the fields :func:`play_chunk`
    writes (a win with its moves as a list of ASCII strings)."""
    data = _read_json(path, MAX_CHUNK_BYTES, "an ASCII JSON chunk of this script")
    _check_chunk(data, path)
    return data


def _read_text(path: Path, limit: int, what: str) -> str:
    """The text of ``path``: a file of at most ``limit`` bytes, ASCII, else a
    :class:`BracketError` that says it is not ``what``."""
    try:
        if not path.is_file() or path.stat().st_size > limit:
            raise BracketError(f"{path} is not a file of at most {limit} bytes")
        return path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        raise BracketError(f"{path} is not {what}: {e}") from None


def _read_json(path: Path, limit: int, what: str):
    """JSON from ``path``, read as :func:`_read_text` reads it."""
    text = _read_text(path, limit, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise BracketError(f"{path} is not {what}: {e}") from None


def _check_chunk(data, path: Path) -> None:
    """Raise a :class:`BracketError` unless ``data`` is a chunk as :func:`run` writes it."""
    ok = isinstance(data, dict) and isinstance(data.get("variant"), str)
    ok = ok and isinstance(data.get("settings"), dict) and isinstance(data.get("games"), list)
    ok = ok and set(data["settings"]) == set(SETTINGS)
    ok = ok and all(type(v) is int for v in data["settings"].values())
    for g in data["games"] if ok else ():
        ok = ok and isinstance(g, dict) and type(g.get("deal")) is int
        ok = ok and isinstance(g.get("code"), str) and type(g.get("won")) is bool
        ok = ok and all(type(g.get(k)) is int for k in ("foundation", "moves"))
        ok = ok and isinstance(g.get("end"), str) and isinstance(g.get("cpu_s"), (int, float))
        moves = g.get("trace") if ok else None
        ok = ok and (moves is None) != g["won"]
        ok = ok and (moves is None or isinstance(moves, list))
        ok = ok and (moves is None or all(isinstance(m, str) and m.isascii() for m in moves))
    if ok and data["variant"] in VEGAS:  # each game's code is its variant's and its deal's
        from solitaire_gym.engine.variants import parse_code
        from solitaire_gym.errors import GameCodeError

        for g in data["games"]:
            try:
                variant, deal = parse_code(g["code"])
            except GameCodeError:
                ok = False
                break
            ok = ok and variant.tag == data["variant"] and deal == g["deal"]
    if not ok or data["variant"] not in VEGAS:
        raise BracketError(f"{path} is not a chunk of this script (see play_chunk)")


def run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    folder = Path(args.out) / args.variant
    folder.mkdir(parents=True, exist_ok=True)
    deals = list(range(args.first, args.first + args.deals))
    chunks = [deals[i : i + CHUNK] for i in range(0, len(deals), CHUNK)]
    todo = []
    for chunk in chunks:
        path = folder / f"{chunk[0]}.json"
        if path.exists():
            old = read_chunk(path)
            if old["settings"] != settings or [g["deal"] for g in old["games"]] != chunk:
                raise BracketError(
                    f"{path} was played with {old['settings']} on other deals or settings: "
                    "use another --out folder"
                )
        else:
            todo.append((path, chunk))
    from tqdm import tqdm

    with tqdm(total=sum(len(c) for _, c in todo), unit="deal", desc=args.variant) as bar:
        for path, chunk in todo:
            games = play_chunk(args.variant, chunk, settings, bar)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"variant": args.variant, "settings": settings,
                                       "games": games}), encoding="ascii")  # fmt: skip
            tmp.replace(path)
            wins = sum(g["won"] for g in games)
            bar.write(f"{args.variant} deals {chunk[0]} … {chunk[-1]}: {wins} won")
    return 0


def solver_verdicts(variant: str, path: Path | None = None) -> dict[int, str]:
    """The solver's verdict on each deal of the solvability study (deal -> verdict)."""
    from solitaire_gym.solver.batch import parse_variant, read_results

    done = read_results(path or SOLVABILITY / f"{variant}.jsonl", parse_variant(variant))
    return {deal: rec["verdict"] for deal, rec in done.items()}


def bracket(run_dir: Path, solvability: Path = SOLVABILITY) -> tuple[list[dict], dict, list[dict]]:
    """Rows of the bracket (one per variant the run holds), the certificates (code -> moves) and
    every game. Raises :class:`BracketError` for a win that does not replay."""
    from agents.search.finder import certify

    rows, certificates, games = [], {}, []
    for variant in VEGAS:
        paths = sorted((run_dir / variant).glob("*.json"), key=lambda p: int(p.stem))
        if not paths:
            continue
        chunks = [read_chunk(p) for p in paths]
        settings = {json.dumps(c["settings"], sort_keys=True) for c in chunks}
        if len(settings) != 1 or {c["variant"] for c in chunks} != {variant}:
            raise BracketError(f"{run_dir / variant} holds chunks of other variants or settings")
        played = [g for c in chunks for g in c["games"]]
        for g in played:
            if g["won"]:
                if not certify(g["code"], g["trace"]):
                    raise BracketError(f"the win of {g['code']} does not replay: {run_dir}")
                certificates[g["code"]] = g["trace"]
        verdicts = solver_verdicts(variant, solvability / f"{variant}.jsonl")
        deals = [g["deal"] for g in played]
        wins = sum(g["won"] for g in played)
        lost = sum(verdicts.get(d) == "unsolvable" for d in deals)
        all_lost = sum(v == "unsolvable" for v in verdicts.values())
        rows.append({
            "variant": variant, "settings": chunks[0]["settings"], "first": min(deals),
            "last": max(deals), "runs": runs_of(deals), "deals": len(deals), "wins": wins, "lost": lost,
            "solver_deals": len(verdicts), "solver_lost": all_lost, "cpu_s": sum(g["cpu_s"] for g in played),
            "win_moves": sorted(g["moves"] for g in played if g["won"]),
        })  # fmt: skip
        games += [{"variant": variant, **{k: g[k] for k in g if k != "trace"}} for g in played]
    return rows, certificates, games


def runs_of(deals: list[int]) -> list[list[int]]:
    """The deals as runs of consecutive numbers, ``[[first, last], ...]`` in order."""
    runs: list[list[int]] = []
    for d in sorted(deals):
        if runs and d == runs[-1][1] + 1:
            runs[-1][1] = d
        else:
            runs.append([d, d])
    return runs


def _spread(values: list[int]) -> str:
    """``median (fewest … most)`` of whole numbers, ``–`` for none; every value is in
    ``bracket.json`` and ``games.csv``."""
    if not values:
        return "–"
    median = statistics.median(values)
    shown_median = f"{median:.0f}" if median == int(median) else f"{median:.1f}"
    return f"{shown_median} ({min(values)} … {max(values)})"


def _pct(a: int, n: int) -> str:
    return f"{100 * a / n:.1f}%" if n else "–"


def table(rows: list[dict], commands: list[str]) -> str:
    lines = [
        "Double Solitaire with Vegas scoring (one pass through the stock): how many deals can be "
        "won. From below, wins found by the win finder (`agents/search/finder.py`: the rollout "
        "search **on the true deal**, a tool that sees the hidden cards like the solver, not a "
        "player), every one replayed through the engine as a certificate "
        "(`certificates.json`). From above, the deals the solver proves lost in 30 s a deal "
        "(`experiments/results/solvability/`, evaluation deals 1 … 1000; it wins none).",
        "",
        "| variant | deals the finder played | wins certified | proven lost (solver) | "
        "winnable share: bracket | solver on deals 1 … 1000: proven lost | finder settings | "
        "CPU s per deal | moves of a win: median (fewest … most) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["settings"]
        n = r["deals"]
        lines.append(
            f"| {r['variant']} | {', '.join(f'{a} … {b}' for a, b in r['runs'])} ({n}) | "
            f"{r['wins']} | {r['lost']} | "
            f"{_pct(r['wins'], n)} … {_pct(n - r['lost'], n)} | "
            f"{r['solver_lost']} of {r['solver_deals']} | {s['nodes']} nodes a move, "
            f"patience {s['patience']}, at most {s['max_moves']} moves | "
            f"{r['cpu_s'] / n:.1f} | {_spread(r['win_moves'])} |"
        )
    lines += ["", "Made by:", "", *[f"    {c}" for c in commands], ""]
    return "\n".join(lines)


def readme(rows: list[dict], commands: list[str]) -> str:
    """The results folder's README: the bracket table and the commands that made it (the table
    alone, ``bracket.md``, is what the docs include)."""
    return "# Vegas: a solvability bracket\n\n" + table(rows, commands)


def collect(args: argparse.Namespace) -> int:
    run_dir, out = Path(args.run), Path(args.out)
    rows, certificates, games = bracket(run_dir)
    if not rows:
        raise BracketError(f"{run_dir} holds no chunk of {' or '.join(VEGAS)}")
    out.mkdir(parents=True, exist_ok=True)
    commands = []
    for r in rows:
        s = r["settings"]
        for a, b in r["runs"]:
            commands.append(
                f"python experiments/vegas_bracket.py run {r['variant']} --first {a} "
                f"--deals {b - a + 1} --nodes {s['nodes']} --patience {s['patience']} "
                f"--max-moves {s['max_moves']} --seed {s['seed']} --out {run_dir}"
            )
    commands.append(f"python experiments/vegas_bracket.py collect {run_dir} --out {out}")
    (out / "bracket.md").write_text(table(rows, commands))
    (out / "README.md").write_text(readme(rows, commands))
    (out / "bracket.json").write_text(json.dumps({"rows": rows, "commands": commands}, indent=1))
    (out / "certificates.json").write_text(
        json.dumps(certificates, indent=1, sort_keys=True) + "\n"
    )
    with (out / "games.csv").open("w", newline="") as f:
        fields = ["variant", "deal", "code", "won", "foundation", "moves", "end", "cpu_s"]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(games)
    for r in rows:
        print(f"{r['variant']}: {r['wins']} wins certified of {r['deals']} deals; "
              f"{r['lost']} proven lost")  # fmt: skip
    return 0


def _games_from_csv(path: Path) -> list[dict]:
    """The rows of a ``games.csv`` that :func:`collect` wrote, typed as a chunk's games (no
    moves yet), checked field by field."""
    text = _read_text(path, MAX_RESULT_BYTES, "a games.csv of this script")
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as e:
        raise BracketError(f"{path} is not a games.csv of this script: {e}") from None
    fields = ["variant", "deal", "code", "won", "foundation", "moves", "end", "cpu_s"]
    games = []
    for i, row in enumerate(rows, start=2):
        try:
            if list(row) != fields or None in row.values() or row["won"] not in ("True", "False"):
                raise ValueError("not the columns or values collect writes")
            game = {"variant": row["variant"], "deal": int(row["deal"]), "code": row["code"],
                    "won": row["won"] == "True", "foundation": int(row["foundation"]),
                    "moves": int(row["moves"]), "end": row["end"], "cpu_s": float(row["cpu_s"])}  # fmt: skip
        except (ValueError, TypeError) as e:
            raise BracketError(f"{path}, line {i}: {e}") from None
        games.append(game)
    return games


def restore(args: argparse.Namespace) -> int:
    """Write the chunks of a run folder back from a results folder that :func:`collect` wrote,
    so that a run goes on from the committed games: every chunk is checked as :func:`read_chunk`
    checks one, a chunk already there must be the same, and nothing is written unless all are."""
    results, out = Path(args.results), Path(args.out)
    summary = _read_json(
        results / "bracket.json", MAX_RESULT_BYTES, "a bracket.json of this script"
    )
    certificates = _read_json(results / "certificates.json", MAX_RESULT_BYTES,
                              "a certificates.json of this script")  # fmt: skip
    ok = isinstance(summary, dict) and isinstance(summary.get("rows"), list)
    ok = ok and all(isinstance(r, dict) and r.get("variant") in VEGAS for r in summary["rows"])
    ok = ok and isinstance(certificates, dict)
    if not ok:
        raise BracketError(f"{results} is not a results folder of this script (see collect)")
    games = _games_from_csv(results / "games.csv")
    chunks: dict[Path, dict] = {}
    for row in summary["rows"]:
        variant, settings = row["variant"], row.get("settings")
        mine = sorted((g for g in games if g["variant"] == variant), key=lambda g: g["deal"])
        if not mine:
            raise BracketError(f"{results}: the bracket has {variant}, its games do not")
        groups: dict[int, list[dict]] = {}  # the chunks of a run from the first deal played
        for g in mine:
            groups.setdefault(mine[0]["deal"] + (g["deal"] - mine[0]["deal"]) // CHUNK * CHUNK,
                              []).append(g)  # fmt: skip
        for first, part in groups.items():
            if [g["deal"] for g in part] != list(range(first, first + len(part))):
                raise BracketError(
                    f"{results}: the games of {variant} from deal {first} are not a run's chunk "
                    f"(a run of deals from a multiple of {CHUNK} past its first)"
                )
            played = []
            for g in part:
                moves = certificates.get(g["code"]) if g["won"] else None
                played.append({k: v for k, v in g.items() if k != "variant"} | {"trace": moves})
            path = out / variant / f"{part[0]['deal']}.json"
            chunks[path] = {"variant": variant, "settings": settings, "games": played}
            _check_chunk(chunks[path], path)
    for path, data in chunks.items():
        if path.exists() and read_chunk(path) != data:
            raise BracketError(f"{path} holds other games: use another --out folder")
    for path, data in chunks.items():
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data), encoding="ascii")
            tmp.replace(path)
    print(f"{len(chunks)} chunks of {', '.join(r['variant'] for r in summary['rows'])} in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="play deals with the win finder")
    r.add_argument("variant", choices=VEGAS)
    r.add_argument("--first", type=int, default=1, help="first evaluation deal (default 1)")
    r.add_argument("--deals", type=int, default=100)
    r.add_argument("--nodes", type=int, default=NODES)
    r.add_argument("--patience", type=int, default=PATIENCE)
    r.add_argument("--max-moves", type=int, default=MAX_MOVES)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", default="runs/vegas")
    c = sub.add_parser("collect", help="certify the wins and write the bracket")
    c.add_argument("run", help="the run folder")
    c.add_argument("--out", default=str(RESULTS / "vegas"))
    b = sub.add_parser("restore", help="write a run folder back from a results folder")
    b.add_argument("results", help="a results folder that collect wrote")
    b.add_argument("--out", default="runs/vegas")
    args = ap.parse_args(argv)
    if args.command == "run":
        limits = {"first": (0, 10**9), "deals": (1, 100_000), "nodes": (1, 1 << 20),
                  "patience": (0, 10**6), "max_moves": (1, 100_000), "seed": (0, 2**63 - 1)}  # fmt: skip
        for name, (lo, hi) in limits.items():
            if not lo <= getattr(args, name) <= hi:
                ap.error(f"--{name.replace('_', '-')} must be in {lo} … {hi}")
    try:
        return {"run": run, "collect": collect, "restore": restore}[args.command](args)
    except BracketError as e:
        print(f"vegas_bracket: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
