"""Expert iteration (``agents/search/expert.py``): the search player as a labeller, its shards, and
the imitation configs that run it."""

from __future__ import annotations

import numpy as np
import pytest

from agents import play_deals
from agents.base import GameView, RandomAgent
from agents.config import ConfigError
from agents.dataset import load_shards, read_meta
from agents.imitation import ImitationRun, check_imitation_config
from agents.play import VARIANTS
from agents.search import RolloutSearch
from agents.search.expert import search_episodes
from agents.teacher import make_shards
from solitaire_gym.envs.core import EVAL_SPLIT_END, EnvCore, EnvOptions
from solitaire_gym.errors import ArgumentError

SH = VARIANTS["SH1-C4"]
TF3 = VARIANTS["TF1-D3N"]


@pytest.mark.parametrize("tag", ["SH1-C4", "TF1-D3N"])
def test_the_expert_plays_as_the_search_player_does(tag):
    """With no student, the labels are played, and the games are the search player's own: the
    same moves as ``play_deals`` with the same search (label + played = act)."""
    game, options = VARIANTS[tag]
    deals = [3, 11, 40]
    eps = search_episodes(game, options, deals, nodes=24, max_steps=60)
    results = play_deals(RolloutSearch(game, options, nodes=24), game, options, deals,
                         max_episode_steps=60, record=deals)  # fmt: skip
    core = EnvCore(EnvOptions.build(game, **options, split="eval"), 1)
    for e, r in zip(eps, results, strict=True):
        assert e.deal == r.deal and e.won == r.won
        assert np.array_equal(e.labels, e.played)
        assert [core.action_to_move(int(a)) for a in e.played] == r.trace
        assert len(e.obs) == len(e.masks) == len(e.safe) == r.steps
        assert e.masks[np.arange(len(e.labels)), e.labels].all()  # every label legal


def test_a_student_plays_and_the_expert_labels_where_it_goes():
    game, options = SH
    student = RandomAgent(seed=3)
    eps = search_episodes(game, options, [5, 6], nodes=16, student=student, max_steps=25)
    core = EnvCore(EnvOptions.build(game, **options, split="eval"), 1)
    for e in eps:
        # the positions are those the student's moves lead to
        core.deal(np.zeros(1, np.int64), np.array([e.deal]))
        for t, a in enumerate(e.played):
            assert np.array_equal(core.obs[0], e.obs[t])
            core.step(np.array([a], np.int64))
        assert e.masks[np.arange(len(e.labels)), e.labels].all()
        assert (e.labels != e.played).any()  # a random student does not play the expert's moves


def test_stop_unsafe_ends_a_game_after_that_many_unsafe_labels():
    game, options = SH
    eps = search_episodes(game, options, [5, 7, 9], nodes=16, student=RandomAgent(seed=1),
                          stop_unsafe=3)  # fmt: skip
    ends = []
    for e in eps:
        run = 0
        for ok in e.safe:
            run = 0 if ok else run + 1
            assert run <= 3
        ends.append(run)
    assert 3 in ends  # a random student's game is cut short


def test_safe_labels_in_seahaven_are_proven_winnable():
    """In Seahaven the search's copy is the game itself, so a safe label is a move after which a
    rollout won: the solver agrees that the position after it is winnable."""
    from agents.teacher import prove
    from solitaire_gym.game import Game

    game, options = SH
    (e,) = search_episodes(game, options, [EVAL_SPLIT_END + 2], nodes=256)
    core = EnvCore(EnvOptions.build(game, **options, split="eval"), 1)
    core.deal(np.zeros(1, np.int64), np.array([e.deal]))
    assert e.won and e.safe.any()
    for t, a in enumerate(e.played):
        if e.safe[t] and core.masks[0].sum() > 1:
            g = Game.from_dict(core.to_dict(0))
            g.play(core.action_to_move(int(a)))
            assert g.won or prove(g, 200_000)[0] == "solvable"
        core.step(np.array([a], np.int64))


