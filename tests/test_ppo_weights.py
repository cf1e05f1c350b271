"""MaskablePPO policies as weights only (``agents/ppo_weights.py``): the file plays the model's
moves (its logits bit for bit, its most likely actions, its samples) on real positions of two
variants of different observation sizes; its record round-trips; a damaged, hostile or foreign
file is refused with ``CheckpointError`` before anything runs; ``.npz`` files are told apart by
their format name. Training writes ``best.npz``: ``tests/test_agents.py``."""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
from refusing import npy_bytes, refused

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.checkpoint import CheckpointError  # noqa: E402
from agents.learned import MaskablePPOAgent, SB3Agent, UntrustedCheckpoint  # noqa: E402
from agents.named import load_npz, make_agent, npz_format, read_npz_meta  # noqa: E402
from agents.play import VARIANTS, play_deals  # noqa: E402
from agents.ppo_weights import (  # noqa: E402
    FORMAT,
    PPOWeightsAgent,
    load_ppo_weights,
    read_ppo_meta,
    save_ppo_weights,
)
from solitaire_gym.envs.sb3 import SB3VecEnv  # noqa: E402

# two variants of different observation sizes (851 and 639 values), each with its own network
CASES = {"SH1-C4": ([32, 16], torch.nn.Tanh), "TF1-D1N": ([24], torch.nn.ReLU)}


def _model(tag: str):
    """An untrained MaskablePPO of ``tag``, its actor's weights drawn wide (seeded) so that the
    logits differ well beyond rounding; and its env."""
    from sb3_contrib import MaskablePPO

    game, options = VARIANTS[tag]
    arch, act = CASES[tag]
    env = SB3VecEnv(game, num_envs=16, seed=0, **options)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu",
                        policy_kwargs={"net_arch": arch, "activation_fn": act})  # fmt: skip
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.policy.named_parameters():
            if name.startswith(("mlp_extractor.policy_net.", "action_net.")):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    model.solitaire_gym = {"game_id": game, "options": options, "config": "test"}
    return model, env


def _positions(env, steps: int = 6):
    """Real observations and masks: the env's games after random legal moves, stacked."""
    rng = np.random.default_rng(0)
    obs, masks = [env.reset()], [env.action_masks()]
    for _ in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks[-1]])
        obs.append(env.step(acts)[0])
        masks.append(env.action_masks())
    return np.concatenate(obs), np.concatenate(masks)


@pytest.fixture(scope="module", params=list(CASES))
def saved(request, tmp_path_factory):
    """(tag, model, observations, masks, path of its weights, the record written)."""
    model, env = _model(request.param)
    obs, masks = _positions(env)
    path = tmp_path_factory.mktemp("w") / f"{request.param}.npz"
    meta = save_ppo_weights(path, model, extra={"validation": {"win_rate": 0.25}})
    return request.param, model, obs, masks, path, meta


def _sb3_logits(model, obs):
    policy = model.policy
    with torch.no_grad():
        x = torch.as_tensor(obs)
        return policy.action_net(policy.mlp_extractor.forward_actor(x)).numpy()


def test_the_weights_play_the_models_moves(saved):
    """Bit-equal logits (a wrong activation, layer order or weight would change them), the
    model's most likely legal actions, and its samples draw for draw from the same seed."""
    tag, model, obs, masks, path, _ = saved
    game, options = VARIANTS[tag]
    agent = MaskablePPOAgent.load(path, game=game, options=options, deterministic=True)
    assert isinstance(agent, PPOWeightsAgent)  # no trusted=True needed
    assert np.array_equal(agent.logits(obs), _sb3_logits(model, obs))
    want, _ = model.predict(obs, action_masks=masks, deterministic=True)
    got = agent.act(obs, masks)
    assert np.array_equal(got, want) and masks[np.arange(len(got)), got].all()
    assert len(set(got.tolist())) > 5  # a test that can tell policies apart
    assert np.array_equal(make_agent(str(path), tag).act(obs, masks), want)
    # sampling: the same draws as SB3Agent on the model, call after call
    sampler = MaskablePPOAgent.load(path, game=game, options=options, seed=7)
    ref = SB3Agent(model, deterministic=False, seed=7)
    draws = [(sampler.act(obs, masks), ref.act(obs, masks)) for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in draws)
    assert not np.array_equal(draws[0][0], draws[1][0])  # they are samples
    assert not np.array_equal(draws[0][0], want)
    # whole games: the same as the model's
    deals = [0, 1]
    mine = play_deals(agent, game, options, deals, max_episode_steps=30, record=deals)
    theirs = play_deals(SB3Agent(model, deterministic=True), game, options, deals,
                        max_episode_steps=30, record=deals)  # fmt: skip
    assert [r.trace for r in mine] == [r.trace for r in theirs]


