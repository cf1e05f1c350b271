"""A position as a picture (``render_mode="rgb_array"``, videos, the replay page). Needs Pillow.

:func:`render_position` draws a position dict (``Game.to_dict()``) as an ``(H, W, 3)`` ``uint8``
array. The size depends only on the game (Double Solitaire 848×768, Solitaire Réfléchi 544×656,
Seahaven Towers 768×640, width × height), never on the position, so a video of one episode has
frames of one size (both sides are multiples of 16, which video encoders want).

Layouts, as in the apps::

    Double Solitaire            stock  waste(fan)                     | f1 f2  ♠
                                t1 t2 t3 t4 t5 t6 t7 t8 t9            | f3 f4  ♥
                                                                      | f5 f6  ♦
                                                                      | f7 f8  ♣
    Solitaire Réfléchi          stock  waste(fan)  .   f1 f2 f3 f4
                                t1 t2 t3 t4 t5 t6 t7
    Seahaven Towers             f1 f2  .  c1 c2 c3 c4  .  f3 f4      (cells in play only)
                                t1 t2 t3 t4 t5 t6 t7 t8 t9 t10

A header shows the game, its code, the score (Vegas in dollars) and the move counter; a won game
says "Won!" over its empty tableau. Every pile
carries its name in the move notation (``t3``, ``f5``, ``c2``, ``w``) so a move reads off the
picture. Face-down cards show their back; the stock shows a back with its count; with draw 3 the
top three waste cards are fanned. Suit symbols come from DejaVu Sans (Debian's
``fonts-dejavu-core``) when it is installed, else they are drawn as shapes.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("drawing pictures needs Pillow: pip install 'solitaire_gym[render]'") from e

from solitaire_gym.engine.cards import RANKS, SUIT_SYMBOLS, parse_card
from solitaire_gym.engine.scoring import score_text
from solitaire_gym.engine.variants import DOUBLE, REFLECHI, SEAHAVEN, parse_code

# ---- geometry (pixels) ---------------------------------------------------------------------------
CARD_W, CARD_H = 64, 90
RADIUS = 7
GAP = 10  # between columns
PITCH = CARD_W + GAP
MARGIN = 14
HEADER = 34  # the top bar: game, code, score, moves
LABEL = 15  # room above a pile for its name
FAN_UP = 22  # overlap step of face-up cards in a column
FAN_DOWN = 9  # overlap step of face-down cards
FAN_WASTE = 40  # horizontal step of the draw-3 waste fan: rank and suit of each card show
SIZES = {DOUBLE: (768, 848), REFLECHI: (656, 544), SEAHAVEN: (640, 768)}  # (H, W)

# ---- colours ------------------------------------------------------------------------------------
FELT = (24, 112, 62)
BAR = (12, 64, 36)
BAR_TEXT = (245, 245, 235)
WON_TEXT = (255, 214, 64)
SLOT = (52, 146, 88)  # outline of an empty place
SLOT_MARK = (70, 160, 104)  # the faint suit in an empty foundation
LABEL_TEXT = (186, 226, 200)
FACE = (252, 252, 248)
EDGE = (110, 110, 110)
RED = (204, 18, 30)
BLACK = (18, 18, 18)
BACK = (36, 76, 168)
BACK_LINE = (92, 132, 214)
BADGE = (16, 30, 70)

FONT_DIR = "/usr/share/fonts/truetype/dejavu"


# ---- fonts --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Fonts:
    rank: Any
    suit_small: Any
    suit_big: Any
    header: Any
    label: Any
    badge: Any
    glyphs: bool  # True when the font draws ♠♥♦♣


def _font(name: str, size: int):
    path = os.path.join(FONT_DIR, name)
    if os.path.exists(path):
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


@functools.cache
def _fonts(use_glyphs: bool = True) -> _Fonts:
    glyphs = use_glyphs and os.path.exists(os.path.join(FONT_DIR, "DejaVuSans.ttf"))
    return _Fonts(
        rank=_font("DejaVuSansCondensed-Bold.ttf", 17),
        suit_small=_font("DejaVuSans.ttf", 16),
        suit_big=_font("DejaVuSans.ttf", 40),
        header=_font("DejaVuSans.ttf", 15),
        label=_font("DejaVuSans.ttf", 11),
        badge=_font("DejaVuSans-Bold.ttf", 13),
        glyphs=glyphs,
    )


# ---- suits --------------------------------------------------------------------------------------
def _suit_shape(draw: ImageDraw.ImageDraw, suit: int, cx: float, cy: float, size: float, fill):
    """A suit drawn with shapes (for when no font has the symbols), centred on (cx, cy)."""
    r = size / 4
    if suit == 2:  # diamond
        draw.polygon(
            [(cx, cy - 2 * r), (cx + 1.45 * r, cy), (cx, cy + 2 * r), (cx - 1.45 * r, cy)], fill
        )
    elif suit == 1:  # heart: two lobes and a point
        draw.ellipse([cx - 2 * r, cy - 1.6 * r, cx, cy + 0.4 * r], fill)
        draw.ellipse([cx, cy - 1.6 * r, cx + 2 * r, cy + 0.4 * r], fill)
        draw.polygon(
            [(cx - 1.93 * r, cy - 0.25 * r), (cx + 1.93 * r, cy - 0.25 * r), (cx, cy + 2 * r)], fill
        )
    elif suit == 0:  # spade: a point, two lobes and a stem
        draw.polygon(
            [(cx, cy - 2 * r), (cx + 1.93 * r, cy + 0.45 * r), (cx - 1.93 * r, cy + 0.45 * r)], fill
        )
        draw.ellipse([cx - 2 * r, cy - 0.4 * r, cx, cy + 1.6 * r], fill)
        draw.ellipse([cx, cy - 0.4 * r, cx + 2 * r, cy + 1.6 * r], fill)
        draw.polygon(
            [(cx, cy + 0.6 * r), (cx + 0.8 * r, cy + 2.1 * r), (cx - 0.8 * r, cy + 2.1 * r)], fill
        )
    else:  # club: three leaves and a stem
        draw.ellipse([cx - 0.95 * r, cy - 2 * r, cx + 0.95 * r, cy - 0.1 * r], fill)
        draw.ellipse([cx - 2 * r, cy - 0.5 * r, cx - 0.1 * r, cy + 1.4 * r], fill)
        draw.ellipse([cx + 0.1 * r, cy - 0.5 * r, cx + 2 * r, cy + 1.4 * r], fill)
        draw.polygon(
            [(cx, cy - 0.2 * r), (cx + 0.8 * r, cy + 2.1 * r), (cx - 0.8 * r, cy + 2.1 * r)], fill
        )


def _suit(draw, fonts: _Fonts, suit: int, cx: float, cy: float, big: bool, fill) -> None:
    if fonts.glyphs:
        font = fonts.suit_big if big else fonts.suit_small
        draw.text((cx, cy), SUIT_SYMBOLS[suit], font=font, fill=fill, anchor="mm")
    else:
        _suit_shape(draw, suit, cx, cy, 34 if big else 13, fill)


# ---- cards (drawn once, pasted many times) --------------------------------------------------------
def _blank(fill, outline) -> Image.Image:
    img = Image.new("RGBA", (CARD_W, CARD_H), (0, 0, 0, 0))
    ImageDraw.Draw(img).rounded_rectangle(
        [0, 0, CARD_W - 1, CARD_H - 1], RADIUS, fill=fill, outline=outline, width=1
    )
    return img


@functools.cache
def _face(card: int, use_glyphs: bool = True) -> Image.Image:
    fonts = _fonts(use_glyphs)
    suit, rank = divmod(card, 13)
    colour = RED if suit in (1, 2) else BLACK
    img = _blank(FACE, EDGE)
    d = ImageDraw.Draw(img)
    text = "10" if RANKS[rank] == "T" else RANKS[rank]
    d.text((4, 2), text, font=fonts.rank, fill=colour)
    right = 4 + d.textlength(text, font=fonts.rank)
    _suit(d, fonts, suit, right + 7, 12, False, colour)
    _suit(d, fonts, suit, CARD_W / 2, CARD_H / 2 + 10, True, colour)
    return img


@functools.cache
def _back() -> Image.Image:
    pattern = Image.new("RGBA", (CARD_W, CARD_H), BACK)
    d = ImageDraw.Draw(pattern)
    for k in range(-CARD_H, CARD_W, 8):  # a diagonal lattice
        d.line([(k, 0), (k + CARD_H, CARD_H)], BACK_LINE)
        d.line([(k, CARD_H), (k + CARD_H, 0)], BACK_LINE)
    mask = Image.new("L", (CARD_W, CARD_H), 0)
    ImageDraw.Draw(mask).rounded_rectangle([7, 7, CARD_W - 8, CARD_H - 8], RADIUS - 4, fill=255)
    img = _blank(BACK, (235, 235, 245))
    img.paste(pattern, (0, 0), mask)
    ImageDraw.Draw(img).rounded_rectangle(
        [5, 5, CARD_W - 6, CARD_H - 6], RADIUS - 3, outline=BACK_LINE, width=1
    )
    return img


# ---- the board ------------------------------------------------------------------------------------
# A board is laid out once as a list of drawing operations (``board_ops``), and painted from that
# list: by Pillow here, by the replay page's script in the browser (``replay.py``). Operations:
#   ("bar",)                                 the header bar
#   ("text", text, x, y, font, colour, anchor)  font: a field of _Fonts; anchor as Pillow's
#   ("card", name, x, y)                     a card (``"AS"``) or a back (``"*"``)
#   ("slot", x, y, mark)                     an empty place; mark: None, a suit 0-3 or "↻"
#   ("badge", text, x, y)                    a count in an oval at the bottom of a card
#   ("line", x0, y0, x1, y1)                 a rule in the slot colour
TEXT_COLOURS = {"bar": BAR_TEXT, "label": LABEL_TEXT, "won": WON_TEXT}


class _Board:
    """Lays a board out as drawing operations (see above)."""

    def __init__(self, variant, size: tuple[int, int]) -> None:
        self.variant = variant
        self.size = size
        self.ops: list[tuple] = []

    def card(self, name: str, x: float, y: float) -> None:
        self.ops.append(("card", "*" if name.endswith("*") else name.upper(), int(x), int(y)))

    def slot(self, x: float, y: float, mark: int | str | None = None) -> None:
        self.ops.append(("slot", x, y, mark))

    def label(self, text: str, x: float, y: float) -> None:
        self.ops.append(("text", text, x + 2, y - LABEL + 1, "label", "label", "la"))

    def badge(self, text: str, x: float, y: float) -> None:
        self.ops.append(("badge", text, x, y))

    def pile(self, top: str | None, x: float, y: float, suit: int | None = None) -> None:
        if top is None:
            self.slot(x, y, suit)
        else:
            self.card(top, x, y)

    def column(self, cards: list[str], x: float, y: float, bottom: float) -> None:
        if not cards:
            self.slot(x, y)
            return
        down = sum(1 for c in cards if c.endswith("*"))
        up = len(cards) - down
        # Squeeze the column, face-down part first, when it would run off the picture.
        room = bottom - y - CARD_H
        step_down, step_up = FAN_DOWN, FAN_UP
        need = down * step_down + max(up - 1, 0) * step_up
        if need > room and up > 1:
            step_up = max(6.0, (room - down * step_down) / (up - 1))
            need = down * step_down + (up - 1) * step_up
        if need > room and down:
            step_down = max(2.0, (room - max(up - 1, 0) * step_up) / down)
        for c in cards:
            self.card(c, x, y)
            y += step_down if c.endswith("*") else step_up

    def header(self, position: dict[str, Any]) -> None:
        w = self.size[1]
        self.ops.append(("bar",))
        left = f"{self.variant.name}   {position['code']}"
        self.ops.append(("text", left, MARGIN, HEADER / 2, "header", "bar", "lm"))
        right = (
            f"Score {score_text(position['score'], self.variant.vegas)}"
            f"     Moves {position['moves']}"
        )
        self.ops.append(("text", right, w - MARGIN, HEADER / 2, "header", "bar", "rm"))

    def stock_and_waste(self, position: dict[str, Any], x: float, y: float) -> None:
        stock, waste = position["stock"], position["waste"]
        self.label(f"stock {len(stock)}", x, y)
        if stock:
            self.card("AS*", x, y)  # a back; which card does not show
            self.badge(str(len(stock)), x, y)
        else:
            # Empty stock: the app's turn-over sign, or nothing more in Vegas (no turn-over).
            self.slot(x, y, None if self.variant.vegas else "↻")
        wx = x + PITCH
        self.label(f"w {len(waste)}", wx, y)
        shown = waste[-3:] if self.variant.draw == 3 else waste[-1:]
        if not shown:
            self.slot(wx, y)
        for i, c in enumerate(shown):
            self.card(c, wx + i * FAN_WASTE, y)


def _draw_slot(draw, fonts: _Fonts, x: float, y: float, mark: int | str | None) -> None:
    draw.rounded_rectangle([x, y, x + CARD_W - 1, y + CARD_H - 1], RADIUS, outline=SLOT, width=2)
    if isinstance(mark, int):
        _suit(draw, fonts, mark, x + CARD_W / 2, y + CARD_H / 2, True, SLOT_MARK)
    elif mark:
        draw.text(
            (x + CARD_W / 2, y + CARD_H / 2), mark, font=fonts.suit_big, fill=SLOT_MARK,
            anchor="mm",
        )  # fmt: skip


def slot_image(mark: int | str | None, use_glyphs: bool = True) -> Image.Image:
    """An empty place on a transparent ground, as a picture (for the replay page)."""
    img = Image.new("RGBA", (CARD_W, CARD_H), (0, 0, 0, 0))
    _draw_slot(ImageDraw.Draw(img), _fonts(use_glyphs), 0, 0, mark)
    return img


def card_image(name: str, use_glyphs: bool = True) -> Image.Image:
    """A card (``"AS"``) or a back (``"*"``) as an RGBA picture of ``CARD_W`` × ``CARD_H``."""
    return _back() if name == "*" else _face(parse_card(name), use_glyphs)


def paint(ops: list[tuple], size: tuple[int, int], *, use_glyphs: bool = True) -> Image.Image:
    """Pillow's painting of drawing operations (:func:`board_ops`) on a ``size`` (H, W) board."""
    fonts = _fonts(use_glyphs)
    img = Image.new("RGB", (size[1], size[0]), FELT)
    draw = ImageDraw.Draw(img)
    for op in ops:
        kind = op[0]
        if kind == "card":
            im = card_image(op[1], use_glyphs)
            img.paste(im, (op[2], op[3]), im)
        elif kind == "slot":
            _draw_slot(draw, fonts, op[1], op[2], op[3])
        elif kind == "text":
            _, text, x, y, font, colour, anchor = op
            draw.text(
                (x, y), text, font=getattr(fonts, font), fill=TEXT_COLOURS[colour], anchor=anchor
            )
        elif kind == "badge":
            _, text, x, y = op
            w = draw.textlength(text, font=fonts.badge) + 12
            cx, cy = x + CARD_W / 2, y + CARD_H - 16
            draw.rounded_rectangle([cx - w / 2, cy - 9, cx + w / 2, cy + 9], 9, fill=BADGE)
            draw.text((cx, cy), text, font=fonts.badge, fill=BAR_TEXT, anchor="mm")
        elif kind == "bar":
            draw.rectangle([0, 0, size[1], HEADER - 1], fill=BAR)
        elif kind == "line":
            draw.line([(op[1], op[2]), (op[3], op[4])], SLOT, 1)
        else:  # pragma: no cover - the list comes from board_ops
            raise ValueError(f"unknown drawing operation {kind!r}")
    return img


