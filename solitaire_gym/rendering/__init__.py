"""Drawing positions: text (``ansi``), pictures (``image``), replays of traces (``replay``) and
what a notebook shows (``notebook``). This package's own module holds what they share and
imports none of them."""

MAX_RENDER_MOVES = 10_000
"""Most moves a trace may hold to be drawn as a GIF, an MP4 or a replay page (``render``,
``Trace._repr_html_``): drawing costs about 0.3 ms a move for the page and 7 ms for a video
frame, so 10,000 moves take seconds and a minute; a longer trace shows its last position only.
Also :data:`solitaire_gym.traces.MAX_RENDER_MOVES`."""
