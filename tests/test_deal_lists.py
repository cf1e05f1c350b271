"""``deals="solvable"``: the shipped lists of solvable training deals, the envs that draw from
them, the builder, and the refusal of a bad list, a bad index file or a bad argument."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.play import VARIANTS
from solitaire_gym import parse_code
from solitaire_gym.engine.variants import MAX_DEAL
from solitaire_gym.envs import EVAL_SPLIT_END, SolitaireVectorEnv
from solitaire_gym.envs.deal_lists import (
    DATA,
    TAGS,
    DealListError,
    solvable_deals,
    solvable_info,
)
from solitaire_gym.envs.solitaire_env import SolitaireEnv
from solitaire_gym.solver.batch import parse_variant
from solitaire_gym.solver.solvable import build_solvable

SHIPPED = sorted(json.loads((DATA / "index.json").read_text()))


@pytest.mark.parametrize("tag", TAGS)
def test_every_variant_ships_a_list_that_matches_its_index_or_says_how_to_build_it(tag):
    variant = parse_variant(tag)
    if tag not in SHIPPED:  # see the note of issue 13: not every list could be built in time
        with pytest.raises(DealListError, match=r"experiments/solvable_deals\.py"):
            SolitaireEnv(*VARIANTS[tag][:1], deals="solvable", **VARIANTS[tag][1])
        return
    deals = solvable_deals(variant)
    info = solvable_info(variant)
    assert deals.dtype == np.int64 and deals.ndim == 1 and not deals.flags.writeable
    assert np.all(np.diff(deals) > 0)
    assert deals.size == info["solvable"] >= 1
    assert info["solvable"] + info["unsolvable"] + info["unknown"] == info["tried"]
    assert EVAL_SPLIT_END <= info["first"] <= deals[0]
    assert deals[-1] < info["first"] + info["tried"] <= MAX_DEAL + 1
    assert info["command"].startswith("python experiments/solvable_deals.py")
    assert f"--tried {info['tried']} " in info["command"]


def test_the_lists_are_package_data():
    text = (Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"data/solvable/*.npy"' in text and '"data/solvable/index.json"' in text
    assert SHIPPED and set(SHIPPED) <= set(TAGS)


@pytest.mark.parametrize("tag", ["SH1-C4", "SH1-C1", "DS1-D1N"])
def test_the_solver_gives_the_listed_verdicts_again(tag):
    from solitaire_gym.solver import solve

    variant = parse_variant(tag)
    deals = set(solvable_deals(variant).tolist())
    info = solvable_info(variant)
    for deal in range(info["first"], info["first"] + 3):  # the budget is in positions: the same
        r = solve(variant.code(deal), max_seconds=None, max_nodes=info["max_nodes"])
        assert (r.verdict == "solvable") == (deal in deals)


@pytest.mark.parametrize("tag", ["SH1-C2", "TF1-D1N", "DS1-D3N"])
def test_envs_draw_only_listed_deals(tag):
    from solitaire_gym.envs.sb3 import SB3VecEnv

    listed = set(solvable_deals(parse_variant(tag)).tolist())
    game, opts = VARIANTS[tag]
    seen = []
    env = SolitaireEnv(game, deals="solvable", **opts)
    for seed in range(5):
        _, info = env.reset(seed=seed)
        seen.append(env.to_dict()["code"])
    vec = SolitaireVectorEnv(4, game, deals="solvable", max_episode_steps=3, **opts)
    _, info = vec.reset(seed=0)
    codes = list(info["code"])
    for _ in range(8):  # every game ends after 3 steps and is dealt anew
        acts = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in info["action_mask"]])
        _, _, _, _, info = vec.step(acts)
        codes += list(info["code"])
    sb3 = SB3VecEnv(game, num_envs=4, max_episode_steps=3, seed=0, deals="solvable", **opts)
    sb3.reset()
    codes += list(sb3.codes)
    for _ in range(8):
        acts = np.array([np.flatnonzero(m)[0] for m in sb3.action_masks()])
        sb3.step(acts)
        codes += list(sb3.codes)
    deals = {parse_code(c)[1] for c in seen + codes}
    assert len(deals) > 4 and deals <= listed
    # options and explicit deals still work: a deal asked for is dealt as it is
    _, info = env.reset(options={"deal": 7})
    assert parse_code(info["code"])[1] == 7


def test_random_deals_are_not_only_listed_ones():
    listed = set(solvable_deals(parse_variant("SH1-C1")).tolist())
    env = SolitaireEnv("seahaven_towers", cells=1)
    deals = {parse_code(env.reset(seed=s)[1]["code"])[1] for s in range(20)}
    assert not deals <= listed  # 3% of SH1-C1 deals are solvable


def bad_list(tmp_path, name: str, array) -> str:
    d = tmp_path / name
    d.mkdir()
    np.save(d / "SH1-C4.npy", array, allow_pickle=True)
    return str(d)


@pytest.mark.parametrize(
    "array",
    [
        np.array([EVAL_SPLIT_END - 1, EVAL_SPLIT_END + 5], np.int64),  # an evaluation deal
        np.array([EVAL_SPLIT_END + 5, EVAL_SPLIT_END + 1], np.int64),  # not sorted
        np.array([EVAL_SPLIT_END + 1.5]),  # not integers
        np.array([[EVAL_SPLIT_END + 1]], np.int64),  # not 1-D
        np.array([], np.int64),  # empty
        np.array([{"x": 1}], dtype=object),  # Python objects: never unpickled
    ],
)
def test_a_bad_list_is_refused(tmp_path, array):
    data = bad_list(tmp_path, "bad", array)
    with pytest.raises(DealListError, match="not a list of"):
        solvable_deals(parse_variant("SH1-C4"), data)


def test_a_missing_list_names_the_command(tmp_path):
    with pytest.raises(DealListError, match=r"experiments/solvable_deals\.py"):
        solvable_deals(parse_variant("SH1-C4"), tmp_path)


def test_build_solvable_writes_a_list_and_resumes(tmp_path):
    variant = parse_variant("SH1-C4")
    seen = []
    kw = dict(max_nodes=100_000, jobs=1, work=tmp_path / "work", data=tmp_path / "data",
              progress=False, on_record=seen.append)  # fmt: skip
    s = build_solvable(variant, 6, command="test", **kw)
    assert len(seen) == 6 and s["tried"] == 6 and s["first"] == EVAL_SPLIT_END
    solvable = sorted(r["deal"] for r in seen if r["verdict"] == "solvable")
    assert s["solvable"] == len(solvable)
    assert solvable_deals(variant, tmp_path / "data").tolist() == solvable
    assert solvable_info(variant, tmp_path / "data")["command"] == "test"
    seen.clear()
    build_solvable(variant, 8, command="test", **kw)  # resumes: only the 2 new deals are solved
    assert sorted(r["deal"] for r in seen) == [EVAL_SPLIT_END + 6, EVAL_SPLIT_END + 7]
    # an interrupted run: the list of the deals solved so far, counted as tried
    s = build_solvable(variant, 20, command="test", solve=False, **kw)
    assert s["tried"] == 8 and not seen[2:]
    with pytest.raises(ValueError, match="training split"):
        build_solvable(variant, 3, first=5, **kw)
    with pytest.raises(ValueError, match="another budget"):
        build_solvable(variant, 3, **(kw | {"max_nodes": 5}))


def test_deal_lists_refuse_bad_arguments_and_index_files(tmp_path):
    from solitaire_gym.envs.deal_lists import DealListError, solvable_deals, solvable_info
    from solitaire_gym.solver.solvable import build_solvable

    v = parse_code("SH1-C4-AAAAAJ2")[0]
    with pytest.raises(TypeError, match="variant must be a Variant"):
        solvable_deals("SH1-C4")
    with pytest.raises(TypeError, match="variant must be a Variant"):
        solvable_info("SH1-C4")
    for text in ("[1]", "{bad", '{"SH1-C4": 5}'):
        (tmp_path / "index.json").write_text(text)
        with pytest.raises(DealListError, match=r"index\.json"):
            solvable_info(v, data=tmp_path)
    (tmp_path / "index.json").write_bytes(b"\xff\xfe")
    with pytest.raises(DealListError, match="cannot read"):
        solvable_info(v, data=tmp_path)
    for kwargs in ({"tried": float("nan")}, {"tried": 1.9}, {"tried": 5, "first": "1048576"}):
        with pytest.raises(TypeError, match="must be an integer"):
            build_solvable(v, **{"max_nodes": 10, "work": tmp_path / "w", "solve": False,
                                 **kwargs})  # fmt: skip
    assert not (tmp_path / "w").exists()
