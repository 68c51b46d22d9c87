"""Behaviours the retrieval pipeline relies on (see README, Retrieval)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engram import Memory


def _conversation(memory, user, session, turns, start=datetime(2023, 5, 8, tzinfo=UTC)):
    memory.add_many(
        {"messages": text, "user_id": user, "session_id": session, "infer": False,
         "timestamp": start + timedelta(seconds=i), "metadata": {"n": i}}
        for i, text in enumerate(turns)
    )


def test_an_answer_is_found_through_the_question_turn_before_it(memory):
    """The answer turn shares no word with the question; its neighbour does."""
    _conversation(memory, "u1", "s1", [
        "Mel: Hey! How was the camping trip with the kids last week?",
        "Caroline: Amazing! We roasted marshmallows and watched the Perseids.",
        "Mel: I started a new pottery class on Monday.",
        "Caroline: Nice, my sister loves ceramics too.",
    ])
    hits = [h.memory.content for h in memory.search("What did Caroline do on the camping trip?", user_id="u1", limit=4)]
    answer = next(i for i, c in enumerate(hits) if "marshmallows" in c)
    other = next(i for i, c in enumerate(hits) if "ceramics" in c)
    assert answer < 2 and answer < other  # by words alone the shorter "Caroline" turn wins


def test_neighbours_come_only_from_the_same_session(memory):
    _conversation(memory, "u1", "s1", ["A: tell me about the camping trip"])
    _conversation(memory, "u1", "s2", ["B: we painted the fence blue"])
    hits = memory.search("camping trip", user_id="u1", limit=5)
    assert [h.memory.content for h in hits][0] == "A: tell me about the camping trip"
    assert all("fence" not in h.memory.content for h in hits if h.parts.lexical_rank)


def test_context_weight_zero_turns_the_neighbours_off(db_path, embedder):
    with Memory(db_path, embedder=embedder, weight_context=0.0, weight_dense=0.0, pair_factor=0.0) as m:
        _conversation(m, "u1", "s1", [
            "Mel: How was the camping trip?",
            "Caroline: We roasted marshmallows.",
        ])
        hits = m.search("camping trip", user_id="u1", limit=5)
        assert [h.memory.content for h in hits] == ["Mel: How was the camping trip?"]


def test_chinese_queries_do_not_fuse_an_embedder_that_cannot_read_chinese(memory):
    memory.add_many({"messages": t, "user_id": "u1", "infer": False} for t in [
        "周末我们去杭州西湖划船了", "我最近在学做川菜", "昨天的会议讨论了预算",
    ])
    hits = memory.search("西湖划船", user_id="u1", limit=1)
    assert hits[0].memory.content == "周末我们去杭州西湖划船了"
    assert hits[0].parts.dense_rank is None  # lexical found enough: no dense run
    # nothing shares a word: the embedder still fills in rather than returning nothing
    assert memory.search("旅行", user_id="u1", limit=2)


def test_english_queries_fuse_both_retrievers(memory):
    memory.add_many({"messages": t, "user_id": "u1", "infer": False} for t in [
        "We adopted a puppy named Biscuit", "The quarterly budget meeting ran long",
    ])
    hits = memory.search("new dog at home", user_id="u1", limit=1)
    assert "puppy" in hits[0].memory.content and hits[0].parts.dense_rank == 1


def test_rrf_fusion_remains_available(db_path, embedder):
    with Memory(db_path, embedder=embedder, fusion="rrf") as m:
        m.add("I live in Berlin.", user_id="u1")
        m.add("I am a nurse.", user_id="u1")
        assert "Berlin" in m.search("Berlin", user_id="u1", limit=1)[0].memory.content


def test_ranking_uses_importance_after_decay(memory):
    long_ago = datetime.now(UTC) - timedelta(days=400)
    old = memory.add("We chatted about the weather in Oslo.", user_id="u1", infer=False, timestamp=long_ago)[0].memory
    new = memory.add("We chatted about the weather in Oslo!", user_id="u1", infer=False)[0].memory
    parts = {h.memory.id: h.parts for h in memory.search("weather in Oslo", user_id="u1", limit=2)}
    assert parts[old.id].importance < 0.5 * old.importance  # a turn halves in 30 days
    assert abs(parts[new.id].importance - new.importance) < 0.01


def test_a_long_query_leans_on_what_it_repeats_and_on_its_latest_lines(db_path, embedder):
    with Memory(db_path, embedder=embedder, weight_dense=0.0, reinforce=False) as m:
        m.add_many({"messages": t, "user_id": "u1", "infer": False} for t in [
            "We went sailing on the lake", "We baked bread at home",
        ])
        repeated = "sailing was fun\nI love sailing\nsailing again soon\nbread too"
        assert "sailing" in m.search(repeated, user_id="u1", limit=1)[0].memory.content
        latest = "we talked about sailing\nand now about bread"
        assert "bread" in m.search(latest, user_id="u1", limit=1)[0].memory.content
        # the same words in the other order: the latest line wins again
        assert "sailing" in m.search("now about bread\nwe talked about sailing", user_id="u1", limit=1)[0].memory.content
