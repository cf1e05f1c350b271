"""Positions as dicts (``Game.from_dict``, ``Game.to_dict``): a malformed or impossible position
is refused naming the faulty part, the dict given and the game it came from unchanged; the
counters stop at the end of their int32 range; the positions that play cannot reach but the
engine documents as accepted play soundly; and every position the package writes reads back."""

import copy

import pytest
from refusing import refused

from solitaire_gym import Game, PositionError

SH, DS, TF = "SH1-C4-AAAAAJ2", "DS1-D1N-AAAAAAB", "TF1-D1N-AAAAAAB"

# ---- malformed positions -------------------------------------------------------------------------


def _sh():
    return Game.from_code(SH).to_dict()


def _ds():
    return Game.from_code(DS).to_dict()


def _tf():
    return Game.from_code(TF).to_dict()


def _set(path, value):
    def f(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return f


def _move_to_foundation(src_col, card, pile):
    def f(d):
        d["tableau"][src_col].remove(card)
        d["foundations"][pile] = card

    return f


BAD_POSITIONS = [
    # (id, base, change, words the message must contain)
    ("missing card", _sh, lambda d: d["tableau"][0].pop(), ["6D", "missing"]),
    ("missing card DS", _ds, lambda d: d["stock"].pop(), ["7C", "missing"]),
    ("missing cell card", _sh, _set(["cells", 0], None), ["3C", "missing"]),
    ("duplicated card", _sh, lambda d: d["tableau"][0].append("3C"), ["3C", "duplicated"]),
    ("duplicated card DS", _ds, lambda d: d["stock"].append("TH"), ["TH", "duplicated", "3"]),
    ("foundation and column", _sh, _set(["foundations", 0], "AS"), ["AS", "duplicated"]),
    ("face down SH", _sh, _set(["tableau", 0, 0], "KD*"), ["t1", "KD*", "face down"]),
    ("face down TF", _tf, _set(["tableau", 1, 0], "9S*"), ["t2", "9S*", "face down"]),
    ("face down top DS", _ds, _set(["tableau", 1, 1], "9S*"), ["t2", "top card is face down"]),
    (
        "face down above face up",
        _ds,
        _set(["tableau", 2], ["JS", "5S*", "4H"]),
        ["t3", "5S*", "above a face-up card"],
    ),
    (
        "face-up cards not in sequence DS",
        _ds,
        _set(["tableau", 2], ["JS*", "5S", "4C"]),
        ["t3", "not in sequence"],
    ),
    ("foundation suit", _sh, _move_to_foundation(1, "AH", 0), ["f1", "'AH'"]),
    (
        "foundation suit DS",
        _ds,
        lambda d: d["stock"].remove("AS") or _set(["foundations", 2], "AS")(d),
        ["f3", "'AS'"],
    ),
    ("9 columns SH", _sh, lambda d: d["tableau"].pop(), ["'tableau'", "10 columns"]),
    ("10 columns DS", _ds, lambda d: d["tableau"].append([]), ["'tableau'", "9 columns"]),
    ("8 columns TF", _tf, lambda d: d["tableau"].append([]), ["'tableau'", "7 columns"]),
    ("column not a list", _tf, _set(["tableau", 0], "7H"), ["t1", "list"]),
    ("3 foundations", _sh, lambda d: d["foundations"].pop(), ["'foundations'", "4 entries"]),
    ("4 foundations DS", _ds, _set(["foundations"], [None] * 4), ["'foundations'", "8 entries"]),
    ("3 cells", _sh, lambda d: d["cells"].pop(), ["'cells'", "4 entries"]),
    ("unknown field", _sh, _set(["foo"], 1), ["unknown field", "'foo'"]),
    ("cells in DS", _ds, _set(["cells"], [None] * 4), ["unknown field", "'cells'"]),
    ("stock in SH", _sh, _set(["stock"], []), ["unknown field", "'stock'"]),
    ("missing field", _sh, lambda d: d.pop("score"), ["missing field", "'score'"]),
    ("missing code", _sh, lambda d: d.pop("code"), ["missing field", "'code'"]),
    ("bad code", _sh, _set(["code"], "SH1-C3-AAAAAJ2"), ["'code'", "'C3'"]),
    ("bad card text", _sh, _set(["tableau", 0, 0], "1D"), ["t1", "card 1", "'1D'"]),
    ("card 10D", _sh, _set(["tableau", 0, 2], "10D"), ["t1", "card 3", "'10D'"]),
    ("card not text", _sh, _set(["tableau", 0, 0], 5), ["t1", "card 1", "5"]),
    ("bad cell card", _sh, _set(["cells", 0], "3X"), ["c1", "'3X'"]),
    ("symbol card in stock", _tf, _set(["stock", 0], "Q♠"), ["stock", "card 1", "'Q♠'"]),
    (
        "face down in waste",
        _tf,
        lambda d: d["waste"].append(d["stock"].pop() + "*"),
        ["waste", "card 2", "*'"],
    ),
    ("bad foundation card", _sh, _set(["foundations", 0], "S"), ["f1", "'S'"]),
    ("negative score", _sh, _set(["score"], -5), ["'score'", "-5"]),
    ("negative moves", _sh, _set(["moves"], -1), ["'moves'", "-1"]),
    ("float score", _sh, _set(["score"], 1.0), ["'score'", "1.0"]),
    ("bool moves", _sh, _set(["moves"], True), ["'moves'", "True"]),
    ("format", _sh, _set(["format"], "x"), ["'format'", "'x'"]),
    ("version", _sh, _set(["version"], 2), ["'version'", "2"]),
]


@pytest.mark.parametrize("case", BAD_POSITIONS, ids=[c[0] for c in BAD_POSITIONS])
def test_bad_position(case):
    _, base, change, words = case
    g = Game.from_code(base()["code"])
    g.play(sorted(g.legal_moves())[0])
    source_before = copy.deepcopy(g.to_dict())
    d = copy.deepcopy(g.to_dict())
    change(d)
    given = copy.deepcopy(d)
    with pytest.raises(PositionError) as err:
        Game.from_dict(d)
    for word in words:
        assert word in str(err.value)
    assert d == given  # the dict given to from_dict is unchanged
    assert g.to_dict() == source_before  # and so is the game it came from
    assert g.moves == 1


@pytest.mark.parametrize("value", [None, [1], "SH1-C4-AAAAAJ2", 5])
def test_position_not_a_dict(value):
    with pytest.raises(PositionError) as err:
        Game.from_dict(value)
    assert type(value).__name__ in str(err.value)


def test_vegas_position_may_be_negative():
    d = Game.from_code("DS1-D1V-AAAAAAB").to_dict()
    assert Game.from_dict(d).score == -104
    d["code"] = "DS1-D1N-AAAAAAB"
    with pytest.raises(PositionError):
        Game.from_dict(d)


@pytest.mark.parametrize(
    "code", [SH, "SH1-C2-AAAAAJ2", "SH1-C1-AAAAAJ2", DS, "DS1-D3V-AAAAAAB", TF]
)
def test_good_position_round_trip(code):
    g = Game.from_code(code)
    for move in sorted(g.legal_moves())[:1]:
        g.play(move)
    d = g.to_dict()
    given = copy.deepcopy(d)
    h = Game.from_dict(d)
    assert h.to_dict() == given
    assert d == given
    assert h.legal_moves() == g.legal_moves()


# ---- counters do not wrap around -----------------------------------------------------------------


def test_move_counter_stops_at_int32_max():
    d = Game.from_code(SH).to_dict()
    d["moves"] = 2**31 - 1
    g = Game.from_dict(d)
    g.play(g.legal_moves()[0])
    assert g.moves == 2**31 - 1
    assert Game.from_dict(g.to_dict()).to_dict() == g.to_dict()  # the package reads its output


def test_score_stops_at_int32_max_and_undo_restores_it():
    d = _seahaven_48_found()  # four Kings on four Queens: t1>f … t4>f each score 10
    d["moves"] = 2**31 - 1
    d["score"] = 2147483645  # a multiple of 5, two below the end of the range
    g = Game.from_dict(d, undo_depth=5)
    g.play("t1>f")
    assert g.score == 2**31 - 1  # stops there: it wrapped to a negative number
    assert g.moves == 2**31 - 1
    again = Game.from_dict(g.to_dict())  # the package reads its own output
    assert again.to_dict() == g.to_dict()
    g.play("t2>f")
    assert g.score == 2**31 - 1
    g.undo()
    g.undo()
    assert g.score == 2147483645


def test_positions_refuse_out_of_range_counters():
    for field, value in [("moves", 2**31), ("moves", -1), ("score", 2**40), ("score", -(2**31))]:
        d = Game.from_code(SH).to_dict()
        d["moves"] = 10
        d[field] = value
        refused(PositionError, Game.from_dict, d)


# ---- positions that play cannot reach ------------------------------------------------------------


def _reflechi_all_in_stock():
    d = Game.from_code(TF).to_dict()
    cards = [c for col in d["tableau"] for c in col] + d["stock"]
    d["tableau"] = [[] for _ in d["tableau"]]
    d["stock"] = cards
    return d


def _double_18_down():
    d = Game.from_code(DS).to_dict()
    cards = [c.rstrip("*") for col in d["tableau"] for c in col] + d["stock"]
    d["tableau"] = [[c + "*" for c in cards[:18]] + [cards[18]]] + [[] for _ in range(8)]
    d["stock"] = cards[19:]
    return d


def _seahaven_48_found():
    d = Game.from_code(SH).to_dict()
    d["foundations"] = ["QS", "QH", "QD", "QC"]
    d["tableau"] = [["KS"], ["KH"], ["KD"], ["KC"]] + [[] for _ in range(6)]
    d["cells"] = [None] * 4
    return d


def _with(d, **changes):
    return {**d, **changes}


@pytest.mark.parametrize(
    "d,words",
    [
        (_with(Game.from_code(SH).to_dict(), version=True), ["version", "True"]),
        (_with(Game.from_code(SH).to_dict(), version=1.0), ["version", "1.0"]),
        (_with(Game.from_code("DS1-D1V-AAAAAAB").to_dict(), score=-105), ["score", "-105"]),
        (_with(Game.from_code("DS1-D1N-AAAAAAB").to_dict(), score=-5), ["score", "-5"]),
        (_with(Game.from_code(SH).to_dict(), score=2**31), ["score"]),
        (_with(Game.from_code(SH).to_dict(), moves=2**31), ["moves"]),
    ],
    ids=["version True", "version 1.0", "Vegas below -104", "negative Normal score",
         "score past int32", "moves past int32"],
)  # fmt: skip
def test_impossible_positions(d, words):
    given = copy.deepcopy(d)
    message = refused(PositionError, Game.from_dict, d)
    for w in words:
        assert w in message
    assert d == given


def test_documented_acceptance_counters():
    # engine/position.py: counters are set freely within their ranges (the scoring tables are
    # tested from arbitrary starting scores); play from such a position is sound.
    g = Game.from_dict(_with(_seahaven_48_found(), moves=0, score=7))
    g.play("t1>f")
    assert (g.score, g.moves) == (17, 1)


def test_documented_acceptance_piles_of_any_size():
    # engine/position.py: a column may hide, and the stock hold, more cards than a deal puts
    # there (hand-built positions bury the cards they do not place); play from them is sound.
    g = Game.from_dict(_double_18_down())
    g.play(g.legal_moves()[0])
    g = Game.from_dict(_reflechi_all_in_stock())
    assert g.legal_moves() == ["draw"]
    for _ in range(60):
        g.play("draw" if g.to_dict()["stock"] else "recycle")
    assert sum(len(p) for k in ("stock", "waste") for p in [g.to_dict()[k]]) == 52


def test_possible_positions_still_accepted():
    d = _with(_seahaven_48_found(), moves=48, score=480)
    assert Game.from_dict(d).score == 480
    g = Game.from_code("DS1-D3V-AAAAAAB")
    for _ in range(30):
        g.play(g.legal_moves()[-1])
    assert Game.from_dict(g.to_dict()).to_dict() == g.to_dict()
