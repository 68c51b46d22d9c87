"""/v1/memories: add, search, list, count, get, update, delete, delete all or by kind,
history, provenance, resolve, restore, complete."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from engram.models import Event, HistoryEntry, MemoryItem, SearchResult
from engram.service.deps import Ctx, ctx
from engram.service.schemas import (
    AddBody, BatchBody, CompleteBody, FlushBody, Count, CountBody, Deleted, ListBody, ResolveBody, SearchBody, UpdateBody,
)

router = APIRouter(prefix="/v1/memories", tags=["memories"])


@router.post("", summary="Remember what matters in messages")
def add(body: AddBody, c: Ctx = Depends(ctx)) -> list[Event]:
    args = body.model_dump(exclude={"messages", "user_id"}, exclude_unset=True)
    return c.memory.add(body.messages, user_id=c.user(body.user_id), **args)


@router.post("/batch", summary="Bulk ingest: many entries in one transaction (add_many)")
def add_many(body: BatchBody, c: Ctx = Depends(ctx)) -> list[Event]:
    entries = [{**entry, "user_id": c.user(entry.get("user_id"))} for entry in body.items]
    return c.memory.add_many(entries)


@router.post("/flush", summary="Wait (at most `timeout` seconds) for queued background adds")
def flush(body: FlushBody, c: Ctx = Depends(ctx)) -> dict[str, bool]:
    return {"done": c.memory.flush(body.timeout)}


@router.post("/search", summary="The memories most relevant to a query")
def search(body: SearchBody, c: Ctx = Depends(ctx)) -> list[SearchResult]:
    args = body.model_dump(exclude={"query", "user_id"}, exclude_unset=True)
    return c.memory.search(body.query, user_id=c.user(body.user_id), **args)


@router.get("", summary="A user's live memories, newest first")
def list_(user_id: str | None = None, agent_id: str | None = None, limit: int | None = 100, offset: int = 0,
          c: Ctx = Depends(ctx)) -> list[MemoryItem]:
    return c.memory.get_all(user_id=c.user(user_id), agent_id=agent_id, limit=limit, offset=offset)


@router.post("/list", summary="A user's memories with filters")
def list_filtered(body: ListBody, c: Ctx = Depends(ctx)) -> list[MemoryItem]:
    return c.memory.get_all(user_id=c.user(body.user_id), agent_id=body.agent_id, filters=body.filters,
                            limit=body.limit, offset=body.offset)


@router.post("/count", summary="How many memories a list would return")
def count(body: CountBody, c: Ctx = Depends(ctx)) -> Count:
    return Count(count=c.memory.count(user_id=c.user(body.user_id), agent_id=body.agent_id, filters=body.filters))


@router.delete("", summary="Delete every memory of a user (or of one of their agents)")
def delete_all(user_id: str | None = None, agent_id: str | None = None, c: Ctx = Depends(ctx)) -> Deleted:
    return Deleted(deleted=c.memory.delete_all(user_id=c.user(user_id), agent_id=agent_id))


@router.delete("/kind/{kind}", summary="Delete every memory of one kind")
def delete_by_kind(kind: str, user_id: str | None = None, agent_id: str | None = None,
                   c: Ctx = Depends(ctx)) -> list[Event]:
    return c.memory.delete_by_kind(kind, user_id=c.user(user_id), agent_id=agent_id)


@router.get("/{memory_id}", summary="One memory")
def get(memory_id: str, c: Ctx = Depends(ctx)) -> MemoryItem:
    return c.owned(memory_id)


@router.patch("/{memory_id}", summary="Edit a memory's text and/or metadata")
def update(memory_id: str, body: UpdateBody, c: Ctx = Depends(ctx)) -> Event:
    if body.content is not None or body.metadata is not None:  # else Memory says "nothing to update"
        c.owned(memory_id)
    return c.memory.update(memory_id, body.content, body.metadata)


@router.delete("/{memory_id}", summary="Delete a memory for real")
def delete(memory_id: str, c: Ctx = Depends(ctx)) -> Event:
    c.owned(memory_id)
    return c.memory.delete(memory_id)


@router.get("/{memory_id}/history", summary="A memory's versions and events")
def history(memory_id: str, c: Ctx = Depends(ctx)) -> list[HistoryEntry]:
    return c.history(memory_id)


@router.get("/{memory_id}/provenance", summary="The episodes a memory was drawn from")
def provenance(memory_id: str, c: Ctx = Depends(ctx)) -> list[MemoryItem]:
    c.owned(memory_id)
    return c.memory.provenance(memory_id)


@router.post("/{memory_id}/resolve", summary="Settle a dispute")
def resolve(memory_id: str, body: ResolveBody, c: Ctx = Depends(ctx)) -> list[Event]:
    c.owned(memory_id)
    return c.memory.resolve(memory_id, body.keep)


@router.post("/{memory_id}/restore", summary="Bring an archived memory back")
def restore(memory_id: str, c: Ctx = Depends(ctx)) -> list[Event]:
    c.owned(memory_id)
    return c.memory.restore(memory_id)


@router.post("/{memory_id}/complete", summary="Mark a task done")
def complete(memory_id: str, body: CompleteBody, c: Ctx = Depends(ctx)) -> Event:
    c.owned(memory_id)
    return c.memory.complete(memory_id, now=body.now, tz=body.tz)
