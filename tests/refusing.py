"""The check every refusal of bad input passes (``test_game.py``, ``test_file_formats.py``, the
fuzz suite …): the error named, with a message that stays short whatever the size of the
input."""

import numpy as np
import pytest

MAX_MESSAGE = 400  # what a refusal may print, whatever the size of the input


def refused(error, f, *args, **kwargs) -> str:
    """``f(*args, **kwargs)`` raises ``error`` with a short message; returns the message."""
    with pytest.raises(error) as e:
        f(*args, **kwargs)
    assert len(str(e.value)) <= MAX_MESSAGE, str(e.value)[:1000]
    return str(e.value)


def write_file(tmp_path, name, data: bytes):
    """A file ``name`` in ``tmp_path`` holding ``data``; its path."""
    p = tmp_path / name
    p.write_bytes(data)
    return p


def npy_bytes(arr=None, *, header=None, cut: int = 0) -> bytes:
    """The bytes of an .npy file holding ``arr`` (pickled if it holds objects), less its last
    ``cut`` bytes; or of a bare .npy header ``header`` with no data: the members of the damaged
    checkpoints the loaders must refuse."""
    import io

    from numpy.lib import format as npy_format

    buf = io.BytesIO()
    if header is not None:
        npy_format.write_array_header_1_0(buf, header)
    else:
        np.save(buf, arr, allow_pickle=True)
    data = buf.getvalue()
    return data[: len(data) - cut]
