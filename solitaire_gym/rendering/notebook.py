"""Inline display in Jupyter: what ``_repr_png_`` and ``_repr_html_`` of :class:`~solitaire_gym.Game`,
:class:`~solitaire_gym.traces.Trace` and the envs return.

A game or an env's current position shows as the board picture (:mod:`.image`) with a caption;
a trace as its replay page (:mod:`.replay`) in an ``<iframe>`` (its own document, so that several
replays in one notebook keep their controls apart). The pictures need Pillow (the ``render``
extra): without it ``_repr_png_`` returns None (Jupyter then shows another form) and
``_repr_html_`` the text board. ``gym.make`` returns the env inside Gymnasium's wrappers, which
do not pass these methods on: display ``env.unwrapped``.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from typing import Any

MAX_GAMES = 4  # a vector env shows its first games only


def _pillow() -> bool:
    try:
        import PIL  # noqa: F401
    except ImportError:
        return False
    return True


def png(position: dict[str, Any]) -> bytes | None:
    """The board picture of ``position`` as PNG bytes, or None without Pillow."""
    if not _pillow():
        return None
    from solitaire_gym.rendering.image import render_image

    buf = io.BytesIO()
    render_image(position).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def boards_html(positions: Sequence[dict[str, Any]], captions: Sequence[str]) -> str:
    """Pictures of ``positions`` side by side, each over its caption (text boards without
    Pillow)."""
    from solitaire_gym.rendering.ansi import board_text
    from solitaire_gym.rendering.image import is_won

    figures = []
    for position, caption in zip(positions, captions, strict=True):
        data = png(position)
        if data is None:
            body = f"<pre>{html.escape(board_text(position, won=is_won(position)))}</pre>"
        else:
            b64 = base64.b64encode(data).decode("ascii")
            body = (
                f'<img src="data:image/png;base64,{b64}" style="max-width:100%;height:auto" '
                f'alt="{html.escape(position["code"])}">'
            )
        figures.append(
            '<figure style="margin:0 8px 8px 0;display:inline-block;vertical-align:top">'
            f'{body}<figcaption style="font-family:monospace">{html.escape(caption)}'
            "</figcaption></figure>"
        )
    return "<div>" + "".join(figures) + "</div>"


def replay_html(trace: Any) -> str:
    """The replay page of ``trace`` in an ``<iframe>`` (``srcdoc``): the whole widget, inline."""
    from solitaire_gym.rendering.image import board_size
    from solitaire_gym.rendering.replay import html_page

    height, _ = board_size(trace.code)
    page = html.escape(html_page(trace), quote=True)
    return (
        f'<iframe srcdoc="{page}" style="width:100%;height:{height + 90}px;border:0" '
        f'title="{html.escape(trace.code)} replay" sandbox="allow-scripts"></iframe>'
    )
