"""A position as readable text (``print(game)``, ``render_mode="ansi"``)."""

from __future__ import annotations

from typing import Any

from solitaire_gym.engine.cards import card_symbol, parse_card
from solitaire_gym.engine.scoring import score_text
from solitaire_gym.engine.variants import parse_code


def _show(name: str | None) -> str:
    if name is None:
        return "--"
    if name.endswith("*"):
        return "##"
    return card_symbol(parse_card(name))


def board_text(position: dict[str, Any], *, won: bool = False) -> str:
    """Text board of a position dict (``Game.to_dict()``): face-down cards are ``##``."""
    variant, _ = parse_code(position["code"])
    score = score_text(position["score"], variant.vegas)
    lines = [f"{variant.name}  {position['code']}  score {score}  moves {position['moves']}"]
    lines.append("foundations: " + " ".join(_show(x) for x in position["foundations"]))
    if "cells" in position:
        lines.append("cells:       " + " ".join(_show(x) for x in position["cells"]))
    else:
        waste = " ".join(_show(x) for x in position["waste"][-3:])
        lines.append(
            f"stock: {len(position['stock'])} cards   waste ({len(position['waste'])}): {waste}"
        )
    for i, col in enumerate(position["tableau"]):
        lines.append(f"t{i + 1:<3}" + " ".join(f"{_show(x):>3}" for x in col))
    if won:
        lines.append("won")
    return "\n".join(lines)
