"""Bad input: a clear error that names the faulty part, and nothing changed."""

import copy

import numpy as np
import pytest

from solitaire_gym import (
    Game,
    GameCodeError,
    IllegalMoveError,
    MoveSyntaxError,
    PositionError,
    SolitaireError,
    UndoError,
)

# ---- game codes ----------------------------------------------------------------------------------
# (code, text the message must contain: the faulty part)
BAD_CODES = [
    ("XX1-D1N-AAAAAAB", "'XX1'"),  # wrong game
    ("DS2-D1N-AAAAAAB", "'DS2'"),
    ("TF1-D1V-AAAAAAB", "'D1V'"),  # Vegas for Réfléchi
    ("TF1-D3V-AAAAAAB", "'D3V'"),
    ("SH1-C3-AAAAAAB", "'C3'"),  # 3 cells
    ("SH1-C0-AAAAAAB", "'C0'"),
    ("SH1-C5-AAAAAAB", "'C5'"),
    ("SH1-D1N-AAAAAAB", "'D1N'"),  # another game's options
    ("DS1-C4-AAAAAAB", "'C4'"),
    ("DS1-D2N-AAAAAAB", "'D2N'"),
    ("DS1-D1X-AAAAAAB", "'D1X'"),
    ("SH1--AAAAAJ2", "options ''"),
    ("SH1-C4-AAAAAA1", "'1'"),  # a character outside A–Z, 2–7
    ("SH1-C4-AAAAA8A", "'8'"),
    ("DS1-D1N-0AAAAAA", "'0'"),
    ("TF1-D1N-AAA!AAB", "'!'"),
    ("SH1-C4-AAAAAB", "'AAAAAB'"),  # wrong length
    ("SH1-C4-AAAAAAAB", "'AAAAAAAB'"),
    ("SH1-C4-", "''"),
    ("SH1-C4", "three parts"),  # missing parts
    ("SH1", "three parts"),
    ("SH1-C4-AAAAAJ2-X", "three parts"),
    ("SH1_C4_AAAAAJ2", "three parts"),
    ("", "empty"),
    ("   ", "empty"),
    ("SH1 - C4 - AAAAAJ 2 X", "'AAAAAJ2X'"),  # spaces are ignored, so the deal has 8 letters
]


@pytest.mark.parametrize("code,part", BAD_CODES, ids=[repr(c) for c, _ in BAD_CODES])
def test_bad_code(code, part):
    with pytest.raises(GameCodeError) as err:
        Game.from_code(code)
    assert part in str(err.value)


def test_bad_character_position_is_named():
    with pytest.raises(GameCodeError) as err:
        Game.from_code("SH1-C4-AAAAAA1")
    assert "position 7" in str(err.value)
    assert "'AAAAAA1'" in str(err.value)


@pytest.mark.parametrize("code", [None, 123, 1.5, b"SH1-C4-AAAAAJ2", ["SH1", "C4", "AAAAAJ2"]])
def test_code_not_a_string(code):
    with pytest.raises(GameCodeError) as err:
        Game.from_code(code)
    assert "string" in str(err.value)
    assert type(code).__name__ in str(err.value)


def test_errors_are_value_errors():
    assert issubclass(GameCodeError, SolitaireError)
    assert issubclass(SolitaireError, ValueError)
    for cls in (IllegalMoveError, MoveSyntaxError, PositionError, UndoError):
        assert issubclass(cls, SolitaireError)


@pytest.mark.parametrize(
    "text,code",
    [
        ("sh1-c4-aaaaaj2", "SH1-C4-AAAAAJ2"),
        ("  sh1-c4-aaaaaj2  ", "SH1-C4-AAAAAJ2"),
        (" ds1-d3v-aaaaaab", "DS1-D3V-AAAAAAB"),
        ("Tf1-d1N-AaAaAaB ", "TF1-D1N-AAAAAAB"),
        ("\tsh1-c1-7777777\n", "SH1-C1-7777777"),
        ("SH1 - C4 - AAAAAJ2", "SH1-C4-AAAAAJ2"),  # spaces anywhere are ignored
        ("ds1-d1n-aaa aaab", "DS1-D1N-AAAAAAB"),
    ],
)
def test_code_any_case_spaces_ignored(text, code):
    g = Game.from_code(text)
    assert g.code == code
    assert g.to_dict() == Game.from_code(code).to_dict()


