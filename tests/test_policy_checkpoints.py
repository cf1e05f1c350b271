"""Policy checkpoints (``agents/policy.py``): written and read back to the same scores, read
header first and never unpickled; a damaged weight, metadata or zip member, another game or an
older observation layout refused naming the file; and a variant without a committed policy of
its own given the nearest of its game."""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
from refusing import npy_bytes

torch = pytest.importorskip("torch")

from agents.play import VARIANTS  # noqa: E402
from agents.policy import (  # noqa: E402
    CheckpointError,
    build_net,
    game_spec,
    load_policy,
    read_policy_meta,
    save_policy,
)

SH = VARIANTS["SH1-C4"]


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


_npy = npy_bytes


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
