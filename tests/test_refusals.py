"""The refusals the seeds describe: each with the app's rule text (``rules.REASONS``) from
``explain`` and as the message of ``IllegalMoveError``, and each changing nothing."""

import copy

import pytest
from positions import position

from solitaire_gym import Game, IllegalMoveError
from solitaire_gym.engine.rules import (
    R_EMPTY_KING,
    R_GROUP_UNORDERED,
    R_NOTHING_TO_RECYCLE,
    R_RUN_LIMIT,
    R_STOCK_EMPTY,
    R_STOCK_NOT_EMPTY,
    R_VEGAS_ONE_PASS,
    REASONS,
)

EMPTY_KING = REASONS[R_EMPTY_KING]
GROUP_UNORDERED = REASONS[R_GROUP_UNORDERED]
STOCK_EMPTY = REASONS[R_STOCK_EMPTY]
STOCK_NOT_EMPTY = REASONS[R_STOCK_NOT_EMPTY]
VEGAS_ONE_PASS = REASONS[R_VEGAS_ONE_PASS]


def test_reason_texts():
    assert EMPTY_KING == "an empty column accepts only a King"
    assert GROUP_UNORDERED == (
        "a group moves only if it is already in sequence: each card one rank lower than the one "
        "under it, colours alternating"
    )
    assert STOCK_EMPTY == "the stock is empty: tap it to turn the waste over ('recycle')"
    assert STOCK_NOT_EMPTY == "the waste is turned over only when the stock is empty"
    assert VEGAS_ONE_PASS == (
        "Vegas scoring: the waste is never turned over; the stock is gone through once"
    )


def assert_refused(g, move, reason):
    """``move`` is refused with ``reason``, and the refusal changes nothing."""
    before = copy.deepcopy(g.to_dict())
    moves, score, legal, undo = g.moves, g.score, g.legal_moves(), g.undo_count
    assert g.explain(move) == reason
    assert not g.is_legal(move)
    assert move not in legal
    with pytest.raises(IllegalMoveError) as err:
        g.play(move)
    assert str(err.value) == reason
    assert g.to_dict() == before
    assert g.moves == moves
    assert g.score == score
    assert g.legal_moves() == legal
    assert g.undo_count == undo


# ---- an empty column accepts only a King, in all three games -------------------------------------
def test_empty_column_double_solitaire():
    # t1 empty; Q♥ alone, Q♥ over a face-down card (moving it would turn that card over: still
    # refused, "not even to uncover a face-down card"), a run led by J♠, the waste's 5♣ and the
    # foundation's 3♠ may not go there; the K♠ run may.
    d = position(
        "DS1-D1N-AAAAAAB",
        {2: ["QH"], 3: ["9C*", "QH"], 4: ["4D*", "JS", "TH"], 5: ["KS", "QD"]},
        foundations=["3S"] + [None] * 7,
        waste=["5C"],
        rest="stock",
    )
    g = Game.from_dict(d)
    for move in ["t2>t1", "t3>t1", "t4:2>t1", "t4>t1", "t5>t1", "w>t1", "f1>t1"]:
        assert_refused(g, move, EMPTY_KING)
    assert g.is_legal("t5:2>t1")
    g.play("t5:2>t1")
    assert g.to_dict()["tableau"][0] == ["KS", "QD"]


def test_empty_column_reflechi_real_deal():
    # TF1-D1N-AAAAAAB: 7♥ (t1, alone) onto 8♣ empties t1; then only a King may go there.
    g = Game.from_code("TF1-D1N-AAAAAAB")
    assert g.legal_moves() == ["draw", "t1>t7"]
    g.play("t1>t7")
    assert g.to_dict()["tableau"][0] == []
    for move in ["t2>t1", "t3>t1", "t4>t1", "t6>t1", "t7>t1", "t7:2>t1"]:
        assert_refused(g, move, EMPTY_KING)
    g.play("draw")  # Q♠ on the waste
    assert g.to_dict()["waste"] == ["QS"]
    assert_refused(g, "w>t1", EMPTY_KING)
    assert g.is_legal("t5>t1")  # K♦
    g.play("t5>t1")
    assert g.to_dict()["tableau"][0] == ["KD"]


def test_empty_column_reflechi_position():
    d = position(
        "TF1-D1N-AAAAAAB",
        {2: ["5D", "QH", "JS"], 3: ["KC", "QD", "JC"]},
        foundations=["4S", None, None, None],
        waste=["9D"],
        rest=[4, 5, 6, 7],
    )
    g = Game.from_dict(d)
    for move in ["t2:2>t1", "t2>t1", "t3:2>t1", "w>t1", "f1>t1"]:
        assert_refused(g, move, EMPTY_KING)
    g.play("t3:3>t1")
    assert g.to_dict()["tableau"][0] == ["KC", "QD", "JC"]


