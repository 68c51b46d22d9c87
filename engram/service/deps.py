"""What every route needs: the `Memory`, the caller, and the ownership rule for memory ids.

A memory id names one user's memory: a key that does not reach that user gets 404, the
same answer as for an id that does not exist (an id never reveals that it is someone else's).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Depends, Request

from engram.errors import NotFound
from engram.memory import Memory
from engram.models import HistoryEntry, MemoryItem
from engram.service.auth import Caller, caller, scoped_user


@dataclass(frozen=True, slots=True)
class Ctx:
    """One request: the engine and who is calling."""

    memory: Memory
    caller: Caller

    def user(self, requested: str | None) -> str:
        """The user this call may act for (see `scoped_user`)."""
        return scoped_user(self.caller, requested)

    def reaches(self, user_id: str) -> bool:
        return self.caller.admin or user_id == self.caller.user_id

    def owned(self, memory_id: str) -> MemoryItem:
        """The memory, if this caller reaches its user; else NotFound (404)."""
        item = self.memory.get(memory_id)
        if not self.reaches(item.user_id):
            raise NotFound(f"no memory with id {memory_id!r}")
        return item

    def history(self, memory_id: str) -> list[HistoryEntry]:
        """A memory's history if this caller reaches its user, also for a deleted memory
        (its history rows name the user)."""
        entries = self.memory.history(memory_id)
        if entries and not self.reaches(entries[0].user_id):
            raise NotFound(f"no memory with id {memory_id!r}")
        return entries


def memory_of(request: Request) -> Memory:
    return request.app.state.memory


async def ctx(request: Request, who: Caller = Depends(caller)) -> Ctx:
    """FastAPI dependency for every /v1 route (async: it does no I/O, so no thread hop; the
    key lookup in `caller` and the route itself run in the threadpool)."""
    return Ctx(memory_of(request), who)
