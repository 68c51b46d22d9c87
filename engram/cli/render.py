"""Rich rendering of memories, results and history for the terminal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from engram.kinds import Source

if TYPE_CHECKING:  # the models load with the first command that shows one, not for --help
    from engram.models import Event, HistoryEntry, MemoryItem, SearchResult

# Stored text is shown exactly as stored: never read as markup ("[/]", "list[str]") or emoji codes (":coffee:").
console = Console(emoji=False, highlight=False)
errors = Console(stderr=True, emoji=False, highlight=False)  # errors and notices: stdout stays for data


def plain(text: str | None) -> Text:
    """A table cell or line of user text, shown verbatim (Rich never parses it)."""
    return Text(text or "")


def short_id(memory_id: str | None) -> str:
    """The first 8 characters of an id: unique in practice, and every command accepts a unique prefix."""
    return (memory_id or "")[:8]

_ACTION_STYLE = {
    "ADD": "green", "UPDATE": "cyan", "SUPERSEDE": "yellow", "DISPUTE": "magenta",
    "NOOP": "dim", "DELETE": "red", "RESOLVE": "cyan", "ARCHIVE": "dim", "RESTORE": "green",
    "MERGE": "blue", "VIEW": "", "PAUSE": "yellow", "RESUME": "green",
}
_STATUS_STYLE = {"active": "green", "superseded": "yellow", "disputed": "magenta", "archived": "dim"}


def kind_label(item: MemoryItem) -> str:
    """A memory's kind as a person reads it: a kept user turn is an "episode"."""
    return "episode" if item.source is Source.EPISODE else item.kind.value


@contextmanager
def progress_bar(description: str, *, disable: bool = False) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr for long work; yields ``update(done, total, what="")``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=errors, transient=True, disable=disable,
    ) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int, what: str = "") -> None:
            bar.update(task, completed=done, total=total, description=what or description)

        yield update


