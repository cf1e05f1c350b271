"""``solitaire-gym warmup`` (solitaire_gym/commands/warmup.py): what its parts warm beyond the
package's own calls (the agents' kernels, the action encoders Python calls), and the progress it
shows while a part compiles. The compiles themselves are numba's: faked here with its events.

And the first start: the notice a cold import prints (once), the setup's warmup on the command line
and in the Makefile, and a game that compiles nothing after the warmup."""

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
        _compile(_kernel("solitaire_gym.solver.loop", "search"), seconds=0.4)  # a long one

    monkeypatch.setitem(w.PARTS, "slow", part)
    out = io.StringIO()
    assert w.warmup(["slow"], out=out)["slow"][1] == 2
    lines = out.getvalue().splitlines()
    assert lines[0] == "warmup: slow ..."
    ticks = [x for x in lines if "now solver.loop.search" in x]
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


# ---- first start ---------------------------------------------------------------------------------


def _child(code: str, cache, **env) -> subprocess.CompletedProcess:
    import os

    full = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=full
    )


@pytest.mark.slow  # compiles, in an empty cache
def test_compile_notice_once_and_only_when_cold(tmp_path):
    from solitaire_gym._compile_notice import MESSAGE

    # The package compiles its rule tables at import, so an import with an empty cache compiles.
    code = (
        "import solitaire_gym\n"
        "from solitaire_gym.engine.bits import bit\n"
        "bit(3)\n"  # a second kernel: no second line
    )
    cold = _child(code, tmp_path)
    assert cold.stderr.count(MESSAGE) == 1
    assert "warmup" in MESSAGE and "first use" in MESSAGE
    warm = _child(code, tmp_path)
    assert MESSAGE not in warm.stderr
    quiet = _child(code, tmp_path / "other", SOLITAIRE_GYM_COMPILE_NOTICE="0")
    assert MESSAGE not in quiet.stderr


def test_warmup_command_runs_every_part(tmp_path):
    from solitaire_gym.commands.warmup import PARTS, warmup

    out = io.StringIO()
    results = warmup(["game", "batch"], out=out)
    assert set(results) == {"game", "batch"} and set(results) <= set(PARTS)
    text = out.getvalue()
    assert "warmup: game ..." in text and "warmup: done in" in text
    for seconds, compiled in results.values():
        assert seconds >= 0 and compiled >= 0


def test_two_jobs_run_the_side_parts_in_a_second_process(monkeypatch, capfd):
    """With ``jobs=2`` the parts of ``SIDE`` run in a spawned process, which prints their lines
    on the standard output, not on this process's ``out``; the results hold every part, in the
    order asked."""
    monkeypatch.setattr(w, "SIDE", ("batch",))
    out = io.StringIO()
    results = w.warmup(["batch", "game"], out=out, jobs=2)
    assert list(results) == ["batch", "game"]
    here, there = out.getvalue(), capfd.readouterr().out
    assert "warmup: game ..." in here and "warmup: batch ..." not in here
    assert "warmup: batch ... " in there and "warmup: game" not in there
    assert "warmup: done in" in here


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow  # a cold solver compile, killed after a few seconds
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_second_process_ends_when_the_warmup_is_killed(tmp_path):
    """``solitaire-gym warmup --jobs 2`` killed (SIGKILL: it cannot pass it on) while its second
    process compiles the solver: the second process ends within seconds, not minutes later."""
    import os
    import signal

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    code = "from solitaire_gym.commands.warmup import warmup\nwarmup(['game', 'solver'], jobs=2)"
    parent = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while not workers and time.monotonic() < deadline:  # the pool's worker, spawned
            time.sleep(0.2)
            workers = [c for c in _children(parent.pid) if b"spawn_main" in
                       Path(f"/proc/{c}/cmdline").read_bytes()]  # fmt: skip
        assert workers, "no second process started"
        time.sleep(2.0)  # it compiles
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{workers[0]}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        state = Path(f"/proc/{workers[0]}/stat")
        alive = state.exists() and state.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        assert not alive, "the second process outlived the warmup by 10 s"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_one_process_by_default_where_saves_are_not_serialised(monkeypatch):
    import builtins
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert w.default_jobs() == 2
    real = builtins.__import__

    def no_fcntl(name, *args, **kwargs):
        if name == "fcntl":
            raise ImportError("no fcntl here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_fcntl)
    assert w.default_jobs() == 1
    monkeypatch.undo()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert w.default_jobs() == 1


@pytest.mark.parametrize(
    "parts, jobs, message",
    [
        (["game"], 0, "jobs must be a whole number of at least 1, not 0"),
        (["game"], True, "jobs must be a whole number of at least 1, not True"),
        (["game"], 1.5, "jobs must be a whole number of at least 1, not 1.5"),
        (["game", "nope"], 1, "no warmup part 'nope': the parts are game, env,"),
    ],
)
def test_bad_warmup_arguments_are_refused_before_any_part_runs(monkeypatch, parts, jobs, message):
    from solitaire_gym.errors import ArgumentError

    ran = []
    monkeypatch.setitem(w.PARTS, "game", lambda: ran.append("game"))
    out = io.StringIO()
    with pytest.raises(ArgumentError, match=message.replace(".", r"\.")):
        w.warmup(parts, out=out, jobs=jobs)
    assert ran == [] and out.getvalue() == ""


@pytest.mark.slow  # compiles, in an empty cache
def test_after_the_warmup_a_game_compiles_nothing(tmp_path):
    """After ``solitaire-gym warmup`` (its game part), a new process that plays to a foundation,
    writes the position as a dict and asks a card's rank and suit compiles no kernel of the
    package: every kernel Python code calls directly is warmed too."""
    _child("from solitaire_gym.commands.warmup import warmup\nwarmup(['game'])", tmp_path)
    code = (
        "from numba.core import event\n"
        "seen = []\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev):\n"
        "        f = getattr(ev.data.get('dispatcher'), 'py_func', None)\n"
        "        if (getattr(f, '__module__', None) or '').startswith('solitaire_gym.'):\n"
        "            seen.append(f.__name__)\n"
        "    def on_end(self, ev): pass\n"
        "event.register('numba:compile', L())\n"
        "from solitaire_gym import Game\n"
        "from solitaire_gym.engine.cards import rank_of, suit_of\n"
        "g = Game.from_code('SH1-C4-AAAAAAF')\n"
        "g.play(next(m for m in g.legal_moves() if m.endswith('>f')))\n"
        "assert any(g.to_dict()['foundations'])\n"
        "rank_of(5), suit_of(40)\n"
        "print('compiled:', sorted(set(seen)))\n"
    )
    assert _child(code, tmp_path).stdout.strip() == "compiled: []"


def test_warmup_is_on_the_command_line():
    from solitaire_gym.cli import build_parser

    args = build_parser().parse_args(["warmup", "--skip", "solver", "vector"])
    assert args.skip == ["solver", "vector"] and args.jobs == w.default_jobs()
    assert build_parser().parse_args(["warmup", "--jobs", "1"]).jobs == 1
    makefile = (__import__("pathlib").Path(__file__).parents[1] / "Makefile").read_text()
    # Every setup stamp (a rule that makes $(STAMP_...)) ends with the warmup.
    stamps = [r for r in makefile.split("\n\n") if r.startswith("$(STAMP_")]
    assert len(stamps) >= 2
    for rule in stamps:
        assert "$(BIN)/solitaire-gym warmup\n\ttouch $@" in rule, rule
