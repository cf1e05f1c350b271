"""The solver-backed teacher (``agents/teacher.py``) and its data (``agents/dataset.py``):
labels that are legal, safe and replay as moves; the plan out of circles; a student's game
stopped after a run of unsafe labels; the orders the teacher tried, from a shard alone; shards
that round-trip bit for bit, hold the same records made on Ray, and are refused by name when
damaged."""

from __future__ import annotations

import json

import numpy as np
import pytest
from teaching import teacher_data

torch = pytest.importorskip("torch")

from agents.base import RandomAgent  # noqa: E402
from agents.dataset import ShardError, load_shards, write_shard  # noqa: E402
from agents.greedy import GreedyAgent  # noqa: E402
from agents.play import VARIANTS  # noqa: E402
from agents.teacher import MAX_TRIES, ON_REPEAT, teach_deal, teacher_orders  # noqa: E402
from solitaire_gym import Game  # noqa: E402
from solitaire_gym.envs.core import EVAL_SPLIT_END  # noqa: E402

SH = VARIANTS["SH1-C4"]

# ---- labels --------------------------------------------------------------------------------------


def test_teacher_labels_are_legal_and_replay_as_moves(episodes):
    e = episodes[0]
    assert len(e.labels) == 40 or e.won
    assert e.masks[np.arange(len(e.labels)), e.labels].all()
    assert (e.played == e.labels).all()  # the teacher plays its own labels
    # the labelled actions, played as moves of the Game API, are all accepted
    g = Game.new("seahaven_towers", cells=4, deal=e.deal)
    from solitaire_gym.engine.actions import action_to_move

    for a in e.labels:
        g.play(action_to_move(g.cfg, int(a)))


def test_teacher_wins_with_safe_labels_or_goes_round_in_circles():
    # training deal 0: every label proven safe, and the teacher wins (in 180 moves)
    e = teach_deal(*SH, EVAL_SPLIT_END)
    assert e.safe.all() and e.won and len(e.labels) == 180
    # training deal 3: every label safe too, but the teacher never wins: it goes round in
    # circles among moves that all keep the game winnable, to the step limit (a known limit,
    # agents/teacher.py)
    e = teach_deal(*SH, EVAL_SPLIT_END + 3)
    assert e.safe.all() and not e.won and len(e.labels) == 500


def test_a_teacher_that_follows_its_plan_out_of_circles_wins():
    # training deal 3 again, with on_repeat="plan": the first position met a second time sends
    # the teacher along the solver's plan, and it wins with every label safe and legal
    e = teach_deal(*SH, EVAL_SPLIT_END + 3, on_repeat="plan")
    assert e.safe.all() and e.won and len(e.labels) < 500
    g = Game.new("seahaven_towers", cells=4, deal=e.deal)
    from solitaire_gym.engine.actions import action_to_move

    for a in e.labels:
        g.play(action_to_move(g.cfg, int(a)))
    assert g.won
    # deal 0 goes round too before it wins (180 moves with greedy's choice): fewer with the plan
    e0 = teach_deal(*SH, EVAL_SPLIT_END, on_repeat="plan")
    assert e0.won and e0.safe.all() and len(e0.labels) < 180
    # a game that never meets a position twice gets the same labels under both rules
    short = [teach_deal(*SH, EVAL_SPLIT_END + 1, max_steps=8, on_repeat=r) for r in ON_REPEAT]
    assert (short[0].labels == short[1].labels).all()
    with pytest.raises(ValueError, match="on_repeat must be one of greedy, plan, not 'loop'"):
        teach_deal(*SH, EVAL_SPLIT_END, on_repeat="loop")


def test_a_student_game_stops_after_a_run_of_unsafe_labels():
    """stop_unsafe=N ends a game at the N-th position in a row with no safe label, and no
    sooner; the positions of that run are kept."""
    kw = {"student": RandomAgent(seed=2), "max_steps": 150, "max_nodes": 2000}
    full = teach_deal(*SH, EVAL_SPLIT_END + 7, **kw)
    runs = np.diff(np.r_[0, np.flatnonzero(full.safe) + 1, len(full.safe) + 1]) - 1
    assert runs.max() > 3, "the random student never lost the game: the test shows nothing"
    cut = teach_deal(*SH, EVAL_SPLIT_END + 7, stop_unsafe=3, **kw)
    n = len(cut.labels)
    assert n < len(full.labels)
    assert not cut.safe[-3:].any() and (n == 3 or cut.safe[-4])  # ends on its first run of 3
    assert np.array_equal(cut.labels, full.labels[:n]) and np.array_equal(cut.safe, full.safe[:n])
    with pytest.raises(ValueError, match="stop_unsafe must be a non-negative integer"):
        teach_deal(*SH, EVAL_SPLIT_END, stop_unsafe=-1)


