"""The check every refusal of bad input passes (``test_game.py``, ``test_file_formats.py``, the
fuzz suite …): the error named, with a message that stays short whatever the size of the
input."""

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
