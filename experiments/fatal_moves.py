"""Where a student's games are lost: the move that lost each game of DAgger shards.

    python experiments/fatal_moves.py TF1-D1N 'runs/imitate/data/round1/*.npz'
    python experiments/fatal_moves.py TF1-D1N 'runs/imitate/data/round1/*.npz' --stocks 4

In a DAgger shard (``experiments/teacher_data.py --student``) the student plays and the teacher
labels every position. A game whose labels stop being safe (the teacher shows no move winnable)
was lost by the student's move just before: the *fatal move*, played where the teacher's label
was safe and different. A game not won whose every position was winnable went round in circles
(or ran out of moves) instead. For each fatal move, this reports whether the student played the
greedy player's first choice there (the teacher's order is greedy's:
``agents.teacher.teacher_orders``) or the teacher's label was greedy's first choice and the
student left it.

``--stocks K`` (Solitaire Réfléchi, draw 1 or 3): for each fatal move where the student played
greedy's first choice, made before the stock was ever turned over (so the player has seen no
card still in the stock, and every order of those cards is one it cannot rule out), the solver
(the teacher's budget) decides the position after the student's move and after the teacher's
with the real stock and with ``K`` random orders of it. A teacher's move that stays winnable
under most orders, where the student's does not, was knowable from what the player sees: a
network could learn it. One that is winnable only with the real order needed the hidden cards.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import sys

import numpy as np

from agents.dataset import ShardError, game_starts, load_shards, won_deals
from agents.play import VARIANTS
from agents.teacher import DEFAULT_MAX_NODES, prove, teacher_orders


def fatal_moves(data: dict, game: str, options: dict | None = None) -> list[dict]:
    """The fatal move of each lost game of ``data`` (:func:`agents.dataset.load_shards`), as
    ``{"deal", "index" (position in its game), "row" (in data), "played", "label",
    "greedy_first"}``. Won games, games whose first position is unsafe, and games whose last
    safe label was played itself have none."""
    go = teacher_orders(data, game, options, k=1)[:, 0]
    ep, safe, lab, pl = data["episode"], data["safe"], data["labels"], data["played"]
    won = won_deals(data)
    out = []
    for a, b in itertools.pairwise(game_starts(ep)):
        if won[int(ep[a])]:  # an unproven stretch the student won through anyway
            continue
        bad = np.flatnonzero(~safe[a:b])
        if not len(bad) or bad[0] == 0:
            continue
        t = a + int(bad[0]) - 1
        if pl[t] == lab[t]:
            continue  # the label itself led to a position the teacher shows nothing for
        out.append({"deal": int(ep[a]), "index": t - a, "row": t, "played": int(pl[t]),
                    "label": int(lab[t]), "greedy_first": int(go[t])})  # fmt: skip
    return out


def other_stocks(data: dict, fatal: dict, game: str, options: dict, k: int, rng,
                 max_nodes: int = DEFAULT_MAX_NODES) -> list[tuple[str, str]] | None:  # fmt: skip
    """The solver's verdicts on the positions after the student's move and after the teacher's
    label at ``fatal``, with the real stock first, then ``k`` random orders of it; None when
    the stock had been turned over before (the player has seen its cards)."""
    from solitaire_gym.engine.actions import action_to_move
    from solitaire_gym.game import Game

    g = Game.new(game, **options, deal=fatal["deal"])
    first = fatal["row"] - fatal["index"]
    for i in range(first, fatal["row"]):
        move = action_to_move(g.cfg, int(data["played"][i]))
        if move == "recycle":
            return None
        g.play(move)
    start = g.to_dict()
    verdicts = []
    for j in range(k + 1):
        position = dict(start)
        if j:
            position["stock"] = [str(c) for c in rng.permutation(start["stock"])]
        pair = []
        for act in (fatal["played"], fatal["label"]):
            h = Game.from_dict(position)
            h.play(action_to_move(h.cfg, act))
            pair.append(prove(h, max_nodes)[0])
        verdicts.append((pair[0], pair[1]))
    return verdicts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variant", help="e.g. TF1-D1N, SH1-C4")
    ap.add_argument("shards", help="DAgger shards, a glob (quoted)")
    ap.add_argument("--stocks", type=int, default=0, metavar="K",
                    help="Réfléchi: also solve with K random stock orders")  # fmt: skip
    ap.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.variant not in VARIANTS:
        print(f"fatal_moves: variant {args.variant!r} is not one of {', '.join(VARIANTS)}",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.stocks and args.variant not in ("TF1-D1N", "TF1-D3N"):
        print("fatal_moves: --stocks needs TF1-D1N or TF1-D3N (elsewhere the player cannot see "
              "cards other than the stock's, which a reshuffle of the stock leaves in place)",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.stocks < 0 or args.max_nodes < 1:
        print("fatal_moves: --stocks must be 0 or more and --max-nodes positive", file=sys.stderr)
        return 2
    paths = sorted(glob.glob(args.shards))
    try:
        data = load_shards(paths, variant=args.variant)
    except ShardError as e:
        print(f"fatal_moves: {e}", file=sys.stderr)
        return 2
    game, options = VARIANTS[args.variant]
    games = len(np.unique(data["episode"]))
    fatal = fatal_moves(data, game, options)
    won, ep = won_deals(data), data["episode"]
    # games never won although the teacher found a winning move at every position they met
    all_safe = sum(not won[int(ep[a])] and bool(data["safe"][a:b].all())
                   for a, b in itertools.pairwise(game_starts(ep)))  # fmt: skip
    student_greedy = [f for f in fatal if f["played"] == f["greedy_first"]]
    report = {
        "shards": len(paths), "games": games, "won": int(data["won"].sum()),
        "fatal_moves": len(fatal),
        "lost_with_every_position_winnable": int(all_safe),
        "student_played_greedy_first": len(student_greedy),
        "label_was_greedy_first": sum(f["label"] == f["greedy_first"] for f in fatal),
        "fatal_move_index_quartiles": np.percentile([f["index"] for f in fatal],
                                                    [25, 50, 75]).tolist() if fatal else [],
    }  # fmt: skip
    if args.stocks:
        rng = np.random.default_rng(args.seed)
        rows = []
        for f in student_greedy:
            v = other_stocks(data, f, game, options, args.stocks, rng, args.max_nodes)
            if v is not None:
                rows.append(v)
        k = args.stocks
        student_ok = [sum(s == "solvable" for s, _ in v[1:]) for v in rows]
        teacher_ok = [sum(t == "solvable" for _, t in v[1:]) for v in rows]
        report["stocks"] = {
            "orders_per_position": k,
            "positions_before_any_recycle": len(rows),
            "student_move_proven_lost_real_stock": sum(v[0][0] == "unsolvable" for v in rows),
            "teacher_move_winnable_real_stock": sum(v[0][1] == "solvable" for v in rows),
            "student_move_winnable_other_orders": [sum(student_ok), k * len(rows)],
            "teacher_move_winnable_other_orders": [sum(teacher_ok), k * len(rows)],
            "positions_teacher_winnable_most_orders_student_not": sum(
                2 * t > k >= 2 * s for s, t in zip(student_ok, teacher_ok, strict=True)
            ),
        }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
