"""The search player (``agents/search``) and the engine's determinizations
(``solitaire_gym.engine.information``): blind to hidden cards, deterministic, within its budget,
and better than the greedy player it rolls out."""

from __future__ import annotations

import numpy as np
import pytest
from scripts import experiment

from agents import make_agent, play_deals
from agents.base import GameView
from agents.named import is_policy_name, search_budget
from agents.play import VARIANTS
from agents.search import DEFAULT_NODES, RolloutSearch, plan
from agents.search.rollouts import NAMED_BANK, POLICY_NOISE
from solitaire_gym.engine.information import copy_rows, redeal_unseen, unseen_counts
from solitaire_gym.envs import kernels
from solitaire_gym.envs.core import EnvCore, EnvOptions
from solitaire_gym.errors import ArgumentError

HIDDEN = ("DS1-D1N", "DS1-D3N", "TF1-D1N", "TF1-D3N")


def _core(tag: str, rows: int) -> EnvCore:
    game, options = VARIANTS[tag]
    return EnvCore(EnvOptions.build(game, **options, split="eval"), rows)


def _cards(state, row: int) -> list[int]:
    """Every card of a game, wherever it lies (a multiset)."""
    out = [int(c) for c in state.tab[row].ravel() if c >= 0]
    out += [int(c) for c in state.stock[row, : state.stock_len[row]]]
    out += [int(c) for c in state.waste[row, : state.waste_len[row]]]
    return sorted(out)


@pytest.mark.parametrize("tag", [*HIDDEN, "SH1-C4"])
def test_redeal_moves_only_unseen_cards(tag):
    core = _core(tag, 3)
    core.deal(np.arange(3), np.array([5, 5, 5]))
    copy_rows(core.state, [1, 2], core.state, [0, 0])
    redeal_unseen(core.state, [1], np.random.default_rng(1))
    redeal_unseen(core.state, [2], np.random.default_rng(2))
    core.refresh(np.arange(3))
    s = core.state
    assert _cards(s, 0) == _cards(s, 1) == _cards(s, 2)
    # what the player sees is the same: the observations are equal
    assert np.array_equal(core.obs[0], core.obs[1]) and np.array_equal(core.obs[0], core.obs[2])
    n = int(unseen_counts(s, [0])[0])
    if tag == "SH1-C4":
        assert n == 0 and np.array_equal(s.tab[0], s.tab[1])
    else:
        assert n > 0
        assert not (np.array_equal(s.tab[1], s.tab[2]) and np.array_equal(s.stock[1], s.stock[2]))
        # sorted (no generator): one canonical position per information state
        redeal_unseen(s, [1, 2])
        assert np.array_equal(s.tab[1], s.tab[2]) and np.array_equal(s.stock[1], s.stock[2])


def test_information_functions_check_their_input():
    core = _core("TF1-D1N", 2)
    with pytest.raises(ArgumentError, match="row 2"):
        redeal_unseen(core.state, [2])
    with pytest.raises(ArgumentError, match="integers"):
        unseen_counts(core.state, [0.5])
    with pytest.raises(ArgumentError, match="Generator"):
        redeal_unseen(core.state, [0], rng=3)
    with pytest.raises(ArgumentError, match="source rows"):
        copy_rows(core.state, [0, 1], core.state, [0])


def test_row_skip_leaves_the_row_alone():
    core = _core("SH1-C4", 2)
    core.deal(np.arange(2), np.array([3, 4]))
    obs = core.obs.copy()
    first = int(np.flatnonzero(core.masks[0])[0])
    core.obs[1] = -1.0  # a skipped row's buffers are not rewritten either
    core.step(np.array([first, kernels.ROW_SKIP], np.int64))
    assert not np.array_equal(core.obs[0], obs[0])
    assert (core.obs[1] == -1.0).all()


def assert_blind(agent, tag: str, steps: int) -> None:
    """Move after move, the game is copied with its hidden cards dealt otherwise (the same
    observation, the same history): ``agent`` picks the same move in both; the two games really
    differ in their hidden cards."""
    core = _core(tag, 2)
    core.deal(np.arange(2), np.array([11, 11]))
    agent.reset(2)
    starts = np.ones(2, bool)
    for step in range(steps):
        copy_rows(core.state, [1], core.state, [0])
        redeal_unseen(core.state, [1], np.random.default_rng(100 + step))
        core.refresh(np.arange(2))
        s = core.state
        assert not (np.array_equal(s.tab[0], s.tab[1]) and np.array_equal(s.stock[0], s.stock[1]))
        assert np.array_equal(core.obs[0], core.obs[1])
        if not core.masks[0].any():
            break
        act = agent.act(core.obs, core.masks, starts=starts, view=GameView(core))
        starts[:] = False
        assert act[0] == act[1]
        core.step(np.array([act[0], kernels.ROW_SKIP], np.int64))


