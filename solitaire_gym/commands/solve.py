"""``solitaire-gym solve``: solve one deal, or many deals on all cores into a JSON-lines file.

    solitaire-gym solve SH1-C4-AAAAAJ2 [--max-seconds 10]
    solitaire-gym solve --deals 1..1000 --game SH1-C4 --jobs 2 --out results.jsonl
    solitaire-gym solve --deals 1..100000 --game SH1-C4 --ray auto --out results.jsonl

Solitaire Réfléchi and Double Solitaire are solved "thoughtfully" (every card known); the output
says so.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from solitaire_gym.distributed import add_ray_argument
from solitaire_gym.engine.variants import SEAHAVEN
from solitaire_gym.errors import shown
from solitaire_gym.solver.batch import parse_deals, parse_variant, solve_many
from solitaire_gym.solver.search import DEFAULT_SECONDS, EXACT_NOTE, THOUGHTFUL_NOTE, solve


def _positive_float(text: str) -> float:
    try:
        if not text.isascii() or len(text) > 40:
            raise ValueError
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {shown(text)}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {shown(text)}")
    return v


def _positive_int(text: str) -> int:
    try:
        if not text.isascii() or len(text) > 18:
            raise ValueError
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a whole number (at most 18 ASCII digits): {shown(text)}"
        ) from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {shown(text)}")
    return v


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "solve",
        help="solve a deal (or many) and print a verified solution",
        description=(
            "Solve a deal and print the verdict (solvable / unsolvable / unknown when the budget "
            "runs out), the search effort and a solution replayed to a win. With --deals, solve "
            "many deals of one game on all cores, one JSON line per deal in --out; a run that "
            "is stopped resumes where it stopped. Solitaire Réfléchi and Double Solitaire are "
            "solved thoughtfully: the solver sees the hidden cards."
        ),
    )
    p.add_argument("code", nargs="?", help="a game code, e.g. SH1-C4-AAAAAJ2")
    p.add_argument(
        "--max-seconds",
        type=_positive_float,
        default=None,
        help=f"time budget per deal (default {DEFAULT_SECONDS:g})",
    )
    p.add_argument("--max-nodes", type=_positive_int, default=None, help="node budget per deal")
    p.add_argument("--json", action="store_true", help="print the result as one JSON line")
    p.add_argument("--deals", help="deal numbers to solve, e.g. 1..1000 or 1..10,20")
    p.add_argument("--game", help="game and options for --deals, e.g. SH1-C4, TF1-D3N, DS1-D1N")
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        help="processes (default: all); with --ray and no address, the CPUs of the local Ray",
    )
    add_ray_argument(p)
    p.add_argument(
        "--chunk",
        type=_positive_int,
        default=None,
        help="with --ray: deals per task (default: about 8 tasks per CPU, at most 1000 deals "
        "and 5 minutes of budget)",
    )
    p.add_argument("--out", help="JSON-lines results file for --deals (appended, resumable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--trace", metavar="OUT", help="with CODE: write the solution as a trace file (JSON)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    seconds = DEFAULT_SECONDS if args.max_seconds is None else args.max_seconds
    if args.deals is None:
        if args.code is None or args.game or args.out or args.jobs or args.ray or args.chunk:
            print(
                "solitaire-gym solve: give a CODE, or --deals with --game and --out",
                file=sys.stderr,
            )
            return 2
        r = solve(args.code, max_seconds=seconds, max_nodes=args.max_nodes)
        print(r.to_json() if args.json else r.summary())
        if args.trace:
            if not r.solved:
                print(f"no trace written: the verdict is {r.verdict}", file=sys.stderr)
                return 1
            from solitaire_gym.traces import save_trace

            save_trace(args.trace, r.code, r.solution, agent="solver")
            print(f"trace: {args.trace}", file=sys.stderr)
        return 0
    if args.code is not None or not args.game or not args.out:
        print("solitaire-gym solve: --deals needs --game and --out, and no CODE", file=sys.stderr)
        return 2
    if args.chunk is not None and args.ray is None:
        print("solitaire-gym solve: --chunk goes with --ray", file=sys.stderr)
        return 2
    variant = parse_variant(args.game)
    deals = parse_deals(args.deals)
    note = EXACT_NOTE if variant.game == SEAHAVEN else THOUGHTFUL_NOTE
    print(
        f"{variant.tag} ({variant.name}): {len(deals)} deals, {seconds:g} s each", file=sys.stderr
    )
    print(f"note: {note}", file=sys.stderr)
    times = []
    counts: dict[str, int] = {}
    for rec in solve_many(
        variant,
        deals,
        max_seconds=seconds,
        max_nodes=args.max_nodes,
        jobs=args.jobs,
        out=args.out,
        progress=not args.quiet,
        ray=args.ray,
        chunk=args.chunk,
    ):
        counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
        times.append(rec["seconds"])
    new = sum(counts.values())
    skipped = len(deals) - new
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing new"
    print(f"{args.out}: {new} deals solved now ({summary}), {skipped} already there")
    if times:
        print(f"median time {statistics.median(times):.3f} s, longest {max(times):.3f} s")
    return 0
