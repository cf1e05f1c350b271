"""Imitation training (``agents/imitation.py``): ``fit`` learns the teacher's labels and the
factored heads, on the device asked for, and the policy plays from there; the imitation config's
checks and the device refused before a run starts; a warm-started DAgger round."""

from __future__ import annotations

import numpy as np
import pytest
from teaching import teacher_data

torch = pytest.importorskip("torch")

from agents.config import ConfigError  # noqa: E402
from agents.dataset import previous_actions  # noqa: E402
from agents.imitation import best_play, check_imitation_config, fit  # noqa: E402
from agents.play import VARIANTS, play_deals  # noqa: E402
from agents.policy import (  # noqa: E402
    PolicyAgent,
    build_net,
    game_spec,
    load_policy,
    save_policy,
)
from agents.teacher import teacher_orders  # noqa: E402

SH = VARIANTS["SH1-C4"]


def test_fit_learns_the_teacher_labels(episodes):
    data = {
        "obs": np.concatenate([e.obs for e in episodes]),
        "masks": np.concatenate([e.masks for e in episodes]),
        "labels": np.concatenate([e.labels for e in episodes]).astype(np.int64),
        "safe": np.concatenate([e.safe for e in episodes]),
    }
    data["prev"] = previous_actions(
        np.concatenate([np.full(len(e.labels), e.deal) for e in episodes]),
        np.concatenate([e.played for e in episodes]),
        episodes[0].masks.shape[1],
    )
    torch.manual_seed(0)
    net = build_net({"kind": "mlp", "hidden": 256, "layers": 1}, game_spec(*SH))
    _, hist = fit(net, data, epochs=40, batch_size=32, learning_rate=5e-3)
    # 80 positions: from chance (about 1 in 10 legal moves) to most labels learnt
    assert hist[0]["accuracy"] < 0.5 and hist[-1]["accuracy"] > 0.7


def test_fit_trains_and_the_policy_plays_on_the_auto_device(episodes, tmp_path):
    """``device="auto"``: the network trains where :func:`resolve_device` says (CUDA on a
    machine that has it), plays from there, and its checkpoint loads on the CPU to the same
    scores."""
    from agents.torch_setup import net_device, resolve_device

    data = {k: np.concatenate([getattr(e, k) for e in episodes])
            for k in ("obs", "masks", "labels", "safe", "played")}  # fmt: skip
    data["labels"] = data["labels"].astype(np.int64)
    data["episode"] = np.concatenate([np.full(len(e.labels), e.deal) for e in episodes])
    data["prev"] = previous_actions(data["episode"], data["played"], data["masks"].shape[1])
    data["gorder"] = teacher_orders(data, *SH)
    arch = {"kind": "cards", "hidden": 8, "layers": 1, "heads": "factored"}
    torch.manual_seed(0)
    net = build_net(arch, game_spec(*SH))
    want = torch.device(resolve_device("auto"))
    fit(net, data, epochs=1, batch_size=32, learning_rate=1e-3, device="auto")
    assert net_device(net).type == want.type
    meta = {"game": SH[0], "options": SH[1], "variant": "SH1-C4", "arch": arch,
            "play": {"rule": "factored", "threshold": 0.5}}  # fmt: skip
    res = play_deals(PolicyAgent(net, meta), *SH, [0, 1], max_episode_steps=20)
    assert [r.deal for r in res] == [0, 1]
    save_policy(tmp_path / "p.npz", net, meta)
    on_cpu = load_policy(tmp_path / "p.npz", device="cpu")
    assert net_device(on_cpu.net).type == "cpu"
    obs, masks = data["obs"][:8], data["masks"][:8]
    prev = data["prev"][:8]
    here = PolicyAgent(net, meta).scores(obs, masks, prev)
    np.testing.assert_allclose(on_cpu.scores(obs, masks, prev), here, rtol=1e-4, atol=1e-4)


