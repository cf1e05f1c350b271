"""Shared pieces of the teacher's and the imitation's tests: a shard's records (what
``load_shards`` gives) made from teacher episodes. The episodes themselves are the fixture
``episodes`` (``conftest.py``)."""

from __future__ import annotations

import numpy as np

from agents.dataset import previous_actions


def teacher_data(episodes):
    ep = np.concatenate([np.full(len(e.labels), e.deal) for e in episodes])
    played = np.concatenate([e.played for e in episodes]).astype(np.int64)
    return {
        "obs": np.concatenate([e.obs for e in episodes]),
        "masks": np.concatenate([e.masks for e in episodes]),
        "labels": np.concatenate([e.labels for e in episodes]).astype(np.int64),
        "safe": np.concatenate([e.safe for e in episodes]),
        "played": played,
        "episode": ep,
        "prev": previous_actions(ep, played, episodes[0].masks.shape[1]),
    }
