"""The durable background queue's table (migration 4), mixed into `SQLiteStore`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.store.base import (
    Scope,
)
from engram.store.sqlite.rows import JSON_LIST, from_epoch


@dataclass(slots=True)
class JobRecord:
    """One row of the background queue (see engram.queue)."""

    id: int
    kind: str  # add | turn | batch
    user_id: str
    agent_id: str | None
    session_id: str | None
    payload: str  # JSON
    state: str  # waiting | queued | running | failed
    attempts: int
    error: str | None
    created_at: datetime | None
    claimed_by: str | None
    claimed_at: datetime | None


class JobsMixin:
    """Needs `_db`, `_lock` and `_tx` from the store."""

    _JOB_COLUMNS = (
        "id, kind, user_id, agent_id, session_id, payload, state, attempts, error, created_at,"
        " claimed_by, claimed_at"
    )

    @staticmethod
    def _job_from_row(row: Sequence[Any]) -> JobRecord:
        return JobRecord(
            id=row[0], kind=row[1], user_id=row[2], agent_id=row[3], session_id=row[4],
            payload=row[5], state=row[6], attempts=row[7], error=row[8], created_at=from_epoch(row[9]),
            claimed_by=row[10], claimed_at=from_epoch(row[11]),
        )

    def jobs_add(
        self, kind: str, scope: Scope, session_id: str | None, payload: str, *, state: str, at: datetime
    ) -> int:
        """Store a job (committed before this returns: a crash cannot lose it)."""
        with self._tx() as db:
            cursor = db.execute(
                "INSERT INTO jobs (kind, user_id, agent_id, session_id, payload, state, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (kind, scope.user_id, scope.agent_id, session_id, payload, state, at.timestamp()),
            )
            return int(cursor.lastrowid)

    def jobs_claim(self, worker: str, at: datetime, job_id: int | None = None) -> JobRecord | None:
        """The oldest queued job that is due and whose user has no job running (or job `job_id`
        if it is still queued), now `running` under `worker`."""
        moment = at.timestamp()
        with self._tx() as db:
            if job_id is not None:
                row = db.execute(
                    f"SELECT {self._JOB_COLUMNS} FROM jobs WHERE id = ? AND state = 'queued'", (job_id,)
                ).fetchone()
            else:
                row = db.execute(
                    f"SELECT {self._JOB_COLUMNS} FROM jobs WHERE state = 'queued' AND run_after <= ?"
                    " AND user_id NOT IN (SELECT user_id FROM jobs WHERE state = 'running')"
                    " ORDER BY id LIMIT 1",
                    (moment,),
                ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE jobs SET state = 'running', claimed_by = ?, claimed_at = ?, attempts = attempts + 1"
                " WHERE id = ?",
                (worker, moment, row[0]),
            )
        job = self._job_from_row(row)
        job.state, job.claimed_by, job.claimed_at, job.attempts = "running", worker, at, job.attempts + 1
        return job

    def jobs_finish(self, job_id: int) -> None:
        """A job is done: its row (and the words in its payload) is deleted."""
        with self._tx() as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def jobs_retry(self, job_id: int, error: str, run_after: datetime) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE jobs SET state = 'queued', error = ?, run_after = ?, claimed_by = NULL,"
                " claimed_at = NULL WHERE id = ?",
                (error, run_after.timestamp(), job_id),
            )

    def jobs_fail(self, job_id: int, error: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE jobs SET state = 'failed', error = ? WHERE id = ?", (error, job_id))

    def jobs_requeue(self, jobs: Sequence[JobRecord]) -> int:
        """Put `running` jobs back in the queue (their worker is gone); returns how many."""
        done = 0
        with self._tx() as db:
            for job in jobs:
                cursor = db.execute(
                    "UPDATE jobs SET state = 'queued', claimed_by = NULL, claimed_at = NULL, run_after = 0"
                    " WHERE id = ? AND state = 'running' AND claimed_by IS ?",
                    (job.id, job.claimed_by),
                )
                done += cursor.rowcount
        return done

    def jobs_list(self, states: Sequence[str], *, user_id: str | None = None) -> list[JobRecord]:
        sql = f"SELECT {self._JOB_COLUMNS} FROM jobs WHERE state IN {JSON_LIST}"
        params: list[Any] = [json.dumps(list(states))]
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY id", params).fetchall()
        return [self._job_from_row(r) for r in rows]

    def jobs_count(self, states: Sequence[str]) -> int:
        with self._lock:
            return self._db.execute(
                f"SELECT count(*) FROM jobs WHERE state IN {JSON_LIST}", (json.dumps(list(states)),)
            ).fetchone()[0]

    def jobs_gather(
        self, scope: Scope, session_id: str | None, *, min_count: int, at: datetime,
        combine: Callable[[list[JobRecord]], str],
    ) -> int | None:
        """Atomically replace the group's `waiting` turn jobs by one queued `batch` job.

        Only when at least `min_count` are waiting; returns the batch job's id.
        """
        with self._tx() as db:
            rows = db.execute(
                f"SELECT {self._JOB_COLUMNS} FROM jobs WHERE state = 'waiting' AND kind = 'turn'"
                " AND user_id = ? AND agent_id IS ? AND session_id IS ? ORDER BY id",
                (scope.user_id, scope.agent_id, session_id),
            ).fetchall()
            if not rows or len(rows) < min_count:
                return None
            waiting = [self._job_from_row(r) for r in rows]
            cursor = db.execute(
                "INSERT INTO jobs (kind, user_id, agent_id, session_id, payload, state, created_at)"
                " VALUES ('batch', ?, ?, ?, ?, 'queued', ?)",
                (scope.user_id, scope.agent_id, session_id, combine(waiting), at.timestamp()),
            )
            db.execute(
                f"DELETE FROM jobs WHERE id IN {JSON_LIST}", (json.dumps([j.id for j in waiting]),)
            )
            return int(cursor.lastrowid)

    def jobs_waiting_groups(self) -> list[tuple[str, str | None, str | None]]:
        """(user_id, agent_id, session_id) of every group with turns waiting for a batch."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT user_id, agent_id, session_id FROM jobs WHERE state = 'waiting'"
            ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def close(self) -> None:
        with self._writing():
            if self._pending_access and not self.read_only:
                with self._tx():
                    pass  # writes the pending uses
            if self._wal_holds_deleted:
                self._checkpoint()
            if self._checkpoints is not None:
                self._checkpoints.close()  # (before the last connection's close checkpoints the WAL)
            self._db.close()
            self._close_lock()
