"""`engram` commands. Each one is a thin call into `Memory`; rendering lives in `render`."""

from __future__ import annotations

import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

import engram.cli.render as render
from engram.cli.chat import chat as _chat
from engram.cli.graph import show as show_graph
from engram.cli.render import console, print_json
from engram.cli.bench import bench_app
from engram.cli.options import STDIO, check_db, open_memory, read_text, settings, state as _state
from engram.errors import EngramError
from engram.kinds import Kind, Status

app = typer.Typer(
    name="engram",
    help="Local-first long-term memory for AI agents (offline by default, English and Chinese).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

app.add_typer(bench_app, name="bench")


app.command("chat")(_chat)  # engram chat --user U: terminal chat with memory (engram.cli.chat)

UserOpt = Annotated[str, typer.Option("--user", "-u", help="whose memory (required)")]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="narrow to one agent")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print only JSON (to stdout)")]
KindOpt = Annotated[list[Kind] | None, typer.Option("--kind", help="only these kinds (repeatable)")]


def _version(value: bool) -> None:
    if value:
        from engram import __version__

        typer.echo(f"engram {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    db: Annotated[
        Path | None,
        typer.Option("--db", help="database file (default $ENGRAM_PATH or ~/.engram/engram.db); also after the command"),
    ] = None,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="log what engram does (-vv: debug)")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no notices on stderr, only results and errors")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    _state["db"] = db
    _state["quiet"] = quiet
    if verbose:
        logging.basicConfig(level=logging.DEBUG if verbose > 1 else logging.INFO, stream=sys.stderr,
                            format="%(levelname)s %(name)s: %(message)s")


# API names in messages become the option a CLI user typed
_OPTION_NAMES = {"user_id": "--user", "agent_id": "--agent", "session_id": "--session", "memory id": "MEMORY_ID"}


def fail(message: str) -> None:
    """One line on stderr, exit 1: ordinary mistakes never show a traceback."""
    for api, option in _OPTION_NAMES.items():
        message = message.replace(api, option)
    render.errors.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(1)


def notice(message: str) -> None:
    """Status for the person at the terminal (stderr, silenced by -q): stdout stays for results."""
    if not _state.get("quiet"):
        render.errors.print(message, markup=False, highlight=False, soft_wrap=True)


