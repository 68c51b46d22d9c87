"""The memo of what questions read (engram.store.recall_memo): an agent's repeated questions
are answered from it, and never with a stale answer once the memories changed."""

from __future__ import annotations

import numpy as np

from engram.store.recall_memo import Ranked, RecallMemo, vector_key


def test_a_repeated_search_answers_the_same_and_a_write_or_deletion_shows_at_once(memory):
    for text in ["I drink green tea in the evening", "My sister Anna is a nurse", "I moved to Porto last year"]:
        memory.add(text, user_id="u", infer=False)
    first = [h.memory.id for h in memory.search("what tea do I drink?", user_id="u")]
    assert first == [h.memory.id for h in memory.search("what tea do I drink?", user_id="u")]
    new = memory.add("My favourite tea is a smoky lapsang souchong tea", user_id="u", infer=False)[0].memory
    after = [h.memory.id for h in memory.search("what tea do I drink?", user_id="u")]
    assert new.id in after
    memory.delete(new.id)
    assert new.id not in [h.memory.id for h in memory.search("what tea do I drink?", user_id="u")]


def test_the_least_recently_used_reading_goes_first_and_a_change_forgets_them_all():
    memo, computed = RecallMemo(capacity=2), []

    def reading(name: str):
        def compute():
            computed.append(name)
            return Ranked([(name, 1.0)])
        return compute

    memo.get("a", 0, reading("a"))
    memo.get("b", 0, reading("b"))
    memo.get("a", 0, reading("a"))  # a hit: "a" is now the most recently used
    memo.get("c", 0, reading("c"))  # full: "b" goes
    memo.get("a", 0, reading("a"))
    memo.get("b", 0, reading("b"))
    assert computed == ["a", "b", "c", "b"]
    held = memo.nbytes()
    memo.get("a", 1, reading("a"))  # the index changed: nothing read before counts
    assert computed[-1] == "a" and memo.nbytes() < held


def test_a_packed_ranking_gives_back_exactly_what_was_ranked():
    ranked = [("m1", 0.1 + 0.2), ("m2", 1 / 3), ("m3", -2.5e-9)]
    assert Ranked(ranked).unpack() == ranked
    assert Ranked([]).unpack() == []


def test_query_vectors_key_by_their_values():
    v = np.random.default_rng(0).standard_normal(512).astype(np.float32)
    assert vector_key(v) == vector_key(v.copy()) and vector_key(v) != vector_key(-v)
    assert len(vector_key(v)) == 16
