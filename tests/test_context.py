"""Per-turn context: the seed's verification flow across a restart, packing, budget, templates, CLI."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from engram.records import embed_records, make_record
from engram import Kind, Layer, Memory
from engram.cli import app
from engram.models import MemoryItem, utcnow
from engram.tokens import get_counter
from helpers import episodes, facts

FLOWS = {
    "en": {
        "session_a": ["Please remember my favourite colour is blue.", "I prefer reports in Markdown with charts.",
                      "I hate long meetings.", "I prefer short answers.", "Thanks, bye!"],
        "question": "What is my favourite colour?",
        "answer": "blue",
        "instruction": "Use them naturally",
        "heading": "[User preferences]",
    },
    "zh": {
        "session_a": ["请记住我最喜欢的颜色是蓝色", "我更喜欢用Markdown写报告，并附上数据图表", "我讨厌开长会",
                      "我喜欢简短的回答", "好的，再见"],
        "question": "我最喜欢的颜色是什么？",
        "answer": "蓝色",
        "instruction": "自然地运用这些知识",
        "heading": "【用户偏好】",
    },
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_verification_flow_across_a_restart(memory, reopen, language):
    flow = FLOWS[language]
    session = memory.session("alice", "A")
    for line in flow["session_a"]:
        session.add(line)
    assert session.ended  # the goodbye ended session A and compressed it
    memory.close()

    restarted = reopen()  # a new process
    b = restarted.session("alice", "B")
    context = b.context(flow["question"])
    assert flow["answer"] in context.text
    assert flow["instruction"] in context.text and flow["heading"] in context.text
    assert context.language == language and context.session_id == "B"
    counter = get_counter(restarted.settings.token_encoding)
    assert context.token_count == counter.count(context.text) <= context.budget
    assert any(flow["answer"] in m.content for m in context.memories)
    capsule = restarted.capsule("alice")
    assert flow["answer"] in capsule.text and capsule.text in context.text


def test_relevant_memories_not_in_the_capsule_are_added(memory):
    memory.add("Please remember my favourite colour is blue.", user_id="u1")
    memory.add("I work at Acme as a data engineer.", user_id="u1")  # episodic: not in the capsule
    memory.add(
        [{"role": "user", "content": "We adopted a puppy named Rex last weekend."}],
        user_id="u1", infer=False, timestamp=utcnow() - timedelta(days=3),
    )
    context = memory.context("Where do I work?", user_id="u1")
    assert "Acme" in context.text and "blue" in context.text
    ids = [m.id for m in context.memories]
    assert len(ids) == len(set(ids))
    assert not set(context.capsule.memory_ids) & {ln.memory_id for ln in context.relevant}
    turn = memory.context("What is the puppy called?", user_id="u1")
    line = next(ln for ln in turn.relevant if "Rex" in ln.text)
    assert line.kind is Kind.TURN and line.when and f"[{line.when}]" in turn.text


def test_what_the_capsule_says_is_not_repeated(memory):
    memory.add("Please remember my favourite colour is blue.", user_id="u1")
    context = memory.context("What is my favourite colour?", user_id="u1")
    assert context.text.count("favourite colour is blue") == 1
    assert any(x.reason == "in capsule" for x in context.left_out)


def test_recent_turns_only_when_asked(memory):
    session = memory.session("u1", "s1")
    events = session.add([{"role": "user", "content": "Could you help me plan a trip to Kyoto?"},
                          {"role": "assistant", "content": "Sure, which dates?"}])
    # no fact worth remembering: the words live in working memory, and the user's turn as an episode
    assert facts(events) == []
    assert [e.memory.content for e in episodes(events)] == ["Could you help me plan a trip to Kyoto?"]
    without = session.context("dates?")
    with_turns = session.context("dates?", turns=True)
    # without turns=True the working-memory turns stay out (the user's own turn may be cited as an episode)
    assert without.turns == [] and "User: Could you" not in without.text and "which dates" not in without.text
    assert "User: Could you help me plan a trip to Kyoto?" in with_turns.text
    assert "Assistant: Sure, which dates?" in with_turns.text
    assert [t.role for t in with_turns.turns] == ["user", "assistant"]


def test_disputes_become_a_clarifying_question(memory):
    memory.add("I love coffee.", user_id="u1")
    events = memory.add("I hate coffee.", user_id="u1")
    assert events and events[0].action.value == "DISPUTE"
    context = memory.context("Should I order a coffee for you?", user_id="u1")
    assert context.clarifications and "coffee" in context.clarifications[0]
    assert "[To confirm with the user]" in context.text


def test_context_with_nothing_remembered_is_empty(memory):
    context = memory.context("hello", user_id="nobody")
    assert context.text == "" and context.token_count == 0


def test_zero_or_tiny_budgets_inject_nothing_over_budget(memory):
    memory.add("Please remember my favourite colour is blue.", user_id="u1")
    for budget in (0, 5, 40, 60):
        context = memory.context("colour?", user_id="u1", budget=budget)
        assert context.token_count <= budget


def put(memory, user, content, importance, layer, age):
    when = utcnow() - timedelta(days=age)
    item = MemoryItem(user_id=user, content=content, kind=Kind.FACT, layer=layer, importance=importance,
                      created_at=when, updated_at=when)
    record = make_record(item)
    embed_records(memory.embedder, [record])
    memory.store.write(inserts=[record])


words = "the user likes long walks in Berlin with a dog named Rex 用户 喜欢 蓝色 北京 报告 咖啡 Markdown".split()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=st.lists(
        st.tuples(st.lists(st.sampled_from(words), min_size=1, max_size=30).map(" ".join),
                  st.floats(0, 1), st.booleans(), st.floats(0, 100)),
        max_size=25,
    ),
    budget=st.integers(0, 700),
    query=st.lists(st.sampled_from(words), min_size=1, max_size=6).map(" ".join),
)
def test_context_never_exceeds_its_budget(memory, items, budget, query):
    user = uuid.uuid4().hex
    for content, importance, long_term, age in items:
        put(memory, user, content, importance, Layer.LONG_TERM if long_term else Layer.EPISODIC, age)
    context = memory.context(query, user_id=user, budget=budget)
    assert context.token_count == get_counter(memory.settings.token_encoding).count(context.text)
    assert context.token_count <= budget


def test_context_template_follows_the_language_and_can_be_overridden(tmp_path, embedder):
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "context.zh.j2").write_text("自定义：{{ capsule }}", encoding="utf-8")
    with Memory(tmp_path / "t.db", embedder=embedder, template_dir=folder) as memory:
        memory.add("请记住我最喜欢的颜色是蓝色", user_id="u1")
        memory.add("Please remember I live in Berlin.", user_id="u2")
        zh = memory.context("我最喜欢什么颜色？", user_id="u1")
        assert zh.text.startswith("自定义：[记忆胶囊") and zh.language == "zh"
        en = memory.context("where do I live?", user_id="u2")
        assert en.text.startswith("## Long-term memory context") and en.language == "en"


# -- CLI: what would be injected, exactly ------------------------------------------------------
def test_cli_capsule_and_context_print_exactly_what_is_injected(tmp_path):
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    for line in ["Please remember my favourite colour is blue.", "I prefer short answers.", "bye"]:
        assert runner.invoke(app, ["--db", db, "add", line, "--user", "u1", "--session", "A"]).exit_code == 0
    with Memory(db) as memory:
        capsule = memory.capsule("u1")
        context = memory.context("What is my favourite colour?", user_id="u1")
    shown = runner.invoke(app, ["--db", db, "capsule", "--user", "u1"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith(capsule.text + "\n")
    assert f"{capsule.token_count} tokens of 426 (cl100k_base)" in shown.output
    prompt = runner.invoke(app, ["--db", db, "context", "What is my favourite colour?", "--user", "u1", "--show-prompt"])
    assert prompt.exit_code == 0, prompt.output
    assert prompt.output.startswith(context.text + "\n") and "blue" in prompt.output
    assert f"{context.token_count} tokens of 1024" in prompt.output
    as_json = json.loads(runner.invoke(app, ["--db", db, "capsule", "--user", "u1", "--json"]).output)
    assert as_json["text"] == capsule.text
    table = runner.invoke(app, ["--db", db, "context", "colour", "--user", "u1"])
    assert table.exit_code == 0 and "tokens of 1024" in table.output
    details = runner.invoke(app, ["--db", db, "capsule", "--user", "u1", "--budget", "20", "--details"])
    assert details.exit_code == 0 and "left out" in details.output


def test_debug_log_says_when_memories_were_marked_compressed_and_injected(memory, caplog):
    caplog.set_level("DEBUG", logger="engram")
    session = memory.session("u1", "s1")
    session.add("I prefer tea over coffee.")
    session.end()
    memory.context("tea?", user_id="u1")
    messages = "\n".join(r.getMessage() for r in caplog.records)
    assert "marked 2 memories in session s1 of u1: ADD preference, ADD turn" in messages  # the fact, the episode
    assert "compressed session s1" in messages
    assert "injected context for u1" in messages


def test_demo_shows_the_verification_flow(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--db", str(tmp_path / "demo.db")])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "context injected" in out and "capsule:" in out
    assert "blue" in out.split("context injected")[1] and "蓝色" in out.split("context injected")[2]


def test_an_event_in_context_is_dated_when_it_happened_as_in_the_capsule(memory):
    said = utcnow() - timedelta(days=3)
    memory.add("Yesterday I went to the Louvre with my sister.", user_id="u1", timestamp=said)
    context = memory.context("Where did I go with my sister?", user_id="u1")
    line = next(ln for ln in context.relevant if ln.kind is Kind.EVENT and "Louvre" in ln.text)
    assert line.when == (said - timedelta(days=1)).strftime("%Y-%m-%d")  # (said three days ago: "yesterday" is four)
