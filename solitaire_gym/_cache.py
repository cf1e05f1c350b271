"""Keep numba's on-disk cache in step with the package's sources, dropping only what went stale.

numba's ``cache=True`` checks a compiled function against its own file only (modification time and
size). A kernel also carries compiled copies of what it uses from other modules: their jitted
functions (compiled, often inlined, into the caller) and their module constants (frozen into the
machine code). After an edit to such a module, a kernel cached before it would go on running the
old code: after a ``git pull`` into an editable install, the env kernels would keep the old rules.

What a kernel can use is bounded by imports. A kernel reads its own module's globals only; any
function or constant of another module of the package came into those globals through a
module-level import (``import`` or ``from ... import``, absolute or relative), and that module's
functions reach further only through its own imports in turn. So everything compiled into a
kernel of module M comes from M's *closure*: M and the package modules reached from M by
module-level imports, transitively. (An import inside a function body binds a local of that
Python function, which no kernel sees; it is not followed. Neither is anything outside the
package: numba checks its own and numpy's versions itself.)

Types are the one way around imports: numba picks the implementation of an operation by the type
of the value, wherever the value came from, and a kernel is compiled (and cached, in its own
module's files) for the types it is called with. The rules' kernels read the fields of the
engine's ``State`` struct (``engine/state.py``) and of its borrowed views (``engine/borrow.py``)
without importing either. So a module that extends numba (it imports ``numba.extending``,
``numba.experimental``, ``numba.core.imputils``, ``numba.core.typing`` or
``numba.core.datamodel``) counts in every module's closure: an edit to it clears every kernel.

This module keeps a stamp (``__pycache__/numba-sources.stamp``, JSON) with, for every ``.py`` file,
its size and modification time, a digest of its contents and the names it imports, and, for every
module, a digest of the contents of its closure. At start (``solitaire_gym/__init__.py`` imports
this module before anything compiled):

- if no file's size or modification time changed, nothing is read: a millisecond or two;
- a file whose stat changed is read and hashed, and parsed (``ast``) only if its contents changed:
  a ``touch`` or a checkout that rewrote the same bytes clears nothing;
- the cache files of a module whose closure digest changed, or that the stamp does not know (no
  stamp, or one from before this scheme), are deleted; numba writes them beside the module, as
  ``__pycache__/<module>.<function>-<line>.pyXY.nbi`` and ``.N.nbc``. Cache files whose module is
  gone go too. Every other module keeps its kernels: an edit to ``rendering/``, ``commands/`` or
  the CLI compiles nothing, and an edit to ``engine/rules.py`` recompiles the engine, env and
  solver kernels that import it (directly or not) and nothing else;
- then the new stamp is written (atomically), only once the deletions succeeded.

The ``agents`` package, shipped beside this one in the same distribution, has kernels that call
into the engine; when it sits next to this package (a checkout, an install of the distribution)
and imports it, its modules are covered the same way, in the same stamp.

A read-only install is left alone (numba then keeps its cache elsewhere, and an installed package
is rewritten whole, which changes every kernel's own file, which numba checks). Not covered, as
before: a cache in ``NUMBA_CACHE_DIR`` (used for cold measurements, with a new empty directory),
and a process that was already running when a file changed and compiles a kernel after the next
process has refreshed the stamp (it compiles the code it had loaded).

**Processes compiling at once.** numba saves a compiled overload by reading the function's index,
adding the new entry and writing the index back, unguarded: two processes that save overloads of
the same function at once (a parallel ``solitaire-gym warmup``, pytest-xdist's workers, a pool
whose workers compile) can each write an index without the other's entry, both under the same data
file name, so that an entry names the other process's machine code. :func:`guard_concurrent_saves`
(called at import) makes each save hold an exclusive lock (``fcntl.flock`` on a file in the cache
directory, :data:`SAVE_LOCK`) from reading the index to writing the data, so saves of one cache
directory follow each other. Where ``fcntl`` is missing (Windows) saves stay as numba makes them.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

STAMP = "numba-sources.stamp"
SAVE_LOCK = "numba-save.lock"
"""The file of a cache directory whose lock each save holds (:func:`guard_concurrent_saves`)."""
FORMAT = 2  # the stamp's layout; a stamp of another layout counts as none
SIBLINGS = ("agents",)  # packages of the same distribution with kernels that import this one
# numba modules through which a module registers types or implementations, used by kernels
# anywhere (see the module docstring)
EXTENDS = (
    "numba.extending",
    "numba.experimental",
    "numba.core.imputils",
    "numba.core.typing",
    "numba.core.datamodel",
)


def module_name(rel: str) -> str:
    """``solitaire_gym/engine/rules.py`` -> ``solitaire_gym.engine.rules`` (a package's
    ``__init__.py`` -> the package)."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_names(source: bytes, module: str, is_package: bool) -> list[str] | None:
    """The absolute dotted names that ``module``'s module-level code imports, relative imports
    resolved; ``from a.b import c`` gives ``a.b.c``, which stands for the module ``a.b.c`` if there
    is one, else for ``a.b`` (the longest prefix that is a module: :func:`closure_digests`).
    Function bodies are skipped. None if the source does not parse (it cannot be imported, so
    nothing is compiled from it; once fixed, its contents differ and it is parsed again)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    numba = set()  # the names numba is imported as
    todo: list[ast.AST] = [tree]
    while todo:
        for node in ast.iter_child_nodes(todo.pop()):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
                numba.update(a.asname or a.name for a in node.names if a.name == "numba")
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*parts, base] if base else parts)
                names.update(f"{base}.{alias.name}" for alias in node.names)
            todo.append(node)
    for node in ast.walk(tree):  # nb.extending.overload and the like, anywhere
        if isinstance(node, ast.Attribute):
            chain = _dotted(node)
            if chain and chain.split(".")[0] in numba:
                dotted = "numba" + chain[chain.index(".") :]
                names.update(e for e in EXTENDS if f"{dotted}.".startswith(f"{e}."))
    return sorted(names)


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def closure_digests(files: dict[str, dict], tops: Sequence[str]) -> dict[str, str]:
    """For each file in ``files`` (``{relative path: {"sha": ..., "imports": [...]}}``), a digest
    of the contents of its closure: itself and the files it imports from the packages ``tops``,
    transitively, and the files that extend numba (:data:`EXTENDS`) with their own closures."""
    by_name = {module_name(rel): rel for rel in files}

    def resolve(name: str) -> str | None:  # the longest prefix that is a module here
        parts = name.split(".")
        if parts[0] not in tops:
            return None
        for n in range(len(parts), 0, -1):
            rel = by_name.get(".".join(parts[:n]))
            if rel is not None:
                return rel
        return None

    deps = {
        rel: {d for d in map(resolve, entry["imports"] or ()) if d is not None}
        for rel, entry in files.items()
    }
    extends = {
        rel
        for rel, entry in files.items()
        if any(f"{name}.".startswith(f"{e}.") for name in entry["imports"] or () for e in EXTENDS)
    }
    digests = {}
    for rel in files:
        seen, todo = {rel, *extends}, [rel, *extends]
        while todo:
            for d in deps[todo.pop()] - seen:
                seen.add(d)
                todo.append(d)
        h = hashlib.sha256()
        for member in sorted(seen):
            h.update(f"{member}\0{files[member]['sha']}\n".encode())
        digests[rel] = h.hexdigest()
    return digests


def _read_stamp(path: Path) -> dict:
    """The stamp at ``path``; ``{}`` if there is none, or one of another layout, or a damaged one
    (caches from before a stamp cannot be trusted either)."""
    try:
        stamp = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not (isinstance(stamp, dict) and stamp.get("format") == FORMAT):
        return {}
    files, closures = stamp.get("files"), stamp.get("closures")
    if not (isinstance(files, dict) and isinstance(closures, dict)):
        return {}
    for entry in files.values():
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("stat"), list)
            and isinstance(entry.get("sha"), str)
            and (entry.get("imports") is None or isinstance(entry.get("imports"), list))
        ):
            return {}
    return stamp


def _scan(packages: Sequence[Path], top: Path, old: dict) -> dict[str, dict]:
    """Every ``.py`` file under ``packages``: stat, contents digest and imports, taken from the
    old stamp where the stat (or else the contents) did not change."""
    files = {}
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            rel = path.relative_to(top).as_posix()
            st = path.stat()
            stat = [st.st_size, st.st_mtime_ns]
            prev = old.get(rel)
            if prev is not None and prev["stat"] == stat:
                files[rel] = prev
                continue
            source = path.read_bytes()
            sha = hashlib.sha256(source).hexdigest()
            if prev is not None and prev["sha"] == sha:
                files[rel] = {**prev, "stat": stat}
                continue
            imports = imported_names(source, module_name(rel), path.name == "__init__.py")
            files[rel] = {"stat": stat, "sha": sha, "imports": imports}
    return files


def _cache_files(package: Path):
    """numba's cache files under ``package``, each with the source file it was compiled from."""
    for folder in package.rglob("__pycache__"):
        for path in folder.iterdir():
            if path.suffix in (".nbi", ".nbc"):
                yield path, folder.parent / (path.name.split(".", 1)[0] + ".py")


