"""Where torch runs: the device names every training and evaluation entry takes
(agents/torch_setup.py), and torch's CPU threads beside the env kernels
(solitaire_gym/engine/threads.py: set_torch_threads, play_deals, SB3VecEnv)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from agents.config import KEEP_ALL, stale_checkpoints  # noqa: E402
from agents.torch_setup import (  # noqa: E402
    AUTO,
    DeviceError,
    check_device_name,
    resolve_device,
)
from solitaire_gym.engine.threads import (  # noqa: E402
    MAX_TORCH_THREADS,
    SHARED_CORE_THREADS,
    set_torch_threads,
)
from solitaire_gym.errors import ArgumentError, SolitaireError  # noqa: E402

HAS_CUDA = torch.cuda.is_available()


def test_auto_is_cuda_where_torch_sees_it_else_the_cpu():
    assert resolve_device(AUTO) == ("cuda" if HAS_CUDA else "cpu")
    assert resolve_device() == resolve_device(AUTO)
    assert resolve_device("cpu") == "cpu"


@pytest.mark.parametrize(
    "bad", ["gpu", "CPU", "cuda:", "cuda:01", "cuda:-1", "cuda:x", " cpu", "mps", "", 0, None]
)
def test_a_bad_device_name_is_refused_by_name(bad):
    with pytest.raises(DeviceError, match=r"device must be one of 'auto', 'cpu', 'cuda', 'cuda:N'"):
        resolve_device(bad)
    with pytest.raises(DeviceError) as e:
        check_device_name(bad)
    assert repr(bad) in str(e.value)
    assert isinstance(e.value, SolitaireError)


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a CUDA device")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_is_refused_where_torch_sees_none(device):
    assert check_device_name(device) == device  # well spelt
    with pytest.raises(DeviceError, match=f"device '{device}': torch .* finds no CUDA device"):
        resolve_device(device)


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device here")
def test_a_cuda_index_past_the_devices_is_refused():
    count = torch.cuda.device_count()
    assert resolve_device("cuda:0") == "cuda:0"
    with pytest.raises(DeviceError, match=f"has {count} CUDA device"):
        resolve_device(f"cuda:{count}")


def test_torch_threads_are_set_and_bad_counts_refused():
    before = torch.get_num_threads()
    try:
        set_torch_threads(2)
        assert torch.get_num_threads() == 2
        set_torch_threads()
        assert torch.get_num_threads() == 1
        for bad in (0, -1, 1.5, True, "2", MAX_TORCH_THREADS + 1, None):
            with pytest.raises(ArgumentError, match="torch threads must be an integer"):
                set_torch_threads(bad)
            assert torch.get_num_threads() == 1  # unchanged
    finally:
        torch.set_num_threads(before)


def test_stale_checkpoints_keep_the_latest_or_all():
    found = [f"step_{i:010d}.zip" for i in (256, 512, 768)]
    assert stale_checkpoints(found, 1) == found[:2]
    assert stale_checkpoints(found, 2) == found[:1]
    assert stale_checkpoints(found, 5) == []
    assert stale_checkpoints(found, KEEP_ALL) == []
    assert stale_checkpoints([], 1) == []


def test_play_deals_lowers_torch_threads_while_it_plays_and_sets_them_back():
    """The env kernels and a network-driven agent share the cores inside play_deals: torch runs
    on at most the threads asked for there, and gets its own setting back after."""
    from agents import RandomAgent, play_deals

    class Probe(RandomAgent):
        def _act(self, obs, masks, starts, active, view):
            seen.add(torch.get_num_threads())
            return super()._act(obs, masks, starts, active, view)

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        for asked, want in ((None, 3), (1, 1), (2, 2), (5, 3)):
            seen: set[int] = set()
            play_deals(Probe(), "seahaven_towers", {"cells": 4}, [0, 1], max_episode_steps=5,
                       torch_threads=asked)  # fmt: skip
            assert seen == {want}, asked
            assert torch.get_num_threads() == 3
        seen = set()
        play_deals(Probe(), "seahaven_towers", {"cells": 4}, [0], max_episode_steps=5)
        assert seen == {SHARED_CORE_THREADS}  # the default
    finally:
        torch.set_num_threads(before)


def test_sb3_vec_env_lowers_torch_threads_unless_told_not_to():
    pytest.importorskip("stable_baselines3")
    from solitaire_gym.envs.sb3 import SB3VecEnv

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        SB3VecEnv("seahaven_towers", num_envs=2, torch_threads=None)
        assert torch.get_num_threads() == 3
        SB3VecEnv("seahaven_towers", num_envs=2, torch_threads=2)
        assert torch.get_num_threads() == 2
        SB3VecEnv("seahaven_towers", num_envs=2, torch_threads=5)  # never raised
        assert torch.get_num_threads() == 2
        SB3VecEnv("seahaven_towers", num_envs=2)
        assert torch.get_num_threads() == SHARED_CORE_THREADS
        torch.set_num_threads(3)
        for bad in (0, "1", 1.0):
            with pytest.raises(ArgumentError, match="torch threads must be an integer"):
                SB3VecEnv("seahaven_towers", num_envs=2, torch_threads=bad)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
