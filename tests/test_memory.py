"""A player's memory of its own game (agents/memory.py) and the networks that read it: the
counts are right, training sees exactly what play sees, and a memory network is the plain
network until it has learnt to use them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.memory import LEVELS, MODES, PlayMemory, tried_counts  # noqa: E402
from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402
from agents.policy import (  # noqa: E402
    CheckpointError,
    PolicyAgent,
    build_net,
    game_spec,
    load_policy,
    save_policy,
)

SH = VARIANTS["SH1-C4"]
ARCH = {"kind": "cards", "hidden": 16, "layers": 1}


def _reference(plays: dict, position: int, legal, mode: str) -> dict:
    """What a memory of ``mode`` shows for each ``legal`` action of ``position``, from a dict of
    (position, action) -> plays: the spec of agents/memory.py, written out plainly."""
    raw = {a: plays.get((position, a), 0) for a in legal}
    least = min(raw.values(), default=0)
    cap = LEVELS - 1
    if mode == "count":
        return {a: min(c, cap) for a, c in raw.items()}
    return {a: min(c, cap) * LEVELS + min(c - least, cap) for a, c in raw.items()}


@pytest.mark.parametrize("mode", list(MODES))
def test_play_memory_counts_each_game_apart_and_forgets(mode):
    rng = np.random.default_rng(0)
    positions = rng.random((3, 7)).astype(np.float32)  # three positions, seven values
    n, n_act = 2, 5
    mem = PlayMemory(n, mode)
    want = [{}, {}]  # per game: (position, action) -> plays
    relative_seen = set()
    for _ in range(200):
        which = rng.integers(0, 3, n)
        obs = positions[which]
        masks = rng.random((n, n_act)) < 0.7
        got = mem.counts(obs, masks)
        for b in range(n):
            ref = _reference(want[b], which[b], np.flatnonzero(masks[b]), mode)
            for a in range(n_act):
                assert got[b, a] == ref.get(a, 0), (mode, b, a)
                assert got[b, a] < MODES[mode]
                relative_seen.add(int(got[b, a]) % LEVELS)
        acts = rng.integers(0, n_act, n)
        active = rng.random(n) < 0.8
        mem.record(obs, acts, active)
        for b in np.flatnonzero(active):
            key = (which[b], acts[b])
            want[b][key] = want[b].get(key, 0) + 1
    assert any(v >= LEVELS for w in want for v in w.values())  # the cap was reached
    if mode == "relative":  # every distance from the least-played action was met
        assert relative_seen == set(range(LEVELS))
    masks = np.ones((n, n_act), bool)
    kept = mem.counts(positions[[0, 0]], masks)[1].copy()
    mem.forget(np.array([True, False]))
    after = mem.counts(positions[[0, 0]], masks)
    assert not after[0].any() and np.array_equal(after[1], kept)  # game 1 remembers
    # illegal actions count 0
    assert not mem.counts(positions[:2], np.zeros((n, n_act), bool)).any()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.counts(np.zeros((3, 4)), np.ones((3, 2), bool)), "obs must be"),
        (lambda m: m.record(np.zeros((2, 4)), np.array([0.5, 1.0]), np.ones(2, bool)), "actions"),
        (lambda m: m.record(np.zeros((2, 4)), np.array([-1, 0]), np.ones(2, bool)), "negative"),
        (lambda m: m.forget(np.array([1, 0])), "bool mask"),
    ],
)
def test_play_memory_refuses_bad_input(call, message):
    mem = PlayMemory(2)
    with pytest.raises(ValueError, match=message):
        call(mem)
    assert not mem.used.any()


def test_an_unknown_memory_mode_is_refused_by_name():
    with pytest.raises(ValueError, match="memory mode must be one of count, relative, not 'x'"):
        PlayMemory(1, "x")
    with pytest.raises(ValueError, match="memory mode"):
        tried_counts(np.zeros((1, 2)), np.ones((1, 3), bool), np.zeros(1, int), np.zeros(1), "x")
    with pytest.raises(CheckpointError, match="memory_mode='x'"):
        build_net({**ARCH, "memory": True, "memory_mode": "x"}, game_spec(*SH))


def test_a_full_table_stops_remembering_new_positions():
    from agents.memory import FULL

    mem = PlayMemory(1)
    obs = np.zeros((1, 2), np.float32)
    one = np.ones(1, bool)
    for i in range(FULL + 50):  # every record a new (position, action): the lookups still end
        obs[0, 0] = i + 1
        mem.record(obs, np.array([0]), one)
    assert mem.used[0] == FULL


@pytest.mark.parametrize("variant, mode",
                         [("TF1-D1N", "count"), ("DS1-D1N", "count"), ("TF1-D1N", "relative")])  # fmt: skip
def test_training_counts_are_the_counts_play_shows(variant, mode):
    """tried_counts over a stored game equals what the agent saw while playing it."""
    game, options = VARIANTS[variant]
    torch.manual_seed(1)
    arch = {**ARCH, "memory": True, "memory_mode": mode}
    net = build_net(arch, game_spec(game, options))
    with torch.no_grad():
        net.tried_emb.weight.normal_()  # a trained network's memory matters
    agent = PolicyAgent(net, {"game": game, "options": options, "variant": variant,
                              "arch": arch})  # fmt: skip
    seen = []
    real = agent.scores

    def spy(obs, masks=None, prev=None, tried=None):
        s = real(obs, masks, prev, tried)
        seen.append((obs.copy(), masks.copy(), tried.copy(), s.argmax(1)))
        return s

    agent.scores = spy
    revisits = 0
    for deal in eval_deals(3):  # one game at a time: the calls are that game's positions
        seen.clear()
        play_deals(agent, game, options, [deal], max_episode_steps=300)
        obs = np.concatenate([o for o, *_ in seen])
        masks = np.concatenate([m for _, m, *_ in seen])
        tried = np.concatenate([t for _, _, t, _ in seen])
        played = np.concatenate([a for *_, a in seen])
        again = tried_counts(obs, masks, played, np.zeros(len(played), np.int64), mode)
        assert np.array_equal(again, tried)
        revisits += int(tried.any())
    assert revisits, "no game came back to a position: the test shows nothing"


SH_META = {"game": SH[0], "options": SH[1], "variant": "SH1-C4"}


def test_memory_network_is_the_plain_network_until_trained(tmp_path):
    spec = game_spec(*SH)
    torch.manual_seed(2)
    plain = build_net(ARCH, spec)
    mem = build_net({**ARCH, "memory": True}, spec)
    missing = mem.load_state_dict(plain.state_dict(), strict=False).missing_keys
    assert missing == ["tried_emb.weight"]
    obs, masks = _positions()
    tried = np.zeros(masks.shape, np.int64)
    tried[masks] = 2
    x, m = torch.from_numpy(obs), torch.from_numpy(masks)
    with torch.no_grad():
        want = plain(x, m)
        assert torch.equal(mem(x, m), want)
        assert torch.equal(mem(x, m, tried=torch.from_numpy(tried)), want)  # zero-initialised
        mem.tried_emb.weight.normal_()
        changed = mem(x, m, tried=torch.from_numpy(tried))
        assert torch.equal(mem(x, m, tried=torch.zeros_like(torch.from_numpy(tried))),
                           mem(x, m))  # fmt: skip
        assert not torch.equal(changed, want)
    # a checkpoint keeps the memory weights and the architecture
    p = tmp_path / "m.npz"
    save_policy(p, mem, {**SH_META, "arch": {**ARCH, "memory": True}})
    agent = load_policy(p, game=SH[0], options=SH[1])
    assert agent.net.memory
    assert np.allclose(agent.scores(obs, masks, tried=tried), changed.numpy())


def test_a_relative_memory_checkpoint_keeps_its_mode(tmp_path):
    arch = {**ARCH, "memory": True, "memory_mode": "relative"}
    torch.manual_seed(3)
    net = build_net(arch, game_spec(*SH))
    assert net.tried_emb.num_embeddings == MODES["relative"]
    with torch.no_grad():
        net.tried_emb.weight.normal_()
    p = tmp_path / "r.npz"
    save_policy(p, net, {**SH_META, "arch": arch})
    agent = load_policy(p, game=SH[0], options=SH[1])
    assert agent.net.memory_mode == "relative"
    obs, masks = _positions()
    tried = np.where(masks, MODES["relative"] - 1, 0)
    with torch.no_grad():
        want = net(torch.from_numpy(obs), torch.from_numpy(masks),
                   tried=torch.from_numpy(tried)).numpy()  # fmt: skip
    assert np.allclose(agent.scores(obs, masks, tried=tried), want)
    agent.act(obs, masks, starts=np.ones(len(obs), bool), active=np.ones(len(obs), bool))
    assert agent.memory.mode == "relative"  # play keeps the memory the network was trained on


def test_memory_needs_a_cards_network():
    spec = game_spec(*SH)
    with pytest.raises(CheckpointError, match="memory=true needs kind 'cards'"):
        build_net({"kind": "mlp", "hidden": 8, "memory": True}, spec)
    with pytest.raises(CheckpointError, match="memory=1"):
        build_net({**ARCH, "memory": 1}, spec)


def test_a_memory_mode_needs_a_memory_in_a_config():
    from agents.config import ConfigError
    from agents.imitation import check_imitation_config

    cfg = {"name": "x", "variant": "SH1-C4", "arch": {"kind": "cards", "memory_mode": "relative"}}
    with pytest.raises(ConfigError, match=r"arch\.memory_mode needs arch\.memory true"):
        check_imitation_config(cfg)
    cfg["arch"]["memory_mode"] = "often"
    with pytest.raises(ConfigError, match=r"arch\.memory_mode must be one of count, relative"):
        check_imitation_config(cfg)
    cfg["arch"].update(memory=True, memory_mode="relative")
    assert check_imitation_config(cfg).arch["memory_mode"] == "relative"


def test_fit_needs_and_uses_the_counts():
    from agents.imitation import fit

    obs, masks = _positions()
    labels = masks.argmax(1).astype(np.int64)
    data = {"obs": obs, "masks": masks, "labels": labels, "safe": np.ones(len(labels), bool),
            "prev": np.full(len(labels), masks.shape[1], np.int64)}  # fmt: skip
    torch.manual_seed(1)
    net = build_net({**ARCH, "memory": True}, game_spec(*SH))
    with pytest.raises(ValueError, match="tried"):
        fit(net, data, epochs=1, batch_size=4, learning_rate=1e-3)
    data["tried"] = np.zeros(masks.shape, np.uint8)
    data["tried"][:, labels[0]] = 1
    before = net.tried_emb.weight.detach().clone()
    fit(net, data, epochs=1, batch_size=4, learning_rate=1e-2)
    assert not torch.equal(before, net.tried_emb.weight)  # the counts reached the network


def _positions():
    from solitaire_gym.envs.vector_env import SolitaireVectorEnv

    env = SolitaireVectorEnv(4, SH[0], **SH[1])
    obs, info = env.reset(seed=0)
    return obs.astype(np.float32), info["action_mask"].astype(bool)
