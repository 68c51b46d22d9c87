"""Sessions: working memory, goodbye and idle endings, idempotent and concurrent ends, restarts."""

from __future__ import annotations

import sqlite3
import threading
from datetime import timedelta

import pytest

from engram import Kind, Memory, NotFound
from engram.errors import InvalidInput
from engram.models import utcnow
from engram.session import is_goodbye
from engram.store.sqlite import schema as sqlite_schema
from engram.store.base import Scope
from engram.tokens import get_counter


def summaries(memory, user):
    return memory.get_all(user_id=user, filters={"kind": "summary", "status": []})


# -- goodbye detection ---------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["bye", "Bye!", "Thanks, bye!", "OK thanks, goodbye.", "See you tomorrow", "see ya",
     "Talk to you later!", "Good night", "that's all for now, bye bye",
     "再见", "拜拜", "下次聊", "好的，再见", "下次聊吧", "谢谢，拜拜！", "那就先这样吧，明天见"],
)
def test_goodbyes_are_recognised_en_zh(text):
    assert is_goodbye(text)


@pytest.mark.parametrize(
    "text",
    ["I said goodbye to my old car", "Bye the way, I moved to Paris last year and I love it there a lot",
     "Do you want to see your report?", "I live in Berlin.", "我跟他说了再见", "再见这个词怎么翻译成英文呢",
     "我喜欢看《再见爱人》", "", "See you at the conference in Berlin next week with all the people from work"],
)
def test_other_messages_are_not_goodbyes(text):
    assert not is_goodbye(text)


# -- opening and working memory -------------------------------------------------------
def test_session_resumes_the_open_one_or_starts_a_new_one(memory):
    first = memory.session("u1")
    assert memory.session("u1").session_id == first.session_id
    assert memory.session("u2").session_id != first.session_id
    first.end()
    assert memory.session("u1").session_id != first.session_id
    assert memory.session("u1", "named").session_id == "named"
    with pytest.raises(InvalidInput):
        memory.session("u1", "")


def test_working_memory_is_token_bounded_and_keeps_the_newest_turns(db_path, embedder):
    with Memory(db_path, embedder=embedder, working_memory_tokens=40) as memory:
        session = memory.session("u1", "s1")
        for i in range(12):
            session.add(
                [{"role": "user", "content": f"message number {i} about the weather"},
                 {"role": "assistant", "content": f"reply {i}"}],
                infer=False,
            )
        turns = session.turns()
        counter = get_counter(memory.settings.token_encoding)
        assert sum(counter.count(t.content) for t in turns) <= 40
        assert turns[-1].content == "reply 11" and turns[-2].content.startswith("message number 11")
        assert len(turns) < 24
        # one turn longer than the whole buffer is cut to fit
        session.add("word " * 200, infer=False)
        assert counter.count(session.turns()[-1].content) <= 40


def test_working_memory_survives_a_restart_and_redacts_secrets(memory, reopen):
    session = memory.session("u1", "s1")
    session.add("I live in Berlin. My card is 4111 1111 1111 1111")
    memory.close()
    again = reopen()
    turns = again.session("u1", "s1").turns()
    assert len(turns) == 1 and "Berlin" in turns[0].content
    assert "4111 1111 1111 1111" not in turns[0].content


# -- endings -------------------------------------------------------------------------
def test_explicit_end_compresses_and_is_idempotent(memory):
    session = memory.session("u1", "s1")
    session.add("I prefer reports in Markdown with charts.")
    session.add("I live in Berlin.")
    delta = memory.end_session("u1", "s1")
    assert not delta.already_ended and delta.end_reason == "explicit"
    assert delta.summary is not None and delta.summary.kind is Kind.SUMMARY
    assert "Markdown" in delta.text and "Berlin" in delta.text
    again = memory.end_session("u1", "s1")
    assert again.already_ended and again.summary.id == delta.summary.id and again.text == delta.text
    assert [ln.text for ln in again.lines] == [ln.text for ln in delta.lines]
    assert session.ended and len(summaries(memory, "u1")) == 1
    assert session.turns() == []  # working memory is dropped once the session has ended


@pytest.mark.parametrize(
    "lines, needle",
    [(["I prefer tea over coffee.", "Thanks, bye!"], "tea"),
     (["我住在北京", "好的，再见"], "北京"),
     (["我讨厌开长会", "下次聊"], "开长会")],
)
def test_a_goodbye_ends_the_session(memory, lines, needle):
    session = memory.session("u1", "s1")
    for line in lines:
        session.add(line)
    assert session.ended
    record = session.record
    assert record.end_reason == "goodbye" and record.summary_id
    assert needle in memory.get(record.summary_id).content
    assert memory.end_session("u1", "s1").already_ended  # safe after a goodbye


