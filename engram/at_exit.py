"""Background workers stopped before the interpreter exits, even when nobody closed them.

Why: a script that never calls `Memory.close()` ends while the embed-behind thread may be
inside numpy or the tokenizer, native code that runs on while Python tears down around it.
OpenBLAS then shut its threads down under that call: about one such script in twenty hung at
exit, and some aborted ("terminate called without an active exception"). At exit (before the
interpreter's teardown, while daemon threads still run) each worker still open is closed:
what it owed is finished and its thread ends.
"""

from __future__ import annotations

import atexit
import logging
import weakref
from typing import Protocol


class _Closable(Protocol):
    def close(self) -> None: ...


_open: weakref.WeakSet[_Closable] = weakref.WeakSet()
log = logging.getLogger("engram")


def close_at_exit(worker: _Closable) -> None:
    """Close `worker` at exit unless it is gone by then (held weakly: this keeps nothing alive)."""
    _open.add(worker)


@atexit.register
def _close_all() -> None:
    for worker in list(_open):
        try:
            worker.close()
        except Exception:  # noqa: BLE001 - one worker that fails to close must not keep the others open
            log.warning("a background worker failed to close at exit", exc_info=True)
