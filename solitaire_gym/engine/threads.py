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

GNU OpenMP does not survive ``fork()``: numba terminates a child process, forked after the
parent's OpenMP threads started, at its first parallel launch. In such a child
:func:`parallel_ok` is False and the package's batched kernels run on one thread instead (with a
warning, once); the ``spawn`` and ``forkserver`` start methods of ``multiprocessing`` keep every
core.
"""

from __future__ import annotations

import os
import warnings

import numba

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
