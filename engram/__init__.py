"""engram: local-first long-term memory for AI agents.

    from engram import Memory
    memory = Memory()                       # ~/.engram/engram.db, offline
    memory.add("I live in Berlin", user_id="alice")
    memory.search("where do I live?", user_id="alice")

The names below load on first use (PEP 562): `import engram` stays cheap, so the CLI's
`--help` and scripts that only need a type start fast; `from engram import Memory` loads
the engine.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "AsyncMemory": "engram.aio",
    "AsyncMemoryClient": "engram.client",
    "MemoryClient": "engram.client",
    "Settings": "engram.config",
    "EngramError": "engram.errors",
    "InvalidInput": "engram.errors",
    "NotFound": "engram.errors",
    "MaintenanceReport": "engram.lifecycle",
    "Memory": "engram.memory",
    "ImportReport": "engram.portability",
    "Reminder": "engram.reminders",
    **{name: "engram.models" for name in (
        "Action", "Clarification", "Command", "Event", "Filters", "HistoryEntry", "Kind", "Layer",
        "MemoryItem", "ScoreParts", "SearchResult", "Source", "Status",
    )},
}

__all__ = [  # the names of _EXPORTS (tests/test_startup.py checks they agree)
    "Action", "AsyncMemory", "AsyncMemoryClient", "Clarification", "Command", "EngramError", "Event", "Filters",
    "HistoryEntry", "ImportReport", "InvalidInput", "Kind", "Layer", "MaintenanceReport", "Memory", "MemoryClient",
    "MemoryItem", "NotFound", "Reminder", "ScoreParts", "SearchResult", "Settings", "Source", "Status",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engram' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # type checkers and IDEs see the real names
    from engram.aio import AsyncMemory
    from engram.client import AsyncMemoryClient, MemoryClient
    from engram.config import Settings
    from engram.errors import EngramError, InvalidInput, NotFound
    from engram.lifecycle import MaintenanceReport
    from engram.memory import Memory
    from engram.models import (
        Action,
        Clarification,
        Command,
        Event,
        Filters,
        HistoryEntry,
        Kind,
        Layer,
        MemoryItem,
        ScoreParts,
        SearchResult,
        Source,
        Status,
    )
    from engram.portability import ImportReport
    from engram.reminders import Reminder