@pytest.mark.parametrize("code", ["SH1-C4-AAAAAJ2", "SH1-C2-AAAAAJ2", "SH1-C1-AAAAAJ2"])
def test_empty_column_seahaven(code):
    n_cells = int(code[5])
    cells = ["9D"] + [None] * (n_cells - 1)
    d = position(
        code,
        {2: ["3H", "QH", "JH"], 3: ["2C", "KC"], 4: ["5S", "KD", "QD"]},
        foundations=["4S", None, None, None],
        cells=cells,
        rest=[5, 6, 7, 8, 9, 10],
    )
    g = Game.from_dict(d)
    for move in ["t2>t1", "t2:2>t1", "c1>t1", "f1>t1"]:
        assert_refused(g, move, EMPTY_KING)
    assert g.is_legal("t3>t1")
    # K♦ Q♦ into the empty column: 2 cards, limit (empty cells + 1) × 2^0
    if n_cells == 1:
        assert_refused(g, "t4:2>t1", REASONS[R_RUN_LIMIT].format(n=2, aux=1))
    else:
        assert g.is_legal("t4:2>t1")


def test_empty_column_seahaven_real_deal():
    # SH1-C4-AAAAAJ2 as dealt; empty a column by hand through the cells, then refuse a non-King.
    g = Game.from_code("SH1-C4-AAAAAJ2")
    d = g.to_dict()
    d["cells"] = [None] * 4
    col = d["tableau"][0]  # KD 3S 4C QC 6D
    d["tableau"][0] = []
    d["tableau"][1] += col[1:]  # 3S 4C QC 6D onto t2
    d["tableau"][2] = [col[0], *d["tableau"][2]]  # K♦ under t3
    d["tableau"][3] += ["3C", "4H"]
    g = Game.from_dict(d)
    assert g.to_dict()["tableau"][0] == []
    for move in ["t2>t1", "t4>t1", "t5>t1", "t10>t1"]:
        assert_refused(g, move, EMPTY_KING)


# ---- Solitaire Réfléchi: a group must already be in sequence -------------------------------------
def test_reflechi_group_not_in_sequence_first_deal():
    g = Game.from_code("TF1-D1N-AAAAAAB")
    d = g.to_dict()
    assert d["tableau"][6][-2:] == ["TH", "8C"]
    assert d["tableau"][5][-1] == "JC"
    # 10♥ would fit on J♣, but 8♣ lying on it breaks the sequence: the group may not move
    assert_refused(g, "t7:2>t6", GROUP_UNORDERED)
    assert_refused(g, "t7:3>t6", GROUP_UNORDERED)  # T♣ T♥ 8♣
    assert_refused(g, "t4:2>t6", GROUP_UNORDERED)  # J♦ 2♠
    assert_refused(g, "t5:4>t6", GROUP_UNORDERED)  # 5♥ 5♦ A♥ K♦
    # after 7♥ onto 8♣ the top two (8♣ 7♥) are a group, the three (T♥ 8♣ 7♥) are not
    g.play("t1>t7")
    assert_refused(g, "t7:3>t6", GROUP_UNORDERED)
    assert (
        g.explain("t7:2>t6") == "a card goes on a card of the opposite colour and one rank higher"
    )


def test_reflechi_ordered_group_moves():
    d = position(
        "TF1-D1N-AAAAAAB",
        {1: ["2C", "9C", "8H", "7S"], 2: ["TD"], 3: ["5S", "9D", "8S", "6H"]},
        rest=[4, 5, 6, 7],
    )
    g = Game.from_dict(d)
    g.play("t1:3>t2")
    assert g.to_dict()["tableau"][1] == ["TD", "9C", "8H", "7S"]
    g.undo()
    assert_refused(g, "t3:3>t2", GROUP_UNORDERED)  # 9♦ 8♠ 6♥: a rank is missing


# ---- Double Solitaire: the second A♠ takes the second ♠ place ------------------------------------
def test_second_ace_of_spades_takes_the_second_spade_place():
    d = position(
        "DS1-D1N-AAAAAAB",
        {1: ["AS"], 2: ["2S"], 3: ["AH"], 4: ["2S"]},
        waste=["AS"],
        rest="stock",
    )
    g = Game.from_dict(d)
    g.play("t1>f")
    assert g.to_dict()["foundations"] == ["AS", None, None, None, None, None, None, None]
    g.play("w>f")
    assert g.to_dict()["foundations"] == ["AS", "AS", None, None, None, None, None, None]
    # an ace never goes into another suit's row: A♥ takes f3, though both ♠ places are taken
    g.play("t3>f")
    assert g.to_dict()["foundations"] == ["AS", "AS", "AH", None, None, None, None, None]
    # both ♠ piles accept 2♠: it goes to the first of the row, the next 2♠ to the second
    g.play("t2>f")
    assert g.to_dict()["foundations"] == ["2S", "AS", "AH", None, None, None, None, None]
    g.play("t4>f")
    assert g.to_dict()["foundations"] == ["2S", "2S", "AH", None, None, None, None, None]
    assert g.score == 50


