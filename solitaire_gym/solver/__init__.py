"""The solver: verified solutions for all three games, hints, and a solvability study.

>>> from solitaire_gym.solver import solve
>>> r = solve("SH1-C4-AAAAAJ2", max_seconds=5)
>>> r.verdict
'solvable'

The compiled depth-first search over the engine's kernels is one module per technique, each
docstring its part of the argument that the verdicts are exact: ``loop.py`` (the search loop,
Tarjan's components, restarts and side runs), ``moves.py`` (stock macros and the moves left out),
``safe_moves.py`` (automatic foundation moves), ``dead_ends.py`` and ``single_pass.py``
(positions proven lost without search), ``hops.py`` (hop classes), ``keys.py`` (canonical keys and
the visited set), ``shortcuts.py`` (shortening a solution), ``inline.py`` (the engine's kernels
compiled in) and ``layout.py`` (the search's arrays, statuses and switches). ``search.py`` holds
the budgets, the result and the certificate; ``batch.py`` many deals on all cores, resumable (the
CLI's ``solitaire-gym solve --deals``); ``solvable.py`` the shipped lists of solvable training
deals (``experiments/solvable_deals.py``).
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
