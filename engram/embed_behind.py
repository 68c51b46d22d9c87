"""Write-behind: a memory is committed (and lexically searchable) at once, and its vector and
its entity-graph links follow from one worker thread per `Memory`, in batches.

Why: the multilingual embedder costs ~3 ms per text, more than the rest of an `add`; batched
it costs a third of that, and off the caller's thread nothing. The row is written with no
vector; the worker embeds what is pending and sets the vectors (`Store.set_vectors`, which
skips a row whose text changed meanwhile). Linking a memory to the entities it names
(engram.graph) was ~10 % of an add and a third of the pages its commit wrote; the write notes
the memory instead (`Store.defer_links`, one row) and the worker links a batch in one
transaction, reading each memory as it is then (gone: skipped; edited: its new text).

- Reading your writes: a search (dense or through the graph), `Memory.graph`, an export and
  a deletion first *settle* their user, embedding and linking in the calling thread what that user still
  has pending, so an `add` followed by a `search` ranks as if the add had done it all (`settle`).
  A search takes stand-in vectors where the embedder makes them quickly (USE from its token
  rows, ~0.2 ms a text): the store's index holds them in memory until the worker's real ones
  land (`Store.hold_vectors`). A search right after an add took ~11 ms, most of it the whole
  model run on one or two texts (~3 ms a text alone, memory-bound); an export still waits for
  the real vectors.
- Crash safety: rows still without a vector or links when the process died are found on the
  next open (`Store.stale_vectors`, `Store.deferred_links`) and done by the worker first.
- `flush` waits for everything pending; `close` flushes and stops the worker.
- A store without `set_vectors` (or opened read-only) embeds with the row, as before; one
  without `defer_links` (PostgreSQL, Qdrant) links with the row.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.at_exit import close_at_exit
from engram.graph import build as graph
from engram.models import Candidate, MemoryItem
from engram.records import content_hash, embed_records, embedding_text
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
    vector: bool = True  # its vector is owed
    link: bool = False  # its graph links are owed


def _part(p: _Pending, vectors: bool, links: bool) -> _Pending:
    """What of `p` is owed among `vectors` / `links` (`p` itself when that is all of it)."""
    vector, link = p.vector and vectors, p.link and links
    return p if (vector, link) == (p.vector, p.link) else dataclasses.replace(p, vector=vector, link=link)


class EmbedBehind:
    """The pending vectors of one `Memory` and the thread that makes them."""

    def __init__(self, services: Services, *, enabled: bool = True, batch: int = BATCH) -> None:
        self.services = services
        self.batch = batch
        store = services.store
        self.enabled = enabled and callable(getattr(store, "set_vectors", None)) and not getattr(store, "read_only", False)
        # graph links made behind too, where the store can note them (`Store.defer_links`)
        self.links = self.enabled and services.settings.graph and callable(getattr(store, "defer_links", None))
        self._cond = threading.Condition()
        self._queue: dict[str, _Pending] = {}  # by memory id, in order of writing
        self._held: dict[str, _Pending] = {}  # what the worker is embedding now
        self._owed: Counter[str] = Counter()  # per user: queued + being embedded
        self._standing: set[str] = set()  # owed, with a stand-in vector in the store's index
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

    def link(
        self, items: list[MemoryItem], *, replace: bool = False, given: dict[str, Candidate] | None = None,
    ) -> bool:
        """(In the write's transaction, when the graph is on) link `items` to the entities they
        name now, or note them for the worker; True when noted (then `submit(…, linked=False)`).
        An edit (`replace`) and an LLM's typed entities (`given`) are linked now."""
        s = self.services
        if not s.settings.graph or not items:
            return False
        if self.links:
            if not replace and not given:
                s.store.defer_links([(m.id, m.user_id) for m in items])  # type: ignore[attr-defined]
                return True
            s.store.links_done([m.id for m in items])  # type: ignore[attr-defined]  # linked here: not again
        graph.link(s.store, items, replace=replace, given=given)
        return False

    def submit(self, records: list[Record], *, linked: bool = True) -> None:
        """After `records` were written: queue those written without a vector, and (`linked`
        False: `link` noted them) their graph links."""
        pending = [
            _Pending(r.item.id, r.item.user_id, r.content_hash, embedding_text(r.item) if r.embedding is None else "",
                     r.embedding is None, not linked)
            for r in records if r.embedding is None or not linked
        ]
        if not pending or not self.enabled:
            return
        with self._cond:
            idle = not self._queue
            self._last_write = time.monotonic()
            for p in pending:
                queued = self._queue.get(p.memory_id)
                if queued is None:
                    self._queue[p.memory_id] = p
                    self._owed[p.user_id] += 1
                elif (p.vector and not queued.vector) or (p.link and not queued.link):
                    self._queue[p.memory_id] = dataclasses.replace(queued, vector=queued.vector or p.vector, link=queued.link or p.link)
            self._start()
            if idle:  # the worker sleeps only on an empty queue: one wake-up per burst of writes
                self._cond.notify_all()

    # -- the read side ----------------------------------------------------------------
    def owes(self, user_id: str) -> int:
        """Memories of `user_id` still waiting for a vector or links."""
        return self._owed.get(user_id, 0)

    def settle(self, user_id: str, *, vectors: bool = True, links: bool = True, stand_ins: bool = False) -> None:
        """Before a search (or a graph read, a deletion) of `user_id`: what they still wait for
        (their `vectors`, their `links`), done here and now (read-your-writes). What the worker
        holds of theirs is done here too rather than waited for (first: the order they were
        written in names things), as the caller may hold the store's write lock, which the
        worker needs. With `stand_ins` (a search), vectors the embedder makes quickly stand in
        for the real ones until the worker lands them (`_stand_in`)."""
        if not self._owed.get(user_id):  # the common case: a dict lookup
            return
        if vectors and stand_ins and self._stand_in(user_id):
            vectors = False
            if not links:
                return
        with self._cond:
            # (what is not asked for is skipped before any copy: a burst of writes queues hundreds)
            now: list[_Pending] = [  # the worker's copy lands second, as a no-op
                _part(p, vectors, links) for p in self._held.values()
                if p.user_id == user_id and ((p.vector and vectors) or (p.link and links))
            ]
            done: list[_Pending] = []  # off the queue: no longer owed once done
            for p in [p for p in self._queue.values() if p.user_id == user_id]:
                if not ((p.vector and vectors) or (p.link and links)):
                    continue
                part = _part(p, vectors, links)
                now.append(part)
                if (p.vector and not vectors) or (p.link and not links):
                    self._queue[p.memory_id] = _part(p, not vectors, not links)  # the rest, still owed
                else:
                    del self._queue[p.memory_id]
                    done.append(part)
        self._work(now, pay=done)

    def _stand_in(self, user_id: str) -> bool:
        """Stand-in vectors for what `user_id` still waits for, held by the store's index in memory
        (`Store.hold_vectors`) until the worker's real ones replace them: a search right after an
        add finds it by meaning without running the whole model in the caller's thread (~3 ms a
        text alone; the worker batches them at a third of that). False when the embedder or the
        store cannot (a text in Chinese, a scope as large as the IVF's): the caller makes them."""
        quick = getattr(self.services.embedder, "embed_quick", None)
        hold = getattr(self.services.store, "hold_vectors", None)
        if quick is None or hold is None:
            return False
        with self._cond:
            owed = [
                p for p in (*self._held.values(), *self._queue.values())
                if p.user_id == user_id and p.vector and p.memory_id not in self._standing
            ]
        if not owed:
            return True
        try:
            made = quick([p.text for p in owed])
        except Exception:  # the real vectors are made instead
            log.debug("stand-in vectors failed", exc_info=True)
            return False
        if any(v is None for v in made) or not hold(user_id, [(p.memory_id, v) for p, v in zip(owed, made, strict=True)]):
            return False
        with self._cond:  # (not those the worker finished meanwhile: their real vector is in)
            self._standing.update(p.memory_id for p in owed if p.memory_id in self._queue or p.memory_id in self._held)
        return True

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
            close_at_exit(self)
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
            self._work(taken, pay=taken)

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

    def _work(self, pending: list[_Pending], pay: list[_Pending]) -> None:
        """Vectors and links of `pending` (off the queue, or their part of it), written in one
        transaction (one turn at the writers' lock); the counts of `pay` drop after, even when
        this fails (what failed is done again on the next open)."""
        try:
            vectors = self._embed([p for p in pending if p.vector])
            links = [p.memory_id for p in pending if p.link]
            if vectors or links:
                self._write(vectors, links)
        finally:
            if pay:
                self._paid(pay)

    def _embed(self, pending: list[_Pending]) -> list[tuple[str, str, Any]]:
        """(id, content hash, vector) of `pending`, made outside any lock; none when the
        embedder fails (the rows stay vectorless, embedded on the next open)."""
        if not pending:
            return []
        try:
            vectors = self.services.embedder.embed([p.text for p in pending])
        except Exception:  # the worker must outlive one bad batch (a failing endpoint)
            log.warning("embedding %d memories behind failed; they are embedded on the next open",
                        len(pending), exc_info=True)
            return []
        return [(p.memory_id, p.content_hash, v) for p, v in zip(pending, vectors, strict=True)]

    def _write(self, vectors: list[tuple[str, str, Any]], links: list[str]) -> None:
        """Link these memories as they are now and set these vectors, in one transaction."""
        store = self.services.store
        try:
            # what they name, read before the writers' lock (the rules are linking's costly part)
            ahead = graph.read_ahead(store.get_many(links)) if links else {}
            with store.atomic():
                if links:
                    # those still noted (`settle` or an edit may have linked the others meanwhile),
                    # in the order they were written: an earlier memory can name what a later one says
                    noted = store.links_done(links)  # type: ignore[attr-defined]
                    items = {m.id: m for m in store.get_many(noted)}
                    graph.link(store, [items[i] for i in noted if i in items], ahead=ahead)
                landed = store.set_vectors(self.services.embedder.name, vectors) if vectors else 0  # type: ignore[attr-defined]
        except Exception:  # the worker must outlive one bad batch; vectors and notes wait for the next open
            log.warning("writing %d vectors and %d graph links made behind failed; they are made on the next open",
                        len(vectors), len(links), exc_info=True)
            return
        with self._cond:
            self.embedded += landed

    def _paid(self, pending: list[_Pending]) -> None:
        with self._cond:
            for p in pending:
                self._held.pop(p.memory_id, None)
                self._standing.discard(p.memory_id)
                self._owed[p.user_id] -= 1
                if self._owed[p.user_id] <= 0:
                    del self._owed[p.user_id]
            self._cond.notify_all()

    def _recover(self) -> None:
        """Rows without a vector or links (a crash before the worker reached them), in batches."""
        store, embedder = self.services.store, self.services.embedder
        try:
            while not self._closed:
                ids = store.stale_vectors(embedder.name, embedder.dim, self.batch)
                with self._cond:
                    ids = [i for i in ids if i not in self._queue and i not in self._held]
                items = store.get_many(ids)
                if not items:
                    break
                before = self.embedded
                self._owe([_Pending(m.id, m.user_id, content_hash(m.content), embedding_text(m)) for m in items])
                if self.embedded == before:  # nothing landed: do not spin on rows that refuse
                    break
            while self.links and not self._closed:
                noted = store.deferred_links(self.batch)  # type: ignore[attr-defined]
                if not noted:
                    break
                with self._cond:  # what this process queued is linked in its turn, in write order
                    if any(m in self._queue or m in self._held for m, _ in noted):
                        break
                self._owe([_Pending(m, u, "", "", vector=False, link=True) for m, u in noted])
                if store.deferred_links(self.batch) == noted:  # type: ignore[attr-defined]
                    break  # nothing cleared (linking fails): do not spin on it
        except Exception:
            log.warning("finding memories left without vectors or links failed", exc_info=True)
        finally:
            with self._cond:
                self._recovering = False
                self._cond.notify_all()

    def _owe(self, pending: list[_Pending]) -> None:
        """Do `pending` now, counted as owed meanwhile (`flush` waits for them)."""
        with self._cond:
            for p in pending:
                self._owed[p.user_id] += 1
        self._work(pending, pay=pending)


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
