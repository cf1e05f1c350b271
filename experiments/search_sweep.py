"""The search player's settings against its win rate, on deals the published tables do not use.

    python experiments/search_sweep.py SH1-C4 --nodes 1024 --candidates 8 --noise 25
    python experiments/search_sweep.py TF1-D1N --nodes 256 --first 2000 --deals 100
    python experiments/search_sweep.py DS1-D3N --nodes 64 --rollout policy --first 0 --deals 30

plays :class:`agents.search.RolloutSearch` of one variant with the settings given (the defaults
are the shipped player's) on evaluation deals ``first … first + deals − 1`` (2000 … 2099 by
default: the published tables use deals 0 … 999) and prints one line: wins, win rate with its 95%
Wilson interval, CPU seconds per game and nodes per move. ``docs/notes/`` lists the settings
tried with it.
"""

from __future__ import annotations

import argparse
import time

from agents.play import VARIANTS, play_deals
from agents.search import rollouts
from agents.stats import wilson_interval


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variant", choices=sorted(VARIANTS))
    ap.add_argument("--nodes", type=int, default=rollouts.DEFAULT_NODES)
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--samples", type=int, default=rollouts.DEFAULT_SAMPLES)
    ap.add_argument("--candidates", type=int, default=rollouts.MAX_CANDIDATES)
    ap.add_argument("--rollout", choices=("greedy", "policy"), default="greedy",
                    help="the greedy player or the committed policy network")  # fmt: skip
    ap.add_argument("--bank", type=int, default=0,
                    help="budgets a game may bank for its hard moves (0: none; search@N-b: "
                         f"{rollouts.NAMED_BANK})")  # fmt: skip
    ap.add_argument("--noise", type=float, default=None,
                    help=f"noisy rollouts' scale (default {rollouts.NOISE:g} for greedy, "
                         f"{rollouts.POLICY_NOISE:g} for the policy)")  # fmt: skip
    ap.add_argument(
        "--no-hindsight",
        action="store_true",
        help="further waves with hidden cards deal new sampled deals (mean value)",
    )
    ap.add_argument("--first", type=int, default=2000, help="first evaluation deal")
    ap.add_argument("--deals", type=int, default=100, help="how many deals")
    args = ap.parse_args(argv)
    if not 0 <= args.first <= 10**9 or not 1 <= args.deals <= 100_000:
        ap.error("--first must be in 0 … 10**9 and --deals in 1 … 100000")
    game, options = VARIANTS[args.variant]
    try:
        rollout = None
        if args.rollout == "policy":
            from agents.policy import learned_agent

            rollout = learned_agent(args.variant, game=game, options=options)
        agent = rollouts.RolloutSearch(
            game, options, nodes=args.nodes, level=args.level, samples=args.samples,
            candidates=args.candidates, noise=args.noise, hindsight=not args.no_hindsight,
            rollout=rollout, bank=args.bank,
        )  # fmt: skip
    except ValueError as e:
        ap.error(str(e))
    deals = range(args.first, args.first + args.deals)
    start = time.process_time()
    results = play_deals(agent, game, options, deals)
    cpu = time.process_time() - start
    won = sum(r.won for r in results)
    lo, hi = wilson_interval(won, len(results))
    line = (
        f"{args.variant} nodes={args.nodes} level={args.level} samples={args.samples} "
        f"candidates={args.candidates} bank={args.bank} rollout={args.rollout} noise={agent.noise:g} hindsight={not args.no_hindsight} deals {deals.start}-{deals.stop - 1}: "
        f"{won}/{len(results)} = {won / len(results):.1%} ({lo:.1%}-{hi:.1%}), "
        f"{cpu / len(results):.2f} CPU s per game, "
        f"{agent.nodes_spent / max(agent.decisions, 1):.0f} nodes per move"
    )
    print(line)
    return line


if __name__ == "__main__":
    main()
