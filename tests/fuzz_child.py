"""The crash-prone part of the fuzz suite, run by ``test_fuzz.py`` in a child process:
``python tests/fuzz_child.py batch|envs|sb3``. Exit status 0: every generated call worked or was
refused cleanly (``fuzzing.refused_or_fine``); a failed check exits 1 with hypothesis's report;
a crash of compiled code kills only this process, and the parent test reports it."""

from __future__ import annotations

import sys

import numpy as np
from fuzzing import FUZZ, junk, refused_or_fine, state_of
from hypothesis import given
from hypothesis import strategies as st

rows_like = st.one_of(
    junk,
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6),
    st.lists(st.integers(-3, 6), max_size=6),
    st.lists(st.floats(), max_size=4),
    st.sampled_from([[4], [100000000], [-1], [2**62], [0, 0], np.array([1.5]), np.array([np.nan])]),
)
actions_like = st.one_of(
    rows_like,
    st.lists(st.integers(-5, 1400), min_size=4, max_size=4),
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=4, max_size=4),
    st.lists(st.floats(), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)


def run_batch() -> None:
    from solitaire_gym.engine.batch import Batch
    from solitaire_gym.engine.variants import parse_code

    @FUZZ
    @given(st.sampled_from(["SH1-C4-AAAAAAB", "DS1-D3V-AAAAAAB", "TF1-D1N-AAAAAAB"]), rows_like,
           actions_like, rows_like)  # fmt: skip
    def fuzz(code, rows, actions, deals):
        b = Batch(parse_code(code)[0], 4, undo_depth=3)
        b.deal(np.arange(4))
        b.step(np.zeros(4, np.int64) - 1)

        def snap():
            return state_of(b.state)

        refused_or_fine(lambda: b.undo(rows), snap)
        refused_or_fine(lambda: b.step(actions), snap)
        refused_or_fine(lambda: b.deal(deals, rows=rows), snap)
        refused_or_fine(lambda: b.deal(deals), snap)
        b.masks()

    fuzz()


def run_envs() -> None:
    from solitaire_gym import SolitaireEnv, SolitaireVectorEnv

    @FUZZ
    @given(st.sampled_from(["seahaven_towers", "double_solitaire", "solitaire_reflechi"]),
           st.booleans(), st.sampled_from(["move", "tap"]), st.lists(st.one_of(junk, actions_like,
           st.integers(-3, 1400)), min_size=1, max_size=5))  # fmt: skip
    def fuzz(game, undo, mode, actions):
        single = SolitaireEnv(game, undo=undo, action_mode=mode)
        single.reset(seed=0)
        vec = SolitaireVectorEnv(4, game, undo=undo, action_mode=mode)
        vec.reset(seed=0)
        for a in actions:
            refused_or_fine(lambda a=a: single.step(a), single.to_dict)
            refused_or_fine(
                lambda a=a: vec.step(a if not isinstance(a, list) else np.array(a, dtype=object)),
                lambda: [vec.to_dict(i) for i in range(4)],
            )
            try:
                arr = np.asarray(a)
            except (ValueError, OverflowError):
                continue
            refused_or_fine(
                lambda arr=arr: vec.step(arr), lambda: [vec.to_dict(i) for i in range(4)]
            )

    fuzz()


def run_sb3() -> None:
    from solitaire_gym.envs.sb3 import SB3VecEnv

    @FUZZ
    @given(actions_like, st.one_of(st.none(), junk))
    def fuzz(actions, indices):
        env = SB3VecEnv("seahaven_towers", num_envs=4, seed=0)
        env.reset()

        def snap():
            return [env._core.to_dict(i) for i in range(4)]

        try:
            arr = np.asarray(actions)
        except (ValueError, OverflowError):
            arr = actions
        if not refused_or_fine(lambda: env.step_async(arr), snap):
            env.step_wait()
        refused_or_fine(lambda: env.env_method("action_masks", indices=indices), snap)
        refused_or_fine(lambda: env.get_attr("num_envs", indices=indices), snap)

    fuzz()


if __name__ == "__main__":
    {"batch": run_batch, "envs": run_envs, "sb3": run_sb3}[sys.argv[1]]()
    print("ok")
