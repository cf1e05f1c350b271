"""Deal ranges on Ray: the one place where the package's batch jobs go past one machine.

Every batch command of the package (``solitaire-gym solve --deals``, ``experiments/solvability.py``,
``experiments/evaluate.py``, the teacher-data command) is a function applied to many deal numbers,
one result per deal. :func:`run_deals` runs such a function either on a process pool of this
machine (``--jobs``) or on Ray (``--ray [ADDRESS]``), and yields the results as they come; the
command writes them to its resumable files, the same way on both paths.

On Ray the deals are cut into ranges (:func:`chunk_size`), one task per range; a task carries only
its deal numbers and the job's few parameters (variant, budget), and returns its results to the
driver, which alone writes files. So:

- a worker process that dies mid-task (killed, out of memory, node lost) loses only that task:
  Ray runs it again (``max_retries``), and since nothing was written for it, no deal is lost or
  written twice; the driver also drops any deal it has already yielded;
- a stopped driver loses the tasks in flight (at most ``in_flight`` ranges); the same command
  skips what its files hold and does the rest.

``address``: ``None`` or ``"local"`` starts Ray on this machine (``jobs`` CPUs, default all);
``"auto"`` joins the cluster this machine belongs to (``ray start --head`` / ``ray start
--address=...``); ``"HOST:PORT"`` the cluster whose head (GCS) listens there;
``"ray://HOST:10001"`` connects a Ray client to a remote cluster. Every node of a cluster needs
the package installed (``pip install -e '.[ray]'`` in a checkout), the same version as the
driver.
A cluster started with ``ray start`` uses token authentication by default (so in Ray 2.60):
the driver then needs ``RAY_AUTH_MODE=token`` and the cluster's token (``~/.ray/auth_token`` or
``RAY_AUTH_TOKEN``) whenever the address is given explicitly (also through ``RAY_ADDRESS``).

Ray is the ``ray`` extra: ``pip install -e '.[ray]'`` in a checkout.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from solitaire_gym.errors import SolitaireError, is_int

LOCAL = "local"
"""The ``--ray`` value (also what a bare ``--ray`` means) for a Ray started on this machine."""

MAX_CHUNK = 1000
"""No task carries more deals than this (a stopped driver loses at most the ranges in flight)."""

TASKS_PER_CPU = 8
"""Aim for this many tasks per CPU of the cluster, so that the last tasks finish close together."""


class RayError(SolitaireError):
    """Ray is not installed, or the cluster at the address given cannot be reached."""


def add_ray_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--ray [ADDRESS]`` option, the same in every command."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        default=None,
        metavar="ADDRESS",
        help="run on Ray: without ADDRESS a local Ray on this machine (all its CPUs, or --jobs "
        "where the script has it), with "
        "'auto' the cluster this machine is part of, with 'ray://HOST:10001' a remote cluster "
        "(needs the ray extra: pip install -e '.[ray]')",
    )


def import_ray():
    """The ``ray`` module, or :class:`RayError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayError(
            "--ray needs Ray, which is not installed: pip install -e '.[ray]' (the ray extra)"
        ) from None
    return ray


def check_address(address: str | None) -> str:
    """``None``/``"local"``, ``"auto"``, ``"ray://HOST:PORT"`` or ``"HOST:PORT"``; else RayError."""
    if address is None:
        return LOCAL
    if not isinstance(address, str) or not address.strip():
        raise RayError(f"Ray address {address!r}: expected 'local', 'auto' or 'ray://HOST:PORT'")
    a = address.strip()
    if a in (LOCAL, "auto"):
        return a
    rest = a.removeprefix("ray://")
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or not a.isascii():
        raise RayError(
            f"Ray address {address!r}: expected 'local', 'auto', 'ray://HOST:PORT' or 'HOST:PORT'"
        )
    return a


def connect(address: str | None = None, *, jobs: int | None = None):
    """Connect this process to Ray (once; later calls reuse the connection) and return the
    ``ray`` module. See the module docstring for ``address``; ``jobs`` is the number of CPUs a
    local Ray offers (default all), and is ignored for a cluster."""
    address = check_address(address)
    if jobs is not None and (not is_int(jobs) or jobs < 1):
        raise ValueError(f"jobs must be 1 or more, not {jobs!r}")
    ray = import_ray()
    if ray.is_initialized():
        return ray
    kw: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
    # Workers load the package's kernels from numba's cache: the same threading choice as here.
    env_vars = {k: os.environ[k] for k in ("NUMBA_THREADING_LAYER",) if k in os.environ}
    if env_vars:
        kw["runtime_env"] = {"env_vars": env_vars}
    try:
        if address == LOCAL:
            # A Ray of its own ("local"), never one that `ray start` left on this machine.
            # Results are small (a few KB per deal): a small object store is plenty.
            ray.init(
                address="local",
                num_cpus=int(jobs or os.cpu_count() or 1),
                object_store_memory=256 << 20,
                **kw,
            )
        else:
            ray.init(address=address, **kw)
    except (ConnectionError, RuntimeError, ValueError) as e:
        hint = ""
        if address != LOCAL and not os.environ.get("RAY_AUTH_MODE"):
            # `ray start` turns on token authentication by default, and Ray sends the token
            # to an address given explicitly only when told to
            hint = (
                "; if the cluster uses token authentication (the default of `ray start`), set "
                "RAY_AUTH_MODE=token here, with the cluster's token in ~/.ray/auth_token or "
                "RAY_AUTH_TOKEN"
            )
        raise RayError(f"cannot connect to Ray at {address!r}: {e}{hint}") from None
    return ray


def cluster_cpus(ray) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def chunk_size(n_deals: int, cpus: int, *, seconds_per_deal: float | None = None) -> int:
    """Deals per task: about :data:`TASKS_PER_CPU` tasks per CPU, at most :data:`MAX_CHUNK`
    deals, and, when a deal may take up to ``seconds_per_deal`` (a time budget), at most five
    minutes of such deals (so a lost task, or a stopped driver, costs little)."""
    size = math.ceil(max(1, n_deals) / (TASKS_PER_CPU * max(1, cpus)))
    cap = MAX_CHUNK
    if seconds_per_deal:
        cap = min(cap, max(1, int(300 / seconds_per_deal)))
    return max(1, min(size, cap))


def chunks(deals: Sequence[int], size: int, *, align: int = 1) -> list[list[int]]:
    """``deals`` cut into consecutive ranges of ``size`` (rounded up to a multiple of
    ``align``: a batch size that the results must not depend on)."""
    if size < 1 or align < 1:
        raise ValueError(f"chunk size and alignment must be 1 or more, not {size}, {align}")
    size = math.ceil(size / align) * align
    deals = list(deals)
    return [deals[i : i + size] for i in range(0, len(deals), size)]


def map_chunks(
    fn: Callable[..., Any],
    parts: Iterable[Any],
    *,
    args: tuple = (),
    address: str | None = None,
    jobs: int | None = None,
    max_retries: int = 3,
    in_flight: int | None = None,
) -> Iterator[tuple[list[int], list[Any]]]:
    """Call ``fn(part, *args)`` for each part as a Ray task; yield ``(part, fn's result)`` as each
    task finishes (completion order). A part is usually a range of deal numbers (a list), but
    may be any picklable task description (the teacher-data command's dicts: see
    :func:`run_deals` for the deal-by-deal case). ``fn`` must be a module-level function of an
    installed module. A task whose worker dies is run again, up to ``max_retries`` times; an exception
    raised by ``fn`` is raised here (not retried: it would fail again). At most ``in_flight``
    tasks (default: two per CPU of the cluster) are submitted at a time; the rest wait, and are
    never submitted if the caller stops.

    Tasks in flight when the caller stops are not cancelled: ``ray.cancel`` races with a task's
    completion inside Ray (a fatal "Tried to complete task that was not pending" check that
    killed a stopped run with exit 1, ray-project/ray#54798). They end with the driver instead:
    a local Ray is shut down at exit, and a cluster kills the workers of a job whose driver is
    gone. A caller that stops early but keeps its process waits at most ``in_flight`` tasks'
    worth of CPU on the cluster."""
    ray = connect(address, jobs=jobs)
    remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(fn)
    limit = in_flight or 2 * cluster_cpus(ray)
    refs = [ray.put(a) for a in args]  # shipped once, not with every task
    pending: dict[Any, Any] = {}
    todo = iter(parts)
    exhausted = False
    while True:
        while not exhausted and len(pending) < limit:
            part = next(todo, None)
            if part is None:
                exhausted = True
                break
            pending[remote.remote(part, *refs)] = part
        if not pending:
            return
        # no timeout needed: Ray's wait returns on Ctrl-C even while a long task runs
        # (tests/test_distributed.py: a 10-minute task in flight, the run stops in seconds)
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            part = pending.pop(ref)
            try:
                result = ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                cause = getattr(e, "cause", None)
                if isinstance(cause, Exception):
                    raise cause from None
                raise
            except ray.exceptions.WorkerCrashedError:
                what = f"deals {part[0]} … {part[-1]}" if isinstance(part, list) else part
                raise RayError(
                    f"{what}: the worker died {max_retries + 1} times running it; see the "
                    "Ray logs (/tmp/ray/session_latest/logs)"
                ) from None
            yield part, result


def run_deals(
    fn: Callable[..., list[Any]],
    deals: Sequence[int],
    *,
    args: tuple = (),
    ray: str | None = None,
    jobs: int | None = None,
    chunk: int | None = None,
    seconds_per_deal: float | None = None,
    init: Callable[[], None] | None = None,
    key: Callable[[Any], int] | None = None,
) -> Iterator[Any]:
    """``fn(part, *args)`` returns one result per deal of ``part``; yield every deal's result,
    as they come. ``ray`` (an address, see the module docstring) runs the parts on Ray, in ranges
    of ``chunk`` deals (default :func:`chunk_size`); without it, ``jobs`` processes of this
    machine (default all; one deal per task, ``init`` run once in each; in this process when one
    job) do them. ``key`` gives a result's deal number: on Ray, a result whose deal was already
    yielded (a task that ran twice) is dropped. With a process pool or a local Ray, ``init`` runs
    here first, before any worker starts: it fills numba's disk cache once (the one compile),
    which the workers then only load; without it, every worker of a cold cache compiles the same
    kernels at the same time (16 workers compiled the solver for minutes, issue 43)."""
    deals = list(deals)
    if ray is not None:
        address = check_address(ray)
        if address == LOCAL and init is not None and deals:
            init()
        r = connect(address, jobs=jobs)
        size = chunk or chunk_size(len(deals), cluster_cpus(r), seconds_per_deal=seconds_per_deal)
        seen: set[int] = set()
        for _part, results in map_chunks(fn, chunks(deals, size), args=args, address=address):
            for rec in results:
                if key is not None:
                    d = key(rec)
                    if d in seen:
                        continue
                    seen.add(d)
                yield rec
        return
    jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be 1 or more, not {jobs}")
    if init is not None:
        init()  # here first, once (a pool's workers then only load what it compiled)
    if jobs == 1 or len(deals) <= 1:
        for d in deals:
            yield from fn([d], *args)
        return
    pool = mp.get_context("spawn").Pool(min(jobs, len(deals)), initializer=init)
    try:
        for results in pool.imap_unordered(_Call(fn, args), ([d] for d in deals), chunksize=1):
            yield from results
    finally:
        pool.terminate()
        pool.join()


class _Call:
    """``fn(part, *args)`` as a picklable one-argument callable for a process pool."""

    def __init__(self, fn: Callable[..., list[Any]], args: tuple) -> None:
        self.fn = fn
        self.args = args

    def __call__(self, part: list[int]) -> list[Any]:
        return self.fn(part, *self.args)
