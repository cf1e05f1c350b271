"""The imports of ``solitaire_gym/``, ``agents/`` and ``experiments/``: no circles, and no private
name of one module imported by another; and the scripts of ``experiments/`` import the packages as
installed (none edits ``sys.path``) and fit in one's head (none over :data:`MAX_LINES` lines).

Every module is parsed (``ast``, nothing is imported) and every import statement in it counts,
wherever it stands: at module level, inside a function or a class, under ``try``. Only an import
under ``if TYPE_CHECKING:`` is left out: it never runs, and names a type for the type checker.

How an import becomes an edge of the graph, from the importing module to:

- ``import a.b.c``: the module ``a.b.c``;
- ``from a.b import c``: ``a.b.c`` when that is a module of the packages, else ``a.b`` (``c`` is a
  name that ``a.b`` defines); relative imports are resolved against the importing module;
- only the module named, not the packages above it. Importing ``a.b.c`` runs ``a/__init__.py``
  and ``a/b/__init__.py`` first, but a package's ``__init__`` that imports its own modules (to
  offer their names as the package's) would then form a circle with each of them: that is how
  a package presents its API, not a circle. A module that imports a package by name
  (``from solitaire_gym import Game``, ``import solitaire_gym.solver``) depends on that
  package's ``__init__`` like on any module, and a circle through it counts.

Imports of anything outside the packages are not followed. A circle is a strongly connected
component of more than one module; the test names its modules and the imports that join them.

A private name (one leading underscore) of a module is that module's own: another module of the
packages may not import it (``from a import _f``) or reach it through an imported module
(``a._f``); a helper that two modules share is public. A private *module* (``solitaire_gym._cache``)
is its package's: importing it from inside that package is what it is for. Tests and benchmarks
may reach into a module's internals; they are not checked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solitaire_gym", "agents", "experiments")
KNOWN_CIRCLES: list[set[str]] = []
"""Circles left in place, each with the reason (none)."""

Edges = dict[str, dict[str, list[str]]]  # module -> imported module -> where ("file:line")


def _source(node: ast.ImportFrom, here: str) -> str:
    """The module a ``from … import`` in module ``here`` reads from (relative ones resolved)."""
    if not node.level:
        return node.module or ""
    base = here.split(".")[: len(here.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``: dotted name -> file (a package's
    ``__init__.py`` is the package)."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def import_graph(root: Path, packages: Iterable[str]) -> Edges:
    """The edges the module docstring describes, for the modules of ``packages``."""
    mods = modules(root, packages)
    edges: Edges = {m: {} for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skip = _type_checking_only(tree)
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _source(node, here)
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.append(sub if sub in mods else source)
            for target in targets:
                if target in mods and target != name:
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    places = edges[name].setdefault(target, [])
                    if where not in places:  # one statement may import several names
                        places.append(where)
    return edges


def circles(edges: Edges) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without
    recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def describe(component: set[str], edges: Edges) -> str:
    """The modules of a circle and the imports between them, one per line."""
    lines = [f"circle of {len(component)} modules:"]
    for m in sorted(component):
        for target in sorted(t for t in edges[m] if t in component):
            lines.append(f"  {m} -> {target}  ({', '.join(edges[m][target])})")
    return "\n".join(lines)


def test_no_import_circles():
    edges = import_graph(ROOT, PACKAGES)
    assert len(edges) > 50  # the packages were found
    found = [c for c in circles(edges) if c not in KNOWN_CIRCLES]
    assert not found, "\n".join(describe(c, edges) for c in found)


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    """The graph counts function-level and relative imports and names the circle; a package
    importing its own module, and an import only for the type checker, are no circle."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.a import f\n")
    (pkg / "a.py").write_text("import os\n\ndef f():\n    from pkg.sub import b\n    return b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg import d\n"
    )
    (pkg / "d.py").write_text("from pkg import c\n")
    edges = import_graph(tmp_path, ["pkg"])
    assert edges["pkg.a"] == {"pkg.sub.b": ["pkg/a.py:4"]}
    assert edges["pkg.sub.b"] == {"pkg.a": ["pkg/sub/b.py:1"]}
    assert edges["pkg"] == {"pkg.a": ["pkg/__init__.py:1"]} and edges["pkg.c"] == {}
    assert circles(edges) == [{"pkg.a", "pkg.sub.b"}]
    assert "pkg.a -> pkg.sub.b  (pkg/a.py:4)" in describe({"pkg.a", "pkg.sub.b"}, edges)


