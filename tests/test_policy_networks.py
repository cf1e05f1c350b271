"""The policy networks (``agents/policy.py``): the depth of the cards network's action MLP, the
factored heads and their play rules, and what the ``lookup``, ``moves`` and ``piles`` networks
read of a position, checked against the positions of random play."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.play import VARIANTS  # noqa: E402
from agents.policy import (  # noqa: E402
    CheckpointError,
    PolicyAgent,
    build_net,
    game_spec,
    load_policy,
    rule_scores,
    save_policy,
)
from agents.teacher import teach_deal  # noqa: E402
from solitaire_gym.engine.variants import G_COLS  # noqa: E402
from solitaire_gym.envs.core import EVAL_SPLIT_END, EnvOptions  # noqa: E402

SH = VARIANTS["SH1-C4"]


def test_layers_deepen_the_cards_network_action_mlp(tmp_path):
    """``layers`` is the depth of a cards network's action MLP: each layer past the first adds
    weights and changes the scores; one layer is the network with no such weights at all (as
    every one-layer checkpoint was saved). A checkpoint that records more layers than its
    weights hold is refused by name, not loaded half-initialised."""
    spec = game_spec(*SH)
    obs = np.random.default_rng(1).random((4, spec["obs_dim"]), dtype=np.float32)
    nets, scores = {}, {}
    for layers in (1, 2, 3):
        torch.manual_seed(0)
        nets[layers] = build_net({"kind": "cards", "hidden": 16, "layers": layers}, spec)
        with torch.no_grad():
            scores[layers] = nets[layers](torch.from_numpy(obs)).numpy()
    head = {n: {k for k in net.state_dict() if k.startswith("head.")} for n, net in nets.items()}
    assert head[1] == set() and len(head[2]) == 2 and len(head[3]) == 4
    # made last, the extra layers leave every other weight's initialisation as it was
    shared = nets[1].state_dict()
    assert all(torch.equal(v, nets[2].state_dict()[k]) for k, v in shared.items())
    assert not np.allclose(scores[1], scores[2]) and not np.allclose(scores[2], scores[3])
    p = tmp_path / "one.npz"
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4",
            "arch": {"kind": "cards", "hidden": 16, "layers": 1}}  # fmt: skip
    save_policy(p, nets[1], meta)
    z = dict(np.load(p))
    m = json.loads(bytes(z["meta"]).decode())
    m["arch"]["layers"] = 2
    z["meta"] = np.frombuffer(json.dumps(m).encode(), np.uint8)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, **z)
    with pytest.raises(CheckpointError, match="do not fit architecture"):
        load_policy(wrong)


def test_factored_network_play_rules_and_checkpoint(tmp_path):
    spec = game_spec(*SH)
    arch = {"kind": "cards", "hidden": 16, "layers": 1, "heads": "factored"}
    torch.manual_seed(0)
    net = build_net(arch, spec)
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4", "arch": arch,
            "play": {"rule": "factored", "threshold": 0.5}}  # fmt: skip
    p = tmp_path / "f.npz"
    save_policy(p, net, meta)
    agent = load_policy(p, game=SH[0], options=SH[1])
    e = teach_deal(*SH, EVAL_SPLIT_END + 1, max_steps=5)
    obs, masks = e.obs, e.masks
    with torch.no_grad():
        pol, rank, safe = (t.numpy() for t in net(torch.from_numpy(obs), torch.from_numpy(masks),
                                                   heads=True))  # fmt: skip
    assert np.isneginf(rank[~masks]).all() and np.isfinite(rank[masks]).all()
    s = agent.scores(obs, masks)
    assert np.array_equal(s.argmax(1), rule_scores("factored", 0.5, pol, rank, safe).argmax(1))
    # the rule by hand: the best rank score among the moves with winnability >= 0.5, or the
    # best of all when there is none
    for i in range(len(obs)):
        legal = np.flatnonzero(masks[i])
        ok = legal[1 / (1 + np.exp(-safe[i, legal])) >= 0.5]
        pick = ok if ok.size else legal
        assert s[i].argmax() == pick[np.argmax(rank[i, pick])]
    # bad play rules are refused with the checkpoint's name, and a rule needs its heads
    for play, msg in (({"rule": "best"}, "play rule 'best'"),
                      ({"rule": "veto", "threshold": 2}, "threshold"),
                      ({"rule": "veto", "threshold": True}, "threshold")):  # fmt: skip
        save_policy(p, net, {**meta, "play": play})
        with pytest.raises(CheckpointError, match=msg):
            load_policy(p)
    plain = build_net({"kind": "cards", "hidden": 16, "layers": 1}, spec)
    with pytest.raises(CheckpointError, match="needs a network with heads='factored'"):
        PolicyAgent(plain, {**meta, "arch": {"kind": "cards", "hidden": 16}})
    with pytest.raises(CheckpointError, match="needs kind 'cards'"):
        build_net({"kind": "mlp", "hidden": 8, "heads": "factored"}, spec)


@pytest.mark.parametrize("variant", ["SH1-C4", "TF1-D1N", "DS1-D1N"])
def test_lookup_network_finds_the_card_each_action_moves(variant):
    """A ``lookup`` network's card of an action is the card that changes place when the action
    is played, and its target card is the card it goes on (covered afterwards)."""
    from solitaire_gym.envs.core import EnvCore

    game, options = VARIANTS[variant]
    spec = game_spec(game, options)
    net = build_net({"kind": "cards", "hidden": 8, "layers": 1, "lookup": True}, spec)
    w, nc, depth = spec["width"], spec["n_cards"], spec["depth_col"]
    opts = EnvOptions.build(game, **options)
    rng = np.random.default_rng(0)
    checked = 0
    played: list[int] = []
    for deal in range(3):
        core = EnvCore(opts, 1)
        core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
        for _ in range(25):
            legal = np.flatnonzero(core.masks[0])
            if legal.size == 0:
                break
            before = core.obs[0, : nc * w].reshape(nc, w).copy()
            cards = torch.from_numpy(before[None])
            loc = cards[:, :, torch.as_tensor(spec["places"])]
            acts = torch.as_tensor(legal)
            mv, tg = net.card_ids(cards, loc, torch.zeros(len(legal), dtype=torch.long), acts)
            for a, m, t in zip(legal, mv.tolist(), tg.tolist(), strict=True):
                after_core = EnvCore(opts, 1)
                after_core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
                for p in played:
                    after_core.step(np.array([p]))
                after_core.step(np.array([a]))
                after = after_core.obs[0, : nc * w].reshape(nc, w)
                if m < nc:  # that card left its place (its location flags changed)
                    assert not np.array_equal(before[m, :depth], after[m, :depth]), (a, m)
                    checked += 1
                if t < nc:  # the target's top card is covered now
                    assert after[t, depth] > before[t, depth]
            a = int(rng.choice(legal))
            played.append(a)
            core.step(np.array([a]))
        played.clear()
    assert checked > 50


@pytest.mark.parametrize("variant", ["SH1-C4", "TF1-D1N", "DS1-D1N"])
def test_moves_network_finds_the_card_each_action_uncovers(variant):
    """A ``moves`` network's uncovered card of an action is the card on top of its source place
    once the action is played (none when that card lies face down or the place is empty), and
    its count of kept face-up cards is the source column's (checked with ``to_dict``)."""
    from agents.policy import LEFT
    from solitaire_gym.envs.core import EnvCore

    game, options = VARIANTS[variant]
    spec = game_spec(game, options)
    net = build_net({"kind": "cards", "hidden": 8, "layers": 1, "moves": True}, spec)
    w, nc, depth = spec["width"], spec["n_cards"], spec["depth_col"]
    assert list(spec["face"][:4]) == ([0, 0, 1, 1] if nc == 104 else [0, 1, 2, 3])
    opts = EnvOptions.build(game, **options)
    rng = np.random.default_rng(0)
    seen = {"card": 0, "none": 0, "kept": 0, "down": 0}
    for deal in range(3):
        core = EnvCore(opts, 1)
        core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
        played: list[int] = []
        for _ in range(25):
            legal = np.flatnonzero(core.masks[0])
            if legal.size == 0:
                break
            obs = torch.from_numpy(core.obs[:1].copy())
            cards = obs[:, : nc * w].reshape(1, nc, w)
            loc = cards[:, :, torch.as_tensor(spec["places"])]
            acts = torch.as_tensor(legal)
            rows = torch.zeros(len(legal), dtype=torch.long)
            _, _, un, left = net.move_keys(obs, cards, loc, rows, acts)
            for a, u, k in zip(legal, un.tolist(), left.tolist(), strict=True):
                after_core = EnvCore(opts, 1)
                after_core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
                for p in [*played, a]:
                    after_core.step(np.array([p]))
                after = after_core.obs[0, : nc * w].reshape(nc, w)
                src = int(spec["src"][a])
                on_src = after[:, spec["places"][src]] > 0 if src < len(spec["places"]) else None
                if u < nc:  # the uncovered card still lies in the source place, now on top
                    assert on_src[u] and after[u, depth] == 0, (a, u)
                    seen["card"] += 1
                elif spec["un_depth"][a] >= 0 and on_src is not None:
                    # none: the source is empty now, or its top card was not seen before
                    before = cards[0].numpy()[:, spec["places"][src]] > 0
                    assert not (on_src & before & (after[:, depth] == 0)).any(), a
                    seen["none"] += 1
                if spec["moved"][a] > 0:  # a column source: the face-up cards it keeps
                    pile = core.to_dict(0)["tableau"][src]
                    up = sum(not c.endswith("*") for c in pile) - spec["moved"][a]
                    down = sum(c.endswith("*") for c in pile)
                    assert k == 2 * min(up, LEFT) + (down > 0), (a, pile, k)
                    seen["kept"] += 1
                    seen["down"] += down > 0
                else:
                    assert k == 2 * (LEFT + 1)
            a = int(rng.choice(legal))
            played.append(a)
            core.step(np.array([a]))
    assert seen["card"] > 20 and seen["kept"] > 20
    assert seen["down"] > 0 or game != "double_solitaire"