def _imports(files: dict[str, dict], package: str, target: str) -> bool:
    """Whether a module of ``package`` imports one of the package ``target``."""
    return any(
        name.split(".")[0] == target
        for rel, entry in files.items()
        if rel.startswith(f"{package}/")
        for name in entry["imports"] or ()
    )


def refresh(root: Path, siblings: Sequence[Path] = ()) -> list[str]:
    """Bring the numba cache of the package at ``root`` (and of the ``siblings`` packages beside
    it that import it) in step with their sources, as the module docstring says. Returns the files
    (relative to ``root.parent``, sorted) whose closure changed: their kernels, if they have any,
    were deleted. Empty when nothing changed, and for a read-only install."""
    top = root.parent
    stamp_file = root / "__pycache__" / STAMP
    try:
        old = _read_stamp(stamp_file)
        files = _scan([root, *siblings], top, old.get("files", {}))
        if files == old.get("files"):
            return []
        packages = [root, *siblings]
        digests = closure_digests(files, [p.name for p in packages])
        # only a sibling that imports this package is one of ours: the others are left alone
        ours = [p for p in packages if p == root or _imports(files, p.name, root.name)]
        closures = {
            rel: d for rel, d in digests.items() if any(rel.startswith(f"{p.name}/") for p in ours)
        }
        old_closures = old.get("closures", {})
        stale = sorted(rel for rel, d in closures.items() if old_closures.get(rel) != d)
        if stale or set(old.get("files", {})) - set(files):
            for package in ours:
                for path, source in _cache_files(package):
                    rel = source.relative_to(top).as_posix()
                    if rel not in files or rel in stale:
                        path.unlink(missing_ok=True)
        stamp_file.parent.mkdir(exist_ok=True)
        tmp = stamp_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "files": files, "closures": closures}))
        os.replace(tmp, stamp_file)  # atomic: a process starting beside us reads old or new
    except OSError:
        return []
    return stale


