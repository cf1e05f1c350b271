"""Files from elsewhere (results folders, configs, checkpoints, shards, traces) cannot
delete, hang, exhaust memory or inject. One regression test (or a few) per finding, numbered as
in the issue; the package's own error naming the file, a short message, nothing written outside
the output folder, no old output lost."""

import csv
import json
import os
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refusing import MAX_MESSAGE, refused
from scripts import experiment

from agents.config import MAX_NET_WEIGHTS, ConfigError, load_config
from agents.imitation import load_imitation_config
from experiments.evaluation.records import POLICY_NAME, row_problem, trace_path
from solitaire_gym.files import FileFormatError, atomic_path, strict_json, write_atomic

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "configs" / "demo_seahaven_c4.yaml"
IMITATE = ROOT / "configs" / "demo_imitate_seahaven_c4.yaml"
LOADERS = [load_config, load_imitation_config]


def in_time(f, seconds: float = 5.0):
    """``f()`` in a thread that must end within ``seconds`` (a hang fails the test, not the
    run); returns what it returned or raises what it raised."""
    out: dict = {}

    def run():
        try:
            out["value"] = f()
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


# ---- 2, 6, 12. configs: both loaders through one hardened reader --------------------------------
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize("load", LOADERS, ids=["train", "imitate"])
@pytest.mark.parametrize(
    "text, words",
    [
        (LAUGHS + "name: *i\n", "aliases"),  # finding 2: 472 bytes that hung the loaders
        (LAUGHS.replace("a: &a", "net_arch: &a") + "options: *i\n", "aliases"),
        ("name: x\n" + "options: " + "[" * 20_000 + "]" * 20_000 + "\n", "nested"),
        ("name: x\nseed: " + "9" * 5000 + "\n", "5000 digits"),
        ("name: x\nseed: 1\nseed: 2\n", "given twice"),
        ("name: 'x" + "y" * 100_000 + "'\nname: z\n", "given twice"),
    ],
    ids=["laughs", "laughs-options", "deep", "long-int", "duplicate", "long-duplicate"],
)
def test_config_loaders_refuse_hostile_yaml(tmp_path, load, text, words):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    t0 = time.perf_counter()
    message = in_time(lambda: refused(ConfigError, load, path))
    assert time.perf_counter() - t0 < 5
    assert words in message and str(path)[:40] in message


@pytest.mark.parametrize("load", LOADERS, ids=["train", "imitate"])
def test_config_loaders_refuse_special_files_without_waiting(tmp_path, load):
    assert "larger than" in in_time(lambda: refused(ConfigError, load, _big(tmp_path)))
    assert "not a regular file" in in_time(lambda: refused(ConfigError, load, tmp_path))
    if os.path.exists("/dev/zero"):
        assert "not a regular file" in in_time(lambda: refused(ConfigError, load, "/dev/zero"))
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.yaml")
        message = in_time(lambda: refused(ConfigError, load, tmp_path / "pipe.yaml"))
        assert "not a regular file" in message


def _big(tmp_path: Path) -> Path:
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * (2**20) + "\n")
    return path


def test_the_shipped_configs_still_load():
    assert load_config(TRAIN).name
    assert load_imitation_config(IMITATE).name


def test_network_size_is_capped(tmp_path):
    """Finding 12: 64 layers of 65,536 units (16 GiB a layer) were accepted."""
    path = tmp_path / "c.yaml"
    raw = yaml.safe_load(TRAIN.read_text())
    raw["network"]["net_arch"] = [65536] * 64
    path.write_text(yaml.safe_dump(raw))
    assert f"{MAX_NET_WEIGHTS:,}" in refused(ConfigError, load_config, path)
    raw = yaml.safe_load(IMITATE.read_text())
    raw["arch"].update(hidden=4096, layers=8)
    path.write_text(yaml.safe_dump(raw))
    assert f"{MAX_NET_WEIGHTS:,}" in refused(ConfigError, load_imitation_config, path)


