"""A replayed trace as a GIF, an MP4 or a self-contained HTML replay page.

Every writer takes a :class:`~solitaire_gym.traces.Trace` (from
:func:`~solitaire_gym.traces.load_trace`) and draws one picture per position, from the start to
the position after the last move, with :mod:`solitaire_gym.rendering.image`. Frames are drawn and
written one at a time, so a long game does not hold every picture in memory.

- GIF: Pillow's GIF writer, one shared palette; the last frame is held for two seconds.
- MP4: imageio with imageio-ffmpeg (its wheel ships an ffmpeg binary), H.264, ``yuv420p``.
- HTML: one file that needs no network, drawn by the page itself: the pictures of the cards, the
  back and the empty places are inline base64 PNGs drawn once (by :mod:`.image`), and every
  position is the list of drawing operations that :func:`~solitaire_gym.rendering.image.board_ops`
  lays out for it (each distinct operation stored once, a position as their numbers), which the
  page's script paints on a ``<canvas>``: a 300-move game takes about 200 KB, where one PNG per
  position took 7.6 MB. Buttons step back and forward, play and pause; a slider and the move list
  jump to a move; the move's text, the score and the move counter are shown. Element ids, for
  tests and scripts: ``#board`` (the canvas), ``#prev``, ``#next``, ``#first``, ``#last``, ``#play``, ``#speed``, ``#jump`` (the
  slider), ``#move-list`` (one ``li`` per position, ``data-step``), ``#step``, ``#total``,
  ``#move-text`` (the move that led here, ``start`` at step 0), ``#score``, ``#moves``,
  ``#result``.

Each writer writes a temporary file beside its output and renames it over the output when done:
a failed write leaves an old file as it was, and a symbolic link where the output goes is refused,
never followed. A trace of more than :data:`~solitaire_gym.rendering.MAX_RENDER_MOVES` moves is
refused before anything is drawn (a PNG of one position is drawn from any trace).
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from solitaire_gym.engine.variants import parse_code
from solitaire_gym.errors import SolitaireError
from solitaire_gym.files import FileFormatError, atomic_path
from solitaire_gym.rendering import MAX_RENDER_MOVES, image
from solitaire_gym.rendering.image import board_size, render_image

if TYPE_CHECKING:  # the type only: traces.py displays a trace with this module
    from solitaire_gym.traces import Trace

HOLD_LAST_S = 2.0  # the last position stays this long in a video


def check_length(trace: Trace) -> None:
    """:class:`~solitaire_gym.SolitaireError` for a trace too long to draw whole
    (:data:`~solitaire_gym.rendering.MAX_RENDER_MOVES`), before anything is drawn or written."""
    if len(trace.moves) > MAX_RENDER_MOVES:
        raise SolitaireError(
            f"the trace has {len(trace.moves)} moves; at most {MAX_RENDER_MOVES} are drawn as a "
            "video or a replay page (--png draws one position of any trace)"
        )


@contextlib.contextmanager
def _output(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary file beside ``path`` to write, renamed over ``path`` when the writer is done
    (:func:`solitaire_gym.files.atomic_path`): a failed write leaves an old file as it was, and
    a symbolic link at ``path`` is refused, never followed."""
    try:
        with atomic_path(path) as tmp:
            yield tmp
    except FileFormatError as e:
        raise SolitaireError(f"cannot write {e}") from None


def frames(trace: Trace) -> Iterator[np.ndarray]:
    """The ``(H, W, 3)`` uint8 picture of every position of ``trace``, start first."""
    for position in trace.positions:
        yield np.asarray(render_image(position), dtype=np.uint8)


