"""An edit drops the numba cache of the kernels whose sources changed, and only those
(solitaire_gym/_cache.py): a kernel's sources are its module and the package modules it imports,
transitively. The real kernels are not compiled here: the cache files are made up, named as numba
names them, beside a copy of the package's sources."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from solitaire_gym import _cache

PACKAGE = Path(_cache.__file__).parent
AGENTS = PACKAGE.parent / "agents"


def _touch(path: Path, text: str = "") -> None:
    """Edit ``path`` (append ``text``, or leave its contents as they are) with a new mtime."""
    if text:
        path.write_text(path.read_text() + text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _kernels(top: Path) -> list[Path]:
    """The modules under ``top`` with cached kernels (``cache=True``)."""
    return sorted(p for p in top.rglob("*.py") if "cache=True" in p.read_text())


def _cache_files(modules: list[Path]) -> None:
    """numba's files for one kernel of each module: <module>.<function>-<line>.pyXY[.N].nbi/.nbc"""
    for module in modules:
        folder = module.parent / "__pycache__"
        folder.mkdir(exist_ok=True)
        for suffix in ("py311.nbi", "py311.1.nbc", "py311.2.nbc"):
            (folder / f"{module.stem}.kernel-10.{suffix}").write_bytes(b"compiled")


def _cached(top: Path) -> set[str]:
    """The modules (relative paths) that have cache files."""
    return {
        (p.parent.parent / (p.name.split(".")[0] + ".py")).relative_to(top).as_posix()
        for p in top.rglob("*.nb[ic]")
    }


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package's sources (and the agents' beside them, as in the repository), stamped, with a
    cache file for every module that has kernels."""
    for package in (PACKAGE, AGENTS):
        if package.is_dir():
            shutil.copytree(package, tmp_path / package.name, ignore=_sources_only)
    root = tmp_path / PACKAGE.name
    _cache_files(_kernels(tmp_path))
    assert _cache.refresh(root, _cache.siblings_of(root))  # no stamp yet: nothing is trusted
    assert not _cached(tmp_path)
    _cache_files(_kernels(tmp_path))
    assert _cache.refresh(root, _cache.siblings_of(root)) == []  # unchanged: the cache stays
    return root


def _sources_only(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__" or n.endswith((".npy", ".npz", ".json"))]


def test_an_edit_to_rendering_commands_or_the_cli_keeps_every_kernel(copy):
    top = copy.parent
    kernels = {p.relative_to(top).as_posix() for p in _kernels(top)}  # the agents' too
    assert "solitaire_gym/solver/loop.py" in kernels and "solitaire_gym/engine/rules.py" in kernels
    for name in ("rendering/ansi.py", "rendering/image.py", "commands/warmup.py", "cli.py"):
        _touch(copy / name)  # a touch: same contents
        assert _cache.refresh(copy, _cache.siblings_of(copy)) == []
        _touch(copy / name, "\n# an edit\n")
        stale = _cache.refresh(copy, _cache.siblings_of(copy))
        assert f"solitaire_gym/{name}" in stale
        assert not kernels & set(stale)
        assert kernels <= _cached(top)


def test_an_edit_to_the_rules_clears_the_kernels_that_import_them(copy):
    top = copy.parent
    _touch(copy / "engine" / "rules.py", "\nEDITED = 1\n")
    stale = set(_cache.refresh(copy, _cache.siblings_of(copy)))
    cleared = {
        "solitaire_gym/engine/rules.py",
        "solitaire_gym/engine/play.py",  # directly
        "solitaire_gym/engine/movegen.py",
        "solitaire_gym/engine/batch.py",  # through play and movegen
        "solitaire_gym/envs/kernels.py",
        "solitaire_gym/envs/observation.py",
        "solitaire_gym/solver/loop.py",
    }
    kept = {  # the rules import these, not the other way round
        "solitaire_gym/engine/cards.py",
        "solitaire_gym/engine/bits.py",
        "solitaire_gym/engine/actions.py",
    }
    assert cleared <= stale and not kept & stale
    assert not cleared & _cached(top) and kept <= _cached(top)
    assert _cache.refresh(copy, _cache.siblings_of(copy)) == []  # done once


def test_an_edit_to_the_types_kernels_take_clears_every_kernel(copy):
    # the rules' kernels read State and borrowed views without importing state.py or borrow.py
    top = copy.parent
    kernels = {p.relative_to(top).as_posix() for p in _kernels(top)}
    for name in ("state.py", "borrow.py"):
        _touch(copy / "engine" / name, "\n# an edit\n")
        assert kernels <= set(_cache.refresh(copy, _cache.siblings_of(copy)))
        assert not _cached(top)
        _cache_files(_kernels(top))


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agents package is not beside this one")
def test_the_agents_kernels_follow_the_engine_they_import(copy):
    top = copy.parent
    greedy = {"agents/greedy.py", "agents/memory.py"}
    _touch(copy / "commands" / "solve.py", "\n# an edit\n")
    _cache.refresh(copy, _cache.siblings_of(copy))
    assert greedy <= _cached(top)
    _touch(copy / "engine" / "actions.py", "\n# an edit\n")  # greedy imports it
    assert greedy <= set(_cache.refresh(copy, _cache.siblings_of(copy)))
    assert not greedy & _cached(top)


def _package(tmp_path: Path) -> Path:
    """A small package: ``play`` imports ``rules`` (relatively), ``kernels`` imports ``play``,
    ``cards`` and ``view`` import nothing of it."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "rules.py").write_text("X = 1\n")
    (root / "cards.py").write_text("import numpy\n")
    (root / "view.py").write_text("def show():\n    from pkg import rules\n")  # not followed
    (root / "sub" / "play.py").write_text("from .. import rules\n")
    (root / "sub" / "kernels.py").write_text("import pkg.sub.play as play\n")
    return root


