"""The ``"mlp"`` policy network: the observation vector through ``layers`` fully connected ReLU
layers of ``hidden`` units, then a linear layer to one score per action. The previous action's
learned embedding (zero at initialisation) is added to the first layer's output."""

from __future__ import annotations

from typing import Any

from torch import nn


class MLP(nn.Module):
    """The ``"mlp"`` network for the game of ``spec`` (:func:`agents.networks.spec.game_spec`)."""

    def __init__(self, spec: dict[str, Any], hidden: int, layers: int) -> None:
        super().__init__()
        d, n = spec["obs_dim"], spec["n_actions"]
        mods: list[nn.Module] = []
        width = d
        for _ in range(layers):
            mods += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        mods.append(nn.Linear(width, n))
        self.body = nn.Sequential(*mods)
        self.prev_emb = nn.Embedding(n + 1, hidden)  # the previous action (n: none)
        nn.init.zeros_(self.prev_emb.weight)

    def forward(self, obs, mask=None, prev=None):
        """Scores (B, N) of observations ``obs`` (B, D); with ``mask`` (B, N) bool, −inf for
        the illegal actions; ``prev`` (B,): the action played just before (N: none)."""
        x = self.body[0](obs)
        if prev is not None:
            x = x + self.prev_emb(prev)
        out = self.body[1:](x)
        return out if mask is None else out.masked_fill(~mask, float("-inf"))
