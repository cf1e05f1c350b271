"""The main job for now (``make demo``): a few deals of every game and option, played with random
legal moves through the vector env, with their results; then one short game shown move by move.

Issue "Agents, training and the policy-versus-solver benchmark" replaces this with training and
evaluation.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import solitaire_gym  # noqa: F401  (registers the ids)
from solitaire_gym import Game
from solitaire_gym.envs.sampling import random_legal_actions

VARIANTS = [
    ("solitaire_gym/DoubleSolitaire-v0", {"draw": 1, "scoring": "normal"}),
    ("solitaire_gym/DoubleSolitaire-v0", {"draw": 3, "scoring": "vegas"}),
    ("solitaire_gym/SolitaireReflechi-v0", {"draw": 1}),
    ("solitaire_gym/SolitaireReflechi-v0", {"draw": 3}),
    ("solitaire_gym/SeahavenTowers-v0", {"cells": 4}),
    ("solitaire_gym/SeahavenTowers-v0", {"cells": 1}),
]


def play_random(env_id: str, kwargs: dict, games: int, seed: int) -> list[dict]:
    """Play ``games`` whole episodes with uniformly random legal actions (evaluation split)."""
    env = gym.make_vec(env_id, num_envs=games, split="eval", **kwargs)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    results: list[dict | None] = [None] * games
    while any(r is None for r in results):
        obs, rew, term, trunc, info = env.step(random_legal_actions(info["action_mask"], rng))
        for i in np.flatnonzero(term | trunc):
            if results[i] is None:
                results[i] = {
                    "code": info["code"][i],
                    "won": bool(info["won"][i]),
                    "stuck": bool(info["stuck"][i]),
                    "score": int(info["score"][i]),
                    "moves": int(info["moves"][i]),
                }
    return results  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description="Random legal play over every game and option.")
    parser.add_argument("--games", type=int, default=8, help="deals per variant")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    print(
        f"{'variant':<8} {'games':>5} {'won':>4} {'stuck':>5} {'mean score':>10} {'mean moves':>10}"
    )
    for env_id, kwargs in VARIANTS:
        res = play_random(env_id, kwargs, args.games, args.seed)
        tag = res[0]["code"].rsplit("-", 1)[0]
        print(
            f"{tag:<8} {len(res):>5} {sum(r['won'] for r in res):>4} "
            f"{sum(r['stuck'] for r in res):>5} {np.mean([r['score'] for r in res]):>10.1f} "
            f"{np.mean([r['moves'] for r in res]):>10.1f}"
        )
    print("\nOne Seahaven Towers game, first moves of a random player:")
    g = Game.from_code("SH1-C4-AAAAAJ2")
    rng = np.random.default_rng(args.seed)
    for _ in range(6):
        moves = g.legal_moves()
        if not moves:
            break
        move = moves[rng.integers(len(moves))]
        g.play(move)
        print(f"  {move:<8} score {g.score_text:>4}  moves {g.moves}")
    print(g)
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
