"""Imitation of the solver-backed teacher: behaviour cloning, then DAgger rounds.

A run (``experiments/imitate.py CONFIG``) goes:

1. **round 0**: the teacher plays ``teacher.deals`` training deals; its labelled positions are
   the first data set (``agents/teacher.py``, ``agents/dataset.py``);
2. a network (``agents/networks/``) is trained on all data so far with a masked cross-entropy:
   the scores of illegal actions are set to −inf, and the loss is the negative log-probability
   of the teacher's label among the legal actions. Positions whose label is not proven safe (the
   teacher found no move the solver shows winnable) weigh ``train.unsafe_weight``;
3. **DAgger rounds** 1 … ``dagger.rounds``: the current network plays ``dagger.deals`` new
   training deals, the teacher labels every position the network reaches, and the network is
   trained again on everything (2.). The student thus learns what to do in the positions its
   own mistakes lead to, which the teacher's games never show. With ``dagger.stop_unsafe`` N
   a student's game ends after N positions in a row that the teacher cannot label safe (it is
   lost by then, as a rule; see ``agents.teacher.teach_deal``). With ``dagger.warm_start`` a
   round's network starts from the previous round's weights instead of afresh, and trains for
   ``dagger.epochs`` epochs (0: ``train.epochs``), on everything as before.

**Expert iteration** (``teacher.kind: search``): the search player at ``teacher.nodes`` nodes per
move labels instead of the solver (``agents/search/expert.py``): its own games in round 0, the
student's in the DAgger rounds, blind to hidden cards. ``init`` (a checkpoint of the same
architecture) starts round 0 from its weights, e.g. the committed solver-taught policy.

After each training the network plays the validation deals (evaluation split from ``2^19``,
never the final evaluation deals ``0 …``) deterministically; the checkpoint with the most wins
is kept as ``best.npz``. Every stage writes its outputs before the next starts and is skipped
when they exist: the same command resumes.
"""

from __future__ import annotations

import copy
import csv
import itertools
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.config import (
    MAX_NET_WEIGHTS,
    NUMBER,
    CheckedConfig,
    ConfigError,
    merge_schema,
    read_yaml,
)
from agents.dataset import game_starts, won_deals
from agents.memory import MODES
from agents.play import VALIDATION_START, VARIANTS, eval_deals, play_deals
from agents.policy import (
    ARCHS,
    HEADS,
    PolicyAgent,
    build_net,
    game_spec,
    load_policy,
    read_meta_record,
    save_policy,
)
from agents.teacher import ON_REPEAT, TEACHERS
from agents.torch_setup import AUTO, resolve_device
from solitaire_gym.engine.threads import set_torch_threads
from solitaire_gym.errors import shown

SCHEMA: dict[str, Any] = {
    "name": (str, None),
    "description": (str, ""),
    "variant": (str, None),
    "seed": (int, 0),
    "jobs": (int, 2),
    "torch_threads": (int, 2),
    "arch": {
        "kind": (str, "mlp"),
        "hidden": (int, 512),
        "layers": (int, 2),
        "lookup": (bool, False),
        "piles": (bool, False),
        "moves": (bool, False),
        "memory": (bool, False),
        "memory_mode": (str, "count"),
        "heads": (str, "policy"),
    },
    "init": (str, ""),
    "teacher": {
        "kind": (str, "safe-greedy"),
        "nodes": (int, 256),
        "deals": (int, 500),
        "max_nodes": (int, 20_000),
        "first_deal": (int, 0),
        "on_repeat": (str, "greedy"),
    },
    "dagger": {
        "rounds": (int, 2),
        "deals": (int, 250),
        "stop_unsafe": (int, 0),
        "warm_start": (bool, False),
        "epochs": (int, 0),
    },
    "train": {
        "epochs": (int, 8),
        "batch_size": (int, 256),
        "learning_rate": (NUMBER, 1e-3),
        "weight_decay": (NUMBER, 0.0),
        "unsafe_weight": (NUMBER, 0.1),
        "rank_weight": (NUMBER, 1.0),
        "safe_weight": (NUMBER, 1.0),
        "teacher_wins_only": (bool, False),
    },
    "validation": {"deals": (int, 200)},
}


