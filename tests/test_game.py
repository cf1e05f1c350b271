"""The Game API (``solitaire_gym.Game``): game codes and ``Game.new``, move notation and action
ids, taps, undo, and the order of legal moves. Bad input is refused with the package's own error
(a :class:`SolitaireError`, a ``ValueError``) whose message names the faulty part and stays short
whatever the size of the input, and the game is left as it was."""

import copy

import numpy as np
import pytest
from refusing import MAX_MESSAGE, refused

from solitaire_gym import (
    Game,
    GameCodeError,
    IllegalMoveError,
    MoveSyntaxError,
    PositionError,
    SolitaireError,
    UndoError,
)
from solitaire_gym.errors import SHOWN_CHARS
from solitaire_gym.solver.batch import parse_deals

SH, DS, TF = "SH1-C4-AAAAAJ2", "DS1-D1N-AAAAAAB", "TF1-D1N-AAAAAAB"

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


@pytest.mark.parametrize(
    "text", ["SH1 - C4 - AAAAAJ2", " sh1-c4-aaaaaj2 ", "SH1-C4-AAA AAJ2", "SH1-\tC4-AAAAAJ2\n"]
)
def test_from_code_ignores_spaces_as_documented(text):
    assert "ignored" in Game.from_code.__doc__
    assert Game.from_code(text).code == SH


@pytest.mark.parametrize(
    "code", ["SH1-C4-AAAAAß", "SH1-C4-AAAAAJ２", "ＳH1-C4-AAAAAJ2", "SH1-C4-AAAAAJ\u0662"]
)
def test_codes_are_ascii(code):
    refused(GameCodeError, Game.from_code, code)


# ---- Game.new ------------------------------------------------------------------------------------

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


# ---- move strings and action ids -----------------------------------------------------------------

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


def test_move_with_5000_digits():
    g = Game.from_code(SH)
    before = g.to_dict()
    for move in ["t" + "1" * 5000 + ">t2", "t1:" + "2" * 5000 + ">t2", "c" + "9" * 5000 + ">f"]:
        refused(MoveSyntaxError, g.play, move)
        refused(MoveSyntaxError, g.explain, move)
        refused(MoveSyntaxError, g.tap, move)
    assert g.to_dict() == before


@pytest.mark.parametrize("move", ["t٣>t5", "t３>t5", "t1>t٥", "t1:２>t2", "ｔ1>t2", "draw\u0301"])
def test_moves_are_ascii(move):
    g = Game.from_code(SH)
    before = g.to_dict()
    refused(MoveSyntaxError, g.play, move)
    refused(MoveSyntaxError, g.explain, move)
    assert g.to_dict() == before


@pytest.mark.parametrize("pile", ["t٣", "t３", "c١"])
def test_taps_are_ascii(pile):
    refused(MoveSyntaxError, Game.from_code(SH).tap, pile)


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


@pytest.mark.parametrize(
    "call",
    [
        lambda big: Game.from_code(SH).play(big),
        lambda big: Game.from_code(big),
        lambda big: Game.from_code(SH).tap(big),
        lambda big: Game.new(big),
        lambda big: parse_deals(big),
        lambda big: Game.from_dict({**Game.from_code(SH).to_dict(), "format": big}),
        lambda big: Game.from_dict({**Game.from_code(SH).to_dict(), big: 1}),
    ],
)
def test_messages_do_not_echo_the_whole_input(call):
    big = "x" * 1_000_000
    with pytest.raises(SolitaireError) as e:
        call(big)
    assert len(str(e.value)) <= MAX_MESSAGE
    assert "x" * (SHOWN_CHARS + 1) not in str(e.value)


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


def test_undo_available_is_a_bool():
    g = Game.from_code(SH)
    assert g.undo_available is False and g.undo_count == 0
    g.play("t1>t7")
    assert g.undo_available is True and g.undo_count == 1


def test_undo_messages():
    g = Game.from_code(SH)
    with pytest.raises(UndoError, match="no move has been made"):
        g.undo()
    g.play("t1>t7")
    g.undo()
    with pytest.raises(UndoError) as err:
        g.undo()
    assert "every move made has been undone" in str(err.value)
    assert "keeps the last" not in str(err.value)
    # Only when the history has let go of actions does the message name its depth.
    small = Game.from_code("TF1-D1N-AAAAAAB", undo_depth=2)
    for _ in range(3):
        small.play("draw")
    small.undo()
    small.undo()
    with pytest.raises(UndoError, match="keeps the last 2 actions"):
        small.undo()
    restored = Game.from_dict(g.to_dict())
    with pytest.raises(UndoError, match="no move has been made"):
        restored.undo()


# ---- legal moves ---------------------------------------------------------------------------------


def test_legal_moves_natural_order():
    moves = Game.from_code(SH).legal_moves()
    assert "t10>c" in moves and "t1>c" in moves
    assert moves.index("t1>c") < moves.index("t2>c") < moves.index("t10>c")
    key = [
        tuple(int(p) if p.isdigit() else p for p in __import__("re").split(r"(\d+)", m))
        for m in moves
    ]
    assert key == sorted(key)


def test_legal_actions_docstring_and_type():
    doc = Game.legal_actions.__doc__
    assert doc and "action ids" in doc
    acts = Game.from_code(SH).legal_actions()
    assert acts.dtype == np.int32 and list(acts) == sorted(acts)
