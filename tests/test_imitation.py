"""The solver-backed teacher, teacher-data shards, policy networks and their checkpoints, and
every committed policy reproducing the wins recorded beside it."""

from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npy_format

torch = pytest.importorskip("torch")

from agents.base import RandomAgent  # noqa: E402
from agents.config import ConfigError  # noqa: E402
from agents.dataset import (  # noqa: E402
    ShardError,
    load_shards,
    previous_actions,
    won_deals,
    write_shard,
)
from agents.greedy import GreedyAgent  # noqa: E402
from agents.imitation import best_play, check_imitation_config, fit  # noqa: E402
from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402
from agents.policy import (  # noqa: E402
    CHECKPOINT_DIR,
    CheckpointError,
    PolicyAgent,
    build_net,
    committed_policies,
    game_spec,
    load_policy,
    read_policy_meta,
    rule_scores,
    save_policy,
)
from agents.teacher import MAX_TRIES, ON_REPEAT, teach_deal, teacher_orders  # noqa: E402
from solitaire_gym import Game  # noqa: E402
from solitaire_gym.engine.variants import G_COLS  # noqa: E402
from solitaire_gym.envs.core import EVAL_SPLIT_END, EnvOptions  # noqa: E402
from solitaire_gym.envs.observation import layout_id  # noqa: E402

SH = VARIANTS["SH1-C4"]


@pytest.fixture(scope="module")
def episodes():
    return [teach_deal(*SH, EVAL_SPLIT_END + d, max_steps=40) for d in (0, 1)]


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


def test_teacher_data_refuses_to_mix_on_repeat_rules(tmp_path):
    from agents.teacher import make_shards

    make_shards("SH1-C4", 0, 1, tmp_path, chunk=1, max_nodes=2000, progress=False)
    with pytest.raises(ValueError, match="made with on_repeat='greedy', not 'plan'"):
        make_shards("SH1-C4", 0, 2, tmp_path, chunk=1, max_nodes=2000, progress=False,
                    on_repeat="plan")  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["deals-000000000-000000001.npz"]


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


@pytest.mark.parametrize(
    "kind, extra",
    [("mlp", {}), ("cards", {}), ("cards", {"lookup": True, "piles": True, "moves": True})],
)
def test_checkpoint_round_trip_and_refusals(tmp_path, kind, extra):
    spec = game_spec(*SH)
    arch = {"kind": kind, "hidden": 16, "layers": 1, **extra}
    net = build_net(arch, spec)
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4", "arch": arch}
    p = tmp_path / "p.npz"
    save_policy(p, net, meta)
    agent = load_policy(p, game=SH[0], options={"cells": 2})  # another option of the game: fine
    obs = np.random.default_rng(0).random((3, spec["obs_dim"]), dtype=np.float32)
    with torch.no_grad():
        assert np.allclose(agent.scores(obs), net(torch.from_numpy(obs)).numpy())
    with pytest.raises(CheckpointError, match="cannot play"):
        load_policy(p, game="solitaire_reflechi", options={"draw": 1})
    # an older observation layout is refused, naming both
    z = dict(np.load(p))
    m = json.loads(bytes(z["meta"]).decode())
    m["layout_id"] = "1-000000000000"
    z["meta"] = np.frombuffer(json.dumps(m).encode(), np.uint8)
    old = tmp_path / "old.npz"
    np.savez(old, **z)
    with pytest.raises(CheckpointError, match="observation layout '1-000000000000'"):
        load_policy(old)


def test_layers_deepen_the_cards_network_action_mlp(tmp_path):
    """``layers`` is the depth of a cards network's action MLP: each layer past the first adds
    weights and changes the scores; one layer is the network with no such weights at all (as
    every one-layer checkpoint was saved). A checkpoint that records more layers than its
    weights hold is refused by name, not loaded half-initialised."""
    spec = game_spec(*SH)
    obs = np.random.default_rng(1).random((4, spec["obs_dim"]), dtype=np.float32)
    nets, scores = {}, {}
    for layers in (1, 2, 3):
        torch.manual_seed(0)
        nets[layers] = build_net({"kind": "cards", "hidden": 16, "layers": layers}, spec)
        with torch.no_grad():
            scores[layers] = nets[layers](torch.from_numpy(obs)).numpy()
    head = {n: {k for k in net.state_dict() if k.startswith("head.")} for n, net in nets.items()}
    assert head[1] == set() and len(head[2]) == 2 and len(head[3]) == 4
    # made last, the extra layers leave every other weight's initialisation as it was
    shared = nets[1].state_dict()
    assert all(torch.equal(v, nets[2].state_dict()[k]) for k, v in shared.items())
    assert not np.allclose(scores[1], scores[2]) and not np.allclose(scores[2], scores[3])
    p = tmp_path / "one.npz"
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4",
            "arch": {"kind": "cards", "hidden": 16, "layers": 1}}  # fmt: skip
    save_policy(p, nets[1], meta)
    z = dict(np.load(p))
    m = json.loads(bytes(z["meta"]).decode())
    m["arch"]["layers"] = 2
    z["meta"] = np.frombuffer(json.dumps(m).encode(), np.uint8)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, **z)
    with pytest.raises(CheckpointError, match="do not fit architecture"):
        load_policy(wrong)