@dataclass(frozen=True)
class ImitationConfig(CheckedConfig):
    """A checked imitation config (:func:`check_imitation_config`)."""


def check_imitation_config(data: Any, where: str = "<dict>") -> ImitationConfig:
    """Check a parsed config; raise :class:`~agents.config.ConfigError` naming the bad key."""
    raw = merge_schema(SCHEMA, data, "", where)
    for key in ("name", "variant"):
        if raw[key] is None:
            raise ConfigError(f"{where}: missing key {key}")
    name = raw["name"]
    if (
        not name
        or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in name)
        or (set(name) == {"."})
    ):
        raise ConfigError(f"{where}: name must be a plain folder name (letters, digits, -_.)")
    if raw["variant"] not in VARIANTS:
        raise ConfigError(f"{where}: variant must be one of {', '.join(VARIANTS)}")
    if raw["arch"]["kind"] not in ARCHS:
        raise ConfigError(f"{where}: arch.kind must be one of {', '.join(ARCHS)}")
    if raw["arch"]["heads"] not in HEADS:
        raise ConfigError(f"{where}: arch.heads must be one of {', '.join(HEADS)}")
    for key in ("lookup", "memory", "piles", "moves"):
        if raw["arch"][key] and raw["arch"]["kind"] != "cards":
            raise ConfigError(f"{where}: arch.{key} needs arch.kind cards")
    if raw["teacher"]["kind"] not in TEACHERS:
        raise ConfigError(f"{where}: teacher.kind must be one of {', '.join(TEACHERS)}")
    if raw["teacher"]["on_repeat"] not in ON_REPEAT:
        raise ConfigError(f"{where}: teacher.on_repeat must be one of {', '.join(ON_REPEAT)}")
    if raw["arch"]["memory_mode"] not in MODES:
        raise ConfigError(f"{where}: arch.memory_mode must be one of {', '.join(MODES)}")
    if raw["arch"]["memory_mode"] != "count" and not raw["arch"]["memory"]:
        raise ConfigError(f"{where}: arch.memory_mode needs arch.memory true")
    if raw["arch"]["heads"] != "policy" and raw["arch"]["kind"] != "cards":
        raise ConfigError(f"{where}: arch.heads {raw['arch']['heads']!r} needs arch.kind cards")
    ranges = {
        "seed": (0, 2**31 - 1), "jobs": (1, 256), "torch_threads": (1, 256),
        "arch.hidden": (1, 4096), "arch.layers": (1, 8),
        "teacher.deals": (1, 10**7), "teacher.max_nodes": (1, 10**9),
        "teacher.nodes": (1, 1 << 20),
        "teacher.first_deal": (0, 2**34), "dagger.rounds": (0, 100),
        "dagger.deals": (1, 10**7), "dagger.stop_unsafe": (0, 10**6), "dagger.epochs": (0, 10_000),
        "train.epochs": (1, 10_000),
        "train.batch_size": (1, 1 << 16), "train.learning_rate": (1e-8, 1.0),
        "train.weight_decay": (0.0, 1.0), "train.unsafe_weight": (0.0, 1.0),
        "train.rank_weight": (0.0, 100.0), "train.safe_weight": (0.0, 100.0),
        "validation.deals": (1, 100_000),
    }  # fmt: skip
    for key, (lo, hi) in ranges.items():
        section, _, k = key.rpartition(".")
        v = raw[section][k] if section else raw[k]
        if not (lo <= v <= hi):  # NaN fails too
            raise ConfigError(f"{where}: {key} must lie in {lo} … {hi}, not {shown(v)}")
    weights = raw["arch"]["layers"] * raw["arch"]["hidden"] ** 2
    if weights > MAX_NET_WEIGHTS:
        raise ConfigError(
            f"{where}: arch.layers × arch.hidden² is {weights:,} weights; at most "
            f"{MAX_NET_WEIGHTS:,}"
        )
    return ImitationConfig(raw, where)


def load_imitation_config(path: str | Path) -> ImitationConfig:
    """Read (:func:`agents.config.read_yaml`, as training configs are read) and check a YAML
    imitation config file."""
    data, where = read_yaml(path)
    return check_imitation_config(data, where)