def test_search_episodes_check_their_input():
    game, options = SH
    with pytest.raises(ArgumentError, match="at least one deal"):
        search_episodes(game, options, [])
    for bad in (-1, 2**70, "x", 1.5):
        with pytest.raises(ArgumentError, match="a deal is a number in 0"):
            search_episodes(game, options, [3, bad])
    with pytest.raises(ArgumentError, match="stop_unsafe must be a non-negative integer"):
        search_episodes(game, options, [1], stop_unsafe=-1)
    with pytest.raises(ArgumentError, match="nodes must be an integer"):
        search_episodes(game, options, [1], nodes=0)
    search = RolloutSearch(game, options, nodes=16)
    core = EnvCore(EnvOptions.build(game, **options, split="eval"), 2)
    core.deal(np.arange(2), np.array([1, 2]))
    with pytest.raises(ArgumentError, match="label takes a batch"):
        search.label(core.obs[0], core.masks[0], starts=np.ones(1, bool),
                     active=np.ones(1, bool), view=GameView(core))  # fmt: skip


def test_search_shards_load_and_refuse_another_teacher(tmp_path):
    totals = make_shards("SH1-C4", 0, 2, tmp_path, teacher="search", nodes=16, chunk=2,
                         progress=False)  # fmt: skip
    (path,) = tmp_path.iterdir()
    meta = read_meta(path)
    assert meta["teacher"] == "search" and meta["nodes"] == 16
    data = load_shards([path], variant="SH1-C4")
    assert len(data["labels"]) == totals["positions"] > 0
    assert np.array_equal(data["labels"], data["played"])
    with pytest.raises(ValueError, match="made with nodes=16, not 32"):
        make_shards("SH1-C4", 0, 2, tmp_path, teacher="search", nodes=32, chunk=2,
                    progress=False)  # fmt: skip
    with pytest.raises(ValueError, match="made with teacher='search', not 'safe-greedy'"):
        make_shards("SH1-C4", 0, 2, tmp_path, chunk=2, progress=False)
    with pytest.raises(ValueError, match="teacher must be one of safe-greedy, search"):
        make_shards("SH1-C4", 0, 2, tmp_path / "x", teacher="oracle", progress=False)


def _config(**changes) -> dict:
    cfg = {
        "name": "x",
        "variant": "SH1-C4",
        "jobs": 1,
        "torch_threads": 1,
        "arch": {"kind": "cards", "hidden": 8, "layers": 1},
        "teacher": {"kind": "search", "nodes": 16, "deals": 2},
        "dagger": {"rounds": 1, "deals": 1, "warm_start": True, "epochs": 1},
        "train": {"epochs": 1, "batch_size": 32},
        "validation": {"deals": 2},
    }
    cfg.update(changes)
    return cfg


def test_imitation_configs_name_a_bad_teacher_or_init(tmp_path):
    with pytest.raises(ConfigError, match=r"teacher\.kind must be one of safe-greedy, search"):
        check_imitation_config(_config(teacher={"kind": "oracle"}))
    with pytest.raises(ConfigError, match=r"teacher\.nodes must lie in"):
        check_imitation_config(_config(teacher={"kind": "search", "nodes": 0}))
    cfg = check_imitation_config(_config(init="agents/checkpoints/SH1-C4.npz"))
    with pytest.raises(ConfigError, match="is a network of another architecture than arch"):
        ImitationRun(cfg, tmp_path / "run").run(progress=False)


def test_expert_iteration_runs_and_resumes(tmp_path):
    cfg = check_imitation_config(_config())
    best = ImitationRun(cfg, tmp_path / "run").run(progress=False)
    assert best.exists() and (tmp_path / "run" / "round1.npz").exists()
    shards = sorted((tmp_path / "run" / "data").glob("round*/*.npz"))
    assert [read_meta(p)["teacher"] for p in shards] == ["search", "search"]
    assert read_meta(shards[1])["student"].endswith("round0.npz")
    stamp = best.stat().st_mtime_ns
    ImitationRun(cfg, tmp_path / "run").run(progress=False)  # done: nothing is redone
    assert best.stat().st_mtime_ns == stamp