class _Boom:
    def __reduce__(self):
        return (print, ("PICKLE RAN",))


def test_loading_never_unpickles(tmp_path, capsys):
    p = tmp_path / "evil.npz"
    np.savez(p, meta=np.array([_Boom()], dtype=object))
    with pytest.raises(CheckpointError):
        load_policy(p)
    # a stable-baselines3 style zip with a pickled payload is not a policy checkpoint either
    q = tmp_path / "sb3.npz"
    with zipfile.ZipFile(q, "w") as zf:
        zf.writestr("data", "{}")
    with pytest.raises(CheckpointError):
        load_policy(q)
    assert "PICKLE RAN" not in capsys.readouterr().out


@pytest.fixture(scope="module")
def small_checkpoint(tmp_path_factory):
    """A valid, small checkpoint (an MLP for Seahaven) to damage copies of."""
    spec = game_spec(*SH)
    arch = {"kind": "mlp", "hidden": 8, "layers": 1}
    torch.manual_seed(0)
    net = build_net(arch, spec)
    p = tmp_path_factory.mktemp("small") / "small.npz"
    save_policy(p, net, {"game": SH[0], "options": SH[1], "variant": "SH1-C4", "arch": arch})
    return p


def _npy(arr=None, *, header=None, cut=0):
    """The bytes of an .npy file holding ``arr`` (pickled if it holds objects), less its last
    ``cut`` bytes; or of a bare .npy header ``header`` with no data."""
    buf = io.BytesIO()
    if header is not None:
        npy_format.write_array_header_1_0(buf, header)
    else:
        np.save(buf, arr, allow_pickle=True)
    data = buf.getvalue()
    return data[: len(data) - cut]


def _damaged(src, dst, members, stored=False):
    """A copy of checkpoint ``src`` at ``dst`` whose zip members named in ``members`` have
    those bytes instead (stored uncompressed with ``stored``)."""
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", method) as zout:
        for name in zin.namelist():
            zout.writestr(name, members.get(name, zin.read(name)))
    return dst


WEIGHT = "body.2.bias"  # the output layer's bias of the small MLP: shape (n_actions,)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda w: _npy(np.array([_Boom()], dtype=object)), "holds Python objects"),
        (lambda w: _npy(w, cut=10), "truncated"),
        (lambda w: _npy(np.r_[w, w]), r"has shape \(\d+,\), not \(\d+,\)"),
        (
            lambda w: _npy(header={"descr": "<f4", "fortran_order": False, "shape": (2**40,)}),
            r"has shape \(1099511627776,\)",
        ),
        (lambda w: _npy(w.astype(np.float64)), "is float64, not float32"),
        (
            lambda w: _npy(np.where(np.arange(w.size) == 3, np.nan, w).astype(np.float32)),
            "NaN or infinite",
        ),
        (lambda w: _npy(np.full_like(w, np.inf)), "NaN or infinite"),
        (lambda w: b"not an array at all", "not an .npy array"),
    ],
)
def test_a_damaged_weight_is_refused_by_name(small_checkpoint, tmp_path, capsys, make, message):
    """Each weight's .npy header is checked against the network before its data is read (a
    huge declared shape allocates nothing), and its values must be finite float32."""
    w = np.load(small_checkpoint)[f"w/{WEIGHT}"]
    p = _damaged(small_checkpoint, tmp_path / "bad.npz", {f"w/{WEIGHT}.npy": make(w)})
    with pytest.raises(CheckpointError, match=rf"weight '{WEIGHT}'.*{message}"):
        load_policy(p)
    assert "PICKLE RAN" not in capsys.readouterr().out


def test_a_big_endian_weight_loads_as_the_same_float32(small_checkpoint, tmp_path):
    w = np.load(small_checkpoint)[f"w/{WEIGHT}"]
    p = _damaged(small_checkpoint, tmp_path / "be.npz", {f"w/{WEIGHT}.npy": _npy(w.astype(">f4"))})
    got = load_policy(p).net.state_dict()[WEIGHT].numpy()
    assert got.dtype == np.float32 and np.array_equal(got, w)


def test_a_checkpoint_with_a_corrupt_member_is_refused_naming_the_file(small_checkpoint, tmp_path):
    p = _damaged(small_checkpoint, tmp_path / "crc.npz", {}, stored=True)
    data = bytearray(p.read_bytes())
    w = np.load(small_checkpoint)[f"w/{WEIGHT}"]
    at = bytes(data).index(w.tobytes())  # the weight's data, stored as is
    data[at] ^= 0x01  # one bit flipped: the member's CRC no longer matches
    p.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=rf"{re.escape(str(p))} .*BadZipFile"):
        load_policy(p)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: _npy(header={"descr": "|u1", "fortran_order": False, "shape": (2**40,)}),
        lambda m: _npy(np.frombuffer(m, np.uint8), cut=5),
        lambda m: _npy(np.frombuffer(m, np.uint8).astype(np.int64)),
    ],
)
def test_damaged_metadata_is_refused(small_checkpoint, tmp_path, make):
    meta = np.load(small_checkpoint)["meta"].tobytes()
    p = _damaged(small_checkpoint, tmp_path / "m.npz", {"meta.npy": make(meta)})
    with pytest.raises(CheckpointError, match=rf"{re.escape(str(p))}: its metadata"):
        read_policy_meta(p)