def test_teacher_orders_are_the_orders_the_teacher_tried(monkeypatch):
    """teacher_orders, from a shard's records alone, gives back the greedy order the teacher
    tried its moves in at every position, also when a student played other moves (DAgger)."""
    seen = []
    ranking = GreedyAgent.ranking

    def spy(self, obs, masks, active):
        r = ranking(self, obs, masks, active)
        seen.append(r[0].copy())
        return r

    monkeypatch.setattr(GreedyAgent, "ranking", spy)
    eps = [teach_deal(*SH, EVAL_SPLIT_END + 5, max_steps=60),
           teach_deal(*SH, EVAL_SPLIT_END + 6, max_steps=60, student=RandomAgent(seed=1))]  # fmt: skip
    monkeypatch.setattr(GreedyAgent, "ranking", ranking)
    assert (eps[1].played != eps[1].labels).any()  # the student's own moves were played
    got = teacher_orders(teacher_data(eps), *SH)
    assert got.shape == (len(seen), MAX_TRIES)
    for r, row in zip(seen, got, strict=True):
        legal = np.flatnonzero(np.isfinite(r))
        want = legal[np.argsort(-r[legal], kind="stable")][:MAX_TRIES]
        assert np.array_equal(row[: want.size], want) and (row[want.size :] == -1).all()
    # what the orders say of the labels: a safe label is among the moves tried, an unsafe one
    # is greedy's first choice
    d = teacher_data(eps)
    assert all(lab in row for lab, row in zip(d["labels"][d["safe"]], got[d["safe"]],
                                               strict=True))  # fmt: skip
    assert (got[~d["safe"], 0] == d["labels"][~d["safe"]]).all()


# ---- shards --------------------------------------------------------------------------------------


def test_teacher_data_refuses_to_mix_on_repeat_rules(tmp_path):
    from agents.teacher import make_shards

    make_shards("SH1-C4", 0, 1, tmp_path, chunk=1, max_nodes=2000, progress=False)
    with pytest.raises(ValueError, match="made with on_repeat='greedy', not 'plan'"):
        make_shards("SH1-C4", 0, 2, tmp_path, chunk=1, max_nodes=2000, progress=False,
                    on_repeat="plan")  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["deals-000000000-000000001.npz"]


@pytest.mark.slow  # a local Ray
def test_teacher_data_on_ray_equals_local(tmp_path):
    """The shards made by Ray tasks (written by the driver from what the workers send back) hold
    the same records as those of the local path."""
    pytest.importorskip("ray")
    from agents.teacher import make_shards

    make_shards("SH1-C4", 0, 2, tmp_path / "local", chunk=1, max_nodes=2000, progress=False)
    make_shards("SH1-C4", 0, 2, tmp_path / "ray", chunk=1, max_nodes=2000, progress=False,
                ray="local", jobs=1)  # fmt: skip
    a = load_shards(sorted((tmp_path / "local").glob("*.npz")))
    b = load_shards(sorted((tmp_path / "ray").glob("*.npz")))
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == sorted(
        p.name for p in (tmp_path / "local").iterdir()
    )
    for k in ("obs", "masks", "labels", "safe", "played", "episode"):
        assert np.array_equal(a[k], b[k]), k


def test_shards_round_trip_bit_for_bit(tmp_path, episodes):
    p = tmp_path / "s.npz"
    write_shard(p, episodes, {"variant": "SH1-C4"})
    d = load_shards([p], variant="SH1-C4")
    obs = np.concatenate([e.obs for e in episodes])
    assert d["obs"].dtype == np.float32 and np.array_equal(d["obs"].view(np.int32),
                                                           obs.view(np.int32))  # fmt: skip
    assert np.array_equal(d["masks"], np.concatenate([e.masks for e in episodes]))
    assert np.array_equal(d["labels"], np.concatenate([e.labels for e in episodes]))
    assert p.stat().st_size < obs.nbytes / 8  # compact: far less than float32
    with pytest.raises(ShardError, match="not 'TF1-D1N'"):
        load_shards([p], variant="TF1-D1N")
    # two shards holding the same deal (two chunkings of one folder) are refused by name
    q = tmp_path / "t.npz"
    write_shard(q, episodes[1:], {"variant": "SH1-C4"})
    with pytest.raises(ShardError, match=f"{p} and {q} both hold training deal {episodes[1].deal}"):
        load_shards([p, q], variant="SH1-C4")
    r = tmp_path / "r.npz"  # and a shard that holds one deal twice
    write_shard(r, [episodes[1], episodes[0], episodes[1]], {"variant": "SH1-C4"})
    with pytest.raises(ShardError, match=f"{r} holds training deal {episodes[1].deal} twice"):
        load_shards([r], variant="SH1-C4")


