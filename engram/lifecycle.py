"""Forgetting and strengthening: decay, archive, capacity, merge, restore.

Decay is computed lazily from timestamps; nothing rewrites the table as time
passes. A memory's *decayed importance* is

    importance × 0.5 ^ (days since last use / half-life)

where "last use" is the later of its creation and its last retrieval (saying
it again counts: reconciliation's NOOP reinforces), and the half-life grows
with how much the memory matters::

    half-life = base[kind] × (1 + gain × importance²) × (1 + ln strength)

`base` comes from ``decay_half_life_days`` (identity 0 = never decays,
preference/fact a year, turns a month); `strength` starts at 1, grows by 1
each time the user says it again, and by ``reinforce_strength`` with each
retrieval (derived from access_count, so searching writes nothing more than
the access count it already records). Memories at or above ``decay_core_importance`` (explicit "remember…"
requests, core identity) and pinned ones (``metadata["pinned"]``) never decay.

`maintain` (on demand, `engram maintain`, or a scheduler) then:

1. archives active memories whose decayed importance fell below
   ``archive_threshold`` and that were not used for ``archive_unused_days``
   (pending tasks — a recurrence or a due date not yet long past — stay);
2. enforces ``capacity_per_user`` live memories by archiving the least
   valuable (lowest decayed importance, then least recently used);
3. merges near-duplicates — same kind, scope, key, polarity and language,
   cosine ≥ ``merge_similarity`` *and* near-identical wording (token Jaccard ≥
   ``merge_overlap``, every word of the shorter statement in the longer one, the
   same numbers: one statement and a fuller version of it) —
   into one `summary` memory that lists them in `sources`; the sources are
   archived with ``metadata["merged_into"]`` and `restore` undoes the merge.

Everything is written in short transactions of guarded transitions: a row is
changed only if it is still in the state maintenance read (same status, not
edited, not used since), so it is safe while the engine serves requests from
other threads or processes. Archiving keeps content (it is restorable);
deletion is engram.deletion's job.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from engram.config import Settings
from engram.errors import InvalidInput, NotFound
from engram.models import Action, Event, Filters, Kind, Layer, MemoryItem, Source, Status, utcnow
from engram.store.base import (
    HistoryEvent,
    MemoryRow,
    Scope,
    Store,
    Transition,
    TransitionGroup,
)
from engram.records import embed_records, make_record
from engram.text import content_words, restates

if TYPE_CHECKING:  # pragma: no cover
    from engram.display import Display
    from engram.services import Services

log = logging.getLogger("engram.lifecycle")

__all__ = [
    "MaintenanceReport",
    "decayed_importance",
    "deletion_plan",
    "half_life_days",
    "last_used",
    "maintain",
    "restore",
]

DEFAULT_HALF_LIVES: dict[str, float] = {
    "identity": 0.0, "preference": 365.0, "fact": 365.0, "decision": 180.0,
    "task": 90.0, "event": 60.0, "summary": 180.0, "turn": 30.0,
}
_DAY = 86400.0

Progress = Callable[[int, int, str], None]  # (done, total, what)


# --------------------------------------------------------------------------- decay
def half_life_days(kind: str, importance: float, strength: float, settings: Settings) -> float:
    """Days for the importance to halve; ``math.inf`` when it does not decay."""
    if importance >= settings.decay_core_importance:
        return math.inf
    base = settings.decay_half_life_days.get(kind, DEFAULT_HALF_LIVES.get(kind, 180.0))
    if base <= 0:
        return math.inf
    gain = 1.0 + settings.decay_importance_gain * importance * importance
    return base * gain * (1.0 + math.log(max(strength, 1.0)))


def strength_of(item: MemoryItem | MemoryRow, settings: Settings) -> float:
    """Stored strength (1, +1 each time the user says it again) plus what retrievals added:
    ``reinforce_strength`` per use, derived from access_count (no write per query)."""
    return item.strength + settings.reinforce_strength * item.access_count


def last_used(item: MemoryItem | MemoryRow) -> datetime:
    """When the memory was last created, said again or retrieved."""
    if item.last_accessed is not None and item.last_accessed > item.created_at:
        return item.last_accessed
    return item.created_at


def _decay_kind(item: MemoryItem | MemoryRow) -> str:
    if isinstance(item, MemoryRow):
        return item.merged_kind or item.kind
    kind = item.metadata.get("merged_kind") if item.kind is Kind.SUMMARY else None
    return kind or item.kind.value


def _pinned(item: MemoryItem | MemoryRow) -> bool:
    return item.pinned if isinstance(item, MemoryRow) else bool(item.metadata.get("pinned"))


def decayed_importance(item: MemoryItem | MemoryRow, now: datetime, settings: Settings) -> float:
    """The importance left after decay at `now` (0..1); what maintenance ranks by."""
    if _pinned(item):
        return item.importance
    life = half_life_days(_decay_kind(item), item.importance, strength_of(item, settings), settings)
    if math.isinf(life):
        return item.importance
    age = max(0.0, (now - last_used(item)).total_seconds() / _DAY)
    return item.importance * math.pow(0.5, age / life)


# --------------------------------------------------------------------------- report
class MaintenanceReport(BaseModel):
    """What one `maintain` run did."""

    now: datetime
    users: int = 0
    scanned: int = 0  # live memories looked at
    archived: int = 0  # decayed and unused
    evicted: int = 0  # archived to respect capacity_per_user
    merged_groups: int = 0  # summaries created
    merged_sources: int = 0  # memories archived into them
    skipped: int = 0  # changed concurrently: left alone this time
    seconds: float = 0.0
    phases: dict[str, float] = Field(default_factory=dict)  # seconds per phase


# --------------------------------------------------------------------------- maintain
def maintain(
    services: Services,
    *,
    user_id: str | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> MaintenanceReport:
    """Archive the decayed, enforce capacity, merge near-duplicates; for one user or all."""
    started = time.perf_counter()
    now = utcnow() if now is None else now
    store, settings = services.store, services.settings
    users = [user_id] if user_id is not None else store.user_ids()
    report = MaintenanceReport(now=now, users=len(users))
    phases: Counter[str] = Counter()
    active = Filters(status=[Status.ACTIVE])
    total = sum(store.count(Scope(user), active) for user in users) if progress else 0
    done = 0
    if progress:
        progress(0, total, "maintaining")
    for user in users:
        rows = store.lifecycle_rows(Scope(user), [Status.ACTIVE.value])
        report.scanned += len(rows)
        tick = time.perf_counter()
        left = _archive_decayed(store, settings, user, rows, now, report)
        phases["archive"] += time.perf_counter() - tick
        tick = time.perf_counter()
        left = _enforce_capacity(store, settings, user, left, now, report)
        phases["capacity"] += time.perf_counter() - tick
        tick = time.perf_counter()
        _merge_near_duplicates(services, user, left, now, report)
        phases["merge"] += time.perf_counter() - tick
        done += len(rows)
        if progress:
            progress(min(done, max(total, done)), max(total, done), f"maintained {user}")
    report.phases = {k: round(v, 4) for k, v in phases.items()}
    report.seconds = time.perf_counter() - started
    log.debug(
        "maintain: %d users, %d scanned, %d archived, %d evicted, %d merged into %d summaries (%.2fs)",
        report.users, report.scanned, report.archived, report.evicted, report.merged_sources,
        report.merged_groups, report.seconds,
    )
    return report


def _pending_task(row: MemoryRow, now: datetime, settings: Settings) -> bool:
    if row.kind != Kind.TASK.value:
        return False
    if row.recurrence:
        return True
    return row.due_at is not None and row.due_at > now - timedelta(days=settings.archive_unused_days)


def _archive(
    row: MemoryRow, now: datetime, reason: str, why: str, related: str | None = None, **metadata: Any
) -> Transition:
    return Transition(
        memory_id=row.id, status=Status.ARCHIVED.value, action="ARCHIVE", reason=reason, at=now,
        metadata={"archived_reason": why, "archived_at": now.isoformat(), **metadata},
        related_id=related, guard=True, seen_updated_at=row.updated_at,
        seen_last_accessed=row.last_accessed,
    )


def _apply_batches(store: Store, transitions: list[Transition], batch: int) -> int:
    changed = 0
    for start in range(0, len(transitions), batch):
        changed += len(store.transition(transitions[start : start + batch]))
    return changed


def _archive_decayed(
    store: Store, settings: Settings, user: str, rows: list[MemoryRow], now: datetime,
    report: MaintenanceReport,
) -> list[MemoryRow]:
    unused = timedelta(days=settings.archive_unused_days)
    keep: list[MemoryRow] = []
    out: list[Transition] = []
    for row in rows:
        if (
            not row.pinned
            and not _pending_task(row, now, settings)
            and now - last_used(row) >= unused
            and decayed_importance(row, now, settings) < settings.archive_threshold
        ):
            out.append(_archive(row, now, "decayed below the archive threshold and unused", "decayed"))
        else:
            keep.append(row)
    changed = _apply_batches(store, out, settings.maintain_batch)
    report.archived += changed
    report.skipped += len(out) - changed
    return keep


def _enforce_capacity(
    store: Store, settings: Settings, user: str, rows: list[MemoryRow], now: datetime,
    report: MaintenanceReport,
) -> list[MemoryRow]:
    cap = settings.capacity_per_user
    if cap <= 0 or len(rows) <= cap:
        return rows
    candidates = [r for r in rows if not r.pinned]
    # least valuable first: lowest decayed importance, then least recently used
    candidates.sort(key=lambda r: (decayed_importance(r, now, settings), last_used(r)))
    excess = len(rows) - cap
    chosen = candidates[:excess]
    out = [_archive(r, now, f"over capacity ({cap} per user): least valuable", "capacity") for r in chosen]
    changed = _apply_batches(store, out, settings.maintain_batch)
    report.evicted += changed
    report.skipped += len(out) - changed
    gone = {r.id for r in chosen}
    return [r for r in rows if r.id not in gone]


# --------------------------------------------------------------------------- merge


def _jaccard_pairs(token_sets: list[frozenset[str]], threshold: float) -> dict[int, list[int]]:
    """Pairs of near-duplicate token sets (see `engram.text.restates`), by prefix filtering.

    Two sets with Jaccard ≥ t share a token among the first |x| − ⌈t·|x|⌉ + 1 of
    each when tokens are in one global order (rarest first), so only those are
    indexed. Tokens in more than 2 % of the memories are not indexed: a pair that
    shares only such common words is not found (it is rarely a true duplicate), and
    the join stays near-linear on large, repetitive stores.
    """
    df: Counter[str] = Counter()
    for tokens in token_sets:
        df.update(tokens)
    common = max(50, len(token_sets) // 50)
    index: dict[str, list[int]] = defaultdict(list)
    pairs: dict[int, list[int]] = defaultdict(list)
    for i, tokens in enumerate(token_sets):
        if not tokens:
            continue
        ordered = sorted(tokens, key=lambda t: (df[t], t))
        size = len(ordered)
        prefix = [t for t in ordered[: size - math.ceil(threshold * size) + 1] if df[t] <= common]
        seen: set[int] = set()
        for token in prefix:
            for j in index[token]:
                if j not in seen:
                    seen.add(j)
                    if restates(tokens, token_sets[j], threshold):
                        pairs[i].append(j)
                        pairs[j].append(i)
            index[token].append(i)
    return pairs


def _join(contents: Sequence[str], language: str) -> str:
    if language == "zh":
        return "；".join(c.strip().rstrip("。；;.") for c in contents) + "。"
    return "; ".join(c.strip().rstrip(".;") for c in contents) + "."


def _merge_near_duplicates(
    services: Services, user: str, rows: list[MemoryRow], now: datetime, report: MaintenanceReport
) -> None:
    settings, store = services.settings, services.store
    kinds = set(settings.merge_kinds)
    eligible = [r for r in rows if r.kind in kinds and not r.pinned]
    if len(eligible) < 2:
        return
    # the same candidates as at the last check (same ids, nothing edited since): nothing
    # new can pair up, so the scan is skipped (the steady state of a scheduled maintain)
    signature = _signature(eligible)
    if store.get_state(user, "merge_checked") == signature:
        return
    by_id = {r.id: r for r in eligible}
    items: list[MemoryItem] = []
    ids = list(by_id)
    for start in range(0, len(ids), 2000):
        items += store.get_many(ids[start : start + 2000])
    items = [i for i in items if i.status is Status.ACTIVE and not i.metadata.get("no_merge")]
    if len(items) < 2:
        return
    token_sets = [content_words(i.content) for i in items]
    pairs = _jaccard_pairs(token_sets, settings.merge_overlap)
    if not pairs:
        store.set_state(user, "merge_checked", signature, now)
        return
    involved = sorted(pairs)
    vectors = store.embeddings([items[i].id for i in involved])

    def group_key(item: MemoryItem) -> tuple[Any, ...]:
        return (item.agent_id, item.kind, item.key, item.metadata.get("polarity", 0), item.language)

    def unit(i: int) -> np.ndarray | None:
        v = vectors.get(items[i].id)
        if v is None:
            return None
        norm = float(np.linalg.norm(v))
        return v / norm if norm else None

    units = {i: unit(i) for i in involved}
    value = {i: decayed_importance(by_id[items[i].id], now, settings) for i in involved}
    assigned: set[int] = set()
    groups: list[list[int]] = []
    for leader in sorted(involved, key=lambda i: (-value[i], items[i].created_at)):
        if leader in assigned or units[leader] is None:
            continue
        lkey = group_key(items[leader])
        scored = []
        for j in pairs[leader]:
            if j in assigned or units[j] is None or group_key(items[j]) != lkey:
                continue
            cosine = float(units[leader] @ units[j])
            if cosine >= settings.merge_similarity:
                scored.append((cosine, j))
        if not scored:
            continue
        scored.sort(reverse=True)
        members = [leader] + [j for _, j in scored[: settings.merge_max_group - 1]]
        assigned.update(members)
        groups.append(members)
    if not groups:
        store.set_state(user, "merge_checked", signature, now)
        return
    summaries = [_summary([items[i] for i in g], now) for g in groups]
    records = [make_record(s) for s in summaries]
    embed_records(services.embedder, records)
    batch: list[TransitionGroup] = []
    sizes: list[int] = []
    for members, record in zip(groups, records, strict=True):
        summary = record.item
        transitions = [
            _archive(
                by_id[items[i].id], now, f"merged into summary {summary.id}", "merged",
                related=summary.id, merged_into=summary.id,
            )
            for i in members
        ]
        for t in transitions:
            t.action = "MERGE"
        event = HistoryEvent(
            summary.id, user, "MERGE", None, summary.content,
            f"summary of {len(members)} near-duplicate memories", now,
        )
        batch.append(TransitionGroup(transitions, [record], [event], atomic=True))
        sizes.append(len(members))
    step = max(1, settings.maintain_batch // 4)
    merged: set[str] = set()
    for start in range(0, len(batch), step):
        done = store.transition_groups(batch[start : start + step])
        for changed, size in zip(done, sizes[start : start + step], strict=True):
            if changed:
                report.merged_groups += 1
                report.merged_sources += size
                merged.update(changed)
            else:
                report.skipped += size
    rest = [r for r in eligible if r.id not in merged]
    if len(rest) >= 2 and len(merged) == sum(sizes):  # every group went through: checked
        store.set_state(user, "merge_checked", _signature(rest), now)


def _signature(rows: Sequence[MemoryRow]) -> str:
    """Which memories, edited when: equal signatures mean nothing to merge anew."""
    mix = 0
    for r in rows:
        mix ^= zlib.crc32(r.id.encode())
    newest = max(r.updated_at for r in rows).timestamp()
    return f"{len(rows)}:{mix}:{newest!r}"


def _summary(sources: list[MemoryItem], now: datetime) -> MemoryItem:
    """One memory that says what its near-duplicate sources say (their text, joined)."""
    leader = sources[0]
    contents = list(dict.fromkeys(s.content for s in sources))
    keys = {s.key for s in sources}
    entities = list(dict.fromkeys(e for s in sources for e in s.entities))
    tags = list(dict.fromkeys(t for s in sources for t in s.tags))
    valid_from = [s.valid_from or s.created_at for s in sources]
    accessed = [s.last_accessed for s in sources if s.last_accessed is not None]
    metadata: dict[str, Any] = {"merge": True, "merged_kind": leader.kind.value}
    if leader.metadata.get("polarity"):
        metadata["polarity"] = leader.metadata["polarity"]
    return MemoryItem(
        user_id=leader.user_id, agent_id=leader.agent_id, content=_join(contents, leader.language),
        kind=Kind.SUMMARY,
        layer=Layer.LONG_TERM if any(s.layer is Layer.LONG_TERM for s in sources) else Layer.EPISODIC,
        language=leader.language, key=keys.pop() if len(keys) == 1 else None,
        value=leader.value if len(keys) == 0 else None,
        importance=max(s.importance for s in sources),
        confidence=max(s.confidence for s in sources),
        strength=sum(s.strength for s in sources),
        access_count=sum(s.access_count for s in sources),
        last_accessed=max(accessed) if accessed else None,
        created_at=now, updated_at=now, valid_from=min(valid_from),
        source=leader.source if all(s.source is leader.source for s in sources) else Source.RULE,
        metadata=metadata, entities=entities, tags=tags, sources=[s.id for s in sources],
    )


# --------------------------------------------------------------------------- restore
def is_merge_summary(item: MemoryItem) -> bool:
    return item.kind is Kind.SUMMARY and bool(item.metadata.get("merge"))


def _unarchive(item: MemoryItem, now: datetime, reason: str, **metadata: Any) -> Transition:
    return Transition(
        memory_id=item.id, status=Status.ACTIVE.value, action="RESTORE", reason=reason, at=now,
        from_status=(Status.ARCHIVED.value,),
        metadata={"archived_reason": None, "archived_at": None, "merged_into": None, **metadata},
        fields={"last_accessed": now},  # restoring is a use: not re-archived at once
    )


def restore(store: Store, display: Display, memory_id: str, *, now: datetime | None = None) -> list[Event]:
    """Bring an archived memory back; for a merge (a summary or one of its sources),
    undo the merge: every source back to active, the summary deleted."""
    now = utcnow() if now is None else now
    item = store.get(memory_id) if isinstance(memory_id, str) else None
    if item is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    summary = item if is_merge_summary(item) else None
    if summary is None and item.metadata.get("merged_into"):
        summary = store.get(item.metadata["merged_into"])
    if summary is not None:
        sources = [s for s in store.get_many(summary.sources) if s.metadata.get("merged_into") == summary.id]
        transitions = [
            _unarchive(s, now, f"unmerged from summary {summary.id}", no_merge=True) for s in sources
        ]
        changed = set(store.transition(transitions))
        store.delete([summary.id], [HistoryEvent(summary.id, summary.user_id, "DELETE", None, None, "unmerged", now)])
        restored = [s for s in store.get_many([s.id for s in sources]) if s.id in changed]
        return [
            Event(action=Action.RESTORE, memory=display.item(s), reason=f"unmerged from summary {summary.id}")
            for s in restored
        ] + [Event(action=Action.DELETE, memory=display.item(summary), reason="summary undone")]
    if item.status is not Status.ARCHIVED:
        raise InvalidInput(f"memory {memory_id!r} is {item.status.value}, not archived")
    if not store.transition([_unarchive(item, now, "restored")]):
        raise InvalidInput(f"memory {memory_id!r} changed meanwhile; try again")
    restored_item = store.get(memory_id)
    assert restored_item is not None
    return [Event(action=Action.RESTORE, memory=display.item(restored_item), reason="restored")]


# --------------------------------------------------------------------------- deletion
def deletion_plan(
    store: Store, scope: Scope, memory_ids: Iterable[str], *, cascade_summaries: bool
) -> tuple[list[str], list[MemoryItem]]:
    """What deleting `memory_ids` must also delete so no copy of their text survives.

    Returns (ids to delete, sources to restore). A summary that lists a deleted
    memory among its sources quotes it, so it goes too; when that summary was a
    merge, its other sources come back to active (nothing else is lost). With
    `cascade_summaries` (deleting a merge summary by id) the summary's archived
    sources are deleted with it: they are what it says.
    """
    user = Scope(scope.user_id)
    delete: dict[str, None] = dict.fromkeys(memory_ids)
    if cascade_summaries:
        for item in store.get_many(list(delete)):
            if is_merge_summary(item):
                for source in store.get_many(item.sources):
                    if source.metadata.get("merged_into") == item.id:
                        delete.setdefault(source.id)
    frontier = list(delete)
    while frontier:
        derived = [d for d in store.derived_from(user, frontier) if d.id not in delete]
        frontier = [d.id for d in derived]
        for d in derived:
            delete.setdefault(d.id)
    # every merge summary that goes gives back its sources that stay
    restore_ids: dict[str, MemoryItem] = {}
    for item in store.get_many(list(delete)):
        if is_merge_summary(item):
            for source in store.get_many(item.sources):
                if source.id not in delete and source.metadata.get("merged_into") == item.id:
                    restore_ids[source.id] = source
    return list(delete), list(restore_ids.values())


def restore_transitions(sources: Sequence[MemoryItem], now: datetime) -> list[Transition]:
    return [_unarchive(s, now, "its merge summary was deleted", no_merge=True) for s in sources]
