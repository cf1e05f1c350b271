"""The numba cache is dropped whenever a source file changes (solitaire_gym/_cache.py)."""

from __future__ import annotations

import os
from pathlib import Path

from solitaire_gym import _cache


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "sub" / "__pycache__").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "b.py").write_text("y = 2\n")
    return root


def _caches(root: Path) -> list[Path]:
    files = [root / "sub" / "__pycache__" / n for n in ("b.f-1.py311.nbi", "b.f-1.py311.nbc")]
    for f in files:
        f.write_bytes(b"compiled")
    return files


def test_cache_is_cleared_when_any_source_changes(tmp_path):
    root = _package(tmp_path)
    files = _caches(root)
    assert _cache.refresh(root)  # no stamp yet: nothing cached can be trusted
    assert not any(f.exists() for f in files)
    files = _caches(root)
    assert not _cache.refresh(root)  # unchanged sources: the cache stays
    assert all(f.exists() for f in files)
    other = root / "a.py"  # not the file the cached function lives in
    other.write_text("x = 10\n")
    os.utime(other, ns=(1, 1))
    assert _cache.refresh(root)
    assert not any(f.exists() for f in files)
    assert not _cache.refresh(root)


def test_the_package_keeps_a_stamp_of_its_sources():
    import solitaire_gym

    root = Path(solitaire_gym.__file__).parent
    stamp = root / "__pycache__" / _cache.STAMP
    if os.access(root, os.W_OK):
        assert stamp.read_text() == _cache.sources_stamp(root)