# ---- Game.new --------------------------------------------------------------------------------
BAD_NEW = [
    (dict(game="poker"), "'poker'"),
    (dict(game=""), "''"),
    (dict(game=None), "None"),
    (dict(game=5), "5"),
    (dict(game="seahaven", cells=3), "3"),
    (dict(game="seahaven", cells=0), "0"),
    (dict(game="seahaven", cells="4"), "'4'"),
    (dict(game="double", draw=2), "2"),
    (dict(game="reflechi", draw=0), "0"),
    (dict(game="double", draw="3"), "'3'"),
    (dict(game="double", scoring="texas"), "'texas'"),
    (dict(game="reflechi", scoring="vegas"), "Vegas"),
    (dict(game="seahaven", deal=-1), "-1"),
    (dict(game="seahaven", deal=2**35), str(2**35)),
    (dict(game="double", deal="7"), "'7'"),
    (dict(game="double", deal=1.5), "1.5"),
    (dict(game="double", deal=True), "True"),
]


@pytest.mark.parametrize("kw,part", BAD_NEW, ids=[str(kw) for kw, _ in BAD_NEW])
def test_new_bad_names_and_options(kw, part):
    kw = dict(kw)
    with pytest.raises(GameCodeError) as err:
        Game.new(kw.pop("game"), **kw)
    assert part in str(err.value)


@pytest.mark.parametrize(
    "kw",
    [
        dict(game="seahaven", cells=True),
        dict(game="seahaven", cells=4.0),
        dict(game="double", draw=True),
        dict(game="double", draw=3.0),
        dict(game="reflechi", draw=1.0),
    ],
    ids=str,
)
def test_new_refuses_bool_and_float_options(kw):
    # Like deal=True and deal=1.5 (refused above), a bool or float count is not an option:
    # accepting it gives a game whose code ("SH1-CTrue-…", "DS1-D3.0N-…") is no valid code.
    kw = dict(kw)
    try:
        g = Game.new(kw.pop("game"), **kw)
    except GameCodeError:
        return
    pytest.fail(f"Game.new accepted {kw}: the game's code is {g.code!r}")


def test_new_refuses_vegas_for_seahaven():
    # Seahaven Towers offers no Vegas scoring (as Réfléchi, which is refused above); asking for
    # it must not silently give a Normal game.
    try:
        g = Game.new("seahaven", scoring="vegas")
    except GameCodeError:
        return
    pytest.fail(f"Game.new accepted Vegas scoring for Seahaven Towers: {g.code!r}, {g.score_text}")


def test_new_names():
    assert Game.new("Seahaven Towers", cells=2, deal=314).code == "SH1-C2-AAAAAJ2"
    assert Game.new("double_solitaire", draw=3, scoring="Vegas", deal=1).code == "DS1-D3V-AAAAAAB"
    assert Game.new("solitaire-reflechi", draw=3, deal=1).code == "TF1-D3N-AAAAAAB"


# ---- move strings --------------------------------------------------------------------------------
SH, DS, TF = "SH1-C4-AAAAAJ2", "DS1-D1N-AAAAAAB", "TF1-D1N-AAAAAAB"

