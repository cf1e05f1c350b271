"""``solitaire-gym``: the package's command line (``solitaire-gym --help``)."""

from __future__ import annotations

import argparse
import importlib
import sys

from solitaire_gym import __version__
from solitaire_gym.commands import COMMANDS
from solitaire_gym.errors import SolitaireError, shown


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire-gym",
        description="Double Solitaire, Solitaire Réfléchi and Seahaven Towers: solve, render, play.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"solitaire_gym.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"solitaire_gym.commands.{name}":
                raise
            continue  # not built yet
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        if _interrupted(e):  # an error raised while a Ctrl-C was on its way out: a Ctrl-C
            return 130
        if isinstance(e, SolitaireError):
            print(f"solitaire-gym {args.command}: {e}", file=sys.stderr)
            return 2
        if isinstance(e, OSError):  # a file that cannot be read or written: one line
            where = f" {shown(str(e.filename), 120)}" if e.filename is not None else ""
            print(f"solitaire-gym {args.command}:{where} {e.strerror or e}", file=sys.stderr)
            return 1
        raise


def _interrupted(e: BaseException | None) -> bool:
    """Whether ``e`` was raised while a KeyboardInterrupt was being handled."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__context__ or e.__cause__
    return False


if __name__ == "__main__":
    sys.exit(main())
