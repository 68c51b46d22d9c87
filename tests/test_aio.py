"""AsyncMemory runs the one sync engine in worker threads: the same results, the loop stays free."""

from __future__ import annotations

import asyncio

import pytest
from helpers import facts

from engram import AsyncMemory, InvalidInput


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


def test_async_methods_have_the_real_signatures_and_the_file_is_current():
    import inspect
    import subprocess
    import sys
    import typing
    from pathlib import Path

    from engram import Memory

    for name in ("add", "search", "get_all", "update", "forget", "export", "import_", "context"):
        sync, awaited = getattr(Memory, name), getattr(AsyncMemory, name)
        assert inspect.iscoroutinefunction(awaited)
        assert inspect.signature(awaited) == inspect.signature(sync)
    for _, method in inspect.getmembers(AsyncMemory, inspect.iscoroutinefunction):
        typing.get_type_hints(method)  # every annotated name resolves (a NameError otherwise)
    root = Path(__file__).resolve().parent.parent
    made = subprocess.run([sys.executable, "scripts/gen_aio.py"], capture_output=True, text=True, cwd=root, check=True)
    assert made.stdout == (root / "engram" / "aio.py").read_text(encoding="utf-8"), "run scripts/gen_aio.py"


def test_async_with_a_session(db_path, embedder):
    async def scenario():
        async with AsyncMemory(db_path, embedder=embedder) as memory:
            async with memory.session("u1") as s:
                events = await s.add("I prefer short answers.")
                built = await s.context("how should you answer?")
            ended = s.sync.ended
            return s, events, built, await memory.get_all(user_id="u1", filters={"kind": ["preference"]}), ended

    session, events, built, items, ended = asyncio.run(scenario())
    assert events[0].memory.session_id == session.session_id and built.session_id == session.session_id
    assert [i.content for i in items] == ["User prefers short answers."]
    assert ended  # leaving the block ended the session
