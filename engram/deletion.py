"""Deletion for real: a memory's text leaves every table and index, and every copy of it goes
too (summaries that quote it, working-memory turns and pending jobs that say it). Only a
contentless DELETE event remains. `Memory.delete`, `forget` and the "/forget" commands land here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from engram import control, disputes, lifecycle
from engram.capsule import delta_without, summary_record
from engram.extract import extract_candidates
from engram.kinds import EPISODE_KEY, RESTATED_KEY
from engram.models import Action, Event, Filters, Kind, MemoryItem, Status, utcnow
from engram.store.base import HistoryEvent, Scope, Transition

if TYPE_CHECKING:  # pragma: no cover
    from engram.retrieve import Retriever
    from engram.services import Services

log = logging.getLogger("engram")


def job_text(payload: str) -> str:
    """The words a queued job holds (its messages), for matching what is being forgotten."""
    try:
        data = json.loads(payload)
    except ValueError:
        return payload
    messages = data.get("messages", []) if isinstance(data, dict) else []
    return " ".join(m.get("content", "") for m in messages if isinstance(m, dict))


def about(services: Services, retriever: Retriever, scope: Scope, topic: str) -> list[MemoryItem]:
    """The memories (every status) that say something about `topic` ("forget what I said about X")."""
    store, settings = services.store, services.settings
    everything = Filters(status=[])
    found = retriever.candidates(scope, topic, everything, max(200, settings.candidates))
    items = store.get_many(list(found))
    keys = [c.key for c in extract_candidates(topic, now=utcnow()) if c.key]
    if not keys and not topic.lower().startswith(("i ", "my ")) and not topic.startswith("我"):
        keys = [c.key for c in extract_candidates("I " + topic if topic.isascii() else "我" + topic) if c.key]
    for key in keys:
        items += store.find_by_key(scope, key, everything)
    unique = list({i.id: i for i in items}.values())
    return control.matching(unique, topic, settings.forget_min_overlap, keys)


def drawn_from(services: Services, scope: Scope, items: Sequence[MemoryItem]) -> list[MemoryItem]:
    """The memories whose provenance is one of the episodes among `items`."""
    every = [i.id for i in items]
    return [
        m for episode in items if episode.kind is Kind.TURN
        for m in services.store.list(scope, Filters(status=[], metadata={EPISODE_KEY: episode.id}))
        if m.id not in every
    ]


def episodes_of(services: Services, items: Sequence[MemoryItem]) -> list[MemoryItem]:
    """The episodes `items` were drawn from ("forget all my preferences": what the user said
    that made them goes too, and every turn that said one again), each once, none of `items` itself."""
    ids = {i.id for i in items}
    wanted = {e for i in items for e in (i.metadata.get(EPISODE_KEY), *i.metadata.get(RESTATED_KEY, ()))} - ids - {None}
    return services.store.get_many([e for e in wanted if isinstance(e, str)])


def _said_turns(
    services: Services, scope: Scope, items: Iterable[MemoryItem], topic: str | None, *, sweep: bool
) -> list[int]:
    """Working-memory turns to delete with `items`; with `sweep`, also drop the queued jobs that
    would say them again (words overlapping by ``forget_min_overlap``), else exact copies only."""
    store = services.store
    topics = [i.content for i in items] + ([topic] if topic else [])
    if not sweep:
        copies = {_plain(t) for t in topics}
        return [turn_id for turn_id, _session, content in store.turns_rows(scope) if _plain(content) in copies]
    threshold = services.settings.forget_min_overlap
    jobs_list = getattr(store, "jobs_list", None)
    if jobs_list is not None:
        pending = [
            (job.id, "", job_text(job.payload))
            for job in jobs_list(["queued", "waiting", "failed"], user_id=scope.user_id)
        ]
        for job_id in control.turns_matching(pending, topics, threshold):
            store.jobs_finish(job_id)  # type: ignore[attr-defined]
    return control.turns_matching(store.turns_rows(scope), topics, threshold)


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())


def delete_items(
    services: Services, scope: Scope, items: Sequence[MemoryItem], *, reason: str, cascade: bool,
    topic: str | None = None, undo: bool = False,
) -> list[Event]:
    """Delete `items` and every copy of their text (summaries that quote them, working-
    memory turns that say them); a dispute partner left alone becomes active again; with
    `undo` the versions they superseded come back."""
    if not items:
        return []
    if services.settle is not None:  # links made behind: resolved against what is deleted now
        services.settle(scope.user_id)
    store, now = services.store, utcnow()
    if cascade:  # the facts drawn from a deleted episode go with it
        items = list(items) + drawn_from(services, scope, items)
    ids, restore_sources = lifecycle.deletion_plan(store, scope, [i.id for i in items], cascade_summaries=cascade)
    doomed = {i.id: i for i in items}
    for extra in store.get_many([i for i in ids if i not in doomed]):
        doomed[extra.id] = extra
    gone = set(doomed)
    revive: list[Transition] = lifecycle.restore_transitions(restore_sources, now)
    for item in doomed.values():
        if item.status is Status.DISPUTED:
            for partner in disputes.dispute_group(store, item):
                others = [m for m in disputes.dispute_group(store, partner) if m.id not in gone]
                if partner.id not in gone and len(others) < 2:
                    revive.append(Transition(
                        memory_id=partner.id, status=Status.ACTIVE.value, action="RESOLVE",
                        reason="the statement it contradicted was deleted", at=now,
                        from_status=(Status.DISPUTED.value,), metadata={"disputes": None},
                    ))
        if undo and item.supersedes and item.supersedes not in gone:
            # the version it replaced comes back, and the episode that said it (engram.write)
            previous = store.get(item.supersedes)
            episode = previous.metadata.get(EPISODE_KEY) if previous is not None else None
            for back in [item.supersedes] + ([episode] if isinstance(episode, str) and episode not in gone else []):
                revive.append(Transition(
                    memory_id=back, status=Status.ACTIVE.value, action="RESTORE",
                    reason="the statement that replaced it was withdrawn", at=now,
                    from_status=(Status.SUPERSEDED.value,), fields={"valid_to": None, "superseded_by": None},
                ))
    # "forget X" / "forget that": working-memory turns that say it, and pending work that would
    # say it again (a queued background add, a turn waiting for batched LLM extraction), go
    # first. `delete(id)` removes that memory and what derives from it: a working-memory turn
    # only when it is the same text; other turns and queued work are other acknowledged writes
    turn_ids = _said_turns(services, scope, doomed.values(), topic, sweep=topic is not None or undo)
    # a session's delta that quoted one of them is written again without it (a new summary:
    # the old one's history held the forgotten words), unless it was asked for by id
    asked = {i.id for i in items}
    rewritten = [
        new for i in gone if i not in asked
        and (new := delta_without(doomed[i], doomed, services.settings.template_dir)) is not None
    ]
    with store.atomic():
        store.turns_delete(scope, turn_ids)
        store.delete(list(gone), [
            HistoryEvent(i, doomed[i].user_id, "DELETE", None, None, reason, now) for i in gone
        ])
        if rewritten:
            store.write(inserts=[summary_record(r) for r in rewritten], events=[
                HistoryEvent.of(r, "ADD", None, "the session's delta without what was deleted") for r in rewritten
            ])
        if revive:
            store.transition(revive)
    log.debug("deleted %d memories and %d working-memory turns (%s)", len(gone), len(turn_ids),
              "forget" if topic else reason.split(":")[0])
    ordered = [doomed[i.id] for i in items] + [m for k, m in doomed.items() if k not in asked]
    return [Event(action=Action.DELETE, memory=services.display.item(m), reason=reason) for m in ordered] + [
        Event(action=Action.ADD, memory=services.display.item(r), reason="the session's delta without what was deleted")
        for r in rewritten
    ]
