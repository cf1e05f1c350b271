"""Property tests: invariants of random legal play in every game and option (hypothesis).

Each example deals a random deal of one variant (or builds a random position: end games, empty
columns, runs, wins) and plays up to 150 random legal moves; after every move it checks that cards
are conserved, that no column shows a face-down top card, that undo restores the exact position and
score (the counter stays), that refused moves change nothing, that move generation finds exactly
the actions ``rules.check_move`` accepts (every action id tried one by one), that ``legal_moves()``
holds no duplicate, and that positions survive ``to_dict``/``from_dict``. An undo history of depth
K allows exactly K undos. The batch-parity test checks that :class:`Batch` gives, step for step,
what single games give.

``PROPERTY_EXAMPLES=500 pytest tests/test_properties.py`` runs a longer hunt (default 10 examples
per variant and property).
"""

from __future__ import annotations

import copy
import os
import re
from collections import Counter
from itertools import pairwise

import numba as nb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solitaire_gym import Game, IllegalMoveError, UndoError, parse_code
from solitaire_gym.engine import movegen, rules
from solitaire_gym.engine.batch import Batch
from solitaire_gym.engine.cards import N_FACES, parse_card
from solitaire_gym.engine.cards import RANKS as RANK_NAMES
from solitaire_gym.engine.state import FIELDS, State
from solitaire_gym.engine.variants import DOUBLE, L_N, MAX_DEAL, SEAHAVEN

# Every game with every option it offers.
TAGS = [
    "DS1-D1N",
    "DS1-D1V",
    "DS1-D3N",
    "DS1-D3V",
    "TF1-D1N",
    "TF1-D3N",
    "SH1-C4",
    "SH1-C2",
    "SH1-C1",
]
VARIANTS = {tag: parse_code(f"{tag}-AAAAAAA")[0] for tag in TAGS}

MAX_MOVES = 150
# What undo restores: every field but the undo history itself and the player's knowledge of hidden
# cards (``tab_unknown``, ``stock_unknown``), which only grows. The counter is compared apart.
KNOWLEDGE_FIELDS = [f for f in FIELDS if f.endswith("_unknown")]
POSITION_FIELDS = [f for f in FIELDS if not f.startswith("hist") and f not in KNOWLEDGE_FIELDS]

# No example database: a run leaves no examples in the tree (hypothesis still keeps its own
# cache in the git-ignored .hypothesis/).
PROPERTY = settings(
    max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "10")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

deals = st.integers(min_value=0, max_value=MAX_DEAL)
# One entry per move: (which legal move to play, two action ids to try as refused moves), each an
# index taken modulo what is there.
steps = st.lists(
    st.tuples(st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1)),
    min_size=MAX_MOVES,
    max_size=MAX_MOVES,
)


@nb.njit
def brute_force_legal(s, b, cfg, out):
    """Every action id 0 … n_actions-1 that ``check_move`` accepts, ascending: no move
    generation involved."""
    k = 0
    for a in range(cfg[L_N]):
        if rules.check_move(s, b, cfg, a) == 0:
            out[k] = a
            k += 1
    return k


# ---- helpers ---------------------------------------------------------------------------------


def face_counts(d: dict) -> Counter:
    """How many times each card face (0 … 51) lies anywhere in position ``d``."""
    seen: Counter = Counter()
    for col in d["tableau"]:
        for name in col:
            seen[parse_card(name.rstrip("*"))] += 1
    for name in d.get("stock", []) + d.get("waste", []):
        seen[parse_card(name)] += 1
    for name in d.get("cells", []):
        if name is not None:
            seen[parse_card(name)] += 1
    for top in d["foundations"]:
        if top is not None:
            card = parse_card(top)
            for rank in range(card % 13 + 1):  # a pile holds Ace … its top card
                seen[card - card % 13 + rank] += 1
    return seen


