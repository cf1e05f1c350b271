"""The solver's hop classes (Solitaire Réfléchi: the positions that hops of cards between
columns reach, searched as one): a class has 2 ** sites members and one least member, the moves
generated for a class reach every child class, and the verdicts are those without classes and of
the reference search; in draw 3 the classes switch on after ``search._CLASSES_AFTER`` nodes."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from solving import REFERENCE, random_position

from solitaire_gym import Game
from solitaire_gym.engine.actions import K_WF, decode
from solitaire_gym.engine.cards import card_name
from solitaire_gym.engine.variants import REFLECHI
from solitaire_gym.solver import search, solve
from solitaire_gym.solver.hops import (
    HOP_MAX,
    HOP_SITES,
    HS_SIZE,
    _hop_scratch,
    _to_member,
    canonical,
    gen_node,
    hop_class,
    hs_views,
    sites,
    to_sites,
)
from solitaire_gym.solver.inline import apply_inline, undo_to
from solitaire_gym.solver.keys import position_key
from solitaire_gym.solver.layout import (
    FL_HOPS_DRAW3,
    FL_NO_AUTO,
    FL_NO_HOPS,
    MEMBER_SHIFT,
    MOVE_BITS,
    MOVE_MARGIN,
    MOVE_MASK,
    R_NONE,
    TAPS_MASK,
)
from solitaire_gym.solver.loop import REC_MARGIN, _taps
from solitaire_gym.solver.moves import gen_moves, stock_walk
from solitaire_gym.solver.search import _Search


def _hop_positions(n: int, variant: str = "TF1-D1N") -> list[dict]:
    """Réfléchi positions with hops: scattered at random, and along random games."""
    rng = random.Random(f"hops{variant}")
    out = []
    while len(out) < n:
        if rng.random() < 0.5:
            out.append(random_position(f"{variant}-AAAAAAB", rng, rng.randrange(20, 50)))
            continue
        g = Game.from_code(f"{variant}-AAAAA{rng.choice('ABCDEFGHJK')}{rng.choice('ABCDEFGHJK')}")
        for _ in range(rng.randrange(10, 120)):
            moves = g.legal_moves()
            if not moves:
                break
            g.play(rng.choice(moves))
        out.append(g.to_dict())
    return out


def test_hop_classes_are_cubes():
    """The search's hop classes (``hops.gen_node``, ``canonical``) rest on this: the sites of
    a Réfléchi position are independent, so its class (every position that hops reach, found
    breadth first by ``hop_class``) has exactly 2 ** sites members, and going to the least member
    from any member gives one and the same position."""
    sizes = Counter()
    for d in _hop_positions(300):
        S = _Search(Game.from_dict(d, undo_depth=0), 1.0)
        s, cfg, Z = S.s, S.cfg, S.Z
        scratch = _hop_scratch(cfg)
        hs = np.zeros(HS_SIZE, np.int64)
        k = sites(s, cfg, *hs_views(hs))
        size = hop_class(s, cfg, Z, 0, *scratch)
        if k > HOP_SITES:
            continue
        assert size == 1 << k, d
        sizes[size] += 1
        hk1, hk2, hpar, hact, hbuf, path, hrec = scratch
        least = set()
        for i in range(size):
            recs = np.zeros(REC_MARGIN, np.int64)
            top = _to_member(s, cfg, hpar, hact, i, path, recs, 0)
            top = canonical(s, cfg, recs, top, FL_NO_AUTO, hs)
            assert top >= 0
            least.add(tuple(int(x) for x in position_key(s, cfg, Z, 0, -1, 0)))
            undo_to(s, cfg, recs, top, 0)
        assert len(least) == 1, d
        assert S.s.tab_len[0].tolist() == _Search(Game.from_dict(d), 1.0).s.tab_len[0].tolist()
    assert sizes[1] and sizes[2] and sizes[4] and sizes[8], sizes


def _child_classes(S, moves, scratch, views=None) -> set | None:
    """The hop classes (their members' keys, ``hop_class``) of the positions that ``moves``
    lead to from row 0, each played after its taps and, given the views of a hop scratch
    (``hs_views``), the hops to the member it is marked with; no automatic moves. None if one
    of them has more members than ``hop_class`` lists."""
    s, cfg, Z = S.s, S.cfg, S.Z
    hk1, hk2 = scratch[0], scratch[1]
    out = set()
    for m in moves:
        recs = np.zeros(REC_MARGIN, np.int64)
        top = 0
        if views is not None:
            sites(s, cfg, *views)
            top = to_sites(s, cfg, m >> MEMBER_SHIFT, views[1], views[3], recs, 0)
        top = _taps(s, cfg, recs, top, (m >> MOVE_BITS) & TAPS_MASK)
        recs[top] = apply_inline(s, 0, cfg, m & MOVE_MASK)
        size = hop_class(s, cfg, Z, 0, *scratch)
        undo_to(s, cfg, recs, top + 1, 0)
        if size > HOP_MAX:
            return None
        out.add(frozenset(zip(hk1[:size].tolist(), hk2[:size].tolist(), strict=True)))
    return out


@pytest.mark.parametrize("variant", ["TF1-D1N", "TF1-D3N"])
def test_hop_class_moves_reach_every_child_class(variant):
    """``gen_node``'s claim: the moves it generates for a class (the node's own, and from each
    one-hop member only those onto the card the hop uncovered or sending it home) reach the same
    child classes as every move but hops of every member of the class (``hop_class``), played
    without automatic moves. Draw 3 too, where the search does not take classes yet."""
    tested = added = reduced = 0
    for d in _hop_positions(160, variant):
        S = _Search(Game.from_dict(d, undo_depth=0), 1.0)
        s, cfg, Z = S.s, S.cfg, S.Z
        we = stock_walk(s, cfg, S.tmp, S.seen, S.wk[0], S.wk[1], 0)
        hs = np.zeros(HS_SIZE, np.int64)
        views = hs_views(hs)
        k = sites(s, cfg, *views)
        if not 0 < k <= HOP_SITES:
            continue
        n = gen_node(s, cfg, S.acts, S.moves, 0, S.sc, R_NONE, -1, S.ctl, *S.wk, 0, we, True, hs)
        node = S.moves[:n].astype(np.int64).tolist()

        cls = _hop_scratch(cfg)
        _hk1, _hk2, hpar, hact, _hbuf, path, _hrec = cls
        size = hop_class(s, cfg, Z, 0, *cls)
        assert size == 1 << k
        child = _hop_scratch(cfg)
        every = set()
        n_every = 0
        for i in range(size):
            recs = np.zeros(REC_MARGIN, np.int64)
            top = _to_member(s, cfg, hpar, hact, i, path, recs, 0)
            out = np.zeros(MOVE_MARGIN, np.int32)
            sc = np.zeros(MOVE_MARGIN, np.int64)
            c = gen_moves(s, cfg, S.acts, out, 0, sc, R_NONE, -1, S.ctl, *S.wk, 0, we, True)
            got = _child_classes(S, out[:c].astype(np.int64).tolist(), child)
            undo_to(s, cfg, recs, top, 0)
            if got is None:
                break
            every |= got
            n_every += c
        else:
            mine = _child_classes(S, node, child, views)
            own = _child_classes(S, [m for m in node if not m >> MEMBER_SHIFT], child, views)
            if mine is None:
                continue
            assert mine == every, d
            tested += 1
            added += mine != own
            reduced += n < n_every
    assert tested >= 40 and added >= 5 and reduced >= 20, (tested, added, reduced)


def test_hop_class_keeps_the_waste_card_that_a_hop_lets_follow():
    """After a card goes home from the waste, the search tries only foundation moves of its suit
    (``moves.lazy_waste``). 4H is on top of the waste and 5H lies under 4S, which can hop to
    5D: the hop's member must contribute 4H home (after it, only 5H can follow, and only there),
    but no other waste card home (the hop uncovers no card of their suits)."""
    off = [f"{r}{s}" for s in "SHD" for r in "3456789TJQK" if not (s == "H" and r == "3")]
    off = [c for c in off if c not in ("3D", "4D")]
    tableau = [["5H", "4S"], ["5D"], [], [], [], [], []]
    placed = {"5H", "4S", "5D", "4H"}
    d = Game.from_code("TF1-D1N-AAAAAAB").to_dict()
    d.update(
        tableau=tableau,
        foundations=["2S", "3H", "4D", "KC"],
        waste=["4H"],
        stock=[c for c in off if c not in placed],
        moves=0,
        score=0,
    )
    S = _Search(Game.from_dict(d, undo_depth=0), 1.0)
    we = stock_walk(S.s, S.cfg, S.tmp, S.seen, S.wk[0], S.wk[1], 0)
    hs = np.zeros(HS_SIZE, np.int64)
    assert sites(S.s, S.cfg, *hs_views(hs)) == 1
    n = gen_node(S.s, S.cfg, S.acts, S.moves, 0, S.sc, R_NONE, -1, S.ctl, *S.wk, 0, we, True, hs)
    home = {}
    for m in S.moves[:n].tolist():
        kind = decode(S.cfg, m & MOVE_MASK)[0]
        if kind == K_WF:
            taps = (m >> MOVE_BITS) & TAPS_MASK
            card = card_name(int(S.wk[0][list(S.wk[1][:we]).index(taps)]))
            home.setdefault(card, set()).add(m >> MEMBER_SHIFT)
    assert home["4H"] == {0, 1}
    assert home["3S"] == {0}


@pytest.mark.parametrize(
    ("variant", "off", "classes"),
    [("TF1-D1N", 24, 0), ("TF1-D1N", 36, 0), ("TF1-D1N", 48, 0),
     ("TF1-D3N", 36, FL_HOPS_DRAW3)],
)  # fmt: skip
def test_hop_classes_keep_verdicts(variant, off, classes):
    """With hop classes, without them, and the reference search: the same verdicts (draw 3 with
    classes switched on, ``FL_HOPS_DRAW3``)."""
    seed = f"hop-verdicts{off}" if variant == "TF1-D1N" else f"hop-verdicts{variant}{off}"
    rng = random.Random(seed)
    decided = 0
    for _ in range(8):
        d = random_position(f"{variant}-AAAAAAC", rng, off)
        r = solve(d, max_nodes=200_000, max_seconds=20, _flags=classes)
        plain = solve(d, max_nodes=200_000, max_seconds=20, _flags=FL_NO_HOPS)
        ref = solve(d, max_nodes=300_000, max_seconds=20, _flags=REFERENCE, _restarts=False)
        verdicts = {r.verdict, plain.verdict, ref.verdict} - {"unknown"}
        assert len(verdicts) <= 1, d
        decided += r.verdict != "unknown" and ref.verdict != "unknown"
    assert decided >= 4


def test_late_hop_classes_keep_verdicts(monkeypatch):
    """Draw 3 as shipped takes hop classes in the runs that start after ``_CLASSES_AFTER`` nodes.
    With the switch moved to the first restart, so that small searches cross it: the same
    verdicts as without classes and as the reference search."""
    key = (REFLECHI, 3)
    assert key in search._CLASSES_AFTER
    monkeypatch.setitem(search._CLASSES_AFTER, key, 1)
    rng = random.Random("late-hop-verdicts")
    decided = changed = 0
    for _ in range(8):
        d = random_position("TF1-D3N-AAAAAAC", rng, 36)
        r = solve(d, max_nodes=200_000, max_seconds=20)
        plain = solve(d, max_nodes=200_000, max_seconds=20, _flags=FL_NO_HOPS)
        ref = solve(d, max_nodes=300_000, max_seconds=20, _flags=REFERENCE, _restarts=False)
        verdicts = {r.verdict, plain.verdict, ref.verdict} - {"unknown"}
        assert len(verdicts) <= 1, d
        decided += r.verdict != "unknown" and ref.verdict != "unknown"
        changed += r.nodes != plain.nodes
    assert decided >= 4
    assert changed, "the switch changed no search"


@pytest.mark.parametrize(
    ("code", "nodes"), [("TF1-D3N-AAAAAED", 44_747), ("TF1-D3N-AAAAAQG", 216_715)]
)
def test_late_hop_classes_switch_on_at_their_node_count(code, nodes):
    """Two draw-3 proofs of loss in several runs (``nodes`` without classes): the search is the
    one without classes up to ``_CLASSES_AFTER`` nodes, and another after."""
    key = (REFLECHI, 3)
    r = solve(code, max_seconds=None, max_nodes=10**6)
    plain = solve(code, max_seconds=None, max_nodes=10**6, _flags=FL_NO_HOPS)
    assert r.verdict == plain.verdict == "unsolvable" and plain.nodes == nodes
    assert (r.nodes == plain.nodes) == (nodes < search._CLASSES_AFTER[key])


def test_hop_classes_shrink_proofs():
    """A proof of loss without restarts, with and without hop classes: the same verdict, with
    fewer positions."""
    code = "TF1-D1N-AAAAAOR"  # 93,635 positions against 222,821
    r = solve(code, max_seconds=60, _restarts=False)
    plain = solve(code, max_seconds=60, _restarts=False, _flags=FL_NO_HOPS)
    assert r.verdict == plain.verdict == "unsolvable"
    assert r.nodes < plain.nodes / 2
