"""Fine-tune a cloned policy network with MaskablePPO (``agents/sb3_policy.py``).

    python experiments/finetune_ppo.py agents/checkpoints/SH1-C4.npz --timesteps 60000 \\
        --out runs/ppo_sh1c4

Starts from the checkpoint's weights, trains on training-split deals with the engine's
``foundation`` reward (+1 per card put on a foundation, −1 per card taken back, ``--win-bonus``
on the winning move), and every ``--eval-every`` steps plays ``--val-deals`` validation deals
(evaluation split from 2^19) deterministically with the policy head. Writes ``eval.csv`` (the
starting network is step 0; a row as each evaluation ends, so a run stopped early keeps its
table), ``best.npz`` (the best validation wins, an ordinary policy
checkpoint: ``experiments/publish_policy.py`` can commit it) and ``final.npz``. What a position
the solver proves lost gets: nothing special by default; with ``--lost-penalty P`` the move
that makes a position lost ends the game with reward −P (``agents.sb3_policy.LostPositionEnd``:
one solver call per move, ``--solver-nodes`` each; a position the solver cannot decide goes on).
``--device`` (default ``auto``: CUDA when torch sees it, else the CPU) is where it trains.
"""

from __future__ import annotations

import argparse
import csv
import os
import shlex
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see experiments/demo.py; before torch

from agents.torch_setup import DeviceError, add_device_argument, resolve_device
from solitaire_gym.engine.threads import set_torch_threads


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint", help="the policy checkpoint (.npz) to start from")
    ap.add_argument("--out", required=True, help="the run's folder")
    ap.add_argument("--timesteps", type=int, default=60_000)
    ap.add_argument("--eval-every", type=int, default=10_000)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--n-steps", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--n-epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--clip-range", type=float, default=0.1)
    ap.add_argument("--ent-coef", type=float, default=0.0)
    ap.add_argument("--gamma", type=float, default=0.995)
    ap.add_argument("--win-bonus", type=float, default=10.0)
    ap.add_argument(
        "--lost-penalty",
        type=float,
        default=None,
        help="end a game with this reward on the move that makes it lost "
        "(solver-proven; agents.sb3_policy.LostPositionEnd); default: off",
    )
    ap.add_argument("--solver-nodes", type=int, default=20_000)
    ap.add_argument("--val-deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch-threads", type=int, default=1)
    add_device_argument(ap)
    args = ap.parse_args(argv)
    for name in ("timesteps", "eval_every", "num_envs", "n_steps", "batch_size", "n_epochs",
                 "val_deals"):  # fmt: skip
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.lost_penalty is not None and not args.lost_penalty >= 0:
        ap.error("--lost-penalty must be >= 0")
    if not (0 < args.lr <= 1 and 0 < args.clip_range <= 1 and args.win_bonus >= 0
            and 0 < args.gamma <= 1 and args.ent_coef >= 0):  # fmt: skip
        ap.error("--lr and --clip-range lie in (0, 1], --gamma in (0, 1], --win-bonus and "
                 "--ent-coef are >= 0")  # fmt: skip

    from sb3_contrib import MaskablePPO
    from tqdm import tqdm

    from agents.play import VALIDATION_START, VARIANTS, eval_deals, play_deals
    from agents.policy import CheckpointError, PolicyAgent, read_policy_meta
    from agents.sb3_policy import CardsPolicy, LostPositionEnd, PrevActionVecEnv, export_policy
    from solitaire_gym.envs.sb3 import SB3VecEnv

    try:
        device = resolve_device(args.device)
        meta = read_policy_meta(args.checkpoint)
    except (CheckpointError, DeviceError) as e:
        print(f"finetune_ppo: {e}", file=sys.stderr)
        return 2
    if meta["arch"].get("kind") != "cards":
        print("finetune_ppo: only a 'cards' network can be fine-tuned", file=sys.stderr)
        return 2
    set_torch_threads(args.torch_threads)
    variant = meta["variant"]
    game, options = VARIANTS[variant]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = SB3VecEnv(game, num_envs=args.num_envs, seed=args.seed, reward_mode="foundation",
                     win_bonus=args.win_bonus, torch_threads=None, **options)  # fmt: skip
    lost = None
    if args.lost_penalty is not None:
        lost = base = LostPositionEnd(base, penalty=args.lost_penalty,
                                      max_nodes=args.solver_nodes)  # fmt: skip
    env = PrevActionVecEnv(base)
    model = MaskablePPO(
        CardsPolicy, env, learning_rate=args.lr, n_steps=args.n_steps,
        batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
        clip_range=args.clip_range, ent_coef=args.ent_coef, seed=args.seed, device=device,
        policy_kwargs={"game": game, "options": options, "init": args.checkpoint}, verbose=0,
    )  # fmt: skip
    new_meta = {k: v for k, v in meta.items() if k not in ("check", "source", "history")}
    new_meta.update(play={"rule": "policy"}, finetuned_from=str(args.checkpoint),
                    trained_by=f"{meta.get('trained_by', '')}; then python "
                               f"experiments/finetune_ppo.py {shlex.join(argv)}")  # fmt: skip
    deals = eval_deals(args.val_deals, VALIDATION_START)

    def validate() -> int:
        agent = PolicyAgent(model.policy.card_net, {**new_meta, "variant": variant})
        wins = int(sum(r.won for r in play_deals(agent, game, options, deals)))
        model.policy.set_training_mode(False)
        return wins

    fields = ["step", "val_wins", "val_deals", "seconds", "solver_calls", "games_ended_lost"]
    table = (out / "eval.csv").open("w", newline="")
    writer = csv.DictWriter(table, fieldnames=fields)
    writer.writeheader()
    rows, best = [], -1
    t0 = time.perf_counter()
    bar = tqdm(total=args.timesteps, unit="step", desc=f"PPO {variant}")
    step = 0
    while True:
        wins = validate()
        rows.append({"step": step, "val_wins": wins, "val_deals": args.val_deals,
                     "seconds": round(time.perf_counter() - t0, 1),
                     "solver_calls": lost.calls if lost else 0,
                     "games_ended_lost": lost.ended if lost else 0})  # fmt: skip
        writer.writerow(rows[-1])
        table.flush()
        bar.set_postfix(val_wins=wins)
        if wins > best:
            best = wins
            export_policy(model, out / "best.npz", {**new_meta, "val_wins": wins,
                                                    "val_deals": args.val_deals,
                                                    "ppo_steps": step})  # fmt: skip
        if step >= args.timesteps:
            break
        chunk = min(args.eval_every, args.timesteps - step)
        before = model.num_timesteps
        model.learn(chunk, reset_num_timesteps=False)
        step += model.num_timesteps - before
        bar.update(model.num_timesteps - before)
    bar.close()
    export_policy(model, out / "final.npz", {**new_meta, "val_wins": rows[-1]["val_wins"],
                                             "val_deals": args.val_deals, "ppo_steps": step})  # fmt: skip
    table.close()
    print(f"{out}: validation wins {rows[0]['val_wins']} at the start, best {best} of "
          f"{args.val_deals}, {rows[-1]['val_wins']} after {step} steps")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
