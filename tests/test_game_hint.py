"""Game.hint: the next move of a solver solution from the current position."""

from solitaire_gym import Game


def test_hint_is_a_legal_move_and_leads_to_a_win():
    g = Game.from_code("SH1-C4-AAAAAJ2")
    for _ in range(300):
        move = g.hint(max_seconds=5)
        if g.won:
            assert move is None
            break
        assert move in g.legal_moves()
        g.play(move)
    assert g.won


def test_hint_changes_nothing():
    g = Game.from_code("TF1-D1N-AAAAAAB")
    before = g.to_dict()
    g.hint(max_seconds=2)
    assert g.to_dict() == before and g.moves == 0