def test_goodbye_through_plain_add_with_a_session_id(memory):
    memory.add("I live in Berlin.", user_id="u1", session_id="s9")
    memory.add([{"role": "user", "content": "bye"}], user_id="u1", session_id="s9")
    record = memory.store.session_get(Scope("u1"), "s9")
    assert record.ended_at is not None and record.end_reason == "goodbye"


def test_idle_timeout_ends_the_session_with_an_injectable_clock(memory):
    now = [utcnow()]
    memory.sessions.clock = lambda: now[0]
    session = memory.session("u1", "s1")
    session.add("I live in Berlin.")
    now[0] += timedelta(seconds=memory.settings.idle_timeout_s - 1)
    assert not session.ended
    now[0] += timedelta(seconds=2)
    # any call for the user notices; the session ended because it idled
    memory.capsule("u1")
    record = session.record
    assert record.ended_at is not None and record.end_reason == "idle"
    assert "Berlin" in memory.get(record.summary_id).content


def test_an_idle_session_ends_before_new_words_reopen_it(db_path, embedder):
    with Memory(db_path, embedder=embedder, idle_timeout_s=60) as memory:
        now = [utcnow()]
        memory.sessions.clock = lambda: now[0]
        memory.add("I live in Berlin.", user_id="u1", session_id="s1")
        now[0] += timedelta(minutes=5)
        memory.add("I prefer green tea.", user_id="u1", session_id="s1")
        first = summaries(memory, "u1")
        assert len(first) == 1 and "Berlin" in first[0].content and "tea" not in first[0].content
        record = memory.session("u1", "s1").record
        assert record.ended_at is None  # reopened by the new words
        delta = memory.end_session("u1", "s1")
        assert "tea" in delta.text and "Berlin" not in delta.text  # only what came after the last delta


def test_concurrent_ends_make_one_delta(memory):
    session = memory.session("u1", "s1")
    session.add("I prefer tea over coffee.")
    results, errors = [], []
    barrier = threading.Barrier(8)

    def end():
        try:
            barrier.wait()
            results.append(memory.end_session("u1", "s1"))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=end) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sum(not r.already_ended for r in results) == 1
    assert len({r.summary.id for r in results}) == 1
    assert len(summaries(memory, "u1")) == 1


def test_ends_from_two_processes_make_one_delta(memory, reopen):
    memory.add("I prefer tea over coffee.", user_id="u1", session_id="s1")
    other = reopen()  # a second connection, as another process would have
    results = []
    threads = [
        threading.Thread(target=lambda m=m: results.append(m.end_session("u1", "s1")))
        for m in (memory, other, memory, other)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(not r.already_ended for r in results) == 1
    assert len(summaries(memory, "u1")) == 1


def test_ending_an_unknown_session_is_not_found(memory):
    with pytest.raises(NotFound):
        memory.end_session("u1", "nope")
    with pytest.raises(InvalidInput):
        memory.end_session("u1", "")


def test_open_sessions_survive_a_restart_and_end_afterwards(memory, reopen):
    session = memory.session("u1", "s1")
    session.add("I prefer tea over coffee.")
    memory.close()
    again = reopen()
    assert again.session("u1").session_id == "s1"  # still the open one
    delta = again.end_session("u1", "s1")
    assert "tea" in delta.text


def test_delete_all_removes_sessions_and_their_turns(memory, db_path):
    memory.session("u1", "s1").add("I live in Berlin.")
    memory.session("u2", "s2").add("I live in Paris.")
    memory.delete_all(user_id="u1")
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM session_turns WHERE user_id = 'u1'").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM sessions WHERE user_id = 'u1'").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM session_turns WHERE user_id = 'u2'").fetchone()[0] == 1


def test_a_version_1_database_is_migrated(db_path, embedder):
    with sqlite3.connect(db_path) as db:
        for statement in sqlite_schema.statements(sqlite_schema.MIGRATIONS[1]):
            db.execute(statement)
        db.execute("PRAGMA user_version = 1")
    with Memory(db_path, embedder=embedder) as memory:
        assert memory.store.schema_version == sqlite_schema.SCHEMA_VERSION
        memory.add("I live in Berlin.", user_id="u1", session_id="s1")
        assert "Berlin" in memory.end_session("u1", "s1").text