def test_another_activation_plays_other_moves(saved, tmp_path):
    """The comparison above can fail: the same weights read through the other activation give
    other logits and other moves."""
    tag, model, obs, masks, path, _ = saved
    z = dict(np.load(path))
    meta = json.loads(bytes(z["meta"]).decode())
    meta["arch"]["activation"] = {"tanh": "relu", "relu": "tanh"}[meta["arch"]["activation"]]
    z["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez(tmp_path / "other.npz", **z)
    other = load_ppo_weights(tmp_path / "other.npz")
    assert not np.allclose(other.logits(obs), _sb3_logits(model, obs))
    want, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert not np.array_equal(other.act(obs, masks), want)


def test_the_record_round_trips(saved):
    tag, model, _, _, path, meta = saved
    game, options = VARIANTS[tag]
    arch, act = CASES[tag]
    assert read_ppo_meta(path) == meta == read_npz_meta(path)
    assert npz_format(path) == FORMAT == meta["format"]
    assert meta["format_version"] == 1
    assert (meta["game"], meta["options"], meta["variant"]) == (game, options, tag)
    assert meta["obs_dim"] == model.observation_space.shape[0]
    assert meta["n_actions"] == model.action_space.n
    assert meta["arch"] == {"net_arch": arch, "activation": {torch.nn.Tanh: "tanh",
                                                              torch.nn.ReLU: "relu"}[act]}  # fmt: skip
    assert meta["trained_on"] == model.solitaire_gym
    assert meta["validation"] == {"win_rate": 0.25}
    assert set(meta["versions"]) == {"stable_baselines3", "sb3_contrib", "torch"}
    # the actor only, under the model's own names; no value network, nothing pickled
    state = model.policy.state_dict()
    with np.load(path, allow_pickle=False) as z:
        weights = {k[2:] for k in z.files if k.startswith("w/")}
        assert weights == {k for k in state if k.startswith(("mlp_extractor.policy_net.",
                                                             "action_net."))}  # fmt: skip
        for k in weights:
            assert np.array_equal(z[f"w/{k}"], state[k].numpy())
        assert set(z.files) == {f"w/{k}" for k in weights} | {"meta"}


def test_another_game_is_refused(saved):
    tag, _, _, _, path, _ = saved
    other = "TF1-D1N" if tag == "SH1-C4" else "SH1-C4"
    game, options = VARIANTS[other]
    msg = refused(CheckpointError, MaskablePPOAgent.load, path, game=game, options=options)
    assert str(path) in msg and tag in msg and other in msg
    refused(CheckpointError, make_agent, path, other)
    agent = load_ppo_weights(path)
    refused(CheckpointError, play_deals, agent, game, options, [0])


# ---- damaged and hostile files --------------------------------------------------------------
class _Boom:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))  # any call at all: here, create a file


_npy = npy_bytes


def _rezip(src, dst, members, drop=()):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            if name not in drop:
                zout.writestr(name, members.pop(name, zin.read(name)))
        for name, data in members.items():
            zout.writestr(name, data)
    return dst


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    model, _ = _model("SH1-C4")
    p = tmp_path_factory.mktemp("small") / "small.npz"
    save_ppo_weights(p, model)
    return p


HEAD = "w/action_net.bias"


def _with_meta(src, dst, change):
    meta = json.loads(np.load(src)["meta"].tobytes())
    change(meta)
    return _rezip(src, dst, {"meta.npy": _npy(np.frombuffer(json.dumps(meta).encode(), np.uint8))})


def _w(make):
    """A file whose output-layer bias is ``make(bias, marker)``."""
    return lambda p, d, m: _rezip(p, d, {f"{HEAD}.npy": make(np.load(p)[HEAD], m)})


def _m(change):
    """A file whose record is changed by ``change(record)``."""
    return lambda p, d, m: _with_meta(p, d, change)


def _raw(dst, data: bytes):
    dst.write_bytes(data)
    return dst


