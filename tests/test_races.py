"""Same-user writes at once (threads, processes, AsyncMemory) reconcile as if one after another:
exactly one current value, every earlier one superseded exactly once (issue 13, item 3)."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from pathlib import Path

from engram import Memory
from engram.aio import AsyncMemory
from child_workers import say_city

CITIES = ["Berlin", "Paris", "Madrid", "Lisbon", "Vienna", "Prague"]


def assert_one_current(memory: Memory, user_id: str, count: int) -> None:
    """One live location, and a chain: each of the others superseded by exactly one successor."""
    everything = memory.get_all(user_id=user_id, filters={"status": []}, limit=None)
    places = [m for m in everything if any(c in m.content for c in CITIES)]
    assert len(places) == count, [m.content for m in places]
    live = [m for m in places if m.status.value == "active"]
    assert len(live) == 1, [m.content for m in live]
    superseded = [m for m in places if m.status.value == "superseded"]
    assert len(superseded) == count - 1
    successors = [m.superseded_by for m in superseded]
    assert len(set(successors)) == len(successors)  # nobody superseded twice, no fork
    for old in superseded:
        rows = [h for h in memory.history(old.id) if h.action == "SUPERSEDE"]
        assert len(rows) == 1


def threads_say_cities(memory: Memory, user_id: str, cities: list[str]) -> None:
    """One thread per city, released together, each saying the user lives there."""
    start = threading.Barrier(len(cities))

    def say(city: str) -> None:
        start.wait()
        memory.add(f"I live in {city}", user_id=user_id)

    threads = [threading.Thread(target=say, args=(c,)) for c in cities]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_saying_where_they_live_leave_one_current_value(memory: Memory) -> None:
    threads_say_cities(memory, "alice", CITIES)
    assert_one_current(memory, "alice", len(CITIES))


def test_async_memory_adds_at_once_leave_one_current_value(db_path: Path, embedder) -> None:
    async def main() -> None:
        async with AsyncMemory(db_path, embedder=embedder) as memory:
            await asyncio.gather(*(memory.add(f"I live in {c}", user_id="bob") for c in CITIES))

    asyncio.run(main())
    with Memory(db_path, embedder=embedder) as memory:
        assert_one_current(memory, "bob", len(CITIES))


def test_processes_saying_where_they_live_leave_one_current_value(db_path: Path, embedder) -> None:
    Memory(db_path, embedder=embedder).close()  # the schema exists before they race
    context = multiprocessing.get_context("spawn")
    cities = CITIES[:4]
    start = context.Barrier(len(cities))
    workers = [context.Process(target=say_city, args=(str(db_path), "carol", c, start)) for c in cities]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    with Memory(db_path, embedder=embedder) as memory:
        assert_one_current(memory, "carol", len(cities))
