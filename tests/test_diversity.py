"""Diversity in the top k (engram.diversity): near-copies and one session do not crowd out
the second evidence turn."""

from __future__ import annotations

from engram import Memory
from engram.diversity import diversify, overlap

SIGNAL = (0.0, 0.0, 0.0, 0.0)


def test_overlap_is_jaccard():
    assert overlap(frozenset("ab"), frozenset("bc")) == 1 / 3
    assert overlap(frozenset(), frozenset("a")) == 0.0


def test_near_copies_give_way_to_the_second_evidence():
    contents = {
        "a": "I love my pottery class, pottery is great",
        "b": "My pottery class is great, I love pottery",
        "c": "Pottery class is great, love it",
        "d": "Made a clay bowl at the studio on Sunday",
    }
    scored = [(1.0, "a", SIGNAL), (0.95, "b", SIGNAL), (0.9, "c", SIGNAL), (0.6, "d", SIGNAL)]
    plain = diversify(scored, contents, {}, 2, 0.0, 0.0)
    mixed = diversify(scored, contents, {}, 2, 0.0, 1.0)
    assert [m for _, m, _ in plain][:2] == ["a", "b"]
    assert [m for _, m, _ in mixed][:2] == ["a", "d"]
    scores = [s for s, _, _ in mixed]
    assert scores == sorted(scores, reverse=True)  # shown scores follow the order


def test_one_session_gives_way_to_another():
    scored = [(1.0, "a", SIGNAL), (0.97, "b", SIGNAL), (0.9, "c", SIGNAL)]
    sessions = {"a": "s1", "b": "s1", "c": "s2"}
    contents = {"a": "x", "b": "y", "c": "z"}
    assert [m for _, m, _ in diversify(scored, contents, sessions, 3, 0.1, 0.0)] == ["a", "c", "b"]
    assert [m for _, m, _ in diversify(scored, contents, sessions, 3, 0.0, 0.0)] == ["a", "b", "c"]


def test_search_spreads_over_near_copies(db_path, embedder):
    texts = [
        "I started a pottery class, the pottery class is great",
        "The pottery class is great, I love my pottery class",
        "My pottery class is so great, pottery class rocks",
        "Pottery class again today, great pottery class",
        "At the class I made a bowl with clay, pottery is relaxing",
        "We went hiking on Sunday",
    ]
    for strength, spread in ((1.0, True), (0.0, False)):
        with Memory(db_path.with_name(f"d{strength}.db"), embedder=embedder, diversity_copy=strength) as m:
            m.add_many({"messages": t, "user_id": "u1", "infer": False} for t in texts)
            top = [h.memory.content for h in m.search("pottery class", user_id="u1", limit=3)]
            assert (texts[4] in top) is spread
