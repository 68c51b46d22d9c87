"""The public API as a user sees it: add, search, get, update, delete, history — EN and ZH."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import Action, InvalidInput, Kind, Memory, NotFound, Status
from helpers import episodes, facts


def contents(items):
    return [getattr(i, "memory", i).content for i in items]


# -- extraction through add ---------------------------------------------------------
@pytest.mark.parametrize(
    "text, needle, kind",
    [
        ("Please remember my favourite colour is blue.", "blue", None),
        ("I prefer reports in Markdown with charts.", "Markdown", Kind.PREFERENCE),
        ("I live in Berlin.", "Berlin", Kind.FACT),
        ("请记住我最喜欢的颜色是蓝色", "蓝色", None),
        ("我住在北京", "北京", Kind.FACT),
        ("我讨厌开长会", "开长会", Kind.PREFERENCE),
    ],
)
def test_add_extracts_a_self_contained_memory(memory, text, needle, kind):
    events = memory.add(text, user_id="u1")
    assert [e.action for e in facts(events)] == [Action.ADD]
    item = events[0].memory
    assert needle in item.content
    assert item.user_id == "u1" and item.status is Status.ACTIVE
    if kind is not None:
        assert item.kind is kind
    # rewritten about the user, never the raw first-person sentence
    assert not item.content.startswith(("I ", "我"))
    assert memory.get(item.id).content == item.content


@pytest.mark.parametrize(
    "text",
    ["Do I like coffee?", "What's the weather like today?", "If I lived in Paris I would walk more.",
     "我喜欢咖啡吗？", "你好！", "如果我住在巴黎就好了"],
)
def test_questions_hypotheticals_and_small_talk_store_nothing(memory, text):
    events = memory.add(text, user_id="u1")
    assert facts(events) == []
    # nothing but the turn itself, kept verbatim as an episode (none for small talk)
    assert [e.memory.content for e in events] == ([] if text == "你好！" else [text])
    assert facts(memory.get_all(user_id="u1")) == []


def test_assistant_turns_are_not_mined_for_user_facts(memory):
    events = memory.add(
        [{"role": "user", "content": "hi there"},
         {"role": "assistant", "content": "I live in Paris and I love coffee."}],
        user_id="u1",
    )
    assert events == []


def test_infer_false_stores_verbatim_turns(memory):
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    events = memory.add(
        [{"role": "user", "content": "I went hiking yesterday, it was great!"},
         {"role": "assistant", "content": "Sounds lovely."}],
        user_id="u1", session_id="s1", infer=False, timestamp=when, metadata={"dia_id": "D1:1"},
    )
    assert [e.action for e in events] == [Action.ADD, Action.ADD]
    first = events[0].memory
    assert first.kind is Kind.TURN and first.content == "I went hiking yesterday, it was great!"
    assert first.created_at == when and first.session_id == "s1"
    assert first.metadata == {"dia_id": "D1:1", "role": "user"}


# -- reconcile --------------------------------------------------------------------------
def test_exact_and_near_duplicates_are_noop_and_reinforce(memory):
    first = memory.add("I live in Berlin.", user_id="u1")[0].memory
    again = memory.add("i live in berlin", user_id="u1")
    assert [e.action for e in facts(again)] == [Action.NOOP]
    assert again[0].memory.id == first.id
    assert memory.get(first.id).strength > first.strength
    assert len(facts(memory.get_all(user_id="u1"))) == 1


@pytest.mark.parametrize(
    "others, first, restated",
    [
        ("Remember that I keep my {} in the garage.", "Remember that I keep my bike in the garage.",
         "Remember that I always keep my bike in the garage."),
        ("请记住我的{}放在车库里", "请记住我的自行车放在车库里", "请记住我的自行车一直放在车库里"),
    ],
)
def test_a_restatement_in_other_words_is_found_among_many_alike(memory, others, first, restated):
    for thing in ["kayak", "tent", "skis", "drill", "ladder", "grill", "mower", "sled", "canoe", "rake"] * 3:
        memory.add(others.format(thing + str(len(memory.get_all(user_id="u1")))), user_id="u1")
    kept = memory.add(first, user_id="u1")[0].memory
    stored = len(facts(memory.get_all(user_id="u1", limit=None)))
    events = memory.add(restated, user_id="u1")
    assert [(e.action, e.memory.id) for e in facts(events)] == [(Action.NOOP, kept.id)]
    assert "near-duplicate" in events[0].reason
    assert len(facts(memory.get_all(user_id="u1", limit=None))) == stored


@pytest.mark.parametrize(
    "before, after, old_needle, new_needle",
    [
        ("My favourite colour is blue.", "My favourite colour is green.", "blue", "green"),
        ("我住在北京", "我搬到上海了", "北京", "上海"),
    ],
)
def test_new_value_for_same_key_supersedes_and_keeps_history(memory, before, after, old_needle, new_needle):
    old = memory.add(before, user_id="u1")[0].memory
    events = memory.add(after, user_id="u1")
    assert [e.action for e in facts(events)] == [Action.SUPERSEDE]
    new = events[0].memory
    assert new_needle in new.content and new.supersedes == old.id
    stored_old = memory.get(old.id)
    assert stored_old.status is Status.SUPERSEDED and stored_old.superseded_by == new.id
    assert stored_old.valid_to is not None
    assert contents(facts(memory.get_all(user_id="u1"))) == [new.content]
    assert old_needle in contents(memory.get_all(user_id="u1", filters={"status": "superseded"}))[0]
    actions = [h.action for h in memory.history(old.id)]
    assert actions == ["ADD", "SUPERSEDE"]
    assert memory.history(old.id)[-1].new_content == new.content
    # search only returns the active one by default (the episode of `before` is what the user said, not a fact)
    hits = facts(memory.search(old_needle, user_id="u1"))
    assert all(new_needle in c or old_needle not in c for c in contents(hits))


def test_opposite_feelings_without_a_change_word_are_disputed(memory):
    memory.add("I love coffee.", user_id="u1")
    events = memory.add("I hate coffee.", user_id="u1")
    assert [e.action for e in facts(events)] == [Action.DISPUTE]
    disputed = memory.get_all(user_id="u1", filters={"status": "disputed"})
    assert len(disputed) == 2


def test_opposite_feelings_with_a_change_word_supersede(memory):
    memory.add("I love coffee.", user_id="u1")
    events = memory.add("I don't like coffee anymore.", user_id="u1")
    assert [e.action for e in facts(events)] == [Action.SUPERSEDE]


# -- persistence and isolation ---------------------------------------------------------
def test_memories_survive_a_restart(db_path, embedder):
    with Memory(db_path, embedder=embedder) as m:
        m.add("I work at Acme.", user_id="u1")
        m.add("我住在杭州", user_id="u2")
    with Memory(db_path, embedder=embedder) as m:
        assert "Acme" in m.search("where do I work?", user_id="u1")[0].memory.content
        assert "杭州" in m.search("我住在哪里", user_id="u2")[0].memory.content


def test_same_content_two_users_never_see_each_other(memory):
    a = memory.add("I live in Berlin.", user_id="alice")[0].memory
    b = memory.add("I live in Berlin.", user_id="bob")
    assert [e.action for e in facts(b)] == [Action.ADD]  # not a duplicate of alice's
    assert b[0].memory.id != a.id
    assert [r.memory.user_id for r in facts(memory.search("Berlin", user_id="alice"))] == ["alice"]
    assert [r.memory.user_id for r in facts(memory.search("Berlin", user_id="bob"))] == ["bob"]
    assert {r.memory.user_id for r in memory.search("Berlin", user_id="alice")} == {"alice"}  # episodes too
    assert {r.memory.user_id for r in memory.search("Berlin", user_id="bob")} == {"bob"}
    assert memory.delete_all(user_id="alice") == 2  # the fact and the episode it was drawn from
    assert memory.search("Berlin", user_id="alice") == []
    assert contents(facts(memory.get_all(user_id="bob"))) == [b[0].memory.content]
    assert memory.search("Berlin", user_id="bob")[0].memory.user_id == "bob"


def test_agent_scope_narrows_but_user_scope_sees_all_agents(memory):
    memory.add("I live in Berlin.", user_id="u1", agent_id="travel")
    memory.add("I am a nurse.", user_id="u1", agent_id="work")
    assert len(facts(memory.get_all(user_id="u1"))) == 2
    assert ["travel"] == [i.agent_id for i in facts(memory.get_all(user_id="u1", agent_id="travel"))]
    assert {i.agent_id for i in memory.get_all(user_id="u1", agent_id="travel")} == {"travel"}
    assert all(r.memory.agent_id == "work" for r in memory.search("Berlin nurse", user_id="u1", agent_id="work"))


# -- search -------------------------------------------------------------------------------
def test_search_ranks_relevant_memory_first_and_reports_score_parts(memory):
    for text in ["I live in Berlin.", "I am a nurse.", "I love sushi.", "My dog's name is Rex."]:
        memory.add(text, user_id="u1")
    results = memory.search("What is the name of my dog?", user_id="u1", limit=2)
    assert "Rex" in results[0].memory.content
    assert len(results) == 2 and results[0].score >= results[1].score
    parts = results[0].parts
    assert parts.fused > 0 and (parts.lexical_rank or parts.dense_rank)


def test_chinese_search_matches_across_segmentations(memory):
    memory.add("我在北京大学工作", user_id="u1")
    memory.add("我喜欢吃火锅", user_id="u1")
    results = memory.search("北京的大学", user_id="u1", limit=1)
    assert "北京大学" in results[0].memory.content


def test_search_filters_kind_session_time_and_metadata(memory):
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    memory.add("I love hiking.", user_id="u1", session_id="s1", timestamp=t0, metadata={"topic": "outdoor"})
    memory.add("I live in Oslo.", user_id="u1", session_id="s2", timestamp=t0 + timedelta(days=30))
    memory.add("We went hiking near Oslo.", user_id="u1", infer=False, timestamp=t0 + timedelta(days=60))
    q = "hiking Oslo"
    assert {r.memory.kind for r in memory.search(q, user_id="u1", filters={"kind": "preference"})} == {Kind.PREFERENCE}
    assert {r.memory.session_id for r in memory.search(q, user_id="u1", filters={"session_id": "s2"})} == {"s2"}
    recent = memory.search(q, user_id="u1", filters={"since": t0 + timedelta(days=45)})
    assert [r.memory.kind for r in recent] == [Kind.TURN]
    tagged = memory.search(q, user_id="u1", filters={"metadata": {"topic": "outdoor"}})
    assert len(facts(tagged)) == 1 and "hiking" in tagged[0].memory.content
    said = memory.get_all(user_id="u1", filters={"kind": "turn", "metadata": {"topic": "outdoor"}})
    assert [m.content for m in said] == ["I love hiking."]  # the turn keeps its metadata


def test_search_bumps_access_count(memory):
    item = memory.add("I live in Berlin.", user_id="u1")[0].memory
    memory.search("Berlin", user_id="u1")
    memory.search("Berlin", user_id="u1")
    stored = memory.get(item.id)
    assert stored.access_count == 2 and stored.last_accessed is not None


def test_reinforce_can_be_turned_off(db_path, embedder):
    with Memory(db_path, embedder=embedder, reinforce=False) as m:
        item = m.add("I live in Berlin.", user_id="u1")[0].memory
        m.search("Berlin", user_id="u1")
        assert m.get(item.id).access_count == 0


# -- control ------------------------------------------------------------------------------
def test_update_changes_content_and_history(memory):
    item = memory.add("I live in Berlin.", user_id="u1")[0].memory
    event = memory.update(item.id, content="User lives in Potsdam.", metadata={"checked": True})
    assert event.action is Action.UPDATE
    stored = memory.get(item.id)
    assert stored.content == "User lives in Potsdam." and stored.metadata["checked"] is True
    assert "Potsdam" in memory.search("Potsdam", user_id="u1")[0].memory.content
    last = memory.history(item.id)[-1]
    assert (last.action, last.new_content) == ("UPDATE", "User lives in Potsdam.")
    assert "Berlin" in last.old_content


def test_delete_removes_it_and_history_keeps_no_content(memory):
    item = memory.add("My cat is called Whiskers.", user_id="u1")[0].memory
    memory.delete(item.id)
    with pytest.raises(NotFound):
        memory.get(item.id)
    # the fact is gone; what the user said stays, as an episode, until it is deleted too
    assert facts(memory.search("Whiskers", user_id="u1")) == []
    entries = memory.history(item.id)
    assert [e.action for e in entries] == ["ADD", "DELETE"]
    assert all(e.old_content is None and e.new_content is None for e in entries)


def test_deleted_text_leaves_the_database_file(db_path, embedder):
    with Memory(db_path, embedder=embedder) as m:
        keep = m.add("Please remember that my hobby is woodworking.", user_id="u1")[0].memory
        gone = m.add("Please remember that my secret recipe is Zanzibarcurry.", user_id="u1")[0].memory
        m.delete(gone.id)
        m.delete(gone.metadata["episode"])  # and what the user said
        assert m.get(keep.id)
    raw = b"".join(p.read_bytes() for p in db_path.parent.glob("engram.db*"))
    assert b"woodworking" in raw
    assert b"Zanzibarcurry" not in raw and b"zanzibarcurri" not in raw.lower()


def test_idempotency_key_makes_retries_safe(memory):
    first = memory.add("I live in Berlin.", user_id="u1", idempotency_key="req-1")
    retry = memory.add("I live in Berlin.", user_id="u1", idempotency_key="req-1")
    assert [e.action for e in facts(retry)] == [Action.NOOP]
    assert facts(retry)[0].memory.id == facts(first)[0].memory.id
    assert [e.action for e in episodes(retry)] == [Action.NOOP]  # the turn is not kept twice either


def test_add_many_bulk_ingests_turns(memory):
    events = memory.add_many(
        {"messages": f"turn number {i} about gardening", "user_id": "u1", "metadata": {"n": i}}
        for i in range(50)
    )
    assert len(events) == 50 and all(e.action is Action.ADD for e in events)
    assert len(memory.get_all(user_id="u1", limit=None)) == 50
    assert memory.search("turn number 17", user_id="u1", limit=1)[0].memory.metadata["n"] == 17


def test_reset_forgets_everyone(memory):
    memory.add("I live in Berlin.", user_id="u1")
    memory.add("我住在北京", user_id="u2")
    memory.reset()
    assert memory.get_all(user_id="u1") == [] and memory.get_all(user_id="u2") == []


# -- bad input changes nothing ----------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add("I live in Berlin.", user_id=""),
        lambda m: m.add("I live in Berlin.", user_id=None),
        lambda m: m.add("I live in Berlin.", user_id="   "),
        lambda m: m.add(42, user_id="u1"),
        lambda m: m.add([{"role": "robot", "content": "hi"}], user_id="u1"),
        lambda m: m.add([{"content": "no role"}], user_id="u1"),
        lambda m: m.add("", user_id="u1"),
        lambda m: m.add("I live in Berlin.", user_id="u1", metadata="x"),
        lambda m: m.add("I live in Berlin.", user_id="u1", metadata={"f": object()}),
        lambda m: m.add("I live in Berlin.", user_id="u1", timestamp="yesterday"),
        lambda m: m.search("", user_id="u1"),
        lambda m: m.search("Berlin", user_id="u1", limit=0),
        lambda m: m.search("Berlin", user_id="u1", filters={"colour": "red"}),
        lambda m: m.search("Berlin", user_id="u1", filters={"kind": "nonsense"}),
        lambda m: m.update("0" * 32, content="x"),
        lambda m: m.update("0" * 32),
        lambda m: m.get(""),
    ],
)
def test_bad_input_raises_a_clear_error_and_changes_nothing(memory, call):
    item = memory.add("I live in Berlin.", user_id="u1")[0].memory
    before = contents(memory.get_all(user_id="u1"))
    with pytest.raises((InvalidInput, NotFound)) as info:
        call(memory)
    assert str(info.value)
    assert contents(facts(memory.get_all(user_id="u1"))) == [item.content]
    assert contents(memory.get_all(user_id="u1")) == before


@pytest.mark.parametrize("call", [lambda m: m.get("nope"), lambda m: m.delete("nope"), lambda m: m.history("nope")])
def test_unknown_ids_raise_not_found(memory, call):
    with pytest.raises(NotFound, match="nope"):
        call(memory)


def test_close_vectors_with_different_numbers_are_not_duplicates(memory):
    first = memory.add("I really like green tea number 1.", user_id="u1")
    second = memory.add("I really like green tea number 2.", user_id="u1")
    assert [e.action for e in facts(first + second)] == [Action.ADD] * 2
    again = memory.add("I really like green tea number 2!", user_id="u1")
    assert [e.action for e in facts(again)] == [Action.NOOP]
