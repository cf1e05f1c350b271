"""Which moves make the solver's undecided searches large: the same deals searched in one run
(no restarts, no side runs) with every move, without take-backs from a foundation
(``FL_NO_TAKEBACK``), without splits of a built sequence between columns (``FL_NO_SPLIT``), and
without either, each with a CPU-time budget; optionally (Double Solitaire with Vegas scoring) a
beam search for a win as well.

    python benchmarks/bench_move_sets.py                  # Vegas: deals 1-4 of draw 1 and 3, 20 s
    python benchmarks/bench_move_sets.py --variants TF1-D1N TF1-D3N   # Réfléchi proofs of loss
    python benchmarks/bench_move_sets.py --variants DS1-D1V --deals 1 2 --beam 100

A run with fewer moves that ends without a win has searched its whole smaller game (``ended``).
Where the smaller games end and the whole one does not, or ends much later, the moves left out
are what makes the search large; where they do not end either, the size is elsewhere (for Vegas:
the stock's single pass and the tableau moves that remain). Every mode is one run, so that the
positions are those of one search; the whole search is the reference, in the same run, for the
positions per CPU second. Default deals: Vegas, deals 1-4; Réfléchi, the six deals of the
solvability study (``experiments/results/solvability``) proven lost in the most positions.

``--beam WIDTH`` (Vegas only): a beam search through the Game API (slow: a few thousand positions
a second). From the deal, every legal move of every position in the beam; the ``WIDTH`` new
positions (not met before, by the solver's position key) that score best (cards home x 10, minus
face-down cards x 6, minus waste cards x 2) form the next beam. It reports the most cards it had
home, and a win if it finds one (checked by ``solver.certify``). It proves nothing: a measure of
how far a search that looks only ahead gets.
"""

from __future__ import annotations

import argparse
import statistics
import time

from solitaire_gym import Game
from solitaire_gym.engine.variants import MAX_DEAL
from solitaire_gym.solver import certify, search, solve
from solitaire_gym.solver.batch import parse_variant
from solitaire_gym.solver.keys import position_key
from solitaire_gym.solver.layout import FL_NO_SPLIT, FL_NO_TAKEBACK, R_NONE

DEALS = {  # variant: default deals
    "DS1-D1V": [1, 2, 3, 4],
    "DS1-D3V": [1, 2, 3, 4],
    "TF1-D1N": [418, 999, 964, 25, 343, 804],
    "TF1-D3N": [156, 465, 821, 798, 804, 443],
}
MODES = {  # name: flags (one run each)
    "every move": 0,
    "no take-backs": FL_NO_TAKEBACK,
    "no splits": FL_NO_SPLIT,
    "no splits or take-backs": FL_NO_SPLIT | FL_NO_TAKEBACK,
}


def _key(g: Game) -> tuple[int, int]:
    """The solver's own key of the position (``keys.position_key`` with the solver's table:
    columns as a multiset, the two piles of a suit as a pair), so that the beam counts a position
    once, as the solver does."""
    h1, h2 = position_key(g.state, g.cfg, search._zobrist(), R_NONE, -1, 0)
    return int(h1), int(h2)


def _score(g: Game) -> int:
    s = g.state
    return 10 * int(s.found[0].sum()) - 6 * int(s.tab_down[0].sum()) - 2 * int(s.waste_len[0])