def check_position(g: Game) -> None:
    d = g.to_dict()
    decks = 2 if g.variant.game == DOUBLE else 1
    seen = face_counts(d)
    assert sorted(seen) == list(range(N_FACES)), "a card face is missing or unknown"
    assert set(seen.values()) == {decks}, {k: v for k, v in seen.items() if v != decks}
    for i, col in enumerate(d["tableau"]):
        if col:
            assert not col[-1].endswith("*"), f"t{i + 1}: the top card {col[-1]} is face down"
        hidden = [name.endswith("*") for name in col]
        assert hidden == sorted(hidden, reverse=True), (
            f"t{i + 1}: face-down card above a face-up one"
        )
        if g.variant.game != DOUBLE:
            assert not any(hidden), f"t{i + 1}: {g.variant.name} has no face-down cards"
    if not g.variant.vegas:
        assert g.score >= 0


def raw(g: Game, fields=POSITION_FIELDS) -> dict[str, np.ndarray]:
    return {f: getattr(g.state, f).copy() for f in fields}


def assert_raw_equal(got: dict, want: dict, skip=()) -> None:
    for f in want:
        if f not in skip:
            np.testing.assert_array_equal(got[f], want[f], err_msg=f)


def move_of(g: Game, a: int) -> str:
    return g.move_text(a)


def without_moves(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "moves"}


