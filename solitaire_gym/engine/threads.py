"""How the batched kernels use the cores: the thread count for a parallel launch, and from how
many rows a launch pays for itself.

numba picks its threading layer on the first parallel launch of the process: ``tbb`` if
installed, else ``omp`` (GNU OpenMP, present wherever gcc's runtime is), else ``workqueue``
(``NUMBA_THREADING_LAYER`` or ``numba.config.THREADING_LAYER`` choose one). What a launch costs
depends on it (``benchmarks/bench_launch.py``, 2 cores):

* ``omp`` with its default, spinning, wait policy: ~15 µs on idle cores, but when other
  processes keep every core busy a launch can wait a whole time slice (milliseconds), and its
  threads spinning between launches starve a policy network running in the same process;
* ``omp`` with ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep between launches): 60–70 µs idle,
  100–120 µs on average (median 40–45 µs) with every core busy;
* ``workqueue``: 105–115 µs idle, 145–185 µs on average (median 60–90 µs) busy, and a slower
  step besides (docs/speed.md).

So the first launch made through :func:`num_threads` starts the OpenMP threads with
``OMP_WAIT_POLICY=PASSIVE`` unless that variable is set: it is set only while the runtime reads
it, and put back afterwards. (A torch imported later shares that runtime and its passive
policy; one imported before has its own.) Set ``OMP_WAIT_POLICY=ACTIVE`` on dedicated cores for
the fastest launches.

torch's CPU threads (:func:`set_torch_threads`): torch's default is one thread per core, and
a torch imported before its OpenMP runtime saw ``OMP_WAIT_POLICY=PASSIVE`` spins between its
calls. Where the env kernels and a network take turns in one process (PPO training, playing a
network-driven agent) those threads starve the kernels' (about 70 times fewer env steps a
second for MaskablePPO on 2 cores, docs/training.md). So the package keeps torch at
:data:`SHARED_CORE_THREADS` threads there: ``SB3VecEnv`` lowers torch's threads to it when it is
built, ``agents.play.play_deals`` while it plays (:func:`torch_threads_at_most`), and the
training and evaluation commands set it (``torch_threads`` in a config, ``--torch-threads``).
Nothing here imports torch: the helpers act on a torch already loaded.

GNU OpenMP does not survive ``fork()``: numba terminates a child process, forked after the
parent's OpenMP threads started, at its first parallel launch. In such a child
:func:`parallel_ok` is False and the package's batched kernels run on one thread instead (with a
warning, once); the ``spawn`` and ``forkserver`` start methods of ``multiprocessing`` keep every
core.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator

import numba

from solitaire_gym.errors import ArgumentError, is_int, shown

SHARED_CORE_THREADS = 1
"""torch's CPU threads where the env kernels share the cores with a network."""
MAX_TORCH_THREADS = 1024
"""The most CPU threads :func:`set_torch_threads` takes."""

_started = False
_forked = False  # forked from a process whose OpenMP threads had started
_warned = False


def _after_fork_in_child() -> None:
    global _forked
    try:
        started = numba.threading_layer() == "omp"
    except ValueError:  # no threading layer loaded before the fork: this process may load one
        return
    _forked = _forked or started


os.register_at_fork(after_in_child=_after_fork_in_child)


def _start() -> None:
    global _started
    mine = "OMP_WAIT_POLICY" not in os.environ
    if mine:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        numba.get_num_threads()  # loads the threading layer and starts its threads
    finally:
        if mine:
            del os.environ["OMP_WAIT_POLICY"]
    _started = True


def num_threads() -> int:
    """Threads for one parallel launch (numba's current setting). The first call starts the
    threads as the module docstring says."""
    if not _started:
        _start()
    return numba.get_num_threads()


def layer() -> str:
    """The threading layer in use (started by this call if need be; in a forked child it is
    loaded already, and nothing there calls into it)."""
    if not _forked:
        num_threads()
    return numba.threading_layer()


def parallel_ok() -> bool:
    """Whether this process may launch parallel kernels: not in a child forked after the
    OpenMP threads started (see the module docstring)."""
    global _warned
    if _forked and not _warned:
        _warned = True
        warnings.warn(
            "this process was forked after numba's OpenMP threads started, and GNU OpenMP cannot "
            "run in it: solitaire_gym's batched kernels run on one thread here. Start worker "
            "processes with multiprocessing's 'spawn' or 'forkserver' method to use every core.",
            RuntimeWarning,
            stacklevel=3,
        )
    return not _forked


def use_parallel(rows: int, threaded: int, workqueue: int, fixed: int | None = None) -> bool:
    """Whether ``rows`` rows run on all cores: from ``workqueue`` rows under numba's workqueue
    layer, whose launches cost more, else from ``threaded`` (from ``fixed`` rows whatever the
    layer, if given); never where parallel launches are not possible (:func:`parallel_ok`). A
    batch below the threshold loads no threading layer."""
    if fixed is not None:
        least = fixed
    elif rows < min(threaded, workqueue):
        return False
    else:
        least = workqueue if layer() == "workqueue" else threaded
    return rows >= least and parallel_ok()


def check_torch_threads(threads: object) -> int:
    """``threads`` as an int if it is an integer from 1 to :data:`MAX_TORCH_THREADS`, else an
    :class:`~solitaire_gym.errors.ArgumentError` naming it."""
    if not is_int(threads) or not 1 <= threads <= MAX_TORCH_THREADS:
        raise ArgumentError(
            f"torch threads must be an integer from 1 to {MAX_TORCH_THREADS}, not {shown(threads)}"
        )
    return int(threads)


def set_torch_threads(threads: int = SHARED_CORE_THREADS) -> None:
    """Set torch's CPU threads (``torch.set_num_threads``, importing torch) to ``threads``
    (:func:`check_torch_threads`: a bad count changes nothing)."""
    threads = check_torch_threads(threads)
    import torch

    torch.set_num_threads(int(threads))


def lower_torch_threads(threads: int | None = SHARED_CORE_THREADS) -> int | None:
    """Lower torch's CPU threads to ``threads`` if torch is loaded and uses more; returns what
    they were when lowered, else None (``threads`` None, torch not loaded, or not more)."""
    if threads is None:
        return None
    threads = check_torch_threads(threads)
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    before = torch.get_num_threads()
    if before <= threads:
        return None
    set_torch_threads(threads)
    return before


@contextlib.contextmanager
def torch_threads_at_most(threads: int | None = SHARED_CORE_THREADS) -> Iterator[None]:
    """Within: torch's CPU threads lowered to ``threads`` (:func:`lower_torch_threads`); on
    leaving, set back to what they were."""
    before = lower_torch_threads(threads)
    try:
        yield
    finally:
        if before is not None:
            sys.modules["torch"].set_num_threads(before)