def test_a_change_reaches_the_modules_that_import_it_transitively(tmp_path):
    root = _package(tmp_path)
    modules = [root / "cards.py", root / "rules.py", root / "sub" / "play.py"]
    modules += [root / "sub" / "kernels.py", root / "view.py"]
    _cache_files(modules)
    assert len(_cache.refresh(root)) == 7
    _cache_files(modules)
    _touch(root / "rules.py", "Y = 2\n")
    assert _cache.refresh(root) == ["pkg/rules.py", "pkg/sub/kernels.py", "pkg/sub/play.py"]
    assert _cached(tmp_path) == {"pkg/cards.py", "pkg/view.py"}


def test_a_gone_module_loses_its_cache_files(tmp_path):
    root = _package(tmp_path)
    _cache.refresh(root)
    _cache_files([root / "cards.py"])
    (root / "cards.py").unlink()
    _cache.refresh(root)
    assert not _cached(tmp_path)


def test_a_file_that_does_not_parse_is_not_fatal(tmp_path):
    root = _package(tmp_path)
    _cache.refresh(root)
    _touch(root / "rules.py", "def (\n")
    assert "pkg/sub/play.py" in _cache.refresh(root)


@pytest.mark.parametrize(
    "stamp",
    [
        "0123abcd",  # the first layout: a digest of every file's stat
        json.dumps({"format": _cache.FORMAT, "files": {"pkg/cards.py": {}}, "closures": {}}),
        json.dumps({"format": _cache.FORMAT, "files": [], "closures": {}}),
    ],
)
def test_a_stamp_of_another_layout_or_damaged_counts_as_none(tmp_path, stamp):
    root = _package(tmp_path)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / _cache.STAMP).write_text(stamp)
    _cache_files([root / "cards.py"])
    assert "pkg/cards.py" in _cache.refresh(root)
    assert not _cached(tmp_path)


def test_a_read_only_install_is_left_alone(tmp_path, monkeypatch):
    root = _package(tmp_path)
    _cache_files([root / "cards.py"])

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(Path, "unlink", refuse)
    assert _cache.refresh(root) == []
    assert _cached(tmp_path) == {"pkg/cards.py"}
    assert not (root / "__pycache__" / _cache.STAMP).exists()  # not trusted on the next start


def test_the_package_keeps_a_stamp_of_its_sources():
    import solitaire_gym

    root = Path(solitaire_gym.__file__).parent
    if not os.access(root, os.W_OK):
        pytest.skip("a read-only install keeps no stamp")
    stamp = json.loads((root / "__pycache__" / _cache.STAMP).read_text())
    for path in root.rglob("*.py"):
        entry = stamp["files"][path.relative_to(root.parent).as_posix()]
        assert entry["stat"][0] == path.stat().st_size
    assert "solitaire_gym/engine/rules.py" in stamp["closures"]


def test_the_imports_read_from_a_source():
    source = b"""
import numba as nb
from . import rules
from ..engine.cards import rank_of
import pkg.sub.play as play

@nb.extending.overload(rank_of)
def _rank_of(card):
    from pkg import view  # a local of this function: no kernel sees it
"""
    names = _cache.imported_names(source, "pkg.sub.kernels", is_package=False)
    assert "pkg.sub.rules" in names and "pkg.sub.play" in names
    assert "pkg.engine.cards.rank_of" in names  # the module pkg.engine.cards, or its package
    assert "numba.extending" in names  # it extends numba: it counts in every closure
    assert "pkg" not in names and "pkg.view" not in names


_SAVER = """
import sys, time
from pathlib import Path
import solitaire_gym  # noqa: F401  (guards numba's saves)
from numba.core.caching import IndexDataCacheFile

folder, who = sys.argv[1], sys.argv[2]
cache = IndexDataCacheFile(folder, "kernel", ("stamp", 1))
(Path(folder) / f"ready-{who}").touch()
while not (Path(folder) / "go").exists():
    time.sleep(0.001)
for i in range(150):
    cache.save((who, i), (who, i))
"""


def test_saves_from_processes_at_once_keep_every_overload(tmp_path):
    """Two processes saving overloads of one function at once: every overload stays in the index,
    each naming its own data (numba alone loses entries and points some at the other process's
    data: 373 of 400 kept and 9 wrong, measured with numba 0.68)."""
    import subprocess
    import sys
    import time

    from numba.core.caching import IndexDataCacheFile

    assert _cache.guard_concurrent_saves()  # the package's import installed it: no-op now
    script = tmp_path / "saver.py"
    script.write_text(_SAVER)
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path), who]) for who in "AB"]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready-{who}").exists() for who in "AB"):  # both imported
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    (tmp_path / "go").touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = IndexDataCacheFile(str(tmp_path), "kernel", ("stamp", 1))
    index = cache._load_index()
    assert len(index) == 300
    assert all(cache.load(key) == key for key in index)
