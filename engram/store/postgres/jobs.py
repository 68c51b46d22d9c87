"""The durable background queue's table, shared by every process: claims and gathers take
an advisory lock, so "one running job per user" holds across machines. Mixed into `PostgresStore`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from engram.store.base import Scope
from engram.store.sqlite.jobs import JobRecord
from engram.store.sqlite.rows import from_epoch

JOBS_LOCK = 0x656E6A6F6273  # pg_advisory_xact_lock key of claims and gathers
_COLUMNS = "id, kind, user_id, agent_id, session_id, payload, state, attempts, error, created_at, claimed_by, claimed_at"


def _job(row: Sequence[Any]) -> JobRecord:
    return JobRecord(
        id=row[0], kind=row[1], user_id=row[2], agent_id=row[3], session_id=row[4], payload=row[5], state=row[6],
        attempts=row[7], error=row[8], created_at=from_epoch(row[9]), claimed_by=row[10], claimed_at=from_epoch(row[11]),
    )


class JobsMixin:
    """Needs the pool and transactions of `PostgresStore`."""

    def jobs_add(self, kind: str, scope: Scope, session_id: str | None, payload: str, *, state: str, at: datetime) -> int:
        with self._tx() as conn:
            return conn.execute(
                "INSERT INTO jobs (kind, user_id, agent_id, session_id, payload, state, created_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (kind, scope.user_id, scope.agent_id, session_id, payload, state, at.timestamp()),
            ).fetchone()[0]

    def jobs_claim(self, worker: str, at: datetime, job_id: int | None = None) -> JobRecord | None:
        """The oldest queued job that is due and whose user has no job running (or job `job_id`
        if it is still queued), now `running` under `worker`."""
        moment = at.timestamp()
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (JOBS_LOCK,))
            if job_id is not None:
                row = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = %s AND state = 'queued'", (job_id,)).fetchone()
            else:
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM jobs WHERE state = 'queued' AND run_after <= %s AND user_id NOT IN"
                    " (SELECT user_id FROM jobs WHERE state = 'running') ORDER BY id LIMIT 1",
                    (moment,),
                ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE jobs SET state = 'running', claimed_by = %s, claimed_at = %s, attempts = attempts + 1 WHERE id = %s",
                (worker, moment, row[0]),
            )
        job = _job(row)
        job.state, job.claimed_by, job.claimed_at, job.attempts = "running", worker, at, job.attempts + 1
        return job

    def jobs_finish(self, job_id: int) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM jobs WHERE id = %s", (job_id,))

    def jobs_retry(self, job_id: int, error: str, run_after: datetime) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'queued', error = %s, run_after = %s, claimed_by = NULL, claimed_at = NULL"
                " WHERE id = %s",
                (error, run_after.timestamp(), job_id),
            )

    def jobs_fail(self, job_id: int, error: str) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE jobs SET state = 'failed', error = %s WHERE id = %s", (error, job_id))

    def jobs_requeue(self, jobs: Sequence[JobRecord]) -> int:
        done = 0
        with self._tx() as conn:
            for job in jobs:
                done += conn.execute(
                    "UPDATE jobs SET state = 'queued', claimed_by = NULL, claimed_at = NULL, run_after = 0"
                    " WHERE id = %s AND state = 'running' AND claimed_by IS NOT DISTINCT FROM %s",
                    (job.id, job.claimed_by),
                ).rowcount
        return done

    def jobs_list(self, states: Sequence[str], *, user_id: str | None = None) -> list[JobRecord]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE state = ANY(%s::text[])"
        params: list[Any] = [list(states)]
        if user_id is not None:
            sql += " AND user_id = %s"
            params.append(user_id)
        return [_job(r) for r in self._rows(sql + " ORDER BY id", params)]

    def jobs_count(self, states: Sequence[str]) -> int:
        return self._rows("SELECT count(*) FROM jobs WHERE state = ANY(%s::text[])", (list(states),))[0][0]

    def jobs_gather(
        self, scope: Scope, session_id: str | None, *, min_count: int, at: datetime,
        combine: Callable[[list[JobRecord]], str],
    ) -> int | None:
        """Atomically replace the group's `waiting` turn jobs by one queued `batch` job."""
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (JOBS_LOCK,))
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE state = 'waiting' AND kind = 'turn' AND user_id = %s"
                " AND agent_id IS NOT DISTINCT FROM %s AND session_id IS NOT DISTINCT FROM %s ORDER BY id",
                (scope.user_id, scope.agent_id, session_id),
            ).fetchall()
            if not rows or len(rows) < min_count:
                return None
            waiting = [_job(r) for r in rows]
            batch = conn.execute(
                "INSERT INTO jobs (kind, user_id, agent_id, session_id, payload, state, created_at)"
                " VALUES ('batch', %s, %s, %s, %s, 'queued', %s) RETURNING id",
                (scope.user_id, scope.agent_id, session_id, combine(waiting), at.timestamp()),
            ).fetchone()[0]
            conn.execute("DELETE FROM jobs WHERE id = ANY(%s::bigint[])", ([j.id for j in waiting],))
            return batch

    def jobs_waiting_groups(self) -> list[tuple[str, str | None, str | None]]:
        rows = self._rows("SELECT DISTINCT user_id, agent_id, session_id FROM jobs WHERE state = 'waiting'")
        return [(r[0], r[1], r[2]) for r in rows]