HUGE = {"descr": "<f4", "fortran_order": False, "shape": (2**40,)}
VALUE = "w/mlp_extractor.value_net.0.bias.npy"
BAD = {  # name: (how the file is made from a good one, what the refusal says)
    "pickled weight": (_w(lambda w, m: _npy(np.array([_Boom(m)], object))), "Python objects"),
    "pickled record": (
        lambda p, d, m: _rezip(p, d, {"meta.npy": _npy(np.array([_Boom(m)], object))}),
        "holds Python objects",
    ),
    "truncated weight": (_w(lambda w, m: _npy(w, cut=9)), "truncated"),
    "wrong shape": (_w(lambda w, m: _npy(w[:7])), r"has shape \(7,\), not \(1278,\)"),
    "huge shape": (_w(lambda w, m: _npy(header=HUGE)), r"has shape \(1099511627776,\)"),
    "float64": (_w(lambda w, m: _npy(w.astype(np.float64))), "is float64, not float32"),
    "NaN": (_w(lambda w, m: _npy(np.full_like(w, np.nan))), "NaN or infinite"),
    "weight missing": (lambda p, d, m: _rezip(p, d, {}, drop=[f"{HEAD}.npy"]), "do not fit"),
    "value branch": (lambda p, d, m: _rezip(p, d, {VALUE: _npy(np.zeros(3, "f4"))}), "do not fit"),
    "truncated file": (lambda p, d, m: _raw(d, p.read_bytes()[:-200]), "not an .npz file"),
    "not a zip": (lambda p, d, m: _raw(d, b"PK\x03\x04 not really"), "not an .npz file"),
    "version": (_m(lambda x: x.update(format_version=2)), "format version 2"),
    "layout": (_m(lambda x: x.update(layout_id="1-0")), "observation layout '1-0'"),
    "activation": (_m(lambda x: x["arch"].update(activation="gelu")), "activation must be"),
    "huge net": (_m(lambda x: x["arch"].update(net_arch=[2**16] * 40)), "hidden weights"),
    "wide net": (  # declared, not allocated: the first weight's header is refused first
        _m(lambda x: x["arch"].update(net_arch=[2**16, 2**10])),
        r"policy_net\.0\.weight' has shape \(32, 851\), not \(65536, 851\)",
    ),
    "empty layer": (_m(lambda x: x["arch"].update(net_arch=[0])), "net_arch must be a list"),
    "obs_dim": (_m(lambda x: x.update(obs_dim=639)), "obs_dim 639 is not its game's"),
    "options": (_m(lambda x: x.update(options={"cells": 3})), "game or options are not valid"),
    "no arch": (_m(lambda x: x.pop("arch")), "lacks 'arch'"),
    "bool": (_m(lambda x: x.update(n_actions=True)), "'n_actions' is True, not an integer"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_file_is_refused_and_nothing_runs(small, tmp_path, case):
    """Each refusal names the file and what is wrong, and no pickled call ever runs."""
    make, message = BAD[case]
    marker = tmp_path / "ran"
    bad = make(small, tmp_path / "bad.npz", marker)
    msg = refused(CheckpointError, load_ppo_weights, bad, game="seahaven_towers")
    assert str(bad) in msg
    assert re.search(message, msg), msg
    refused(CheckpointError, MaskablePPOAgent.load, bad)
    refused(CheckpointError, load_npz, bad)
    assert not marker.exists()


def test_npz_files_are_told_apart_by_their_format(small, tmp_path):
    """A policy network goes to load_policy, MaskablePPO weights here; anything else is named."""
    from agents.checkpoint import committed_policies
    from agents.policy import PolicyAgent, load_policy

    policy = committed_policies()["SH1-C4"]
    assert isinstance(load_npz(policy, game="seahaven_towers"), PolicyAgent)
    assert isinstance(load_npz(small, game="seahaven_towers"), PPOWeightsAgent)
    msg = refused(CheckpointError, load_ppo_weights, policy)
    assert "'solitaire_gym-policy' file (a policy network" in msg
    refused(CheckpointError, load_policy, small)
    value = _with_meta(
        small, tmp_path / "value.npz", lambda x: x.update(format="solitaire_gym-value")
    )
    for call in (npz_format, read_npz_meta, load_npz):
        msg = refused(CheckpointError, call, value)
        assert "is a 'solitaire_gym-value' file, not a policy network" in msg
        assert "or a MaskablePPO policy's weights" in msg
    np.savez(tmp_path / "plain.npz", meta=np.frombuffer(b"{}", np.uint8))
    assert "an .npz with no format name" in refused(CheckpointError, npz_format,
                                                    tmp_path / "plain.npz")  # fmt: skip
    # a stable-baselines3 zip renamed .npz is not read as a zip of pickles
    z = tmp_path / "sb3.npz"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("data", "{}")
    refused(CheckpointError, MaskablePPOAgent.load, z)
    # and a zip still needs trust
    (tmp_path / "x.zip").write_bytes(z.read_bytes())
    refused(UntrustedCheckpoint, MaskablePPOAgent.load, tmp_path / "x.zip")


def test_a_model_that_does_not_fit_is_not_written(tmp_path):
    from sb3_contrib import MaskablePPO

    model, env = _model("SH1-C4")
    model.solitaire_gym = {}
    with pytest.raises(ValueError, match="pass game="):
        save_ppo_weights(tmp_path / "a.npz", model)
    with pytest.raises(ValueError, match="reads 851 values and has 1278 actions; TF1-D1N"):
        save_ppo_weights(tmp_path / "a.npz", model, game="solitaire_reflechi",
                         options={"draw": 1})  # fmt: skip
    with pytest.raises(ValueError, match="extra may not set"):
        save_ppo_weights(tmp_path / "a.npz", model, game="seahaven_towers",
                         extra={"arch": {}})  # fmt: skip
    elu = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu",
                      policy_kwargs={"net_arch": [8], "activation_fn": torch.nn.ELU})  # fmt: skip
    with pytest.raises(ValueError, match="one activation of"):
        save_ppo_weights(tmp_path / "a.npz", elu, game="seahaven_towers")
    assert not list(tmp_path.iterdir())
