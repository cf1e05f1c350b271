"""The scoring tables of the three apps, line by line, and the totals the seeds predict.

Each line is a small position built with ``Game.from_dict``; the move is played and the score's
change checked, then undone (the score comes back exactly, the move counter does not go down).
"""

import copy

import pytest
from positions import position as base_position

from solitaire_gym import Game, IllegalMoveError
from solitaire_gym.engine.rules import R_WON, REASONS

DS_N, DS_V, TF, SH = "DS1-D1N-AAAAAAB", "DS1-D1V-AAAAAAB", "TF1-D1N-AAAAAAB", "SH1-C4-AAAAAJ2"


def position(code, tableau=None, *, score=0, moves=0, **kwargs):
    """``positions.position`` with the score and move counter at 0 unless given."""
    return base_position(code, tableau, score=score, moves=moves, **kwargs)


def play_and_check(d, move, delta):
    """Play ``move`` in position ``d``: the score changes by ``delta``; undo restores it all."""
    g = Game.from_dict(d)
    before = copy.deepcopy(g.to_dict())
    assert g.score == d["score"]
    g.play(move)
    assert g.score == d["score"] + delta, move
    assert g.moves == d["moves"] + 1
    after = g.to_dict()
    g.undo()
    assert g.score == d["score"]
    assert g.moves == d["moves"] + 1  # the counter never goes down
    assert g.to_dict() == {**before, "moves": d["moves"] + 1}
    return after


# ---- Double Solitaire, Normal and Vegas ---------------------------------------------------------
# (id, position keywords, move, Normal points, Vegas dollars)
DS_LINES = [
    ("column-to-foundation", dict(tableau={1: ["AS"], 2: ["9C"]}), "t1>f", 10, 5),
    ("waste-to-foundation", dict(tableau={2: ["9C"]}, waste=["5D", "AH"]), "w>f", 10, 5),
    ("waste-to-column", dict(tableau={2: ["8S"]}, waste=["7H"]), "w>t2", 5, 0),
    ("column-to-column", dict(tableau={6: ["9C", "8H"], 7: ["9S"]}), "t6>t7", 0, 0),
    ("column-to-column-emptying", dict(tableau={6: ["8H"], 7: ["9S"]}), "t6>t7", 0, 0),
    ("run-to-column", dict(tableau={6: ["TD", "9C", "8H"], 7: ["JS"]}), "t6:3>t7", 0, 0),
    ("king-to-empty-column", dict(tableau={6: ["KS"], 7: ["9S"]}), "t6>t1", 0, 0),
    ("king-to-empty-column-flip", dict(tableau={6: ["5H*", "KS"]}), "t6>t1", 5, 0),
    ("flip-by-column-move", dict(tableau={3: ["3D*", "9H"], 4: ["TS"]}), "t3>t4", 5, 0),
    ("flip-by-run-move", dict(tableau={3: ["3D*", "9H", "8S"], 4: ["TC"]}), "t3:2>t4", 5, 0),
    ("flip-by-foundation-move", dict(tableau={5: ["4C*", "AD"]}), "t5>f", 15, 5),
    (
        "flip-by-second-foundation-move",
        dict(tableau={5: ["KH*", "QC*", "3S"]}, foundations=["2S", None] + [None] * 6),
        "t5>f",
        15,
        5,
    ),
    (
        "take-back-from-foundation",
        dict(tableau={8: ["4H"]}, foundations=["3S", None] + [None] * 6),
        "f1>t8",
        0,
        0,
    ),
    ("draw", dict(tableau={1: ["9C"]}, stock=["2H", "3H"]), "draw", 0, 0),
]


@pytest.mark.parametrize("case", DS_LINES, ids=[c[0] for c in DS_LINES])
def test_double_solitaire_normal(case):
    _, kw, move, normal, _ = case
    after = play_and_check(position(DS_N, **kw, score=100, moves=7), move, normal)
    assert after["score"] == 100 + normal


@pytest.mark.parametrize("case", DS_LINES, ids=[c[0] for c in DS_LINES])
def test_double_solitaire_vegas(case):
    _, kw, move, _, vegas = case
    after = play_and_check(position(DS_V, **kw, score=-54, moves=7), move, vegas)
    assert after["score"] == -54 + vegas


