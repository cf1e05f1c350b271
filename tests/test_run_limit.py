"""Seahaven Towers' run limit: the seed's table, every entry, on real Seahaven positions.

``max = (free cells empty + 1) × 2 ^ (empty columns)``, an empty target column not counted
(docs/rules.md, Seahaven Towers). Each entry is checked both ways: a run of exactly ``limit`` cards
moves, and a run of ``limit + 1`` is refused with the run-limit rule, wherever a same-suit run that
long can exist (onto an occupied column the longest is Q…A, 12 cards; into an empty column K…A, 13).
"""

import copy

import pytest

from solitaire_gym import Game, IllegalMoveError
from solitaire_gym.engine.rules import R_RUN_LIMIT, REASONS

RANKS = "A23456789TJQK"
DECK = [r + s for s in "SHDC" for r in RANKS]

# The seed's table, copied as printed (not computed from the formula):
# rows = empty free cells 0…4; columns = run onto an occupied column with 0, 1, 2 empty columns,
# then a King-led run into an empty column with 1, 2 empty columns in all.
SEED_TABLE = {
    0: (1, 2, 4, 1, 2),
    1: (2, 4, 8, 2, 4),
    2: (3, 6, 12, 3, 6),
    3: (4, 8, 16, 4, 8),
    4: (5, 10, 20, 5, 10),
}
# (target kind, empty columns in the whole position) for each of the five table columns
TABLE_COLUMNS = (
    ("occupied", 0),
    ("occupied", 1),
    ("occupied", 2),
    ("empty", 1),
    ("empty", 2),
)
ENTRIES = [
    (cells_empty, kind, empty_cols, SEED_TABLE[cells_empty][i])
    for cells_empty in range(5)
    for i, (kind, empty_cols) in enumerate(TABLE_COLUMNS)
]

SRC, DST = 1, 2  # source t1; occupied target t2; an empty target is always t10


def sh_position(columns, *, empty, cells_filled, n_cells=4):
    """A real Seahaven position: deal 314's dict with its cards rearranged.

    ``columns`` maps 1-based column numbers to their cards (bottom to top); columns in ``empty``
    stay empty; ``cells_filled`` cells get a card; every other card of the deck goes, round-robin,
    onto the remaining columns. All 52 cards appear exactly once.
    """
    d = Game.from_code(f"SH1-C{n_cells}-AAAAAJ2").to_dict()
    used = [c for col in columns.values() for c in col]
    rest = [c for c in DECK if c not in used]
    cells = rest[:cells_filled] + [None] * (n_cells - cells_filled)
    rest = rest[cells_filled:]
    tableau = [list(columns.get(i + 1, [])) for i in range(10)]
    fillers = [i for i in range(10) if i + 1 not in columns and i + 1 not in empty]
    for k, card in enumerate(rest):
        tableau[fillers[k % len(fillers)]].append(card)
    d["tableau"] = tableau
    d["cells"] = cells
    d["foundations"] = [None] * 4
    all_cards = [c for col in tableau for c in col] + [c for c in cells if c]
    assert sorted(all_cards) == sorted(DECK)
    return d


def run_position(n, kind, empty_cols, cells_empty, n_cells=4):
    """A position where t1 holds a same-suit run of exactly ``n`` spades on a base card, and the
    move of that whole run to its target, with ``empty_cols`` empty columns in all."""
    if kind == "occupied":
        assert 1 <= n <= 12
        run = [RANKS[r] + "S" for r in range(n - 1, -1, -1)]  # n♠ … A♠
        target = [RANKS[n] + "S"]  # (n+1)♠
        columns = {SRC: ["KH", *run], DST: target}
        empty = set(range(11 - empty_cols, 11))  # the last columns: t10, t9
        dst = DST
    else:
        assert 1 <= n <= 13 and empty_cols >= 1
        run = [RANKS[r] + "S" for r in range(12, 12 - n, -1)]  # K♠ … down n cards
        columns = {SRC: ["2H", *run]}
        empty = set(range(11 - empty_cols, 11))
        dst = 10
    d = sh_position(columns, empty=empty, cells_filled=n_cells - cells_empty, n_cells=n_cells)
    move = f"t{SRC}>t{dst}" if n == 1 else f"t{SRC}:{n}>t{dst}"
    return d, move, dst, run


def check_counts(g, cells_empty, empty_cols):
    d = g.to_dict()
    assert sum(c is None for c in d["cells"]) == cells_empty
    assert sum(len(col) == 0 for col in d["tableau"]) == empty_cols


def assert_moves(d, move, dst, run, cells_empty, empty_cols):
    g = Game.from_dict(d)
    check_counts(g, cells_empty, empty_cols)
    assert g.explain(move) is None
    assert move in g.legal_moves()
    before = g.to_dict()["tableau"][dst - 1]
    g.play(move)
    after = g.to_dict()
    assert after["tableau"][dst - 1] == before + run
    assert after["tableau"][SRC - 1] == d["tableau"][SRC - 1][: -len(run)]
    assert g.moves == 1
    assert g.score == 0


def assert_refused(d, move, n, limit, cells_empty, empty_cols):
    g = Game.from_dict(d)
    check_counts(g, cells_empty, empty_cols)
    expected = REASONS[R_RUN_LIMIT].format(n=n, aux=limit)
    assert expected == (
        f"a run of {n} cards is too long: with the free cells and empty columns there are now, "
        f"at most {limit} cards can move at once"
    )
    assert g.explain(move) == expected
    assert move not in g.legal_moves()
    before = copy.deepcopy(g.to_dict())
    with pytest.raises(IllegalMoveError) as err:
        g.play(move)
    assert str(err.value) == expected
    assert g.to_dict() == before
    assert g.moves == 0