@pytest.mark.parametrize("tag", HIDDEN)
def test_search_is_blind_to_hidden_cards(tag):
    game, options = VARIANTS[tag]
    assert_blind(RolloutSearch(game, options, nodes=48, seed=3), tag, 12)


@pytest.mark.parametrize("tag", ["TF1-D3N", "SH1-C4"])
def test_search_is_deterministic_and_independent_of_its_batch(tag):
    """Determinizations (TF1-D3N) and noisy rollouts (SH1-C4) draw from each game's own
    generator: a game plays the same alone, in a batch, and again."""
    game, options = VARIANTS[tag]
    deals = [0, 1, 2]
    together = play_deals(RolloutSearch(game, options, nodes=32), game, options, deals)
    again = play_deals(RolloutSearch(game, options, nodes=32), game, options, deals)
    alone = [play_deals(RolloutSearch(game, options, nodes=32), game, options, [d])[0]
             for d in deals]  # fmt: skip
    for a, b, c in zip(together, again, alone, strict=True):
        assert a.to_dict() == b.to_dict() == c.to_dict()


@pytest.mark.parametrize(("tag", "level"), [("SH1-C4", 1), ("SH1-C4", 2), ("TF1-D1N", 1)])
def test_search_stays_within_its_budget(tag, level, monkeypatch):
    """Every decision, further waves included, spends at most its budget (counted per decision:
    the agent's counter is read after each move)."""
    game, options = VARIANTS[tag]
    agent = RolloutSearch(game, options, nodes=100, level=level)
    spent = []
    decide = agent._decide

    def counted(*args):
        before = agent.nodes_spent
        out = decide(*args)
        spent.append(agent.nodes_spent - before)
        return out

    monkeypatch.setattr(agent, "_decide", counted)
    results = play_deals(agent, game, options, [7, 8, 9], max_episode_steps=30)
    assert agent.decisions == sum(r.steps for r in results) > 0
    assert agent.nodes_spent > 0 and max(spent) <= 100 * 3  # three games decide together


def test_search_spends_what_short_rollouts_leave_on_further_waves(monkeypatch):
    """Seahaven rollouts often end stuck long before their length: the budget they leave pays
    for further waves (noisy rollouts), never more than the budget in all."""
    game, options = VARIANTS["SH1-C4"]
    agent = RolloutSearch(game, options, nodes=1024)
    waves = []
    wave = agent._wave

    def counted(*args):
        waves.append(agent.nodes_spent)
        return wave(*args)

    monkeypatch.setattr(agent, "_wave", counted)
    core = _core("SH1-C4", 1)
    core.deal(np.arange(1), np.array([2]))
    agent.act(core.obs, core.masks, starts=np.ones(1, bool), view=GameView(core))
    assert len(waves) >= 2 and 0 < waves[1] < agent.nodes_spent <= 1024


def test_search_follows_a_won_line_without_searching():
    """Seahaven hides nothing: once a copy is won, the search plays that copy's line on, move
    for move, spending no nodes, and the real game is won as the copy was."""
    game, options = VARIANTS["SH1-C4"]
    agent = RolloutSearch(game, options, nodes=256)
    core = _core("SH1-C4", 1)
    core.deal(np.arange(1), np.array([3]))
    view = GameView(core)
    starts = np.ones(1, bool)
    spent_after_win = None
    for _ in range(400):
        if core.won[0] or core.counts[0] == 0:
            break
        act = agent.act(core.obs, core.masks, starts=starts, view=view)
        starts[:] = False
        line = agent.lines.get(0)
        if spent_after_win is None and line is not None and line.value >= 1:
            spent_after_win = agent.nodes_spent
            expected = line.moves[line.at - 1 :]  # the move just played, then the rest
            played = []
        if spent_after_win is not None:
            played.append(int(act[0]))
        core.step(act)
    assert core.won[0], "deal 3 is won by search@256 (measured)"
    assert spent_after_win is not None and agent.nodes_spent == spent_after_win
    assert played == expected


def test_a_line_is_dropped_when_the_game_plays_another_move():
    game, options = VARIANTS["SH1-C4"]
    agent = RolloutSearch(game, options, nodes=256)
    core = _core("SH1-C4", 1)
    core.deal(np.arange(1), np.array([3]))
    one = np.ones(1, bool)
    move, _ = agent.label(core.obs, core.masks, starts=one, active=one, view=GameView(core))
    assert 0 in agent.lines and agent.lines[0].next == move[0]
    other = int(np.flatnonzero(core.masks[0] & (np.arange(core.masks.shape[1]) != move[0]))[0])
    agent.played(core.obs, core.masks, np.array([other]), one)
    assert 0 not in agent.lines


