"""The one factory of policy networks: :func:`build_net` maps an architecture record (a
checkpoint's ``arch``, or what training asks for) to its network class, checked first.

``arch["kind"]`` names the class (:data:`ARCHS`): ``"mlp"`` :class:`agents.networks.mlp.MLP`,
``"cards"`` :class:`agents.networks.cards.CardNet`; ``hidden`` and ``layers`` size it, and the
``cards`` network's options (``heads``, ``lookup``, ``memory``, ``memory_mode``, ``piles``,
``moves``) are passed on. A record that names no such network raises
:class:`agents.checkpoint.CheckpointError`. torch is imported on the first call, not with this
module.
"""

from __future__ import annotations

from typing import Any

from agents.checkpoint import CheckpointError
from agents.memory import MODES
from solitaire_gym.errors import shown

ARCHS = ("mlp", "cards")
HEADS = ("policy", "factored")


def build_net(arch: dict[str, Any], spec: dict[str, Any]):
    """The torch module of ``arch`` (``{"kind": "mlp" | "cards", "hidden": int, "layers": int}``
    and the ``cards`` options) for the game of ``spec``
    (:func:`agents.networks.spec.game_spec`), freshly initialised."""
    from agents.networks.cards import CardNet
    from agents.networks.mlp import MLP

    kind = arch.get("kind")
    hidden = arch.get("hidden")
    layers = arch.get("layers", 2)
    heads = arch.get("heads", "policy")
    lookup = arch.get("lookup", False)
    memory = arch.get("memory", False)
    memory_mode = arch.get("memory_mode", "count")
    piles = arch.get("piles", False)
    moves = arch.get("moves", False)
    for name, v in (("lookup", lookup), ("memory", memory), ("piles", piles), ("moves", moves)):
        if not isinstance(v, bool):
            raise CheckpointError(f"architecture {name}={shown(v)}: expected true or false")
        if v and kind != "cards":
            raise CheckpointError(f"{name}=true needs kind 'cards', not {shown(kind)}")
    if not isinstance(memory_mode, str) or memory_mode not in MODES:
        raise CheckpointError(f"architecture memory_mode={shown(memory_mode)}: expected one of "
                              f"{', '.join(MODES)}")  # fmt: skip
    if kind not in ARCHS:
        raise CheckpointError(f"architecture kind {shown(kind)} is not one of {list(ARCHS)}")
    if heads not in HEADS:
        raise CheckpointError(f"architecture heads {shown(heads)} is not one of {list(HEADS)}")
    if heads != "policy" and kind != "cards":
        raise CheckpointError(f"heads={shown(heads)} needs kind 'cards', not {shown(kind)}")
    # Python ints only, not is_int's numpy integers: arch is written into the checkpoint's JSON
    # metadata as given
    for name, v, hi in (("hidden", hidden, 4096), ("layers", layers, 8)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= hi:
            raise CheckpointError(f"architecture {name}={shown(v)}: expected an integer 1 … {hi}")
    if kind == "mlp":
        return MLP(spec, hidden, layers)
    return CardNet(spec, hidden, layers, heads=heads, lookup=lookup, memory=memory,
                   memory_mode=memory_mode, piles=piles, moves=moves)  # fmt: skip
