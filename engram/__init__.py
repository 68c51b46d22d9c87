"""engram: local-first long-term memory for AI agents.

    from engram import Memory
    memory = Memory()                       # ~/.engram/engram.db, offline
    memory.add("I live in Berlin", user_id="alice")
    memory.search("where do I live?", user_id="alice")
"""

from engram.aio import AsyncMemory
from engram.config import Settings
from engram.errors import EngramError, InvalidInput, NotFound
from engram.memory import Memory
from engram.models import (
    Action,
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

__all__ = [
    "Action",
    "AsyncMemory",
    "EngramError",
    "Event",
    "Filters",
    "HistoryEntry",
    "InvalidInput",
    "Kind",
    "Layer",
    "Memory",
    "MemoryItem",
    "NotFound",
    "ScoreParts",
    "SearchResult",
    "Settings",
    "Source",
    "Status",
]
__version__ = "0.1.0"
