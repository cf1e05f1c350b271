import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def vectors():
    return json.loads((DATA / "RULES-vectors.json").read_text())
