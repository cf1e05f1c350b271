"""Teacher data: play training deals with the solver-backed teacher and write labelled shards.

    python experiments/teacher_data.py SH1-C4 --deals 0..999 --out data/teacher/SH1-C4/r0
    python experiments/teacher_data.py SH1-C4 --deals 0..499 --student runs/imitate/r0.npz \\
        --out data/teacher/SH1-C4/r1                       # DAgger: the student plays

``--deals`` are offsets into the training split (deal ``2^20 + i``). Shards of ``--chunk`` deals
are written as they finish (a chunk that would take more memory to load than a shard may, 96 MiB,
as several: ``deals-<lo>-<hi>-part001.npz`` … then ``deals-<lo>-<hi>.npz``); the same command
resumes. See ``agents/teacher.py`` for the labels and ``agents/dataset.py`` for the shard format.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from agents.dataset import MAX_SHARD_MEMORY
from agents.teacher import DEFAULT_MAX_NODES, ON_REPEAT, make_shards
from solitaire_gym.distributed import add_ray_argument
from solitaire_gym.errors import SolitaireError
from solitaire_gym.solver.batch import parse_deals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("variant", help="e.g. SH1-C4, TF1-D1N, DS1-D3N")
    ap.add_argument("--deals", required=True, help="training-split offsets, e.g. 0..999")
    ap.add_argument("--out", required=True, help="folder of the shards")
    ap.add_argument("--student", default=None, help="policy checkpoint that plays (DAgger)")
    ap.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES)
    ap.add_argument("--stop-unsafe", type=int, default=0, metavar="N",
                    help="end a game after N positions in a row with no label proven safe "
                         "(0: play to the end)")  # fmt: skip
    ap.add_argument("--on-repeat", choices=ON_REPEAT, default="greedy",
                    help="in a position met before: greedy's choice, or follow the solver's "
                         "plan until a new most of foundation cards (agents/teacher.py)")  # fmt: skip
    ap.add_argument("--chunk", type=int, default=25,
                    help="deals per shard (more shards where one would take more than "
                         f"{MAX_SHARD_MEMORY >> 20} MiB to load)")  # fmt: skip
    ap.add_argument("--jobs", type=int, default=1)
    add_ray_argument(ap)
    args = ap.parse_args(argv)
    try:
        deals = parse_deals(args.deals)
        lo, hi = deals[0], deals[-1] + 1
        if deals != list(range(lo, hi)):
            raise ValueError("--deals must be one range, e.g. 0..999")
        t0 = time.perf_counter()
        totals = make_shards(args.variant, lo, hi, args.out, student=args.student,
                             max_nodes=args.max_nodes, stop_unsafe=args.stop_unsafe,
                             on_repeat=args.on_repeat,
                             chunk=args.chunk, jobs=args.jobs,
                             ray=args.ray)  # fmt: skip
    except (ValueError, OSError, SolitaireError) as e:
        print(f"teacher_data: {e}", file=sys.stderr)
        return 2
    totals["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
