"""An add holds the writers' lock only from its first write (`Store.atomic(deferred=True)`):
the extraction before it keeps no other writer waiting, and all it writes still lands as one
transaction, or none of it (issue 13, item 4: 8 writers waited on each other's rules)."""

from __future__ import annotations

import threading

import pytest

from engram import Memory
from engram.write import Writer
from helpers import facts


def test_a_writer_is_not_kept_waiting_while_another_add_is_still_reading_its_message(tmp_path, embedder, monkeypatch):
    path = tmp_path / "m.db"
    reading, go_on = threading.Event(), threading.Event()
    real_read = Writer._read

    def slow_read(self, *args, **kwargs):  # the first add stops inside its extraction
        found = real_read(self, *args, **kwargs)
        if threading.current_thread().name == "slow":
            reading.set()
            assert go_on.wait(30)
        return found

    monkeypatch.setattr(Writer, "_read", slow_read)
    with Memory(path, embedder=embedder) as first, Memory(path, embedder=embedder) as second:
        slow = threading.Thread(target=lambda: first.add("I live in Berlin.", user_id="ana"), name="slow")
        slow.start()
        try:
            assert reading.wait(30)
            other = threading.Thread(target=lambda: second.add("I live in Porto.", user_id="bo"))
            other.start()
            other.join(10)
            assert not other.is_alive(), "the second add waited for the first one's extraction"
        finally:
            go_on.set()
            slow.join(30)
        assert [m.content for m in facts(second.get_all(user_id="ana"))] == ["User lives in Berlin."]
        assert [m.content for m in facts(first.get_all(user_id="bo"))] == ["User lives in Porto."]


def test_a_deferred_transaction_lands_whole_or_not_at_all(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        store = m.store
        kept = m.add("I like tea.", user_id="ana", infer=False)[0].memory
        with pytest.raises(RuntimeError), store.atomic(deferred=True):
            assert store.get(kept.id) is not None  # a read before any write: nothing begun yet
            m.add("I like coffee.", user_id="ana", infer=False)
            m.delete(kept.id)
            raise RuntimeError("fails after its writes")
        assert [x.content for x in m.get_all(user_id="ana")] == ["I like tea."]  # both rolled back
        with store.atomic(deferred=True):
            pass  # no write: nothing to commit
        with store.atomic(deferred=True), store.atomic():  # a plain one inside starts the deferred one
            m.add("I like coffee.", user_id="ana", infer=False)
            m.delete(kept.id)
        assert [x.content for x in m.get_all(user_id="ana")] == ["I like coffee."]


def test_a_question_the_graph_does_not_serve_leaves_the_links_to_the_worker(tmp_path, embedder, monkeypatch):
    """Linking in the search's thread takes the writers' lock; a question the graph cannot
    answer ("where do I live?") does not wait for it, a list question still reads its writes."""
    from engram.embed_behind import EmbedBehind

    asked: list[bool] = []
    real = EmbedBehind.settle

    def settle(self, user_id, *, vectors=True, links=True, stand_ins=False):
        asked.append(links)
        return real(self, user_id, vectors=vectors, links=links, stand_ins=stand_ins)

    monkeypatch.setattr(EmbedBehind, "settle", settle)
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("My sister Anna lives in Lisbon.", user_id="ana")
        asked.clear()
        m.search("where do I live?", user_id="ana")
        assert asked and not any(asked)
        asked.clear()
        hits = m.search("what do you know about my sister Anna?", user_id="ana")
        assert any(asked)
        assert "Lisbon" in hits[0].memory.content
