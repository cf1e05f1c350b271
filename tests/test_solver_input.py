"""The solver's arguments (``solve``, ``certify``): budgets in nodes and seconds (a tiny one
gives ``unknown``), the clock and the table's size; bad codes, positions, types and budgets
refused with the package's own error; a certificate that is no win refused."""

from __future__ import annotations

import numpy as np
import pytest
from refusing import refused
from solving import SH_STUCK

from solitaire_gym import Game, GameCodeError, PositionError
from solitaire_gym.errors import ArgumentError, SolitaireError
from solitaire_gym.solver import SolverBug, certify, solve

SH = "SH1-C4-AAAAAJ2"

# ---- budgets -------------------------------------------------------------------------------------


def test_tiny_budgets_give_unknown():
    r = solve("TF1-D1N-AAAAAAZ", max_nodes=1)
    assert r.verdict == "unknown" and r.reason == "nodes" and r.solution == []
    r = solve("TF1-D1N-AAAAAAZ", max_seconds=1e-6)
    assert r.verdict == "unknown" and r.reason == "seconds"


@pytest.mark.parametrize(
    "kw",
    [
        {"max_seconds": 0},
        {"max_seconds": -1.5},
        {"max_seconds": float("nan")},
        {"max_nodes": 0},
        {"max_nodes": -3},
        {"max_nodes": 2.5},
        {"max_seconds": "1"},
        {"table_mb": 0},
    ],
)
def test_bad_budgets(kw):
    with pytest.raises(ValueError):
        solve("SH1-C4-AAAAAAB", **kw)


@pytest.mark.parametrize("table_mb", [float("inf"), float("nan"), 0, -1, 2**70, "64", True])
def test_solve_table_mb(table_mb):
    refused(ArgumentError, solve, SH, table_mb=table_mb)


def test_cpu_clock():
    r = solve("SH1-C4-AAAAAJ2", max_seconds=5, clock="cpu")
    assert r.verdict == "solvable"
    with pytest.raises(ValueError, match="clock"):
        solve("SH1-C4-AAAAAJ2", clock="gpu")


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["", "SH1-C4", "XX1-C4-AAAAAAB", "SH1-C3-AAAAAAB", "TF1-D1V-A"])
def test_bad_codes(code):
    with pytest.raises(GameCodeError):
        solve(code)


def test_bad_position():
    bad = dict(SH_STUCK, cells=["KH", "QH"])
    with pytest.raises(PositionError):
        solve(bad)
    with pytest.raises(PositionError):
        solve({"code": "SH1-C4-AAAAAAB"})


def test_bad_type():
    with pytest.raises(SolitaireError, match="int"):  # the package's own error (issue 16)
        solve(42)


def test_certificate_refuses_a_wrong_solution():
    start = Game.from_code("SH1-C4-AAAAAJ2").to_dict()
    with pytest.raises(SolverBug):
        certify(start, ["t1>t7"])  # legal, but not a win
    with pytest.raises(SolverBug):
        certify(start, ["t3>t5"])  # refused by the rules
    for solution in (None, iter(["t1>t7"]), ["t1>t7", 5]):  # not a list of moves at all
        with pytest.raises(SolitaireError, match="list of move strings"):
            certify(start, solution)
    with pytest.raises(SolitaireError, match="max_seconds"):
        solve("SH1-C4-AAAAAJ2", max_seconds=np.complex128(1))