def run(action):
    """Run `action(memory)`, turning engram's errors into a clear message and exit 1."""
    try:
        check_db()
        memory = open_memory()
    except (EngramError, ValueError, OSError) as exc:
        fail(str(exc))
    try:
        return action(memory)
    except EngramError as exc:
        fail(str(exc))
    except OSError as exc:  # a file the command reads or writes (export, import)
        fail(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
    finally:
        try:
            memory.close()
        except EngramError:  # the error above was already said in one line
            pass


def full_id(memory: Any, given: str) -> str:
    """A memory id from a unique prefix (tables show the first 8 characters)."""
    if not given or memory.store.get(given) is not None:
        return given
    found = memory.store.ids_with_prefix(given, limit=2)
    if len(found) > 1:
        raise EngramError(f"id prefix {given!r} is ambiguous: give more characters")
    return found[0] if found else given


@app.command()
def add(
    text: Annotated[str, typer.Argument(help="what was said; - reads it from stdin")],
    user: UserOpt,
    agent: AgentOpt = None,
    session: Annotated[str | None, typer.Option("--session", "-s")] = None,
    raw: Annotated[bool, typer.Option("--raw", help="store verbatim as a turn (infer=False)")] = False,
    lines: Annotated[bool, typer.Option("--lines", help="bulk: each line is said on its own (e.g. with -)")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Tell engram something; it keeps what is worth remembering."""
    text = read_text(text)
    said = [line for line in text.splitlines() if line.strip()] if lines else [text]

    def act(m: Any) -> tuple[list, bool]:
        events: list = []
        with render.progress_bar("adding", disable=len(said) < 2 or as_json or _state.get("quiet")) as progress:
            for done, one in enumerate(said, 1):
                events += m.add(one, user_id=user, agent_id=agent, session_id=session, infer=not raw)
                progress(done, len(said))
        return events, not events and m.is_paused(user)

    events, paused = run(act)
    if as_json:
        print_json(events)
        return
    if events:
        console.print(render.events_table(events))
        for message in dict.fromkeys(e.command.message for e in events if e.command is not None):
            notice(message)
    elif paused:
        notice(f"memory is paused for {user}: nothing was stored (engram resume -u {user})")
    else:
        notice("nothing worth remembering in that (no memory stored)")


@app.command()
def search(
    query: str,
    user: UserOpt,
    agent: AgentOpt = None,
    k: Annotated[int, typer.Option("-k", "--limit", min=1)] = 5,
    kind: KindOpt = None,
    as_of: Annotated[datetime | None, typer.Option("--as-of", help="what was true then (ISO date)")] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", min=0.0, max=1.0, help="only results at least this relevant (0-1)")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the memories most relevant to QUERY."""
    filters: dict = {"kind": kind} if kind else {}
    if as_of is not None:
        filters["as_of"] = as_of
    results = run(lambda m: m.search(
        query, user_id=user, agent_id=agent, limit=k, filters=filters or None, threshold=threshold,
    ))
    if as_json:
        print_json(results)
    elif results:
        console.print(render.results_table(results))
        for question in dict.fromkeys(r.clarification.question for r in results if r.clarification):
            console.print(render.plain(f"to clarify: {question}"))
    else:
        notice("no memories found")


@app.command("list")
def list_(
    user: UserOpt,
    agent: AgentOpt = None,
    status: Annotated[
        list[Status] | None, typer.Option("--status", help="these statuses (default: active and disputed)")
    ] = None,
    kind: KindOpt = None,
    every: Annotated[bool, typer.Option("--all", help="every status")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 100,
    offset: Annotated[int, typer.Option("--offset", min=0, help="skip this many (the newest first)")] = 0,
    by_kind: Annotated[bool, typer.Option("--by-kind", help="what is remembered, grouped by kind")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List a user's memories, newest first (live ones: active and disputed, by default)."""
    if by_kind:
        grouped = run(lambda m: m.view(user_id=user, agent_id=agent))
        if as_json:
            print_json({k.value: [i.model_dump(mode="json") for i in v] for k, v in grouped.items()})
        else:
            render.print_grouped(grouped, user)
        return
    filters: dict = {}
    if every:
        filters["status"] = []
    elif status:
        filters["status"] = status
    if kind:
        filters["kind"] = kind
    items, total = run(lambda m: (
        m.get_all(user_id=user, agent_id=agent, filters=filters, limit=limit, offset=offset),
        m.count(user_id=user, agent_id=agent, filters=filters),
    ))
    if as_json:
        print_json(items)
        return
    console.print(render.memories_table(items, title=f"memories of {user}"))
    if items:
        notice(f"showing {offset + 1}-{offset + len(items)} of {total:,}"
               + (f" (--offset {offset + len(items)} for more)" if offset + len(items) < total else ""))
    else:
        notice(f"no memories (of {total})")


@app.command()
def get(memory_id: str, as_json: JsonOpt = False) -> None:
    """Show one memory with all its metadata."""
    item = run(lambda m: m.get(full_id(m, memory_id)))
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
    event = run(lambda m: m.update(full_id(m, memory_id), content=read_text(text)))
    console.print(render.events_table([event]))


@app.command()
def delete(
    memory_id: Annotated[str | None, typer.Argument()] = None,
    user: Annotated[str | None, typer.Option("--user", "-u")] = None,
    agent: AgentOpt = None,
    everything: Annotated[bool, typer.Option("--all", help="delete every memory of --user")] = False,
    kind: Annotated[Kind | None, typer.Option("--kind", help="delete every memory of this kind of --user")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask")] = False,
) -> None:
    """Delete one memory, every memory of a kind (--kind K --user U) or of a user (--all --user U).
    Deletion is real."""
    if kind:
        if not user:
            fail("--kind needs --user")
        if not yes:
            typer.confirm(f"Delete every {kind.value} memory of {user}?", abort=True, err=True)
        events = run(lambda m: m.delete_by_kind(kind, user_id=user, agent_id=agent))
        if events:
            console.print(render.events_table(events))
        else:
            notice(f"no {kind.value} memories of {user}")
        return
    if everything:
        if not user:
            fail("--all needs --user")
        if not yes:
            typer.confirm(f"Delete every memory of {user}?", abort=True, err=True)
        count = run(lambda m: m.delete_all(user_id=user, agent_id=agent))
        notice(f"deleted {count} memories of {user}")
        return
    if not memory_id:
        fail("give a memory id, or --all --user U")
    event = run(lambda m: m.delete(full_id(m, memory_id)))
    console.print(render.events_table([event]))


@app.command()
def history(memory_id: str, as_json: JsonOpt = False) -> None:
    """The audit trail of one memory."""
    entries = run(lambda m: m.history(full_id(m, memory_id)))
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

    table = Table(title=render.plain(f"engram config (file: {config_file_path()})"))
    table.add_column("setting")
    table.add_column("value")
    for name, value in data.items():
        table.add_row(name, render.plain("" if value is None else str(value)))
    console.print(table)


@app.command()
def capsule(
    user: UserOpt,
    agent: AgentOpt = None,
    budget: Annotated[int | None, typer.Option("--budget", "-b", min=0, help="tokens (default: capsule_budget)")] = None,
    details: Annotated[bool, typer.Option("--details", help="also list each line and what was left out")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print exactly the memory capsule that would be injected for USER, and its token count."""
    built = run(lambda m: m.capsule(user, agent_id=agent, budget=budget))
    if as_json:
        print_json(built)
        return
    render.injected_text(built.text, built.token_count, built.budget, built.encoding, "capsule")
    if details:
        console.print(render.lines_table(built.lines, title="in the capsule"))
        if built.left_out:
            console.print(render.left_out_table(built.left_out))


@app.command()
def context(
    query: str,
    user: UserOpt,
    agent: AgentOpt = None,
    session: Annotated[str | None, typer.Option("--session", "-s")] = None,
    budget: Annotated[int | None, typer.Option("--budget", "-b", min=0, help="tokens (default: context_budget)")] = None,
    turns: Annotated[bool, typer.Option("--turns", help="include the session's recent turns")] = False,
    show_prompt: Annotated[bool, typer.Option("--show-prompt", help="print the exact text injected into the system prompt")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What an agent would put in front of its LLM for QUERY: capsule + relevant memories."""
    built = run(
        lambda m: m.context(query, user_id=user, agent_id=agent, session_id=session, budget=budget, turns=turns)
    )
    if as_json:
        print_json(built)
        return
    if show_prompt:
        render.injected_text(built.text, built.token_count, built.budget, built.encoding, "context")
        return
    console.print(render.lines_table(built.capsule.lines, title="from the capsule", origin="capsule"))
    console.print(render.lines_table(built.relevant, title=f"relevant to {query!r}", origin="search"))
    for question in built.clarifications:
        console.print(render.plain(f"to confirm: {question}"))
    if built.turns:
        notice(f"{len(built.turns)} recent turns")
    notice(f"{built.token_count} tokens of {built.budget} ({built.encoding}); --show-prompt prints the exact text")


@app.command()
def demo(
    db: Annotated[Path | None, typer.Option("--db", help="keep the demo database here (default: a temporary file)")] = None,
) -> None:
    """A scripted two-session story in English and Chinese, offline, on the embedded default."""
    from engram.cli.demo import run_demo

    run_demo(db or _state.get("db"))



# -- lifecycle and user control ----------------------------------------------------------
@app.command()
def maintain(
    user: Annotated[str | None, typer.Option("--user", "-u", help="one user (default: everyone)")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Archive decayed memories, enforce capacity, merge near-duplicates. Safe while engram is in use."""
    with render.progress_bar("maintaining", disable=as_json or _state.get("quiet")) as progress:
        report = run(lambda m: m.maintain(user, progress=progress))
    if as_json:
        print_json(report)
    else:
        console.print(render.maintenance_table(report))


@app.command()
def pause(user: UserOpt) -> None:
    """Stop remembering for a user until `engram resume` (retrieval keeps working)."""
    run(lambda m: m.pause(user))
    notice(f"memory paused for {user}: nothing new is stored until `engram resume -u {user}`")


@app.command()
def resume(user: UserOpt) -> None:
    """Remember again for a user."""
    run(lambda m: m.resume(user))
    notice(f"memory resumed for {user}")


@app.command()
def timezone(
    user: UserOpt,
    zone: Annotated[str | None, typer.Argument(help="IANA name, e.g. Asia/Shanghai; omit to show")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="back to the `timezone` setting")] = False,
) -> None:
    """Show or set a user's time zone (their days for "yesterday", "Friday" and reminders)."""
    if zone is not None or clear:
        run(lambda m: m.set_timezone(user, None if clear else zone))
    console.print(render.plain(f"{user}: {run(lambda m: m.timezone(user))}"))


@app.command()
def forget(
    about: Annotated[str, typer.Argument(help="what to forget, e.g. \"coffee\" or \"我的工作\"")],
    user: UserOpt,
    agent: AgentOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="list what would be deleted; delete nothing")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete exactly the memories about a topic, for real, and list what was deleted."""
    if dry_run:
        items = run(lambda m: m.forget(about, user_id=user, agent_id=agent, dry_run=True))
        if as_json:
            print_json(items)
        elif items:
            console.print(render.memories_table(items, title=f"would be forgotten ({len(items)})"))
            notice("dry run: nothing deleted")
        else:
            notice(f"nothing remembered about {about!r}; nothing would be deleted")
        return
    events = run(lambda m: m.forget(about, user_id=user, agent_id=agent))
    if as_json:
        print_json(events)
    elif events:
        console.print(render.events_table(events, title=f"forgotten ({len(events)})"))
    else:
        notice(f"nothing remembered about {about!r}; nothing deleted")


_KEEP_WORDS = ("this", "newer", "older", "both", "neither")


@app.command()
def resolve(
    memory_id: str,
    keep: Annotated[str, typer.Option("--keep", help="this (MEMORY_ID), newer, older, both, neither, or an id")] = "this",
) -> None:
    """Settle a dispute between contradicting memories (history keeps every version)."""
    events = run(lambda m: m.resolve(full_id(m, memory_id), keep=keep if keep in _KEEP_WORDS else full_id(m, keep)))
    console.print(render.events_table(events))


@app.command()
def restore(memory_id: str) -> None:
    """Bring an archived memory back (for a merged one: undo the merge)."""
    events = run(lambda m: m.restore(full_id(m, memory_id)))
    console.print(render.events_table(events))


@app.command()
def reminders(
    user: UserOpt,
    agent: AgentOpt = None,
    hours: Annotated[float | None, typer.Option("--hours", help="look ahead this many hours")] = None,
    tz: Annotated[str | None, typer.Option("--tz", help="time zone for days, e.g. Asia/Shanghai")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Tasks due (or overdue) now."""
    from datetime import timedelta

    from engram.models import as_zone

    horizon = None if hours is None else timedelta(hours=hours)
    found, zone = run(lambda m: (
        m.reminders(user_id=user, agent_id=agent, horizon=horizon, tz=tz), as_zone(tz) if tz else m.timezone(user),
    ))
    if as_json:
        print_json(found)
    elif found:
        console.print(render.reminders_table(found, zone))
    else:
        notice("nothing due")


@app.command()
def done(memory_id: str) -> None:
    """Mark a task done (a recurring one: this occurrence)."""
    event = run(lambda m: m.complete(full_id(m, memory_id)))
    console.print(render.events_table([event]))


@app.command()
def export(
    file: Annotated[Path, typer.Argument(help="where to write the JSON; - for stdout")],
    user: UserOpt,
    agent: AgentOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="engram (lossless) or optmem")] = "engram",
    with_history: Annotated[bool, typer.Option("--history", help="include the audit trail")] = False,
) -> None:
    """Export a user's memories (engram JSON, or an OptMem memory file)."""
    to_stdout = str(file) == STDIO
    if not to_stdout and not file.expanduser().parent.is_dir():
        fail(f"cannot write {file}: folder {file.expanduser().parent} does not exist")
    with render.progress_bar("exporting", disable=_state.get("quiet")) as progress:
        data = run(lambda m: m.export(
            user_id=user, agent_id=agent, format=fmt, history=with_history, path=None if to_stdout else file,
            progress=progress,
        ))
    if to_stdout:
        print_json(data)
    count = len(data) if isinstance(data, list) else len(data["memories"])
    notice(f"exported {count} memories of {user} to {'stdout' if to_stdout else file} ({fmt})")


@app.command("graph")
def graph(
    user: UserOpt,
    html: Annotated[Path | None, typer.Option("--html", help="also write the drawing to this HTML file")] = None,
    limit: Annotated[int, typer.Option("--limit", help="entities listed (most linked first)")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """Entities (people, pets, places, organisations, projects, …) and relations in a user's memories."""
    show_graph(run(lambda m: m.graph(user)), user, html, limit, as_json)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="an engram export, a mem0 export or an OptMem file; - for stdin")],
    user: Annotated[str | None, typer.Option("--user", "-u", help="import into this user (required for OptMem)")] = None,
    agent: AgentOpt = None,
    on_conflict: Annotated[str, typer.Option("--on-conflict", help="skip, replace or new_id")] = "skip",
    as_json: JsonOpt = False,
) -> None:
    """Import memories (privacy filter applied again on the way in)."""
    source: Any = read_text(STDIO) if str(file) == STDIO else file
    if not isinstance(source, str) and not file.expanduser().is_file():
        fail(f"cannot read {file}: no such file")
    with render.progress_bar("importing", disable=as_json or _state.get("quiet")) as progress:
        report = run(lambda m: m.import_(source, user_id=user, agent_id=agent, on_conflict=on_conflict,
                                         progress=progress))
    if as_json:
        print_json(report)
    else:
        notice(
            f"imported {report.added} memories ({report.format}); skipped {report.skipped}, "
            f"renamed {report.renamed}, replaced {report.replaced}, refused by privacy {report.dropped}, "
            f"not stored while paused {report.paused}; "
            f"{report.history} history rows, {report.entities} graph entities"
        )


@app.command()
def reembed(
    batch: Annotated[int, typer.Option("--batch", min=1, help="memories per transaction")] = 256,
) -> None:
    """Re-embed every memory with the configured embedder, in place (after changing the embedder).
    Interrupted, it resumes where it stopped."""
    from engram.providers.embedders import make_embedder
    from engram.reembed import reembed as run_reembed
    from engram.store.open import open_store

    try:
        check_db()
        current = settings()
        embedder = make_embedder(current)
        store = open_store(current.store_target, dim=embedder.dim)
    except (EngramError, ValueError, OSError) as exc:
        fail(str(exc))
    try:
        with render.progress_bar(f"re-embedding with {embedder.name}", disable=_state.get("quiet")) as progress:
            count = run_reembed(store, embedder, batch=batch, progress=progress)
    except (EngramError, OSError) as exc:  # e.g. the embedder's weights are not on this machine
        fail(str(exc))
    finally:
        store.close()
    notice(f"re-embedded {count} memories with {embedder.name} ({embedder.dim}-d)")


@app.command()
def migrate(
    source: Annotated[str, typer.Option("--from", help="store to copy: a path, sqlite:///…, postgresql://…, qdrant://…")],
    target: Annotated[str, typer.Option("--to", help="empty store to copy into (or an interrupted copy to resume)")],
    batch: Annotated[int, typer.Option("--batch", min=1, help="rows per transaction")] = 500,
) -> None:
    """Copy a whole store to another backend (memories with vectors, history, sessions, state, jobs),
    then verify counts and per-user checksums. Interrupted, run it again: it resumes."""
    from engram.migrate import migrate as run_migrate
    from engram.providers.embedders import make_embedder
    from engram.store.open import describe, open_store

    try:
        embedder = make_embedder(settings())  # loaded only if a vector was made by another embedder
        source_store = open_store(source, dim=embedder.dim, read_only=True)
    except (EngramError, ValueError, OSError) as exc:
        fail(str(exc))
    try:
        target_store = open_store(target, dim=embedder.dim)
    except (EngramError, ValueError, OSError) as exc:
        source_store.close()
        fail(str(exc))
    try:
        with render.progress_bar(f"copying to {describe(target)}", disable=_state.get("quiet")) as progress:
            report = run_migrate(source_store, target_store, embedder=embedder, batch=batch, progress=progress)
    except (EngramError, OSError) as exc:
        fail(str(exc))
    finally:
        source_store.close()
        target_store.close()
    copied = ", ".join(f"{n:,} {table}" for table, n in report.copied.items() if n)
    notice(
        f"{'resumed and ' if report.resumed else ''}copied {copied or 'nothing'} in {report.seconds:.1f} s"
        f" ({report.memories_per_s:,.0f} memories/s); verified {report.users} users"
        + (f"; embedded {report.reembedded} on the way with {embedder.name}" if report.reembedded else "")
        + (f"; linked {report.linked} into the entity graph" if report.linked else "")
    )
