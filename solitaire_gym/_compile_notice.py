"""One line on stderr when the package's numba kernels compile (a cold cache), before the wait.

numba compiles a kernel on its first call unless its on-disk cache holds it: with an empty
cache (a fresh install, a ``git pull`` that changed the sources, an empty ``NUMBA_CACHE_DIR``)
the first step of an env or the first ``Game(...).legal_moves()`` waits for the compiler. A
listener on numba's ``numba:compile`` event, which fires only for a real compile (never for a
kernel loaded from the cache), prints :data:`MESSAGE` once per process, at the first compile
of a kernel of this package. ``SOLITAIRE_GYM_COMPILE_NOTICE=0`` silences it.
"""

from __future__ import annotations

import os
import sys

from numba.core import event

MESSAGE = (
    "solitaire_gym: compiling its numba kernels for first use (once; they are cached on disk): "
    "about 10-30 s for a Game or an env, a minute or more for the vector env on all cores and "
    "the solver. `solitaire-gym warmup` compiles everything ahead."
)


class _Notice(event.Listener):
    def __init__(self) -> None:
        self.shown = False

    def on_start(self, ev: event.Event) -> None:
        if self.shown or os.environ.get("SOLITAIRE_GYM_COMPILE_NOTICE", "1") == "0":
            return
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if not (getattr(func, "__module__", None) or "").startswith("solitaire_gym."):
            return
        self.shown = True
        print(MESSAGE, file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        pass


NOTICE = _Notice()
event.register("numba:compile", NOTICE)
