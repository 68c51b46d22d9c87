"""The per-user index cache stays within its memory budget, and a cold user's index comes
back from its pack: evicted or cold users answer exactly as a fully loaded index does, and
writes from another process (new rows, status changes, deletions, edits) still show."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from engram import Memory
from engram.store.sqlite import search as sqlite_search

USERS = ["ana", "ben", "cai", "dev"]
QUERIES = ["coffee", "where do I live?", "my sister", "ramen in Osaka", "当我去北京", "passport"]
LINES = [
    "I drink black coffee every morning.", "I live in Lisbon near the river.",
    "My sister Vera has a parrot called Mochi.", "We ate ramen in Osaka last May.",
    "我下周去北京出差。", "My passport expires in March 2027.", "Bruno recommended a book about jazz.",
    "I run 10 km on Sundays.", "我喜欢喝乌龙茶。", "The Atlas review is on Friday at 10:30.",
]


@pytest.fixture(autouse=True)
def small_packs(monkeypatch):
    monkeypatch.setattr(sqlite_search, "PACK_FROM_ROWS", 5)  # small users get packs too


def fill(memory: Memory, users=USERS) -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    batch = []
    for u, user in enumerate(users):
        for i, line in enumerate(LINES * 2):
            batch.append({
                "messages": f"{line} ({user} {i})", "user_id": user, "infer": False,
                "agent_id": "coach" if i % 3 == 0 else None, "session_id": f"s{i % 2}",
                "timestamp": start + timedelta(days=i + u),
            })
    memory.add_many(batch)


def answers(memory: Memory, user: str) -> dict[str, list[str]]:
    out = {}
    for q in QUERIES:
        out[q] = [r.memory.id for r in memory.search(q, user_id=user, limit=6)]
        out[q + " (coach)"] = [r.memory.id for r in memory.search(q, user_id=user, agent_id="coach", limit=6)]
        out[q + " (2024-01-05…)"] = [
            r.memory.id for r in memory.search(q, user_id=user, limit=6, filters={"since": "2024-01-05"})
        ]
    return out


def packs(db_path) -> dict[str, int]:
    with sqlite3.connect(db_path) as raw:
        return dict(raw.execute("SELECT user_id, version FROM scope_packs").fetchall())


def test_a_small_budget_evicts_and_evicted_users_answer_the_same(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as roomy:
        fill(roomy)
        expected = {u: answers(roomy, u) for u in USERS}
        assert len(roomy.store._indexes) == len(USERS)  # the default budget holds them all
    with Memory(db_path, embedder=embedder, reinforce=False, index_cache_mb=0) as tight:
        for _ in range(2):  # each user evicted and loaded again (from its pack) in round two
            assert {u: answers(tight, u) for u in USERS} == expected
        assert len(tight.store._indexes) == 1  # only the index in use is kept
        assert tight.store._indexes.evictions >= 2 * len(USERS) - 1


def test_a_cold_user_loads_from_its_pack_without_reading_the_memories(db_path, embedder, monkeypatch) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as first:
        fill(first)
        expected = {u: answers(first, u) for u in USERS}
    assert set(packs(db_path)) == set(USERS)  # written by the first full load of each user

    def no_table_load(*args, **kwargs):
        raise AssertionError("loaded from the memories table, not the pack")

    monkeypatch.setattr(sqlite_search.SearchMixin, "_index_rows", no_table_load)
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:
        assert {u: answers(cold, u) for u in USERS} == expected


def test_a_stale_pack_is_patched_with_what_changed_since(db_path, embedder, monkeypatch) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as first:
        fill(first)
        for u in USERS:
            answers(first, u)
        written = packs(db_path)
        # after the packs: new rows and a status change (no deletion, no edit)
        first.add("I moved to Porto last week.", user_id="ana")
        first.add_many([{"messages": "I drink green tea now.", "user_id": "ana", "infer": False}])
        archived = first.get_all(user_id="ana", limit=1)[0]
        first.store.transition(  # a status change, as maintenance makes one
            [_archive(archived.id)]
        )
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:
        got = answers(cold, "ana")
        assert packs(db_path)["ana"] == written["ana"]  # a few new rows: appended on load, no rewrite
    monkeypatch.setattr(sqlite_search, "REPACK_ROWS", 1)
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:
        assert answers(cold, "ana") == got
        assert packs(db_path)["ana"] > written["ana"]  # past REPACK_ROWS: packed again, current
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:
        assert answers(cold, "ana") == got
    with sqlite3.connect(db_path) as raw:
        raw.execute("DELETE FROM scope_packs")
    with Memory(db_path, embedder=embedder, reinforce=False) as reference:
        assert got == answers(reference, "ana")  # the same as a load from the table
    assert any("Porto" in cold_hit for cold_hit in _contents(db_path, got["where do I live?"]))
    assert archived.id not in got["coffee"] + got["my sister"]


def _archive(memory_id: str):
    from engram.models import utcnow
    from engram.store.base import Transition

    return Transition(memory_id, "archived", "ARCHIVE", "test", utcnow())


def _contents(db_path, ids: list[str]) -> list[str]:
    with sqlite3.connect(db_path) as raw:
        return [raw.execute("SELECT content FROM memories WHERE id = ?", (i,)).fetchone()[0] for i in ids]


def test_deleting_or_editing_a_memory_drops_the_users_pack_and_its_words(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as memory:
        fill(memory, ["ana", "ben"])
        secret = memory.add("My locker code word is quixotrombone.", user_id="ana", infer=False)[0].memory
        memory.flush()  # (its vector, written behind, could hold the file as a first load packs: that pack waits)
        for u in ("ana", "ben"):
            answers(memory, u)
        assert set(packs(db_path)) == {"ana", "ben"}
        memory.delete(secret.id)
        assert set(packs(db_path)) == {"ben"}  # ana's pack held the deleted memory's tokens
        assert b"quixotrombone" not in b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
        edited = memory.get_all(user_id="ben", limit=1)[0]
        memory.update(edited.id, content="I changed my mind about everything.")
        assert packs(db_path) == {}
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:  # the next cold load packs again
        hits = cold.search("quixotrombone locker code word", user_id="ana", limit=20)
        assert hits and all("quixotrombone" not in r.memory.content for r in hits)
        assert cold.search("everything", user_id="ben")
        assert set(packs(db_path)) == {"ana", "ben"}


def test_another_process_writes_reach_cached_evicted_and_packed_indexes(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False, index_cache_mb=0) as here, \
            Memory(db_path, embedder=embedder, reinforce=False) as there:
        fill(here, ["ana", "ben"])
        answers(here, "ana")
        answers(here, "ben")  # ana evicted, ben cached
        gone = here.search("parrot Mochi", user_id="ben", limit=1)[0].memory.id
        there.add_many([
            {"messages": "I adopted a tortoise named Pixel.", "user_id": "ana", "infer": False},
            {"messages": "I adopted a tortoise named Pixel.", "user_id": "ben", "infer": False},
        ])
        there.delete(gone)
        for user in ("ben", "ana"):  # ben: patched in the cache; ana: her pack, patched
            hits = [r.memory.content for r in here.search("tortoise Pixel", user_id=user, limit=3)]
            assert hits and "tortoise" in hits[0]
        assert gone not in [r.memory.id for r in here.search("parrot Mochi", user_id="ben", limit=10)]


def test_a_damaged_pack_is_ignored(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as first:
        fill(first, ["ana"])
        expected = answers(first, "ana")
    with sqlite3.connect(db_path) as raw:
        raw.execute("UPDATE scope_packs SET data = x'00ff00ff'")
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:
        assert answers(cold, "ana") == expected


def test_a_vector_written_behind_after_the_pack_is_in_the_cold_index(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as first:
        fill(first)
        answers(first, "ana")
        written = packs(db_path)
        first.add("I adopted a greyhound called Biscuit.", user_id="ana", infer=False)
    # the vector landed after the row (write-behind): the pack stays, and a cold load reads it
    assert packs(db_path)["ana"] == written["ana"]
    with sqlite3.connect(db_path) as raw:
        row = raw.execute("SELECT rowid FROM memories WHERE content LIKE '%Biscuit%'").fetchone()[0]
    with Memory(db_path, embedder=embedder, reinforce=False) as cold:
        answers(cold, "ana")
        index = cold.store._indexes.get("ana")
        assert row in index.position and index.has_vector[index.position[row]]
        assert row not in index.holes().tolist()


def test_loading_an_index_measures_it_alone_and_growth_counts_by_the_next_full_measure(monkeypatch) -> None:
    from engram.store import index_cache
    from engram.store.index_cache import IndexCache
    from engram.store.scope_index import ScopeIndex

    sizes: dict[int, int] = {}
    measured: list[int] = []

    def nbytes(self) -> int:
        measured.append(id(self))
        return sizes.get(id(self), 1_000)

    monkeypatch.setattr(ScopeIndex, "nbytes", nbytes)
    monkeypatch.setattr(index_cache, "REMEASURE_EVERY", 9)
    cache = IndexCache(budget_mb=10_000 / 1024 / 1024)  # room for ten indexes of 1,000 bytes
    indexes = [ScopeIndex(8) for _ in range(7)]
    for n, index in enumerate(indexes):
        cache[f"u{n}"] = index
    measured.clear()
    cache["u7"] = ScopeIndex(8)
    assert len(measured) == 1  # the newcomer only, not the seven cached (O(users) a load before)
    sizes[id(indexes[0])] = 5_000  # u0 grew (writes, remembered questions) since it was measured
    cache["u8"] = ScopeIndex(8)  # the ninth load: every index measured again, over budget by u0's growth
    assert "u0" not in cache and cache.evictions == 1 and len(cache) == 8
    cache["u9"], cache["u10"] = ScopeIndex(8), ScopeIndex(8)  # full now: each load evicts one
    measured.clear()
    cache["u11"] = ScopeIndex(8)
    assert len(measured) == 1 and cache.evictions == 2  # a full cache evicts by the sizes on record
