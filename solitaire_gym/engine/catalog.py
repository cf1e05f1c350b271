"""The variants on offer: each game, by the name the envs and configs take, with its options and
the values each takes (the apps' default first); every combination is one variant, named by its
tag (:attr:`~solitaire_gym.engine.variants.Variant.tag`, e.g. ``SH1-C4``).

>>> VARIANTS["DS1-D3V"]
('double_solitaire', {'draw': 3, 'scoring': 'vegas'})
>>> len(VARIANTS)
9
"""

from __future__ import annotations

import itertools
from typing import Any

from solitaire_gym.engine.variants import Variant

GAME_OPTIONS: dict[str, dict[str, tuple[Any, ...]]] = {
    "double_solitaire": {"draw": (1, 3), "scoring": ("normal", "vegas")},
    "solitaire_reflechi": {"draw": (1, 3)},
    "seahaven_towers": {"cells": (4, 2, 1)},
}
"""Each game with the options it offers and the values each takes, the default first."""


def _variants() -> dict[str, tuple[str, dict[str, Any]]]:
    out = {}
    for game, options in GAME_OPTIONS.items():
        for values in itertools.product(*options.values()):
            chosen = dict(zip(options, values, strict=True))
            out[Variant.from_names(game, **chosen).tag] = (game, chosen)
    return out


VARIANTS: dict[str, tuple[str, dict[str, Any]]] = _variants()
"""Every variant, by its tag: (game, options), as ``gym.make`` and
:meth:`~solitaire_gym.engine.variants.Variant.from_names` take them; games in the order of
:data:`GAME_OPTIONS`, the last option's values changing fastest."""