# ---- the shared reader and writer (solitaire_gym/files.py) ---------------------------------------
@pytest.mark.parametrize(
    "text, words",
    [
        ('{"a": 1, "a": 2}', "given twice"),
        ('{"a": "\\ud800"}', "lone surrogate"),
        ('{"\\udfff": 1}', "lone surrogate"),
        ('[1, [2, ["\\ud800x"]]]', "lone surrogate"),
        ('{"a": NaN}', "NaN"),
        ("[Infinity]", "Infinity"),
        ("[-Infinity]", "Infinity"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ("[" + "9" * 5000 + "]", "digits"),
        ("{bad", "Expecting property name"),
    ],
)
def test_strict_json_refuses_what_the_package_never_writes(text, words):
    assert words in refused(FileFormatError, strict_json, text)


def test_strict_json_reads_what_the_package_writes():
    d = {"a": [1, -2.5, "é😀", None, True], "b": {"c": "\\ud83d"}}
    assert strict_json(json.dumps(d)) == d
    assert strict_json(json.dumps(d, ensure_ascii=False)) == d


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8)
                    | st.floats(allow_nan=False, allow_infinity=False),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c,
                                                                        max_size=4),
                    max_leaves=20))  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_strict_json_fuzz(value):
    """Anything json.dumps writes of valid text reads back; a mutated text is read or refused
    with FileFormatError, nothing else."""
    try:
        text = json.dumps(value)
        text.encode("utf-8")
        json.dumps(value).encode("utf-8")
    except UnicodeEncodeError:
        return
    if not _has_surrogate(value):
        assert strict_json(text) == value
    for cut in (text[:-1], text[1:], text.replace(",", ",,", 1), text + text):
        try:
            strict_json(cut)
        except FileFormatError as e:
            assert len(str(e)) <= MAX_MESSAGE


def _has_surrogate(value) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def test_write_atomic_never_follows_a_symlink_and_keeps_the_old_file(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "link.txt").symlink_to(victim)
    assert "symbolic link" in refused(FileFormatError, write_atomic, out / "link.txt", "x")
    assert victim.read_text() == "precious"
    # a folder planted under the output folder that leads out of it
    (out / "sub").symlink_to(tmp_path, target_is_directory=True)
    assert "outside" in refused(FileFormatError, write_atomic, out / "sub" / "victim.txt", "x",
                                inside=out)  # fmt: skip
    assert "outside" in refused(FileFormatError, write_atomic, out / ".." / "victim.txt", "x",
                                inside=out)  # fmt: skip
    assert victim.read_text() == "precious"
    # a failed write leaves the old file as it was, and no temporary file behind
    (out / "r.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_path(out / "r.txt", inside=out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("the writer failed")
    assert (out / "r.txt").read_text() == "old"
    assert sorted(p.name for p in out.iterdir()) == ["link.txt", "r.txt", "sub"]
    write_atomic(out / "new" / "r.txt", "new", inside=out)
    assert (out / "new" / "r.txt").read_text() == "new"
    assert oct((out / "new" / "r.txt").stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---- 4, 12. traces: strict JSON; render keeps an old output ------------------------------------
TRACE = {"format": "solitaire_gym.trace", "version": 1, "code": "SH1-C4-AAAAAJ2",
         "moves": ["t1>t7", "t10>c"]}  # fmt: skip


@pytest.mark.parametrize(
    "text, words",
    [
        (json.dumps(TRACE)[:-1] + ', "agent": "\\ud800"}', "lone surrogate"),  # finding 4
        (json.dumps(TRACE)[:-1] + ', "agent": "a", "agent": "b"}', "given twice"),  # finding 12
        (json.dumps(TRACE)[:-1] + ', "scores": [0, NaN]}', "NaN"),
    ],
)
def test_load_trace_is_strict_json(tmp_path, text, words):
    from solitaire_gym.traces import TraceError, load_trace

    path = tmp_path / "t.json"
    path.write_text(text)
    assert words in refused(TraceError, load_trace, path)


def test_render_of_a_bad_trace_keeps_the_old_output(tmp_path, capsys):
    """Finding 4: render --html truncated out.html to 0 bytes, then crashed."""
    from solitaire_gym.cli import main

    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE)[:-1] + ', "agent": "\\ud800"}')
    out = tmp_path / "out.html"
    out.write_text("old page")
    assert main(["render", str(path), "--html", str(out)]) == 2
    assert "lone surrogate" in capsys.readouterr().err
    assert out.read_text() == "old page"


# ---- 10. writers do not follow symlinks planted in their folder ---------------------------------
def test_trace_writers_do_not_follow_a_planted_symlink(tmp_path):
    import gymnasium as gym

    from solitaire_gym.traces import TraceError, TraceRecorder, save_trace

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "t.json").symlink_to(victim)
    assert "symbolic link" in refused(TraceError, save_trace, folder / "t.json", TRACE["code"],
                                      TRACE["moves"])  # fmt: skip
    env = TraceRecorder(gym.make("solitaire_gym/SeahavenTowers-v0", max_episode_steps=1), folder)
    _, info = env.reset(seed=3)
    (folder / f"episode-000001-{info['code']}.json").symlink_to(victim)
    with pytest.raises(TraceError, match="symbolic link"):
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert victim.read_text() == "precious"


