"""``.npz`` files read header first: the one reader of policy checkpoints (:mod:`agents.checkpoint`)
and teacher-data shards (:mod:`agents.dataset`).

An ``.npz`` is a zip of ``.npy`` arrays. ``numpy.load`` allocates what an array's header
declares, and a member's data may inflate a thousandfold; here every member's ``.npy`` header is
read first, its shape checked (no negative or absurd sizes, the caller's own check, and at most
``limit`` bytes) before a byte of its data is read, and exactly that many bytes are read. Python
objects (pickles) are never loaded. Every failure, :class:`MemoryError` included, is the
caller's error class with a message naming the file and the member.
"""

from __future__ import annotations

import lzma
import math
import os
import stat
import zipfile
import zlib
from collections.abc import Callable
from typing import IO

import numpy as np
from numpy.lib import format as npy_format

from solitaire_gym.errors import shown

MAX_META_BYTES = 1 << 20
"""The most bytes a shard's or a policy checkpoint's JSON metadata may hold when read."""

NPZ_READ_ERRORS = (
    OSError,
    EOFError,
    ValueError,
    RuntimeError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    MemoryError,
)
"""What reading a damaged ``.npz`` can raise: a bad CRC, a truncated or corrupt compressed
stream, an unsupported compression method or an encrypted member (``NotImplementedError`` and
``RuntimeError``), ``.npy`` damage (``ValueError``), JSON nested too deep (``RecursionError``),
and an allocation the machine cannot make (``MemoryError``)."""

MAX_INFLATION = 1100
"""Deflate cannot inflate data more than about 1032-fold: a member whose header declares more
than this many times its compressed size (plus 4 KiB) is refused before it is read."""


class Npz:
    """An open ``.npz``, its members read header first (a context manager). ``error`` is the
    exception class every failure is raised as; ``names`` the arrays it holds; ``size`` the
    file's size in bytes."""

    def __init__(self, path: str | os.PathLike[str], error: type[Exception]) -> None:
        self.path = path
        self.error = error
        try:
            # O_NONBLOCK: a named pipe is refused below, not waited on (as solitaire_gym.files)
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (*NPZ_READ_ERRORS, TypeError) as e:
            raise error(f"{path} is not a readable file ({type(e).__name__})") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise error(f"{path} is not a regular file")
        self.size = info.st_size
        self._file = os.fdopen(fd, "rb")
        try:
            self._zip = zipfile.ZipFile(self._file)
        except NPZ_READ_ERRORS as e:
            self._file.close()
            raise error(f"{path} is not an .npz file ({type(e).__name__})") from None
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in self._zip.infolist():
            name = info.filename.removesuffix(".npy")
            if name in self.members:
                self.close()
                raise error(f"{path}: array {shown(name)} is stored twice")
            self.members[name] = info

    @property
    def names(self) -> set[str]:
        return set(self.members)

    def __enter__(self) -> Npz:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()
        self._file.close()

    def header(self, name: str, what: str | None = None) -> tuple[tuple[int, ...], np.dtype]:
        """The shape and dtype that array ``name``'s header declares (nothing of its data read)."""
        what = what or f"{self.path}: array {shown(name)}"
        try:
            with self._open(name, what) as f:
                shape, _, dtype = self._header(f, what)
        except self.error:
            raise
        except NPZ_READ_ERRORS as e:
            raise self._unreadable(e, what) from None
        return shape, dtype

    def read(
        self,
        name: str,
        limit: int,
        check: Callable[[tuple[int, ...], np.dtype], str] | None = None,
        what: str | None = None,
    ) -> np.ndarray:
        """Array ``name`` (read-only), after its header: ``check(shape, dtype)`` returns what is
        wrong with them ("" if nothing), and the data may take at most ``limit`` bytes.
        ``what``: how messages name the array (default: the file and the array's name)."""
        what = what or f"{self.path}: array {shown(name)}"
        try:
            with self._open(name, what) as f:
                shape, fortran, dtype = self._header(f, what)
                wrong = check(shape, dtype) if check is not None else ""
                if wrong:
                    raise self.error(f"{what} {wrong}")
                size = math.prod(shape) * dtype.itemsize
                if size > limit:
                    raise self.error(
                        f"{what} declares {size} bytes of data; at most {limit} are read"
                    )
                info = self.members[name]
                stored = info.compress_type == zipfile.ZIP_STORED
                most = info.compress_size if stored else MAX_INFLATION * info.compress_size + 4096
                if size > most:
                    raise self.error(
                        f"{what} declares {size} bytes of data, more than its "
                        f"{info.compress_size} compressed bytes can hold"
                    )
                data = f.read(size + 1)  # one more byte, to see that the data ends there
        except self.error:
            raise
        except NPZ_READ_ERRORS as e:
            raise self._unreadable(e, what) from None
        if len(data) != size:
            how = "truncated: " if len(data) < size else "longer than "
            raise self.error(f"{what} is {how}{min(len(data), size)} of the {size} bytes "
                             "its header declares")  # fmt: skip
        return np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")

    def _open(self, name: str, what: str) -> IO[bytes]:
        if name not in self.members:
            raise self.error(f"{self.path} has no array {shown(name)}")
        return self._zip.open(self.members[name])

    def _unreadable(self, e: BaseException, what: str) -> Exception:
        # the file first, then a space: "<file> is not a readable .npz (BadZipFile: ...)"
        return self.error(
            f"{self.path} is not a readable .npz ({type(e).__name__}: {shown(str(e), 120)}; "
            f"reading {what})"
        )

    def _header(self, f: IO[bytes], what: str) -> tuple[tuple[int, ...], bool, np.dtype]:
        try:
            version = npy_format.read_magic(f)
        except NPZ_READ_ERRORS:
            raise self.error(f"{what} is not an .npy array") from None
        if version == (1, 0):
            read = npy_format.read_array_header_1_0
        elif version == (2, 0):
            read = npy_format.read_array_header_2_0
        else:
            raise self.error(f"{what} is an .npy array of version {version}, not 1.0 or 2.0")
        try:
            shape, fortran, dtype = read(f)
        except NPZ_READ_ERRORS:
            raise self.error(f"{what} has a damaged .npy header") from None
        if dtype.hasobject:
            raise self.error(f"{what} holds Python objects, which are never loaded")
        if any(d < 0 for d in shape):
            raise self.error(f"{what} declares a negative size {shown(tuple(shape))}")
        return tuple(int(d) for d in shape), bool(fortran), dtype
