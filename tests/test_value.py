"""The value network (``agents/search/value.py``): solver labels, training, checkpoints that load
without running code, the committed networks' recorded outputs, and the search that uses them."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent, play_deals  # noqa: E402
from agents.dataset import load_shards  # noqa: E402
from agents.play import VARIANTS  # noqa: E402
from agents.policy import CheckpointError  # noqa: E402
from agents.search import RolloutSearch  # noqa: E402
from agents.search.value import (  # noqa: E402
    CHECK_DEALS,
    VALUE_DIR,
    build_value_net,
    committed_value,
    label_positions,
    load_value,
    save_value,
    start_observations,
    train_value,
)
from agents.teacher import make_shards, prove  # noqa: E402
from solitaire_gym.envs.core import EnvCore, EnvOptions  # noqa: E402
from solitaire_gym.game import Game  # noqa: E402

SH = VARIANTS["SH1-C4"]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shards")
    make_shards("SH1-C4", 0, 3, folder, teacher="search", nodes=16, chunk=3, progress=False)
    data = load_shards(sorted(folder.glob("*.npz")), variant="SH1-C4")
    return data, label_positions("SH1-C4", data, share=0.5, max_nodes=20_000, progress=False)


def test_labels_are_the_solvers_verdicts_on_the_games_positions(labelled):
    data, lab = labelled
    assert 0 < len(lab["won"]) < len(data["labels"])  # a share of the positions
    rows = [int(np.flatnonzero((data["obs"] == o).all(axis=1))[0]) for o in lab["obs"][:12]]
    game, options = SH
    core = EnvCore(EnvOptions.build(game, **options, split="eval"), 1)
    for r, won in zip(rows, lab["won"][:12], strict=True):
        # replay the game of row r up to it, and ask the solver
        start = int(np.flatnonzero(data["episode"] == data["episode"][r])[0])
        core.deal(np.zeros(1, np.int64), np.array([data["episode"][r]]))
        for a in data["played"][start:r]:
            core.step(np.array([a], np.int64))
        assert np.array_equal(core.obs[0], data["obs"][r])
        g = Game.from_dict(core.to_dict(0))
        assert won == (g.won or prove(g, 20_000)[0] == "solvable")
    assert set(np.unique(lab["episode"])) <= set(data["deals"].tolist())


def _trained(labelled):
    _, lab = labelled
    torch.manual_seed(0)
    net = build_value_net({"hidden": 16, "layers": 1}, lab["obs"].shape[1])
    train_value(net, lab["obs"], lab["won"], epochs=2, batch_size=32)
    game, options = SH
    meta = {"variant": "SH1-C4", "game": game, "options": options,
            "arch": {"hidden": 16, "layers": 1}, "obs_dim": int(lab["obs"].shape[1])}  # fmt: skip
    return net, meta


def test_checkpoint_round_trip_and_recorded_outputs(labelled, tmp_path):
    net, meta = _trained(labelled)
    path = tmp_path / "v.npz"
    save_value(path, net, meta)
    v = load_value(path, game=SH[0], options=SH[1])
    obs = start_observations(*SH, range(CHECK_DEALS))
    with torch.no_grad():
        want = torch.sigmoid(net(torch.from_numpy(obs))).numpy()
    assert np.allclose(v(obs), want, atol=1e-6)
    assert np.allclose(v.meta["check"], want, atol=1e-5)
    assert ((v(obs) >= 0) & (v(obs) <= 1)).all()
    with pytest.raises(CheckpointError, match="is for 'SH1-C4', not TF1-D1N"):
        load_value(path, game=VARIANTS["TF1-D1N"][0], options=VARIANTS["TF1-D1N"][1])
    with pytest.raises(ValueError, match=r"reads \(B, "):
        v(obs[:, :5])


def _rewrite(src, dst, meta_change=None, drop=None):
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        for name in z.namelist():
            if name == drop:
                continue
            data = z.read(name)
            if name == "meta.npy" and meta_change:
                with np.load(src, allow_pickle=False) as f:
                    meta = json.loads(f["meta"].tobytes())
                meta.update(meta_change)
                import io

                buf = io.BytesIO()
                np.save(buf, np.frombuffer(json.dumps(meta).encode(), np.uint8))
                data = buf.getvalue()
            out.writestr(name, data)


def test_bad_value_checkpoints_are_refused_by_name(labelled, tmp_path):
    net, meta = _trained(labelled)
    good = tmp_path / "v.npz"
    save_value(good, net, meta)
    cases = [
        ({"format": "solitaire_gym-policy"}, None, "is not a solitaire_gym-value checkpoint"),
        ({"layout_id": "0-x"}, None, "trained on observation layout"),
        ({"arch": {"hidden": 17, "layers": 1}}, None, "weight"),
        ({"arch": {"hidden": 10**9, "layers": 1}}, None, "hidden must be an integer"),
        ({"obs_dim": 3}, None, "obs_dim 3 is not the variant's"),
        (None, "w/0.weight.npy", "do not fit arch"),
    ]
    for i, (change, drop, what) in enumerate(cases):
        bad = tmp_path / f"bad{i}.npz"
        _rewrite(good, bad, change, drop)
        with pytest.raises(CheckpointError, match=what):
            load_value(bad)
    with pytest.raises(CheckpointError, match="no value checkpoint at"):
        load_value(tmp_path / "none.npz")
    with pytest.raises(CheckpointError, match="no committed value network for 'XX'"):
        committed_value("XX")


def test_search_with_a_value_network_plays_and_stays_blind(labelled):
    net, meta = _trained(labelled)
    from agents.search.value import ValueFunction

    v = ValueFunction(net, meta)
    game, options = SH
    search = RolloutSearch(game, options, nodes=32, value=v)
    assert search.name == "search@32-v"
    res = play_deals(search, game, options, [1, 2], max_episode_steps=40)
    assert all(r.steps > 0 for r in res)
    with pytest.raises(ValueError, match="value must be a value network"):
        RolloutSearch(game, options, value=3)


@pytest.mark.parametrize("path", sorted(VALUE_DIR.glob("*.npz")), ids=lambda p: p.stem)
def test_committed_value_networks_reproduce_their_record(path):
    v = committed_value(path.stem)
    game, options = VARIANTS[path.stem]
    obs = start_observations(game, options, range(CHECK_DEALS))
    assert np.allclose(v(obs), v.meta["check"], atol=1e-5)
    assert v.meta["held_out"]["accuracy"] > 0.5
    agent = make_agent("search@16-v", path.stem)
    assert agent.value is not None and agent.name == "search@16-v"


def test_there_is_a_committed_value_network():
    assert (VALUE_DIR / "SH1-C4.npz").is_file()
