"""Subcommands of the ``solitaire-gym`` command line, one module each.

Each module defines ``register(subparsers)``, which adds its parser and sets ``func`` (called with
the parsed arguments, returning the exit status).
"""

COMMANDS = ("solve", "render", "play", "warmup")