def test_a_memory_mode_that_is_not_a_string_is_refused_by_name(small_checkpoint, tmp_path):
    z = dict(np.load(small_checkpoint))
    m = json.loads(bytes(z["meta"]).decode())
    m["arch"]["memory_mode"] = ["count"]
    z["meta"] = np.frombuffer(json.dumps(m).encode(), np.uint8)
    p = tmp_path / "mode.npz"
    np.savez(p, **z)
    with pytest.raises(CheckpointError, match=r"mode\.npz: architecture memory_mode=\['count'\]"):
        load_policy(p)


def test_a_path_or_variant_that_is_not_a_string_is_refused_by_name():
    import agents.policy as policy

    with pytest.raises(TypeError, match="variant must be a variant tag"):
        policy.learned_agent(5)
    for call in (load_policy, read_policy_meta):
        with pytest.raises(
            TypeError, match=r"checkpoint path must be a str or os\.PathLike, not 5"
        ):
            call(5)


def test_fit_learns_the_teacher_labels(episodes):
    data = {
        "obs": np.concatenate([e.obs for e in episodes]),
        "masks": np.concatenate([e.masks for e in episodes]),
        "labels": np.concatenate([e.labels for e in episodes]).astype(np.int64),
        "safe": np.concatenate([e.safe for e in episodes]),
    }
    data["prev"] = previous_actions(
        np.concatenate([np.full(len(e.labels), e.deal) for e in episodes]),
        np.concatenate([e.played for e in episodes]),
        episodes[0].masks.shape[1],
    )
    torch.manual_seed(0)
    net = build_net({"kind": "mlp", "hidden": 256, "layers": 1}, game_spec(*SH))
    _, hist = fit(net, data, epochs=40, batch_size=32, learning_rate=5e-3)
    # 80 positions: from chance (about 1 in 10 legal moves) to most labels learnt
    assert hist[0]["accuracy"] < 0.5 and hist[-1]["accuracy"] > 0.7


def test_fit_trains_and_the_policy_plays_on_the_auto_device(episodes, tmp_path):
    """``device="auto"``: the network trains where :func:`resolve_device` says (CUDA on a
    machine that has it), plays from there, and its checkpoint loads on the CPU to the same
    scores."""
    from agents.torch_setup import net_device, resolve_device

    data = {k: np.concatenate([getattr(e, k) for e in episodes])
            for k in ("obs", "masks", "labels", "safe", "played")}  # fmt: skip
    data["labels"] = data["labels"].astype(np.int64)
    data["episode"] = np.concatenate([np.full(len(e.labels), e.deal) for e in episodes])
    data["prev"] = previous_actions(data["episode"], data["played"], data["masks"].shape[1])
    data["gorder"] = teacher_orders(data, *SH)
    arch = {"kind": "cards", "hidden": 8, "layers": 1, "heads": "factored"}
    torch.manual_seed(0)
    net = build_net(arch, game_spec(*SH))
    want = torch.device(resolve_device("auto"))
    fit(net, data, epochs=1, batch_size=32, learning_rate=1e-3, device="auto")
    assert net_device(net).type == want.type
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4", "arch": arch,
            "play": {"rule": "factored", "threshold": 0.5}}  # fmt: skip
    res = play_deals(PolicyAgent(net, meta), *SH, [0, 1], max_episode_steps=20)
    assert [r.deal for r in res] == [0, 1]
    save_policy(tmp_path / "p.npz", net, meta)
    on_cpu = load_policy(tmp_path / "p.npz", device="cpu")
    assert net_device(on_cpu.net).type == "cpu"
    obs, masks = data["obs"][:8], data["masks"][:8]
    prev = data["prev"][:8]
    here = PolicyAgent(net, meta).scores(obs, masks, prev)
    np.testing.assert_allclose(on_cpu.scores(obs, masks, prev), here, rtol=1e-4, atol=1e-4)