def board_size(code: str) -> tuple[int, int]:
    """``(height, width)`` of the pictures of a game (``"SH1-C2-AAAAAAB"`` or its prefix's game)."""
    variant, _ = parse_code(code)
    return SIZES[variant.game]


def is_won(position: dict[str, Any]) -> bool:
    """Every foundation up to its King: the whole deck is there."""
    return all(f is not None and f[0].upper() == "K" for f in position["foundations"])


def board_ops(position: dict[str, Any]) -> tuple[tuple[int, int], list[tuple]]:
    """The board of ``position`` laid out: its size ``(H, W)`` and its drawing operations, in
    painting order (see the comment above :class:`_Board`)."""
    variant, _ = parse_code(position["code"])
    size = SIZES[variant.game]
    b = _Board(variant, size)
    b.header(position)
    top = HEADER + 8 + LABEL  # top row of piles
    tab = top + CARD_H + 10 + LABEL  # tableau
    bottom = size[0] - MARGIN
    found = position["foundations"]
    if variant.game == DOUBLE:
        b.stock_and_waste(position, MARGIN, top)
        fx = MARGIN + 9 * PITCH + 8
        b.ops.append(("line", fx - 9, HEADER + 8, fx - 9, bottom))
        for row in range(4):  # one row per suit, ♠ ♥ ♦ ♣, two piles each
            y = top + row * (CARD_H + LABEL + 8)
            for k in range(2):
                p = 2 * row + k
                b.label(f"f{p + 1}", fx + k * PITCH, y)
                b.pile(found[p], fx + k * PITCH, y, suit=row)
        cols_x = MARGIN
    elif variant.game == REFLECHI:
        b.stock_and_waste(position, MARGIN, top)
        for p in range(4):
            x = MARGIN + (3 + p) * PITCH
            b.label(f"f{p + 1}", x, top)
            b.pile(found[p], x, top, suit=p)
        cols_x = MARGIN
    else:
        cols_x = (size[1] - (10 * PITCH - GAP)) / 2
        for p in range(4):
            x = cols_x + (p if p < 2 else p + 6) * PITCH
            b.label(f"f{p + 1}", x, top)
            b.pile(found[p], x, top, suit=p)
        cells = position["cells"]  # only the cells in play: removed ones are not drawn
        x0 = cols_x + (5 - len(cells) / 2) * PITCH
        for k, c in enumerate(cells):
            b.label(f"c{k + 1}", x0 + k * PITCH, top)
            b.pile(c, x0 + k * PITCH, top)
    for i, col in enumerate(position["tableau"]):
        x = cols_x + i * PITCH
        b.label(f"t{i + 1}", x, tab)
        b.column(col, x, tab, bottom)
    if is_won(position):  # the tableau is empty then: the word stands over it
        cx = cols_x + (len(position["tableau"]) * PITCH - GAP) / 2
        b.ops.append(("text", "Won!", cx, (tab + bottom) / 2, "suit_big", "won", "mm"))
    return size, b.ops


def render_image(position: dict[str, Any], *, use_glyphs: bool = True) -> Image.Image:
    """The picture of ``position`` as a Pillow image (see :func:`render_position`)."""
    size, ops = board_ops(position)
    return paint(ops, size, use_glyphs=use_glyphs)


def render_position(position: dict[str, Any], *, use_glyphs: bool = True) -> np.ndarray:
    """The picture of a position dict (``Game.to_dict()``, ``env.to_dict()``) as an
    ``(H, W, 3)`` ``uint8`` array; ``H, W`` depend only on the game (see :func:`board_size`).
    ``use_glyphs=False`` draws the suits as shapes even when a font with the symbols is there.

    >>> from solitaire_gym import Game
    >>> render_position(Game.from_code("SH1-C1-AAAAAJ2").to_dict()).shape
    (640, 768, 3)
    """
    return np.asarray(render_image(position, use_glyphs=use_glyphs), dtype=np.uint8)
