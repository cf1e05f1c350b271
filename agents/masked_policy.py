"""A lighter masked categorical for MaskablePPO's MLP policy: the same distribution, less work.

sb3-contrib's ``MaskableCategorical`` normalises its logits three times for every masked
distribution (once when built, once when its masks are cleared, once when they are applied) and
checks its arguments each time. Profiled on SH1-C4 (1,278 actions, batch 1,024), those
normalisations and checks took a fifth of a training update. :class:`LeanMaskablePolicy` is
``MaskableActorCriticPolicy`` with :class:`LeanMaskableCategoricalDistribution`, which builds its
distribution once, from the masked logits, when it is first used: the same probabilities, log
probabilities, entropy and modes (a test compares them), the same parameters and names (so
:mod:`agents.ppo_weights` exports it unchanged).

``experiments/train.py`` trains with it (``ppo.policy: lean``, the default; ``sb3`` is the stock
policy); ``benchmarks/bench_training.py`` measures the two side by side.
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
    MaybeMasks,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch.distributions import Categorical

from agents.ppo_weights import HUGE_NEG


class _LeanCategorical(MaskableCategorical):
    """``MaskableCategorical`` built in one normalisation, with no argument checks."""

    def __init__(self, logits: torch.Tensor, masks: MaybeMasks = None) -> None:
        self.masks = None
        self._original_logits = logits
        self.apply_masking(masks)

    def apply_masking(self, masks: MaybeMasks) -> None:
        logits = self._original_logits
        if masks is None:
            self.masks = None
        else:
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device)
            self.masks = self.masks.reshape(logits.shape)
            huge = torch.tensor(HUGE_NEG, dtype=logits.dtype, device=logits.device)
            logits = torch.where(self.masks, logits, huge)
        self.__dict__.pop("probs", None)
        Categorical.__init__(self, logits=logits, validate_args=False)  # one normalisation


class LeanMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """``MaskableCategoricalDistribution`` whose distribution is built on first use: after
    ``apply_masking`` from the masked logits (one normalisation), else from the raw ones."""

    def __init__(self, action_dim: int) -> None:
        self._logits: torch.Tensor | None = None
        self._dist: _LeanCategorical | None = None
        super().__init__(action_dim)

    @property
    def distribution(self) -> _LeanCategorical | None:  # type: ignore[override]
        if self._dist is None and self._logits is not None:
            self._dist = _LeanCategorical(self._logits)
        return self._dist

    @distribution.setter
    def distribution(self, value: Any) -> None:
        self._dist = value

    def proba_distribution(self, action_logits: torch.Tensor):
        self._logits = action_logits.view(-1, self.action_dim)
        self._dist = None
        return self

    def apply_masking(self, masks: MaybeMasks) -> None:
        self._dist = _LeanCategorical(self._logits, masks)


class LeanMaskableActorCriticPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's ``MlpPolicy`` with :class:`LeanMaskableCategoricalDistribution`; discrete
    actions only (the action layer it builds is the stock one)."""

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_dist = LeanMaskableCategoricalDistribution(int(self.action_space.n))


LeanMaskablePolicy = LeanMaskableActorCriticPolicy