def test_imitate_refuses_a_bad_device_before_it_starts(tmp_path, capsys):
    from scripts import experiment

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nvariant: SH1-C4\n")
    out = tmp_path / "run"
    assert experiment("imitate").main([str(cfg), "--out", str(out), "--device", "gpu"]) == 2
    assert (
        "imitate: device must be one of 'auto', 'cpu', 'cuda', 'cuda:N'" in capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"name": "../x"}, "plain folder name"),
        ({"variant": "XX1-C4"}, "variant must be one of"),
        ({"train": {"learning_rate": float("nan")}}, "train.learning_rate"),
        ({"train": {"unsafe_weight": 2.0}}, "train.unsafe_weight"),
        ({"arch": {"kind": "rnn"}}, "arch.kind"),
        ({"arch": {"kind": "cards", "heads": "many"}}, "arch.heads"),
        ({"arch": {"kind": "mlp", "heads": "factored"}}, "needs arch.kind cards"),
        ({"arch": {"kind": "mlp", "lookup": True}}, "arch.lookup needs arch.kind cards"),
        ({"arch": {"kind": "cards", "lookup": 1}}, "arch.lookup"),
        ({"arch": {"kind": "mlp", "piles": True}}, "arch.piles needs arch.kind cards"),
        ({"arch": {"kind": "mlp", "moves": True}}, "arch.moves needs arch.kind cards"),
        ({"arch": {"kind": "cards", "moves": 1}}, "arch.moves"),
        ({"arch": {"kind": "cards", "piles": "no"}}, "arch.piles"),
        ({"arch": {"kind": "mlp", "memory": True}}, "arch.memory needs arch.kind cards"),
        ({"arch": {"kind": "cards", "memory": "yes"}}, "arch.memory"),
        ({"train": {"safe_weight": -1}}, "train.safe_weight"),
        ({"dagger": {"rounds": -1}}, "dagger.rounds"),
        ({"dagger": {"epochs": -1}}, "dagger.epochs"),
        ({"dagger": {"warm_start": "yes"}}, "dagger.warm_start"),
        ({"teacher": {"on_repeat": "loop"}}, "teacher.on_repeat must be one of greedy, plan"),
        ({"bogus": 1}, "unknown key bogus"),
    ],
)
def test_imitation_config_refuses_bad_values(change, message):
    base = {"name": "x", "variant": "SH1-C4"}
    with pytest.raises(ConfigError, match=message):
        check_imitation_config({**base, **change})


SOLVER_TAUGHT = sorted((CHECKPOINT_DIR / "solver_taught").glob("*.npz"))
"""The solver-taught policies that expert iteration started from (``configs/exit_*.yaml``),
kept where the policy of the variant is now the expert iteration's."""


@pytest.mark.parametrize(
    "path",
    [*(p for _, p in sorted(committed_policies().items())), *SOLVER_TAUGHT],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_committed_policy_reproduces_its_recorded_wins(path):
    """Every committed checkpoint loads (its layout is the package's) and, played
    deterministically on its 20 recorded evaluation deals, wins exactly the deals recorded (and
    ends each game with the foundation cards and steps recorded, where they are)."""
    variant = path.stem
    meta = read_policy_meta(path)
    game, options = VARIANTS[variant]
    assert meta["layout_id"] == layout_id(EnvOptions.build(game, **options).variant.cfg)
    check = meta["check"]
    deals = eval_deals(check["count"], check["first"])
    agent = load_policy(path, game=game, options=options)
    results = play_deals(agent, game, options, deals)
    assert [r.deal for r in results if r.won] == check["won"]
    if "foundation" in check:  # recorded by experiments/publish_policy.py since 13b
        assert [r.foundation for r in results] == check["foundation"]
        assert [r.steps for r in results] == check["steps"]


def test_there_are_committed_policies():
    assert {"SH1-C4", "TF1-D1N", "TF1-D3N", "DS1-D1N", "DS1-D3N"} <= set(committed_policies())


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


def _data(episodes):
    ep = np.concatenate([np.full(len(e.labels), e.deal) for e in episodes])
    played = np.concatenate([e.played for e in episodes]).astype(np.int64)
    return {
        "obs": np.concatenate([e.obs for e in episodes]),
        "masks": np.concatenate([e.masks for e in episodes]),
        "labels": np.concatenate([e.labels for e in episodes]).astype(np.int64),
        "safe": np.concatenate([e.safe for e in episodes]),
        "played": played,
        "episode": ep,
        "prev": previous_actions(ep, played, episodes[0].masks.shape[1]),
    }


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
    got = teacher_orders(_data(eps), *SH)
    assert got.shape == (len(seen), MAX_TRIES)
    for r, row in zip(seen, got, strict=True):
        legal = np.flatnonzero(np.isfinite(r))
        want = legal[np.argsort(-r[legal], kind="stable")][:MAX_TRIES]
        assert np.array_equal(row[: want.size], want) and (row[want.size :] == -1).all()
    # what the orders say of the labels: a safe label is among the moves tried, an unsafe one
    # is greedy's first choice
    d = _data(eps)
    assert all(lab in row for lab, row in zip(d["labels"][d["safe"]], got[d["safe"]],
                                               strict=True))  # fmt: skip
    assert (got[~d["safe"], 0] == d["labels"][~d["safe"]]).all()


def test_factored_network_play_rules_and_checkpoint(tmp_path):
    spec = game_spec(*SH)
    arch = {"kind": "cards", "hidden": 16, "layers": 1, "heads": "factored"}
    torch.manual_seed(0)
    net = build_net(arch, spec)
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4", "arch": arch,
            "play": {"rule": "factored", "threshold": 0.5}}  # fmt: skip
    p = tmp_path / "f.npz"
    save_policy(p, net, meta)
    agent = load_policy(p, game=SH[0], options=SH[1])
    e = teach_deal(*SH, EVAL_SPLIT_END + 1, max_steps=5)
    obs, masks = e.obs, e.masks
    with torch.no_grad():
        pol, rank, safe = (t.numpy() for t in net(torch.from_numpy(obs), torch.from_numpy(masks),
                                                   heads=True))  # fmt: skip
    assert np.isneginf(rank[~masks]).all() and np.isfinite(rank[masks]).all()
    s = agent.scores(obs, masks)
    assert np.array_equal(s.argmax(1), rule_scores("factored", 0.5, pol, rank, safe).argmax(1))
    # the rule by hand: the best rank score among the moves with winnability >= 0.5, or the
    # best of all when there is none
    for i in range(len(obs)):
        legal = np.flatnonzero(masks[i])
        ok = legal[1 / (1 + np.exp(-safe[i, legal])) >= 0.5]
        pick = ok if ok.size else legal
        assert s[i].argmax() == pick[np.argmax(rank[i, pick])]
    # bad play rules are refused with the checkpoint's name, and a rule needs its heads
    for play, msg in (({"rule": "best"}, "play rule 'best'"),
                      ({"rule": "veto", "threshold": 2}, "threshold"),
                      ({"rule": "veto", "threshold": True}, "threshold")):  # fmt: skip
        save_policy(p, net, {**meta, "play": play})
        with pytest.raises(CheckpointError, match=msg):
            load_policy(p)
    plain = build_net({"kind": "cards", "hidden": 16, "layers": 1}, spec)
    with pytest.raises(CheckpointError, match="needs a network with heads='factored'"):
        PolicyAgent(plain, {**meta, "arch": {"kind": "cards", "hidden": 16}})
    with pytest.raises(CheckpointError, match="needs kind 'cards'"):
        build_net({"kind": "mlp", "hidden": 8, "heads": "factored"}, spec)