def test_fit_trains_the_factored_heads(episodes):
    data = teacher_data(episodes)
    data["gorder"] = teacher_orders(data, *SH)
    torch.manual_seed(0)
    net = build_net({"kind": "cards", "hidden": 64, "layers": 1, "heads": "factored"},
                    game_spec(*SH))  # fmt: skip
    with pytest.raises(ValueError, match="gorder"):
        fit(net, {k: v for k, v in data.items() if k != "gorder"}, epochs=1, batch_size=32,
            learning_rate=1e-3)  # fmt: skip
    _, hist = fit(net, data, epochs=30, batch_size=32, learning_rate=5e-3)
    first, last = hist[0], hist[-1]
    assert last["rank_top1"] > max(0.8, first["rank_top1"])
    assert last["safe_accuracy"] > max(0.8, first["safe_accuracy"])
    assert last["accuracy"] > first["accuracy"]
    # the kept epoch's play rule: the last with the most wins
    rows = [{"val_wins": 1, "val_play": '{"rule": "veto"}'},
            {"val_wins": 3, "val_play": '{"rule": "factored"}'},
            {"val_wins": 3, "val_play": '{"rule": "policy"}'}]  # fmt: skip
    assert best_play(rows) == {"rule": "policy"}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"name": "../x"}, "plain folder name"),
        ({"variant": "XX1-C4"}, "variant must be one of"),
        ({"train": {"learning_rate": float("nan")}}, "train.learning_rate"),
        ({"train": {"unsafe_weight": 2.0}}, "train.unsafe_weight"),
        ({"arch": {"kind": "rnn"}}, "arch.kind"),
        ({"arch": {"kind": "cards", "heads": "many"}}, "arch.heads"),
        ({"arch": {"kind": "mlp", "heads": "factored"}}, "needs arch.kind cards"),
        ({"arch": {"kind": "mlp", "lookup": True}}, "arch.lookup needs arch.kind cards"),
        ({"arch": {"kind": "cards", "lookup": 1}}, "arch.lookup"),
        ({"arch": {"kind": "mlp", "piles": True}}, "arch.piles needs arch.kind cards"),
        ({"arch": {"kind": "mlp", "moves": True}}, "arch.moves needs arch.kind cards"),
        ({"arch": {"kind": "cards", "moves": 1}}, "arch.moves"),
        ({"arch": {"kind": "cards", "piles": "no"}}, "arch.piles"),
        ({"arch": {"kind": "mlp", "memory": True}}, "arch.memory needs arch.kind cards"),
        ({"arch": {"kind": "cards", "memory": "yes"}}, "arch.memory"),
        ({"train": {"safe_weight": -1}}, "train.safe_weight"),
        ({"dagger": {"rounds": -1}}, "dagger.rounds"),
        ({"dagger": {"epochs": -1}}, "dagger.epochs"),
        ({"dagger": {"warm_start": "yes"}}, "dagger.warm_start"),
        ({"teacher": {"on_repeat": "loop"}}, "teacher.on_repeat must be one of greedy, plan"),
        ({"bogus": 1}, "unknown key bogus"),
    ],
)
def test_imitation_config_refuses_bad_values(change, message):
    base = {"name": "x", "variant": "SH1-C4"}
    with pytest.raises(ConfigError, match=message):
        check_imitation_config({**base, **change})


def test_imitate_refuses_a_bad_device_before_it_starts(tmp_path, capsys):
    from scripts import experiment

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nvariant: SH1-C4\n")
    out = tmp_path / "run"
    assert experiment("imitate").main([str(cfg), "--out", str(out), "--device", "gpu"]) == 2
    assert (
        "imitate: device must be one of 'auto', 'cpu', 'cuda', 'cuda:N'" in capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.parametrize("warm", [False, True])
def test_a_warm_started_dagger_round_starts_from_the_previous_round(tmp_path, monkeypatch, warm):
    """``dagger.warm_start``: round 1 trains from round 0's weights, for ``dagger.epochs``
    epochs; without it, from fresh weights for ``train.epochs``."""
    import agents.imitation as imitation

    seen = []
    real_fit = imitation.fit

    def spy(net, data, **kw):
        seen.append(({k: v.clone() for k, v in net.state_dict().items()}, kw["epochs"]))
        return real_fit(net, data, **kw)

    monkeypatch.setattr(imitation, "fit", spy)
    cfg = check_imitation_config({
        "name": "warm", "variant": "SH1-C4", "jobs": 1, "torch_threads": 1,
        "arch": {"kind": "cards", "hidden": 8, "layers": 1},
        "teacher": {"deals": 2, "max_nodes": 2000}, "validation": {"deals": 1},
        "dagger": {"rounds": 1, "deals": 1, "warm_start": warm, "epochs": 1, "stop_unsafe": 5},
        "train": {"epochs": 2, "batch_size": 64},
    })  # fmt: skip
    imitation.ImitationRun(cfg, tmp_path).run(progress=False)
    assert [e for _, e in seen] == [2, 1 if warm else 2]
    round0 = load_policy(tmp_path / "round0.npz").net.state_dict()
    start1 = seen[1][0]
    same = all(np.array_equal(round0[k].numpy(), start1[k].numpy()) for k in round0)
    assert same == warm
