"""Reading and writing the package's files, for files that may come from someone else: the checks
that every file format shares, in one place. Traces (:mod:`solitaire_gym.traces`), configs
(``agents/config.py``), results folders (``experiments/evaluate.py``) and the renderers read and
write through these.

- :func:`read_limited`: the bytes of a regular file of at most ``limit`` bytes. A named pipe, a
  device or a folder is refused without blocking (opened with ``O_NONBLOCK``, then ``fstat``).
- :func:`strict_json`: JSON as the package writes it: a key given twice, a lone surrogate
  (``"\\ud800"``), ``NaN`` or ``Infinity``, an integer of more than 4,300 digits or nesting past
  Python's recursion limit are refused.
- :func:`write_atomic` and :func:`atomic_path`: write to a new file in the target's folder, then
  rename it over the target, so an old file survives a failed write and a symlink planted where
  the file goes is never followed (it is refused); with ``inside``, a target whose folder lies
  outside that folder is refused.

Every error is a :class:`FileFormatError` whose message quotes at most a few dozen characters of
the file (:func:`~solitaire_gym.errors.shown`); callers prefix it with the file's name.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from solitaire_gym.errors import SolitaireError, shown


class FileFormatError(SolitaireError):
    """A file that cannot be read or written safely; the message says why (not which file)."""


def read_limited(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; a
    :class:`FileFormatError` for a file that is not a regular file, is larger, or cannot be read.
    Never blocks on a named pipe and never allocates more than the file holds."""
    try:
        # O_NONBLOCK: opening a named pipe with no writer would wait for one; opened so, it is
        # refused below like anything that is not a regular file.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, TypeError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise FileFormatError(
            f"cannot open it: {shown(getattr(e, 'strerror', None) or str(e), 200)}"
        ) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FileFormatError("not a regular file")
    with open(fd, "rb") as f:
        if info.st_size > limit:
            raise FileFormatError(f"larger than {_size(limit)}")
        try:
            # Not f.read(limit + 1), which allocates the whole limit for any file; a file that
            # grew since fstat is still read only to the limit.
            data = f.read(info.st_size + 1)
            if len(data) > info.st_size:
                data += f.read(limit + 1 - len(data))
        except OSError as e:
            raise FileFormatError(f"cannot read it: {shown(e.strerror or str(e), 200)}") from None
    if len(data) > limit:
        raise FileFormatError(f"larger than {_size(limit)}")
    return data


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise FileFormatError(f"key {shown(key)} is given twice in one object")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise FileFormatError(f"{name} is not a JSON number")


def strict_json(text: str | bytes) -> Any:
    """``json.loads(text)``, refusing what the package never writes: a key given twice in an
    object, ``NaN``/``Infinity``, a lone surrogate in a string, integers longer than Python
    reads, nesting deeper than Python's recursion limit. :class:`FileFormatError` says which
    (for text that is not JSON at all, the parser's own words: callers say "not valid JSON")."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except FileFormatError:
        raise
    except RecursionError:
        raise FileFormatError("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError, integers too long
        raise FileFormatError(shown(str(e), 200).strip("'\"")) from None
    _check_strings(data)
    return data


def _check_strings(data: Any) -> None:
    """Refuse a lone surrogate in any string of ``data`` (keys too); no recursion."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if not x.isascii():
                try:
                    x.encode("utf-8")
                except UnicodeEncodeError:
                    raise FileFormatError(
                        f"the string {shown(x)} holds a lone surrogate (not Unicode text)"
                    ) from None
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x)
            stack.extend(x.values())


def _target(path: str | os.PathLike, inside: str | os.PathLike | None) -> Path:
    """``path`` checked as a file to write: not a symlink, not a folder, and with ``inside``, in
    that folder or below it (its folder resolved, symlinks and ``..`` included)."""
    path = Path(path)
    if path.is_symlink():
        raise FileFormatError(f"{shown(str(path), 120)} is a symbolic link: refusing to write it")
    if path.is_dir():
        raise FileFormatError(f"{shown(str(path), 120)} is a folder; give a file name")
    if inside is not None:
        root = Path(inside).resolve()
        parent = path.parent.resolve()
        if parent != root and root not in parent.parents:
            raise FileFormatError(f"{shown(str(path), 120)} lies outside {shown(str(inside), 120)}")
    return path


@contextlib.contextmanager
def atomic_path(
    path: str | os.PathLike, *, inside: str | os.PathLike | None = None
) -> Iterator[Path]:
    """A new, empty file's path in ``path``'s folder (created if missing) for a writer that takes a
    path (same suffix, for writers that go by it); on leaving without an error it is renamed over
    ``path`` (a symlink there is refused first, never followed), else removed: an old ``path``
    survives a failed write. ``inside``: refuse a ``path`` outside that folder."""
    path = _target(path, inside)
    path.parent.mkdir(parents=True, exist_ok=True)
    if inside is not None:
        _target(path, inside)  # the folders just made: still inside
    tmp = _new_file(path)
    try:
        yield Path(tmp)
        _target(path, inside)  # nothing planted meanwhile
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _new_file(path: Path) -> Path:
    """A new empty file beside ``path`` (made with ``O_EXCL``: never an existing file or link),
    with the permissions a new file gets (the umask applies)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = path.with_name(f".{path.name[:100]}.{secrets.token_hex(6)}.tmp{path.suffix[:20]}")
        try:
            os.close(os.open(tmp, flags, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileFormatError(f"cannot make a temporary file beside {shown(str(path), 120)}")


def write_atomic(
    path: str | os.PathLike, data: str | bytes, *, inside: str | os.PathLike | None = None
) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through :func:`atomic_path`; returns ``path``."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with atomic_path(path, inside=inside) as tmp:
        tmp.write_bytes(data)
    return Path(path)