def test_fit_trains_the_factored_heads(episodes):
    data = _data(episodes)
    data["gorder"] = teacher_orders(data, *SH)
    torch.manual_seed(0)
    net = build_net({"kind": "cards", "hidden": 64, "layers": 1, "heads": "factored"},
                    game_spec(*SH))  # fmt: skip
    with pytest.raises(ValueError, match="gorder"):
        fit(net, {k: v for k, v in data.items() if k != "gorder"}, epochs=1, batch_size=32,
            learning_rate=1e-3)  # fmt: skip
    _, hist = fit(net, data, epochs=30, batch_size=32, learning_rate=5e-3)
    first, last = hist[0], hist[-1]
    assert last["rank_top1"] > max(0.8, first["rank_top1"])
    assert last["safe_accuracy"] > max(0.8, first["safe_accuracy"])
    assert last["accuracy"] > first["accuracy"]
    # the kept epoch's play rule: the last with the most wins
    rows = [{"val_wins": 1, "val_play": '{"rule": "veto"}'},
            {"val_wins": 3, "val_play": '{"rule": "factored"}'},
            {"val_wins": 3, "val_play": '{"rule": "policy"}'}]  # fmt: skip
    assert best_play(rows) == {"rule": "policy"}


def test_a_variant_without_its_own_policy_gets_the_nearest_of_its_game(monkeypatch):
    import agents.policy as policy

    fake = {t: f"{t}.npz" for t in ("DS1-D1N", "DS1-D3N", "SH1-C4", "TF1-D1N")}
    monkeypatch.setattr(policy, "committed_policies", lambda: fake)
    monkeypatch.setattr(policy, "load_policy", lambda path, **kw: path)
    assert policy.learned_agent("DS1-D3V") == "DS1-D3N.npz"
    assert policy.learned_agent("DS1-D1V") == "DS1-D1N.npz"
    assert policy.learned_agent("SH1-C1") == "SH1-C4.npz"
    assert policy.learned_agent("TF1-D3N") == "TF1-D1N.npz"
    with pytest.raises(CheckpointError, match="no committed policy for 'XX1-A'"):
        policy.learned_agent("XX1-A")


@pytest.mark.parametrize("variant", ["SH1-C4", "TF1-D1N", "DS1-D1N"])
def test_lookup_network_finds_the_card_each_action_moves(variant):
    """A ``lookup`` network's card of an action is the card that changes place when the action
    is played, and its target card is the card it goes on (covered afterwards)."""
    from solitaire_gym.envs.core import EnvCore

    game, options = VARIANTS[variant]
    spec = game_spec(game, options)
    net = build_net({"kind": "cards", "hidden": 8, "layers": 1, "lookup": True}, spec)
    w, nc, depth = spec["width"], spec["n_cards"], spec["depth_col"]
    opts = EnvOptions.build(game, **options)
    rng = np.random.default_rng(0)
    checked = 0
    played: list[int] = []
    for deal in range(3):
        core = EnvCore(opts, 1)
        core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
        for _ in range(25):
            legal = np.flatnonzero(core.masks[0])
            if legal.size == 0:
                break
            before = core.obs[0, : nc * w].reshape(nc, w).copy()
            cards = torch.from_numpy(before[None])
            loc = cards[:, :, torch.as_tensor(spec["places"])]
            acts = torch.as_tensor(legal)
            mv, tg = net.card_ids(cards, loc, torch.zeros(len(legal), dtype=torch.long), acts)
            for a, m, t in zip(legal, mv.tolist(), tg.tolist(), strict=True):
                after_core = EnvCore(opts, 1)
                after_core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
                for p in played:
                    after_core.step(np.array([p]))
                after_core.step(np.array([a]))
                after = after_core.obs[0, : nc * w].reshape(nc, w)
                if m < nc:  # that card left its place (its location flags changed)
                    assert not np.array_equal(before[m, :depth], after[m, :depth]), (a, m)
                    checked += 1
                if t < nc:  # the target's top card is covered now
                    assert after[t, depth] > before[t, depth]
            a = int(rng.choice(legal))
            played.append(a)
            core.step(np.array([a]))
        played.clear()
    assert checked > 50


