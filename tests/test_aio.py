"""AsyncMemory runs the one sync engine in worker threads: the same results, the loop stays free."""

from __future__ import annotations

import asyncio

import pytest

from engram import AsyncMemory, InvalidInput
from helpers import facts


def test_async_facade_mirrors_the_sync_api(db_path, embedder):
    async def scenario():
        async with AsyncMemory(db_path, embedder=embedder) as memory:
            events = await memory.add("I live in Berlin.", user_id="u1")
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0)

            task = asyncio.create_task(ticker())
            results = await asyncio.gather(*(memory.search("Berlin", user_id="u1") for _ in range(20)))
            task.cancel()
            with pytest.raises(InvalidInput):
                await memory.add("x", user_id="")
            return events, results, ticks, memory.settings.search_limit

    events, results, ticks, limit = asyncio.run(scenario())
    assert "Berlin" in events[0].memory.content
    assert all(facts(r)[0].memory.id == events[0].memory.id for r in results)
    assert all(len(r) == 1 for r in results)  # the fact stands for the turn it was drawn from, every time
    assert ticks > 0 and limit == 5  # the loop ran while searches were in threads; attributes pass through
