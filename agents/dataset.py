"""Teacher data on disk: shards of (observation, mask, label) records, compact and safe to load.

A shard is one ``.npz`` file (read header first by :mod:`agents.npz`: no pickle, so no code runs;
every array's declared size checked before its data is read) holding, for
``T`` positions of one variant:

==================  ===============  ========================================================
array               dtype, shape     meaning
==================  ===============  ========================================================
``codebook``        float32 (V,)     the distinct observation values of the shard (V <= 256)
``obs``             uint8 (T, D)     each observation value as its index in ``codebook``
``masks``           uint8 (T, ⌈N/8⌉)  legal-action masks, bit-packed (``np.packbits``)
``labels``          int16 (T,)       the teacher's action
``safe``            bool (T,)        the label is proven to keep the game winnable
``played``          int16 (T,)       the action played there (the label, or the student's)
``episode``         int64 (T,)       the deal each position comes from
``deals``           int64 (E,)       the shard's deals, with ``won`` (E,) bool
``meta``            uint8 (bytes)    JSON: variant, layout version, sizes, how it was made
==================  ===============  ========================================================

Observations hold a few dozen distinct values (multiples of 1/32, 1/13, 1/N, 1/10), so the
codebook encoding is exact and takes a byte per value instead of four; the file is compressed
besides (most values are 0). :func:`load_shards` gives back float32 observations equal to the
env's, bit for bit. Loading one shard takes at most :data:`MAX_SHARD_MEMORY` (96 MiB), whatever
the size of its file: checked from its headers before any data is read, and kept by the writers
(:func:`split_episodes`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.npz import MAX_META_BYTES, Npz
from solitaire_gym.errors import is_int, shown
from solitaire_gym.files import FileFormatError, strict_json


@dataclass
class Episode:
    """What a labeller returns (:func:`agents.teacher.teach_deal`, :func:`agents.search.expert.search_episodes`) for one deal: per position, the observation, the legal
    mask, the teacher's label, whether the label is proven safe, and the action played; then the
    outcome of the played game."""

    deal: int
    obs: np.ndarray  # (T, D) float32
    masks: np.ndarray  # (T, N) bool
    labels: np.ndarray  # (T,) int16: the teacher's action
    safe: np.ndarray  # (T,) bool: the label keeps the position winnable (proven)
    played: np.ndarray  # (T,) int16: the action played (the label, or the student's)
    won: bool
    solver_calls: int


class ShardError(ValueError):
    """A file that is not a teacher-data shard of the expected variant (the message says why)."""


def write_shard(
    path: str | os.PathLike[str] | Any, episodes: Sequence[Episode], meta: dict
) -> None:
    """Write ``episodes`` (at least one position in all) to ``path`` atomically. Refuses
    (``ValueError``) a shard that loading would take more than :data:`MAX_SHARD_MEMORY` for,
    which :func:`load_shards` would refuse: :func:`split_episodes` cuts games into shards under
    it."""
    obs = np.concatenate([e.obs for e in episodes])
    codebook = np.unique(obs)
    if codebook.size > 256:
        raise ValueError(f"{codebook.size} distinct observation values: more than a byte holds")
    masks = np.concatenate([e.masks for e in episodes])
    data = {
        "codebook": codebook.astype(np.float32),
        "obs": np.searchsorted(codebook, obs).astype(np.uint8),
        "masks": np.packbits(masks, axis=1),
        "labels": np.concatenate([e.labels for e in episodes]).astype(np.int16),
        "safe": np.concatenate([e.safe for e in episodes]).astype(bool),
        "played": np.concatenate([e.played for e in episodes]).astype(np.int16),
        "episode": np.concatenate(
            [np.full(len(e.labels), e.deal, np.int64) for e in episodes]
        ).astype(np.int64),
        "deals": np.array([e.deal for e in episodes], np.int64),
        "won": np.array([e.won for e in episodes], bool),
        "meta": _meta_array(meta, masks.shape[1], obs.shape[1]),
    }
    need = shard_load_bytes(
        sum(a.nbytes for a in data.values()), len(obs), len(episodes), obs.shape[1], masks.shape[1]
    )
    if need > MAX_SHARD_MEMORY:
        raise ValueError(
            f"{len(episodes)} games of {len(obs)} positions would take {need} bytes to load, "
            f"more than a shard may ({MAX_SHARD_MEMORY}): write them as several "
            "(split_episodes)"
        )
    save_npz(path, data)


def _meta_array(meta: dict, n_actions: int, obs_dim: int) -> np.ndarray:
    """The ``meta`` array of a shard: ``meta`` and the sizes, as ASCII JSON."""
    record = {**meta, "n_actions": int(n_actions), "obs_dim": int(obs_dim)}
    return np.frombuffer(json.dumps(record).encode("ascii"), np.uint8)


def split_episodes(episodes: Sequence[Episode], meta: dict) -> list[list[Episode]]:
    """``episodes`` cut, in their order, into as few runs of whole games as each make a shard
    (:func:`write_shard` with ``meta``) that loading takes at most :data:`MAX_SHARD_MEMORY` for;
    one run when they all fit. ``ValueError`` if one game alone does not fit (a game of the
    package's variants takes at most a fifth of it: 2,000 positions of Double Solitaire)."""
    if not episodes:
        return []
    n_act, dim = episodes[0].masks.shape[1], episodes[0].obs.shape[1]
    widths = {"obs": dim, "masks": (n_act + 7) // 8}
    per_row = sum(np.dtype(kind).itemsize * widths.get(k, 1)
                  for k, (kind, per) in _SHARD_ARRAYS.items() if per == "T")  # fmt: skip
    per_deal = sum(np.dtype(kind).itemsize for kind, per in _SHARD_ARRAYS.values() if per == "E")
    fixed = 256 * np.dtype(_SHARD_ARRAYS["codebook"][0]).itemsize
    fixed += _meta_array(meta, n_act, dim).nbytes

    def most_bytes(rows: int, deals: int) -> int:  # a full codebook: at least what it takes
        return shard_load_bytes(fixed + rows * per_row + deals * per_deal, rows, deals, dim, n_act)

    runs: list[list[Episode]] = [[]]
    rows = 0
    for e in episodes:
        if most_bytes(len(e.labels), 1) > MAX_SHARD_MEMORY:
            raise ValueError(
                f"deal {e.deal}: a game of {len(e.labels)} positions takes more than a shard "
                f"may ({MAX_SHARD_MEMORY} bytes to load)"
            )
        if runs[-1] and most_bytes(rows + len(e.labels), len(runs[-1]) + 1) > MAX_SHARD_MEMORY:
            runs.append([])
            rows = 0
        runs[-1].append(e)
        rows += len(e.labels)
    return runs


def save_npz(path: str | os.PathLike[str] | Any, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed`` to ``path`` atomically (written beside it, then renamed), or into
    a file object (a Ray worker's buffer)."""
    if not isinstance(path, (str, os.PathLike)):
        np.savez_compressed(path, **arrays)
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


_SHARD_ARRAYS = {  # name: (dtype kind and size, per row (T) or per deal (E)), as write_shard writes
    "codebook": ("f4", None),
    "obs": ("u1", "T"),
    "masks": ("u1", "T"),
    "labels": ("i2", "T"),
    "safe": ("b1", "T"),
    "played": ("i2", "T"),
    "episode": ("i8", "T"),
    "deals": ("i8", "E"),
    "won": ("b1", "E"),
    "meta": ("u1", None),
}
MAX_SHARD_MEMORY = 96 << 20
"""Most bytes loading one shard may take (:func:`shard_load_bytes`), whatever its file size:
computed from its headers and refused before any of its data is read. A shard is compressed
(its positions repeat, most values are 0), so its file says nothing of what it decodes to;
:func:`write_shard` writes no shard over it, and :func:`split_episodes` cuts a chunk of games
into shards under it (about 11,000 positions of Double Solitaire, 17,500 of Seahaven Towers,
25,600 of Solitaire Réfléchi). It bounds the positions and stored bytes of a shard too."""


def shard_load_bytes(stored: int, rows: int, deals: int, obs_dim: int, n_actions: int) -> int:
    """The most bytes :func:`load_shards` holds at once for one shard of ``rows`` positions and
    ``deals`` deals whose arrays declare ``stored`` bytes: those arrays, and what they are
    decoded to (float32 observations, a bool per action of each mask, int64 labels, played and
    previous actions, the deal and safety of each position), and per deal its number and
    whether it was won, and the sorted deals and search that find a deal held twice. Measured
    with ``tracemalloc``, loading one shard peaks at 55 to 99.7% of it, depending on its shape
    (``tests/test_file_formats.py``)."""
    return stored + rows * (4 * obs_dim + n_actions + 8 + 8 + 8 + 8 + 1) + deals * 24


def _meta_of(raw: np.ndarray, path) -> dict[str, Any]:
    """The shard's JSON record from the bytes of its ``meta`` array, checked."""
    try:
        meta = strict_json(raw.tobytes().decode("ascii"))
    except (UnicodeDecodeError, FileFormatError) as e:
        raise ShardError(
            f"{path}: not a shard with readable metadata ({shown(str(e), 120)})"
        ) from None
    if not isinstance(meta, dict):
        raise ShardError(f"{path}: its metadata is not a JSON object")
    for key in ("n_actions", "obs_dim"):
        v = meta.get(key)
        if not is_int(v) or not 1 <= v <= 1 << 16:
            raise ShardError(f"{path}: metadata {key!r} is {shown(v)}, not a size")
    return meta


def _byte_string(shape, dtype) -> str:
    return "" if dtype == np.uint8 and len(shape) == 1 else "is not a short byte string"


def read_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A shard's JSON record (variant, sizes, how it was made); :class:`ShardError` naming the
    file when it is not a shard or its record is not readable. The record's size is checked
    from its ``.npy`` header (at most :data:`MAX_META_BYTES`) before it is read."""
    try:
        with Npz(path, ShardError) as z:
            if "meta" not in z.names:
                raise ShardError(f"{path} has no metadata")
            raw = z.read("meta", MAX_META_BYTES, _byte_string, f"{path}: its metadata")
    except ShardError as e:
        raise ShardError(f"not a shard with readable metadata: {e}") from None
    return _meta_of(raw, path)


def _read_shard(path, meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """Every array of the shard at ``path``, checked against :data:`_SHARD_ARRAYS` and ``meta``:
    first from the headers alone (dtypes, matching row counts, the observation and mask widths,
    at most 256 codebook values, and loading it taking at most :data:`MAX_SHARD_MEMORY`),
    then the data (observation indices inside the codebook, labels and played actions inside the
    action space, a finite codebook); :class:`ShardError` otherwise."""
    n_act, dim = meta["n_actions"], meta["obs_dim"]
    with Npz(path, ShardError) as z:
        missing = sorted(set(_SHARD_ARRAYS) - z.names)
        if missing:
            raise ShardError(f"{path}: not a shard (no {', '.join(missing)})")
        heads = {k: z.header(k) for k in _SHARD_ARRAYS if k != "meta"}
        rows = {"T": heads["labels"][0][:1], "E": heads["deals"][0][:1]}
        widths = {"obs": dim, "masks": (n_act + 7) // 8}
        for k, (shape, dtype) in heads.items():
            kind, per = _SHARD_ARRAYS[k]
            want = np.dtype(kind)
            ndim = 2 if k in widths else 1
            if dtype.newbyteorder("=") != want.newbyteorder("=") or len(shape) != ndim:
                raise ShardError(f"{path}: array {k!r} is {dtype} {shown(shape)}, not {want}")
            if per is not None and shape[:1] != rows[per]:
                raise ShardError(f"{path}: array {k!r} has {shape[0]} rows, not {rows[per][0]}")
            if k in widths and shape[1] != widths[k]:
                raise ShardError(
                    f"{path}: observations or masks do not have the widths its metadata says"
                )
        if heads["codebook"][0][0] > 256:
            raise ShardError(f"{path}: more than 256 codebook values")
        sizes = {k: math.prod(shape) * dtype.itemsize for k, (shape, dtype) in heads.items()}
        need = shard_load_bytes(sum(sizes.values()), rows["T"][0], rows["E"][0], dim, n_act)
        if need > MAX_SHARD_MEMORY:
            raise ShardError(
                f"{path}: loading it would take {need} bytes (its headers say {rows['T'][0]} "
                f"positions); a shard may take at most {MAX_SHARD_MEMORY}, whatever its file size"
            )
        a = {k: z.read(k, sizes[k]) for k in heads}
    if not np.isfinite(a["codebook"]).all():
        raise ShardError(f"{path}: its codebook is not a list of finite values")
    if a["obs"].size and int(a["obs"].max()) >= a["codebook"].size:
        raise ShardError(f"{path}: an observation index past its codebook")
    for k in ("labels", "played"):
        if a[k].size and (int(a[k].min()) < 0 or int(a[k].max()) >= n_act):
            raise ShardError(f"{path}: array {k!r} holds an action outside 0 … {n_act - 1}")
    return a


def game_starts(episode: np.ndarray) -> np.ndarray:
    """For positions stored game after game (``episode``: each one's deal): the row where each
    game starts, then the number of rows, so game ``i`` is rows ``[s[i], s[i + 1])``."""
    return np.r_[0, np.flatnonzero(episode[1:] != episode[:-1]) + 1, len(episode)]


def won_deals(data: dict[str, np.ndarray]) -> dict[int, bool]:
    """Whether each deal of ``data`` (:func:`load_shards`) was won."""
    return dict(zip(data["deals"].tolist(), data["won"].tolist(), strict=True))


def previous_actions(episode: np.ndarray, played: np.ndarray, n_actions: int) -> np.ndarray:
    """For positions stored game after game: the action played just before each one in its
    game (``n_actions`` for a game's first position)."""
    prev = np.full(len(played), n_actions, np.int64)
    same = episode[1:] == episode[:-1]
    prev[1:][same] = played[:-1][same]
    return prev


def _new_deals(
    seen: np.ndarray, deals: np.ndarray, paths: list, held: list[np.ndarray]
) -> np.ndarray:
    """``seen`` (sorted) with ``deals``, those of the shard ``paths[-1]``; :class:`ShardError`
    naming the shards when one of them is there already (``held``: each shard's deals). In
    numpy, a few bytes a deal, which :func:`shard_load_bytes` counts."""
    if len(seen):
        at = np.searchsorted(seen, deals)
        np.minimum(at, len(seen) - 1, out=at)
        again = np.flatnonzero(seen[at] == deals)
        del at
        if again.size:
            d = deals[again[0]]
            first = next(q for q, h in zip(paths, held, strict=False) if (h == d).any())
            raise ShardError(f"{first} and {paths[-1]} both hold training deal {d}")
    both = np.concatenate([seen, deals])
    both.sort()
    twice = np.flatnonzero(both[1:] == both[:-1])
    if twice.size:
        raise ShardError(f"{paths[-1]} holds training deal {both[twice[0]]} twice")
    return both


def load_shards(
    paths: Sequence[str | os.PathLike[str]], *, variant: str | None = None
) -> dict[str, np.ndarray]:
    """Concatenate shards into arrays: ``obs`` (T, D) float32, ``masks`` (T, N) bool,
    ``labels``, ``safe``, ``played``, ``episode``, ``prev`` (the action played before each
    position in its game, N for the first); plus ``deals`` and ``won`` per deal. With
    ``variant``, refuse a shard of another game variant (its observation or action layout may
    differ). Refuse two shards that hold the same deal (e.g. a folder that holds the shards of
    two chunkings): its games would count twice."""
    parts: dict[str, list[np.ndarray]] = {}
    n_act = None
    loaded: list[str | os.PathLike[str]] = []
    seen = np.empty(0, np.int64)  # the deals of the shards loaded so far, sorted
    for p in paths:
        meta = read_meta(p)
        if variant is not None and meta.get("variant") != variant:
            raise ShardError(f"{p} holds {meta.get('variant')!r} positions, not {variant!r}")
        if n_act is None:
            n_act = meta["n_actions"]
        if meta["n_actions"] != n_act:
            raise ShardError(f"{p}: {meta['n_actions']} actions, other shards {n_act}")
        z = _read_shard(p, meta)
        parts.setdefault("obs", []).append(z["codebook"][z["obs"]])
        masks = np.unpackbits(z["masks"], axis=1, count=n_act).view(bool)  # 0 or 1: no copy
        parts.setdefault("masks", []).append(masks)
        for k in ("labels", "safe", "played", "episode", "deals", "won"):
            parts.setdefault(k, []).append(z[k])
        loaded.append(p)
        seen = _new_deals(seen, z["deals"], loaded, parts["deals"])
        del z  # the shard as stored: its arrays are decoded or held in parts
    if not parts:
        raise ShardError("no shards to load")
    del seen
    # one shard's decoded arrays are new (writable) already: only a read-only one is copied
    out = {
        k: v[0] if len(v) == 1 and v[0].flags.writeable else np.concatenate(v)
        for k, v in parts.items()
    }
    del parts  # the arrays as read, copied into out: shard_load_bytes counts them once
    out["labels"] = out["labels"].astype(np.int64)
    out["played"] = out["played"].astype(np.int64)
    out["prev"] = previous_actions(out["episode"], out["played"], n_act)
    if not np.take_along_axis(out["masks"], out["labels"][:, None], 1).all():
        raise ShardError("a label is not a legal action of its position")
    return out