@pytest.mark.parametrize("variant", ["SH1-C4", "TF1-D1N", "DS1-D1N"])
def test_moves_network_finds_the_card_each_action_uncovers(variant):
    """A ``moves`` network's uncovered card of an action is the card on top of its source place
    once the action is played (none when that card lies face down or the place is empty), and
    its count of kept face-up cards is the source column's (checked with ``to_dict``)."""
    from agents.policy import LEFT
    from solitaire_gym.envs.core import EnvCore

    game, options = VARIANTS[variant]
    spec = game_spec(game, options)
    net = build_net({"kind": "cards", "hidden": 8, "layers": 1, "moves": True}, spec)
    w, nc, depth = spec["width"], spec["n_cards"], spec["depth_col"]
    assert list(spec["face"][:4]) == ([0, 0, 1, 1] if nc == 104 else [0, 1, 2, 3])
    opts = EnvOptions.build(game, **options)
    rng = np.random.default_rng(0)
    seen = {"card": 0, "none": 0, "kept": 0, "down": 0}
    for deal in range(3):
        core = EnvCore(opts, 1)
        core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
        played: list[int] = []
        for _ in range(25):
            legal = np.flatnonzero(core.masks[0])
            if legal.size == 0:
                break
            obs = torch.from_numpy(core.obs[:1].copy())
            cards = obs[:, : nc * w].reshape(1, nc, w)
            loc = cards[:, :, torch.as_tensor(spec["places"])]
            acts = torch.as_tensor(legal)
            rows = torch.zeros(len(legal), dtype=torch.long)
            _, _, un, left = net.move_keys(obs, cards, loc, rows, acts)
            for a, u, k in zip(legal, un.tolist(), left.tolist(), strict=True):
                after_core = EnvCore(opts, 1)
                after_core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
                for p in [*played, a]:
                    after_core.step(np.array([p]))
                after = after_core.obs[0, : nc * w].reshape(nc, w)
                src = int(spec["src"][a])
                on_src = after[:, spec["places"][src]] > 0 if src < len(spec["places"]) else None
                if u < nc:  # the uncovered card still lies in the source place, now on top
                    assert on_src[u] and after[u, depth] == 0, (a, u)
                    seen["card"] += 1
                elif spec["un_depth"][a] >= 0 and on_src is not None:
                    # none: the source is empty now, or its top card was not seen before
                    before = cards[0].numpy()[:, spec["places"][src]] > 0
                    assert not (on_src & before & (after[:, depth] == 0)).any(), a
                    seen["none"] += 1
                if spec["moved"][a] > 0:  # a column source: the face-up cards it keeps
                    pile = core.to_dict(0)["tableau"][src]
                    up = sum(not c.endswith("*") for c in pile) - spec["moved"][a]
                    down = sum(c.endswith("*") for c in pile)
                    assert k == 2 * min(up, LEFT) + (down > 0), (a, pile, k)
                    seen["kept"] += 1
                    seen["down"] += down > 0
                else:
                    assert k == 2 * (LEFT + 1)
            a = int(rng.choice(legal))
            played.append(a)
            core.step(np.array([a]))
    assert seen["card"] > 20 and seen["kept"] > 20
    assert seen["down"] > 0 or game != "double_solitaire"


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