@pytest.fixture
def quick_teacher(monkeypatch, episodes):
    """make_shards with a teacher that answers the fixture's games (training deals 0 and 1, each
    for every second deal) at once, and a shard cap of about two of those games."""
    import dataclasses

    import agents.dataset
    import agents.teacher

    def teach(game, options, deal, **kw):
        return dataclasses.replace(episodes[deal % 2], deal=int(deal))

    monkeypatch.setattr(agents.teacher, "teach_deal", teach)
    monkeypatch.setattr(agents.teacher, "warm_teacher", lambda *a, **kw: None)
    dim, n = episodes[0].obs.shape[1], episodes[0].masks.shape[1]
    stored = 40 * (dim + (n + 7) // 8 + 2 + 1 + 2 + 8) + 9  # a game's arrays, as write_shard's
    game = agents.dataset.shard_load_bytes(stored, 40, 1, dim, n)
    monkeypatch.setattr(agents.dataset, "MAX_SHARD_MEMORY", 2 * game + 16 * 1024)
    return [teach(None, None, EVAL_SPLIT_END + i) for i in range(5)]


def test_a_chunk_too_big_for_one_shard_is_written_as_several(tmp_path, quick_teacher):
    """A chunk whose one shard would take more than MAX_SHARD_MEMORY to load is written as
    several, each under it, the chunk's own name last: together they hold every record, a rerun
    resumes, a part left by an interrupted try that cut the chunk otherwise is removed, and the
    Ray path writes the same files."""
    from agents.teacher import _write_returned, chunk_names, make_shards, teach_chunk

    assert all(len(e.labels) == 40 for e in quick_teacher)
    with pytest.raises(ValueError, match="more than a shard may"):  # the writer alone refuses
        write_shard(tmp_path / "one.npz", quick_teacher, {"variant": "SH1-C4"})
    assert not (tmp_path / "one.npz").exists()
    out = tmp_path / "local"
    totals = make_shards("SH1-C4", 0, 5, out, chunk=5, progress=False)
    names = chunk_names(0, 5, 3)
    assert names == ["deals-000000000-000000005-part001.npz",
                     "deals-000000000-000000005-part002.npz",
                     "deals-000000000-000000005.npz"]  # fmt: skip
    files = sorted(out.glob("*.npz"))
    assert [p.name for p in files] == names  # sorted by name is the order of the deals
    for p in files:  # each loads alone, under the cap: two games, then one
        assert len(load_shards([p], variant="SH1-C4")["deals"]) == (1 if p == files[-1] else 2)
    d = load_shards(files, variant="SH1-C4")
    assert len(d["labels"]) == totals["positions"] == 200
    assert d["deals"].tolist() == [e.deal for e in quick_teacher]
    assert np.array_equal(d["obs"], np.concatenate([e.obs for e in quick_teacher]))
    assert np.array_equal(d["labels"], np.concatenate([e.labels for e in quick_teacher]))
    assert np.array_equal(d["masks"], np.concatenate([e.masks for e in quick_teacher]))
    # a rerun resumes: the chunk's own name exists only once all its parts do
    assert make_shards("SH1-C4", 0, 5, out, chunk=5, progress=False)["deals"] == 0
    # an interrupted try left a part of another cut and no last file: the chunk is made again
    # and the stray part goes (its deals would count twice)
    stray = out / "deals-000000000-000000005-part007.npz"
    stray.write_bytes(files[0].read_bytes())
    files[-1].unlink()
    assert make_shards("SH1-C4", 0, 5, out, chunk=5, progress=False)["deals"] == 5
    assert sorted(p.name for p in out.glob("*.npz")) == names
    # the Ray path: a worker sends the files back, the driver writes them, its last one last
    r = teach_chunk({"variant": "SH1-C4", "lo": 0, "hi": 5, "out": "", "return_shard": True})
    assert [name for name, _ in r["shards"]] == names
    stray = tmp_path / "ray" / "deals-000000000-000000005-part003.npz"
    stray.parent.mkdir()
    stray.write_bytes(files[0].read_bytes())
    _write_returned(tmp_path / "ray", r)
    ray_files = sorted((tmp_path / "ray").iterdir())
    assert [p.name for p in ray_files] == names
    b = load_shards(ray_files, variant="SH1-C4")
    for k in ("obs", "masks", "labels", "safe", "played", "episode", "deals"):
        assert np.array_equal(d[k], b[k]), k


def test_no_game_of_a_variant_takes_more_than_a_shard_may(monkeypatch):
    """split_episodes cuts between games: a game of the most positions any variant plays fits
    in one shard under the real cap, five of them at least; one that does not is refused."""
    import agents.dataset
    from agents.dataset import MAX_SHARD_MEMORY, Episode, shard_load_bytes, split_episodes
    from solitaire_gym.envs.core import DEFAULT_MAX_EPISODE_STEPS, EnvCore, EnvOptions

    for name, (game, options) in VARIANTS.items():
        core = EnvCore(EnvOptions.build(game, **options), 1)
        steps = DEFAULT_MAX_EPISODE_STEPS[name.split("-")[0]]
        assert 5 * shard_load_bytes(0, steps, 1, core.obs_dim, core.n_actions) < MAX_SHARD_MEMORY
        e = Episode(deal=7, obs=np.zeros((steps, core.obs_dim), np.float32),
                    masks=np.zeros((steps, core.n_actions), bool),
                    labels=np.zeros(steps, np.int16), safe=np.zeros(steps, bool),
                    played=np.zeros(steps, np.int16), won=False, solver_calls=0)  # fmt: skip
        runs = split_episodes([e] * 12, {"variant": name})
        assert sum(map(len, runs)) == 12 and all(len(r) >= 5 for r in runs[:-1]), name
    monkeypatch.setattr(agents.dataset, "MAX_SHARD_MEMORY", 1 << 20)
    with pytest.raises(ValueError, match=f"deal 7: a game of {steps} positions takes more"):
        split_episodes([e], {"variant": name})


def _reshard(src, dst, change) -> None:
    """``src``'s arrays with ``change`` (name -> new array, or None to drop it) written to ``dst``."""
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for k, v in change.items():
        if v is None:
            arrays.pop(k)
        else:
            arrays[k] = v
    np.savez_compressed(dst, **arrays)


def test_damaged_shards_are_refused_by_name(tmp_path, episodes):
    """A shard whose arrays are not what write_shard writes is refused naming the file (and the
    array), before any of it is used: out-of-range labels would index masks from the far end,
    object arrays are never loaded, a missing array or field is not a KeyError."""
    p = tmp_path / "s.npz"
    write_shard(p, episodes, {"variant": "SH1-C4"})
    with np.load(p) as z:
        labels, obs, meta = z["labels"], z["obs"], z["meta"]
    n = json.loads(meta.tobytes())["n_actions"]

    def meta_with(**kw):
        m = {**json.loads(meta.tobytes()), **kw}
        return np.frombuffer(json.dumps(m).encode(), np.uint8)

    cases = [
        ({"labels": np.full_like(labels, -1)}, "'labels' holds an action outside"),
        ({"played": np.full_like(labels, n)}, "'played' holds an action outside"),
        ({"labels": labels.astype(np.int64)}, "array 'labels' is int64"),
        ({"safe": np.zeros(len(labels) - 1, bool)}, "array 'safe' has"),
        ({"obs": obs[:, :-1]}, "widths its metadata says"),
        ({"obs": np.full_like(obs, 255)}, "past its codebook"),
        ({"won": None}, "not a shard \\(no won\\)"),
        ({"meta": meta_with(n_actions="many")}, "metadata 'n_actions'"),
        ({"meta": np.frombuffer(b"[1, 2]", np.uint8)}, "not a JSON object"),
        ({"meta": np.frombuffer(b"{bad", np.uint8)}, "not a shard with readable metadata"),
        ({"meta": None}, "not a shard with readable metadata"),
        ({"codebook": np.array([np.nan], np.float32)}, "codebook"),
    ]
    for k, (change, message) in enumerate(cases):
        q = tmp_path / f"bad{k}.npz"
        _reshard(p, q, change)
        with pytest.raises(ShardError, match=message) as e:
            load_shards([q], variant="SH1-C4")
        assert str(q) in str(e.value)
    q = tmp_path / "objects.npz"
    np.savez(q, **{"meta": np.array([{"a": 1}], dtype=object)})
    with pytest.raises(ShardError, match="not a shard"):
        load_shards([q])
    q.write_bytes(b"not a zip")
    with pytest.raises(ShardError, match="not a shard"):
        load_shards([q])
