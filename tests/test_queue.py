"""The durable background queue: add(..., background=True), flush(), crash and kill recovery."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from llm_scripts import requests_of, router

from engram import Memory
from engram.models import Kind, Source
from engram.store.base import Scope
from helpers import episodes, facts

GREEN_TEA = {"memories": [{"content": "User drinks green tea.", "kind": "fact"}]}


@pytest.fixture
def open_memory(db_path, embedder, fake_llm):
    made: list[Memory] = []

    def make(llm: bool = True, **overrides):
        settings = {"llm_base_url": fake_llm.base_url, "llm_model": "m", "llm_timeout": 5.0,
                    "llm_max_retries": 0, "llm_reconcile": False} if llm else {}
        memory = Memory(db_path, embedder=embedder, **{**settings, "background_poll_s": 0.05, **overrides})
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()


def contents(memory, user="u"):
    """What was remembered about `user`: not the summaries, nor the episodes (what was said)."""
    return sorted(i.content for i in facts(memory.get_all(user_id=user)) if i.kind is not Kind.SUMMARY)


def jobs(db_path):
    raw = sqlite3.connect(db_path)
    try:
        return raw.execute("SELECT kind, state, payload FROM jobs ORDER BY id").fetchall()
    finally:
        raw.close()


def test_background_add_returns_at_once_and_flush_waits(open_memory, fake_llm):
    fake_llm.responder = router(extract=GREEN_TEA)
    fake_llm.delay(2.0)  # a slow LLM: the reply path must not wait for it
    memory = open_memory()
    assert memory.add("I love green tea", user_id="u", background=True) == []
    assert memory.flush(timeout=0.2) is False  # returned with the model's answer still to come
    assert memory.flush(timeout=10) is True
    assert contents(memory) == ["User drinks green tea.", "User loves green tea."]
    assert jobs(memory.settings.path) == []  # done jobs (and the words they held) are deleted


def test_flush_timeout(open_memory, fake_llm):
    fake_llm.responder = router()
    fake_llm.delay(0.6)
    memory = open_memory()
    memory.add("I love green tea", user_id="u", background=True)
    assert memory.flush(timeout=0.1) is False
    assert memory.flush(timeout=5) is True
    assert memory.queue.pending() == {"waiting": 0, "queued": 0, "running": 0, "failed": 0}


def test_background_without_llm_keeps_each_users_order(open_memory):
    memory = open_memory(llm=False, background_workers=2)
    for city in ("Berlin", "Paris", "Rome", "Lisbon"):
        memory.add(f"I now live in {city}", user_id="u", background=True)
        memory.add(f"I now live in {city}", user_id="v", background=True)
    assert memory.flush(timeout=10)
    for user in ("u", "v"):
        assert contents(memory, user) == ["User lives in Lisbon."]


def test_invalid_input_is_refused_before_queueing(open_memory):
    from engram.errors import InvalidInput

    memory = open_memory(llm=False)
    with pytest.raises(InvalidInput):
        memory.add("", user_id="u", background=True)
    with pytest.raises(InvalidInput):
        memory.add("hi", user_id="u", session_id="  ", background=True)
    assert memory.queue.pending()["queued"] == 0


def test_a_failing_job_is_retried_then_marked_failed(open_memory, monkeypatch, caplog):
    memory = open_memory(llm=False, background_max_attempts=2)
    calls = []

    def boom(payload):
        calls.append(payload)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(memory, "_run_add_job", boom)
    with caplog.at_level("WARNING", logger="engram.queue"):
        memory.add("I love green tea", user_id="u", background=True)
        assert memory.flush(timeout=5)
    assert len(calls) == 2 and memory.queue.pending()["failed"] == 1
    assert "failed for good" in caplog.text
    assert jobs(memory.settings.path)[0][1] == "failed"


def test_a_transient_failure_is_retried(open_memory, monkeypatch):
    memory = open_memory(llm=False)
    real = memory._run_add_job
    failures = iter([True])

    def flaky(payload):
        if next(failures, False):
            raise sqlite3.OperationalError("database is locked")
        return real(payload)

    monkeypatch.setattr(memory, "_run_add_job", flaky)
    memory.add("I love green tea", user_id="u", background=True)
    assert memory.flush(timeout=5)
    assert contents(memory) == ["User loves green tea."]


def test_delete_all_drops_the_users_queued_jobs(open_memory):
    memory = open_memory(llm=False)
    memory.queue.close()  # no worker: the jobs stay queued
    memory.add("I love green tea", user_id="u", background=True)
    memory.add("I love coffee", user_id="v", background=True)
    memory.delete_all(user_id="u")
    rows = jobs(memory.settings.path)
    assert len(rows) == 1 and "coffee" in rows[0][2]


def test_a_job_left_running_by_a_dead_process_is_resumed_at_open(open_memory, db_path):
    memory = open_memory(llm=False)
    memory.queue.close()
    job_id = memory.queue.submit_add(Scope("u"), None, {
        "messages": [{"role": "user", "content": "I love green tea"}], "user_id": "u", "agent_id": None,
        "session_id": None, "metadata": {}, "infer": True, "timestamp": "2024-05-01T10:00:00+00:00",
        "idempotency_key": None,
    })
    dead = subprocess.Popen(["true"])
    dead.wait()
    raw = sqlite3.connect(db_path)
    raw.execute("UPDATE jobs SET state = 'running', claimed_by = ?, claimed_at = 0 WHERE id = ?",
                (f"{socket.gethostname()}:{dead.pid}:gone", job_id))
    raw.commit()
    raw.close()
    memory.close()
    again = open_memory(llm=False)
    assert again.flush(timeout=5)
    [item] = facts(again.get_all(user_id="u"))
    assert item.content == "User loves green tea." and item.created_at.year == 2024  # said then
    [said] = episodes(again.get_all(user_id="u"))
    assert said.content == "I love green tea" and said.created_at.year == 2024


def test_batched_turns_wait_on_disk_across_a_restart(open_memory, fake_llm):
    fake_llm.responder = router(extract=GREEN_TEA)
    memory = open_memory(llm_extraction="batch", llm_batch_turns=5)
    memory.add("Green tea at four, always", user_id="u", session_id="s")
    memory.close()
    assert [r[:2] for r in jobs(memory.settings.path)] == [("turn", "waiting")]
    again = open_memory(llm_extraction="batch", llm_batch_turns=5)
    assert again.queue.pending()["waiting"] == 1
    assert again.flush(timeout=5)
    assert contents(again) == ["User drinks green tea."]
    assert len(requests_of(fake_llm, "extract")) == 1


KILLED = textwrap.dedent("""
    import sys, time
    from engram import Memory
    m = Memory(sys.argv[1], llm_base_url=sys.argv[2], llm_model="m", llm_timeout=60, llm_max_retries=0)
    for text in ("I live in Berlin", "I love green tea", "我喜欢喝咖啡"):
        m.add(text, user_id="u", background=True)
    print("queued", flush=True)
    time.sleep(120)
""")


def test_queued_turns_survive_a_process_kill(db_path, fake_llm, open_memory):
    fake_llm.delay(60, json.dumps({"memories": []}))  # the killed worker hangs in its first LLM call
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(db_path), fake_llm.base_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout.readline().strip() == "queued"
        deadline = time.monotonic() + 20
        while not fake_llm.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert fake_llm.requests, "the child's worker never called the LLM"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert sorted(r[1] for r in jobs(db_path)) == ["queued", "queued", "running"]

    fake_llm.responder = router(extract=lambda request: GREEN_TEA if "green tea" in json.dumps(request) else {"memories": []})
    memory = open_memory()  # a new process on the same file: resumes the dead worker's jobs
    assert memory.flush(timeout=10)
    assert contents(memory) == sorted([
        "User lives in Berlin.", "User loves green tea.", "User drinks green tea.", "用户喜欢喝咖啡",
    ])
    assert jobs(db_path) == []
    llm_made = [i for i in memory.get_all(user_id="u") if i.source is Source.LLM]
    assert len(llm_made) == 1
