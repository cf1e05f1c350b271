"""The committed evaluations (``experiments/results/``: ``baselines/``, ``solver/`` and
``learned/``, merged into ``summary/``) are what the shipped players play now.

Each folder's ``results.json`` records the command that played its games (``played_by`` where the
folder merged them from an earlier run); the tests read that command's arguments (seed, solver
budget, deals) with ``evaluate.py``'s own parser, replay a sample of the folder's games and
compare them, row for row, with ``episodes.csv``. The solver's replays must
also give the recorded verdicts. The tables are rebuilt from the committed games and compared
with the committed summaries, and every folder that counts solver-solvable deals must use
``solver/``'s verdicts.

A change to the engine, a player or the solver that changes a committed game makes these fail:
rerun that folder's command (``experiments/results/README.md``) in the same change.

The sample: the random player and the PPO baseline (:data:`BATCHED`) draw their moves for a
whole batch of games at once, so their games are replayed as one whole batch of ``evaluate.py``
(the last one); the other players play each game on its own, so a fixed random sample of deals
is replayed (of the solver's, only a few of those that ran out of its budget: :data:`UNKNOWN`).
"""

from __future__ import annotations

import csv
import json
import shlex
import zlib

import numpy as np
import pytest
from scripts import ROOT, experiment

from agents.named import make_agent, puct_budget, search_budget
from agents.play import VARIANTS, eval_deals, play_deals
from experiments.evaluation.run import BATCH, verdict

EVALUATE = experiment("evaluate")
RESULTS = ROOT / "experiments" / "results"
MERGED = ("baselines", "solver", "learned", "ppo", "search")  # merged into summary/
PLAYED = (*MERGED, "search_budget")  # the folders whose command plays games
SUMMARY = "summary"
SAMPLE = {"solver": 40, "greedy": 12, "learned": 12, "search": 2}
BATCHED = ("random", "ppo")
"""Players that draw their moves for a whole batch of games at once: the last batch is replayed."""  # deals replayed per variant
UNKNOWN = 4
"""Of the solver's sampled deals, at most this many that ran out of budget: each such replay costs
the whole budget (50,000 nodes), and in Double Solitaire with Vegas scoring nearly every deal
runs out (DS1-D1V: 995 of 1000); the sample's other deals are all replayed."""
LARGE_BUDGET = 1024
"""The search player's budget curve (``search_budget/``) from this many nodes per move is replayed
by ``make test-all`` only (test mark ``manual``): seconds per game, the same player as the
smaller budgets and the shipped one (256 nodes), which every run replays."""
LARGE_PUCT = 256
"""The same for the tree search (``puct@N``): its games at this many nodes per move and more
(SH1-C4's ``puct@256``: 25 s for its sample) are replayed by ``make test-all`` only; its games at
16 and 64 nodes, the same player, every run replays."""
LONG_BATCHES = {("ppo", "DS1-D1N"), ("ppo", "DS1-D3N")}
"""Whole-batch replays of ``make test-all`` only (mark ``manual``): the PPO baseline's last batch
of Double Solitaire is 232 games of about 1,700 moves, 25 s each; the same player's Seahaven and
Réfléchi batches, every other player's Double Solitaire games and ``test_ppo_baselines.py``'s
check of the checkpoints against their curves run every time."""


def _searching(policy: str) -> bool:
    """Whether ``policy`` names a search (rollouts or tree, at some budget)."""
    return search_budget(policy) is not None or puct_budget(policy) is not None


def _result(folder: str) -> dict:
    return json.loads((RESULTS / folder / "results.json").read_text(encoding="utf-8"))


def _command(folder: str, tag: str, policy: str) -> str:
    """The command that played ``folder``'s games of ``tag`` and ``policy``: the folder's own,
    or, for games it merged from an earlier run, that run's (``played_by``)."""
    result = _result(folder)
    return result["summaries"][tag][policy].get("played_by", result["command"])


def _args(command: str):
    """The arguments of ``command``, as ``evaluate.py`` parses them."""
    argv = shlex.split(command)
    assert argv[:2] == ["python", "experiments/evaluate.py"], argv
    return EVALUATE.build_parser().parse_args(argv[2:])