def test_ace_goes_to_the_empty_place_of_its_row():
    # f1 was taken back to empty; f2 holds A♠ 2♠ 3♠: the A♠ goes to f1, a 4♠ to f2
    d = position(
        "DS1-D1N-AAAAAAB",
        {1: ["AS"], 2: ["4S"]},
        foundations=[None, "3S"] + [None] * 6,
        rest="stock",
    )
    g = Game.from_dict(d)
    assert g.tap("t1") == "t1>f"
    g.play("t1>f")
    g.play("t2>f")
    assert g.to_dict()["foundations"][:2] == ["AS", "4S"]


# ---- stock: draw 3 with fewer cards, empty stock, turn-overs -------------------------------------
@pytest.mark.parametrize("code", ["DS1-D3N-AAAAAAB", "DS1-D3V-AAAAAAB", "TF1-D3N-AAAAAAB"])
@pytest.mark.parametrize("left", [1, 2, 3])
def test_draw_three_with_fewer_cards_left(code, left):
    stock = ["5H", "6C", "7D"][:left]
    d = position(code, {1: ["9C"]}, stock=stock, waste=["2H"], rest="waste")
    g = Game.from_dict(d)
    assert g.is_legal("draw")
    g.play("draw")
    after = g.to_dict()
    assert after["stock"] == []
    assert after["waste"] == d["waste"] + stock  # drawn one at a time: the last drawn on top
    assert g.moves == 1
    assert_refused(g, "draw", STOCK_EMPTY)
    g.undo()
    assert g.to_dict() == {**d, "moves": 1}


def test_draw_three_real_deal_ends_with_two():
    # DS1-D3N-AAAAAAB: 59 stock cards = 19 draws of 3, then one draw of the last 2
    g = Game.from_code("DS1-D3N-AAAAAAB")
    stock = g.to_dict()["stock"]
    assert len(stock) == 59
    for i in range(19):
        g.play("draw")
        assert g.to_dict()["waste"][-1] == stock[3 * i + 2]
    g.play("draw")
    d = g.to_dict()
    assert d["stock"] == []
    assert d["waste"] == stock
    assert g.moves == 20
    assert_refused(g, "draw", STOCK_EMPTY)
    g.play("recycle")
    assert g.to_dict()["stock"] == stock


@pytest.mark.parametrize("code", ["DS1-D1N-AAAAAAB", "DS1-D1V-AAAAAAB", "TF1-D1N-AAAAAAB"])
def test_draw_on_empty_stock_refused(code):
    g = Game.from_dict(position(code, {1: ["9C"]}, waste=["2H"], rest="waste"))
    assert_refused(g, "draw", STOCK_EMPTY)


@pytest.mark.parametrize("code", ["DS1-D1N-AAAAAAB", "DS1-D3N-AAAAAAB", "TF1-D1N-AAAAAAB"])
def test_nothing_to_recycle(code):
    g = Game.from_dict(position(code, {1: ["9C"]}, rest=[1, 2, 3, 4, 5, 6, 7]))
    assert_refused(g, "recycle", REASONS[R_NOTHING_TO_RECYCLE])
    assert_refused(g, "draw", STOCK_EMPTY)


@pytest.mark.parametrize("code,draws", [("DS1-D1V-AAAAAAB", 59), ("DS1-D3V-AAAAAAB", 20)])
def test_no_turn_over_in_vegas(code, draws):
    g = Game.from_code(code)
    for _ in range(draws):
        assert_refused(g, "recycle", STOCK_NOT_EMPTY)
        g.play("draw")
    d = g.to_dict()
    assert d["stock"] == [] and len(d["waste"]) == 59
    assert g.score == -104
    assert_refused(g, "recycle", VEGAS_ONE_PASS)
    assert_refused(g, "draw", STOCK_EMPTY)
    assert "recycle" not in g.legal_moves() and "draw" not in g.legal_moves()


def test_vegas_position_without_stock():
    g = Game.from_dict(position("DS1-D3V-AAAAAAB", {1: ["9C"]}, waste=["2H"], rest="waste"))
    assert_refused(g, "recycle", VEGAS_ONE_PASS)


@pytest.mark.parametrize(
    "code", ["DS1-D1N-AAAAAAB", "DS1-D3N-AAAAAJ2", "DS1-D1V-AAAAAAB", "TF1-D1N-AAAAAAB"]
)
def test_recycle_refused_while_stock_not_empty(code):
    g = Game.from_code(code)
    assert_refused(g, "recycle", STOCK_NOT_EMPTY)
    g.play("draw")
    assert_refused(g, "recycle", STOCK_NOT_EMPTY)
    # a position with one card left in the stock
    d = position(code, {1: ["9C"]}, stock=["KD"], waste=["2H"], rest="waste")
    g = Game.from_dict(d)
    assert_refused(g, "recycle", STOCK_NOT_EMPTY)
    g.play("draw")
    assert g.is_legal("recycle") == ("V" not in code.split("-")[1])
