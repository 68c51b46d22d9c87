"""`engram mcp`: engram's memory as Model Context Protocol tools, on the official `mcp` SDK (2.x).

Whose memory a call reaches is never a tool argument. Over stdio it is the one user the server
was started for (``--user`` / ``ENGRAM_USER``); over HTTP it is the user of the API key in the
request's ``Authorization: Bearer …`` header (an admin key names its user in ``X-Engram-User``).
`CallerMiddleware` resolves it for every inbound message and the tools read it from a context
variable, so a tool cannot be talked into another user's memories.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from engram import __version__
from engram.errors import EngramError, NotFound
from engram.kinds import Kind

if TYPE_CHECKING:  # pragma: no cover
    from engram.aio import AsyncMemory

USER_STATE = "engram_user"  # where the HTTP layer (engram.service.mcp_http) leaves the caller's user
CAPSULE_URI = "engram://capsule"

_current_user: contextvars.ContextVar[str | None] = contextvars.ContextVar("engram_mcp_user", default=None)

INSTRUCTIONS = """\
Long-term memory about the user you are talking to (engram). Call `context` with the user's \
message before answering to see what is remembered that matters now; call `remember` when the \
user tells you something worth keeping (preferences, facts about them, tasks, decisions); \
`recall` searches; `forget` deletes what the user asks you to forget. Memories are only ever the \
current user's own."""


class CallerMiddleware:
    """Sets the user for the message being handled: over HTTP the one `KeyGate` verified for this
    request, else the server's fixed user. A tool called with neither fails (`current_user`)."""

    def __init__(self, fixed_user: str | None) -> None:
        self.fixed_user = fixed_user

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        user = self.fixed_user
        request = getattr(ctx, "request", None)
        if request is not None:  # HTTP: the key decides, whatever the server was started with
            user = getattr(request, "scope", {}).get("state", {}).get(USER_STATE)
        token = _current_user.set(user)
        try:
            return await call_next(ctx)
        finally:
            _current_user.reset(token)


def current_user() -> str:
    user = _current_user.get()
    if not user:
        raise ToolError("no user for this connection: start the server with --user, or send an engram API key")
    return user


async def _call(action: Callable[[], Awaitable[Any]]) -> Any:
    """engram's own errors become tool errors the model can read (bad input is not a crash)."""
    try:
        return await action()
    except EngramError as exc:
        raise ToolError(str(exc)) from None


def _item(item: Any) -> dict[str, Any]:
    return {"id": item.id, "content": item.content, "kind": item.kind.value, "created_at": item.created_at.isoformat()}


def _event(event: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"action": event.action.value}
    if event.memory is not None:
        out.update(id=event.memory.id, content=event.memory.content, kind=event.memory.kind.value)
    if event.reason:
        out["reason"] = event.reason
    return out


Text = Annotated[str, Field(min_length=1, description="what the user said, in their own words (any language)")]
Session = Annotated[str | None, Field(default=None, max_length=200, description="conversation id, to group turns")]
Limit = Annotated[int, Field(ge=1, le=100)]


def build_server(memory: AsyncMemory, *, user: str | None = None, name: str = "engram") -> MCPServer:
    """An MCP server over `memory`. `user`: the one user of a stdio server; over HTTP the key decides."""
    server = MCPServer(name, version=__version__, instructions=INSTRUCTIONS, middleware=[CallerMiddleware(user)],
                       log_level="WARNING")
    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    destructive = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    async def remember(text: Text, session_id: Session = None) -> dict[str, Any]:
        """Remember what the user said: preferences, facts about them, tasks and deadlines, decisions,
        how they want you to behave. Pass their words; engram extracts and reconciles the memories
        (an update replaces the old version, a contradiction is kept as a question). Returns what changed."""
        events = await _call(lambda: memory.add(text, user_id=current_user(), session_id=session_id))
        return {"events": [_event(e) for e in events], "paused": await memory.is_paused(current_user())}

    @server.tool(annotations=readonly)
    async def recall(
        query: Annotated[str, Field(min_length=1, description="what to look for, in any language")],
        limit: Limit = 5,
    ) -> list[dict[str, Any]]:
        """Search the user's memories, best first. Each hit has its relevance (0-1); a disputed memory
        comes with the clarifying question to ask before relying on it."""
        hits = await _call(lambda: memory.search(query, user_id=current_user(), limit=limit))
        return [{**_item(h.memory), "relevance": round(h.relevance, 3),
                 **({"clarification": h.clarification.question} if h.clarification else {})} for h in hits]

    @server.tool(annotations=readonly)
    async def context(
        message: Annotated[str, Field(min_length=1, description="the user's current message")],
        session_id: Session = None,
        budget: Annotated[int | None, Field(default=None, ge=32, le=8192, description="token budget")] = None,
    ) -> str:
        """What to know about the user before answering this message: their long-term memory capsule,
        the memories relevant to it, open questions and due reminders, as one block of text within a
        token budget. Call it at the start of a turn."""
        found = await _call(lambda: memory.context(message, user_id=current_user(), session_id=session_id,
                                                   budget=budget))
        return found.text or "(nothing remembered about this user yet)"

    @server.tool(annotations=destructive)
    async def forget(
        about: Annotated[str, Field(min_length=1, description="the topic to forget, e.g. 'my address'")],
    ) -> dict[str, Any]:
        """Delete for real every memory about a topic, when the user asks you to forget something.
        Returns the memories deleted."""
        events = await _call(lambda: memory.forget(about, user_id=current_user()))
        gone = [_event(e) for e in events if e.memory is not None]
        return {"deleted": len(gone), "memories": gone}

    @server.tool(annotations=readonly)
    async def list_memories(
        kind: Annotated[Kind | None, Field(default=None, description="only this kind")] = None,
        limit: Limit = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> list[dict[str, Any]]:
        """List what is remembered about the user, newest first (live memories; one kind if given)."""
        filters = {"kind": [kind]} if kind is not None else None
        items = await _call(lambda: memory.get_all(user_id=current_user(), filters=filters, limit=limit,
                                                   offset=offset))
        return [_item(i) for i in items]

    @server.tool(annotations=destructive)
    async def delete_memory(
        memory_id: Annotated[str, Field(min_length=1, max_length=200,
                                        description="an id from recall or list_memories")],
    ) -> dict[str, Any]:
        """Delete one memory for real, by id."""
        user = current_user()

        async def delete() -> Any:
            item = await memory.get(memory_id)
            if item.user_id != user:  # another user's id looks exactly like an unknown one
                raise NotFound(f"no memory with id {memory_id!r}")
            return await memory.delete(memory_id)

        event = await _call(delete)
        return _event(event)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    async def end_session(session_id: Annotated[str, Field(min_length=1, max_length=200)]) -> dict[str, Any]:
        """End a conversation: its memories are compressed into a summary and the capsule is rebuilt."""
        delta = await _call(lambda: memory.end_session(current_user(), session_id))
        return {"summary": delta.text, "sources": len(delta.sources), "already_ended": delta.already_ended}

    @server.resource(CAPSULE_URI, name="capsule", mime_type="text/plain",
                     description="The user's long-term memory as the compact block put in front of the model")
    async def capsule() -> str:
        user = _current_user.get()
        if not user:
            raise NotFound("no user for this connection")
        found = await memory.capsule(user)
        return found.text

    return server