def test_a_kept_line_gains_on_the_games_record():
    """A line is kept only while it ends won or with more cards home than its game has ever had:
    a line back to the same count (cards taken back from the foundations and put home again)
    would lead the game round in circles (Double Solitaire draw 3 did, at 98 cards of 104;
    without the rule, this game keeps such lines from its 90th move on)."""
    game, options = VARIANTS["TF1-D1N"]
    agent = RolloutSearch(game, options, nodes=64)
    core = _core("TF1-D1N", 1)
    core.deal(np.arange(1), np.array([1]))
    view = GameView(core)
    starts = np.ones(1, bool)
    most, kept = 0, 0
    for _ in range(150):
        if core.won[0] or core.counts[0] == 0:
            break
        most = max(most, int(core.foundation_cards()[0]))
        act = agent.act(core.obs, core.masks, starts=starts, view=view)
        starts[:] = False
        assert agent.record[0] == most
        line = agent.lines.get(0)
        if line is not None:
            kept += 1
            assert line.value >= 1.0 or line.home > most
        core.step(act)
    assert kept > 0


@pytest.mark.parametrize("nodes", [1, 5, 16, 64, 256, 1024, 5000])
@pytest.mark.parametrize("legal", [1, 2, 9, 40])
@pytest.mark.parametrize("level", [1, 2])
def test_plan_never_spends_more_than_the_budget(nodes, legal, level):
    c, k, depth, inner = plan(nodes, legal, 4, level)
    assert 1 <= c <= legal and k >= 1 and depth >= 0
    assert c * k * (1 + depth * (1 + inner)) <= max(nodes, c)


def test_search_beats_greedy_on_seahaven():
    """Look-ahead pays: on 12 Seahaven deals the search wins more than the greedy player it
    rolls out (measured: 7 against 3)."""
    game, options = VARIANTS["SH1-C4"]
    deals = list(range(12))
    greedy = play_deals(make_agent("greedy", "SH1-C4"), game, options, deals)
    search = play_deals(make_agent("search@128", "SH1-C4"), game, options, deals)
    assert sum(r.won for r in search) > sum(r.won for r in greedy)


def test_search_names():
    assert search_budget("search") == (DEFAULT_NODES, 1, False, False, False, False)
    assert search_budget("search@64") == (64, 1, False, False, False, False)
    assert search_budget("search@64-l2") == (64, 2, False, False, False, False)
    assert search_budget("search@64-v") == (64, 1, True, False, False, False)
    assert search_budget("search@64-l2-v") == (64, 2, True, False, False, False)
    assert search_budget("search@64-p") == (64, 1, False, True, False, False)
    assert search_budget("search@64-l2-p-v") == (64, 2, True, True, False, False)
    assert search_budget("search@64-b") == (64, 1, False, False, True, False)
    assert search_budget("search@64-p-b-v") == (64, 1, True, True, True, False)
    assert search_budget("search@64-d") == (64, 1, False, False, False, True)
    assert search_budget("search@64-p-d-b-v") == (64, 1, True, True, True, True)
    assert search_budget("greedy") is None
    assert is_policy_name("search@16") and not is_policy_name("greedier")
    for bad in (
        "search@",
        "search@0",
        "search@x",
        "search@64-l3",
        "search@64-l",
        "search@64-v-l2",
        "search@64-v-p",
        "search@64-p-l2",
        "search@64-pp",
        "search@64-b-p",
        "search@64-v-b",
        "search@64-vv",
        "search@64-b-d",
        "search@64-d-p",
        "search@64-dd",
        "search@64-l2-l2",
        "search@64--v",
        "search@٣",
    ):
        with pytest.raises(ValueError, match="bad search budget"):
            search_budget(bad)
    deep = make_agent("search@1024-d", "DS1-D1N")
    assert (deep.name, deep.candidates, deep.samples) == ("search@1024-d", 4, 2)
    assert RolloutSearch("double_solitaire", {}, nodes=64, candidates=4, samples=2).name == (
        "search@64-d"
    )
    agent = make_agent("search@16-l2", "TF1-D1N")
    assert (agent.name, agent.nodes, agent.level) == ("search@16-l2", 16, 2)
    with pytest.raises(ValueError, match="searches TF1-D1N"):
        agent.check_env("seahaven_towers", {"cells": 4})
    with pytest.raises(ValueError, match="nodes"):
        RolloutSearch("seahaven_towers", {"cells": 4}, nodes=0)
    with pytest.raises(ValueError, match="pass view=env"):
        agent.act(np.zeros((1, 639), np.float32), np.ones((1, 10), np.int8))


