"""Poison values are refused at the boundary with engram's own error, and stored values never
break a later call (issue 13, item 9); size limits for messages, queries and metadata (item 2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from engram import InvalidInput, Memory
from engram.errors import EngramError

PLUS_14 = timezone(timedelta(hours=14))


@pytest.mark.parametrize("metadata", [{"score": float("nan")}, {"score": float("inf")}, {"a": [1, float("-inf")]},
                                      {1: "x"}, {"k": "bad \ud800"}])
def test_non_finite_or_unreadable_metadata_is_refused(memory: Memory, metadata) -> None:
    with pytest.raises(InvalidInput, match="metadata"):
        memory.add("I love coffee.", user_id="u1", metadata=metadata)
    with pytest.raises(InvalidInput, match="metadata"):
        memory.add_many([{"messages": "I love tea.", "user_id": "u1", "metadata": metadata}])
    assert memory.get_all(user_id="u1") == []
    memory.maintain()  # nothing stored that breaks it


@pytest.mark.parametrize("moment", [datetime(1, 1, 1, tzinfo=PLUS_14), datetime.max, datetime.min,
                                    datetime(9999, 12, 31, tzinfo=UTC)])
def test_extreme_timestamps_are_refused(memory: Memory, moment) -> None:
    with pytest.raises(InvalidInput, match="out of range"):
        memory.add("I love coffee.", user_id="u1", timestamp=moment)
    with pytest.raises(InvalidInput, match="out of range"):
        memory.search("coffee", user_id="u1", filters={"since": moment})
    with pytest.raises(InvalidInput, match="out of range"):
        memory.maintain(now=moment)
    memory.add("I love tea.", user_id="u1", timestamp=datetime(1999, 1, 1, tzinfo=UTC))
    memory.maintain()


@pytest.mark.parametrize("call", [
    lambda m: m.add("I love \ud800 coffee", user_id="u1"),
    lambda m: m.add("I love \x00 coffee", user_id="u1"),
    lambda m: m.search("coffee \udfff", user_id="u1"),
    lambda m: m.forget("coffee \ud800", user_id="u1"),
    lambda m: m.add("I love coffee.", user_id="u1", session_id="s\ud800"),
    lambda m: m.get_all(user_id="u1", offset="x"),
    lambda m: m.get_all(user_id="u1", limit=10**30),
    lambda m: m.get_all(user_id="u1", offset=-1),
    lambda m: m.search("coffee", user_id="u1", limit=10**30),
    lambda m: m.search("coffee", user_id="u1", filters={"metadata": {'a"b': 1}}),
    lambda m: m.search("coffee", user_id="u1", filters={"metadata": {"a": [1]}}),
    lambda m: m.get_all(user_id="u1", filters={"metadata": {"a": float("nan")}}),
    lambda m: m.add("I love coffee.", user_id="u1", idempotency_key=[1]),
    lambda m: m.reminders(user_id="u1", horizon=5),
    lambda m: m.reminders(user_id="u1", tz="Mars/Base"),
    lambda m: m.add_many(["abc"]),
    lambda m: m.add_many([{}]),
    lambda m: m.add_many([{"messages": "hi", "user_id": "u1", "colour": "red"}]),
    lambda m: m.add_many(None),
    lambda m: m.capsule("u1", language=5),
    lambda m: m.capsule("u1", budget=-3),
    lambda m: m.context("what do I like?", user_id="u1", budget=10**30),
    lambda m: m.import_("x" * 300, user_id="u1"),
    lambda m: m.import_("file\x00name", user_id="u1"),
    lambda m: m.end_session("u1", "bad \ud800 text"),
    lambda m: m.end_session("u1", None),
    lambda m: m.session("u1", "s\x00"),
], ids=lambda _: "call")
def test_bad_arguments_raise_invalid_input(memory: Memory, call) -> None:
    memory.add("I love coffee.", user_id="u1")
    with pytest.raises(InvalidInput):
        call(memory)


@pytest.mark.parametrize("user_id", [" alice", "alice ", "al\nice", "al\x00ice", "\u3000alice", "a\ud800", "x" * 300])
def test_user_ids_with_padding_control_characters_or_nul_are_refused(memory: Memory, user_id: str) -> None:
    with pytest.raises(InvalidInput, match="user_id"):
        memory.add("I live in Berlin.", user_id=user_id)
    with pytest.raises(InvalidInput, match="user_id"):
        memory.search("Berlin", user_id=user_id)
    assert memory.store.user_ids() == []


def test_limits_are_configurable_and_refuse_what_is_over_them(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder, max_message_chars=100, max_query_chars=20,
                max_metadata_bytes=64) as memory:
        with pytest.raises(InvalidInput, match="101 characters; the limit is 100"):
            memory.add("x" * 101, user_id="u1")
        with pytest.raises(InvalidInput, match="limit is 100"):
            memory.add_many([{"messages": "y" * 101, "user_id": "u1"}])
        with pytest.raises(InvalidInput, match="query is 21 characters"):
            memory.search("z" * 21, user_id="u1")
        with pytest.raises(InvalidInput, match="limit is 20"):
            memory.context("z" * 21, user_id="u1")
        with pytest.raises(InvalidInput, match="metadata is .* bytes as JSON; the limit is 64"):
            memory.add("I love tea.", user_id="u1", metadata={"note": "n" * 64})
        assert memory.get_all(user_id="u1") == []
        memory.add("I love tea." + " " * 80, user_id="u1", metadata={"note": "short"})
        assert memory.search("tea", user_id="u1")


def test_default_limits_allow_a_long_message_and_refuse_a_megabyte(memory: Memory) -> None:
    long_turn = "We walked along the river and talked about the trip. " * 500  # ~27k characters
    memory.add(long_turn, user_id="u1", infer=False)
    with pytest.raises(InvalidInput, match="the limit is 32,000"):
        memory.add("a" * 1_000_000, user_id="u1")
    with pytest.raises(EngramError):
        memory.search("where " * 200_000, user_id="u1")