def check_move_generation(g: Game) -> np.ndarray:
    """Move generation against trying every action id; returns the legal action ids."""
    s, cfg = g.state, g.cfg
    n_actions = int(cfg[L_N])
    legal = g.legal_actions()
    buf = np.empty(n_actions, np.int64)
    k = brute_force_legal(s, 0, cfg, buf)
    assert legal.tolist() == buf[:k].tolist(), "movegen.legal_actions is not the brute-force set"
    mask = np.zeros(n_actions, np.int8)
    assert movegen.legal_mask(s, 0, cfg, mask) == k
    assert np.flatnonzero(mask).tolist() == buf[:k].tolist()
    moves = g.legal_moves()
    assert len(moves) == len(set(moves)) == k, "legal_moves() holds a duplicate"
    # Natural order: the numbers in a move compare as numbers (t2>c before t10>c).
    natural = [tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", m)) for m in moves]
    assert natural == sorted(natural)
    assert sorted(g.action(m) for m in moves) == legal.tolist(), "notation does not round-trip"
    if g.won:
        assert k == 0, "a won game has legal moves"
    return legal


def check_refusal(g: Game, a: int, legal: set[int]) -> None:
    """Try action ``a``: if it is refused, nothing may change."""
    why = g.explain(a)
    assert (why is None) == (a in legal), f"explain({g.move_text(a)}) disagrees with legal moves"
    if why is None:
        return
    before_d, before_raw = g.to_dict(), raw(g, FIELDS)
    with pytest.raises(IllegalMoveError):
        g.play(a)
    assert g.to_dict() == before_d
    assert_raw_equal(raw(g, FIELDS), before_raw)


# ---- properties of random play ---------------------------------------------------------------


# ---- a reference model of the rules, written from docs/rules.md on position dicts -------------
# Independent of the engine: it decides the legal moves and the result of a move (position and
# score) from the text of the rules, so that random play checks the engine against the spec and
# not only against itself.


def rank(name: str) -> int:
    return RANK_NAMES.index(name[0])


def fits_on(card: str, target: str, same_suit: bool) -> bool:
    """Tableau building: one rank lower, same suit (Seahaven) or the opposite colour (the
    Klondike games)."""
    if rank(card) + 1 != rank(target):
        return False
    if same_suit:
        return card[1] == target[1]
    return (card[1] in "HD") != (target[1] in "HD")


def height(top: str | None) -> int:
    return 0 if top is None else rank(top) + 1


def ref_foundation(variant, d: dict, card: str) -> int | None:
    """The pile that takes ``card``: its suit's pile (Double Solitaire: the first of its row that
    accepts it), or None."""
    suit = "SHDC".index(card[1])
    piles = (2 * suit, 2 * suit + 1) if variant.game == DOUBLE else (suit,)
    for p in piles:
        if height(d["foundations"][p]) == rank(card):
            return p
    return None


def ref_accepts(variant, d: dict, card: str, dst: int) -> bool:
    col = d["tableau"][dst]
    if not col:
        return card[0] == "K"
    return fits_on(card, col[-1], variant.game == SEAHAVEN)


def ref_run_ok(variant, d: dict, src: int, n: int, dst: int) -> bool:
    """May the top ``n`` cards of ``src`` move onto column ``dst``?"""
    col = d["tableau"][src]
    if n > len(col) or col[-n].endswith("*"):
        return False
    run = col[-n:]
    same_suit = variant.game == SEAHAVEN
    if variant.game != DOUBLE and any(
        not fits_on(upper, lower, same_suit) for lower, upper in pairwise(run)
    ):
        return False
    if not ref_accepts(variant, d, run[0], dst):
        return False
    if variant.game == SEAHAVEN and n > 1:
        cells_free = sum(c is None for c in d["cells"])
        empty = sum(not c for c in d["tableau"]) - (0 if d["tableau"][dst] else 1)
        return n <= (cells_free + 1) * 2**empty
    return True


def ref_legal_moves(variant, d: dict) -> set[str]:
    """Every legal move of position ``d`` in docs/rules.md's notation."""
    if all(height(top) == 13 for top in d["foundations"]):
        return set()
    tab = d["tableau"]
    cols = range(len(tab))
    moves = set()
    if variant.game != SEAHAVEN:
        if d["stock"]:
            moves.add("draw")
        elif d["waste"] and not variant.vegas:
            moves.add("recycle")
    for src in cols:
        for n in range(1, len(tab[src]) + 1):
            for dst in cols:
                if dst != src and ref_run_ok(variant, d, src, n, dst):
                    moves.add(f"t{src + 1}{f':{n}' if n > 1 else ''}>t{dst + 1}")
    tops = [(f"t{c + 1}", tab[c][-1]) for c in cols if tab[c]]
    if variant.game != SEAHAVEN and d["waste"]:
        tops.append(("w", d["waste"][-1]))
    for k, card in enumerate(d.get("cells", [])):
        if card is not None:
            tops.append((f"c{k + 1}", card))
    for where, card in tops:
        if ref_foundation(variant, d, card) is not None:
            moves.add(f"{where}>f")
        if where[0] != "t":
            moves.update(f"{where}>t{c + 1}" for c in cols if ref_accepts(variant, d, card, c))
    free_cell = variant.game == SEAHAVEN and None in d["cells"]
    if free_cell:
        moves.update(f"t{c + 1}>c" for c in cols if tab[c])
    for p, top in enumerate(d["foundations"]):
        if top is not None:
            moves.update(f"f{p + 1}>t{c + 1}" for c in cols if ref_accepts(variant, d, top, c))
            if free_cell:
                moves.add(f"f{p + 1}>c")
    return moves


def ref_play(variant, d: dict, move: str) -> dict:
    """The position after legal ``move``, score included (the counter left as it is)."""
    d = copy.deepcopy(d)
    tab, found = d["tableau"], d["foundations"]
    normal = not variant.vegas
    points = 0
    if move == "draw":
        for _ in range(min(variant.draw, len(d["stock"]))):
            d["waste"].append(d["stock"].pop(0))
    elif move == "recycle":
        d["stock"], d["waste"] = d["waste"], []
        points = -100
    else:
        m = re.fullmatch(r"([twcf])(\d*)(?::(\d+))?>([tfc])(\d*)", move)
        assert m is not None, move
        sk, sn, runs, dk, dn = m.groups()
        src = int(sn) - 1 if sn else 0
        n = int(runs or 1)
        if sk == "t":
            cards = tab[src][-n:]
            del tab[src][-n:]
            if tab[src] and tab[src][-1].endswith("*"):  # the automatic flip
                tab[src][-1] = tab[src][-1][:-1]
                points += 5 if normal else 0
        elif sk == "w":
            cards = [d["waste"].pop()]
        elif sk == "c":
            cards = [d["cells"][src]]
            d["cells"][src] = None
        else:
            top = found[src]
            found[src] = RANK_NAMES[rank(top) - 1] + top[1] if rank(top) else None
            cards = [top]
        if dk == "t":
            tab[int(dn) - 1].extend(cards)
            if sk in "wc" and normal:
                points += 5
        elif dk == "f":
            (card,) = cards
            found[ref_foundation(variant, d, card)] = card
            points += 10 if normal else 5
        else:
            d["cells"][d["cells"].index(None)] = cards[0]
    d["score"] = d["score"] + points if variant.vegas else max(0, d["score"] + points)
    return d


def play_and_check(g: Game, steps: list[tuple[int, int, int]]) -> int:
    """Play one random legal move per entry of ``steps`` (until none is left), checking every
    invariant around each move. Returns the number of moves played."""
    n_actions = int(g.cfg[L_N])
    check_position(g)
    played = 0
    start = g.moves
    for i, (pick, probe1, probe2) in enumerate(steps):
        legal = check_move_generation(g)
        legal_set = set(legal.tolist())
        # The rules as written: the same legal moves.
        assert set(g.legal_moves()) == ref_legal_moves(g.variant, g.to_dict())
        # Two random ids, and a neighbour of a legal one (often the same move with one card more
        # or less, or the next target).
        near = int(legal[pick % len(legal)]) + (1 if probe1 % 2 else -1) if len(legal) else 0
        for probe in (probe1, probe2, near):
            check_refusal(g, probe % n_actions, legal_set)
        if i % 25 == 0:  # the position survives to_dict / from_dict
            h = Game.from_dict(g.to_dict())
            assert h.to_dict() == g.to_dict()
            assert h.legal_actions().tolist() == legal.tolist()
        if len(legal) == 0:
            break
        a = int(legal[pick % len(legal)])
        before_d, before_raw, before_score = g.to_dict(), raw(g), g.score
        assert g.moves == start + played

        g.play(a)
        played += 1
        check_position(g)
        after_d, after_raw = g.to_dict(), raw(g)
        assert g.moves == start + played
        # The rules as written: the same position and score after the move.
        assert without_moves(after_d) == without_moves(ref_play(g.variant, before_d, move_of(g, a)))

        # Undo restores the position and score exactly; the counter stays, and so does what the
        # player has seen.
        knowledge = raw(g, KNOWLEDGE_FIELDS)
        g.undo()
        assert g.moves == start + played
        assert g.score == before_score
        assert without_moves(g.to_dict()) == without_moves(before_d)
        assert_raw_equal(raw(g), before_raw, skip=("moves",))
        assert_raw_equal(raw(g, KNOWLEDGE_FIELDS), knowledge)

        # The same move again gives the same position, one more on the counter.
        g.play(a)
        played += 1
        assert without_moves(g.to_dict()) == without_moves(after_d)
        assert_raw_equal(raw(g), after_raw, skip=("moves",))
        assert g.moves == start + played
    return played


@pytest.mark.parametrize("tag", TAGS)
@PROPERTY
@given(deal=deals, steps=steps, n_moves=st.integers(1, MAX_MOVES))
def test_random_play_invariants(tag, deal, steps, n_moves):
    """From a deal: conservation, face-up tops, undo, refusals, complete move generation."""
    play_and_check(Game(VARIANTS[tag], deal), steps[:n_moves])


@st.composite
def positions(draw, tag: str) -> dict:
    """A random valid position of ``tag``: random foundation heights (often near or at the
    end), the other cards spread over the columns (some empty, some holding an ordered run),
    cells, stock and waste. Not a position play reaches from a deal, but one the rules apply to;
    it reaches what random play from a deal seldom does: wins, empty columns, long runs and the
    run limit, take-backs from the foundations."""
    variant = VARIANTS[tag]
    rnd = draw(st.randoms(use_true_random=False))
    decks = 2 if variant.game == DOUBLE else 1
    piles = 8 if variant.game == DOUBLE else 4
    cols = {DOUBLE: 9, SEAHAVEN: 10}.get(variant.game, 7)
    same_suit = variant.game == SEAHAVEN

    stage = rnd.random()
    if stage < 0.2:  # nearly won (sometimes won)
        heights = [13 if rnd.random() < 0.6 else rnd.randint(10, 12) for _ in range(piles)]
    elif stage < 0.6:  # end game
        heights = [rnd.randint(7, 13) for _ in range(piles)]
    else:
        heights = [rnd.randint(0, 13) for _ in range(piles)]
    suit_of_pile = [p // decks for p in range(piles)]
    rest = []  # the cards not on a foundation
    for suit in range(4):
        for rank in range(13):
            on_found = sum(h > rank for p, h in enumerate(heights) if suit_of_pile[p] == suit)
            rest += [RANK_NAMES[rank] + "SHDC"[suit]] * (decks - on_found)
    rnd.shuffle(rest)

    d = Game(variant, 0).to_dict()
    d["foundations"] = [
        RANK_NAMES[h - 1] + "SHDC"[suit_of_pile[p]] if h else None for p, h in enumerate(heights)
    ]
    if variant.game == SEAHAVEN:
        d["cells"] = [rest.pop() if rest and rnd.random() < 0.5 else None for _ in d["cells"]]
    else:
        n_stock = rnd.randint(0, min(30 * decks, len(rest)))
        d["stock"] = [rest.pop() for _ in range(n_stock)]
        d["waste"] = [rest.pop() for _ in range(rnd.randint(0, min(10 * decks, len(rest))))]

    # Ordered runs on top of some columns (the only face-up cards in Double Solitaire).
    runs: list[list[str]] = [[] for _ in range(cols)]
    for c in range(cols):
        if not rest or rnd.random() < (0.2 if variant.game == DOUBLE else 0.6):
            continue
        runs[c].append(rest.pop())
        while len(runs[c]) < 13 and rnd.random() < 0.8:
            fitting = [x for x in rest if fits_on(x, runs[c][-1], same_suit)]
            if not fitting:
                break
            card = rnd.choice(fitting)
            rest.remove(card)
            runs[c].append(card)
    # The other cards under the runs, or face down in Double Solitaire (then a column holds at
    # most 12 of them, and one with face-down cards needs a face-up card on top).
    base: list[list[str]] = [[] for _ in range(cols)]
    open_cols = rnd.sample(range(cols), rnd.randint(-(-len(rest) // 12), cols))
    for card in rest:
        base[rnd.choice([c for c in open_cols if len(base[c]) < 12])].append(card)
    if variant.game == DOUBLE:
        for c in range(cols):
            if base[c] and not runs[c]:
                runs[c].append(base[c].pop())
            base[c] = [card + "*" for card in base[c]]
    d["tableau"] = [base[c] + runs[c] for c in range(cols)]
    d["score"] = rnd.randint(-104, 300) if variant.vegas else rnd.randint(0, 300)
    d["moves"] = rnd.randint(0, 50)
    return d


@pytest.mark.parametrize("tag", TAGS)
@PROPERTY
@given(data=st.data(), steps=steps, n_moves=st.integers(1, 60))
def test_random_position_invariants(tag, data, steps, n_moves):
    """The same invariants from random positions (end games, empty columns, wins)."""
    g = Game.from_dict(data.draw(positions(tag)))
    if g.won:
        assert len(g.legal_actions()) == 0
    play_and_check(g, steps[:n_moves])


@pytest.mark.parametrize("tag", TAGS)
@PROPERTY
@given(
    deal=deals,
    depth=st.integers(1, 12),
    picks=st.lists(st.integers(0, 2**16 - 1), min_size=15, max_size=15),
)
def test_undo_history_depth(tag, deal, depth, picks):
    """With an undo history of depth K, after K+3 moves exactly K undos succeed, walking back
    through the positions in order; the counter never goes down."""
    g = Game(VARIANTS[tag], deal, undo_depth=depth)
    positions = [without_moves(g.to_dict())]
    for pick in picks[: depth + 3]:
        legal = g.legal_actions()
        if len(legal) == 0:
            break
        g.play(int(legal[pick % len(legal)]))
        positions.append(without_moves(g.to_dict()))
    played = len(positions) - 1
    expected_undos = min(depth, played)
    assert g.undo_count == expected_undos
    for i in range(1, expected_undos + 1):
        g.undo()
        assert without_moves(g.to_dict()) == positions[played - i]
        assert g.moves == played
    assert g.undo_count == 0 and g.undo_available is False
    stuck = g.to_dict()
    with pytest.raises(UndoError):
        g.undo()
    assert g.to_dict() == stuck


# ---- batch parity ----------------------------------------------------------------------------


def live_records(s) -> tuple[np.ndarray, np.ndarray]:
    """Each row's undo records, last first, and which of them are live (slots past
    ``hist_len`` are free space and may hold anything)."""
    depth = s.hist.shape[1]
    i = np.arange(depth)
    order = (s.hist_top[:, None] - 1 - i[None, :]) % depth
    return np.take_along_axis(s.hist, order, axis=1), i[None, :] < s.hist_len[:, None]


def assert_batch_equal(batch: Batch, games: list[Game], where: str) -> None:
    """Row ``i`` of the batch's State equals game ``i``'s State, field by field."""
    arrays = zip(*(g.state.arrays() for g in games), strict=True)
    want_state = State(*(np.concatenate(rows) for rows in arrays))
    for f in FIELDS:
        got, want = getattr(batch.state, f), getattr(want_state, f)
        if f == "hist":
            (got, got_live), (want, want_live) = live_records(batch.state), live_records(want_state)
            np.testing.assert_array_equal(got_live, want_live, err_msg=f"{where}: hist_len")
            got, want = np.where(got_live, got, 0), np.where(want_live, want, 0)
        if not np.array_equal(got, want):
            row = next(i for i in range(len(games)) if not np.array_equal(got[i], want[i]))
            np.testing.assert_array_equal(
                got[row], want[row], err_msg=f"{where}, row {row}, field {f}"
            )


@pytest.mark.parametrize("tag", TAGS)
def test_batch_matches_single_games(tag):
    """A Batch of 16 games stepped with random legal actions equals 16 Games played with the same
    action ids, step for step (whole State rows: position, score, counter, undo history). Now and
    then some rows undo, and stuck rows are dealt again, on both sides."""
    variant = VARIANTS[tag]
    size, n_steps = 16, 200
    rng = np.random.default_rng(sum(map(ord, tag)))
    deal_numbers = rng.choice(MAX_DEAL, size=size, replace=False)
    batch = Batch(variant, size, undo_depth=variant.undo_depth)
    batch.deal(deal_numbers)
    games = [Game(variant, int(d)) for d in deal_numbers]
    assert_batch_equal(batch, games, "after the deal")

    for step in range(n_steps):
        masks = batch.masks()
        actions = np.full(size, -1, np.int64)
        for i, g in enumerate(games):
            legal = g.legal_actions()
            assert np.flatnonzero(masks[i]).tolist() == legal.tolist(), f"step {step}, row {i}"
            assert batch.legal_counts[i] == len(legal)
            assert bool(batch.won[i]) == g.won
            if len(legal):
                actions[i] = legal[rng.integers(len(legal))]
        reasons = batch.step(actions).copy()
        np.testing.assert_array_equal(reasons, np.where(actions >= 0, 0, -1))
        for i, g in enumerate(games):
            if actions[i] >= 0:
                g.play(int(actions[i]))
        assert_batch_equal(batch, games, f"step {step}")
        changed = False

        if step % 10 == 9:  # some rows undo one or two actions
            rows = np.flatnonzero(rng.random(size) < 0.3)
            for _ in range(int(rng.integers(1, 3))):
                done = batch.undo(rows)
                for r, ok in zip(rows, done, strict=True):
                    assert ok == games[r].undo_available
                    if ok:
                        games[r].undo()
                changed = True
        stuck = [i for i, g in enumerate(games) if g.stuck or g.won]
        if stuck:  # deal again where nothing is left to play
            new = rng.choice(MAX_DEAL, size=len(stuck), replace=False)
            batch.deal(new, stuck)
            for i, d in zip(stuck, new, strict=True):
                games[i] = Game(variant, int(d))
            changed = True
        if changed:
            assert_batch_equal(batch, games, f"after the undos and deals of step {step}")


def test_refused_batch_step_changes_nothing():
    """A refused action in a Batch row leaves that row as it was and reports the reason."""
    variant = VARIANTS["SH1-C4"]
    batch = Batch(variant, 4, undo_depth=variant.undo_depth)
    batch.deal(np.arange(4))
    before = {f: getattr(batch.state, f).copy() for f in FIELDS}
    masks = batch.masks()
    illegal = np.array([int(np.flatnonzero(m == 0)[0]) for m in masks])
    reasons = batch.step(illegal)
    assert (reasons > 0).all()
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(batch.state, f), before[f], err_msg=f)
