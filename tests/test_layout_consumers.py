"""Every consumer of the observation reads its offsets from the layout (``obs_layout``,
``observation.layout``), never from a copied constant.

The test moves every feature: each card row gets junk values in front of it (so the columns, the
foundation flag, the depth … all move, and the rows grow wider), and junk values lie between the
card block and the pile block (so every pile feature moves). The envs are patched to hand out
observations in that layout and to announce it (``EnvCore.layout``, ``observation.layout`` and
every module that imported it by name). A consumer that reads the layout plays and counts
exactly as before; one that copied an offset reads junk and does not (the control below shows it).

A new consumer of the observation (a network that embeds cards or piles, a statistic, a
renderer) belongs in :data:`CONSUMERS`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pytest

from solitaire_gym.envs import core as core_module
from solitaire_gym.envs import observation
from solitaire_gym.envs.observation import HEIGHT_SCALE, Layout

PAD_ROW = 3  # junk features in front of every card row
PAD_GAP = 7  # junk features between the card block and the pile block
JUNK = 0.625
CARD_FIELDS = ("columns", "found", "waste", "stock", "cell", "unseen", "depth", "down")
PILE_FIELDS = ("lengths", "downs", "heights", "stock_size", "stock_unseen", "waste_size",
               "cell_empty", "empty_columns", "size")  # fmt: skip
ORIGINAL_LAYOUT = observation.layout


def test_the_relayout_knows_every_field():
    # a new layout field must be placed here too, or the test would not move it
    assert {"width", *CARD_FIELDS, *PILE_FIELDS} == set(Layout._fields)


def moved(lay: Layout) -> Layout:
    """``lay`` with every feature moved (see the module docstring)."""
    n = lay.lengths // lay.width
    width = lay.width + PAD_ROW
    shift = n * width + PAD_GAP - lay.lengths
    d = lay._asdict()
    d["width"] = width
    for k in CARD_FIELDS:
        d[k] = d[k] + PAD_ROW if d[k] >= 0 else d[k]
    for k in PILE_FIELDS:
        d[k] = d[k] + shift if d[k] >= 0 else d[k]
    return Layout(**d)


def convert(obs: np.ndarray, lay: Layout, new: Layout) -> np.ndarray:
    """Observations ``(..., lay.size)`` in layout ``new`` (junk where ``new`` adds room)."""
    n = lay.lengths // lay.width
    lead = obs.shape[:-1]
    out = np.full((*lead, new.size), JUNK, np.float32)
    cards = obs[..., : lay.lengths].reshape(*lead, n, lay.width)
    out[..., : n * new.width].reshape(*lead, n, new.width)[..., PAD_ROW:] = cards
    out[..., new.lengths :] = obs[..., lay.lengths :]
    return out


@pytest.fixture
def moved_layout(monkeypatch):
    """Patch the layout and the envs' observations to the moved layout."""

    def layout(cfg):
        return moved(ORIGINAL_LAYOUT(cfg))

    for module in list(sys.modules.values()):
        if getattr(module, "layout", None) is ORIGINAL_LAYOUT:
            monkeypatch.setattr(module, "layout", layout)
    cls = core_module.EnvCore
    init = cls.__init__

    def patched_init(self, opts, num):
        init(self, opts, num)  # self.layout: the moved one (core's ``layout`` is patched)
        self.raw_layout = ORIGINAL_LAYOUT(self.cfg)
        self.raw = np.zeros((num, self.raw_layout.size), np.float32)  # what the kernels write
        self.obs = convert(self.raw, self.raw_layout, self.layout)

    def through_raw(method):
        def run(self, *args, **kwargs):
            self.obs = self.raw
            out = method(self, *args, **kwargs)
            self.raw = self.obs
            self.obs = convert(self.raw, self.raw_layout, self.layout)
            return out

        return run

    monkeypatch.setattr(cls, "__init__", patched_init)
    for name in ("refresh", "step", "detach"):
        monkeypatch.setattr(cls, name, through_raw(getattr(cls, name)))
    yield


# ---- consumers ----------------------------------------------------------------------------------
def greedy_games(tag: str) -> list:
    from agents.greedy import GreedyAgent
    from agents.play import VARIANTS, play_deals

    game, opts = VARIANTS[tag]
    res = play_deals(GreedyAgent(game, opts), game, opts, range(4), max_episode_steps=150)
    return [(r.won, r.score, r.moves, r.foundation, r.end) for r in res]


