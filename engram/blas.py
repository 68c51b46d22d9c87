"""One BLAS thread while engram multiplies, held for all of engram's threads together.

Why one: engram's products are small (a query against a user's rows, a sentence through the
embedder), and OpenBLAS splitting them over threads costs more than it saves on a busy
machine (10k×256: 8 ms with two threads, 0.4 ms with one).

Why held together: a `threadpoolctl` limit is process-wide. When each caller set and restored
it on its own, a search and the embedder working behind (engram.embed_behind) interleaved:
the limit was left at random, and it changed while another thread was inside OpenBLAS.
About one short script in twenty then hung at exit, in OpenBLAS's thread shutdown. Here the
first holder sets the limit and the last one restores what it was.
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


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (re-entrant, and shared across threads)."""
    global _holders, _limiter, _controller
    with _lock:
        if _holders == 0:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
            _limiter = _controller.limit(limits=1, user_api="blas")
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                _limiter.restore_original_limits()
                _limiter = None
