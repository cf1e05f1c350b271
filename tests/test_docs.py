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