def print_json(data: Any) -> None:
    """Machine-readable output for scripts (`--json`)."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [d.model_dump(mode="json") if hasattr(d, "model_dump") else d for d in data]
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))  # only JSON: no wrapping, no colour


def _when(item: MemoryItem) -> str:
    return item.created_at.strftime("%Y-%m-%d %H:%M")


def events_table(events: Sequence[Event], title: str = "") -> Table:
    table = Table(title=plain(title) if title else None, show_lines=False)
    table.add_column("action")
    table.add_column("kind")
    table.add_column("memory", overflow="fold", ratio=3)
    table.add_column("why", style="dim")
    table.add_column("id", style="dim", overflow="fold", min_width=8)
    for event in events:
        style = _ACTION_STYLE.get(event.action.value, "")
        item = event.memory
        table.add_row(
            f"[{style}]{event.action.value}[/]", kind_label(item) if item else "",
            plain(item.content if item else ""), plain(event.reason), short_id(item.id if item else ""),
        )
    return table


def memories_table(items: Sequence[MemoryItem], title: str = "") -> Table:
    table = Table(title=plain(title) if title else None)
    table.add_column("kind")
    table.add_column("memory", overflow="fold", ratio=3)
    table.add_column("status")
    table.add_column("layer", style="dim")
    table.add_column("when", style="dim")
    table.add_column("id", style="dim", overflow="fold", min_width=8)
    for item in items:
        style = _STATUS_STYLE.get(item.status.value, "")
        table.add_row(
            kind_label(item), plain(item.content), f"[{style}]{item.status.value}[/]",
            item.layer.value, _when(item), short_id(item.id),
        )
    return table


def results_table(results: Sequence[SearchResult], title: str = "") -> Table:
    table = Table(title=plain(title) if title else None)
    table.add_column("#", justify="right")
    table.add_column("relevance", justify="right")
    table.add_column("score", justify="right", style="dim")
    table.add_column("memory", overflow="fold", ratio=3)
    table.add_column("kind", style="dim")
    table.add_column("lex/dense rank", style="dim")
    table.add_column("id", style="dim", overflow="fold", min_width=8)
    for rank, result in enumerate(results, 1):
        parts = result.parts
        table.add_row(
            str(rank), f"{result.relevance:.2f}", f"{result.score:.3f}", plain(result.memory.content), kind_label(result.memory),
            f"{parts.lexical_rank or '-'} / {parts.dense_rank or '-'}", short_id(result.memory.id),
        )
    return table


def history_table(entries: Sequence[HistoryEntry], title: str = "") -> Table:
    table = Table(title=plain(title) if title else None)
    table.add_column("when", style="dim")
    table.add_column("action")
    table.add_column("old")
    table.add_column("new")
    table.add_column("why", style="dim")
    for entry in entries:
        style = _ACTION_STYLE.get(entry.action, "")
        table.add_row(
            entry.created_at.strftime("%Y-%m-%d %H:%M:%S"), f"[{style}]{entry.action}[/]",
            plain(entry.old_content), plain(entry.new_content), plain(entry.reason),
        )
    return table


# -- capsule and context (what is injected, exactly) ---------------------------------
def injected_text(text: str, tokens: int, budget: int, encoding: str, what: str) -> None:
    """Print the injected block verbatim (no markup interpretation), then its size."""
    if text:
        typer.echo(text)  # verbatim: no wrapping, no markup
    else:
        errors.print(f"[dim](empty {what}: nothing would be injected)[/]")
    errors.print(f"[dim]── {what}: {tokens} tokens of {budget} ({encoding})[/]")


def lines_table(lines: Sequence[Any], title: str = "", origin: str = "") -> Table:
    table = Table(title=plain(title) if title else None)
    table.add_column("section")
    table.add_column("line")
    table.add_column("score", justify="right", style="dim")
    table.add_column("tokens", justify="right", style="dim")
    if origin:
        table.add_column("from", style="dim")
    table.add_column("id", style="dim", overflow="fold", min_width=8)
    for line in lines:
        marks = (" (updated)" if line.updated else "") + (" (unconfirmed)" if line.disputed else "")
        row: list[Any] = [line.section, plain(line.text + marks), f"{line.score:.3f}", str(line.tokens)]
        if origin:
            row.append(origin)
        table.add_row(*row, short_id(line.memory_id))
    return table


def left_out_table(left_out: Sequence[Any], title: str = "left out") -> Table:
    table = Table(title=title)
    table.add_column("reason")
    table.add_column("memory", overflow="fold", ratio=3)
    table.add_column("score", justify="right", style="dim")
    table.add_column("id", style="dim", overflow="fold", min_width=8)
    for entry in left_out:
        table.add_row(plain(entry.reason), plain(entry.content), f"{entry.score:.3f}", short_id(entry.memory_id))
    return table



def print_grouped(grouped: dict[Any, Sequence[MemoryItem]], user: str) -> None:
    """`engram list --by-kind`: what is remembered about a user, one table per kind."""
    if not grouped:
        console.print(Text(f"nothing remembered about {user}", style="dim"))
        return
    for kind, items in grouped.items():
        table = Table(title=f"{getattr(kind, 'value', kind)} ({len(items)})", title_justify="left")
        table.add_column("memory", overflow="fold", ratio=3)
        table.add_column("status")
        table.add_column("when", style="dim")
        table.add_column("id", style="dim", overflow="fold", min_width=8)
        for item in items:
            style = _STATUS_STYLE.get(item.status.value, "")
            table.add_row(plain(item.content), f"[{style}]{item.status.value}[/]", _when(item), short_id(item.id))
        console.print(table)


def maintenance_table(report: Any) -> Table:
    table = Table(title=f"maintenance ({report.seconds:.2f}s)")
    table.add_column("what")
    table.add_column("count", justify="right")
    for label, value in (
        ("users", report.users), ("memories scanned", report.scanned),
        ("archived (decayed, unused)", report.archived), ("evicted (capacity)", report.evicted),
        ("summaries made by merging", report.merged_groups), ("memories merged", report.merged_sources),
        ("left alone (changed meanwhile)", report.skipped),
    ):
        table.add_row(label, str(value))
    return table


def reminders_table(found: Sequence[Any], zone: Any = None) -> Table:
    """Due times in `zone` (the user's), labelled with it: never unlabelled UTC."""
    table = Table(title="reminders")
    table.add_column("due")
    table.add_column("task")
    table.add_column("id", style="dim", overflow="fold", min_width=8)
    for r in found:
        style = "red" if r.overdue else "yellow"
        local = r.due_at.astimezone(zone) if zone is not None else r.due_at
        when = local.strftime("%Y-%m-%d %H:%M %Z") + (" (recurring)" if r.recurring else "")
        table.add_row(f"[{style}]{when}[/]", plain(r.text), short_id(r.memory.id))
    return table
