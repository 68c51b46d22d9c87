"""`AsyncMemory`: the same engine for asyncio code, one thread hop per call.

There is one implementation (the sync `Memory`); every public method here
runs it in a worker thread so an event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from engram.memory import Memory


class AsyncMemory:
    """Async facade: ``await AsyncMemory().add(...)``; attributes mirror `Memory`."""

    def __init__(self, *args: Any, memory: Memory | None = None, **kwargs: Any) -> None:
        self.sync = memory or Memory(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.sync, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute

        @functools.wraps(attribute)
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(attribute, *args, **kwargs)

        return call

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.sync.close)
