"""The durable background queue: extraction off the reply path, and batched LLM extraction.

Jobs live in the ``jobs`` table of the same SQLite database (migration 4), so
a job is on disk before `Memory.add(..., background=True)` returns and a
crash never loses a queued turn:

    add(..., background=True) ──► job `add` (queued) ──► worker thread: the whole `add`
                                                          (rules, LLM, reconcile, store)
    llm_extraction = "batch":
    each add ──► rules at once; the turn waits (job `turn`, waiting)
                 N turns waiting, the session ends, or flush() ──► one job `batch`
                 ──► one LLM call for all of them

A worker claims the oldest due job of a user with nothing running (so one
user's turns are processed in order), runs it, and deletes the row (the
payload holds the user's words). A failing job is retried with backoff, then
marked ``failed``. Jobs left ``running`` by a worker that died (its process is
gone, or its lease ran out) are queued again, so a new `Memory` on the same
file finishes what a killed process had queued. `flush()` waits for all of it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from engram.at_exit import close_at_exit
from engram.errors import InvalidInput, NotFound
from engram.models import Event, Message, utcnow
from engram.store.base import Scope

if TYPE_CHECKING:  # pragma: no cover
    from engram.llm import LLMTasks
    from engram.services import Services
    from engram.store.sqlite import JobRecord

# runs a queued `Memory.add` from its payload
RunAdd = Callable[[dict[str, Any]], list[Event]]
# reconciles and stores one candidate: (scope, candidate, said, session_id, metadata, said_at, idempotency_key)
AddCandidate = Callable[..., "Event | None"]

log = logging.getLogger("engram.queue")

__all__ = ["JobQueue"]

_HOST = socket.gethostname()
_LIVE_TOKENS: set[str] = set()  # worker tokens of the open queues of this process
_LIVE_LOCK = threading.Lock()
_PENDING = ("queued", "running")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child its parent has not reaped yet is a zombie: dead for us
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().split(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return True


class JobQueue:
    """Background jobs of one `Memory`; workers start on demand.

    `run_add` carries out a queued add; `add_candidate` stores one candidate of a batched LLM
    extraction (both are the write path's, passed in so the queue knows nothing of it)."""

    def __init__(
        self, services: Services, llm_tasks: LLMTasks, *, run_add: RunAdd, add_candidate: AddCandidate
    ) -> None:
        self.services = services
        self.llm_tasks = llm_tasks
        self.run_add = run_add
        self.add_candidate = add_candidate
        self.store: Any = services.store
        self.supported = all(
            hasattr(self.store, name) for name in ("jobs_add", "jobs_claim", "jobs_finish", "jobs_gather")
        )
        self.token = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._start_lock = threading.Lock()
        self._last_reclaim = 0.0
        self.processed = 0
        self.failed = 0

    @property
    def settings(self) -> Any:
        return self.services.settings

    # -- lifecycle -------------------------------------------------------------------
    def resume(self) -> None:
        """At open: start workers when the database holds unfinished jobs (a crash, a kill)."""
        if not self.supported:
            return
        try:
            pending = self.store.jobs_count(_PENDING)
        except Exception:  # noqa: BLE001 - a store without the table (old schema) has no jobs
            return
        if pending:
            log.info("%d unfinished background job(s) found; resuming them", pending)
            self.start()

    def start(self) -> None:
        if not self.supported or self._stop.is_set():
            return
        with self._start_lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            if self._threads:
                return
            with _LIVE_LOCK:
                _LIVE_TOKENS.add(self.token)
            close_at_exit(self)
            for n in range(self.settings.background_workers):
                thread = threading.Thread(target=self._loop, name=f"engram-worker-{n}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the workers (queued jobs stay on disk for the next open); waits for a running job."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t for t in self._threads if t.is_alive()]
        if alive:
            log.warning("a background job is still running at close; it will be retried by a later open")
        else:
            with _LIVE_LOCK:
                _LIVE_TOKENS.discard(self.token)

    # -- submitting ------------------------------------------------------------------
    def submit_add(self, scope: Scope, session_id: str | None, payload: dict[str, Any]) -> int:
        """Queue a whole `Memory.add` (committed to disk before returning) and wake a worker."""
        job_id = self.store.jobs_add(
            "add", scope, session_id, json.dumps(payload, ensure_ascii=False), state="queued", at=utcnow()
        )
        self.start()
        with self._cond:
            self._cond.notify()
        return job_id

    def buffer_turn(self, scope: Scope, session_id: str | None, payload: dict[str, Any]) -> None:
        """A turn waits for batched LLM extraction."""
        self.store.jobs_add(
            "turn", scope, session_id, json.dumps(payload, ensure_ascii=False), state="waiting", at=utcnow()
        )

    def gather(self, scope: Scope, session_id: str | None, min_count: int) -> int | None:
        """Make one `batch` job of the group's waiting turns when at least `min_count` wait."""

        def combine(jobs: Sequence[JobRecord]) -> str:
            return json.dumps({"turns": [json.loads(j.payload) for j in jobs]}, ensure_ascii=False)

        return self.store.jobs_gather(scope, session_id, min_count=min_count, at=utcnow(), combine=combine)

    def run_now(self, job_id: int) -> list[Event]:
        """Run a queued job in this thread (a foreground batch); [] if a worker took it first."""
        job = self.store.jobs_claim(self.token, utcnow(), job_id=job_id)
        return [] if job is None else self._process(job)

    def flush_group(self, scope: Scope, session_id: str | None, now: bool = True) -> list[Event]:
        """Extract the group's waiting turns (the session ends): in this thread, or with `now`
        false in the background worker's (nothing on the way to a reply waits for an LLM)."""
        if not self.supported:
            return []
        job_id = self.gather(scope, session_id, 1)
        if job_id is None:
            return []
        if not now:
            self.start()
            self._notify()
            return []
        return self.run_now(job_id)

    # -- waiting ---------------------------------------------------------------------
    def pending(self) -> dict[str, int]:
        """Jobs by state: waiting (turns for a batch), queued, running, failed."""
        if not self.supported:
            return {}
        return {state: self.store.jobs_count([state]) for state in ("waiting", "queued", "running", "failed")}

    def flush(self, timeout: float | None = None) -> bool:
        """Batch every waiting turn, then wait until no job is queued or running.

        True when everything finished, False when `timeout` (seconds) ran out first.
        """
        if not self.supported:
            return True
        for user_id, agent_id, session_id in self.store.jobs_waiting_groups():
            self.gather(Scope(user_id, agent_id), session_id, 1)
        deadline = None if timeout is None else time.monotonic() + timeout
        started = False
        while True:
            self._reclaim(force=not started)
            if self.store.jobs_count(_PENDING) == 0:
                return True
            if not started:
                self.start()
                started = True
                with self._cond:
                    self._cond.notify_all()
            if deadline is not None and time.monotonic() >= deadline:
                return False
            wait = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            with self._cond:
                self._cond.wait(wait)

    # -- the workers -----------------------------------------------------------------
    def _stale(self, job: JobRecord, now: datetime) -> bool:
        host, _, rest = (job.claimed_by or "").partition(":")
        pid_text, _, _token = rest.partition(":")
        if host == _HOST and pid_text.isdigit():
            pid = int(pid_text)
            if pid != os.getpid() and not _pid_alive(pid):
                return True
            if pid == os.getpid():
                with _LIVE_LOCK:
                    if job.claimed_by not in _LIVE_TOKENS:
                        return True  # a queue of this process that was closed mid-job
                return False
        lease = timedelta(seconds=self.settings.background_lease_s)
        return job.claimed_at is None or job.claimed_at < now - lease

    def _reclaim(self, force: bool = False) -> None:
        """Queue again the running jobs whose worker is gone (checked at most every poll)."""
        if not force and time.monotonic() - self._last_reclaim < self.settings.background_poll_s:
            return
        self._last_reclaim = time.monotonic()
        now = utcnow()
        stale = [j for j in self.store.jobs_list(["running"]) if self._stale(j, now)]
        if stale:
            count = self.store.jobs_requeue(stale)
            if count:
                log.info("re-queued %d background job(s) whose worker died", count)

    def _loop(self) -> None:
        poll = self.settings.background_poll_s
        self._reclaim(force=True)
        while not self._stop.is_set():
            try:
                self._reclaim()
                job = self.store.jobs_claim(self.token, utcnow())
            except Exception as err:  # noqa: BLE001 - a closed or busy database: try again later
                if self._stop.is_set():
                    return
                log.warning("background worker: cannot read the queue (%s)", err)
                job = None
            if job is None:
                with self._cond:
                    if not self._stop.is_set():
                        self._cond.wait(poll)
                continue
            self._process(job)

    def _process(self, job: JobRecord) -> list[Event]:
        try:
            events = self._handle(job)
        except (InvalidInput, NotFound, ValueError, KeyError) as err:
            self._give_up(job, err)
            return []
        except Exception as err:  # noqa: BLE001 - retried, then marked failed; never lost silently
            if job.attempts >= self.settings.background_max_attempts:
                self._give_up(job, err)
            else:
                delay = min(30.0, 0.5 * 2 ** (job.attempts - 1))
                log.warning("background job %d (%s) failed (%s); retrying in %.1fs", job.id, job.kind, err, delay)
                try:
                    self.store.jobs_retry(job.id, repr(err)[:500], utcnow() + timedelta(seconds=delay))
                except Exception:  # noqa: BLE001 - the database went away (closing)
                    pass
            self._notify()
            return []
        self.store.jobs_finish(job.id)
        self.processed += 1
        self._notify()
        return events

    def _give_up(self, job: JobRecord, err: BaseException) -> None:
        self.failed += 1
        log.error("background job %d (%s) failed for good: %s", job.id, job.kind, err)
        try:
            self.store.jobs_fail(job.id, repr(err)[:500])
        except Exception:  # noqa: BLE001
            pass
        self._notify()

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _handle(self, job: JobRecord) -> list[Event]:
        payload = json.loads(job.payload)
        if job.kind == "add":
            return self.run_add(payload)
        if job.kind == "batch":
            return self._run_batch(Scope(job.user_id, job.agent_id), job.session_id, payload["turns"])
        raise ValueError(f"unknown job kind {job.kind!r}")

    def _run_batch(self, scope: Scope, session_id: str | None, turns: list[dict[str, Any]]) -> list[Event]:
        """One LLM extraction over the batch's turns; its new memories go through reconciliation."""
        from engram.extract import extract_candidates

        tasks = self.llm_tasks
        if not tasks.enabled or not turns:
            return []
        messages = [[Message.model_validate(m) for m in t["messages"]] for t in turns]
        said_at = [datetime.fromisoformat(t["said_at"]) for t in turns]
        rules = [
            c for turn, at in zip(messages, said_at, strict=True) for m in turn
            for c in extract_candidates(m.content, role=m.role, now=at)
        ]
        tasks.stats.add("batches")
        tasks.stats.add("batched_turns", len(turns))
        found = tasks.extract(scope, messages, said_at, rules)
        events: list[Event] = []
        for candidate, index in found:
            said = " ".join(m.content for m in messages[index] if m.role == "user")
            event = self.add_candidate(
                scope, candidate, said, session_id, turns[index].get("metadata") or {}, said_at[index], None
            )
            if event is not None:
                events.append(event)
        return events
