"""MkDocs hooks (mkdocs.yml ``hooks:``): the pictures of the docs, drawn at build time with the
package's own renderer (``solitaire_gym.rendering.image``, the ``render`` extra), so they show
what the shipped code draws and never go stale. They are added to the site as generated files;
nothing is written into ``docs/``.

``python docs/hooks.py OUTDIR`` writes the same pictures into OUTDIR, to look at them.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from experiments.ppo_baselines import CONFIGS as CURVES  # the learning curves' PNGs

_MIDGAME = "t3>t4 t3>t1 t1>t7 t4:2>t1 t1>t7 t4>t7 t2>t4 t4:2>t3 t2>t4 t3:2>t9 t5>t9 draw draw"

# picture -> (game code, moves played from the deal). The moves are replayed through the Game
# API, so a rule change that makes one illegal stops the docs build.
PICTURES: dict[str, tuple[str, list[str]]] = {
    "images/double_solitaire.png": ("DS1-D1N-AAAAAAB", []),
    "images/solitaire_reflechi.png": ("TF1-D1N-AAAAAAB", []),
    "images/seahaven_towers.png": ("SH1-C4-AAAAAJ2", []),
    "images/seahaven_towers_1_cell.png": ("SH1-C1-AAAAAAI", []),
    "images/double_solitaire_draw3_midgame.png": (
        "DS1-D3N-AAAAAAB",
        _MIDGAME.split(),
    ),
}


# Figures committed with the results, shown as they are: site path -> repository path.
COPIES: dict[str, str] = {
    "images/results/win_rates.png": "experiments/results/summary/win_rates.png",
    "images/results/search_budget.png": "experiments/results/search_budget/budget.png",
    **{f"images/results/ppo_{v}.png": f"experiments/results/ppo_curves/{v}.png" for v in CURVES},
}
ROOT = Path(__file__).resolve().parent.parent


def picture(code: str, moves: list[str]) -> bytes:
    """The PNG of game ``code`` after ``moves``."""
    from PIL import Image

    from solitaire_gym import Game
    from solitaire_gym.rendering.image import render_position

    game = Game.from_code(code)
    for move in moves:
        game.play(move)
    buf = io.BytesIO()
    Image.fromarray(render_position(game.to_dict())).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    for uri, (code, moves) in PICTURES.items():
        files.append(File.generated(config, uri, content=picture(code, moves)))
    for uri, source in COPIES.items():
        files.append(File.generated(config, uri, content=(ROOT / source).read_bytes()))
    return files


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "site-pictures")
    for uri, (code, moves) in PICTURES.items():
        path = out / uri
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(picture(code, moves))
        print(path)
