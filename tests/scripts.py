"""The repository's scripts (``experiments/<name>.py``) as modules, for the tests that call their
functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def experiment(name: str) -> ModuleType:
    """``experiments/<name>.py``, loaded as a fresh module."""
    spec = importlib.util.spec_from_file_location(
        f"_exp_{name}", ROOT / "experiments" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
