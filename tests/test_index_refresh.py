"""Another process's writes are patched into this process's index (new rows added, edited
rows re-indexed, deleted rows dropped, status changes applied), not reloaded whole; searches
answer exactly as a freshly opened store does."""

from __future__ import annotations

from engram import Memory

QUERIES = ["coffee", "where do I live?", "tea", "Rust", "my sister", "blue"]


def answers(memory: Memory) -> dict[str, list[tuple[str, str]]]:
    return {
        q: [(r.memory.id, r.memory.status.value) for r in memory.search(q, user_id="u1", limit=10,
                                                                          filters={"status": []})]
        for q in QUERIES
    }


def test_other_process_writes_are_patched_into_a_loaded_index(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, reinforce=False) as here, Memory(db_path, embedder=embedder, reinforce=False) as there:
        edited = here.add("I love green tea in the morning.", user_id="u1")[0].memory
        doomed = here.add("My sister lives in Oslo.", user_id="u1", infer=False)[0].memory
        here.add("I live in Berlin.", user_id="u1")
        answers(here)  # the index is loaded here
        loaded = here.store._indexes["u1"]
        there.add("I love strong coffee.", user_id="u1")  # a new row
        there.add("I moved to Paris.", user_id="u1")  # supersedes Berlin: a status change
        there.update(edited.id, content="I decided to learn Rust this year.")  # new content, same row
        there.delete(doomed.id)
        there.add("My favourite colour is blue.", user_id="u1")
        assert there.flush(timeout=30)  # its vectors, made behind its writes, are stored too
        got = answers(here)
        assert here.store._indexes["u1"] is loaded  # patched, not rebuilt
        with Memory(db_path, embedder=embedder, reinforce=False) as fresh:
            assert got == answers(fresh)
        assert got["Rust"] and got["Rust"][0][0] == edited.id
        assert all(doomed.id not in [i for i, _ in hits] for hits in got.values())
        statuses = dict(got["where do I live?"])
        # the Berlin fact (standing for the episode that said it: one result a turn)
        assert sorted(statuses.values()).count("superseded") == 1
