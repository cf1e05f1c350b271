"""Keep numba's on-disk cache in step with the package's sources.

numba's ``cache=True`` checks a compiled function against its own file only (modification time and
size). A kernel in one file that calls a function from another carries a compiled copy of that
callee, so after an edit to the callee's file it would go on running the old code: after a
``git pull`` into an editable install, the env kernels would keep the old rules. To prevent that,
the package clears its whole numba cache when any of its source files has changed since the cache
was written, and writes a stamp of what it saw. Importing this module does it for the package
(``solitaire_gym/__init__.py`` imports it before anything compiled).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STAMP = "numba-sources.stamp"


def sources_stamp(root: Path) -> str:
    """A digest of the name, size and modification time of every ``.py`` file under ``root``."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def refresh(root: Path) -> bool:
    """Delete the numba cache files (``*.nbi``, ``*.nbc``) under ``root`` when its sources differ
    from the stamp left by the last call, then write the new stamp. Returns True if the cache was
    cleared. A read-only install is left alone (numba then keeps its cache elsewhere, and an
    installed package is rewritten whole, which changes every file's stamp anyway)."""
    stamp_file = root / "__pycache__" / STAMP
    now = sources_stamp(root)
    try:
        if stamp_file.read_text() == now:
            return False
    except OSError:
        pass  # no stamp yet: caches from before it cannot be trusted either
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for path in root.rglob(pattern):
                path.unlink(missing_ok=True)
        stamp_file.parent.mkdir(exist_ok=True)
        tmp = stamp_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(now)
        os.replace(tmp, stamp_file)  # atomic: a process starting beside us reads old or new
    except OSError:
        return False
    return True


refresh(Path(__file__).parent)
