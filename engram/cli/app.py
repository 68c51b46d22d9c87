"""`engram` commands. Each one is a thin call into `Memory`; rendering lives in `render`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from engram.cli import render
from engram.cli.render import console, print_json
from engram.config import Settings
from engram.errors import EngramError

app = typer.Typer(
    name="engram",
    help="Local-first long-term memory for AI agents (offline by default, English and Chinese).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

_state: dict[str, Path | None] = {"db": None}

UserOpt = Annotated[str, typer.Option("--user", "-u", help="whose memory (required)")]
AgentOpt = Annotated[Optional[str], typer.Option("--agent", help="narrow to one agent")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable output")]


@app.callback()
def main(
    db: Annotated[
        Optional[Path], typer.Option("--db", help="database file (default $ENGRAM_PATH or ~/.engram/engram.db)")
    ] = None,
) -> None:
    _state["db"] = db


def settings() -> Settings:
    db = _state["db"]
    return Settings(path=db) if db is not None else Settings()


def open_memory():
    from engram.memory import Memory

    return Memory(settings=settings())


def fail(message: str) -> None:
    console.print(f"[red]error:[/] {message}")
    raise typer.Exit(1)


def run(action):
    """Run `action(memory)`, turning engram's errors into a clear message and exit 1."""
    try:
        memory = open_memory()
    except (EngramError, ValueError) as exc:
        fail(str(exc))
    try:
        return action(memory)
    except EngramError as exc:
        fail(str(exc))
    finally:
        memory.close()


@app.command()
def add(
    text: str,
    user: UserOpt,
    agent: AgentOpt = None,
    session: Annotated[Optional[str], typer.Option("--session", "-s")] = None,
    raw: Annotated[bool, typer.Option("--raw", help="store verbatim as a turn (infer=False)")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Tell engram something; it keeps what is worth remembering."""
    events = run(lambda m: m.add(text, user_id=user, agent_id=agent, session_id=session, infer=not raw))
    if as_json:
        print_json(events)
    elif events:
        console.print(render.events_table(events))
    else:
        console.print("[dim]nothing worth remembering in that (no memory stored)[/]")


@app.command()
def search(
    query: str,
    user: UserOpt,
    agent: AgentOpt = None,
    k: Annotated[int, typer.Option("-k", "--limit", min=1)] = 5,
    kind: Annotated[Optional[list[str]], typer.Option("--kind")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the memories most relevant to QUERY."""
    filters = {"kind": kind} if kind else None
    results = run(lambda m: m.search(query, user_id=user, agent_id=agent, limit=k, filters=filters))
    if as_json:
        print_json(results)
    elif results:
        console.print(render.results_table(results))
    else:
        console.print("[dim]no memories found[/]")


@app.command("list")
def list_(
    user: UserOpt,
    agent: AgentOpt = None,
    status: Annotated[Optional[list[str]], typer.Option("--status", help="active (default), superseded, disputed, archived")] = None,
    kind: Annotated[Optional[list[str]], typer.Option("--kind")] = None,
    every: Annotated[bool, typer.Option("--all", help="every status")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 100,
    as_json: JsonOpt = False,
) -> None:
    """List a user's memories, newest first."""
    filters: dict = {}
    if every:
        filters["status"] = []
    elif status:
        filters["status"] = status
    if kind:
        filters["kind"] = kind
    items = run(lambda m: m.get_all(user_id=user, agent_id=agent, filters=filters, limit=limit))
    if as_json:
        print_json(items)
    else:
        console.print(render.memories_table(items, title=f"memories of {user}"))


@app.command()
def get(memory_id: str, as_json: JsonOpt = False) -> None:
    """Show one memory with all its metadata."""
    item = run(lambda m: m.get(memory_id))
    if as_json:
        print_json(item)
    else:
        console.print(render.memories_table([item]))
        console.print(item.model_dump(exclude={"content"}, mode="json"))


@app.command()
def edit(
    memory_id: str,
    text: Annotated[str, typer.Argument(help="the new text")],
) -> None:
    """Replace a memory's text (history keeps the old one)."""
    event = run(lambda m: m.update(memory_id, content=text))
    console.print(render.events_table([event]))


@app.command()
def delete(
    memory_id: Annotated[Optional[str], typer.Argument()] = None,
    user: Annotated[Optional[str], typer.Option("--user", "-u")] = None,
    agent: AgentOpt = None,
    everything: Annotated[bool, typer.Option("--all", help="delete every memory of --user")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask")] = False,
) -> None:
    """Delete one memory, or with --all --user U every memory of a user. Deletion is real."""
    if everything:
        if not user:
            fail("--all needs --user")
        if not yes:
            typer.confirm(f"Delete every memory of {user}?", abort=True)
        count = run(lambda m: m.delete_all(user_id=user, agent_id=agent))
        console.print(f"deleted {count} memories of {user}")
        return
    if not memory_id:
        fail("give a memory id, or --all --user U")
    event = run(lambda m: m.delete(memory_id))
    console.print(render.events_table([event]))


@app.command()
def history(memory_id: str, as_json: JsonOpt = False) -> None:
    """The audit trail of one memory."""
    entries = run(lambda m: m.history(memory_id))
    if as_json:
        print_json(entries)
    else:
        console.print(render.history_table(entries, title=f"history of {memory_id}"))


@app.command()
def config(as_json: JsonOpt = False) -> None:
    """Print the effective configuration (arguments > ENGRAM_* > config file > defaults)."""
    from engram.config import config_file_path

    try:
        data = settings().public_dict()
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        print_json(data)
        return
    from rich.table import Table

    table = Table(title=f"engram config (file: {config_file_path()})")
    table.add_column("setting")
    table.add_column("value")
    for name, value in data.items():
        table.add_row(name, "" if value is None else str(value))
    console.print(table)


@app.command()
def demo(
    db: Annotated[Optional[Path], typer.Option("--db", help="keep the demo database here (default: a temporary file)")] = None,
) -> None:
    """A scripted two-session story in English and Chinese, offline, on the embedded default."""
    from engram.cli.demo import run_demo

    run_demo(db)