def _policy_search(tag: str, nodes: int) -> RolloutSearch:
    agent = make_agent(f"search@{nodes}-p", tag)
    assert agent.name == f"search@{nodes}-p" and agent.noise == POLICY_NOISE
    return agent


def test_policy_rollouts_are_played_by_the_network(monkeypatch):
    """``search@N-p``: the committed policy network plays the rollouts (every rollout move is
    its choice), and the greedy player plays none of them."""
    from agents.greedy import GreedyAgent
    from agents.policy import PolicyAgent

    calls = {"policy": 0, "greedy": 0}
    policy_prefs, greedy_prefs = PolicyAgent.preferences, GreedyAgent.preferences

    def count(who, real):
        def wrapped(self, *a, **k):
            calls[who] += 1
            return real(self, *a, **k)

        return wrapped

    agent = _policy_search("SH1-C4", 64)
    monkeypatch.setattr(PolicyAgent, "preferences", count("policy", policy_prefs))
    greedy = count("greedy", greedy_prefs)
    monkeypatch.setattr(GreedyAgent, "preferences", greedy)
    game, options = VARIANTS["SH1-C4"]
    play_deals(agent, game, options, [0], max_episode_steps=5)
    # the greedy player still orders the candidates: once per searched decision (5 at most)
    assert calls["policy"] > 5 * 10 and 0 < calls["greedy"] <= 5
    with pytest.raises(ArgumentError, match="rollout must be a policy agent"):
        RolloutSearch(game, options, rollout="greedy")
    with pytest.raises(ValueError, match=r"trained on .TF1-D1N.; it cannot play SH1-C4"):
        RolloutSearch(game, options, rollout=make_agent("learned", "TF1-D1N"))


def test_policy_rollouts_are_blind_to_hidden_cards():
    assert_blind(_policy_search("TF1-D1N", 48), "TF1-D1N", 8)


def test_policy_rollouts_are_deterministic_and_independent_of_their_batch():
    game, options = VARIANTS["SH1-C4"]
    deals = [0, 1]
    kw = {"max_episode_steps": 30}
    together = play_deals(_policy_search("SH1-C4", 32), game, options, deals, **kw)
    again = play_deals(_policy_search("SH1-C4", 32), game, options, deals, **kw)
    alone = [play_deals(_policy_search("SH1-C4", 32), game, options, [d], **kw)[0]
             for d in deals]  # fmt: skip
    for a, b, c in zip(together, again, alone, strict=True):
        assert a.to_dict() == b.to_dict() == c.to_dict()