def test_fatal_moves_finds_the_move_that_lost_each_game(tmp_path, capsys):
    """experiments/fatal_moves.py on DAgger shards of a random student: each fatal move is the
    student's, made where the teacher's label was safe, just before the first unsafe label; the
    other-stock check rebuilds that very position."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "fatal_moves.py"
    spec = importlib.util.spec_from_file_location("_exp_fatal_moves", path)
    fm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fm)
    tf = VARIANTS["TF1-D1N"]
    eps = [teach_deal(*tf, EVAL_SPLIT_END + d, student=RandomAgent(seed=d), max_steps=60,
                      max_nodes=3000, stop_unsafe=2) for d in range(4)]  # fmt: skip
    shard = tmp_path / "s.npz"
    write_shard(shard, eps, {"variant": "TF1-D1N"})
    data = load_shards([shard], variant="TF1-D1N")
    fatal = fm.fatal_moves(data, *tf)
    assert fatal, "no random game was lost: the test shows nothing"
    won = won_deals(data)
    for f in fatal:
        assert not won[f["deal"]]  # a fatal move loses its game
        t = f["row"]
        assert data["safe"][t] and not data["safe"][t + 1]
        assert data["safe"][t - f["index"] : t + 1].all()  # the first unsafe label follows it
        assert f["played"] == data["played"][t] != data["labels"][t] == f["label"]
    got = fm.other_stocks(data, fatal[0], *tf, 1, np.random.default_rng(0), max_nodes=3000)
    if got is not None:  # no recycle before it: the real stock, then one other order
        assert len(got) == 2
        assert all(v in ("solvable", "unsolvable", "unknown") for pair in got for v in pair)
        assert got[0][1] != "unsolvable"  # the label was shown winnable: never proven lost
    assert fm.main(["TF1-D1N", str(shard)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 4 and report["fatal_moves"] == len(fatal)
    assert 0 <= report["lost_with_every_position_winnable"] <= 4 - len(fatal)
    assert fm.main(["SH1-C4", str(shard), "--stocks", "2"]) == 2  # reshuffles: Réfléchi only
    assert fm.main(["TF1-D1N", str(tmp_path / "none*.npz")]) == 2  # no shard: a clear error


@pytest.mark.parametrize("variant", ["SH1-C4", "TF1-D1N", "DS1-D3N"])
def test_place_features_are_the_pile_values_of_that_place(variant):
    """A ``piles`` network's values of each place (``game_spec``'s ``place_feats``) are that
    place's own: checked against the position (``EnvCore.to_dict``) along random play."""
    from solitaire_gym.envs.core import EnvCore
    from solitaire_gym.envs.observation import DEPTH_SCALE, layout

    game, options = VARIANTS[variant]
    spec = game_spec(game, options)
    feats = spec["place_feats"]
    opts = EnvOptions.build(game, **options)
    lay = layout(opts.variant.cfg)
    cols, n = int(opts.variant.cfg[G_COLS]), spec["n_cards"]
    place = {int(f): i for i, f in enumerate(spec["places"])}  # card-block column -> place
    net = build_net({"kind": "cards", "hidden": 8, "layers": 1, "piles": True}, spec)
    assert net.feat_idx.shape[0] == len(spec["places"]) + (1 if spec["cells"] else 0)
    assert (feats[place[lay.found]] == -1).all()  # the foundations: per pile, not per place
    if spec["cells"]:
        assert (feats[-1] == -1).all()  # all cells together
    double = game == "double_solitaire"
    rng = np.random.default_rng(1)
    core = EnvCore(opts, 1)
    core.deal(np.zeros(1, np.int64), np.array([2], np.int64))
    seen = 0
    for _ in range(60):
        o, pos = core.obs[0], core.to_dict(0)
        for c in range(cols):
            pile, f = pos["tableau"][c], feats[place[lay.columns + c]]
            assert round(o[f[0]] * DEPTH_SCALE) == len(pile)
            assert (f[1] < 0) == (not double)
            if double:
                down = sum(card.endswith("*") for card in pile)
                assert round(o[f[1]] * DEPTH_SCALE) == down
                seen += down
        if "waste" in pos:
            assert round(o[feats[place[lay.waste], 0]] * n) == len(pos["waste"])
            assert round(o[feats[place[lay.stock], 0]] * n) == len(pos["stock"])
        if "cells" in pos:
            for k, cell in enumerate(pos["cells"]):
                assert o[feats[place[lay.cell + k], 0]] == (1.0 if cell is None else 0.0)
        legal = np.flatnonzero(core.masks[0])
        if legal.size == 0:
            break
        core.step(np.array([int(rng.choice(legal))]))
    assert seen > 0 or not double


@pytest.mark.parametrize("warm", [False, True])
def test_a_warm_started_dagger_round_starts_from_the_previous_round(tmp_path, monkeypatch, warm):
    """``dagger.warm_start``: round 1 trains from round 0's weights, for ``dagger.epochs``
    epochs; without it, from fresh weights for ``train.epochs``."""
    import agents.imitation as imitation

    seen = []
    real_fit = imitation.fit

    def spy(net, data, **kw):
        seen.append(({k: v.clone() for k, v in net.state_dict().items()}, kw["epochs"]))
        return real_fit(net, data, **kw)

    monkeypatch.setattr(imitation, "fit", spy)
    cfg = check_imitation_config({
        "name": "warm", "variant": "SH1-C4", "jobs": 1, "torch_threads": 1,
        "arch": {"kind": "cards", "hidden": 8, "layers": 1},
        "teacher": {"deals": 2, "max_nodes": 2000}, "validation": {"deals": 1},
        "dagger": {"rounds": 1, "deals": 1, "warm_start": warm, "epochs": 1, "stop_unsafe": 5},
        "train": {"epochs": 2, "batch_size": 64},
    })  # fmt: skip
    imitation.ImitationRun(cfg, tmp_path).run(progress=False)
    assert [e for _, e in seen] == [2, 1 if warm else 2]
    round0 = load_policy(tmp_path / "round0.npz").net.state_dict()
    start1 = seen[1][0]
    same = all(np.array_equal(round0[k].numpy(), start1[k].numpy()) for k in round0)
    assert same == warm


