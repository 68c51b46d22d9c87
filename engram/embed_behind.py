"""Write-behind embedding: a memory is committed (and lexically searchable) at once, and its
vector follows from one worker thread per `Memory`, in batches.

Why: the multilingual embedder costs ~3 ms per text, more than the rest of an `add`; batched
it costs a third of that, and off the caller's thread nothing. The row is written with no
vector; the worker embeds what is pending and sets the vectors (`Store.set_vectors`, which
skips a row whose text changed meanwhile).

- Reading your writes: a dense search first *settles* its user, embedding in the searching
  thread what that user still has queued and waiting for what the worker has in hand, so an
  `add` followed by a `search` ranks as if the add had embedded (`settle`).
- Crash safety: rows still without a vector when the process died are found on the next open
  (`Store.stale_vectors` lists them) and embedded by the worker first.
- `flush` waits for everything pending; `close` flushes and stops the worker.
- A store without `set_vectors` (or opened read-only) embeds with the row, as before.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.records import content_hash, embed_records
from engram.store.base import Record

if TYPE_CHECKING:  # pragma: no cover
    from engram.services import Services

log = logging.getLogger("engram")

BATCH = 64  # texts per embedding call: USE costs ~0.7 ms a text in a batch, ~3 ms alone
# The worker embeds once writes pause for LINGER_S: a batch is cheaper, and the worker (its
# tokenizer is Python, holding the GIL; a thread that gives the GIL up for SQLite waits up to
# the switch interval to get it back) does not run in the middle of the next add. An agent's
# writes come in bursts between model calls, so the pause comes soon; under a steady stream
# the worker still starts once GATHER_MAX vectors are owed or the oldest waited MAX_WAIT_S.
LINGER_S = 0.02
GATHER_MAX = 16 * BATCH
MAX_WAIT_S = 1.0
NICER = 15  # the worker's nice value above the process's (`_lower_priority`)


@dataclass(slots=True, frozen=True)
class _Pending:
    memory_id: str
    user_id: str
    content_hash: str
    text: str


class EmbedBehind:
    """The pending vectors of one `Memory` and the thread that makes them."""

    def __init__(self, services: Services, *, enabled: bool = True, batch: int = BATCH) -> None:
        self.services = services
        self.batch = batch
        store = services.store
        self.enabled = enabled and callable(getattr(store, "set_vectors", None)) and not getattr(store, "read_only", False)
        self._cond = threading.Condition()
        self._queue: dict[str, _Pending] = {}  # by memory id, in order of writing
        self._held: dict[str, _Pending] = {}  # what the worker is embedding now
        self._made: dict[str, Any] = {}  # vectors a search made but could not write: the worker writes them
        self._owed: Counter[str] = Counter()  # per user: queued + being embedded
        self._closed = False
        self._recovering = False  # the worker is still looking for rows a crash left
        self._thread: threading.Thread | None = None
        self._last_write = 0.0  # time.monotonic() of the latest submit
        self._hurry = 0  # callers waiting in `flush`: the worker does not linger for them
        self.embedded = 0  # vectors set so far (tests and benchmarks read it)

    # -- the write side ---------------------------------------------------------------
    def prepare(self, records: list[Record]) -> None:
        """Before `records` are written: stamp the embedder that will make their vectors, or
        (write-behind off) embed them now in one batch."""
        if not self.enabled:
            embed_records(self.services.embedder, [r for r in records if r.embedding is None])
            return
        name = self.services.embedder.name
        for record in records:
            if record.embedding is None and record.item.embedding_model != name:
                record.item.embedding_model = name

    def submit(self, records: list[Record]) -> None:
        """After `records` were written: queue those written without a vector."""
        pending = [
            _Pending(r.item.id, r.item.user_id, r.content_hash, r.item.content)
            for r in records if r.embedding is None
        ]
        if not pending or not self.enabled:
            return
        with self._cond:
            idle = not self._queue
            self._last_write = time.monotonic()
            for p in pending:
                if p.memory_id not in self._queue:
                    self._queue[p.memory_id] = p
                    self._owed[p.user_id] += 1
            self._start()
            if idle:  # the worker sleeps only on an empty queue: one wake-up per burst of writes
                self._cond.notify_all()

    # -- the read side ----------------------------------------------------------------
    def owes(self, user_id: str) -> int:
        """Vectors `user_id` still waits for."""
        return self._owed.get(user_id, 0)

    def settle(self, user_id: str) -> None:
        """Before a dense search of `user_id`: what they still wait for, embedded here and now
        (read-your-writes). What the worker holds of theirs is embedded here too rather than
        waited for: the caller may hold the store's write lock, which the worker needs."""
        if not self._owed.get(user_id):  # the common case: a dict lookup
            return
        with self._cond:
            # (vectors made here before, while another writer had the file, are in this
            # process's index already: the worker writes them)
            mine = [p for p in self._queue.values() if p.user_id == user_id and p.memory_id not in self._made]
            for p in mine:
                del self._queue[p.memory_id]
            held = [p for p in self._held.values() if p.user_id == user_id and p.memory_id not in self._made]
        # a search does not queue for another process's write: what cannot be written now is
        # searchable here at once and written by the worker
        self._embed(mine, wait=False)
        self._embed(held, owed=False, wait=False)  # the worker's copy lands second, as a no-op

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every pending vector is set (those a crash left too); False when
        `timeout` ran out first."""
        with self._cond:
            self._hurry += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(lambda: not self._owed and not self._recovering, timeout)
            finally:
                self._hurry -= 1

    def close(self, timeout: float | None = 60.0) -> None:
        """Embed what is pending, then stop the worker (what it could not do stays for the next open)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the worker -------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker now, which first embeds rows a crash left without vectors."""
        if self.enabled:
            with self._cond:
                if self._thread is None and not self._closed:
                    self._recovering = True
                    self._start(recover=True)

    def _start(self, recover: bool = False) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._run, args=(recover,), name="engram-embed-behind", daemon=True
            )
            self._thread.start()

    def _run(self, recover: bool) -> None:
        _lower_priority()
        if recover:
            self._recover()
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return  # closed, and nothing left
                self._gather()
                taken = []
                for memory_id in list(self._queue)[: self.batch]:
                    taken.append(self._queue.pop(memory_id))
                    self._held[memory_id] = taken[-1]
            self._embed(taken)

    def _gather(self) -> None:
        """Wait (holding nothing but the condition's wait) until writes pause for `LINGER_S`,
        unless enough is owed, the oldest waited long enough, or `flush`/`close` is waiting."""
        began = time.monotonic()
        while not self._closed and not self._hurry and len(self._queue) < GATHER_MAX:
            now = time.monotonic()
            quiet_in = self._last_write + LINGER_S - now
            left = began + MAX_WAIT_S - now
            if quiet_in <= 0 or left <= 0:
                return
            self._cond.wait(min(quiet_in, left))

    def _embed(self, pending: list[_Pending], owed: bool = True, wait: bool = True) -> None:
        """Embed `pending` (already off the queue) and set their vectors; with `owed`, their
        counts drop even when this fails (the rows stay vectorless, embedded on the next open).
        `wait` off: when another writer has the file, the store keeps them in this process's
        index and they go back on the queue with their vectors, for the worker to write."""
        if not pending:
            return
        try:
            embedder = self.services.embedder
            with self._cond:
                made = {p.memory_id: self._made.pop(p.memory_id) for p in pending if p.memory_id in self._made}
            todo = [p for p in pending if p.memory_id not in made]
            if todo:
                made.update(zip([p.memory_id for p in todo], embedder.embed([p.text for p in todo]), strict=True))
            vectors = [(p.memory_id, p.content_hash, made[p.memory_id]) for p in pending]
            store = self.services.store
            landed = store.set_vectors(embedder.name, vectors) if wait else store.set_vectors(  # type: ignore[attr-defined]
                embedder.name, vectors, wait=False
            )
            if landed is None:  # not written: the worker writes them (they stay owed until then)
                if owed:
                    with self._cond:
                        for p in pending:
                            self._made[p.memory_id] = made[p.memory_id]
                            self._queue[p.memory_id] = p
                        self._start()
                        self._cond.notify_all()
                    owed = False
                return
            with self._cond:
                self.embedded += landed
        except Exception:  # the worker must outlive one bad batch (a closed store, a failing endpoint)
            log.warning("embedding %d memories behind failed; they are embedded on the next open",
                        len(pending), exc_info=True)
        finally:
            if owed:
                self._paid(pending)

    def _paid(self, pending: list[_Pending]) -> None:
        with self._cond:
            for p in pending:
                self._held.pop(p.memory_id, None)
                self._owed[p.user_id] -= 1
                if self._owed[p.user_id] <= 0:
                    del self._owed[p.user_id]
            self._cond.notify_all()

    def _recover(self) -> None:
        """Rows without a vector (a crash before the worker reached them), in batches."""
        store, embedder = self.services.store, self.services.embedder
        try:
            while not self._closed:
                ids = store.stale_vectors(embedder.name, embedder.dim, self.batch)
                with self._cond:
                    ids = [i for i in ids if i not in self._queue and i not in self._held]
                items = store.get_many(ids)
                if not items:
                    return
                before = self.embedded
                pending = [_Pending(m.id, m.user_id, content_hash(m.content), m.content) for m in items]
                with self._cond:
                    for p in pending:
                        self._owed[p.user_id] += 1
                self._embed(pending)
                if self.embedded == before:  # nothing landed: do not spin on rows that refuse
                    return
        except Exception:
            log.warning("finding memories left without vectors failed", exc_info=True)
        finally:
            with self._cond:
                self._recovering = False
                self._cond.notify_all()


def _lower_priority() -> None:
    """The calling thread yields the CPU to the others (Linux: a thread has its own nice value).
    On a busy machine the worker otherwise takes the cores an `add` or a search is waiting
    for: LoCoMo said turn by turn, add p50 10-14 ms with it at the process's priority, 4-7 ms
    at nice +15 (2 cores, load ~8)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + NICER))
    except (AttributeError, OSError):  # not Linux/Unix, or not permitted: run as is
        pass
