"""Bad arguments to the envs: reset options, seeds and reset masks, actions (the SB3 adapter's
too), and the engine's :class:`Batch` under the vector env, whose rows, actions, deals and sizes
are checked before any compiled kernel runs. Each is refused with the package's own error and a
short message, and nothing changes: no game, no random generator."""

import copy
import subprocess
import sys

import numpy as np
import pytest
from refusing import refused

from solitaire_gym import GameCodeError, SolitaireError
from solitaire_gym.engine.batch import Batch
from solitaire_gym.engine.variants import parse_code
from solitaire_gym.envs.solitaire_env import SolitaireEnv
from solitaire_gym.envs.vector_env import SolitaireVectorEnv
from solitaire_gym.errors import ArgumentError

SH = "SH1-C4-AAAAAJ2"

# ---- the engine's batch: rows, actions and deals are checked before any kernel -------------------


def snapshot(state) -> list[np.ndarray]:
    return [a.copy() for a in state.arrays()]


def same(state, before) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(state.arrays(), before, strict=True))


def _batch(undo_depth=10):
    b = Batch(parse_code("SH1-C4-AAAAAAB")[0], 4, undo_depth=undo_depth)
    b.deal(np.arange(4))
    return b


def test_batch_undo_far_out_of_range_does_not_crash():
    # It segfaulted: run it in a child, so that a crash fails this test instead of pytest.
    script = (
        "import numpy as np\n"
        "from solitaire_gym.engine.batch import Batch\n"
        "from solitaire_gym.engine.variants import parse_code\n"
        "from solitaire_gym.errors import ArgumentError\n"
        "b = Batch(parse_code('SH1-C4-AAAAAAB')[0], 4, undo_depth=10)\n"
        "b.deal(np.arange(4))\n"
        "for rows in ([100000000], [-5], [2**62]):\n"
        "    try:\n"
        "        b.undo(rows)\n"
        "    except ArgumentError:\n"
        "        continue\n"
        "    raise SystemExit(f'undo({rows}) was accepted')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])


@pytest.mark.parametrize(
    "call",
    [
        lambda b: b.undo([4]),  # one past the end: it "succeeded" on memory past the arrays
        lambda b: b.undo([-1]),
        lambda b: b.undo([0.5]),
        lambda b: b.undo([0, 0]),  # one row twice: two threads on one row
        lambda b: b.undo("0"),
        lambda b: b.deal([1], rows=[4]),
        lambda b: b.deal([1.5, 2, 3, 4]),
        lambda b: b.deal([-1, 2, 3, 4]),
        lambda b: b.step([0.9, 0, 0, 0]),
        lambda b: b.step([True, False, False, False]),
        lambda b: b.step([5000, 0, 0, 0]),
        lambda b: b.step([0, 0, 0]),
    ],
)
def test_batch_refuses_bad_rows_actions_deals(call):
    b = _batch()
    before = snapshot(b.state)
    refused(ArgumentError, call, b)
    assert same(b.state, before)


@pytest.mark.parametrize("size,depth", [(0, 0), (-1, 0), (2.5, 0), (True, 0), (2, -1), (2, 1.5)])
def test_batch_refuses_bad_sizes(size, depth):
    refused(ArgumentError, Batch, parse_code(SH)[0], size, undo_depth=depth)


# ---- reset: options, seeds, reset masks ----------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        5,
        "deal",
        [1],
        {"deal": 5.0},
        {"deal": "5"},
        {"deal": [1, 2]},
        {"deal": True},
        {"code": 5},
        {"code": ["SH1-C4-AAAAAJ2", SH]},
        {"state": "SH1-C4-AAAAAJ2"},
        {1: 2},
        {"seed": 3},
    ],
    ids=repr,
)
def test_single_env_reset_options(options):
    env = SolitaireEnv()
    env.reset(seed=3)
    before, rng = env.to_dict(), copy.deepcopy(env.np_random.bit_generator.state)
    refused(SolitaireError, env.reset, options=options)
    assert env.to_dict() == before
    assert env.np_random.bit_generator.state == rng


@pytest.mark.parametrize(
    "mask",
    [[True], [True] * 5, [0, 1, 2, 3], [1, 0, 1, 0], [0.0, 1.0, 0.0, 1.0], "1010", [[True] * 4]],
    ids=repr,
)
def test_vector_reset_mask_must_be_one_boolean_per_game(mask):
    env = SolitaireVectorEnv(4)
    env.reset(seed=1)
    codes = [env.to_dict(i) for i in range(4)]
    refused(ArgumentError, env.reset, options={"reset_mask": mask})
    assert [env.to_dict(i) for i in range(4)] == codes


def test_state_option_is_a_position_not_deal_numbers():
    env = SolitaireEnv()
    env.reset(seed=0)
    refused(ArgumentError, env.reset, options={"state": [5]})
    refused(ArgumentError, env.reset, options={"state": 5})


def test_vector_seed_list_uses_every_seed():
    def first_codes(seed):
        env = SolitaireVectorEnv(3)
        _, info = env.reset(seed=seed)
        return list(info["code"])

    assert first_codes([1, 2, 3]) == first_codes([1, 2, 3])  # deterministic
    assert first_codes([1, 2, 3]) != first_codes([1, 2, 4])  # the last seed counts
    assert first_codes(7) == first_codes(7)
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=[1, 2])  # one per game
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=[1, None, 2])
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=-1)
    refused(ArgumentError, SolitaireVectorEnv(3).reset, seed=1.5)


def test_failing_reset_does_not_reseed():
    for env in (SolitaireEnv(), SolitaireVectorEnv(2)):
        env.reset(seed=5)
        state = copy.deepcopy(env.np_random.bit_generator.state)
        refused(SolitaireError, env.reset, seed=9, options={"code": "XX1-C4-AAAAAAB"})
        assert env.np_random.bit_generator.state == state


def test_single_env_refuses_reset_mask():
    env = SolitaireEnv()
    env.reset(seed=1)
    assert "reset_mask" in refused(ArgumentError, env.reset, options={"reset_mask": [True]})


# ---- actions are integers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "actions",
    [[np.nan, 0], [0.9, 0], [True, False], [0.0, 1.0], ["1", "2"], [0, 10**6], [-1, 0], [0]],
    ids=repr,
)
def test_sb3_step_async_refuses_non_integer_actions(actions):
    pytest.importorskip("stable_baselines3")
    from solitaire_gym.envs.sb3 import SB3VecEnv

    env = SB3VecEnv(num_envs=2, seed=0)
    env.reset()
    before = [env._core.to_dict(i) for i in range(2)]
    refused(ArgumentError, env.step_async, np.array(actions))
    assert [env._core.to_dict(i) for i in range(2)] == before


def test_timedelta_is_not_an_integer():
    """numpy files timedelta64 under its integers; the package does not take it for one."""
    import gymnasium as gym

    from solitaire_gym import Variant
    from solitaire_gym.engine.batch import int_array
    from solitaire_gym.errors import ArgumentError

    venv = gym.make_vec("solitaire_gym/SeahavenTowers-v0", num_envs=3)
    venv.reset(seed=0)
    with pytest.raises(ArgumentError):
        venv.step(np.zeros(3, "m8[s]"))
    with pytest.raises(ArgumentError):
        int_array(np.array([1, 2], "m8[s]"), "deals")
    env = gym.make("solitaire_gym/SeahavenTowers-v0")
    env.reset(seed=0)
    with pytest.raises(ArgumentError):
        env.step(np.timedelta64(3))
    with pytest.raises(GameCodeError):
        Variant(True)
