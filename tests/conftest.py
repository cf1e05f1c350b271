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


@pytest.fixture(scope="session")
def vectors():
    return json.loads((DATA / "RULES-vectors.json").read_text())
