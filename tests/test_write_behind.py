"""Write-behind embedding (engram.embed_behind): an add commits first and its vector follows from
a worker thread; a search reads its writes; a crash loses no vector; duplicates are still found."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading

import pytest

from engram import Memory
from engram.providers.embedders import WordLlamaEmbedder


class HeldEmbedder(WordLlamaEmbedder):
    """wordllama whose calls from the write-behind worker wait until `release` (the worker is
    busy elsewhere); calls from any other thread go through."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.calls: list[tuple[str, int]] = []

    def embed(self, texts):
        self.calls.append((threading.current_thread().name, len(texts)))
        if threading.current_thread().name == "engram-embed-behind":
            self.release.wait(30)
        return super().embed(texts)


def vectorless(db_path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone()[0]


def test_an_add_commits_before_its_vector_and_a_search_right_after_still_finds_it_by_meaning(db_path):
    embedder = HeldEmbedder()
    with Memory(db_path, embedder=embedder) as m:
        m.add("I practice taekwondo twice a week.", user_id="u1")
        assert vectorless(db_path) >= 1  # committed, its vector still to come
        # no word in common: only the vector can find it, and the search made it first
        hits = m.search("which martial art does she do?", user_id="u1")
        assert hits and "taekwondo" in hits[0].memory.content
        assert hits[0].parts.dense_rank is not None
        assert vectorless(db_path) == 0
        embedder.release.set()


def test_the_worker_embeds_pending_memories_in_batches_and_flush_waits_for_it(db_path, embedder):
    with Memory(db_path, embedder=embedder) as m:
        m.add_many([])  # nothing
        for n in range(20):
            m.add(f"Note {n}: the garden shed needs a new coat of paint", user_id="u1", infer=False)
        assert m.flush(timeout=30)
        assert vectorless(db_path) == 0
        assert m.behind.owes("u1") == 0


def test_an_add_is_searchable_by_its_words_while_its_vector_is_not_made(db_path):
    embedder = HeldEmbedder()
    with Memory(db_path, embedder=embedder, weight_dense=0.0) as m:
        m.add("My locker code is on a yellow sticky note.", user_id="u1", infer=False)
        hits = m.search("yellow sticky note", user_id="u1")
        assert [h.memory.content for h in hits] == ["My locker code is on a yellow sticky note."]
        assert vectorless(db_path) == 1  # found without it
        embedder.release.set()
        assert m.flush(timeout=30)
        assert vectorless(db_path) == 0


def add_then_crash_in_a_child(db_path, texts: list[str]) -> None:
    """`texts` added by another process that dies before its write-behind worker did anything."""
    from child_workers import add_then_crash

    child = multiprocessing.get_context("spawn").Process(target=add_then_crash, args=(str(db_path), texts))
    child.start()
    child.join(120)
    assert child.exitcode == 0


def test_rows_a_crash_left_without_vectors_are_embedded_on_the_next_open(db_path, embedder):
    texts = ["I keep bees on the roof of my flat.", "My brother repairs old motorbikes."]
    add_then_crash_in_a_child(db_path, texts)
    assert vectorless(db_path) == 2  # committed, never embedded: the process died first
    with Memory(db_path, embedder=embedder) as m:
        assert m.flush(timeout=60)
        assert vectorless(db_path) == 0
        hits = m.search("who fixes motorcycles?", user_id="u1", limit=1)
        assert hits[0].memory.content == texts[1]
        assert hits[0].parts.dense_rank == 1


def test_graph_links_a_crash_left_unmade_are_made_on_the_next_open(db_path, embedder):
    add_then_crash_in_a_child(db_path, ["My sister Anna moved to Porto.", "Anna adopted a dog named Coco."])
    with sqlite3.connect(db_path) as db:  # committed with a note, never linked: the process died first
        assert db.execute("SELECT count(*) FROM graph_pending").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM graph_mentions").fetchone()[0] == 0
    with Memory(db_path, embedder=embedder) as m:
        assert m.flush(timeout=60)
        with sqlite3.connect(db_path) as db:
            assert db.execute("SELECT count(*) FROM graph_pending").fetchone()[0] == 0
        names = {e.name for e in m.graph("u1").entities}
        assert {"Anna", "Porto", "Coco"} <= names


def test_the_graph_right_after_an_add_is_whole_and_a_deleted_memory_is_never_linked(db_path):
    embedder = HeldEmbedder()  # the worker cannot get to the links
    with Memory(db_path, embedder=embedder) as m:
        kept = m.add("My sister Anna works at Google.", user_id="u1", infer=False)[0].memory
        gone = m.add("Anna's friend Bruno lives in Lisbon.", user_id="u1", infer=False)[0].memory
        m.delete(gone.id)
        g = m.graph("u1")  # made here and now, from what is left
        names = {e.name for e in g.entities}
        assert {"Anna", "Google"} <= names and not names & {"Bruno", "Lisbon"}
        said = {(r.relation, m) for r in g.relations for m in r.memories}
        assert any(m == kept.id for _, m in said) and all(m != gone.id for _, m in said)
        embedder.release.set()
        assert m.flush(timeout=30)
        assert {e.name for e in m.graph("u1").entities} == names  # the worker's pass changes nothing


def test_a_memory_edited_before_the_worker_links_it_is_linked_once_as_edited(db_path):
    embedder = HeldEmbedder()  # the worker cannot get to the links
    with Memory(db_path, embedder=embedder) as m:
        said = m.add("My sister Anna works at Google.", user_id="u1", infer=False)[0].memory
        m.update(said.id, "My sister Anna works at Apple.")
        embedder.release.set()
        assert m.flush(timeout=30)
        g = m.graph("u1")
        name = {e.id: e.name for e in g.entities}
        works = [(name[r.source], name[r.target], r.memories) for r in g.relations if r.relation == "works_at"]
        assert works == [("Anna", "Apple", [said.id])] and "Google" not in name.values()
    with sqlite3.connect(db_path) as db:  # linked once: the edit's links, not the worker's again
        edges = db.execute("SELECT rel FROM graph_edges WHERE memory_id = ?", (said.id,)).fetchall()
    assert sorted(r[0] for r in edges) == sorted(set(r[0] for r in edges))


def test_a_restatement_is_still_a_duplicate_when_the_first_vector_is_not_made_yet(db_path):
    embedder = HeldEmbedder()
    with Memory(db_path, embedder=embedder) as m:
        first = m.add("I love green tea.", user_id="u1")
        again = m.add("I love green tea!", user_id="u1")
        facts = [e for e in again if e.memory.kind.value != "turn" and e.memory.source.value != "episode"]
        assert facts and all(e.action.value == "NOOP" for e in facts), (first, again)
        embedder.release.set()


def test_an_add_that_restates_nothing_embeds_nothing_in_the_callers_thread(db_path):
    embedder = HeldEmbedder()
    with Memory(db_path, embedder=embedder) as m:
        m.add("I practice taekwondo.", user_id="u1")
        m.add("My daughter is seven.", user_id="u1")
        caller = threading.current_thread().name
        assert [c for c in embedder.calls if c[0] == caller] == []
        embedder.release.set()


def test_write_behind_off_embeds_with_the_row(db_path, embedder):
    with Memory(db_path, embedder=embedder, embed_behind=False) as m:
        m.add("I practice taekwondo.", user_id="u1")
        assert vectorless(db_path) == 0


@pytest.mark.parametrize("infer", [True, False])
def test_close_makes_the_pending_vectors(db_path, embedder, infer):
    m = Memory(db_path, embedder=embedder)
    m.add("I moved to Porto last year.", user_id="u1", infer=infer)
    m.close()
    assert vectorless(db_path) == 0
