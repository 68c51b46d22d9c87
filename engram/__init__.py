"""engram: local-first long-term memory for AI agents.

    from engram import Memory
    memory = Memory()                       # ~/.engram/engram.db, offline
    memory.add("I live in Berlin", user_id="alice")
    memory.search("where do I live?", user_id="alice")
"""

from engram.aio import AsyncMemory
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

__all__ = [
    "Action",
    "AsyncMemory",
    "Clarification",
    "Command",
    "EngramError",
    "Event",
    "Filters",
    "HistoryEntry",
    "ImportReport",
    "InvalidInput",
    "Kind",
    "Layer",
    "MaintenanceReport",
    "Memory",
    "MemoryItem",
    "NotFound",
    "Reminder",
    "ScoreParts",
    "SearchResult",
    "Settings",
    "Source",
    "Status",
]
__version__ = "0.1.0"