def teacher_wins_only(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``data`` without the positions of the games the teacher played itself and did not win
    (it went round in circles or lost: ``agents/teacher.py``); the student's games stay."""
    won = won_deals(data)
    ep = data["episode"]
    by_teacher = data["played"] == data["labels"]
    keep = np.ones(len(ep), bool)
    for a, b in itertools.pairwise(game_starts(ep)):
        if by_teacher[a:b].all() and not won[int(ep[a])]:
            keep[a:b] = False
    out = dict(data)
    for k in ("obs", "masks", "labels", "safe", "played", "episode", "prev", "gorder", "tried"):
        if k in data:
            out[k] = data[k][keep]
    return out


def fit(
    net,
    data: dict[str, np.ndarray],
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    weight_decay: float = 0.0,
    unsafe_weight: float = 0.1,
    seed: int = 0,
    rank_weight: float = 1.0,
    safe_weight: float = 1.0,
    validate=None,
    log=None,
    device: str = AUTO,
):
    """Train ``net`` on ``data`` (:func:`agents.dataset.load_shards`) with the masked
    cross-entropy; after each epoch call ``validate(net)`` (``wins``, or ``(wins, dict)`` whose
    items go into the epoch's row) and keep the weights of the best epoch (the last when no
    ``validate``). Returns (best wins, history rows).

    ``net`` is moved to ``device`` (:func:`agents.torch_setup.resolve_device`) and stays there;
    the data stays in host memory and goes to the device a batch at a time.

    A network with factored heads (``arch["heads"] == "factored"``) needs ``data["gorder"]``
    (:func:`agents.teacher.teacher_orders`) and learns two more losses, added with weights
    ``rank_weight`` and ``safe_weight``: the rank head a Plackett-Luce likelihood of greedy's
    first :data:`RANK_K` moves in order, the winnability head a binary cross-entropy on every
    move the teacher tried (1: the label, shown winnable; 0: the moves tried before it, or all
    tried moves of a position with no safe label).

    A ``memory`` network needs ``data["tried"]`` (:func:`agents.memory.tried_counts`)."""
    import torch

    dev = torch.device(resolve_device(device))
    net.to(dev)
    factored = bool(getattr(net, "factored", False))
    if factored and "gorder" not in data:
        raise ValueError("a factored network needs data['gorder'] (agents.teacher.teacher_orders)")
    memory = bool(getattr(net, "memory", False))
    if memory and "tried" not in data:
        raise ValueError("a memory network needs data['tried'] (agents.memory.tried_counts)")
    g = torch.Generator().manual_seed(seed)
    obs = torch.from_numpy(data["obs"])
    masks = torch.from_numpy(data["masks"])
    labels = torch.from_numpy(data["labels"])
    prev = torch.from_numpy(data["prev"])
    safe_rows = torch.from_numpy(data["safe"])
    weights = torch.from_numpy(np.where(data["safe"], 1.0, unsafe_weight).astype(np.float32))
    keep = weights > 0
    obs, masks, labels, weights = obs[keep], masks[keep], labels[keep], weights[keep]
    prev, safe_rows = prev[keep], safe_rows[keep]
    gorder = torch.from_numpy(data["gorder"].astype(np.int64))[keep] if factored else None
    tried = torch.from_numpy(data["tried"])[keep] if memory else None
    opt = torch.optim.AdamW(net.parameters(), lr=learning_rate, weight_decay=weight_decay)
    n = len(labels)
    steps = epochs * ((n + batch_size - 1) // batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, learning_rate, total_steps=max(1, steps))
    best, best_state, history = -1, None, []
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        net.train()
        perm = torch.randperm(n, generator=g)
        tot_loss, tot_hit, tot_w = 0.0, 0.0, 0.0
        extra = {"rank_top1": 0.0, "safe_acc": 0.0, "rank_n": 0.0, "safe_n": 0.0}
        for i in range(0, n, batch_size):
            idx = perm[i : i + batch_size]
            kw = {"tried": tried[idx].to(dev)} if memory else {}
            b_obs, b_masks, b_prev = obs[idx].to(dev), masks[idx].to(dev), prev[idx].to(dev)
            b_labels, w = labels[idx].to(dev), weights[idx].to(dev)
            if factored:
                logits, rank, safe = net(b_obs, b_masks, b_prev, heads=True, **kw)
            else:
                logits = net(b_obs, b_masks, b_prev, **kw)  # −inf where illegal
            logp = torch.log_softmax(logits, dim=1)
            nll = -logp.gather(1, b_labels[:, None]).squeeze(1)
            loss = (nll * w).sum() / w.sum()
            if factored:
                rank_loss, safe_loss = _head_losses(
                    rank, safe, gorder[idx].to(dev), b_labels, safe_rows[idx].to(dev), extra
                )
                loss = loss + rank_weight * rank_loss + safe_weight * safe_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            with torch.no_grad():
                tot_loss += float((nll * w).sum())
                tot_hit += float(((logits.argmax(1) == b_labels).float() * w).sum())
                tot_w += float(w.sum())
        net.eval()
        row = {"epoch": epoch, "loss": tot_loss / tot_w, "accuracy": tot_hit / tot_w,
               "positions": n, "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
        if factored:
            row["rank_top1"] = extra["rank_top1"] / max(1.0, extra["rank_n"])
            row["safe_accuracy"] = extra["safe_acc"] / max(1.0, extra["safe_n"])
        if validate is not None:
            v = validate(net)
            if isinstance(v, tuple):
                row["val_wins"] = int(v[0])
                row.update(v[1])
            else:
                row["val_wins"] = int(v)
        history.append(row)
        if log is not None:
            log(row)
        score = row.get("val_wins", epoch)
        if score >= best:
            best, best_state = score, copy.deepcopy(net.state_dict())
    net.load_state_dict(best_state)
    return best, history


RULES_TRIED = (("veto", 0.3), ("veto", 0.5), ("veto", 0.7),
               ("factored", 0.3), ("factored", 0.5), ("factored", 0.7))  # fmt: skip
"""The play rules (:data:`agents.checkpoint.PLAY_RULES`) a factored network is validated with,
beside ``"policy"``: the best on the validation deals is the one its checkpoint records."""


def validator(game: str, options: dict, meta: dict, deals: int):
    """``validate(net)`` for :func:`fit`: the wins of ``net`` (recorded as ``meta``) on
    ``deals`` validation deals (evaluation split from 2^19, never the final evaluation deals).
    A factored network plays them under every rule of :data:`RULES_TRIED` too; it returns
    the best wins and, in the row, each rule's wins and the best rule (``val_play``, what
    ``meta["play"]`` should record)."""
    chosen = eval_deals(deals, VALIDATION_START)
    rules = [("policy", 0.5)]
    if meta.get("arch", {}).get("heads", "policy") == "factored":
        rules += list(RULES_TRIED)

    def validate(net):
        row, best = {}, None
        for rule, threshold in rules:
            play = {"rule": rule, "threshold": threshold}
            agent = PolicyAgent(net, {**meta, "play": play})
            wins = int(sum(r.won for r in play_deals(agent, game, options, chosen)))
            row[f"val_{rule}_{threshold}"] = wins
            if best is None or wins > best[0]:
                best = (wins, play)
        row["val_play"] = json.dumps(best[1])
        return best[0], row

    return validate


RANK_K = 3
"""Moves of greedy's order the rank head learns to put first, in order (:func:`fit`)."""


def _head_losses(rank, safe, gorder, labels, safe_rows, stats):
    """The rank and winnability losses of a factored network on one batch (see :func:`fit`);
    adds accuracies to ``stats``."""
    import torch
    import torch.nn.functional as F

    valid = gorder >= 0  # (B, K): greedy's order, -1 past the legal moves
    go = gorder.clamp(min=0)
    k = min(RANK_K, go.shape[1])
    r = rank
    rank_loss = rank.new_zeros(())
    for j in range(k):
        a, ok = go[:, j : j + 1], valid[:, j]
        lp = torch.log_softmax(r, dim=1).gather(1, a).squeeze(1)
        rank_loss = rank_loss - torch.where(ok, lp, torch.zeros_like(lp)).sum()
        # take the move out of the running: a large finite penalty (not −inf: a row with no
        # move left would give NaN, and NaN survives a zero weight)
        r = r - 1e4 * F.one_hot(a.squeeze(1), r.shape[1]).to(r.dtype) * ok[:, None].to(r.dtype)
    n_rank = valid[:, 0].sum().clamp(min=1)
    is_lab = (gorder == labels[:, None]) & valid
    pos = torch.where(is_lab.any(1), is_lab.float().argmax(1), torch.full_like(labels, go.shape[1]))
    j = torch.arange(go.shape[1], device=go.device)[None, :]
    zero = valid & (~safe_rows[:, None] | (j < pos[:, None]))
    one = is_lab & safe_rows[:, None]
    sel = zero | one
    z = torch.where(valid, safe.gather(1, go), safe.new_zeros(go.shape))
    bce = F.binary_cross_entropy_with_logits(z, one.to(z.dtype), reduction="none")
    n_safe = sel.sum().clamp(min=1)
    safe_loss = (bce * sel).sum() / n_safe
    with torch.no_grad():
        stats["rank_top1"] += float(((rank.argmax(1) == go[:, 0]) & valid[:, 0]).sum())
        stats["rank_n"] += float(valid[:, 0].sum())
        stats["safe_acc"] += float((((z > 0) == one) & sel).sum())
        stats["safe_n"] += float(sel.sum())
    return rank_loss / n_rank, safe_loss


class ImitationRun:
    """One run of a config under ``out`` (see the module docstring)."""

    def __init__(self, cfg: ImitationConfig, out: str | Path, *, device: str = AUTO) -> None:
        """``device``: where the networks train (:func:`agents.torch_setup.resolve_device`; a
        bad name or a missing CUDA device is refused here, before anything is written)."""
        self.cfg = cfg
        self.device = resolve_device(device)
        self.out = Path(out)
        self.game, self.options = VARIANTS[cfg.variant]
        self.spec = game_spec(self.game, self.options)

    def meta(self, round_: int, extra: dict | None = None) -> dict:
        return {
            "game": self.game,
            "options": self.options,
            "variant": self.cfg.variant,
            "arch": dict(self.cfg.arch),
            "trained_by": f"experiments/imitate.py {self.cfg.path}",
            "config": self.cfg.raw,
            "round": round_,
            **(extra or {}),
        }

    def initial_weights(self, net) -> dict:
        """The weights of the ``init`` checkpoint, refused unless its game and architecture are
        the config's."""
        init = load_policy(self.cfg.raw["init"], game=self.game, options=self.options)
        theirs = init.net.state_dict()
        mine = net.state_dict()
        if set(theirs) != set(mine) or any(theirs[k].shape != mine[k].shape for k in mine):
            raise ConfigError(
                f"{self.cfg.path}: init {shown(self.cfg.raw['init'])} is a network of another "
                "architecture than arch"
            )
        return theirs

    def run(self, progress: bool = True) -> Path:
        """Do every stage not done yet; return the best checkpoint."""
        import torch

        from agents.dataset import load_shards
        from agents.memory import tried_counts
        from agents.teacher import make_shards, teacher_orders

        cfg = self.cfg
        set_torch_threads(cfg.torch_threads)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "config.yaml").write_text(yaml.safe_dump(cfg.raw, sort_keys=False))
        timing_path = self.out / "timing.json"
        timing = json.loads(timing_path.read_text()) if timing_path.exists() else {}
        first = cfg.teacher["first_deal"]
        rounds = [(0, first, first + cfg.teacher["deals"], None)]
        lo = first + cfg.teacher["deals"]
        for r in range(1, cfg.dagger["rounds"] + 1):
            rounds.append((r, lo, lo + cfg.dagger["deals"], self.out / f"round{r - 1}.npz"))
            lo += cfg.dagger["deals"]
        log_path = self.out / "train.csv"
        best_path = self.out / "best.npz"
        best_wins = -1
        if best_path.exists():
            best_wins = int(read_meta_record(best_path).get("val_wins", -1))
        for r, a, b, student in rounds:
            ckpt = self.out / f"round{r}.npz"
            if ckpt.exists():
                continue
            t0 = time.perf_counter()
            make_shards(cfg.variant, a, b, self.out / "data" / f"round{r}", student=student,
                        max_nodes=cfg.teacher["max_nodes"], jobs=cfg.jobs,
                        stop_unsafe=cfg.dagger["stop_unsafe"] if r else 0,
                        on_repeat=cfg.teacher["on_repeat"], teacher=cfg.teacher["kind"],
                        nodes=cfg.teacher["nodes"], chunk=50 if cfg.teacher["kind"] == "search"
                        else 25, progress=progress)  # fmt: skip
            timing[f"round{r}_data"] = round(time.perf_counter() - t0, 1)
            paths = sorted((self.out / "data").glob("round*/*.npz"))
            data = load_shards(paths, variant=cfg.variant)
            if cfg.arch["heads"] == "factored":
                data["gorder"] = teacher_orders(data, self.game, self.options)
            if cfg.arch["memory"]:
                data["tried"] = tried_counts(data["obs"], data["masks"], data["played"],
                                             data["episode"], cfg.arch["memory_mode"])  # fmt: skip
            if cfg.train["teacher_wins_only"]:
                data = teacher_wins_only(data)
            torch.manual_seed(cfg.seed + r)
            net = build_net(dict(cfg.arch), self.spec)
            epochs = cfg.train["epochs"]
            if r and cfg.dagger["warm_start"]:
                net.load_state_dict(load_policy(student).net.state_dict())
                epochs = cfg.dagger["epochs"] or epochs
            elif not r and cfg.raw["init"]:
                net.load_state_dict(self.initial_weights(net))
            meta = self.meta(r)
            rows = []

            def log(row, r=r, rows=rows):
                rows.append({"round": r, **row})
                print(f"round {r} epoch {row['epoch']}: loss {row['loss']:.3f} "
                      f"acc {row['accuracy']:.3f} val wins {row.get('val_wins')}", flush=True)  # fmt: skip

            t0 = time.perf_counter()
            wins, _ = fit(net, data, epochs=epochs,
                          batch_size=cfg.train["batch_size"],
                          learning_rate=cfg.train["learning_rate"],
                          weight_decay=cfg.train["weight_decay"],
                          unsafe_weight=cfg.train["unsafe_weight"],
                          rank_weight=cfg.train["rank_weight"],
                          safe_weight=cfg.train["safe_weight"], seed=cfg.seed + r,
                          validate=validator(self.game, self.options, meta,
                                             cfg.validation["deals"]),
                          log=log, device=self.device)  # fmt: skip
            timing[f"round{r}_train"] = round(time.perf_counter() - t0, 1)
            extra = {"val_wins": wins, "val_deals": cfg.validation["deals"],
                     "positions": len(data["labels"]), "play": best_play(rows)}  # fmt: skip
            save_policy(ckpt, net, self.meta(r, extra))
            if wins > best_wins:
                save_policy(best_path, net, self.meta(r, extra))
                best_wins = wins
            new = not log_path.exists()
            with log_path.open("a", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                if new:
                    w.writeheader()
                w.writerows(rows)
            timing_path.write_text(json.dumps(timing, indent=1))
        return best_path


def best_play(history: list[dict]) -> dict:
    """The play rule of the epoch whose weights :func:`fit` kept (the last with the most
    validation wins), from ``history`` (its rows)."""
    best = max(range(len(history)), key=lambda i: (history[i].get("val_wins", 0), i))
    return json.loads(history[best].get("val_play", '{"rule": "policy"}'))


def load_best(out: str | Path, **kwargs):
    return load_policy(Path(out) / "best.npz", **kwargs)


def plot_imitation(train_csv: str | Path, path: str | Path, val_deals: int,
                   greedy: float | None = None) -> None:  # fmt: skip
    """Validation win rate after each epoch of each round (``train.csv``), with the greedy
    player's win rate on the evaluation deals as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(train_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(7, 4))
    x = 0
    for r in sorted({int(row["round"]) for row in rows}):
        part = [row for row in rows if int(row["round"]) == r]
        xs = list(range(x + 1, x + len(part) + 1))
        label = "round 0 (teacher's games)" if r == 0 else f"DAgger round {r}"
        ax.plot(xs, [100 * int(row["val_wins"]) / val_deals for row in part], marker=".",
                label=label)  # fmt: skip
        x += len(part)
    if greedy is not None:
        ax.axhline(100 * greedy, ls="--", color="gray", label="greedy (evaluation deals)")
    ax.set_xlabel("epoch (all rounds)")
    ax.set_ylabel(f"validation win rate, % ({val_deals} deals)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Imitating the solver-backed teacher")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