# ---- 11. bounded costs of valid but huge traces -------------------------------------------------
def test_render_refuses_a_trace_too_long_to_draw(tmp_path, capsys):
    from solitaire_gym.cli import main
    from solitaire_gym.traces import MAX_RENDER_MOVES, load_trace, save_trace

    moves = ["t1>t7", "undo"] * (MAX_RENDER_MOVES // 2 + 1)
    path = save_trace(tmp_path / "long.json", TRACE["code"], moves)
    t0 = time.perf_counter()
    for flag in ("--html", "--gif", "--mp4"):
        out = tmp_path / f"out{flag[2:]}"
        assert main(["render", str(path), flag, str(out)]) == 2
        assert f"at most {MAX_RENDER_MOVES}" in capsys.readouterr().err
        assert not out.exists()
    assert main(["render", str(path), "--png", str(tmp_path / "x.png")]) == 0
    trace = load_trace(path)
    page = trace._repr_html_()
    assert "final position" in page and len(page) < 200_000
    assert time.perf_counter() - t0 < 30


# ---- 8. Gymnasium's seed convention --------------------------------------------------------------
def test_vector_seed_list_seeds_each_game_alone():
    """vec.reset(seed=[s0, s1, ...]) gives game i the deal that si alone determines: the one
    SolitaireEnv().reset(seed=si) deals; changing s1 leaves game 0's deal alone."""
    from solitaire_gym.envs.solitaire_env import SolitaireEnv
    from solitaire_gym.envs.vector_env import SolitaireVectorEnv

    for kwargs in ({"game": "seahaven_towers", "cells": 1}, {"game": "double_solitaire"}):
        seeds = [5, 17, 2**40, 0]
        vec = SolitaireVectorEnv(4, **kwargs)
        codes = list(vec.reset(seed=seeds)[1]["code"])
        single = [SolitaireEnv(**kwargs).reset(seed=s)[1]["code"] for s in seeds]
        assert codes == single
        other = list(SolitaireVectorEnv(4, **kwargs).reset(seed=[5, 18, 2**40, 0])[1]["code"])
        assert other[0] == codes[0] and other[2:] == codes[2:] and other[1] != codes[1]
        # a reset_mask resets the masked games from their own seeds
        vec.reset(seed=[1, 2, 3, 4], options={"reset_mask": np.array([False, True, False, True])})
        again = list(vec.reset(seed=[9, 2, 9, 4])[1]["code"])
        assert again[1] == SolitaireEnv(**kwargs).reset(seed=2)[1]["code"]


# ---- 9. unbounded messages; 12. play --save naming a folder ------------------------------------
def test_env_messages_are_short():
    from solitaire_gym.envs.solitaire_env import SolitaireEnv

    refused((TypeError, ValueError), SolitaireEnv, **{"k" * 100_000: 1})
    refused(ValueError, SolitaireEnv, max_episode_steps="x" * 100_000)


def test_play_save_naming_a_folder_is_refused_before_the_game(tmp_path, monkeypatch, capsys):
    import io

    from solitaire_gym.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("t1>t7\nquit\n"))
    assert main(["play", "SH1-C4-AAAAAJ2", "--save", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert "is a folder" in out.err and "played" not in out.out


# ---- 3, 8. .npz members read header first: checkpoints and shards --------------------------------
CHECKPOINT = ROOT / "agents" / "checkpoints" / "SH1-C4.npz"


def _npy(shape, descr="<f4", data: bytes = b"") -> bytes:
    """An .npy member whose header declares ``shape`` (any numbers), followed by ``data``."""
    import io

    from numpy.lib import format as npy_format

    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False,
                                            "shape": shape})  # fmt: skip
    return buf.getvalue() + data