# (code, move, text the message must contain)
BAD_MOVES = [
    (SH, "t11>t1", "'t11>t1'"),  # a column the game lacks
    (SH, "t0>t1", "'t0>t1'"),
    (SH, "t01>t2", "'t01>t2'"),
    (DS, "t10>t1", "t1 … t9"),
    (TF, "t1>t8", "t1 … t7"),
    (SH, "x>y", "'x>y'"),  # not notation
    (SH, "t1 > t2", "'t1 > t2'"),
    (SH, "t>t1", "'t>t1'"),
    (SH, "t1:1>t2", "':1'"),  # :1 is never written
    (SH, "t3>f2", "'>f'"),  # the foundation is never numbered
    (DS, "w>f3", "'>f'"),
    (SH, "f1>c2", "'>c'"),
    (SH, "w>t1", "no waste"),  # Seahaven has no waste or stock
    (SH, "w>f", "no waste"),
    (SH, "draw", "no stock"),
    (SH, "recycle", "no stock"),
    (SH, "c5>t1", "c1 … c4"),
    (SH, "f5>t1", "f1 … f4"),
    (DS, "t1>c", "no free cells"),  # Double Solitaire and Réfléchi have no cells
    (DS, "c1>t1", "no free cells"),
    (TF, "f1>c", "no free cells"),
    (DS, "f9>t1", "f1 … f8"),
    (DS, "w1>t1", "'w'"),
    (SH, "", "''"),
    (DS, "", "''"),
    # blanks that are not ASCII (str.strip() would drop them) and ASCII separators
    (SH, "\u3000t1>t7", "not a move"),
    (SH, "t1>t7\u00a0", "not a move"),
    (SH, "\x1ct1>t7", "not a move"),
    (DS, "draw\u2003", "not a move"),
]


def assert_unchanged(g, before, moves):
    assert g.to_dict() == before
    assert g.moves == moves


@pytest.mark.parametrize(
    "code,move,part", BAD_MOVES, ids=[f"{c[:3]}:{m!r}" for c, m, _ in BAD_MOVES]
)
def test_bad_move_string(code, move, part):
    g = Game.from_code(code)
    g.play(sorted(g.legal_moves())[-1])
    before, moves = copy.deepcopy(g.to_dict()), g.moves
    with pytest.raises(MoveSyntaxError) as err:
        g.play(move)
    assert part in str(err.value)
    with pytest.raises(MoveSyntaxError):
        g.explain(move)
    with pytest.raises(MoveSyntaxError):
        g.action(move)
    assert_unchanged(g, before, moves)


@pytest.mark.parametrize(
    "code,move,part",
    [
        (SH, None, "NoneType"),
        (DS, None, "NoneType"),
        (SH, True, "bool"),
        (SH, 3.5, "float"),
        (SH, 5000, "5000"),  # action ids run 0 … 1277
        (SH, 1278, "1278"),
        (SH, -1, "-1"),
        (DS, 1029, "1029"),  # 0 … 1028
        (TF, 591, "591"),  # 0 … 590
        (SH, np.timedelta64(3), "timedelta64"),  # numpy files it under its integers
    ],
    ids=repr,
)
def test_bad_move_value(code, move, part):
    g = Game.from_code(code)
    before, moves = copy.deepcopy(g.to_dict()), g.moves
    with pytest.raises(MoveSyntaxError) as err:
        g.play(move)
    assert part in str(err.value)
    assert_unchanged(g, before, moves)


@pytest.mark.parametrize(
    "code,move,message",
    [
        (SH, "t3:2>f", "a foundation takes one card at a time"),
        (SH, "t3:2>c", "a free cell holds one card at a time"),
        (DS, "t3:2>f", "a foundation takes one card at a time"),
        (SH, "t1>t1", "a card cannot move onto its own column"),
        (TF, "t2:2>t2", "a card cannot move onto its own column"),
        (SH, "t1:14>t2", "no run is longer than 13 cards (King down to Ace)"),
        (DS, "f1>f", "a card cannot move from one foundation to another"),
        (
            SH,
            "c1>c",
            "a card in a free cell moves to a column or a foundation, not to another cell",
        ),
        ("SH1-C2-AAAAAJ2", "c3>t1", "c3 is not in play: this game has fewer free cells"),
        ("SH1-C1-AAAAAJ2", "c2>f", "c2 is not in play: this game has fewer free cells"),
        (DS, "f1>t1", "f1 is empty"),
        (TF, "w>f", "the waste is empty"),
    ],
)
def test_rule_refusals_of_well_formed_moves(code, move, message):
    g = Game.from_code(code)
    before, moves = copy.deepcopy(g.to_dict()), g.moves
    assert g.explain(move) == message
    with pytest.raises(IllegalMoveError) as err:
        g.play(move)
    assert str(err.value) == message
    assert_unchanged(g, before, moves)


