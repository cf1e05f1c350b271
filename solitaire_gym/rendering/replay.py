"""A replayed trace as a GIF, an MP4 or a self-contained HTML replay page.

Every writer takes a :class:`~solitaire_gym.traces.Trace` (from
:func:`~solitaire_gym.traces.load_trace`) and draws one picture per position, from the start to
the position after the last move, with :mod:`solitaire_gym.rendering.image`. Frames are drawn and
written one at a time, so a long game does not hold every picture in memory.

- GIF: Pillow's GIF writer, one shared palette; the last frame is held for two seconds.
- MP4: imageio with imageio-ffmpeg (its wheel ships an ffmpeg binary), H.264, ``yuv420p``.
- HTML: one file that needs no network: each position is an inline base64 PNG; buttons step
  back and forward, play and pause; a slider and the move list jump to a move; the move's text,
  the score and the move counter are shown. Element ids, for tests and scripts: ``#board`` (the
  picture), ``#prev``, ``#next``, ``#first``, ``#last``, ``#play``, ``#speed``, ``#jump`` (the
  slider), ``#move-list`` (one ``li`` per position, ``data-step``), ``#step``, ``#total``,
  ``#move-text`` (the move that led here, ``start`` at step 0), ``#score``, ``#moves``,
  ``#result``.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image

from solitaire_gym.engine.variants import parse_code
from solitaire_gym.rendering.image import board_size, render_image
from solitaire_gym.traces import Trace

HOLD_LAST_S = 2.0  # the last position stays this long in a video


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


def write_gif(trace: Trace, path: str | os.PathLike, *, fps: float = 4.0) -> Path:
    """An animated GIF of the game, ``fps`` positions a second, looping."""
    path = Path(path)
    pictures = _paletted(trace, _palette(trace))
    step_ms = round(1000 / fps)
    durations = [step_ms] * len(trace.positions)
    durations[-1] = max(step_ms, round(HOLD_LAST_S * 1000))
    path.parent.mkdir(parents=True, exist_ok=True)
    next(pictures).save(
        path,
        format="GIF",
        save_all=True,
        append_images=pictures,
        duration=durations,
        loop=0,
        optimize=False,
    )
    return path


def write_mp4(trace: Trace, path: str | os.PathLike, *, fps: float = 4.0) -> Path:
    """An H.264 MP4 of the game, ``fps`` positions a second (needs imageio and imageio-ffmpeg)."""
    try:
        import imageio.v2 as imageio
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise ImportError("MP4 needs imageio[ffmpeg]: pip install 'solitaire_gym[render]'") from e
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    hold = max(1, round(HOLD_LAST_S * fps))
    with imageio.get_writer(
        path, format="FFMPEG", mode="I", fps=fps, codec="libx264", pixelformat="yuv420p",
        macro_block_size=16, quality=8,
    ) as writer:  # fmt: skip
        frame = None
        for frame in frames(trace):
            writer.append_data(frame)
        for _ in range(hold - 1):
            writer.append_data(frame)
    return path


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
  <img id="board" alt="the board at the shown step" width="{width}" height="{height}" src="{first}">
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
  function show(k) {{
    step = Math.max(0, Math.min(last, k));
    $("board").src = "data:image/png;base64," + data.frames[step];
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
  show(0);
}})();
</script>
</body>
</html>
"""


def html_page(trace: Trace) -> str:
    """The replay page of ``trace`` as one HTML string (see the module docstring)."""
    variant, _ = parse_code(trace.code)
    height, width = board_size(trace.code)
    frames_b64 = []
    for picture in _paletted(trace, _palette(trace)):
        buf = io.BytesIO()
        picture.save(buf, format="PNG")
        frames_b64.append(base64.b64encode(buf.getvalue()).decode("ascii"))
    scores = [trace.score_text(k) for k in range(len(trace.positions))]
    counters = [p["moves"] for p in trace.positions]
    data = {
        "code": trace.code,
        "frames": frames_b64,
        "moves": trace.moves,
        "scores": scores,
        "counters": counters,
        "won": trace.won,
    }
    # Inside <script>, "</" would end the element: JSON allows it escaped.
    data_json = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
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
        first="data:image/png;base64," + frames_b64[0],
        total=len(trace.positions) - 1,
        score=html.escape(scores[0]),
        counter=counters[0],
        items="".join(items),
        data=data_json,
    )


def write_html(trace: Trace, path: str | os.PathLike) -> Path:
    """Write the self-contained replay page of ``trace`` to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_page(trace), encoding="utf-8")
    return path


def write_png(trace: Trace, path: str | os.PathLike, *, step: int = -1) -> Path:
    """The picture of one position of ``trace`` (default: the last) as a PNG."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    render_image(trace.positions[step]).save(path, format="PNG")
    return path