def beam(code: str, width: int, seconds: float) -> tuple[bool, int, float]:
    """(won, most cards home, CPU seconds) of the beam search described above."""
    t0 = time.process_time()
    start = Game.from_code(code, undo_depth=0)
    layer = [start]
    back: list[list[tuple[int, str]]] = []  # per step: (parent in the layer before, move)
    seen = {_key(start)}
    most = 0
    while layer and time.process_time() - t0 < seconds:
        children = []
        for i, g in enumerate(layer):
            for a in g.legal_actions():
                c = g.copy()
                move = g.move_text(int(a))
                c.play(int(a))
                k = _key(c)
                if k in seen:
                    continue
                seen.add(k)
                if c.won:
                    line = [move]
                    for step in reversed(back):
                        i, m = step[i]
                        line.append(m)
                    line.reverse()
                    certify(start.to_dict(), line)
                    return True, int(c.state.found[0].sum()), time.process_time() - t0
                children.append((_score(c), len(children), c, i, move))
        children.sort(key=lambda x: (-x[0], x[1]))
        kept = children[:width]
        layer = [c for _, _, c, _, _ in kept]
        back.append([(i, m) for _, _, _, i, m in kept])
        if layer:
            most = max(most, max(int(c.state.found[0].sum()) for c in layer))
    return False, most, time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+", choices=sorted(DEALS), default=["DS1-D1V", "DS1-D3V"])
    ap.add_argument("--deals", nargs="+", type=int, help="deal numbers (default: see above)")
    ap.add_argument("--seconds", type=float, default=20.0, help="CPU seconds per search")
    ap.add_argument("--beam", type=int, default=0, help="Vegas: beam width (0: no beam search)")
    ap.add_argument("--beam-seconds", type=float, default=120.0, help="CPU seconds per beam")
    args = ap.parse_args(argv)
    if not args.seconds > 0 or not args.beam_seconds > 0:
        ap.error("--seconds and --beam-seconds must be more than 0")
    if args.beam < 0:
        ap.error("--beam is a width, 0 or more")
    if args.deals and any(not 0 <= d <= MAX_DEAL for d in args.deals):
        ap.error(f"deal numbers are 0 … {MAX_DEAL}")
    solve(parse_variant(args.variants[0]).code(1), max_nodes=1000)  # compile
    print(f"{args.seconds:g} CPU s per search, one run each; ended: it searched its whole game")
    print(f"{'deal':<18} {'moves':<24} {'result':<22} {'positions':>10} {'pos/s':>8} {'home':>4}")
    for tag in args.variants:
        variant = parse_variant(tag)
        deals = args.deals or DEALS[tag]
        ended = dict.fromkeys(MODES, 0)
        homes: dict[str, list[int]] = {m: [] for m in MODES}
        rates: dict[str, list[float]] = {m: [] for m in MODES}
        nodes: dict[str, list[int]] = {m: [] for m in MODES}
        for deal in deals:
            code = variant.code(deal)
            for mode, flags in MODES.items():
                r = solve(
                    code, max_seconds=args.seconds, clock="cpu", _flags=flags, _restarts=False
                )
                if r.verdict == "unknown" and r.reason == "incomplete":
                    result = "ended, no win"
                else:
                    result = r.verdict + (f" ({r.reason})" if r.reason else "")
                ended[mode] += r.decided or r.reason == "incomplete"
                rate = r.nodes / max(r.seconds, 1e-9)
                home = r.stats["most_home"]
                homes[mode].append(home)
                rates[mode].append(rate)
                nodes[mode].append(r.nodes)
                print(f"{code:<18} {mode:<24} {result:<22} {r.nodes:>10} {rate:>8.0f} {home:>4}")
            if args.beam and variant.vegas:
                won, most, secs = beam(code, args.beam, args.beam_seconds)
                result = "won" if won else "no win"
                print(f"{code:<18} {f'beam of {args.beam}':<24} {result:<22} {'':>10} {'':>8} "
                      f"{most:>4}  ({secs:.0f} s)")  # fmt: skip
        print(f"{tag}: {len(deals)} deals")
        base = statistics.median(rates["every move"])
        every = sum(nodes["every move"])
        for mode in MODES:
            print(
                f"  {mode:<24} ended or decided {ended[mode]}, positions "
                f"{sum(nodes[mode]) / every:.2f} x every move's, cards home at most (median) "
                f"{statistics.median(homes[mode]):g}, positions/s "
                f"{statistics.median(rates[mode]) / base:.2f} x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