def test_lost_games_says_how_each_lost_game_ends(tmp_path, capsys):
    """experiments/lost_games.py: a game that ends stuck (no legal move) is proven lost at its
    end, the foundation count it replays to is the one the game ended with, and the last
    foundation growth lies within the game."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "lost_games.py"
    spec = importlib.util.spec_from_file_location("_exp_lost_games", path)
    lg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lg)
    game, options = VARIANTS["SH1-C4"]
    deals = eval_deals(6)
    results = play_deals(RandomAgent(seed=0), game, options, deals, record=deals)
    stuck = [r for r in results if r.end == "stuck"]
    assert stuck, "no random game got stuck: the test shows nothing"
    for r in stuck:
        row = lg.lost_game(r, 5000)
        assert row["end_verdict"] == "unsolvable"
        assert 0 <= row["last_growth"] <= r.steps
        g = Game.from_code(r.code)
        for m in r.trace:
            g.play(m)
        assert g.stuck and not g.won
        assert lg.foundation_cards(g.state, 0, g.cfg) == r.foundation
    out = tmp_path / "lost.json"
    assert lg.main(["SH1-C4", "greedy", "--deals", "4", "--max-nodes", "3000", "--json",
                    str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert f"lost {len(rows)}:" in text
    assert all(r["end_verdict"] in ("solvable", "unsolvable", "unknown") for r in rows)
    with pytest.raises(SystemExit):
        lg.main(["SH1-C4", str(tmp_path / "missing.npz")])  # no checkpoint: a clear error


def test_greedy_with_the_solver_veto_plays_the_teachers_labels():
    """agents/veto.py: greedy with the veto is the teacher (on_repeat="greedy"): move for move,
    the same choices as the teacher's labels, and it replaces greedy's first choice where the
    teacher did."""
    from agents.veto import SolverVetoAgent
    from solitaire_gym.engine.actions import action_to_move

    game, options = VARIANTS["SH1-C4"]
    cfg = Game.new(game, **options).cfg
    replaced = 0
    for deal in (0, 3):
        ep = teach_deal(game, options, deal, max_steps=80)
        agent = SolverVetoAgent(GreedyAgent(game, options))
        (r,) = play_deals(agent, game, options, [deal], max_episode_steps=80, record=[deal])
        assert r.trace == [action_to_move(cfg, int(a)) for a in ep.labels]
        assert agent.moves == len(ep.labels)
        data = {"obs": ep.obs, "masks": ep.masks, "played": ep.labels,
                "episode": np.full(len(ep.labels), deal)}  # fmt: skip
        greedy_first = teacher_orders(data, game, options, k=1)[:, 0]
        assert agent.vetoed == int((greedy_first != ep.labels).sum())
        replaced += agent.vetoed
    assert replaced > 0, "the veto never replaced greedy's choice: the test shows nothing"


def test_the_veto_refuses_what_it_cannot_veto(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    from agents.veto import SolverVetoAgent

    with pytest.raises(TypeError, match="cannot be vetoed"):
        SolverVetoAgent(RandomAgent(seed=0))
    game, options = VARIANTS["SH1-C4"]
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="max_nodes"):
            SolverVetoAgent(GreedyAgent(game, options), max_nodes=bad)
    path = Path(__file__).resolve().parents[1] / "experiments" / "veto.py"
    spec = importlib.util.spec_from_file_location("_exp_veto", path)
    veto = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(veto)
    for argv in (["SH1-C4", "random"], ["SH1-C4", str(tmp_path / "missing.npz")],
                 ["SH1-C4", "greedy", "--deals", "0"],
                 ["SH1-C4", "greedy", "--samples", "3"]):  # fmt: skip
        with pytest.raises(SystemExit):
            veto.main(argv)
    with pytest.raises(SystemExit):
        veto.main(["SH1-C4", "greedy", "--decide", "-1"])
    out = tmp_path / "veto.json"
    assert veto.main(["SH1-C4", "greedy", "--deals", "3", "--decide", "5000", "--json",
                      str(out)]) == 0  # fmt: skip
    rows = json.loads(out.read_text())
    assert [r["deal"] for r in rows] == list(eval_deals(3, 2**19))
    text = capsys.readouterr().out
    won = sum(r["won"] for r in rows)
    assert f"policy         won {won:>5} of 3" in text
    lost = [r for r in rows if not r["won_with_veto"]]
    assert f"the {len(lost)} deals lost with the veto, decided" in text
    assert all(r["deal_verdict"] in ("solvable", "unsolvable", "unknown") for r in lost)
    assert all(r["deal_verdict"] is None for r in rows if r["won_with_veto"])


def test_the_sampled_veto_never_reads_the_order_of_the_unseen_stock(monkeypatch, tmp_path):
    """agents/veto.py with samples: the solver is asked about reshuffles of the stock that
    depend on its cards, never on their real order; and only Réfléchi is sampled."""
    import agents.veto as veto

    asked: list[list] = []

    def prove(g, max_nodes):  # records the stocks the veto asks about
        asked[-1].append(g.to_dict()["stock"])
        return "solvable", []

    monkeypatch.setattr(veto, "prove", prove)
    game, options = VARIANTS["TF1-D3N"]
    real = Game.new(game, **options, deal=4).to_dict()
    for position in (real, dict(real, stock=real["stock"][::-1])):
        asked.append([])
        agent = veto.SolverVetoAgent(GreedyAgent(game, options), samples=5)
        assert agent._sampled(position, "draw")
    assert len(asked[0]) == 5 and asked[0] == asked[1]
    assert len({tuple(s) for s in asked[0]}) > 1  # reshuffles, not one order
    with pytest.raises(ValueError, match="samples"):
        veto.SolverVetoAgent(GreedyAgent(game, options), samples=-1)
    sh = VARIANTS["SH1-C4"]
    with pytest.raises(ValueError, match="samples"):
        veto.SolverVetoAgent(GreedyAgent(*sh), samples=3).check_env(*sh)
