"""An evaluation run: every policy plays the same deals of each variant, here or (``--ray``) in
ranges of deals on Ray, and the outputs are written after each policy and variant.

The players: the named policies (``agents.named.make_agent``: random, greedy, learned, search,
puct, solver) and the checkpoints of ``--checkpoint`` (an ``.npz``: a policy network or a
MaskablePPO policy's weights; or a MaskablePPO zip), each on the variant it was trained on or the one its argument names. The games of earlier
runs come in through :mod:`experiments.evaluation.merge`; the files go out through
:mod:`experiments.evaluation.records`, the plots through :mod:`experiments.evaluation.plots`.
"""

from __future__ import annotations

import copy
import functools
import shlex
import sys
import time
from pathlib import Path

from agents.named import POLICY_NAMES, is_policy_name, make_agent
from agents.play import VARIANTS, EpisodeResult, eval_deals, play_chunk, play_deals
from agents.stats import summarize
from experiments.evaluation import records
from experiments.evaluation.merge import load_included, replace_traces
from experiments.evaluation.plots import plot_learning_curves, plot_win_rates
from experiments.evaluation.records import (
    POLICY_NAME,
    atomic_output,
    csv_line,
    read_verdicts,
    trace_path,
)
from experiments.evaluation.tables import console_line
from solitaire_gym.errors import SolitaireError, shown
from solitaire_gym.solver import VERDICTS
from solitaire_gym.traces import save_trace

BATCH = 256
"""Games played together (``play_deals``' batch size); Ray tasks are cut at multiples of it, so
that a sampling policy, whose generator restarts with every batch, plays the same games."""


def checkpoint_specs(items: list[str]) -> list[tuple[str | None, str, Path]]:
    """The ``--checkpoint`` arguments, ``[NAME@][TAG=]PATH`` (or ``NAME=PATH``), as (tag or None,
    name, path); a checkpoint not named is ``ppo`` (``ppo1``, ``ppo2``, … when there are
    several)."""
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
            raise SystemExit(f"evaluate.py: --checkpoint name {shown(name)} is not a policy name "
                             "(1 to 64 letters, digits, '_', '.', '-', from a letter or digit)")  # fmt: skip
        out.append((tag.upper() or None, name, Path(path)))
    return out


def verdict(known: dict, r) -> str:
    """The solver's verdict on the deal of its game ``r``: what it learnt (``known``, by code),
    else unsolvable for a deal with no legal first move, else unknown."""
    k = known.get(r.code)
    if k is not None:
        return k["verdict"]
    return "unsolvable" if r.end == "stuck" and r.steps == 0 else "unknown"


def load_zip(path: str, data: bytes, kwargs: dict):
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


def player(args, kind: str, name: str, tag: str, path: Path | None,
           solver_cache: dict) -> functools.partial:  # fmt: skip
    """What builds the player ``name`` of the variant ``tag``, in this process or in a Ray task:
    the named policy ``kind`` (``make_agent``), or, for ``kind`` ``checkpoint``, the one at
    ``path``: an ``.npz`` (``agents.named.load_npz``: a policy network, played
    deterministically, or a MaskablePPO policy's weights, played as its zip would be) or a
    MaskablePPO zip. A
    checkpoint is loaded here once first, so that one that does not fit stops the run before any
    task starts."""
    game, options = VARIANTS[tag]
    if kind == "checkpoint" and path.suffix == ".npz":  # a policy network or PPO weights
        from agents.named import load_npz, npz_format
        from agents.policy import FORMAT, CheckpointError

        try:
            # a policy network plays deterministically; MaskablePPO weights as its zip would
            ppo = npz_format(path) != FORMAT
            kw = {"game": game, "options": options, "name": name,
                  "deterministic": bool(args.deterministic) or not ppo, "seed": args.seed,
                  "device": args.device}  # fmt: skip
            load_npz(path, **kw)  # refused here, before any task runs
        except CheckpointError as e:
            raise SystemExit(f"evaluate.py: {e}") from None
        return functools.partial(load_npz, str(path), **kw)
    if kind == "checkpoint":
        from agents.learned import CheckpointMismatch, MaskablePPOAgent

        kw = {"game": game, "options": options, "name": name,
              "deterministic": args.deterministic, "seed": args.seed,
              "trusted": args.trusted, "device": args.device}  # fmt: skip
        try:
            MaskablePPOAgent.load(path, **kw)  # refused here, before any task runs
        except CheckpointMismatch as e:
            raise SystemExit(f"evaluate.py: {e}") from None
        data = path.read_bytes() if args.ray is not None else b""
        return functools.partial(load_zip, str(path), data, kw)
    return functools.partial(make_agent, kind, tag, seed=args.seed,
                             solver_nodes=args.solver_nodes,
                             solver_seconds=args.solver_seconds,
                             solver_cache=solver_cache,
                             device=args.device)  # fmt: skip


