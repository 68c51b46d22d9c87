"""Regenerate engram/aio.py's methods from `Memory`'s signatures (run after changing `Memory`).

    python scripts/gen_aio.py > engram/aio.py

Each public `Memory` method becomes an `async def` with the same parameters, annotations and
first docstring line, so IDEs and type checkers see real signatures; the body is one thread hop.
tests/test_aio.py checks the file is current.
"""

from __future__ import annotations

import ast
from pathlib import Path

MEMORY = Path(__file__).resolve().parent.parent / "engram" / "memory.py"
SKIP = {"close", "session", "from_config"}  # written by hand in the template below

HEADER = '''"""`AsyncMemory`: the same engine for asyncio code, one thread hop per call.

There is one implementation (the sync `Memory`); every method here runs it in a worker thread
so an event loop is never blocked. The methods are generated from `Memory`'s signatures by
scripts/gen_aio.py (do not edit them by hand), so IDEs and type checkers see the real ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, TypeVar

from engram import lifecycle, portability, reminders
from engram.capsule import Capsule, Context, Delta
from engram.config import Settings
from engram.memory import Memory
from engram.models import Clarification, Event, Filters, HistoryEntry, Kind, MemoryItem, SearchResult
from engram.session import Session
from engram.validate import MessagesInput

T = TypeVar("T")


async def _hop(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(call, *args, **kwargs)


class AsyncSession:
    """`async with amem.session("alice") as s:` — a `Session` whose calls are awaited;
    leaving the block ends the session (its delta), as the sync one does."""

    def __init__(self, session: Session) -> None:
        self.sync = session
        self.user_id, self.agent_id, self.session_id = session.user_id, session.agent_id, session.session_id

    async def add(self, messages: MessagesInput, **kwargs: Any) -> list[Event]:
        return await _hop(self.sync.add, messages, **kwargs)

    async def context(self, query: str, **kwargs: Any) -> Context:
        return await _hop(self.sync.context, query, **kwargs)

    async def turns(self) -> list[Any]:
        return await _hop(self.sync.turns)

    async def end(self, reason: str = "explicit") -> Delta:
        return await _hop(self.sync.end, reason)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.end()


class AsyncMemory:
    """Async facade: ``await AsyncMemory().add(...)``; attributes mirror `Memory`."""

    def __init__(self, *args: Any, memory: Memory | None = None, **kwargs: Any) -> None:
        self.sync = memory or Memory(*args, **kwargs)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AsyncMemory:
        """mem0's ``from_config`` shape (see `Memory.from_config`)."""
        return cls(memory=Memory.from_config(config))

    def __getattr__(self, name: str) -> Any:  # settings, store, privacy, … pass through
        return getattr(self.sync, name)

    def session(self, user_id: str, session_id: str | None = None, *, agent_id: str | None = None) -> AsyncSession:
        """Use as ``async with amem.session(user_id) as s``; opening reads the store (fast, no thread hop)."""
        return AsyncSession(self.sync.session(user_id, session_id, agent_id=agent_id))

    async def close(self) -> None:
        await _hop(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
'''


def _call(args: ast.arguments) -> str:
    parts = [a.arg for a in args.posonlyargs + args.args][1:]  # without self
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return ", ".join(parts)


def generate() -> str:
    source = MEMORY.read_text(encoding="utf-8")
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Memory")
    out = [HEADER]
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_") or node.name in SKIP:
            continue
        if any(isinstance(d, ast.Name) and d.id in ("property", "classmethod", "staticmethod") for d in node.decorator_list):
            continue
        if any(isinstance(d, ast.Attribute) for d in node.decorator_list):  # property setters
            continue
        header = ast.get_source_segment(source, node).split("\n")
        signature = []
        for line in header:
            signature.append(line)
            if line.rstrip().endswith(":") and ")" in line:
                break
        text = "    async " + "\n".join(signature)  # the segment starts at "def", without its indent
        doc = ast.get_docstring(node)
        first = doc.strip().splitlines()[0].rstrip('"').rstrip() if doc else f"`Memory.{node.name}`, awaited."
        call = f"_hop(self.sync.{node.name}{', ' if _call(node.args) else ''}{_call(node.args)})"
        if len(call) > 100:
            call = f"_hop(\n            self.sync.{node.name}, {_call(node.args)},\n        )"
        out.append(f'\n{text}\n        """{first}"""\n        return await {call}\n')
    return "".join(out)


if __name__ == "__main__":
    print(generate(), end="")
