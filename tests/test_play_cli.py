"""``solitaire-gym play``: the terminal player, driven by scripted input."""

import io
import os
import subprocess
import sys

from solitaire_gym import Game
from solitaire_gym.cli import main
from solitaire_gym.commands.play import play
from solitaire_gym.traces import load_trace

CODE = "SH1-C4-AAAAAJ2"


def run(game: Game, script: str, **kwargs) -> str:
    out = io.StringIO()
    assert play(game, io.StringIO(script), out, **kwargs) == 0
    return out.getvalue()


def test_moves_refusals_undo_and_save(tmp_path):
    fresh = Game.from_code(CODE)
    rule = fresh.explain("t3>t5")
    legal = fresh.legal_moves()
    save = tmp_path / "played.json"
    script = "moves\nt3>t5\nT1>T7\nnonsense\nundo\nundo\ndtap t10\ntap t2\nhint\nhelp\n\nboard\nquit\nt1>c\n"
    text = run(Game.from_code(CODE), script, save=str(save))
    assert text.startswith("Type a move")
    assert f"{len(legal)} legal moves: " + " ".join(legal) in text
    assert f"refused: {rule}" in text  # the app's rule for a refused move
    assert "played t1>t7" in text and "score 0  moves 1" in text  # the board after the move
    assert "refused: 'nonsense' is not a move" in text
    assert "undone" in text and "refused: nothing" in text  # a second undo: none left
    assert "played t10>c" in text  # the double tap's move
    assert "refused: this tap finds no move for the card on t2" in text
    assert "hint: " in text  # a move, or a word that the solver is not available
    assert "undo          undo the last action" in text  # help
    assert "played t1>c" not in text  # nothing is read after quit
    trace = load_trace(save)
    assert trace.moves == ["t1>t7", "undo", "t10>c"] and trace.agent == "human"
    assert trace.final["moves"] == 2


def test_a_win_ends_the_game(tmp_path):
    d = Game.from_code(CODE).to_dict()
    d.update(
        tableau=[[] for _ in d["tableau"]],
        foundations=["KS", "KH", "KD", "QC"],
        cells=["KC", None, None, None],
        moves=51,
        score=510,
    )
    save = tmp_path / "won.json"
    text = run(Game.from_dict(d), "t1>t2\nc1>f\nmoves\n", save=str(save))
    assert "refused: " in text
    assert "played c1>f" in text and "Won! Score 520 in 52 moves." in text
    assert "legal moves" not in text  # the game is over: nothing more is read
    trace = load_trace(save)
    assert trace.start == d and trace.won and trace.moves == ["c1>f"]


def test_hint():
    game = Game.from_code(CODE)
    legal = game.legal_moves()
    line = next(x for x in run(game, "hint\n").splitlines() if "hint: " in x)
    try:
        import solitaire_gym.solver  # noqa: F401
    except ImportError:
        assert line.endswith("hint: the solver is not available")
    else:
        assert line.split("hint: ")[1] in legal


def test_end_of_input_quits():
    text = run(Game.from_code("TF1-D3N-AAAAAAB"), "draw")
    assert "played draw" in text and text.endswith("\n")


def test_command_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "solitaire_gym.cli", "play", "ds1-d1n-aaaaaab"],
        input="draw\nw>t9\nquit\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Double Solitaire  DS1-D1N-AAAAAAB  score 0  moves 0" in proc.stdout
    assert "played draw" in proc.stdout and "stock: 58 cards" in proc.stdout
    assert "refused: " in proc.stdout or "played w>t9" in proc.stdout


def test_input_that_is_not_utf8_is_refused(tmp_path):
    """A line of bytes that are not UTF-8 is refused like any bad line (was a traceback with a
    strict stdin decoder), and the lines after it are read."""
    proc = subprocess.run(
        [sys.executable, "-m", "solitaire_gym.cli", "play", CODE],
        input=b"\xff\xfe t1\nt1>t7\nquit\n",
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = proc.stdout.decode()
    assert "refused: " in out and "played t1>t7" in out


def test_bad_code(capsys):
    assert main(["play", "XX1-D1N-AAAAAAB"]) == 2
    assert "unknown game 'XX1'" in capsys.readouterr().err


def test_solve_writes_a_trace_that_replays_to_a_win(tmp_path, capsys):
    from solitaire_gym.cli import main
    from solitaire_gym.traces import load_trace

    out = tmp_path / "solution.json"
    assert main(["solve", "SH1-C4-AAAAAJ2", "--max-seconds", "10", "--trace", str(out)]) == 0
    trace = load_trace(out)
    assert trace.agent == "solver" and trace.final["foundations"] == ["KS", "KH", "KD", "KC"]


def test_play_says_the_right_thing_after_the_only_move_is_undone():
    out = io.StringIO()
    play(Game.from_code(CODE), io.StringIO("t1>t7\nundo\nundo\nquit\n"), out)
    text = out.getvalue()
    assert "refused: nothing left to undo: every move made has been undone" in text
    assert "the app keeps the last" not in text
