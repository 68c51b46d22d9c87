"""/v1 per-user operations: capsule, context, forget, clarifications, pause/resume, time
zone, reminders, export/import, maintenance, compression."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from fastapi import APIRouter, Depends

from engram.capsule import Capsule, Context, Delta
from engram.errors import InvalidInput
from engram.graph.view import UserGraph
from engram.lifecycle import MaintenanceReport
from engram.models import Clarification
from engram.portability import ImportReport
from engram.reminders import Reminder
from engram.service.deps import Ctx, ctx
from engram.service.schemas import (
    ContextBody, ExportBody, ForgetBody, ImportBody, MaintainBody, Paused, Scoped, TimezoneBody, UserBody,
)

router = APIRouter(prefix="/v1", tags=["users"])


@router.get("/capsule", summary="The user's long-term memory within a token budget")
def capsule(user_id: str | None = None, agent_id: str | None = None, budget: int | None = None,
            language: str | None = None, c: Ctx = Depends(ctx)) -> Capsule:
    return c.memory.capsule(c.user(user_id), agent_id=agent_id, budget=budget, language=language)


@router.get("/graph", summary="The user's entities and relations (the entity graph)")
def graph(user_id: str | None = None, c: Ctx = Depends(ctx)) -> UserGraph:
    return c.memory.graph(c.user(user_id))


@router.post("/context", summary="What to put in front of the LLM for this turn")
def context(body: ContextBody, c: Ctx = Depends(ctx)) -> Context:
    args = body.model_dump(exclude={"query", "user_id"}, exclude_unset=True)
    return c.memory.context(body.query, user_id=c.user(body.user_id), **args)


@router.post("/forget", summary="Delete exactly the memories about a topic")
def forget(body: ForgetBody, c: Ctx = Depends(ctx)) -> list[Any]:
    return c.memory.forget(body.about, user_id=c.user(body.user_id), agent_id=body.agent_id, dry_run=body.dry_run)


@router.get("/clarifications", summary="Open questions about disputed memories")
def clarifications(user_id: str | None = None, agent_id: str | None = None, limit: int | None = None,
                   c: Ctx = Depends(ctx)) -> list[Clarification]:
    return c.memory.clarifications(user_id=c.user(user_id), agent_id=agent_id, limit=limit)


@router.post("/pause", summary="Stop remembering for the user")
def pause(body: UserBody, c: Ctx = Depends(ctx)) -> Paused:
    user_id = c.user(body.user_id)
    c.memory.pause(user_id)
    return Paused(user_id=user_id, paused=True)


@router.post("/resume", summary="Remember again")
def resume(body: UserBody, c: Ctx = Depends(ctx)) -> Paused:
    user_id = c.user(body.user_id)
    c.memory.resume(user_id)
    return Paused(user_id=user_id, paused=False)


@router.get("/paused", summary="Whether the user's memory is paused")
def paused(user_id: str | None = None, c: Ctx = Depends(ctx)) -> Paused:
    user_id = c.user(user_id)
    return Paused(user_id=user_id, paused=c.memory.is_paused(user_id))


@router.put("/timezone", summary="The user's IANA time zone (null: the server's setting)")
def set_timezone(body: TimezoneBody, c: Ctx = Depends(ctx)) -> dict[str, Any]:
    user_id = c.user(body.user_id)
    c.memory.set_timezone(user_id, body.tz)
    return {"user_id": user_id, "tz": body.tz}


@router.get("/timezone", summary="The user's time zone (their own, else the server's)")
def get_timezone(user_id: str | None = None, c: Ctx = Depends(ctx)) -> dict[str, Any]:
    user_id = c.user(user_id)
    zone = c.memory.timezone(user_id)
    return {"user_id": user_id, "tz": getattr(zone, "key", None) or str(zone)}


@router.get("/reminders", summary="Tasks due within a horizon")
def reminders(user_id: str | None = None, agent_id: str | None = None, now: datetime | None = None,
              horizon_hours: float | None = None, tz: str | None = None, c: Ctx = Depends(ctx)) -> list[Reminder]:
    horizon = None
    if horizon_hours is not None:
        if not 0 < horizon_hours <= 876_000:
            raise InvalidInput("horizon_hours must be a positive number of hours (at most 100 years)")
        horizon = timedelta(hours=horizon_hours)
    return c.memory.reminders(user_id=c.user(user_id), agent_id=agent_id, now=now, horizon=horizon, tz=tz)


@router.post("/export", summary="A user's memories as engram JSON or an OptMem file")
def export(body: ExportBody, c: Ctx = Depends(ctx)) -> Any:
    return c.memory.export(user_id=c.user(body.user_id), agent_id=body.agent_id, format=body.format,
                           history=body.history)


@router.post("/import", summary="Load an export into the user")
def import_(body: ImportBody, c: Ctx = Depends(ctx)) -> ImportReport:
    return c.memory.import_(body.data, user_id=c.user(body.user_id), agent_id=body.agent_id,
                            on_conflict=body.on_conflict)


@router.post("/maintain", summary="Archive decayed memories, enforce capacity, merge duplicates")
def maintain(body: MaintainBody, c: Ctx = Depends(ctx)) -> MaintenanceReport:
    every_user = c.caller.admin and body.user_id is None
    return c.memory.maintain(None if every_user else c.user(body.user_id), now=body.now)


@router.post("/compress", summary="One delta of everything written since the last one")
def compress(body: Scoped, c: Ctx = Depends(ctx)) -> Delta:
    return c.memory.compress(c.user(body.user_id), agent_id=body.agent_id)
