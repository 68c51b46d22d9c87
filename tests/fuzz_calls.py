"""Hostile calls of engram's public API, for the fuzz tests (and the longer fuzz in
benchmarks/reliability_bench.py): every call either works or raises engram's own error."""

from __future__ import annotations

import math
import traceback
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from engram import Memory
from engram.errors import EngramError

USERS = ["u1", "u2"]
OUTCOMES: Counter[str] = Counter()  # what the calls did, for the bench's report
SURROGATE = "bad \ud800 text"

extreme_times = st.sampled_from([
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))), datetime.max, datetime.min,
    datetime(9999, 12, 31, tzinfo=UTC), datetime(1970, 1, 1), datetime(2025, 5, 1, tzinfo=UTC),
])
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 10**30, float("nan"), float("inf"), True]),
)
texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from([
        "", "   ", SURROGATE, "a\x00b", "I live in Berlin.", "我住在上海", "I love coffee.",
        "forget what I said about coffee", "remind me to call mom tomorrow", "/pause", "/resume",
        "每周五要交周报", "my password is hunter2", "x" * 300,
    ]),
)
hostile = st.one_of(
    st.none(), numbers, texts, st.binary(max_size=8), extreme_times,
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.just(timedelta(hours=5)), st.just(5),
)


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any] = hostile) -> st.SearchStrategy[Any]:
    """Plausible values three times in four: enough calls work to store (and later read) things."""
    return st.integers(0, 3).flatmap(lambda n: good if n else bad)


sentences = st.sampled_from([
    "I live in Berlin.", "I moved to Paris.", "I love coffee.", "I hate coffee.", "我住在上海", "我喜欢吃火锅",
    "Remind me to call mom tomorrow.", "每周五要交周报", "My favourite colour is blue.", "I decided to learn Rust.",
])
user_ids = mostly(st.sampled_from(USERS), st.one_of(st.sampled_from(["", " u1", "u1 ", "u\x00", "u\n1", SURROGATE]), hostile))
metadata = mostly(st.none(), st.one_of(
    st.none(),
    st.dictionaries(st.text(max_size=5), st.one_of(numbers, texts, st.none(), st.lists(numbers, max_size=2)), max_size=3),
    st.sampled_from([{"x": float("nan")}, {"y": float("inf")}, {"z": {"a": [1, {"b": None}]}}, {1: 2}, {"k": SURROGATE}]),
    hostile,
))
filters = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={
        "status": st.one_of(st.sampled_from([[], ["active"], "superseded", ["bogus"]]), hostile),
        "kind": st.one_of(st.sampled_from(["fact", ["task"], "nope"]), hostile),
        "metadata": st.one_of(st.dictionaries(st.sampled_from(['a"b', "k", "a.b", "$", "\\"]), hostile, max_size=2), hostile),
        "since": st.one_of(extreme_times, hostile), "until": extreme_times, "as_of": extreme_times,
        "session_id": hostile,
    }),
    hostile,
)
maybe = lambda s: st.one_of(st.nothing(), s)  # noqa: E731


class KnownId(int):
    """The n-th memory id stored when the call is made (strategies cannot depend on the database)."""


ids = st.one_of(st.integers(0, 19).map(KnownId), hostile)


def _resolve(memory: Memory, value: Any) -> Any:
    if not isinstance(value, KnownId):
        return value
    known = [m.id for u in USERS for m in memory.get_all(user_id=u, filters={"status": []}, limit=20)]
    return known[value % len(known)] if known else "no-such-id"


