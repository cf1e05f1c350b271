"""``solitaire-gym render TRACE``: a trace file as a GIF, an MP4, a replay page or a picture.

    solitaire-gym render game.json --gif game.gif --mp4 game.mp4 --html game.html
    solitaire-gym render game.json --png final.png          # the last position
    solitaire-gym render game.json --png start.png --step 0

The trace is replayed and checked first (``solitaire_gym.traces.load_trace``); a bad one is refused
with the first bad field or move. Needs the ``render`` extra (Pillow, imageio, imageio-ffmpeg).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from solitaire_gym.errors import SolitaireError


def _number(kind: type):
    """An argparse type: ``kind`` (int or float) from a short ASCII text, naming bad text briefly."""

    def parse(text: str):
        try:
            if not text.isascii() or len(text) > 40:
                raise ValueError
            return kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"not {what}: {text[:40]!r}") from None

    parse.__name__ = kind.__name__
    return parse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "render",
        help="draw a trace file: GIF, MP4, HTML replay page, PNG",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument("trace", metavar="TRACE", help="a trace file (solitaire_gym.trace JSON)")
    p.add_argument("--gif", metavar="OUT", help="write an animated GIF")
    p.add_argument("--mp4", metavar="OUT", help="write an H.264 MP4 video")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML replay page")
    p.add_argument("--png", metavar="OUT", help="write the picture of one position (see --step)")
    p.add_argument(
        "--step", type=_number(int), default=None,
        help="the position for --png: 0 is the start, k the position after move k (default: last)",
    )  # fmt: skip
    p.add_argument(
        "--fps", type=_number(float), default=4.0, help="positions per second in videos (default 4)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not (args.gif or args.mp4 or args.html or args.png):
        print("solitaire-gym render: give at least one of --gif, --mp4, --html, --png",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        from solitaire_gym.rendering import replay
    except ImportError as e:
        print(f"solitaire-gym render: {e}", file=sys.stderr)
        return 2
    if not replay.MIN_FPS <= args.fps <= replay.MAX_FPS:
        raise SolitaireError(
            f"--fps must lie in {replay.MIN_FPS:g} … {replay.MAX_FPS:g}, not {args.fps:g}"
        )
    for flag in ("gif", "mp4", "html", "png"):
        out = getattr(args, flag)
        if out and Path(out).is_dir():
            raise SolitaireError(f"--{flag} {out!r:.80} is a folder; give a file name")
    from solitaire_gym.traces import load_trace

    trace = load_trace(args.trace)
    if args.gif or args.mp4 or args.html:
        replay.check_length(trace)  # before any file is written
    n = len(trace.positions)
    if args.step is not None and not 0 <= args.step < n:
        raise SolitaireError(
            f"--step {args.step} is outside 0 … {n - 1} (the trace has {n - 1} moves)"
        )
    if args.png:
        step = n - 1 if args.step is None else args.step
        print(f"wrote {replay.write_png(trace, args.png, step=step)} (position {step})")
    if args.gif:
        print(f"wrote {replay.write_gif(trace, args.gif, fps=args.fps)} ({n} frames)")
    if args.mp4:
        print(f"wrote {replay.write_mp4(trace, args.mp4, fps=args.fps)} ({n} positions)")
    if args.html:
        print(f"wrote {replay.write_html(trace, args.html)} ({n} positions)")
    return 0
