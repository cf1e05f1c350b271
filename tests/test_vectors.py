"""RULES-vectors.json (computed from the rules, docs/rules.md), replayed completely."""

import json
from pathlib import Path

import numpy as np
import pytest

from solitaire_gym import Game, GameCodeError, parse_code
from solitaire_gym.engine.cards import card_name
from solitaire_gym.engine.shuffle import shuffled_deck, splitmix64_next

VECTORS = json.loads((Path(__file__).parent / "data" / "RULES-vectors.json").read_text())


def test_splitmix64_from_state_1():
    state = np.array([1], np.uint64)
    got = [hex(int(splitmix64_next(state))) for _ in VECTORS["splitmix64_outputs_from_state_1"]]
    assert got == VECTORS["splitmix64_outputs_from_state_1"]


def test_shuffles_of_deal_1():
    assert [card_name(int(x)) for x in shuffled_deck(52, np.uint64(1))] == VECTORS[
        "shuffled_deck_52_deal_1"
    ]
    assert shuffled_deck(104, np.uint64(1)).tolist() == VECTORS["shuffled_deck_104_deal_1_indices"]


@pytest.mark.parametrize("text,number", VECTORS["deal_numbers"].items())
def test_deal_numbers(text, number):
    _, deal = parse_code(f"SH1-C4-{text}")
    assert deal == number
    assert Game.new("seahaven", deal=number).code == f"SH1-C4-{text}"


@pytest.mark.parametrize("layout", VECTORS["layouts"], ids=lambda v: v["code"])
def test_layouts(layout):
    g = Game.from_code(layout["code"])
    d = g.to_dict()
    assert d["tableau"] == layout["tableau"]
    if "stock_in_draw_order" in layout:
        assert d["stock"] == layout["stock_in_draw_order"]
        assert d["waste"] == []
    if "cells" in layout:
        assert d["cells"] == layout["cells"]
    assert sorted(g.legal_moves()) == sorted(layout["legal_moves"])


@pytest.mark.parametrize("playout", VECTORS["playouts"], ids=lambda v: v["code"])
def test_playouts(playout):
    g = Game.from_code(playout["code"])
    for i, step in enumerate(playout["steps"]):
        g.play(step["move"])
        where = f"step {i + 1} ({step['move']})"
        assert g.score_text == step["score"], where
        assert g.moves == step["moves"], where
        assert sorted(g.legal_moves()) == sorted(step["legal_moves"]), where


@pytest.mark.parametrize("case", VECTORS["taps"], ids=lambda v: v["code"])
def test_taps(case):
    g = Game.from_code(case["code"])
    for move in case["after"]:
        g.play(move)
    assert {p: g.tap(p) for p in case["tap"]} == case["tap"]
    assert {p: g.double_tap(p) for p in case["double_tap"]} == case["double_tap"]


@pytest.mark.parametrize("code", VECTORS["invalid_codes"])
def test_invalid_codes(code):
    with pytest.raises(GameCodeError):
        Game.from_code(code)
