"""/v1/sessions: open or resume a conversation, read its working-memory turns, end it."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from engram.capsule import Delta
from engram.models import Message
from engram.service.deps import Ctx, ctx
from engram.service.schemas import EndBody, SessionBody, SessionInfo

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])


@router.post("", summary="Resume a session, the user's open one, or start one")
def open_session(body: SessionBody, c: Ctx = Depends(ctx)) -> SessionInfo:
    session = c.memory.session(c.user(body.user_id), body.session_id, agent_id=body.agent_id)
    return SessionInfo(user_id=session.user_id, agent_id=session.agent_id, session_id=session.session_id)


@router.get("/{session_id}/turns", summary="Working memory: the recent turns, oldest first")
def turns(session_id: str, user_id: str | None = None, agent_id: str | None = None,
          c: Ctx = Depends(ctx)) -> list[Message]:
    return c.memory.session(c.user(user_id), session_id, agent_id=agent_id).turns()


@router.post("/{session_id}/end", summary="End a session and compress it into a delta")
def end(session_id: str, body: EndBody, c: Ctx = Depends(ctx)) -> Delta:
    return c.memory.end_session(c.user(body.user_id), session_id, agent_id=body.agent_id, reason=body.reason)
