"""One BLAS thread while engram multiplies, held for all of engram's threads together.

Why one: engram's products are small (a query against a user's rows, a sentence through the
embedder), and OpenBLAS splitting them over threads costs more than it saves on a busy
machine (10k×256: 8 ms with two threads, 0.4 ms with one).

Why held together: a `threadpoolctl` limit is process-wide. When each caller set and restored
it on its own, a search and the embedder working behind (engram.embed_behind) interleaved:
the limit was left at random, and it changed while another thread was inside OpenBLAS.
About one short script in twenty then hung at exit, in OpenBLAS's thread shutdown. Here the
first holder sets the limit and the last one restores what it was.

Why held while a `Memory` is open (`hold` / `release`), not only around each product: setting
and restoring the limit on every call made OpenBLAS hand its pool back and forth, and its
threads woke and spun between calls. With four processes of two writers each on 2 cores
(benchmarks/contention_bench.py), that cost most of the machine: 42-53 ops/s, searches up to
4-8 s, against 210-227 ops/s and ~135 ms at most with the limit held.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_holders = 0
_limiter: Any = None
_controller: Any = None  # introspecting the loaded libraries takes ~1 ms: once


def hold() -> None:
    """One BLAS thread from now until the matching `release` (shared: the first holder sets
    the limit, the last restores what the process had)."""
    global _holders, _limiter, _controller
    with _lock:
        if _holders == 0:
            if _controller is None:  # (numpy first: a controller finds only the BLAS already loaded)
                import numpy  # noqa: F401
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
            _unowned()
            _limiter = _controller.limit(limits=1, user_api="blas")
            _unowned()
        _holders += 1


def release() -> None:
    """Undo one `hold`."""
    global _holders, _limiter
    with _lock:
        _holders -= 1
        if _holders == 0:
            _unowned()
            _limiter.restore_original_limits()
            _unowned()
            _limiter = None


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (re-entrant, and shared across threads)."""
    hold()
    try:
        yield
    finally:
        release()


def _unowned() -> None:
    """threadpoolctl (3.6 on) lets one thread at a time set OpenBLAS's pool: the last one that
    did, for as long as it lives; any other's setting is skipped. engram's threads come and go
    (a worker may multiply first), so each change here is made with no thread owning the pool,
    and leaves none owning it."""
    try:
        from threadpoolctl import OpenBLASController
    except ImportError:  # (an older threadpoolctl: any thread sets the pool)
        return
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


class Hold:
    """A `Memory`'s hold (none when `on` is false), given back once however often `release` is
    called."""

    def __init__(self, on: bool = True) -> None:
        self._held = on
        if on:
            hold()

    def release(self) -> None:
        if self._held:
            self._held = False
            release()


def holders() -> int:
    """How many holds are in force (a `Memory` open holds one)."""
    return _holders
