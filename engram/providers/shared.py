"""One loaded embedding model per process, whatever the number of embedders and `Memory` objects:
loading is slow and large (USE ~0.9 s and ~120 MB, wordllama ~0.65 s and ~110 MB), and a demo or
a server opens several. The models are only read once loaded, so sharing them is safe."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

_SHARED: dict[Hashable, Any] = {}
_SHARING = threading.Lock()


def shared_model(key: Hashable, load: Callable[[], T]) -> T:
    """The process's model for `key`, made by `load` the first time it is asked for."""
    with _SHARING:
        if key not in _SHARED:
            _SHARED[key] = load()
        return _SHARED[key]
