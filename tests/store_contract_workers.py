"""Code the storage contract runs in child processes (spawned: importable by name)."""

from __future__ import annotations


def write_user(target: str, user_id: str, count: int, start: object) -> None:
    """Write `count` memories of one user through its own store, released with the others;
    after each, a search of that user must return only that user's memories."""
    import numpy as np

    from engram.models import Filters, MemoryItem
    from engram.records import make_record
    from engram.store.base import HistoryEvent, Scope
    from engram.store.open import open_store

    store = open_store(target, dim=8)
    start.wait()  # type: ignore[attr-defined]
    try:
        for n in range(count):
            item = MemoryItem(user_id=user_id, content=f"{user_id} note {n} about the harbour")
            record = make_record(item, embedding=np.eye(8, dtype=np.float32)[n % 8])
            store.write(inserts=[record], events=[HistoryEvent.of(item, "ADD", None, "test")])
            for hit, _ in store.lexical_search(Scope(user_id), ["harbour"], Filters(), 100):
                owner = store.get(hit)
                assert owner is not None and owner.user_id == user_id, (user_id, owner)
    finally:
        store.close()


def say_city(target: str, user_id: str, city: str, start: object) -> None:
    """`Memory.add` of where the user lives, through the store at `target` (reconcile races)."""
    from engram import Memory

    with Memory(store=target) as memory:
        start.wait()  # type: ignore[attr-defined]
        memory.add(f"I live in {city}", user_id=user_id)