def siblings_of(root: Path) -> list[Path]:
    """The :data:`SIBLINGS` packages present beside ``root``."""
    return [
        root.parent / name for name in SIBLINGS if (root.parent / name / "__init__.py").is_file()
    ]


def guard_concurrent_saves() -> bool:
    """Make numba's cache saves hold an exclusive lock on their directory (module docstring,
    **Processes compiling at once**). Returns whether saves are guarded (False without ``fcntl``
    or where numba's cache has no ``IndexDataCacheFile.save``). Calling it again changes
    nothing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS
        return False
    from numba.core import caching

    cls = getattr(caching, "IndexDataCacheFile", None)
    save = getattr(cls, "save", None)
    if save is None or not callable(save):  # pragma: no cover - a numba laid out otherwise
        return False
    if getattr(save, "_solitaire_gym_locked", False):
        return True

    def locked_save(self, key, data):
        directory = getattr(self, "_cache_path", None)
        if directory is None:  # pragma: no cover - a numba laid out otherwise
            return save(self, key, data)
        with contextlib.ExitStack() as stack:
            try:
                lock = stack.enter_context(open(os.path.join(directory, SAVE_LOCK), "ab"))
                fcntl.flock(lock, fcntl.LOCK_EX)
            except OSError:  # the directory cannot hold the lock: save as numba does
                pass
            return save(self, key, data)  # the lock goes with the file's closing

    locked_save._solitaire_gym_locked = True
    locked_save.__wrapped__ = save
    cls.save = locked_save
    return True


refresh(Path(__file__).parent, siblings_of(Path(__file__).parent))
guard_concurrent_saves()