def calls() -> st.SearchStrategy[tuple[str, tuple, dict]]:
    """One call: (method, args, kwargs), mostly plausible, often hostile."""
    kw = lambda **parts: st.fixed_dictionaries({}, optional=parts)  # noqa: E731
    add_kwargs = kw(agent_id=mostly(st.none()), session_id=mostly(st.sampled_from(["s1", "s2"])), metadata=metadata,
                    infer=mostly(st.booleans()), timestamp=mostly(st.none(), st.one_of(extreme_times, hostile)),
                    idempotency_key=mostly(st.none(), st.one_of(st.sampled_from(["k1"]), hostile)))
    messages = mostly(sentences, st.one_of(texts, hostile, st.lists(st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "bogus"]), "content": texts}),
        hostile), max_size=3)))
    user = st.fixed_dictionaries({"user_id": user_ids})
    entry = st.fixed_dictionaries(
        {"messages": messages, "user_id": user_ids},
        optional={"metadata": metadata, "timestamp": extreme_times, "bogus": hostile, "infer": hostile},
    )
    batches = st.one_of(hostile, st.lists(st.one_of(hostile, entry), max_size=3))
    options = [
        st.tuples(st.just("add"), st.tuples(messages), st.tuples(user, add_kwargs).map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("add_many"), st.tuples(batches), st.just({})),
        st.tuples(st.just("search"), st.tuples(mostly(sentences, texts)), st.tuples(user, kw(
            limit=mostly(st.integers(1, 20)), filters=mostly(st.none(), filters), now=mostly(st.none()),
            agent_id=mostly(st.none()))).map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("get_all"), st.just(()), st.tuples(user, kw(limit=hostile, offset=hostile, filters=filters))
                  .map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("get"), st.tuples(ids), st.just({})),
        st.tuples(st.just("history"), st.tuples(ids), st.just({})),
        st.tuples(st.just("update"), st.tuples(ids), kw(content=st.one_of(texts, hostile), metadata=metadata)),
        st.tuples(st.just("delete"), st.tuples(ids), st.just({})),
        st.tuples(st.just("capsule"), st.tuples(user_ids), kw(budget=hostile, language=st.one_of(st.sampled_from(["en", "zh"]), hostile))),
        st.tuples(st.just("context"), st.tuples(texts), st.tuples(user, kw(budget=hostile, limit=hostile, turns=hostile,
                                                                         language=hostile, session_id=hostile))
                  .map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("reminders"), st.just(()), st.tuples(user, kw(now=hostile, horizon=hostile, tz=hostile))
                  .map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("complete"), st.tuples(ids), kw(now=hostile, tz=hostile)),
        st.tuples(st.just("forget"), st.tuples(texts), user),
        st.tuples(st.just("delete_by_kind"), st.tuples(st.one_of(st.sampled_from(["task", "fact"]), hostile)), user),
        st.tuples(st.just("resolve"), st.tuples(ids), kw(keep=st.one_of(st.sampled_from(["this", "newer", "both"]), hostile))),
        st.tuples(st.just("restore"), st.tuples(ids), st.just({})),
        st.tuples(st.just("maintain"), st.tuples(st.one_of(st.none(), user_ids)), kw(now=st.one_of(extreme_times, hostile))),
        st.tuples(st.just("set_timezone"), st.tuples(user_ids, st.one_of(st.sampled_from(["Asia/Shanghai", "Mars/Base"]), hostile)), st.just({})),
        st.tuples(st.just("pause"), st.tuples(user_ids), st.just({})),
        st.tuples(st.just("resume"), st.tuples(user_ids), st.just({})),
        st.tuples(st.just("clarifications"), st.just(()), st.tuples(user, kw(limit=hostile)).map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("export"), st.just(()), st.tuples(user, kw(format=hostile, history=hostile)).map(lambda p: {**p[0], **p[1]})),
        st.tuples(st.just("import_"), st.tuples(st.one_of(hostile, st.lists(st.dictionaries(
            st.sampled_from(["id", "content", "created_at", "category", "access_count"]), st.one_of(texts, numbers, extreme_times.map(str))),
            max_size=3))), kw(user_id=user_ids, on_conflict=st.one_of(st.sampled_from(["skip", "replace", "new_id"]), hostile))),
        st.tuples(st.just("session"), st.tuples(user_ids), kw(session_id=hostile, agent_id=hostile)),
        st.tuples(st.just("end_session"), st.tuples(user_ids, st.one_of(st.just("s1"), hostile)), kw(reason=hostile)),
    ]
    return st.one_of(options)


def attempt(memory: Memory, call: tuple[str, tuple, dict]) -> str | None:
    """Make the call; a description of the failure when it raised anything but an EngramError."""
    name, args, kwargs = call
    args = tuple(_resolve(memory, a) for a in args)
    try:
        getattr(memory, name)(*args, **kwargs)
    except EngramError:
        OUTCOMES["engram error"] += 1
        return None
    except Exception:  # noqa: BLE001 - what the fuzz is looking for
        OUTCOMES["other error"] += 1
        return f"{name}{args!r} {kwargs!r}:\n{traceback.format_exc()}"
    OUTCOMES[f"worked: {name}"] += 1
    return None


def still_works(memory: Memory) -> list[str]:
    """After whatever was stored: every reading call of every user, and maintenance, still work."""
    failures = []
    for user in USERS:
        for call in (("search", ("coffee",), {"user_id": user}), ("capsule", (user,), {}),
                     ("context", ("what do I like?",), {"user_id": user}), ("get_all", (), {"user_id": user}),
                     ("export", (), {"user_id": user, "history": True}), ("reminders", (), {"user_id": user}),
                     ("clarifications", (), {"user_id": user})):
            try:
                getattr(memory, call[0])(*call[1], **call[2])
            except Exception:  # noqa: BLE001 - even an EngramError is a failure here
                failures.append(f"{call[0]} for {user}:\n{traceback.format_exc()}")
    try:
        memory.maintain()
        memory.resume("u1"), memory.resume("u2")
    except Exception:  # noqa: BLE001
        failures.append(f"maintain:\n{traceback.format_exc()}")
    return failures


__all__ = ["attempt", "calls", "still_works", "math"]
