"""What a node of the search player costs: CPU µs per node of ``search@N`` against CPU µs per move
of the greedy player, whose moves a node's rollouts replay, in the same run.

    python benchmarks/bench_search.py                          # SH1-C4, TF1-D3N, DS1-D3N at 256
    python benchmarks/bench_search.py --nodes 1024 --deals 8
    python benchmarks/bench_search.py --finder 2               # also the Vegas finder, DS1-D1V deal 2

A node is one move the engine applies inside the search (``docs/search.md``); the reference is
the greedy player's move, its choice and the engine's step, with ``--batch`` games of the same
variant played at once (the search, too, steps its copies as the rows of one batch, so Python's
cost per step is shared alike). Their ratio is what the search's own work (copies,
determinizations, noise, values, lines, smaller batches) adds to each simulated move: it holds on
a busy machine where the µs do not. Times are this process's CPU seconds, one numba thread, after
a first game (greedy) or first moves (search) have compiled the kernels. ``--finder DEAL`` adds
the win finder (``finder@4096``, patience 120) on that DS1-D1V deal, against greedy on DS1-D1V.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _time(agent, game, options, deals, warm: int | None = 5, **kw) -> tuple[float, list]:
    from agents.play import play_deals

    play_deals(agent, game, options, deals[:1], max_episode_steps=warm)  # compiles
    start = time.process_time()
    results = play_deals(agent, game, options, deals, **kw)
    return time.process_time() - start, results


def measure(variant: str, player: str, deals: list[int], batch: int, **kw) -> dict:
    """CPU µs per greedy move (deals 0 … ``batch``-1 in one batch) and per search node on
    ``deals``, and the search's games."""
    from agents import make_agent
    from agents.greedy import GreedyAgent
    from agents.play import VARIANTS

    game, options = VARIANTS[variant]
    g_cpu, g_res = _time(GreedyAgent(game, options), game, options, list(range(batch)), None)
    if player.startswith("finder@"):
        from agents.search.finder import WinFinder

        agent = WinFinder(game, options, nodes=int(player[7:]), patience=120, seed=0)
    else:
        agent = make_agent(player, variant)
    s_cpu, s_res = _time(agent, game, options, deals, **kw)
    g_us = 1e6 * g_cpu / max(1, sum(r.moves for r in g_res))
    s_us = 1e6 * s_cpu / max(1, agent.nodes_spent)
    return {
        "variant": variant, "player": player, "deals": len(deals), "greedy_us": g_us,
        "node_us": s_us, "ratio": s_us / g_us, "cpu_per_game": s_cpu / len(deals),
        "won": sum(r.won for r in s_res), "nodes": agent.nodes_spent,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default="SH1-C4,TF1-D3N,DS1-D3N")
    ap.add_argument("--nodes", type=int, default=256, help="the search's nodes per move")
    ap.add_argument("--deals", type=int, default=4, help="evaluation deals 0 … N-1")
    ap.add_argument(
        "--batch", type=int, default=256, help="games the greedy reference plays at once"
    )
    ap.add_argument("--finder", type=int, default=None, metavar="DEAL",
                    help="also the Vegas win finder on this DS1-D1V deal")  # fmt: skip
    args = ap.parse_args(argv)
    if not 1 <= args.deals <= 1000 or not 1 <= args.batch <= 4096 or not 1 <= args.nodes <= 1 << 20:
        ap.error("--deals takes 1 … 1000, --batch 1 … 4096 and --nodes 1 … 2**20")
    from agents.play import VARIANTS

    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        ap.error(f"no variant {', '.join(unknown)}: the variants are {', '.join(VARIANTS)}")
    print(f"load average before: {_load()}")
    rows = [measure(v, f"search@{args.nodes}", list(range(args.deals)), args.batch)
            for v in variants]  # fmt: skip
    if args.finder is not None:
        rows.append(measure("DS1-D1V", "finder@4096", [args.finder], args.batch,
                            max_episode_steps=500))  # fmt: skip
    print("| variant | player | deals | greedy µs per move | search µs per node | node / greedy move"
          " | search CPU s per game | won | nodes |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['variant']} | {r['player']} | {r['deals']} | {r['greedy_us']:.1f} | "
              f"{r['node_us']:.2f} | {r['ratio']:.2f} | {r['cpu_per_game']:.2f} | {r['won']} | "
              f"{r['nodes']} |")  # fmt: skip
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
