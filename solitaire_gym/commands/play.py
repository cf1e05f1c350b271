"""``solitaire-gym play CODE``: play a game in the terminal, typing moves in the package's
notation (docs/rules.md, "Move notation").

    solitaire-gym play SH1-C4-AAAAAJ2
    solitaire-gym play DS1-D3N-AAAAAAB --save my-game.json    # keep the playthrough as a trace

The board is shown after every move; a refused move shows the rule that forbids it (the apps'
"interactive rules"). Commands: a move (``t3>t5``, ``t3:4>t7``, ``w>f``, ``draw`` …), ``tap t3``,
``dtap t3`` (double tap), ``undo``, ``hint`` (from the solver), ``moves`` (the legal moves),
``board``, ``help``, ``quit``. End of input quits too.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import TextIO

from solitaire_gym.errors import SolitaireError, shown
from solitaire_gym.game import Game

HELP = """\
Type a move in the notation of docs/rules.md, or a command:
  t3>t5  t3:4>t7  w>t4  t2>f  w>f  c1>f  f3>t4  f3>c  t5>c  c2>t4  draw  recycle
  tap PILE      a single tap on a top card (t3, w, c1): to its foundation if it can go
  dtap PILE     a double tap: foundation, else the longest column that takes it, ...
  undo          undo the last action (the move counter does not go down)
  hint          a move from the solver
  moves         the legal moves now
  board         show the board again
  help          this text
  quit          stop (end of input stops too)"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "play",
        help="play a game in the terminal",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument(
        "code", metavar="CODE", help="a game code, e.g. SH1-C4-AAAAAJ2 or DS1-D3N-AAAAAAB"
    )
    p.add_argument("--save", metavar="TRACE", help="write the playthrough as a trace file on exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    game = Game.from_code(args.code)
    stdin = sys.stdin
    if isinstance(stdin, io.TextIOWrapper):
        # Bytes that are not UTF-8 (or the locale's encoding) read as U+FFFD, which no command
        # or move accepts: refused like any other bad line, not a traceback.
        stdin.reconfigure(errors="replace")
    return play(game, stdin, sys.stdout, save=args.save)


def _hint(game: Game) -> str:
    try:
        move = game.hint()  # keeps to one solution while the player follows it
    except SolitaireError as e:
        return f"hint: {e}"
    if move is None:
        return "hint: the solver finds no winning line from here (in its time budget)"
    return f"hint: {move}"


def play(
    game: Game,
    stdin: TextIO,
    stdout: TextIO,
    *,
    save: str | None = None,
    prompt: str = "> ",
) -> int:
    """Read commands from ``stdin`` until ``quit``, end of input or a won game; write the board
    and answers to ``stdout``. ``save``: write the moves played as a trace file at the end."""
    if save and (Path(save).is_dir() or Path(save).is_symlink()):  # refused now, not at the end
        what = "a folder" if Path(save).is_dir() else "a symbolic link"
        raise SolitaireError(f"--save {shown(save, 80)} is {what}; give a file name")
    code = game.code
    start = None if game.moves == 0 else game.to_dict()
    played: list[str] = []
    scores: list[int] = []

    def say(text: str = "") -> None:
        stdout.write(text + "\n")

    def show() -> None:
        say(str(game))

    def act(move: str) -> None:
        game.play(move)
        move = game.move_text(game.action(move))  # as the notation writes it: 'T3>T5' -> 't3>t5'
        played.append(move)
        scores.append(game.score)
        say(f"played {move}")
        show()

    say("Type a move (e.g. t3>t5), 'moves', 'hint', 'undo', 'help' or 'quit'.")
    show()
    while not game.won:
        stdout.write(prompt)
        stdout.flush()
        line = stdin.readline()
        if not line:
            say()
            break
        text = line.strip()
        word, _, rest = text.partition(" ")
        word = word.lower()
        try:
            if not text:
                continue
            if word in ("quit", "q", "exit"):
                break
            if word in ("help", "?"):
                say(HELP)
            elif word == "moves":
                legal = game.legal_moves()
                say(f"{len(legal)} legal moves: " + " ".join(legal) if legal else "no legal move")
            elif word == "board":
                show()
            elif word == "undo":
                game.undo()
                played.append("undo")
                scores.append(game.score)
                say("undone")
                show()
            elif word == "hint":
                say(_hint(game))
            elif word in ("tap", "dtap"):
                pile = rest.strip()
                move = game.tap(pile) if word == "tap" else game.double_tap(pile)
                if move is None:
                    say(
                        f"refused: this {'tap' if word == 'tap' else 'double tap'} finds no move for the card on {pile}"
                    )
                else:
                    act(move)
            else:
                act(text)
        except SolitaireError as e:
            say(f"refused: {e}")
    if game.won:
        say(f"Won! Score {game.score_text} in {game.moves} moves.")
    if save:
        from solitaire_gym.traces import save_trace

        path = save_trace(save, code, played, agent="human", scores=scores, start=start)
        say(f"saved the playthrough to {path}")
    return 0
