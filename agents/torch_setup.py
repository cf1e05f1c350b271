"""Where torch runs: the device a network trains or plays on.

Every entry that trains or plays a torch network (``experiments/train.py``, ``imitate.py``,
``train_policy.py``, ``finetune_ppo.py``, ``evaluate.py``) takes ``--device``
(:func:`add_device_argument`) and resolves it with :func:`resolve_device` before any work starts.
Their torch CPU threads: :func:`solitaire_gym.engine.threads.set_torch_threads`.

Devices: ``"auto"`` (CUDA when ``torch.cuda.is_available()``, else the CPU), ``"cpu"``,
``"cuda"`` and ``"cuda:N"``. Anything else, or a CUDA device this machine lacks, is refused with
a :class:`DeviceError` that names it.
"""

from __future__ import annotations

import re

from solitaire_gym.errors import ArgumentError, shown

DEVICES = ("auto", "cpu", "cuda", "cuda:N")
"""The device names :func:`resolve_device` takes (``N``: a CUDA device's index)."""
AUTO = "auto"
"""The default device of every entry: CUDA when torch sees a CUDA device, else the CPU."""

_DEVICE_RE = re.compile(r"^(auto|cpu|cuda(:(0|[1-9][0-9]{0,3}))?)$", re.ASCII)


class DeviceError(ArgumentError):
    """A device name that is not one of :data:`DEVICES`, or a CUDA device this machine lacks."""


def check_device_name(device: object) -> str:
    """``device`` if it is one of the names of :data:`DEVICES`, else a :class:`DeviceError`.
    Checks the spelling only (torch is not imported): :func:`resolve_device` checks the
    machine."""
    if not isinstance(device, str) or not _DEVICE_RE.match(device):
        raise DeviceError(
            f"device must be one of {', '.join(repr(d) for d in DEVICES)} (N: a CUDA device's "
            f"index), not {shown(device)}"
        )
    return device


def resolve_device(device: str = AUTO) -> str:
    """The torch device ``device`` names on this machine: ``"auto"`` becomes ``"cuda"`` when
    ``torch.cuda.is_available()``, else ``"cpu"``; ``"cpu"``, ``"cuda"`` and ``"cuda:N"`` are
    returned as they are once this machine is known to have them. A bad name, or CUDA asked for
    where torch sees no CUDA device (or fewer than ``N + 1``), raises a :class:`DeviceError`."""
    check_device_name(device)
    if device == "cpu":
        return device
    import torch

    available = torch.cuda.is_available()
    if device == AUTO:
        return "cuda" if available else "cpu"
    if not available:
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise DeviceError(
            f"device {device!r}: torch {torch.__version__} ({build}) finds no CUDA device; "
            "use 'auto' or 'cpu'"
        )
    index = int(device.partition(":")[2] or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise DeviceError(
            f"device {device!r}: this machine has {count} CUDA device(s), cuda:0 … cuda:{count - 1}"
        )
    return device


def add_device_argument(parser) -> None:
    """Add ``--device`` (default :data:`AUTO`) to the ``argparse`` parser of an entry that
    trains or plays a torch network; the entry resolves it with :func:`resolve_device` before
    any work starts."""
    parser.add_argument(
        "--device",
        default=AUTO,
        help=f"where the network runs: {', '.join(DEVICES)} (default {AUTO}: CUDA when torch "
        "sees a CUDA device, else the CPU)",
    )


def net_device(net):
    """The device of the torch module ``net``'s first parameter (the CPU for a module without
    any): where its inputs go."""
    import torch

    return next((w.device for w in net.parameters()), torch.device("cpu"))
