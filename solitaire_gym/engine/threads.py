"""How the batched kernels use the cores: the thread count for a parallel launch, and from how
many rows a launch pays for itself.

numba picks its threading layer on the first parallel launch of the process: ``tbb`` if
installed, else ``omp`` (GNU OpenMP, present wherever gcc's runtime is), else ``workqueue``
(``NUMBA_THREADING_LAYER`` or ``numba.config.THREADING_LAYER`` choose one). What a launch costs
depends on it (``benchmarks/bench_launch.py``, 2 cores):

* ``omp`` with its default, spinning, wait policy: ~15 µs on idle cores, but when other
  processes keep every core busy a launch can wait a whole time slice (milliseconds), and its
  threads spinning between launches starve a policy network running in the same process;
* ``omp`` with ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep between launches): ~55 µs idle and
  ~35 µs with every core busy;
* ``workqueue``: ~100 µs idle, ~80 µs busy, and a slower step besides (README, "Speed").

So the first launch made through :func:`num_threads` starts the OpenMP threads with
``OMP_WAIT_POLICY=PASSIVE`` unless that variable is set: it is set only while the runtime reads
it, and put back afterwards. (A torch imported later shares that runtime and its passive
policy; one imported before has its own.) Set ``OMP_WAIT_POLICY=ACTIVE`` on dedicated cores for
the fastest launches.
"""

from __future__ import annotations

import os

import numba

_started = False


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
    """The threading layer in use (started by this call if need be)."""
    num_threads()
    return numba.threading_layer()


def parallel_from(threaded: int, workqueue: int) -> int:
    """Fewest rows from which a parallel launch pays: ``workqueue`` under numba's workqueue
    layer, whose launches cost more, else ``threaded``."""
    return workqueue if layer() == "workqueue" else threaded