def test_flip_turns_the_card_face_up():
    g = Game.from_dict(position(DS_N, {3: ["3D*", "9H"], 4: ["TS"]}, score=0))
    g.play("t3>t4")
    assert g.to_dict()["tableau"][2] == ["3D"]
    assert g.to_dict()["tableau"][3] == ["TS", "9H"]
    assert g.score == 5
    g.undo()
    assert g.to_dict()["tableau"][2] == ["3D*", "9H"]
    assert g.score == 0


def test_double_solitaire_recycle_costs_100():
    d = position(DS_N, {1: ["9C"]}, waste=["2H", "3H"], rest="waste", score=250)
    assert d["stock"] == []
    after = play_and_check(d, "recycle", -100)
    assert after["waste"] == [] and len(after["stock"]) == len(d["waste"])


@pytest.mark.parametrize("code", [DS_N, "DS1-D3N-AAAAAAB", TF, "TF1-D3N-AAAAAAB"])
@pytest.mark.parametrize("start,end", [(30, 0), (99, 0), (100, 0), (101, 1), (0, 0)])
def test_recycle_floor_at_zero(code, start, end):
    tab = {1: ["9C"]}
    d = position(code, tab, waste=["2H", "3H"], rest="waste", score=start, moves=3)
    g = Game.from_dict(d)
    g.play("recycle")
    assert g.score == end
    assert g.moves == 4
    g.undo()
    assert g.score == start  # undo restores the earlier score exactly, not end + 100
    assert g.moves == 4
    assert g.to_dict() == {**d, "moves": 4}


def test_double_solitaire_run_of_undos():
    # several scoring actions, then undone one by one: every earlier score comes back exactly
    d = position(
        DS_N,
        {1: ["AS"], 2: ["5C*", "8S"], 3: ["9D"], 4: ["KD*", "2S"]},
        waste=["7H"],
        rest="stock",
        score=20,
    )
    g = Game.from_dict(d)
    scores = [g.score]
    for move in ["t1>f", "w>t2", "t2:2>t3", "t4>f", "draw"]:
        g.play(move)
        scores.append(g.score)
    assert scores == [20, 30, 35, 40, 55, 55]
    assert g.moves == 5
    for expected in reversed(scores[:-1]):
        g.undo()
        assert g.score == expected
        assert g.moves == 5
    assert g.to_dict() == {**d, "moves": 5}


# ---- Vegas: start, display, no floor -------------------------------------------------------------
@pytest.mark.parametrize("code", ["DS1-D1V-AAAAAAB", "DS1-D3V-AAAAAJ2"])
def test_vegas_starts_at_minus_104(code):
    g = Game.from_code(code)
    assert g.score == -104
    assert g.score_text == "-$104"
    assert g.to_dict()["score"] == -104


def test_vegas_new_game_and_normal_start():
    assert Game.new("double", scoring="vegas", deal=5).score_text == "-$104"
    assert Game.new("double", scoring="vegas", draw=3).score == -104
    assert Game.new("double", deal=5).score == 0
    assert Game.from_code("TF1-D1N-AAAAAAB").score == 0
    assert Game.from_code("SH1-C4-AAAAAJ2").score == 0


def test_vegas_score_text():
    for score, text in [(-104, "-$104"), (-4, "-$4"), (0, "$0"), (1, "$1"), (416, "$416")]:
        g = Game.from_dict(position(DS_V, {1: ["9C"]}, score=score))
        assert g.score_text == text
    g = Game.from_dict(position(DS_N, {1: ["9C"]}, score=416))
    assert g.score_text == "416"


def test_vegas_no_floor_and_the_21st_card():
    # 20 cards on the foundations: -104 + 20 × 5 = -4 $; the 21st card makes it positive
    founds = ["TS", "TS"] + [None] * 6
    g = Game.from_dict(position(DS_V, {1: ["JS"], 2: ["9C"]}, foundations=founds, score=-4))
    assert g.score_text == "-$4"
    g.play("t1>f")
    assert g.score == 1
    assert g.score_text == "$1"
    g.undo()
    assert g.score == -4
    # a fresh Vegas game: a move worth 0 $ leaves the score negative, below the Normal floor
    g = Game.from_code("DS1-D1V-AAAAAAB")
    g.play("draw")
    assert g.score == -104


def test_vegas_real_deal_first_foundation_card():
    # DS1-D1V-AAAAAAB: draw until an ace is on the waste, then play it: -104 + 5 = -99 $
    g = Game.from_code("DS1-D1V-AAAAAAB")
    while g.to_dict()["waste"][-1:] not in (["AS"], ["AH"], ["AD"], ["AC"]):
        g.play("draw")
        assert g.score == -104
    n = g.moves
    g.play("w>f")
    assert g.score == -99
    assert g.score_text == "-$99"
    g.undo()
    assert g.score_text == "-$104"
    assert g.moves == n + 1


