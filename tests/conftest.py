import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

try:
    import torch
except ImportError:  # the core install has no torch; the tests that need it skip
    torch = None
if torch is not None:
    # One torch thread: the policy networks here are small, and on a busy 2-core machine more
    # threads than free cores made a checkpoint replay test take minutes instead of seconds.
    torch.set_num_threads(1)


# Long tests (the markers in pyproject.toml): a plain run leaves out those marked ``slow`` or
# ``manual``; ``--long slow`` (make test, CI) runs the slow ones too and ``--long all`` (make
# test-all) every one. A test named on the command line (``path::name``) runs whatever its mark,
# and ``-m`` chooses by itself.
LONG = {"none": ("slow", "manual"), "slow": ("manual",), "all": ()}


def pytest_addoption(parser):
    parser.addoption(
        "--long",
        choices=list(LONG),
        default="none",
        help="long tests to run too: none (the default), slow (make test, CI), all (make test-all)",
    )


def _named(config) -> list[str]:
    """The test ids named on the command line (``path::name``), as pytest writes node ids."""
    out = []
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        if sep:
            try:
                rel = Path(path).resolve().relative_to(config.rootpath).as_posix()
            except ValueError:
                rel = path
            out.append(f"{rel}::{rest}")
    return out


def pytest_collection_modifyitems(config, items):
    left_out = LONG[config.getoption("--long")]
    if not left_out or config.getoption("markexpr"):
        return
    named = _named(config)
    keep, drop = [], []
    for item in items:
        long = any(item.get_closest_marker(mark) for mark in left_out)
        asked = any(item.nodeid == n or item.nodeid.startswith((f"{n}[", f"{n}::")) for n in named)
        (drop if long and not asked else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def vectors():
    return json.loads((DATA / "RULES-vectors.json").read_text())


@pytest.fixture(scope="module")
def episodes():
    """Two teacher games of Seahaven Towers (4 cells), training deals 0 and 1, 40 moves at most:
    the data of the teacher's and the imitation's tests (``test_teacher.py``,
    ``test_imitation.py``; torch needed)."""
    from agents.play import VARIANTS
    from agents.teacher import teach_deal
    from solitaire_gym.envs.core import EVAL_SPLIT_END

    SH = VARIANTS["SH1-C4"]
    return [teach_deal(*SH, EVAL_SPLIT_END + d, max_steps=40) for d in (0, 1)]