@pytest.mark.parametrize("variant", ["SH1-C4", "TF1-D1N", "DS1-D3N"])
def test_place_features_are_the_pile_values_of_that_place(variant):
    """A ``piles`` network's values of each place (``game_spec``'s ``place_feats``) are that
    place's own: checked against the position (``EnvCore.to_dict``) along random play."""
    from solitaire_gym.envs.core import EnvCore
    from solitaire_gym.envs.observation import DEPTH_SCALE, layout

    game, options = VARIANTS[variant]
    spec = game_spec(game, options)
    feats = spec["place_feats"]
    opts = EnvOptions.build(game, **options)
    lay = layout(opts.variant.cfg)
    cols, n = int(opts.variant.cfg[G_COLS]), spec["n_cards"]
    place = {int(f): i for i, f in enumerate(spec["places"])}  # card-block column -> place
    net = build_net({"kind": "cards", "hidden": 8, "layers": 1, "piles": True}, spec)
    assert net.feat_idx.shape[0] == len(spec["places"]) + (1 if spec["cells"] else 0)
    assert (feats[place[lay.found]] == -1).all()  # the foundations: per pile, not per place
    if spec["cells"]:
        assert (feats[-1] == -1).all()  # all cells together
    double = game == "double_solitaire"
    rng = np.random.default_rng(1)
    core = EnvCore(opts, 1)
    core.deal(np.zeros(1, np.int64), np.array([2], np.int64))
    seen = 0
    for _ in range(60):
        o, pos = core.obs[0], core.to_dict(0)
        for c in range(cols):
            pile, f = pos["tableau"][c], feats[place[lay.columns + c]]
            assert round(o[f[0]] * DEPTH_SCALE) == len(pile)
            assert (f[1] < 0) == (not double)
            if double:
                down = sum(card.endswith("*") for card in pile)
                assert round(o[f[1]] * DEPTH_SCALE) == down
                seen += down
        if "waste" in pos:
            assert round(o[feats[place[lay.waste], 0]] * n) == len(pos["waste"])
            assert round(o[feats[place[lay.stock], 0]] * n) == len(pos["stock"])
        if "cells" in pos:
            for k, cell in enumerate(pos["cells"]):
                assert o[feats[place[lay.cell + k], 0]] == (1.0 if cell is None else 0.0)
        legal = np.flatnonzero(core.masks[0])
        if legal.size == 0:
            break
        core.step(np.array([int(rng.choice(legal))]))
    assert seen > 0 or not double
