"""``solitaire-gym warmup`` (solitaire_gym/commands/warmup.py): what its parts warm beyond the
package's own calls (the agents' kernels, the action encoders Python calls), and the progress it
shows while a part compiles. The compiles themselves are numba's: faked here with its events."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from numba.core import event

from solitaire_gym.commands import warmup as w


def _kernel(module: str, name: str) -> types.SimpleNamespace:
    """Something that looks like a numba dispatcher of ``module`` to the compile listeners."""

    def f():
        pass

    f.__module__, f.__qualname__ = module, name
    return types.SimpleNamespace(py_func=f)


def _compile(dispatcher, seconds: float = 0.0) -> None:
    event.start_event("numba:compile", data={"dispatcher": dispatcher})
    time.sleep(seconds)
    event.end_event("numba:compile", data={"dispatcher": dispatcher})


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_part_shows_its_progress(monkeypatch):
    monkeypatch.setattr(w, "PERIOD", 0.05)

    def part():
        _compile(_kernel("numpy.linalg", "other"))  # not ours: not counted
        _compile(_kernel("agents.greedy", "_rank"))
        _compile(_kernel("solitaire_gym.solver.kernels", "search"), seconds=0.4)  # a long one

    monkeypatch.setitem(w.PARTS, "slow", part)
    out = io.StringIO()
    assert w.warmup(["slow"], out=out)["slow"][1] == 2
    lines = out.getvalue().splitlines()
    assert lines[0] == "warmup: slow ..."
    ticks = [x for x in lines if "now solver.kernels.search" in x]
    assert len(ticks) >= 2 and "kernels compiled: 2" in ticks[-1]  # it goes on through the kernel
    assert lines[-2].startswith("warmup: slow ... ") and lines[-2].endswith("(2 kernels compiled)")


def test_on_a_terminal_the_progress_line_is_rewritten(monkeypatch):
    monkeypatch.setitem(w.PARTS, "slow", lambda: _compile(_kernel("agents.memory", "_along")))
    out = _Terminal()
    w.warmup(["slow"], out=out)
    text = out.getvalue()
    assert "\rwarmup: slow ... 0 s, kernels compiled: 1, now agents.memory._along\x1b[K" in text
    assert "\rwarmup: slow ... 0.0 s (1 kernels compiled)\x1b[K\n" in text


def test_a_part_that_cannot_run_here_is_skipped(monkeypatch):
    def part():
        raise w.Skipped("the agents package cannot be imported")

    monkeypatch.setitem(w.PARTS, "agents", part)
    out = io.StringIO()
    assert w.warmup(["agents"], out=out) == {}
    assert "warmup: agents ... skipped: the agents package cannot be imported" in out.getvalue()


@pytest.mark.skipif(importlib.util.find_spec("agents") is None, reason="no agents package")
def test_the_parts_warm_the_agents_kernels_and_the_action_encoders():
    """What the demo and the evaluation compiled outside the warmup before (issue 43): the
    greedy player's and the play memory's kernels, the action encoders that Python calls when it
    reads a move, and the search players' redeal. In a new process (loaded from the cache, or compiled there once)."""
    code = (
        "import io\n"
        "from solitaire_gym.commands.warmup import warmup\n"
        "warmup(['game', 'batch', 'agents'], out=io.StringIO())\n"
        "from agents import greedy, memory\n"
        "from solitaire_gym.engine import actions, information\n"
        "kernels = {\n"
        "    greedy: ['_rank', '_record', 'obs_hashes'],\n"
        "    memory: ['_counts', '_record', '_along'],\n"
        "    actions: ['enc_tt', 'enc_ct', 'enc_ft', 'decode'],\n"
        "    information: ['_redeal'],  # the search players' determinizations\n"
        "}\n"
        "for module, names in kernels.items():\n"
        "    for name in names:\n"
        "        if not getattr(module, name).signatures:\n"
        "            print('not warmed:', module.__name__, name)\n"
    )
    root = Path(__file__).parents[1]  # this checkout's package, and its numba cache
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert "not warmed" not in done.stdout, done.stdout
