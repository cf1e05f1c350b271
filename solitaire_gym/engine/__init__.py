"""The rules engine: numba kernels over a struct-of-arrays batch of games (see ``state.py``).

Files, one concern each: ``cards`` (ids and names), ``variants`` (games, options, codes, ``cfg``),
``shuffle`` (the deal), ``state`` (the arrays), ``actions`` (action ids and notation), ``rules``
(legality and refusal reasons), ``scoring`` (the apps' tables), ``play`` (apply / undo),
``movegen`` (legal moves and masks), ``taps`` (tap and double tap), ``position`` (dicts),
``batch`` (compiled loops over many games); ``game`` (one game in the notation, plain Python:
what :class:`solitaire_gym.Game` builds on and the solver plays through).
"""