# ---- Solitaire Réfléchi --------------------------------------------------------------------------
TF_LINES = [
    ("column-to-foundation", dict(tableau={1: ["AS"], 2: ["9C"]}), "t1>f", 10),
    ("waste-to-foundation", dict(tableau={2: ["9C"]}, waste=["5D", "AH"]), "w>f", 10),
    ("waste-to-column", dict(tableau={2: ["8S"]}, waste=["7H"]), "w>t2", 5),
    ("column-to-column", dict(tableau={6: ["2C", "8H"], 7: ["9S"]}), "t6>t7", 0),
    ("group-to-column", dict(tableau={6: ["2C", "9C", "8H"], 7: ["TD"]}), "t6:2>t7", 0),
    ("king-to-empty-column", dict(tableau={6: ["QD", "KS"], 7: ["9S"]}), "t6>t1", 0),
    (
        "take-back-from-foundation",
        dict(tableau={7: ["4H"]}, foundations=["3S", None, None, None]),
        "f1>t7",
        0,
    ),
    ("draw", dict(tableau={1: ["9C"]}, stock=["2H", "3H"]), "draw", 0),
    ("recycle", dict(tableau={1: ["9C"]}, waste=["2H"], rest="waste"), "recycle", -100),
]


@pytest.mark.parametrize("case", TF_LINES, ids=[c[0] for c in TF_LINES])
@pytest.mark.parametrize("code", [TF, "TF1-D3N-AAAAAAB"])
def test_reflechi(case, code):
    _, kw, move, delta = case
    after = play_and_check(position(code, **kw, score=150, moves=2), move, delta)
    assert after["score"] == 150 + delta


# ---- Seahaven Towers -----------------------------------------------------------------------------
SH_COLS = [3, 4, 5, 8, 9, 10]  # where the other cards go
SH_LINES = [
    ("column-to-foundation", dict(tableau={1: ["AS"]}), "t1>f", 10),
    ("cell-to-foundation", dict(tableau={1: ["9C"]}, cells=[None, "AH", None, None]), "c2>f", 10),
    ("cell-to-column", dict(tableau={1: ["9C"]}, cells=["8C", None, None, None]), "c1>t1", 5),
    (
        "king-cell-to-empty-column",
        dict(tableau={1: []}, cells=["KC", None, None, None]),
        "c1>t1",
        5,
    ),
    ("column-to-cell", dict(tableau={1: ["9C"]}), "t1>c", 0),
    ("column-to-column", dict(tableau={1: ["8C"], 2: ["9C"]}), "t1>t2", 0),
    ("run-to-column", dict(tableau={1: ["8C", "7C", "6C"], 2: ["9C"]}), "t1:3>t2", 0),
    (
        "take-back-to-column",
        dict(tableau={1: ["9C"]}, foundations=[None, None, None, "8C"]),
        "f4>t1",
        0,
    ),
    (
        "take-back-to-cell",
        dict(tableau={1: ["9C"]}, foundations=["2S", None, None, None]),
        "f1>c",
        0,
    ),
]


@pytest.mark.parametrize("case", SH_LINES, ids=[c[0] for c in SH_LINES])
def test_seahaven(case):
    _, kw, move, delta = case
    after = play_and_check(position(SH, **kw, rest=SH_COLS, score=40, moves=9), move, delta)
    assert after["score"] == 40 + delta


def test_seahaven_take_back_to_cell_goes_to_the_lowest_empty_cell():
    d = position(
        SH,
        {1: ["9C"]},
        foundations=["2S", None, None, None],
        cells=["5H", None, "6H", None],
        rest=SH_COLS,
    )
    g = Game.from_dict(d)
    g.play("f1>c")
    assert g.to_dict()["cells"] == ["5H", "2S", "6H", None]
    assert g.to_dict()["foundations"][0] == "AS"


def test_seahaven_c2_scores_like_c4():
    d = position("SH1-C2-AAAAAJ2", {1: ["9C"]}, cells=["8C", None], rest=SH_COLS, score=0)
    play_and_check(d, "c1>t1", 5)
    d = position("SH1-C1-AAAAAJ2", {1: ["9C"]}, cells=["AS"], rest=SH_COLS, score=0)
    play_and_check(d, "c1>f", 10)