def test_budget_plot_draws_every_kind_of_search(tmp_path):
    """Every kind of search a budget folder may hold has its style in the plot."""
    sb = experiment("search_budget")
    names = ["search@16", "search@16-l2", "search@16-v", "puct@16", "search@16-p", "search@16-b",
             "search@16-d", "search@16-p-d", "search@16-d-b"]  # fmt: skip
    kinds = [sb.kind_of(n) for n in names]
    assert sorted(k for k, _ in kinds) == sorted(sb.KINDS)
    s = {"win_rate": 0.5, "win_rate_ci95": [0.4, 0.6]}
    order = list(sb.KINDS)
    points = [(order.index(k), n, name, s) for (k, n), name in zip(kinds, names, strict=True)]
    sb.plot({"SH1-C4": {"points": points, "refs": {"greedy": s}}}, tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 1000


def test_a_shared_budget_keeps_the_mean_and_lends_to_hard_moves(monkeypatch):
    """``search@N-b``: over each game the nodes spent per move stay within ``N``, while some
    decisions spend more than ``N`` from what earlier moves left; the games play the same alone
    and in a batch."""
    game, options = VARIANTS["SH1-C4"]
    deposits = []
    real = RolloutSearch._deposit

    def deposit(self, r, spent):
        deposits.append(spent)
        return real(self, r, spent)

    monkeypatch.setattr(RolloutSearch, "_deposit", deposit)
    agent = make_agent("search@32-b", "SH1-C4")
    assert (agent.name, agent.bank) == ("search@32-b", NAMED_BANK)
    together = play_deals(agent, game, options, [0, 1, 2])
    assert 0 < agent.nodes_spent <= 32 * agent.decisions
    assert max(deposits) > 32 and max(deposits) <= 32 * (1 + NAMED_BANK)
    alone = [play_deals(make_agent("search@32-b", "SH1-C4"), game, options, [d])[0]
             for d in (0, 1, 2)]  # fmt: skip
    assert [a.to_dict() for a in together] == [a.to_dict() for a in alone]
    plain = make_agent("search@32", "SH1-C4")
    deposits.clear()
    play_deals(plain, game, options, [0, 1, 2])
    assert plain.bank == 0 and max(deposits) <= 32
    with pytest.raises(ArgumentError, match="bank"):
        RolloutSearch(game, options, bank=-1)


def test_evaluate_plays_the_search_player(tmp_path):
    evaluate = experiment("evaluate")
    result = evaluate.main_result(["--policies", "search@16", "--variants", "SH1-C4", "--deals",
                                   "2", "--out", str(tmp_path), "--quiet", "--no-plots"])  # fmt: skip
    s = result["summaries"]["SH1-C4"]["search@16"]
    assert s["deals"] == 2 and 0 < s["nodes_per_move"] <= 16
    with pytest.raises(SystemExit, match="bad search budget"):
        evaluate.main_result(["--policies", "search@0", "--out", str(tmp_path)])


def test_search_settings_are_checked():
    game, options = VARIANTS["SH1-C4"]
    for bad in (0, 1025, 2.5, True):
        with pytest.raises(ArgumentError, match="candidates"):
            RolloutSearch(game, options, candidates=bad)
    for bad in (-1.0, float("nan"), 1e9, "25", True):
        with pytest.raises(ArgumentError, match="noise"):
            RolloutSearch(game, options, noise=bad)
    for bad in (1, "yes", None):
        with pytest.raises(ArgumentError, match="hindsight"):
            RolloutSearch(game, options, hindsight=bad)
    agent = RolloutSearch(game, options, candidates=np.int64(3), noise=np.float32(5))
    assert (agent.candidates, agent.noise, agent.hindsight) == (3, 5.0, True)


def test_search_without_hindsight_is_deterministic_and_within_budget():
    """``hindsight=False``: further waves deal new sampled deals; the same games twice."""
    game, options = VARIANTS["TF1-D1N"]
    runs = []
    for _ in range(2):
        agent = RolloutSearch(game, options, nodes=64, hindsight=False)
        results = play_deals(agent, game, options, [4, 5], max_episode_steps=40)
        assert 0 < agent.nodes_spent <= 64 * agent.decisions
        runs.append([r.to_dict() for r in results])
    assert runs[0] == runs[1]


def test_search_sweep_plays_and_refuses_bad_settings(capsys):
    sweep = experiment("search_sweep")
    line = sweep.main(["SH1-C4", "--nodes", "16", "--first", "2000", "--deals", "2"])
    assert line.startswith("SH1-C4 nodes=16 ") and " deals 2000-2001: " in line
    assert line in capsys.readouterr().out
    with pytest.raises(SystemExit):
        sweep.main(["SH1-C4", "--candidates", "0"])
    assert "candidates must be" in capsys.readouterr().err


def test_rollout_noise_is_a_hash_of_key_step_and_move():
    """The noisy rollouts' uniforms: splitmix64 of (key, step, column), computed here in plain
    Python integers, drawn for the legal columns alone, the same for a row in any batch."""
    from agents.search.rollouts import _noise_uniforms

    mask = (1 << 64) - 1

    def reference(key: int, step: int, a: int) -> float:
        z = (key * 0x9E3779B97F4A7C15 + step * 0xD1B54A32D192ED03 + a * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        return ((z >> 11) + 0.5) / 2.0**53

    rng = np.random.default_rng(5)
    ranks = np.where(rng.random((6, 40)) < 0.3, 1.0, -np.inf)
    keys = rng.integers(0, 1 << 62, 6).astype(np.uint64) * np.uint64(3)  # past 2**63 too
    steps = rng.integers(0, 500, 6)
    rows = np.array([4, 1, 3])
    rr, cc, u = _noise_uniforms(ranks, rows, keys[rows], steps[rows])
    legal = [(r, a) for r in rows.tolist() for a in np.flatnonzero(ranks[r] == 1.0).tolist()]
    assert list(zip(rr.tolist(), cc.tolist(), strict=True)) == legal
    k = {r: (int(keys[r]), int(steps[r])) for r in rows.tolist()}
    assert u.tolist() == [reference(*k[r], a) for r, a in legal]
    assert ((u > 0) & (u < 1)).all()
    _, _, alone = _noise_uniforms(ranks[[1]], np.array([0]), keys[[1]], steps[[1]])
    assert alone.tolist() == u[rr == 1].tolist()
