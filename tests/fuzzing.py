"""Shared pieces of the fuzz suite (``test_fuzz.py``, and ``fuzz_child.py`` which runs the
crash-prone part in a child process): strategies for bad input, and the check every refusal must
pass — the package's own error, a short message, nothing changed."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from refusing import MAX_MESSAGE

from solitaire_gym.errors import SolitaireError

# The default run stays short (CI); raise it for a long hunt: SOLITAIRE_FUZZ_EXAMPLES=2000.
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("SOLITAIRE_FUZZ_EXAMPLES", "30")),
    deadline=None,
    derandomize=os.environ.get("SOLITAIRE_FUZZ_RANDOM") is None,  # CI: the same examples each run
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # capsys: read after each call
    ],
    database=None,
)
FUZZ = settings(settings.get_profile("fuzz"))

# ---- strategies ----------------------------------------------------------------------------------
NOTATION = "tTwWcCfF0123456789:>-drawecyl *٣３²ßİ\u0301\x00\n"
CODE_CHARS = "SHDTFC1234567890-ABCDEFGHIJKLMNOPQRSTUVWXYZ abcxyz*ß٣２\u0130\n"

numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([2**31 - 1, 2**31, -(2**31) - 1, 2**63, 2**64, -1, 0, 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
scalars = st.one_of(
    st.none(),
    numbers,
    st.text(max_size=30),
    st.text(alphabet=NOTATION, max_size=12),
    st.binary(max_size=12),
    st.sampled_from(["", " ", "x" * 5000, "9" * 5000, "\ud800"]),
)
junk = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.tuples(children, children),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), children, max_size=4),
    ),
    max_leaves=12,
)
move_text = st.one_of(
    st.text(alphabet=NOTATION, min_size=0, max_size=14),
    st.from_regex(r"\A[tcwf][0-9]{0,6}(:[0-9]{1,5})?>[tcf][0-9]{0,6}\Z"),
    st.sampled_from(["t٣>t5", "t３>t5", "ｄraw", "t1:0>t2", "t" + "1" * 5000 + ">t2", "undo"]),
)
code_text = st.one_of(
    st.text(alphabet=CODE_CHARS, max_size=20),
    st.sampled_from(["SH1-C4-AAAAAJ2", "DS1-D3V-AAAAAAB", "TF1-D1N-7777777"]).flatmap(
        lambda c: st.tuples(st.just(c), st.integers(0, len(c)), st.text(max_size=2)).map(
            lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :]
        )
    ),
)


def mutate(value: Any, data: st.DataObject, label: str = "mutation") -> Any:
    """A copy of ``value`` (JSON-like) with one part, chosen by ``data``, replaced by junk,
    deleted or grown."""
    value = copy.deepcopy(value)
    path: list = []
    node = value
    while isinstance(node, (dict, list)) and node and data.draw(st.booleans(), label + " deeper"):
        key = data.draw(
            st.sampled_from(sorted(node, key=repr) if isinstance(node, dict) else range(len(node)))
        )
        path.append((node, key))
        node = node[key]
    if not path:
        return data.draw(junk, label)
    parent, key = path[-1]
    action = data.draw(st.sampled_from(["replace", "delete", "add"]), label + " action")
    if action == "delete":
        del parent[key]
    elif action == "add" and isinstance(parent, dict):
        parent[data.draw(st.text(max_size=6), label + " key")] = data.draw(junk, label)
    elif action == "add":
        parent.insert(key, data.draw(junk, label))
    else:
        parent[key] = data.draw(junk, label)
    return value


# ---- the check -----------------------------------------------------------------------------------
def refused_or_fine(call: Callable[[], Any], snapshot: Callable[[], Any] | None = None) -> bool:
    """Run ``call``. A refusal must be a :class:`SolitaireError` with a short message, and must
    leave ``snapshot()`` as it was; anything else that escapes fails the test. Returns True if
    ``call`` was refused."""
    before = snapshot() if snapshot is not None else None
    try:
        call()
    except SolitaireError as e:
        message = str(e)
        assert len(message) <= MAX_MESSAGE, f"a message of {len(message)} characters"
        if snapshot is not None:
            assert equal(snapshot(), before), "a refusal changed something"
        return True
    return False


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(equal, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)  # NaN equals NaN here


def state_of(state) -> list[np.ndarray]:
    """A copy of an engine state's arrays."""
    return [a.copy() for a in state.arrays()]
