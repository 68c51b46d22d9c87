"""Rich rendering of memories, results and history for the terminal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from engram.models import Event, HistoryEntry, MemoryItem, SearchResult

console = Console()

_ACTION_STYLE = {
    "ADD": "green", "UPDATE": "cyan", "SUPERSEDE": "yellow", "DISPUTE": "magenta",
    "NOOP": "dim", "DELETE": "red",
}
_STATUS_STYLE = {"active": "green", "superseded": "yellow", "disputed": "magenta", "archived": "dim"}


def print_json(data: Any) -> None:
    """Machine-readable output for scripts (`--json`)."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [d.model_dump(mode="json") if isinstance(d, BaseModel) else d for d in data]
    console.print_json(json.dumps(data, ensure_ascii=False, default=str))


def _when(item: MemoryItem) -> str:
    return item.created_at.strftime("%Y-%m-%d %H:%M")


def events_table(events: Sequence[Event], title: str = "") -> Table:
    table = Table(title=title or None, show_lines=False)
    table.add_column("action")
    table.add_column("kind")
    table.add_column("memory")
    table.add_column("why", style="dim")
    table.add_column("id", style="dim")
    for event in events:
        style = _ACTION_STYLE.get(event.action.value, "")
        table.add_row(
            f"[{style}]{event.action.value}[/]", event.memory.kind.value, event.memory.content,
            event.reason, event.memory.id,
        )
    return table


def memories_table(items: Sequence[MemoryItem], title: str = "") -> Table:
    table = Table(title=title or None)
    table.add_column("kind")
    table.add_column("memory")
    table.add_column("status")
    table.add_column("layer", style="dim")
    table.add_column("when", style="dim")
    table.add_column("id", style="dim")
    for item in items:
        style = _STATUS_STYLE.get(item.status.value, "")
        table.add_row(
            item.kind.value, item.content, f"[{style}]{item.status.value}[/]",
            item.layer.value, _when(item), item.id,
        )
    return table


def results_table(results: Sequence[SearchResult], title: str = "") -> Table:
    table = Table(title=title or None)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("memory")
    table.add_column("kind", style="dim")
    table.add_column("lex/dense rank", style="dim")
    table.add_column("id", style="dim")
    for rank, result in enumerate(results, 1):
        parts = result.parts
        table.add_row(
            str(rank), f"{result.score:.3f}", result.memory.content, result.memory.kind.value,
            f"{parts.lexical_rank or '-'} / {parts.dense_rank or '-'}", result.memory.id,
        )
    return table


def history_table(entries: Sequence[HistoryEntry], title: str = "") -> Table:
    table = Table(title=title or None)
    table.add_column("when", style="dim")
    table.add_column("action")
    table.add_column("old")
    table.add_column("new")
    table.add_column("why", style="dim")
    for entry in entries:
        style = _ACTION_STYLE.get(entry.action, "")
        table.add_row(
            entry.created_at.strftime("%Y-%m-%d %H:%M:%S"), f"[{style}]{entry.action}[/]",
            entry.old_content or "", entry.new_content or "", entry.reason,
        )
    return table
