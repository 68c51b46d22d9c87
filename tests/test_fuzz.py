"""Fuzzing the public API (issue 13, item 9): hostile arguments either work or raise engram's
own error, and nothing stored breaks a later call. Bounded: a few hundred calls."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import Memory
from fuzz_calls import attempt, calls, still_works

CALLS = calls()


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory, embedder):
    with Memory(tmp_path_factory.mktemp("fuzz") / "fuzz.db", embedder=embedder) as memory:
        memory.add("I love coffee.", user_id="u1")
        memory.add("Remind me to call mom tomorrow.", user_id="u2")
        yield memory


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_hostile_calls_raise_only_engram_errors(fuzzed: Memory, data) -> None:
    for _ in range(3):
        failure = attempt(fuzzed, data.draw(CALLS))
        assert failure is None, failure


def test_nothing_fuzzed_in_breaks_later_calls(fuzzed: Memory) -> None:
    failures = still_works(fuzzed)
    assert not failures, failures[0]
