"""The docs site's code runs: every ```python block of docs/*.md without a ``>>>`` prompt is
executed, page by page in one namespace per page, in the order of the page (the ``>>>`` blocks
are doctests, collected by pytest's --doctest-glob). A page whose example breaks fails here
with the block's line number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.M | re.S)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of each ```python block that is not a doctest."""
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(1))
        for m in FENCE.finditer(text)
        if ">>>" not in m.group(1)
    ]


PAGES = sorted(p for p in DOCS.rglob("*.md") if python_blocks(p.read_text(encoding="utf-8")))


def test_the_pages_with_code_are_found():
    names = {p.name for p in PAGES}
    assert {"getting-started.md", "envs.md", "training.md", "rendering.md"} <= names


def test_a_block_is_found_with_its_line():
    text = "x\n```python\na = 1\n```\n```python\n>>> 1\n1\n```\n"
    assert python_blocks(text) == [(2, "a = 1\n")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run(page: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever an example writes lands here
    namespace: dict = {"__name__": "__docs__"}
    for line, code in python_blocks(page.read_text(encoding="utf-8")):
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"{page.name}, block at line {line}: {e!r}") from e


CALL_NEEDS = {"progress_bar=True": ("tqdm", "rich")}
"""What a snippet needs beyond its imports: stable-baselines3's progress bar imports tqdm and
rich only when it starts."""


def _dist(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(reqs: list[str]) -> set[str]:
    return {_dist(re.match(r"[A-Za-z0-9_.-]+", r).group()) for r in reqs}


def snippet_needs(code: str) -> set[str]:
    """The distributions a snippet needs, by name: those its imports come from (the standard
    library and this project left out) and those of :data:`CALL_NEEDS`."""
    import ast
    import importlib.metadata
    import sys

    owners = importlib.metadata.packages_distributions()
    modules = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(node.module.split(".")[0])
    need = {_dist(d) for m in modules - set(sys.stdlib_module_names)
            for d in owners.get(m, [m])}  # fmt: skip
    need |= {_dist(d) for call, dists in CALL_NEEDS.items() if call in code for d in dists}
    return need - {"solitaire-gym"}


def unmet(need: set[str], core: set[str], extras: dict[str, set[str]]) -> set[str]:
    """What ``need`` lacks with the core install and the extra that gives the most of it
    (empty: one extra gives it all)."""
    return min((need - core - e for e in extras.values()), key=len, default=need - core)


def _install() -> tuple[set[str], dict[str, set[str]]]:
    import tomllib

    meta = tomllib.loads((DOCS.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = {k: _requirements(v) for k, v in meta["optional-dependencies"].items()}
    return _requirements(meta["dependencies"]), extras


def test_every_snippet_runs_with_the_core_install_and_one_extra():
    """No snippet of the docs needs a package that no single extra gives (the training page's
    ``progress_bar=True`` needs tqdm and rich beside stable-baselines3: the agents extra)."""
    core, extras = _install()
    for page in PAGES:
        for line, code in python_blocks(page.read_text(encoding="utf-8")):
            assert not unmet(snippet_needs(code), core, extras), f"{page.name}, line {line}"


def test_a_snippet_that_needs_what_the_extra_lacks_is_found():
    core, extras = _install()
    blocks = python_blocks((DOCS / "training.md").read_text(encoding="utf-8"))
    code = next(c for _, c in blocks if "progress_bar=True" in c)  # run by test_page_examples_run
    need = snippet_needs(code)
    assert {"sb3-contrib", "tqdm", "rich"} <= need
    without_rich = {k: v - {"rich"} for k, v in extras.items()}
    assert unmet(need, core, without_rich) == {"rich"}


def test_docstrings_become_markdown_for_the_reference():
    pytest.importorskip("griffe")  # the docs extra
    import importlib.util

    spec = importlib.util.spec_from_file_location("griffe_rst", DOCS / "griffe_rst.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (
        "Raises :class:`~solitaire_gym.IllegalMoveError`, see :func:`solve`.\n\n"
        ">>> 1 + 1\n2\n\n"
        "=====  ====\nmove   id\n=====  ====\ndraw   0\n=====  ====\n\n"
        "Format::\n\n    {\n      x\n    }\n\nafter"
    )
    assert module.to_markdown(text).split("\n") == [
        "Raises `IllegalMoveError`, see `solve`.",
        "",
        "```pycon",
        ">>> 1 + 1",
        "2",
        "```",
        "",
        "```text",
        "=====  ====",
        "move   id",
        "=====  ====",
        "draw   0",
        "=====  ====",
        "```",
        "",
        "Format:",
        "",
        "```text",
        "    {",
        "      x",
        "    }",
        "```",
        "",
        "after",
    ]