def _episodes(folder: str) -> dict[tuple[str, str], list[dict]]:
    with (RESULTS / folder / "episodes.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        out.setdefault((row["variant"], row["policy"]), []).append(row)
    return out


def _verdicts(folder: str) -> dict:
    path = RESULTS / folder / "verdicts.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _case(folder: str, tag: str, policy: str):
    budget = search_budget(policy)
    large = folder == "search_budget" and budget is not None and budget.nodes >= LARGE_BUDGET
    large = large or (folder == "search_budget" and (puct_budget(policy) or 0) >= LARGE_PUCT)
    large = large or (policy, tag) in LONG_BATCHES
    return pytest.param(folder, tag, policy, marks=[pytest.mark.manual] if large else [])


CASES = [_case(folder, tag, policy) for folder in PLAYED for tag, policy in _episodes(folder)]


def _deals(folder: str, tag: str, policy: str) -> list[int]:
    args = _args(_command(folder, tag, policy))
    deals = eval_deals(args.deals, args.first_deal)
    if policy in BATCHED:
        return deals[(len(deals) - 1) // BATCH * BATCH :]
    rng = np.random.default_rng(zlib.crc32(f"{folder}/{tag}/{policy}".encode()))
    sample = SAMPLE["search" if _searching(policy) else policy]
    chosen = sorted(int(d) for d in rng.choice(deals, sample, replace=False))
    if policy == "solver":
        verdicts = _verdicts("solver")["verdicts"][tag]
        unknown = [d for d in chosen if verdicts[str(d)] == "unknown"]
        chosen = sorted(set(chosen) - set(unknown[UNKNOWN:]))
    return chosen


def test_every_folder_is_checked():
    folders = sorted(p.name for p in RESULTS.iterdir() if (p / "episodes.csv").exists())
    assert folders == sorted((*PLAYED, SUMMARY)), "an evaluation folder no test replays"
    names = {case.values[2] for case in CASES}
    assert {p for p in names if not _searching(p)} == {
        "random",
        "greedy",
        "solver",
        "learned",
        "ppo",
    }
    assert "search" in names and len(names) > 5  # the shipped budget, and the budget curve


@pytest.mark.parametrize(("folder", "tag", "policy"), CASES)
def test_games_replay(folder, tag, policy):
    args = _args(_command(folder, tag, policy))
    assert policy in args.policies.split(","), (folder, policy)
    recorded = {int(r["deal"]): r for r in _episodes(folder)[(tag, policy)]}
    assert sorted(recorded) == eval_deals(args.deals, args.first_deal), (folder, tag, policy)
    deals = _deals(folder, tag, policy)
    agent = make_agent(policy, tag, seed=args.seed, solver_nodes=args.solver_nodes,
                       solver_seconds=args.solver_seconds)  # fmt: skip
    game, options = VARIANTS[tag]
    results = play_deals(agent, game, options, deals, batch_size=BATCH)
    for r in results:
        now = {"variant": tag, "policy": policy} | {k: str(v) for k, v in r.to_dict().items()}
        assert now == recorded[r.deal], (
            f"{folder}/{tag}/{policy}, deal {r.deal}: the committed game is not what the code "
            f"plays now: rerun the command of experiments/results/{folder}"
        )
    if policy == "solver":
        committed = _verdicts(folder)
        assert committed["solver_budget"] == {"max_nodes": args.solver_nodes,
                                              "max_seconds": args.solver_seconds}  # fmt: skip
        for r in results:
            verdict_now = verdict(agent.verdicts, r)
            assert verdict_now == committed["verdicts"][tag][str(r.deal)], (
                f"{tag} deal {r.deal}: the solver's verdict changed: rerun experiments/results/solver"
            )


@pytest.mark.parametrize("folder", [*PLAYED, SUMMARY])
def test_tables_are_built_from_the_games(folder, tmp_path):
    """The folder's summaries, rebuilt from its committed games (a run that plays nothing), are
    the committed ones; a folder that counts solver-solvable deals uses ``solver/``'s verdicts."""
    sources = [RESULTS / f for f in MERGED] if folder == SUMMARY else [RESULTS / folder]
    committed = _result(folder)
    argv = ["--policies", "", "--deals", str(committed["deals"]["count"]), "--no-plots"]
    for src in sources:
        argv += ["--include", str(src)]
    rebuilt = EVALUATE.main_result([*argv, "--out", str(tmp_path)])
    assert list(rebuilt["summaries"]) == list(committed["summaries"])
    for tag, by_policy in committed["summaries"].items():
        assert list(rebuilt["summaries"][tag]) == list(by_policy), tag
        for policy, summary in by_policy.items():
            again = dict(rebuilt["summaries"][tag][policy])
            # the rebuild names the command that played the games: this folder's, or its own
            assert again.pop("played_by") == _command(folder, tag, policy), (tag, policy)
            summary = {k: v for k, v in summary.items() if k != "played_by"}
            assert again == summary, f"{folder}: {tag} {policy} is not built from its games"
    if (RESULTS / folder / "verdicts.json").exists():
        assert _verdicts(folder) == _verdicts("solver"), f"{folder}: not solver/'s verdicts"
    if folder == SUMMARY:
        merged = {k: rows for f in MERGED for k, rows in _episodes(f).items()}
        assert _episodes(SUMMARY) == merged, "summary/ is not the merge of the other folders"


def test_budget_table_is_built_from_the_games():
    """``search_budget/budget.md`` is what ``experiments/search_budget.py`` makes of the
    committed games."""
    table, _ = experiment("search_budget").budget_table(RESULTS / "search_budget")
    assert table == (RESULTS / "search_budget" / "budget.md").read_text(encoding="utf-8")
