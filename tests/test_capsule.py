"""Deltas, promotion and the capsule: sections, budget, eviction order, cache invalidation."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engram.records import make_record
from engram import Kind, Layer, Memory, Status
from engram.capsule import keep_score
from engram.models import MemoryItem, Source, utcnow
from engram.tokens import get_counter


def put(memory, user, content, *, importance=0.5, kind=Kind.PREFERENCE, layer=Layer.LONG_TERM,
        key=None, language=None, access_count=0, age_days=0.0):
    """Write a memory straight to the store (fast; no extraction, no embedding)."""
    when = utcnow() - timedelta(days=age_days)
    item = MemoryItem(
        user_id=user, content=content, kind=kind, layer=layer, key=key, importance=importance,
        language=language or ("zh" if any("\u4e00" <= c <= "\u9fff" for c in content) else "en"),
        access_count=access_count, created_at=when, updated_at=when,
    )
    memory.store.write(inserts=[make_record(item)])
    return item


# -- delta compression ------------------------------------------------------------------
def test_delta_merges_resolves_conflicts_and_has_the_four_sections_en(memory):
    s = memory.session("u1", "s1")
    for line in ["I prefer reports in Markdown with charts.", "I live in Berlin.",
                 "i live in berlin", "I moved to Lisbon.", "I need to finish the Q3 report by Friday.",
                 "Please act as my strict editor."]:
        s.add(line)
    delta = s.end()
    text = delta.text
    assert "[User preferences]" in text and "[Known facts]" in text
    assert "[Current task state]" in text and "[Identity]" in text
    assert text.count("Berlin") == 0  # latest wins
    assert "Lisbon" in text and "(updated)" in text
    assert text.count("Markdown") == 1  # the same fact once
    sections = [ln.section for ln in delta.lines]
    assert sections == sorted(sections, key=["preferences", "facts", "task", "identity"].index)
    counter = get_counter(memory.settings.token_encoding)
    assert all(counter.count(ln.text) <= memory.settings.line_tokens for ln in delta.lines)
    assert delta.language == "en"
    summary = delta.summary
    assert summary.kind is Kind.SUMMARY and set(summary.sources) == {ln.memory_id for ln in delta.lines}
    # the frozen summary text is not searched (its sources are)
    assert all(r.memory.kind is not Kind.SUMMARY for r in memory.search("Lisbon Markdown", user_id="u1"))


def test_delta_in_chinese_uses_chinese_headings_and_marks_updates(memory):
    s = memory.session("u1", "s1")
    for line in ["我更喜欢用Markdown写报告", "我住在北京", "我住在北京", "我搬到上海了", "我是软件工程师"]:
        s.add(line)
    delta = s.end()
    assert delta.language == "zh"
    assert "【用户偏好】" in delta.text and "【已知事实】" in delta.text
    assert "上海" in delta.text and "（已更新）" in delta.text and "北京" not in delta.text
    assert delta.text.count("Markdown") == 1


def test_an_empty_session_makes_no_summary(memory):
    s = memory.session("u1", "s1")
    s.add("What's the weather like today?")
    delta = s.end()
    assert delta.summary is None and delta.lines == [] and delta.text == ""


# -- promotion -----------------------------------------------------------------------------
def test_explicit_and_identity_memories_are_long_term_at_once(memory):
    explicit = memory.add("Please remember my favourite colour is blue.", user_id="u1")[0].memory
    identity = memory.add("Please act as my strict editor.", user_id="u1")[0].memory
    plain = memory.add("I prefer tea over coffee.", user_id="u1")[0].memory
    assert explicit.source is Source.EXPLICIT and explicit.layer is Layer.LONG_TERM
    assert identity.kind is Kind.IDENTITY and memory.get(identity.id).layer is Layer.LONG_TERM
    assert memory.get(plain.id).layer is Layer.EPISODIC
    assert [h.action for h in memory.history(explicit.id)] == ["ADD", "PROMOTE"]
    assert memory.get(explicit.id) == explicit  # what add returned is what was written


@pytest.mark.parametrize("first, again", [("I prefer tea over coffee.", "i prefer tea over coffee"),
                                          ("我住在北京", "我住在北京")])
def test_said_again_in_a_later_session_becomes_long_term(memory, first, again):
    item = memory.add(first, user_id="u1", session_id="a")[0].memory
    memory.add(again, user_id="u1", session_id="a")  # same session: not yet
    assert memory.get(item.id).layer is Layer.EPISODIC
    event = memory.add(again, user_id="u1", session_id="b")[0]
    assert event.memory.id == item.id and event.memory.layer is Layer.LONG_TERM
    stored = memory.get(item.id)
    assert stored.layer is Layer.LONG_TERM and stored.metadata["seen_in"] == ["a", "b"]


def test_a_new_value_of_a_long_term_slot_stays_long_term(memory):
    memory.add("Please remember that I live in Berlin.", user_id="u1")
    event = memory.add("I moved to Lisbon.", user_id="u1")[0]
    assert "Lisbon" in event.memory.content and event.memory.layer is Layer.LONG_TERM


# -- capsule: content and order ---------------------------------------------------------
def test_capsule_aggregates_long_term_and_deltas_follows_updates_and_deletes(memory):
    memory.add("Please remember my favourite colour is blue.", user_id="u1", session_id="a")
    memory.add("I prefer reports in Markdown with charts.", user_id="u1", session_id="a")
    memory.add("I live in Berlin.", user_id="u1", session_id="a")
    memory.add("I work at Acme.", user_id="u1", session_id="b")  # open session, not compressed: not yet
    memory.end_session("u1", "a")
    capsule = memory.capsule("u1")
    assert "blue" in capsule.text and "Markdown" in capsule.text and "Berlin" in capsule.text
    assert "Acme" not in capsule.text
    assert capsule.text.startswith(f"[Memory capsule - last updated: {capsule.last_updated:%Y-%m-%d}]")
    assert capsule.text.index("[User preferences]") < capsule.text.index("[Known facts]")
    # a later change of a delta's fact shows its new value; a deletion leaves at once
    memory.add("I moved to Lisbon.", user_id="u1", session_id="b")
    capsule = memory.capsule("u1")
    assert "Lisbon" in capsule.text and "Berlin" not in capsule.text
    markdown = next(m for m in capsule.memories if "Markdown" in m.content)
    memory.delete(markdown.id)
    assert "Markdown" not in memory.capsule("u1").text


def test_capsule_in_chinese(memory):
    s = memory.session("u1", "a")
    for line in ["请记住我最喜欢的颜色是蓝色", "我更喜欢用Markdown写报告", "我住在北京", "再见"]:
        s.add(line)
    capsule = memory.capsule("u1")
    assert capsule.language == "zh"
    assert capsule.text.startswith("[记忆胶囊 - 上次更新：")
    assert "【用户偏好】" in capsule.text and "蓝色" in capsule.text and "北京" in capsule.text


def test_capsule_deduplicates_the_same_fact(memory):
    put(memory, "u1", "User prefers green tea.", key="preference:tea", importance=0.9)
    put(memory, "u1", "User prefers green tea!", importance=0.5)
    put(memory, "u1", "User likes tea.", key="preference:tea", importance=0.3)
    capsule = memory.capsule("u1")
    assert [m.content for m in capsule.memories] == ["User prefers green tea."]
    assert sorted(x.reason.split(" ")[0] for x in capsule.left_out) == ["duplicate", "duplicate"]


def test_empty_capsule(memory):
    capsule = memory.capsule("nobody")
    assert capsule.text == "" and capsule.token_count == 0 and capsule.memories == []


# -- capsule: budget and eviction ---------------------------------------------------------
def test_eviction_drops_the_lowest_importance_use_and_recency_first(memory):
    for i in range(10):
        put(memory, "u1", f"User preference number {i} is kept.", importance=i / 10)
    capsule = memory.capsule("u1", budget=60)
    kept = {m.content for m in capsule.memories}
    left = [x.content for x in capsule.left_out]
    assert capsule.token_count <= 60 and kept and left
    scores_kept = [ln.score for ln in capsule.lines]
    assert min(scores_kept) > max(x.score for x in capsule.left_out)
    assert "User preference number 9 is kept." in kept and "User preference number 0 is kept." in left
    assert [x.reason for x in capsule.left_out] == ["budget"] * len(left)
    # use and recency break ties of importance
    put(memory, "u2", "User likes an often used thing.", importance=0.5, access_count=20)
    put(memory, "u2", "User likes a rarely used thing.", importance=0.5)
    put(memory, "u2", "User likes an old forgotten thing.", importance=0.5, age_days=400)
    now = utcnow()
    items = {m.content: m for m in memory.get_all(user_id="u2")}
    order = sorted(items, key=lambda c: -keep_score(items[c], now))
    assert order == ["User likes an often used thing.", "User likes a rarely used thing.",
                     "User likes an old forgotten thing."]
    one = memory.capsule("u2", budget=memory.capsule("u2").token_count - 1)
    assert "old forgotten" not in one.text and "often used" in one.text


texts = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=80),
    st.lists(st.sampled_from(["用户", "喜欢", "蓝色", "北京", "Markdown", "coffee", "🙂", "報告", "tea", "和"]),
             min_size=1, max_size=30).map("".join),
    st.lists(st.sampled_from("the user likes long walks in Berlin with a dog named Rex".split()),
             min_size=1, max_size=40).map(" ".join),
)
memories = st.lists(
    st.tuples(texts, st.floats(0, 1), st.sampled_from([Kind.PREFERENCE, Kind.FACT, Kind.TASK, Kind.IDENTITY]),
              st.integers(0, 50), st.floats(0, 400)),
    min_size=0, max_size=40,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=memories, budget=st.integers(0, 600), encoding=st.sampled_from(["cl100k_base", "o200k_base"]))
def test_capsule_never_exceeds_its_budget(memory, items, budget, encoding):
    memory.settings = memory.settings.model_copy(update={"token_encoding": encoding})
    user = uuid.uuid4().hex
    for content, importance, kind, uses, age in items:
        if content.strip():
            put(memory, user, content, importance=importance, kind=kind, access_count=uses, age_days=age)
    capsule = memory.capsule(user, budget=budget)
    assert capsule.token_count == get_counter(encoding).count(capsule.text)
    assert capsule.token_count <= budget
    assert len(capsule.memories) + len(capsule.left_out) == len([c for c, *_ in items if c.strip()])
    # eviction order: a memory left out for budget that outranks a kept one was longer
    # (it did not fit the room the better-ranked lines left; section headings cost a few tokens)
    for x in capsule.left_out:
        if x.reason == "budget":
            assert x.tokens > 0
            for line in capsule.lines:
                if line.score < x.score:
                    assert x.tokens > line.tokens - 8


def test_budget_and_encoding_are_configurable(db_path, embedder):
    with Memory(db_path, embedder=embedder, capsule_budget=50, token_encoding="o200k_base") as memory:
        for i in range(10):
            put(memory, "u1", f"用户喜欢第{i}种很长很长的中文偏好描述")
        capsule = memory.capsule("u1")
        assert capsule.budget == 50 and capsule.encoding == "o200k_base"
        assert 0 < capsule.token_count <= 50 and capsule.left_out
        assert get_counter("o200k_base").count(capsule.text) == capsule.token_count


def test_unknown_encodings_fall_back_conservatively():
    exact, approx = get_counter("cl100k_base"), get_counter("some-local-model")
    assert not approx.exact and exact.exact
    text = "User prefers reports in Markdown with charts. 用户喜欢蓝色"
    assert approx.count(text) >= exact.count(text)
    assert approx.count(approx.truncate(text, 7)) <= 7
    assert get_counter("gpt-4o").name == "o200k_base"


# -- capsule: cache --------------------------------------------------------------------------
def test_capsule_is_cached_until_the_users_memory_changes(memory):
    item = memory.add("Please remember my favourite colour is blue.", user_id="u1")[0].memory
    cold = memory.capsule("u1")
    assert not cold.cached and memory.capsule("u1").cached
    memory.search("colour", user_id="u1")  # reading (access counts) does not invalidate
    assert memory.capsule("u1").cached
    memory.add("Please remember I live in Berlin.", user_id="u1")  # add
    after_add = memory.capsule("u1")
    assert not after_add.cached and "Berlin" in after_add.text
    memory.update(item.id, content="User's favourite colour is green.")  # update
    after_update = memory.capsule("u1")
    assert not after_update.cached and "green" in after_update.text and "blue" not in after_update.text
    memory.delete(item.id)  # delete
    assert "green" not in memory.capsule("u1").text
    memory.add("Please remember I like tea.", user_id="u2")
    other = memory.capsule("u2")
    memory.delete_all(user_id="u1")  # delete_all
    assert memory.capsule("u1").text == ""
    assert memory.capsule("u2").cached  # another user's write leaves u2's capsule alone
    memory.reset()  # reset
    assert memory.capsule("u2").text == "" and other.text


def test_capsule_cache_notices_writes_from_another_process(memory, reopen):
    memory.add("Please remember my favourite colour is blue.", user_id="u1")
    assert "blue" in memory.capsule("u1").text and memory.capsule("u1").cached
    other = reopen()
    other.add("Please remember I live in Berlin.", user_id="u1")
    fresh = memory.capsule("u1")
    assert not fresh.cached and "Berlin" in fresh.text


# -- compression frequency ----------------------------------------------------------------
def test_task_compression_waits_for_compress(db_path, embedder):
    with Memory(db_path, embedder=embedder, compression="task") as memory:
        memory.add("I prefer tea over coffee.", user_id="u1", session_id="a")
        assert memory.end_session("u1", "a").summary is None
        assert "tea" not in memory.capsule("u1").text
        delta = memory.compress("u1")
        assert "tea" in delta.text and "tea" in memory.capsule("u1").text
        assert memory.compress("u1").summary is None  # nothing new since


def test_daily_compression_makes_one_delta_per_day(db_path, embedder):
    with Memory(db_path, embedder=embedder, compression="daily") as memory:
        memory.add("I prefer tea over coffee.", user_id="u1", session_id="a")
        memory.end_session("u1", "a")
        assert "tea" in memory.capsule("u1").text
        memory.add("I live in Berlin.", user_id="u1", session_id="b")
        memory.end_session("u1", "b")
        assert "Berlin" not in memory.capsule("u1").text  # waits for tomorrow's delta
        user_deltas = memory.get_all(user_id="u1", filters={"kind": "summary"})
        assert len(user_deltas) == 1 and user_deltas[0].metadata["delta_of"] == "user"


def test_a_user_template_directory_overrides_by_file_name(tmp_path, embedder):
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "capsule.en.j2").write_text(
        "MY CAPSULE {{ last_updated }}\n{% for s in sections %}{% for l in s.lines %}* {{ l.text }}\n{% endfor %}{% endfor %}",
        encoding="utf-8",
    )
    with Memory(tmp_path / "t.db", embedder=embedder, template_dir=folder) as memory:
        memory.add("Please remember my favourite colour is blue.", user_id="u1")
        text = memory.capsule("u1").text
        assert text.startswith("MY CAPSULE") and "* User's favourite colour is blue." in text
        assert "Long-term memory context" in memory.context("colour?", user_id="u1").text  # bundled


def test_archived_and_superseded_memories_stay_out(memory):
    kept = put(memory, "u1", "User likes cats.")
    gone = put(memory, "u1", "User likes dogs.")
    memory.store.write(updates=[make_record(gone.model_copy(update={"status": Status.ARCHIVED}))])
    capsule = memory.capsule("u1")
    assert [m.id for m in capsule.memories] == [kept.id]


@pytest.mark.parametrize("lines, current, ended", [
    (["I live in Paris.", "I no longer live in Berlin."], "Paris", "Berlin"),
    (["我住在上海", "我不再住在北京了"], "上海", "北京"),
])
def test_a_no_longer_statement_does_not_hide_the_current_value(memory, lines, current, ended):
    """"No longer lives in Berlin" next to "lives in Paris": both are true, both are shown."""
    s = memory.session("u1", "s1")
    for line in lines:
        s.add(line)
    delta = s.end()
    assert current in delta.text and ended in delta.text
    capsule = memory.capsule(user_id="u1")
    assert current in capsule.text and ended in capsule.text
    assert not [x for x in capsule.left_out if current in x.content]


def test_facts_and_preferences_added_outside_a_session_are_in_the_capsule(memory):
    """mem0-style use (`engram add "I prefer dark mode."`, no sessions) fills the capsule too."""
    memory.add("I prefer dark mode.", user_id="m1")
    memory.add("I live in Lisbon.", user_id="m1")
    text = memory.capsule("m1").text
    assert "dark mode" in text and "Lisbon" in text


def test_a_routine_is_a_known_fact_not_a_tasks_state(memory):
    """"I call my mom every Sunday" is a recurring task (it has reminders), but in the capsule it
    is something known about the user; "[Current task state]" keeps what is to be done."""
    memory.add("I call my mom every Sunday.", user_id="u", session_id="a")
    memory.add("I need to renew my passport by Friday.", user_id="u", session_id="a")
    delta = memory.end_session("u", "a")
    assert [line.section for line in delta.lines if "mom" in line.text] == ["facts"]
    sections = {}
    for line in memory.capsule("u").lines:
        sections.setdefault(line.section, []).append(line.text)
    assert sections["facts"] == ["User calls their mom every Sunday."]
    assert sections["task"][0].startswith("User needs to renew their passport")
