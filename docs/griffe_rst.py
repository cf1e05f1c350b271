"""A griffe extension for the API reference: the package's docstrings are written for the
terminal and for Sphinx-style readers (``code``, :class:`X`, ``::`` literal blocks, doctests,
``====`` tables); this turns those few reST habits into Markdown that mkdocstrings renders, so
the docstrings themselves stay as they are.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):`(~?)([^`]+)`")
_TABLE_RULE = re.compile(r"^\s*=+(?:\s+=+)+\s*$")


def _role(m: re.Match) -> str:
    name = m.group(2)
    if m.group(1):  # :class:`~a.b.C` shows as C
        name = name.rsplit(".", 1)[-1]
    return f"`{name}`"


def to_markdown(text: str) -> str:
    """reST habits of the package's docstrings -> Markdown (see the module docstring)."""
    text = _ROLE.sub(_role, text)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped.startswith(">>>"):  # a doctest, up to the next blank line
            out.append(indent + "```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(indent + "```")
            continue
        if _TABLE_RULE.match(line):  # a simple table: three rule lines
            block = [line]
            rules = 1
            i += 1
            while i < len(lines) and rules < 3:
                block.append(lines[i])
                rules += bool(_TABLE_RULE.match(lines[i]))
                i += 1
            out += [indent + "```text", *block, indent + "```"]
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            # a literal block follows: the indented lines after the blank line
            out.append(line[:-1] if stripped != "::" else "")
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            block = []
            while j < len(lines) and (
                not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > len(indent)
            ):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                out += ["", indent + "```text", *block, indent + "```", ""]
                i = j
                continue
            i += 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class ReSTToMarkdown(griffe.Extension):
    """Rewrite every docstring griffe loads with :func:`to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