# ---- totals at the end of a game -----------------------------------------------------------------
def assert_won(g):
    assert g.won
    assert not g.stuck
    assert g.legal_moves() == []
    assert len(g.legal_actions()) == 0
    assert g.explain("t1>t2") == REASONS[R_WON]
    with pytest.raises(IllegalMoveError):
        g.play("t1>t2")
    assert g.tap("t1") is None
    assert g.double_tap("t1") is None


@pytest.mark.parametrize("code", [DS_N, "DS1-D3N-AAAAAAB"])
@pytest.mark.parametrize("waste_to_column,turn_overs", [(0, 0), (7, 2), (31, 5)])
def test_double_solitaire_normal_total(code, waste_to_column, turn_overs):
    # 1220 = 104 × 10 + 36 × 5; plus 5 per waste-to-column card, minus 100 per turn-over.
    predicted = 1220 + 5 * waste_to_column - 100 * turn_overs
    # Left to play: K♦ onto the foundation, which turns K♣ over (+10 +5), then K♣ (+10).
    founds = ["KS", "KS", "KH", "KH", "KD", "QD", "KC", "QC"]
    d = position(code, {1: ["KC*", "KD"]}, foundations=founds, score=predicted - 25, moves=400)
    assert d["stock"] == [] and d["waste"] == []
    g = Game.from_dict(d)
    assert not g.won
    assert "t1>f" in g.legal_moves()
    g.play("t1>f")
    assert g.score == predicted - 10
    assert g.to_dict()["tableau"][0] == ["KC"]
    assert g.to_dict()["foundations"][5] == "KD"
    g.play("t1>f")
    assert g.score == predicted
    assert g.score_text == str(predicted)
    assert g.moves == 402
    assert g.to_dict()["foundations"] == ["KS", "KS", "KH", "KH", "KD", "KD", "KC", "KC"]
    assert_won(g)
    g.undo()
    assert not g.won
    assert g.score == predicted - 10
    assert "t1>f" in g.legal_moves()


def test_double_solitaire_normal_total_last_card_from_waste():
    # the last card comes from the waste: +10 lands on 1220 + 5 × 3
    founds = ["KS", "KS", "KH", "KH", "KD", "KD", "KC", "QC"]
    d = position(DS_N, foundations=founds, waste=["KC"], score=1225, moves=300)
    g = Game.from_dict(d)
    g.play("w>f")
    assert g.score == 1235
    assert_won(g)


@pytest.mark.parametrize("code", [DS_V, "DS1-D3V-AAAAAAB"])
def test_double_solitaire_vegas_total(code):
    founds = ["KS", "KS", "KH", "KH", "KD", "KD", "KC", "QC"]
    d = position(code, {4: ["KC"]}, foundations=founds, score=411, moves=250)
    g = Game.from_dict(d)
    assert g.score_text == "$411"
    g.play("t4>f")
    assert g.score == 416
    assert g.score_text == "$416"
    assert_won(g)
    # 104 cards at 5 $ each from -104 $: the same +416 $
    assert -104 + 104 * 5 == 416


@pytest.mark.parametrize("code", [TF, "TF1-D3N-AAAAAAB"])
@pytest.mark.parametrize("waste_to_column,turn_overs", [(0, 0), (4, 1), (12, 3)])
def test_reflechi_total(code, waste_to_column, turn_overs):
    predicted = 520 + 5 * waste_to_column - 100 * turn_overs
    founds = ["KS", "KH", "QD", "QC"]
    d = position(code, {2: ["KC"]}, foundations=founds, waste=["KD"], score=predicted - 20)
    g = Game.from_dict(d)
    g.play("w>f")
    assert g.score == predicted - 10
    assert not g.won
    g.play("t2>f")
    assert g.score == predicted
    assert g.to_dict()["foundations"] == ["KS", "KH", "KD", "KC"]
    assert_won(g)


@pytest.mark.parametrize("cell_to_column", [0, 6])
def test_seahaven_total(cell_to_column):
    predicted = 520 + 5 * cell_to_column
    founds = ["KS", "KH", "QD", "QC"]
    d = position(
        SH, {7: ["KC"]}, foundations=founds, cells=[None, None, "KD", None], score=predicted - 20
    )
    g = Game.from_dict(d)
    g.play("c3>f")
    g.play("t7>f")
    assert g.score == predicted
    assert_won(g)
