"""`engram graph --user U`: the user's entities and relations as tables, and (``--html``) a
self-contained drawing of the graph written to a file."""

from __future__ import annotations

from pathlib import Path
from rich.table import Table

from engram.cli.render import console, print_json
from engram.graph.view import UserGraph, to_html


def show(found: UserGraph, user: str, html: Path | None, limit: int, as_json: bool) -> None:
    """Print a user's graph (the `engram graph` command in engram.cli.app reads it)."""
    if html is not None:
        html.write_text(to_html(found), encoding="utf-8")
    if as_json:
        print_json(found.model_dump(mode="json"))
        return
    names = {e.id: e.name for e in found.entities}
    table = Table(title=f"{user}: {len(found.entities)} entities, {len(found.relations)} relations")
    for column in ("entity", "type", "aliases", "memories"):
        table.add_column(column)
    for e in found.entities[:limit]:
        table.add_row(e.name, e.type, ", ".join(e.aliases), str(len(e.memories)))
    console.print(table)
    if found.relations:
        rels = Table(title="relations")
        for column in ("source", "relation", "target", "memories"):
            rels.add_column(column)
        for r in found.relations[: limit * 2]:
            rels.add_row(names.get(r.source, r.source), r.relation, names.get(r.target, r.target), str(len(r.memories)))
        console.print(rels)
    if html is not None:
        console.print(f"drawing: {html}")