# ---- undo ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", [SH, DS, TF])
def test_undo_with_nothing_to_undo(code):
    g = Game.from_code(code)
    before = copy.deepcopy(g.to_dict())
    with pytest.raises(UndoError) as err:
        g.undo()
    assert "nothing to undo" in str(err.value)
    assert_unchanged(g, before, 0)
    g.play(sorted(g.legal_moves())[0])
    g.undo()
    with pytest.raises(UndoError):
        g.undo()
    assert_unchanged(g, {**before, "moves": 1}, 1)


def test_undo_after_from_dict_has_no_history():
    d = Game.from_code(DS).to_dict()
    d["moves"] = 12
    g = Game.from_dict(d)
    with pytest.raises(UndoError):
        g.undo()
    assert g.to_dict() == d


def test_undo_depth_is_limited():
    g = Game.from_code(DS, undo_depth=2)
    for _ in range(3):
        g.play("draw")
    g.undo()
    g.undo()
    before = copy.deepcopy(g.to_dict())
    with pytest.raises(UndoError) as err:
        g.undo()
    assert "2" in str(err.value)
    assert_unchanged(g, before, 3)
    assert len(before["waste"]) == 1


def test_undo_off():
    g = Game.from_code(SH, undo_depth=0)
    g.play(sorted(g.legal_moves())[0])
    with pytest.raises(UndoError) as err:
        g.undo()
    assert "off" in str(err.value)
    assert g.moves == 1


def test_app_undo_depths():
    # Double Solitaire keeps the last 200 actions, the other two the last 100
    for code, depth in [(DS, 200), (TF, 100)]:
        g = Game.from_code(code)
        for _ in range(depth + 5):  # draws and turn-overs
            g.play("draw" if g.to_dict()["stock"] else "recycle")
        assert g.undo_count == depth
        for _ in range(depth):
            g.undo()
        with pytest.raises(UndoError):
            g.undo()
        assert g.moves == depth + 5


# ---- positions -----------------------------------------------------------------------------------
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


def test_taps_and_env_notation_refuse_blanks_that_are_not_ascii():
    """Taps and the envs' "undo" read the notation as moves do (``notation_text``): a blank
    that is not ASCII is refused, not stripped."""
    import gymnasium as gym

    g = Game.from_code(SH)
    assert g.tap(" t1 ") == g.tap("t1")  # ASCII blanks around it are fine
    for pile in ("\u00a0t1", "t1\u3000", "\x1ct1"):
        with pytest.raises(MoveSyntaxError):
            g.tap(pile)
    env = gym.make("solitaire_gym/SeahavenTowers-v0", undo=True).unwrapped
    assert env.move_to_action(" undo ") == env.move_to_action("undo")
    for text in ("\u00a0undo", "undo\u2003"):
        with pytest.raises(MoveSyntaxError):
            env.move_to_action(text)


def test_timedelta_is_not_an_integer():
    """numpy files timedelta64 under its integers; the package does not take it for one."""
    import gymnasium as gym

    from solitaire_gym import Variant
    from solitaire_gym.engine.batch import int_array
    from solitaire_gym.errors import ArgumentError

    venv = gym.make_vec("solitaire_gym/SeahavenTowers-v0", num_envs=3)
    venv.reset(seed=0)
    with pytest.raises(ArgumentError):
        venv.step(np.zeros(3, "m8[s]"))
    with pytest.raises(ArgumentError):
        int_array(np.array([1, 2], "m8[s]"), "deals")
    env = gym.make("solitaire_gym/SeahavenTowers-v0")
    env.reset(seed=0)
    with pytest.raises(ArgumentError):
        env.step(np.timedelta64(3))
    with pytest.raises(GameCodeError):
        Variant(True)