def _rezip(src: Path, dst: Path, members: dict[str, bytes | tuple]) -> Path:
    """``src`` with ``members`` replaced: bytes, or (header bytes, n zero bytes after them)
    streamed in, a zip bomb that is small on disk."""
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            new = members.get(name, zin.read(name))
            if isinstance(new, tuple):
                head, zeros = new
                with zout.open(name, "w", force_zip64=True) as f:
                    f.write(head)
                    for _ in range(zeros // 2**20):
                        f.write(bytes(2**20))
                    f.write(bytes(zeros % 2**20))
            else:
                zout.writestr(name, new)
    return dst


def _peak(f) -> int:
    tracemalloc.start()
    try:
        f()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("member", ["w/bias.npy", "meta.npy"])
def test_a_negative_declared_shape_is_refused_before_reading(tmp_path, member):
    """Finding 3: shape (-2,) passed the size check, then f.read(-1) read the member whole
    (a 1.6 MB file pulled 512 MiB)."""
    from agents.policy import CheckpointError, load_policy

    descr = "|u1" if member == "meta.npy" else "<f4"
    p = _rezip(CHECKPOINT, tmp_path / "neg.npz", {member: (_npy((-2,), descr), 64 * 2**20)})
    assert p.stat().st_size < CHECKPOINT.stat().st_size + 2**20  # 64 MiB inside
    message = []
    peak = _peak(lambda: message.append(refused(CheckpointError, load_policy, p)))
    assert "negative" in message[0] and str(p) in message[0]
    assert peak < 16 * 2**20


def test_memory_error_never_escapes_bare(tmp_path, monkeypatch):
    import zipfile

    from agents.dataset import ShardError, read_meta
    from agents.policy import CheckpointError, load_policy

    read = zipfile.ZipExtFile.read

    def no_memory(self, n=-1):  # headers are read in small pieces, data in one read
        if n is None or not 0 <= n <= 1000:
            raise MemoryError
        return read(self, n)

    monkeypatch.setattr(zipfile.ZipExtFile, "read", no_memory)
    assert "MemoryError" in refused(CheckpointError, load_policy, CHECKPOINT)
    assert "MemoryError" in refused(ShardError, read_meta, CHECKPOINT)


def _shard(tmp_path: Path) -> Path:
    from agents.dataset import write_shard
    from agents.teacher import Episode

    n, dim = 591, 7
    rng = np.random.default_rng(0)
    masks = np.zeros((3, n), bool)
    masks[:, :5] = True
    ep = Episode(deal=4, obs=rng.integers(0, 3, (3, dim)).astype(np.float32) / 2,
                 masks=masks, labels=np.array([0, 1, 2]), safe=np.ones(3, bool),
                 played=np.array([0, 1, 2]), won=False, solver_calls=0)  # fmt: skip
    p = tmp_path / "s.npz"
    write_shard(p, [ep], {"variant": "SH1-C4"})
    return p


@pytest.mark.parametrize(
    "member, shape, descr, words",
    [
        ("meta.npy", (64 * 2**20,), "|u1", "metadata declares"),  # finding 8: a zip bomb
        ("meta.npy", (-1,), "|u1", "negative"),
        ("obs.npy", (2**40, 7), "|u1", "rows"),
        ("labels.npy", (2**23,), "<i2", "rows"),
        ("codebook.npy", (2**40,), "<f4", "codebook"),
    ],
)
def test_shards_are_read_header_first(tmp_path, member, shape, descr, words):
    from agents.dataset import ShardError, load_shards

    good = _shard(tmp_path)
    assert load_shards([good])["obs"].shape == (3, 7)
    bad = _rezip(good, tmp_path / "bad.npz", {member: (_npy(shape, descr), 8 * 2**20)})
    message = []
    peak = _peak(lambda: message.append(refused(ShardError, load_shards, [bad])))
    assert words in message[0] and str(bad) in message[0]
    assert peak < 16 * 2**20


def _zero_members(n: int, data: bool) -> dict:
    """The per-position members of a shard like ``_shard``'s (7 values, 591 actions) whose
    headers declare ``n`` positions: zeros after each header, or (``data`` False) nothing."""
    width = (591 + 7) // 8
    members = {"obs.npy": ((n, 7), "|u1", 7), "masks.npy": ((n, width), "|u1", width),
               "labels.npy": ((n,), "<i2", 2), "safe.npy": ((n,), "|b1", 1),
               "played.npy": ((n,), "<i2", 2), "episode.npy": ((n,), "<i8", 8)}  # fmt: skip
    return {k: (_npy(shape, descr), n * size if data else 0)
            for k, (shape, descr, size) in members.items()}  # fmt: skip


@pytest.mark.parametrize("data", [True, False])
def test_a_shard_may_take_only_so_much_memory_whatever_its_file_size(tmp_path, data):
    """Zeros compress a thousandfold, so a shard's file says nothing of what it decodes to: a
    file of a few hundred KB (or of a few KB, its arrays' data left out) whose headers declare
    just enough positions to take more than MAX_SHARD_MEMORY (96 MiB) once loaded is refused
    from its headers alone, naming the file, what it would take and the cap, before a byte of
    data is read (nothing big is allocated; without its data, reading it would have been
    refused as truncated instead)."""
    import math

    from agents.dataset import MAX_SHARD_MEMORY, ShardError, load_shards, shard_load_bytes
    from agents.npz import Npz

    good = _shard(tmp_path)
    stored = 7 + (591 + 7) // 8 + 2 + 1 + 2 + 8  # a position's bytes in the file
    per_row = shard_load_bytes(stored, 1, 0, 7, 591)
    n = MAX_SHARD_MEMORY // per_row + 1
    bomb = _rezip(good, tmp_path / "bomb.npz", _zero_members(n, data))
    assert bomb.stat().st_size < 2**20
    with Npz(good, ValueError) as z:  # the metadata is read apart, before: not counted
        small = sum(math.prod(s) * t.itemsize for s, t in (z.header(k) for k in
                    ("codebook", "deals", "won")))  # fmt: skip
    need = shard_load_bytes(n * stored + small, n, 1, 7, 591)
    assert MAX_SHARD_MEMORY < need < MAX_SHARD_MEMORY + 2 * per_row  # just over the cap
    message = []
    peak = _peak(lambda: message.append(refused(ShardError, load_shards, [bomb])))
    assert str(bomb) in message[0] and "truncated" not in message[0]
    assert f"would take {need} bytes" in message[0] and f"at most {MAX_SHARD_MEMORY}" in message[0]
    assert peak < 16 * 2**20


def test_a_small_file_may_take_what_a_shard_may(tmp_path):
    """The cap does not depend on the file's size: a shard of 500,000 identical positions, a
    file of a few KB that takes more than 32 MiB once loaded and more than 512 times its size
    (the bound before the cap), loads."""
    from agents.dataset import MAX_SHARD_MEMORY, Episode, load_shards, write_shard

    n = 500_000
    masks = np.zeros((n, 8), bool)
    masks[:, 0] = True
    ep = Episode(deal=4, obs=np.zeros((n, 7), np.float32), masks=masks,
                 labels=np.zeros(n, np.int16), safe=np.ones(n, bool),
                 played=np.zeros(n, np.int16), won=False, solver_calls=0)  # fmt: skip
    p = tmp_path / "s.npz"
    write_shard(p, [ep], {"variant": "SH1-C4"})
    del ep, masks
    rows = []
    peak = _peak(lambda: rows.append(len(load_shards([p])["labels"])))
    assert rows == [n]
    assert max(32 * 2**20, 512 * p.stat().st_size) < peak < MAX_SHARD_MEMORY


@pytest.mark.parametrize(
    "dim, n_act, rows, deals",
    [(1, 1, 600_000, 1), (7, 8, 300_000, 300_000), (2, 1, 10, 1_000_000), (639, 591, 4000, 8),
     (1590, 1029, 3000, 4)],
)  # fmt: skip
def test_loading_a_shard_takes_at_most_what_shard_load_bytes_says(
    tmp_path, monkeypatch, dim, n_act, rows, deals
):
    """The cap holds only if shard_load_bytes bounds what load_shards allocates: measured with
    tracemalloc on shards of every shape (tiny or wide positions, a deal per position, far more
    deals than positions, as Réfléchi and Double Solitaire), the peak stays under it."""
    import json

    import agents.dataset
    from agents.dataset import load_shards, save_npz

    width = (n_act + 7) // 8
    meta = {"variant": "x", "n_actions": n_act, "obs_dim": dim}
    arrays = {"codebook": np.array([0, 0.5], np.float32),
              "obs": (np.arange(rows * dim) % 2).astype(np.uint8).reshape(rows, dim),
              "masks": np.packbits(np.eye(1, n_act, dtype=bool).repeat(rows, 0), axis=1),
              "labels": np.zeros(rows, np.int16), "safe": np.ones(rows, bool),
              "played": np.zeros(rows, np.int16),
              "episode": np.arange(rows, dtype=np.int64) * min(deals, rows) // rows,
              "deals": np.arange(deals, dtype=np.int64), "won": np.zeros(deals, bool),
              "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8)}  # fmt: skip
    assert arrays["masks"].shape == (rows, width)
    p = tmp_path / "s.npz"
    save_npz(p, arrays)
    del arrays
    said = []
    count = agents.dataset.shard_load_bytes
    monkeypatch.setattr(agents.dataset, "shard_load_bytes",
                        lambda *a: said.append(count(*a)) or said[-1])  # fmt: skip
    got = []
    peak = _peak(lambda: got.append(load_shards([p])))
    assert len(got[0]["labels"]) == rows and len(said) == 1
    assert 0.5 * said[0] < peak <= said[0]


# ---- 1, 5, 7. results folders: --include / --replace ---------------------------------------------
FIELDS = (
    "variant",
    "policy",
    "code",
    "deal",
    "won",
    "score",
    "moves",
    "steps",
    "end",
    "foundation",
)


def _row(number: int, **change) -> dict:
    from solitaire_gym.engine.variants import parse_code

    variant = parse_code("SH1-C4-AAAAAAB")[0]
    row = {"variant": "SH1-C4", "policy": "random", "code": variant.code(number),
           "deal": str(number),
           "won": "False", "score": "0", "moves": "3", "steps": "3", "end": "stuck",
           "foundation": "0"}  # fmt: skip
    return row | change


def _folder(path: Path, rows: list[dict], command: str = "python experiments/evaluate.py x",
            **summary) -> Path:  # fmt: skip
    """An output folder of evaluate.py with ``rows`` (3 deals from 0), written by hand."""
    path.mkdir(parents=True, exist_ok=True)
    summaries = {"SH1-C4": {"random": summary}}
    (path / "results.json").write_text(json.dumps(
        {"command": command, "deals": {"first": 0, "count": 3}, "summaries": summaries}))  # fmt: skip
    with (path / "episodes.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    return path


def _evaluate(*args: str) -> None:
    experiment("evaluate").main(["--policies", "", "--deals", "3", "--no-plots", *args])


def _files(folder: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_replace_cannot_delete_outside_the_output_folder(tmp_path):
    """Finding 1: a code 'x/../../../../baselines/results' in a --replace folder's episodes.csv
    became part of a trace path, and --replace deleted runs/baselines/results.json."""
    runs = tmp_path / "runs"
    victim = runs / "baselines" / "results.json"
    victim.parent.mkdir(parents=True)
    victim.write_text("precious")
    everything = _folder(runs / "all", [_row(d) for d in range(3)])
    evil = _folder(tmp_path / "dl" / "evil",
                   [_row(0, code="x/../../../../baselines/results"), _row(1), _row(2)])  # fmt: skip
    before = _files(everything)
    with pytest.raises(SystemExit) as e:
        _evaluate("--include", str(everything), "--replace", str(evil), "--out", str(everything))
    message = str(e.value)
    assert "episodes.csv, line 2" in message and "field 'code'" in message
    assert len(message) <= MAX_MESSAGE
    assert victim.read_text() == "precious" and _files(everything) == before


@pytest.mark.parametrize("plant", ["file", "folder"])
def test_replace_never_writes_through_a_planted_symlink(tmp_path, plant):
    """Finding 1 (and 10): with a symlink in the output folder named like a trace file, the
    replacing folder's trace overwrote the file it points to."""
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    out = _folder(tmp_path / "all", [_row(d) for d in range(3)])
    new = _folder(tmp_path / "new", [_row(d, score="5") for d in range(3)])
    code = _row(0)["code"]
    (new / "traces" / "SH1-C4").mkdir(parents=True)
    (new / "traces" / "SH1-C4" / f"random-{code}.json").write_text("attacker's")
    if plant == "file":
        (out / "traces" / "SH1-C4").mkdir(parents=True)
        (out / "traces" / "SH1-C4" / f"random-{code}.json").symlink_to(victim)
    else:
        (out / "traces").mkdir()
        (out / "traces" / "SH1-C4").symlink_to(tmp_path, target_is_directory=True)
        (tmp_path / f"random-{code}.json").symlink_to(victim)
    with pytest.raises(SystemExit) as e:
        _evaluate("--include", str(out), "--replace", str(new), "--out", str(out))
    assert "symbolic link" in str(e.value) and len(str(e.value)) <= MAX_MESSAGE
    assert victim.read_text() == "precious"


def test_replace_does_not_copy_a_trace_that_is_a_symlink(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    out = _folder(tmp_path / "all", [_row(d) for d in range(3)])
    new = _folder(tmp_path / "new", [_row(d, score="5") for d in range(3)])
    (new / "traces" / "SH1-C4").mkdir(parents=True)
    (new / "traces" / "SH1-C4" / f"random-{_row(0)['code']}.json").symlink_to(secret)
    with pytest.raises(SystemExit, match="symbolic link"):
        _evaluate("--include", str(out), "--replace", str(new), "--out", str(out))
    assert not (out / "traces").exists()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"policy": "=cmd|' /C calc'!A0"}, "policy"),  # finding 5: live in a spreadsheet
        ({"code": '=HYPERLINK("http://x","y")'}, "code"),
        ({"end": "@SUM(1+1)"}, "end"),
        ({"policy": "-2+3"}, "policy"),
        ({"policy": "\tx"}, "policy"),
        ({"deal": "\u0663"}, "deal"),  # finding 7: an Arabic-Indic 3
        ({"deal": "1_0"}, "deal"),
        ({"deal": "7"}, "deal"),  # not one of the 3 deals asked for
        ({"moves": "-1"}, "moves"),
        ({"foundation": "999"}, "foundation"),
        ({"end": "bogus"}, "end"),
        ({"end": "won"}, "end"),  # won is False
        ({"score": "9" * 400}, "score"),
        ({"code": "SH1-C4-AAAAAAC"}, "code"),  # another deal's code
        ({"code": "SH1-C2-AAAAAAA"}, "code"),  # another variant's
        ({"won": "true"}, "won"),
    ],
)
def test_included_rows_are_validated_field_by_field(tmp_path, change, field):
    bad = _folder(tmp_path / "bad", [_row(0), _row(1, **change), _row(2)])
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        _evaluate("--include", str(bad), "--out", str(out))
    message = str(e.value)
    assert f"episodes.csv, line 3: not a row evaluate.py wrote (field '{field}'" in message
    assert len(message) <= MAX_MESSAGE and not out.exists()


def test_merged_tables_hold_no_formula_and_markdown_quotes_safely(tmp_path):
    """Finding 5: a command holding a backtick broke out of its code span and left raw
    <img src=x onerror=...> in results.md."""
    import markdown

    command = "python evaluate.py `x` <img src=x onerror=alert(1)>\n# title | a |"
    good = _folder(tmp_path / "good", [_row(d) for d in range(3)], command=command)
    out = tmp_path / "out"
    _evaluate("--include", str(good), "--out", str(out))
    page = markdown.markdown((out / "results.md").read_text())
    assert "<img" not in page and "&lt;img src=x" in page and "<h1" not in page
    with (out / "episodes.csv").open(newline="") as f:
        for row in csv.reader(f):
            assert not any(cell[:1] in ("=", "+", "@", "\t", "\r") for cell in row)
            assert not any(cell[:1] == "-" and not cell[1:].isdigit() for cell in row)


@pytest.mark.parametrize(
    "summary, words",
    [
        ({"played_by": [1]}, "'played_by'"),  # finding 7: a TypeError after results.json
        ({"seconds": "x"}, "'seconds'"),
        ({"verdicts": {"solvable": "all"}}, "'verdicts'"),
    ],
)
def test_included_summaries_are_checked_before_anything_is_written(tmp_path, summary, words):
    bad = _folder(tmp_path / "bad", [_row(d) for d in range(3)], **summary)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        _evaluate("--include", str(bad), "--out", str(out))
    assert words in str(e.value) and not out.exists()


def test_evaluate_arguments_and_sizes(tmp_path, capsys):
    """Finding 7: --deals 0 was a TypeError, --out naming a file a FileExistsError, a 100 MB
    results.json took 0.9 GB."""
    with pytest.raises(SystemExit):
        _evaluate("--deals", "0", "--out", str(tmp_path / "o"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        _evaluate("--out", str(tmp_path / "file"))
    err = capsys.readouterr().err
    assert "--deals must be 1 or more" in err and "is a file, not a folder" in err
    big = _folder(tmp_path / "big", [_row(d) for d in range(3)])
    with (big / "results.json").open("w") as f:
        f.write('{"command": "' + "x" * (17 * 2**20) + '"}')
    with pytest.raises(SystemExit, match="larger than 16 MiB"):
        _evaluate("--include", str(big), "--out", str(tmp_path / "o"))
    if hasattr(os, "mkfifo"):
        pipe = _folder(tmp_path / "pipe", [_row(d) for d in range(3)])
        (pipe / "results.json").unlink()
        os.mkfifo(pipe / "results.json")
        with pytest.raises(SystemExit):
            in_time(lambda: _evaluate("--include", str(pipe), "--out", str(tmp_path / "o")))


def test_a_good_included_folder_still_merges(tmp_path):
    good = _folder(tmp_path / "good", [_row(d, score=str(10 * d)) for d in range(3)],
                   played_by="python experiments/evaluate.py y", seconds=1.5)  # fmt: skip
    out = tmp_path / "out"
    _evaluate("--include", str(good), "--out", str(out))
    result = json.loads((out / "results.json").read_text())
    s = result["summaries"]["SH1-C4"]["random"]
    assert s["mean_score"] == 10 and s["played_by"] == "python experiments/evaluate.py y"
    assert (out / "episodes.csv").read_text() == (good / "episodes.csv").read_text()


def test_an_included_episodes_csv_takes_a_few_times_its_size(tmp_path):
    """An included ``episodes.csv`` is held as its lines, not as a dict per row: merging a valid
    one of a few MB takes a few times its size in memory, no more."""
    from solitaire_gym.engine.variants import parse_code

    policies = ["random", "greedy", "search@256", "ppo", "solver", "puct@64", "learned"]
    n = 6000
    codes = parse_code("SH1-C4-AAAAAAB")[0].codes(np.arange(n))
    rng = np.random.default_rng(0)
    lines = [",".join(FIELDS)]
    for p in policies:
        score, moves, steps, found = rng.integers(0, 100_000, (4, n)).tolist()
        lines += [f"SH1-C4,{p},{codes[d]},{d},False,{score[d] - 50_000},{moves[d]},{steps[d]},"
                  f"stuck,{found[d] % 52}" for d in range(n)]  # fmt: skip
    big = tmp_path / "big"
    big.mkdir()
    (big / "episodes.csv").write_text("\r\n".join(lines) + "\r\n")
    summaries = {"SH1-C4": {p: {} for p in policies}}
    (big / "results.json").write_text(json.dumps(
        {"command": "x", "deals": {"first": 0, "count": n}, "summaries": summaries}))  # fmt: skip
    size = (big / "episodes.csv").stat().st_size
    assert size > 2 * 2**20
    small = _folder(tmp_path / "small", [_row(d) for d in range(3)])
    _evaluate("--include", str(small), "--out", str(tmp_path / "warm"))  # the imports it makes
    out = tmp_path / "out"
    args = ("--include", str(big), "--out", str(out), "--deals", str(n))
    evaluate = experiment("evaluate")
    peak = _peak(lambda: evaluate.main(["--policies", "", "--no-plots", *args]))
    assert (out / "episodes.csv").read_bytes() == (big / "episodes.csv").read_bytes()
    result = json.loads((out / "results.json").read_text())
    assert [s["deals"] for s in result["summaries"]["SH1-C4"].values()] == [n] * len(policies)
    assert peak < 6 * size, (peak, size)


# ---- fuzz: any bytes are read or refused with the format's own error ---------------------------
@given(
    st.binary(max_size=300) | st.text(alphabet="ab:- []{}&*!|>'\"\n\t#0123456789.,", max_size=300)
)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_config_fuzz(tmp_path, data):
    path = tmp_path / "c.yaml"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    for load in LOADERS:
        try:
            load(path)
        except ConfigError as e:
            assert len(str(e)) <= MAX_MESSAGE


@given(st.dictionaries(st.sampled_from(FIELDS), st.text(max_size=12), max_size=4))
@settings(max_examples=150, deadline=None)
def test_episode_row_fuzz(change):
    """A row with any fields changed is accepted only if every field is as evaluate.py writes
    it; then no cell can start a formula and its code is its variant's code of its deal."""
    row = _row(1) | change
    if row_problem(row, range(0, 3)):
        return
    assert all(cell[:1] not in ("=", "+", "@", "\t", "\r") for cell in row.values())
    assert trace_path(Path("out"), row["variant"], row["policy"], row["code"])


# ---- 9. checkpoint metadata is quoted, not echoed ------------------------------------------------
@pytest.mark.parametrize(
    "change",
    [
        {"layout_id": "x" * 500_000},
        {"format_version": "x" * 500_000},
        {"play": {"rule": "x" * 500_000}},
        {"play": ["x"] * 100_000},
        {"arch": {"kind": "x" * 500_000}},
        {"options": {"y" * 500_000: 1}},
    ],
    ids=["layout_id", "format_version", "play", "play-list", "arch", "options"],
)
def test_checkpoint_metadata_is_quoted_briefly(tmp_path, change):
    from agents.policy import CheckpointError, load_policy

    with np.load(CHECKPOINT) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes()) | change
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("ascii"), np.uint8)
    p = tmp_path / "big-meta.npz"
    np.savez(p, **arrays)
    refused(CheckpointError, load_policy, p)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_npz_readers_refuse_a_named_pipe_without_waiting(tmp_path):
    from agents.dataset import ShardError, load_shards
    from agents.policy import CheckpointError, load_policy

    pipe = tmp_path / "pipe.npz"
    os.mkfifo(pipe)
    assert "regular file" in in_time(lambda: refused(ShardError, load_shards, [pipe]))
    in_time(lambda: refused(CheckpointError, load_policy, pipe))


def test_every_named_policy_has_a_name_evaluate_can_write_and_read_back():
    """evaluate.py refuses an included row whose policy is not a plain name (finding 5): the
    players it plays itself must have such names, or their games could not be merged."""
    from agents.named import POLICY_NAMES

    assert all(POLICY_NAME.fullmatch(name) for name in POLICY_NAMES)
    assert all(POLICY_NAME.fullmatch(f"search@{n}") for n in (16, "1024-l2"))


def test_a_resumed_run_folder_is_read_like_any_file_from_elsewhere(tmp_path):
    """Resuming reads the run folder's config.yaml through the config reader and its
    state.json as strict, checked JSON (both trainers share these readers)."""
    from agents.config import ConfigError, check_run_folder, read_run_state

    (tmp_path / "config.yaml").write_text(LAUGHS + "name: *i\n")
    with pytest.raises(ConfigError, match="aliases"):
        check_run_folder(tmp_path, {"name": "x"})
    (tmp_path / "config.yaml").write_text("name: x\ntotal_timesteps: 5\n")
    check_run_folder(tmp_path, {"name": "x", "total_timesteps": 9})
    with pytest.raises(ConfigError, match="key name differs"):
        check_run_folder(tmp_path, {"name": "y"})
    state = tmp_path / "state.json"
    state.write_text('{"step": 10, "best": [0.5, 10], "timing": {"env": 1.5}}')
    assert read_run_state(state)["step"] == 10
    for bad in ('{"step": 1, "step": 2, "best": null, "timing": {}}', '{"step": -1}',
                '{"step": 1, "best": "x", "timing": {}}', '{"step": 1, "best": null, '
                '"timing": {"env": NaN}}', "[1]", "not json"):  # fmt: skip
        state.write_text(bad)
        with pytest.raises(ConfigError, match=r"state\.json"):
            read_run_state(state)
