"""The solver: verified solutions for all three games, hints, and a solvability study.

>>> from solitaire_gym.solver import solve
>>> r = solve("SH1-C4-AAAAAJ2", max_seconds=5)
>>> r.verdict
'solvable'

``kernels.py`` is the compiled depth-first search over the engine's kernels (its docstring says
which moves it leaves out and why that keeps the verdicts exact); ``search.py`` the budgets, the
result and the certificate; ``batch.py`` many deals on all cores, resumable (the CLI's
``solitaire-gym solve --deals``); ``solvable.py`` the shipped lists of solvable training deals
(``experiments/solvable_deals.py``).
"""

from solitaire_gym.solver.search import (
    EXACT_NOTE,
    THOUGHTFUL_NOTE,
    VERDICTS,
    SolverBug,
    SolveResult,
    certify,
    hint,
    solve,
    warm_up,
)

__all__ = [
    "EXACT_NOTE",
    "THOUGHTFUL_NOTE",
    "VERDICTS",
    "SolveResult",
    "SolverBug",
    "certify",
    "hint",
    "solve",
    "warm_up",
]
