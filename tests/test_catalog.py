"""The variants on offer are stated once (``solitaire_gym.engine.catalog``): the players' and
configs' lists are that table, and it offers exactly the options the engine accepts."""

import itertools

import pytest

from solitaire_gym.engine import catalog
from solitaire_gym.engine.variants import Variant
from solitaire_gym.errors import GameCodeError


def test_every_list_of_variants_is_the_catalog():
    from agents import config, play
    from solitaire_gym.envs import core, deal_lists

    assert play.VARIANTS is catalog.VARIANTS
    assert config.GAME_OPTIONS is catalog.GAME_OPTIONS
    assert tuple(catalog.VARIANTS) == deal_lists.TAGS
    assert config.REWARD_MODES is core.REWARD_MODES and config.DEAL_SOURCES is core.DEAL_SOURCES


@pytest.mark.parametrize("game", list(catalog.GAME_OPTIONS))
def test_the_catalog_offers_what_the_engine_accepts(game):
    """Each option a game offers takes exactly the catalog's values, and each variant's tag is
    the engine's tag of its options."""
    offered = catalog.GAME_OPTIONS[game]
    tried = {"draw": [0, 1, 2, 3, 4], "scoring": ["normal", "vegas", "x"], "cells": [0, 1, 2, 3, 5]}
    for option, values in offered.items():
        for value in tried[option]:
            try:
                Variant.from_names(game, **{option: value})
                accepted = True
            except GameCodeError:
                accepted = False
            assert accepted == (value in values), (game, option, value)
    mine = {t: o for t, (g, o) in catalog.VARIANTS.items() if g == game}
    assert len(mine) == len(list(itertools.product(*offered.values())))
    for tag, options in mine.items():
        assert Variant.from_names(game, **options).tag == tag