def evaluate(args) -> dict:
    """Run the evaluation described by the parsed ``args``; write the outputs after every policy
    and variant (an interrupted run keeps what it finished); return the results dict."""
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
                             "search@N, puct@N; other checkpoints with --checkpoint)")  # fmt: skip
    checkpoints = checkpoint_specs(args.checkpoint or [])
    trained_on = {}  # checkpoint -> the variant it was trained on (None: not recorded)
    for _, _, path in checkpoints:
        from agents.learned import CheckpointMismatch, read_checkpoint_meta
        from agents.named import read_npz_meta
        from agents.policy import CheckpointError

        if not path.exists():
            raise SystemExit(f"evaluate.py: no checkpoint at {path}")
        try:
            meta = (
                read_npz_meta(path)
                if path.suffix == ".npz"
                else read_checkpoint_meta(path, trusted=args.trusted)
            )
        except (CheckpointError, CheckpointMismatch) as e:
            raise SystemExit(f"evaluate.py: {e}") from None
        trained_on[path] = meta.get("variant")
    deals = eval_deals(args.deals, args.first_deal)
    episodes, extras, verdicts, budget, replaced = load_included(
        args.include or [], deals, args.replace or []
    )
    if args.verdicts:  # they replace the included folders' verdicts
        verdicts, budget = {}, {}
        read_verdicts(Path(args.verdicts), verdicts, budget)
    solver_budget = {"max_nodes": args.solver_nodes, "max_seconds": args.solver_seconds}
    if "solver" in policies and budget and budget != solver_budget:
        raise SystemExit(f"evaluate.py: the solver would play with the budget {solver_budget}, "
                         f"the verdicts read in were made with {budget}: pass the same "
                         "--solver-nodes and --solver-seconds, or rerun them all")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    record = deals[: args.traces]
    replace_traces(out, episodes, replaced)
    solver_cache: dict = {}
    started = time.time()
    command = "python experiments/evaluate.py " + " ".join(shlex.quote(a) for a in args.argv)

    def write_outputs() -> dict:
        """The summaries of this run's games and the included ones, written out."""
        seconds = round(time.time() - started, 1)
        return records.write_outputs(out, command, deals, seconds, episodes, extras, verdicts,
                                     budget)  # fmt: skip

    for tag in tags:
        game, options = VARIANTS[tag]
        plan = [(p, p, None) for p in policies]
        for ptag, name, path in checkpoints:
            if ptag == tag or (ptag is None and trained_on[path] in (None, tag)):
                plan.append((name, "checkpoint", path))
        for name, kind, path in plan:
            make = player(args, kind, name, tag, path, solver_cache)
            t0, cpu0 = time.time(), time.process_time()
            results, known, search = play(args, make, game, options, deals, record)
            extra: dict = {"seconds": round(time.time() - t0, 1)}
            if search:  # the search player: its nodes per move and CPU seconds per game
                extra |= search
                extra["cpu_seconds_per_game"] = round((time.process_time() - cpu0) / len(deals), 3)
            if kind == "checkpoint":
                extra["checkpoint"] = str(path)
                extra["trained_on"] = trained_on[path]
                extra["deterministic"] = bool(args.deterministic)
            if kind == "solver":
                extra["solver_budget"] = dict(solver_budget)
                budget.update(solver_budget)
                verdicts[tag] = {r.deal: verdict(known, r) for r in results}
                extra["verdicts"] = {v: sum(x == v for x in verdicts[tag].values())
                                     for v in VERDICTS}  # fmt: skip
            extras[(tag, name)] = extra
            # a replaced variant and policy keeps its place in the files
            episodes[(tag, name)] = [csv_line((tag, name, *r.to_dict().values())) for r in results]
            solvable = {d: v == "solvable" for d, v in verdicts.get(tag, {}).items()} or None
            print(console_line(tag, name, summarize(results, solvable) | extra), flush=True)
            write_outputs()
            for r in results:  # recorded: the first --traces deals (the solver's, if it won)
                if r.trace is not None and (r.trace or kind != "solver"):
                    try:
                        save_trace(trace_path(out, tag, name, r.code), r.code, r.trace,
                                   agent=name, scores=r.scores)  # fmt: skip
                    except SolitaireError as e:
                        raise SystemExit(f"evaluate.py: {e}") from None
    result = write_outputs()
    summaries = result["summaries"]
    if not args.no_plots and summaries:
        with atomic_output(out / "win_rates.png", out) as tmp:
            plot_win_rates(result, tmp)
        if args.runs:
            with atomic_output(out / "learning_curves.png", out) as tmp:
                plot_learning_curves(args.runs, tmp, summaries)
    return result