def training_statistics(tag: str) -> list:
    """What a training run logs: each ended episode's foundation cards, win and return."""
    from agents.config import check_config
    from agents.play import VARIANTS
    from agents.training import make_train_env

    game, opts = VARIANTS[tag]
    cfg = check_config({"name": "t", "game": game, "options": opts, "total_timesteps": 64,
                        "num_envs": 4, "max_episode_steps": 30,
                        "ppo": {"n_steps": 16, "batch_size": 64}})  # fmt: skip
    env, _ = make_train_env(cfg, seed=1)
    env.reset()
    rng = np.random.default_rng(1)
    out = []
    for _ in range(70):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        _, rewards, dones, infos = env.step(acts)
        for i in np.flatnonzero(dones).tolist():
            out.append((infos[i]["foundation_cards"], infos[i]["won"], infos[i]["episode"]["r"]))
    assert out
    return out


def env_layout_reading(tag: str) -> list:
    """The single and vector envs: foundation heights read at ``obs_layout`` match ``info``."""
    from agents.play import VARIANTS
    from solitaire_gym.envs import SolitaireVectorEnv
    from solitaire_gym.envs.solitaire_env import SolitaireEnv

    game, opts = VARIANTS[tag]
    piles = 8 if tag.startswith("DS") else 4
    out = []
    env = SolitaireEnv(game, **opts)
    obs, info = env.reset(seed=2)
    vec = SolitaireVectorEnv(3, game, **opts)
    vobs, vinfo = vec.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(40):
        lay = env.obs_layout
        assert obs.shape == (lay.size,) == env.observation_space.shape
        cards = obs[lay.heights : lay.heights + piles] * HEIGHT_SCALE
        assert round(float(cards.sum())) == info["foundation_cards"]
        vlay = vec.obs_layout
        vcards = vobs[:, vlay.heights : vlay.heights + piles].sum(axis=1) * HEIGHT_SCALE
        np.testing.assert_array_equal(np.rint(vcards), vinfo["foundation_cards"])
        out.append((info["foundation_cards"], *vinfo["foundation_cards"].tolist()))
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            obs, info = env.reset(seed=3)
        acts = np.array(
            [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in vinfo["action_mask"]]
        )
        vobs, _, _, _, vinfo = vec.step(acts)
    return out


CONSUMERS: dict[str, Callable[[str], list]] = {
    "greedy agent": greedy_games,
    "training statistics": training_statistics,
    "env observations": env_layout_reading,
}


@pytest.mark.parametrize("tag", ["SH1-C4", "TF1-D3N", "DS1-D1N"])
@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_consumers_follow_a_moved_layout(name, tag, request):
    consumer = CONSUMERS[name]
    before = consumer(tag)
    request.getfixturevalue("moved_layout")
    assert observation.layout is not ORIGINAL_LAYOUT  # the patch is in force
    assert consumer(tag) == before


def copied_offsets_reading(tag: str) -> list:
    """A consumer that copies the foundation heights' offset (what training once did)."""
    from agents.play import VARIANTS
    from solitaire_gym.envs.solitaire_env import SolitaireEnv

    game, opts = VARIANTS[tag]
    env = SolitaireEnv(game, **opts)
    obs, info = env.reset(seed=2)
    at = COPIED[tag]
    rng = np.random.default_rng(2)
    out = []
    for _ in range(40):
        out.append(round(float(obs[at : at + 4].sum() * HEIGHT_SCALE)))
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            break
    return out


COPIED = {"SH1-C4": 16 * 52 + 10}  # Seahaven's foundation heights, copied from today's layout


def test_the_control_a_copied_offset_is_caught(request):
    assert COPIED["SH1-C4"] == env_heights("SH1-C4")  # the copy is right today
    before = copied_offsets_reading("SH1-C4")
    request.getfixturevalue("moved_layout")
    assert copied_offsets_reading("SH1-C4") != before


def env_heights(tag: str) -> int:
    from agents.play import VARIANTS
    from solitaire_gym.envs.solitaire_env import SolitaireEnv

    game, opts = VARIANTS[tag]
    return SolitaireEnv(game, **opts).obs_layout.heights