def test_table_is_the_formula():
    # the seed's printed table agrees with its formula (a check on the copy above)
    for e, row in SEED_TABLE.items():
        assert row == ((e + 1), (e + 1) * 2, (e + 1) * 4, (e + 1), (e + 1) * 2)
    assert len(ENTRIES) == 25


@pytest.mark.parametrize(
    "cells_empty,kind,empty_cols,limit",
    ENTRIES,
    ids=[f"cells{e}-{k}-{c}empty-limit{lim}" for e, k, c, lim in ENTRIES],
)
def test_seed_table_entry(cells_empty, kind, empty_cols, limit):
    longest = 12 if kind == "occupied" else 13
    n = min(limit, longest)
    d, move, dst, run = run_position(n, kind, empty_cols, cells_empty)
    assert_moves(d, move, dst, run, cells_empty, empty_cols)
    if limit + 1 <= longest:
        d, move, _, _ = run_position(limit + 1, kind, empty_cols, cells_empty)
        assert_refused(d, move, limit + 1, limit, cells_empty, empty_cols)
    else:
        # limit 16 or 20: the longest run that can exist (Q♠…A♠ onto K♠) moves
        assert n == 12 and limit >= 12


@pytest.mark.parametrize("cells_empty", range(5))
def test_king_run_of_13_into_empty_column_when_allowed(cells_empty):
    # K♠…A♠ (13 cards) into an empty column needs a limit of 13: never reached with one or two
    # empty columns in all (at most 10), so it is always refused there …
    for empty_cols in (1, 2):
        limit = SEED_TABLE[cells_empty][2 + empty_cols]
        d, move, _, _ = run_position(13, "empty", empty_cols, cells_empty)
        assert_refused(d, move, 13, limit, cells_empty, empty_cols)
    # … and moves with 3 empty columns in all once the limit, (cells + 1) × 4, reaches 13
    d, move, dst, run = run_position(13, "empty", 3, cells_empty)
    if (cells_empty + 1) * 4 >= 13:
        assert_moves(d, move, dst, run, cells_empty, 3)
    else:
        assert_refused(d, move, 13, (cells_empty + 1) * 4, cells_empty, 3)


def test_the_seeds_example():
    # "1 free cell empty, 2 empty columns: a run of at most 8 cards may be picked up, but a
    # King-led run goes into one of the empty columns only if it holds at most 4 cards."
    d, move, dst, run = run_position(8, "occupied", 2, 1)
    assert_moves(d, move, dst, run, 1, 2)
    d, move, _, _ = run_position(9, "occupied", 2, 1)
    assert_refused(d, move, 9, 8, 1, 2)
    d, move, dst, run = run_position(4, "empty", 2, 1)
    assert_moves(d, move, dst, run, 1, 2)
    d, move, _, _ = run_position(5, "empty", 2, 1)
    assert_refused(d, move, 5, 4, 1, 2)


# Removed cells (C2, C1) are gone from the board and do not count in the run limit.
REMOVED_CELLS = [
    # (cells in play, cells empty, target kind, empty columns in all, limit)
    (2, 2, "occupied", 0, 3),
    (2, 1, "occupied", 0, 2),
    (2, 0, "occupied", 0, 1),
    (2, 2, "occupied", 1, 6),
    (2, 2, "occupied", 2, 12),
    (2, 1, "empty", 2, 4),
    (2, 2, "empty", 1, 3),
    (1, 1, "occupied", 0, 2),
    (1, 0, "occupied", 0, 1),
    (1, 1, "occupied", 1, 4),
    (1, 1, "occupied", 2, 8),
    (1, 0, "empty", 2, 2),
    (1, 1, "empty", 2, 4),
]


@pytest.mark.parametrize(
    "n_cells,cells_empty,kind,empty_cols,limit",
    REMOVED_CELLS,
    ids=[f"C{a}-{b}empty-{c}-{d}cols-limit{e}" for a, b, c, d, e in REMOVED_CELLS],
)
def test_removed_cells_do_not_count(n_cells, cells_empty, kind, empty_cols, limit):
    d, move, dst, run = run_position(limit, kind, empty_cols, cells_empty, n_cells)
    assert len(d["cells"]) == n_cells
    g = Game.from_dict(d)
    assert len(g.to_dict()["cells"]) == n_cells
    assert_moves(d, move, dst, run, cells_empty, empty_cols)
    if limit < 12:  # Q♠…A♠ onto K♠ is the longest run onto an occupied column
        d, move, _, _ = run_position(limit + 1, kind, empty_cols, cells_empty, n_cells)
        assert_refused(d, move, limit + 1, limit, cells_empty, empty_cols)


def test_source_column_emptied_by_the_move_is_not_counted():
    # t1 holds nothing but the run Q♠ J♠ T♠ 9♠, to go onto K♠ with 2 empty cells and no empty
    # column: limit 3. That t1 would be empty after the move does not raise the limit.
    d = sh_position(
        {1: ["QS", "JS", "TS", "9S"], 2: ["KS"]}, empty=set(), cells_filled=2, n_cells=4
    )
    g = Game.from_dict(d)
    expected = REASONS[R_RUN_LIMIT].format(n=4, aux=3)
    assert g.explain("t1:4>t2") == expected
    d["tableau"][0] = ["QS", "JS", "TS"]
    d["tableau"][2].append("9S")
    g = Game.from_dict(d)
    g.play("t1:3>t2")
    assert g.to_dict()["tableau"][1] == ["KS", "QS", "JS", "TS"]
    assert g.to_dict()["tableau"][0] == []