def private_imports(root: Path, packages: Iterable[str]) -> list[str]:
    """Where a module of ``packages`` imports or reads another module's private name (the module
    docstring says what counts), as ``file:line: module._name``."""
    mods = modules(root, packages)
    found = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        bound: dict[str, str] = {}  # a local name -> the package module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in mods:
                        bound[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                source = _source(node, here)
                if source not in mods:
                    continue
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    if sub in mods:
                        bound[alias.asname or alias.name] = sub
                    elif _private(alias.name) and source != name:
                        found.append(f"{path.relative_to(root)}:{node.lineno}: {sub}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and _private(node.attr)
                and f"{bound[node.value.id]}.{node.attr}" not in mods
                and bound[node.value.id] != name
            ):
                where = f"{path.relative_to(root)}:{node.lineno}"
                found.append(f"{where}: {bound[node.value.id]}.{node.attr}")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_modules_private_name():
    found = private_imports(ROOT, PACKAGES)
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_a_private_name_imported_or_read_across_modules_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg import _hidden\n")
    (pkg / "_hidden.py").write_text("_LIMIT = 3\n")
    (pkg / "a.py").write_text("_x = 1\n\ndef f():\n    return _x\n")
    (pkg / "b.py").write_text("from pkg.a import _x, f\nfrom pkg import a as m\n\ny = m._x\n")
    assert private_imports(tmp_path, ["pkg"]) == ["pkg/b.py:1: pkg.a._x", "pkg/b.py:4: pkg.a._x"]


# ---- the scripts of experiments/ ---------------------------------------------------------------
MAX_LINES = 800
"""The most lines a module of ``experiments/`` may have (issue 42: files that fit in one's
head)."""


def path_edits(root: Path) -> list[str]:
    """Where a module under ``root`` reaches for Python's import path instead of importing the
    packages as installed: any use of ``sys.path`` (``sys.path.insert(…)``, ``sys.path = …``, a
    read), ``from sys import path``, or ``site.addsitedir``; as ``file:line: what``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = path.relative_to(root.parent)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and (node.value.id, node.attr) in (("sys", "path"), ("site", "addsitedir"))
            ):
                found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module in ("sys", "site"):
                for alias in node.names:
                    if alias.name in ("path", "addsitedir"):
                        found.append(
                            f"{where}:{node.lineno}: from {node.module} import {alias.name}"
                        )
    return found


def long_modules(root: Path, limit: int = MAX_LINES) -> list[str]:
    """The modules under ``root`` of more than ``limit`` lines, as ``file: lines``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            found.append(f"{path.relative_to(root.parent)}: {n} lines")
    return found


def test_the_experiments_import_the_packages_as_installed_and_stay_short():
    """Every script runs as ``python experiments/<name>.py`` or ``python -m experiments.<name>``
    with ``solitaire_gym``, ``agents`` and ``experiments`` installed (``pip install -e``); none
    puts a folder on the import path itself, and none has grown past :data:`MAX_LINES` lines."""
    root = ROOT / "experiments"
    assert len(list(root.rglob("*.py"))) > 15  # the scripts were found
    found = path_edits(root)
    assert not found, "import path edited (install the package instead):\n" + "\n".join(found)
    found = long_modules(root)
    assert not found, f"over {MAX_LINES} lines (split by concern):\n" + "\n".join(found)


def test_a_path_edit_or_a_long_module_is_found(tmp_path):
    root = tmp_path / "experiments"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text(
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path('.')))\n"
    )
    (root / "sub" / "b.py").write_text(
        "from sys import path\nimport site\n\nsite.addsitedir('x')\n"
    )
    (root / "c.py").write_text("import sys\n\nprint(sys.argv)\n" + "x = 1\n" * 9)
    assert path_edits(root) == [
        "experiments/a.py:4: sys.path",
        "experiments/sub/b.py:1: from sys import path",
        "experiments/sub/b.py:4: site.addsitedir",
    ]
    assert long_modules(root, limit=11) == ["experiments/c.py: 12 lines"]
    assert long_modules(root, limit=12) == []