def _palette(trace: Trace) -> Image.Image:
    """One palette for a whole game, from its first and last pictures (the last may say "Won!"):
    a board's colours never change, only where they lie. Quantising to it is fast and keeps
    GIF frames and PNGs small."""
    first, final = render_image(trace.positions[0]), render_image(trace.positions[-1])
    both = Image.new("RGB", (first.width, 2 * first.height))
    both.paste(first, (0, 0))
    both.paste(final, (0, first.height))
    return both.quantize(128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


def _paletted(trace: Trace, palette: Image.Image) -> Iterator[Image.Image]:
    for position in trace.positions:
        yield render_image(position).quantize(palette=palette, dither=Image.Dither.NONE)


MIN_FPS, MAX_FPS = 0.01, 1000.0  # a frame shows for 100 s at most, 1 ms at least


def check_fps(fps: object) -> float:
    """``fps`` as a float, or :class:`~solitaire_gym.SolitaireError` if it is not a number in
    ``MIN_FPS … MAX_FPS`` (a GIF's frame time is a whole number of milliseconds)."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.number)):
        raise SolitaireError(f"fps must be a number, not {type(fps).__name__}")
    if not MIN_FPS <= float(fps) <= MAX_FPS:  # NaN fails too
        raise SolitaireError(f"fps must lie in {MIN_FPS:g} … {MAX_FPS:g}, not {float(fps):g}")
    return float(fps)


def write_gif(trace: Trace, path: str | os.PathLike, *, fps: float = 4.0) -> Path:
    """An animated GIF of the game, ``fps`` positions a second, looping."""
    fps = check_fps(fps)
    check_length(trace)
    pictures = _paletted(trace, _palette(trace))
    step_ms = round(1000 / fps)
    durations = [step_ms] * len(trace.positions)
    durations[-1] = max(step_ms, round(HOLD_LAST_S * 1000))
    with _output(path) as tmp:
        next(pictures).save(
            tmp,
            format="GIF",
            save_all=True,
            append_images=pictures,
            duration=durations,
            loop=0,
            optimize=False,
        )
    return Path(path)


def write_mp4(trace: Trace, path: str | os.PathLike, *, fps: float = 4.0) -> Path:
    """An H.264 MP4 of the game, ``fps`` positions a second (needs imageio and imageio-ffmpeg)."""
    fps = check_fps(fps)
    try:
        import imageio.v2 as imageio
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise ImportError("MP4 needs imageio[ffmpeg]: pip install 'solitaire_gym[render]'") from e
    check_length(trace)
    hold = max(1, round(HOLD_LAST_S * fps))
    with _output(path) as tmp, imageio.get_writer(
        tmp, format="FFMPEG", mode="I", fps=fps, codec="libx264", pixelformat="yuv420p",
        macro_block_size=16, quality=8,
    ) as writer:  # fmt: skip
        frame = None
        for frame in frames(trace):
            writer.append_data(frame)
        for _ in range(hold - 1):
            writer.append_data(frame)
    return Path(path)


# ---- the replay page ---------------------------------------------------------------------------
_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
  body {{ margin: 0; font: 15px/1.4 "DejaVu Sans", system-ui, sans-serif; background: #0f2d1c;
         color: #eef3ee; }}
  header {{ padding: 10px 18px; background: #0b2315; display: flex; gap: 18px; align-items: baseline;
           flex-wrap: wrap; }}
  header h1 {{ font-size: 19px; margin: 0; }}
  header .code {{ font-family: "DejaVu Sans Mono", monospace; }}
  main {{ display: flex; gap: 18px; padding: 14px 18px; align-items: flex-start; flex-wrap: wrap; }}
  #board {{ display: block; max-width: 100%; height: auto; border-radius: 6px;
           box-shadow: 0 2px 10px #0008; }}
  aside {{ min-width: 280px; flex: 1; max-width: 420px; }}
  .status {{ display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin-bottom: 10px; }}
  .status span.v {{ font-weight: bold; font-family: "DejaVu Sans Mono", monospace; }}
  .controls {{ display: flex; gap: 6px; flex-wrap: wrap; align-items: center; margin-bottom: 8px; }}
  button, select {{ font: inherit; padding: 4px 10px; border-radius: 5px; border: 1px solid #5a8;
                    background: #1d4d32; color: #eef3ee; cursor: pointer; }}
  button:disabled {{ opacity: .45; cursor: default; }}
  #jump {{ width: 100%; margin: 6px 0 10px; }}
  #move-list {{ max-height: 420px; overflow-y: auto; margin: 0; padding: 4px 0 4px 3.2em;
               background: #0b2315; border-radius: 6px;
               font-family: "DejaVu Sans Mono", monospace; }}
  #move-list li {{ cursor: pointer; padding: 0 6px; }}
  #move-list li:hover {{ background: #1d4d32; }}
  #move-list li.current {{ background: #e8c547; color: #111; }}
  #result {{ color: #ffd640; font-weight: bold; }}
  .keys {{ color: #9bb; font-size: 13px; margin-top: 8px; }}
</style>
</head>
<body>
<header>
  <h1>{game}</h1><span class="code" id="code">{code}</span>
  <span id="agent">{agent}</span><span id="result"></span>
</header>
<main>
  <canvas id="board" role="img" aria-label="the board at the shown step" width="{width}" height="{height}"></canvas>
  <aside>
    <div class="status">
      <span>Step</span><span class="v"><span id="step">0</span> / <span id="total">{total}</span></span>
      <span>Move</span><span class="v" id="move-text">start</span>
      <span>Score</span><span class="v" id="score">{score}</span>
      <span>Moves</span><span class="v" id="moves">{counter}</span>
    </div>
    <div class="controls">
      <button id="first" title="first position (Home)">|&#x25C0;</button>
      <button id="prev" title="step back (&#x2190;)">&#x25C0; Back</button>
      <button id="play" title="play or pause (space)">Play</button>
      <button id="next" title="step forward (&#x2192;)">Forward &#x25B6;</button>
      <button id="last" title="last position (End)">&#x25B6;|</button>
      <select id="speed" title="speed">
        <option value="1000">1 move/s</option>
        <option value="500" selected>2 moves/s</option>
        <option value="250">4 moves/s</option>
        <option value="100">10 moves/s</option>
      </select>
    </div>
    <input id="jump" type="range" min="0" max="{total}" value="0" aria-label="jump to a move">
    <ol id="move-list" start="0">{items}</ol>
    <div class="keys">Keys: &#x2190; &#x2192; step, space play/pause, Home/End.</div>
  </aside>
</main>
<script id="replay-data" type="application/json">{data}</script>
<script>
(function () {{
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var last = data.frames.length - 1, step = 0, timer = null;
  function $(id) {{ return document.getElementById(id); }}
  var items = $("move-list").children;
  var ctx = $("board").getContext("2d"), sprites = {{}}, loading = 0;
  var FONTS = {{header: "15px", label: "11px", badge: "bold 13px", suit_big: "40px"}};
  var FAMILY = " 'DejaVu Sans', 'Segoe UI Symbol', sans-serif";
  var ALIGN = {{l: "left", m: "center", r: "right"}};
  var BASE = {{a: "top", m: "middle"}};
  function paint(k) {{
    // The operations of board_ops (solitaire_gym/rendering/image.py), in painting order.
    var W = data.size[1], ops = data.ops, frame = data.frames[k];
    ctx.fillStyle = data.colours.felt;
    ctx.fillRect(0, 0, W, data.size[0]);
    for (var i = 0; i < frame.length; i++) {{
      var op = ops[frame[i]];
      switch (op[0]) {{
        case "c": ctx.drawImage(sprites[op[1]], op[2], op[3]); break;
        case "s": ctx.drawImage(sprites[op[3]], op[1], op[2]); break;
        case "B": ctx.fillStyle = data.colours.barfill; ctx.fillRect(0, 0, W, data.header); break;
        case "l":
          ctx.strokeStyle = data.colours.slot; ctx.lineWidth = 1; ctx.beginPath();
          ctx.moveTo(op[1] + 0.5, op[2]); ctx.lineTo(op[3] + 0.5, op[4]); ctx.stroke(); break;
        case "t":
          ctx.font = FONTS[op[4]] + FAMILY; ctx.fillStyle = data.colours[op[5]];
          ctx.textAlign = ALIGN[op[6][0]]; ctx.textBaseline = BASE[op[6][1]];
          ctx.fillText(op[1], op[2], op[3]); break;
        case "b":
          ctx.font = FONTS.badge + FAMILY;
          var w = ctx.measureText(op[1]).width + 12;
          var cx = op[2] + data.card[0] / 2, cy = op[3] + data.card[1] - 16;
          ctx.fillStyle = data.colours.badge; ctx.beginPath();
          ctx.roundRect(cx - w / 2, cy - 9, w, 18, 9); ctx.fill();
          ctx.fillStyle = data.colours.bar; ctx.textAlign = "center"; ctx.textBaseline = "middle";
          ctx.fillText(op[1], cx, cy); break;
      }}
    }}
  }}
  function show(k) {{
    step = Math.max(0, Math.min(last, k));
    if (!loading) paint(step);
    $("step").textContent = step;
    $("move-text").textContent = step === 0 ? "start" : data.moves[step - 1];
    $("score").textContent = data.scores[step];
    $("moves").textContent = data.counters[step];
    $("jump").value = step;
    $("result").textContent = step === last && data.won ? "Won" : "";
    $("prev").disabled = $("first").disabled = step === 0;
    $("next").disabled = $("last").disabled = step === last;
    for (var i = 0; i < items.length; i++) items[i].classList.toggle("current", i === step);
    if (items[step]) items[step].scrollIntoView({{block: "nearest"}});
    if (step === last) pause();
  }}
  function pause() {{
    if (timer !== null) {{ clearInterval(timer); timer = null; }}
    $("play").textContent = "Play";
  }}
  function play() {{
    if (step === last) show(0);
    pause();
    $("play").textContent = "Pause";
    timer = setInterval(function () {{ show(step + 1); }}, Number($("speed").value));
  }}
  function toggle() {{ if (timer === null) play(); else pause(); }}
  $("first").onclick = function () {{ pause(); show(0); }};
  $("prev").onclick = function () {{ pause(); show(step - 1); }};
  $("next").onclick = function () {{ pause(); show(step + 1); }};
  $("last").onclick = function () {{ pause(); show(last); }};
  $("play").onclick = toggle;
  $("speed").onchange = function () {{ if (timer !== null) play(); }};
  $("jump").oninput = function () {{ pause(); show(Number($("jump").value)); }};
  $("move-list").onclick = function (e) {{
    var li = e.target.closest("li");
    if (li) {{ pause(); show(Number(li.dataset.step)); }}
  }};
  document.addEventListener("keydown", function (e) {{
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") {{ pause(); show(step + 1); }}
    else if (e.key === "ArrowLeft") {{ pause(); show(step - 1); }}
    else if (e.key === " ") {{ e.preventDefault(); toggle(); }}
    else if (e.key === "Home") {{ pause(); show(0); }}
    else if (e.key === "End") {{ pause(); show(last); }}
  }});
  Object.keys(data.sprites).forEach(function (key) {{
    var im = new Image();
    loading++;
    im.onload = function () {{ if (--loading === 0) paint(step); }};
    im.src = "data:image/png;base64," + data.sprites[key];
    sprites[key] = im;
  }});
  show(0);
}})();
</script>
</body>
</html>
"""


def _compact(v):
    """A number as JSON writes it shortest: 19 for 19.0, one decimal otherwise."""
    if isinstance(v, float):
        r = round(v, 1)
        return int(r) if r == int(r) else r
    return v


_SLOT_KEYS = {None: "s", "↻": "sr", 0: "s0", 1: "s1", 2: "s2", 3: "s3"}
_KINDS = {"card": "c", "slot": "s", "text": "t", "badge": "b", "bar": "B", "line": "l"}


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def replay_data(trace: Trace) -> dict:
    """What the replay page draws from: the sprites (base64 PNGs of the cards, the back and the
    empty places that the game shows), each distinct drawing operation once (``ops``), every
    position as the numbers of its operations (``frames``), and the texts beside the board."""
    ops: list[list] = []
    index: dict[tuple, int] = {}
    frames_ops = []
    size = None
    sprite_keys: dict[str, tuple] = {}  # key -> ("card", name) or ("slot", mark)
    for position in trace.positions:
        size, board = image.board_ops(position)
        frame = []
        for op in board:
            kind = op[0]
            if kind == "card":
                sprite_keys[op[1]] = ("card", op[1])
            elif kind == "slot":
                key = _SLOT_KEYS[op[3]]
                sprite_keys[key] = ("slot", op[3])
                op = (*op[:3], key)
            enc = (_KINDS[kind], *(_compact(v) for v in op[1:]))
            k = index.get(enc)
            if k is None:
                k = index[enc] = len(ops)
                ops.append(list(enc))
            frame.append(k)
        frames_ops.append(frame)
    sprites = {}
    for key, (kind, what) in sorted(sprite_keys.items()):
        picture = image.card_image(what) if kind == "card" else image.slot_image(what)
        buf = io.BytesIO()
        picture.save(buf, format="PNG", optimize=True)
        sprites[key] = base64.b64encode(buf.getvalue()).decode("ascii")
    return {
        "code": trace.code,
        "size": list(size),
        "card": [image.CARD_W, image.CARD_H],
        "header": image.HEADER,
        "colours": {
            "felt": _hex(image.FELT), "barfill": _hex(image.BAR), "bar": _hex(image.BAR_TEXT), "label": _hex(image.LABEL_TEXT),
            "won": _hex(image.WON_TEXT), "slot": _hex(image.SLOT), "badge": _hex(image.BADGE),
        },
        "sprites": sprites,
        "ops": ops,
        "frames": frames_ops,
        "moves": trace.moves,
        "scores": [trace.score_text(k) for k in range(len(trace.positions))],
        "counters": [p["moves"] for p in trace.positions],
        "won": trace.won,
    }  # fmt: skip


def html_page(trace: Trace) -> str:
    """The replay page of ``trace`` as one HTML string (see the module docstring); a trace of
    more than :data:`~solitaire_gym.rendering.MAX_RENDER_MOVES` moves is refused."""
    check_length(trace)
    variant, _ = parse_code(trace.code)
    height, width = board_size(trace.code)
    data = replay_data(trace)
    scores, counters = data["scores"], data["counters"]
    # Inside <script>, "</" would end the element: JSON allows it escaped.
    data_json = json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
    items = ['<li data-step="0">start</li>'] + [
        f'<li data-step="{k}">{html.escape(m)}</li>' for k, m in enumerate(trace.moves, 1)
    ]
    return _PAGE.format(
        title=html.escape(f"{trace.code} replay: solitaire_gym"),
        game=html.escape(variant.name),
        code=html.escape(trace.code),
        agent=html.escape(f"played by {trace.agent}" if trace.agent else ""),
        width=width,
        height=height,
        total=len(trace.positions) - 1,
        score=html.escape(scores[0]),
        counter=counters[0],
        items="".join(items),
        data=data_json,
    )


def write_html(trace: Trace, path: str | os.PathLike) -> Path:
    """Write the self-contained replay page of ``trace`` to ``path``."""
    page = html_page(trace)
    with _output(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return Path(path)


def write_png(trace: Trace, path: str | os.PathLike, *, step: int = -1) -> Path:
    """The picture of one position of ``trace`` (default: the last) as a PNG."""
    picture = render_image(trace.positions[step])
    with _output(path) as tmp:
        picture.save(tmp, format="PNG")
    return Path(path)
