"""The entity graph in an engram export: written beside the memories, restored on import.

Rebuilding the graph from the memories loses what cannot be derived again: merges and splits
and their trace, aliases the user confirmed ("my wife" = "Anna"), the LLM's typed entities and
relations with their reasons. So an export carries the user's graph as stored, in its own
versioned section (engram.portability documents the file around it)::

    "graph": {
      "version": 1,
      "entities": [{"id", "user_id", "name", "type", "created_at"}],
      "aliases":  [{"entity_id", "key", "alias"}],     # key: engram.graph.names.key, or "<relation>@<entity id>"
      "mentions": [{"entity_id", "memory_id", "role"}], # role: speaker, subject or mention
      "edges":    [{"src", "rel", "dst", "memory_id", "reason"}],
      "history":  [{"user_id", "action", "entity_id", "other_id", "detail", "created_at"}]  # oldest first
    }

Memory ids are those of the file's memories; only links to exported memories are written (an
agent's export: its memories' entities). Import checks every row before anything is written
(a row naming another user, an entity or memory the file does not hold, a malformed field:
`InvalidInput`), then restores the rows of the memories it stored, in the same transaction:
memory ids follow the import's renames, an entity id already used in the database (by anyone)
gets a new one, and an entity the target user already knows (by id, or by a name or relation
key) is joined rather than duplicated. Texts pass the privacy filter both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engram import validate as check
from engram.errors import InvalidInput
from engram.graph.build import supported
from engram.graph.resolve import new_entity_id
from engram.privacy import redact
from engram.store.base import Store
from engram.store.graph import AliasRow, EdgeRow, EntityRow, GraphEvent, MentionRow

if TYPE_CHECKING:  # pragma: no cover
    from engram.privacy import PrivacyPolicy

__all__ = ["GRAPH_VERSION", "FileGraph", "export_graph", "parse", "restore"]

GRAPH_VERSION = 1
ROLES = frozenset({"speaker", "subject", "mention"})
_NAME_LIMIT = 200  # a name, key, alias, type or relation (PostgreSQL indexes carry names: well under an index row)
_TEXT_LIMIT = 10_000
Timestamp = Callable[[Any, str], datetime]  # the file's time reader (value, "where") -> aware datetime


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _owner(key: str, entities: Mapping[str, Any]) -> str | None:
    """The entity a relation key hangs on ("wife@ent_…" → "ent_…"), None for a name's key."""
    head, at, owner = key.rpartition("@")
    return owner if at and head and owner in entities else None


# --------------------------------------------------------------------------- export
def export_graph(store: Store, privacy: PrivacyPolicy, user_id: str, memory_ids: set[str]) -> dict[str, Any] | None:
    """The user's graph as far as `memory_ids` (the exported memories) back it; None on a
    store that keeps no graph."""
    if not supported(store):
        return None
    snap = store.graph_snapshot(user_id)
    seen: dict[str, str] = {}

    def clean(text: str) -> str:
        if text not in seen:
            seen[text] = redact(text, privacy)
        return seen[text]

    mentions = [m for m in snap.mentions if m.memory_id in memory_ids and m.entity_id in snap.entities]
    kept = {m.entity_id for m in mentions}
    entities = sorted((snap.entities[e] for e in kept), key=lambda e: (e.created_at, e.id))
    aliases = [a for a in snap.aliases
               if a.entity_id in kept and ((owner := _owner(a.key, snap.entities)) is None or owner in kept)]
    return {
        "version": GRAPH_VERSION,
        "entities": [{"id": e.id, "user_id": e.user_id, "name": clean(e.name), "type": clean(e.type),
                      "created_at": _iso(e.created_at)} for e in entities],
        "aliases": [{"entity_id": a.entity_id, "key": clean(a.key), "alias": clean(a.alias)}
                    for a in sorted(aliases, key=lambda a: (a.entity_id, a.key))],
        "mentions": [{"entity_id": m.entity_id, "memory_id": m.memory_id, "role": m.role}
                     for m in sorted(mentions, key=lambda m: (m.entity_id, m.memory_id))],
        "edges": [{"src": e.src, "rel": clean(e.rel), "dst": e.dst, "memory_id": e.memory_id, "reason": clean(e.reason)}
                  for e in snap.edges if e.memory_id in memory_ids and e.src in kept and e.dst in kept],
        "history": [{"user_id": h.user_id, "action": h.action, "entity_id": h.entity_id,
                     "other_id": h.other_id if h.other_id in kept else None, "detail": clean(h.detail),
                     "created_at": _iso(h.at)}
                    for h in store.graph_history(user_id) if h.entity_id in kept],
    }


# --------------------------------------------------------------------------- import
@dataclass(slots=True)
class FileGraph:
    """A file's graph section, checked: the store's rows for `user_id` (the user it is imported
    into), still with the file's ids."""

    user_id: str
    entities: dict[str, EntityRow]
    aliases: list[AliasRow]
    mentions: list[MentionRow]
    edges: list[EdgeRow]
    history: list[GraphEvent]


_ROW = {"entities": "entity", "aliases": "alias", "mentions": "mention", "edges": "edge", "history": "history"}


def _rows(section: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    rows = section.get(name, [])
    if not isinstance(rows, list):
        raise InvalidInput(f"graph: {name!r} must be a list")
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InvalidInput(f"graph {_ROW[name]} {index}: not an object")
    return rows


def _text(row: Mapping[str, Any], name: str, where: str, *, limit: int = _NAME_LIMIT, empty: bool = False) -> str:
    value = row.get(name, "" if empty else None)
    check.text(value, f"{where}: {name}", limit)
    if not empty and not value.strip():
        raise InvalidInput(f"{where}: {name} must not be empty")
    return value


def parse(
    section: Any, *, owner: str | None, target: str, memories: Mapping[str, str], when: Timestamp,
    privacy: PrivacyPolicy,
) -> FileGraph:
    """The section checked row by row. `owner`: the user the file is about (every entity and
    trace row must name them); `target`: the user it is imported into; `memories`: the file's
    memory ids and the user each will be stored under (a link must stay within `target`)."""
    if not isinstance(section, Mapping):
        raise InvalidInput("'graph' must be an object")
    if section.get("version") != GRAPH_VERSION:
        raise InvalidInput(f"graph section version {section.get('version')!r} is not supported (expected {GRAPH_VERSION})")
    if owner is None:
        raise InvalidInput("a graph section needs the file's scope.user_id")

    def user(row: Mapping[str, Any], where: str) -> None:
        if row.get("user_id") != owner:
            raise InvalidInput(f"{where}: names user {row.get('user_id')!r}, not the user this file is about")

    def entity(row: Mapping[str, Any], name: str, where: str) -> str:
        value = row.get(name)
        if not isinstance(value, str) or value not in entities:
            raise InvalidInput(f"{where}: {name} {value!r} is not an entity of the file's graph")
        return value

    def memory(row: Mapping[str, Any], where: str) -> str:
        value = row.get("memory_id")
        if not isinstance(value, str) or value not in memories:
            raise InvalidInput(f"{where}: memory_id {value!r} is not a memory of the file")
        if memories[value] != target:
            raise InvalidInput(f"{where}: memory {value!r} belongs to user {memories[value]!r}, not {target!r}")
        return value

    entities: dict[str, EntityRow] = {}
    for index, row in enumerate(_rows(section, "entities")):
        where = f"graph entity {index}"
        eid = check.memory_id(row.get("id"), f"{where}: id")
        if eid in entities:
            raise InvalidInput(f"{where}: id {eid!r} is also another entity's")
        user(row, where)
        entities[eid] = EntityRow(eid, target, redact(_text(row, "name", where), privacy), redact(_text(row, "type", where), privacy),
                                  when(row.get("created_at"), where))
    aliases, keys = [], set()
    for index, row in enumerate(_rows(section, "aliases")):
        where = f"graph alias {index}"
        eid, key = entity(row, "entity_id", where), redact(_text(row, "key", where), privacy)
        if key in keys:
            raise InvalidInput(f"{where}: key {key!r} is also another alias's")
        keys.add(key)
        aliases.append(AliasRow(eid, key, redact(_text(row, "alias", where), privacy)))
    mentions = []
    for index, row in enumerate(_rows(section, "mentions")):
        where = f"graph mention {index}"
        eid, mid = entity(row, "entity_id", where), memory(row, where)
        if not isinstance(row.get("role"), str) or row["role"] not in ROLES:
            raise InvalidInput(f"{where}: role must be one of {', '.join(sorted(ROLES))}")
        mentions.append(MentionRow(eid, mid, row["role"]))
    edges = []
    for index, row in enumerate(_rows(section, "edges")):
        where = f"graph edge {index}"
        src, dst, mid = entity(row, "src", where), entity(row, "dst", where), memory(row, where)
        reason = redact(_text(row, "reason", where, limit=_TEXT_LIMIT, empty=True), privacy)
        edges.append(EdgeRow(src, redact(_text(row, "rel", where), privacy), dst, mid, reason))
    history = []
    for index, row in enumerate(_rows(section, "history")):
        where = f"graph history {index}"
        user(row, where)
        other = None if row.get("other_id") is None else entity(row, "other_id", where)
        detail = redact(_text(row, "detail", where, limit=_TEXT_LIMIT, empty=True), privacy)
        history.append(GraphEvent(target, _text(row, "action", where), entity(row, "entity_id", where), other,
                                  detail, when(row.get("created_at"), where)))
    return FileGraph(target, entities, aliases, mentions, edges, history)


def restore(store: Store, graph: FileGraph, stored: Mapping[str, str], *, replace: bool) -> int:
    """Write the file's graph for the memories the import stored (`stored`: file memory id →
    its id in the database), inside the import's transaction; returns the entities restored.

    An entity comes back only with a memory that mentions it. One the user holds already (the
    same id: a file imported again) keeps its row and trace unless `replace`; one a name or
    relation key of the user's graph already means joins that entity (its trace follows, less
    its creation); any other keeps its id where the id is free, else gets a new one."""
    mentions = [MentionRow(m.entity_id, stored[m.memory_id], m.role) for m in graph.mentions if m.memory_id in stored]
    live, user_id = {m.entity_id for m in mentions}, graph.user_id
    if not live:
        return 0
    snap = getattr(store, "graph_names", store.graph_snapshot)(user_id)  # entities and aliases (as build.write)
    ids = {e: e for e in live if e in snap.entities}
    same = set(ids)

    def rekey(key: str) -> str | None:
        """The key in the database's ids (None while a relation's owner has none)."""
        owner = _owner(key, graph.entities)
        if owner is None:
            return key
        return f"{key.rpartition('@')[0]}@{ids[owner]}" if owner in ids else None

    by_key = {a.key: a.entity_id for a in snap.aliases}
    waiting = [a for a in graph.aliases if a.entity_id in live]
    joined = True
    while joined:  # a relation's key can match once its owner has joined
        joined = False
        for alias in waiting:
            key = rekey(alias.key) if alias.entity_id not in ids else None
            if key is not None and key in by_key:
                ids[alias.entity_id], joined = by_key[key], True
    known = set(ids)
    rest = sorted(live - known)
    taken = store.graph_taken(rest)
    ids.update((e, new_entity_id() if e in taken else e) for e in rest)

    entities = [EntityRow(ids[e], user_id, row.name, row.type, row.created_at)
                for e, row in graph.entities.items() if e in live and (e not in known or (e in same and replace))]
    for e in known - same:  # a name first seen without a type takes the file's (as the write path does)
        mine, theirs = snap.entities.get(ids[e]), graph.entities[e]
        if mine is not None and mine.type == "name" and theirs.type != "name":
            entities.append(EntityRow(mine.id, user_id, mine.name, theirs.type, mine.created_at))
    aliases = [AliasRow(ids[a.entity_id], key, a.alias) for a in waiting if (key := rekey(a.key)) is not None]
    edges = [EdgeRow(ids[e.src], e.rel, ids[e.dst], stored[e.memory_id], e.reason) for e in graph.edges
             if e.memory_id in stored and e.src in live and e.dst in live and ids[e.src] != ids[e.dst]]
    events = [GraphEvent(user_id, h.action, ids[h.entity_id], ids[h.other_id] if h.other_id in live else None,
                         h.detail, h.at)
              for h in graph.history
              if h.entity_id in live and h.entity_id not in same and not (h.entity_id in known and h.action == "CREATE")]
    store.graph_write(
        user_id, entities=entities, aliases=aliases, edges=edges, events=events,
        mentions=[MentionRow(ids[m.entity_id], m.memory_id, m.role) for m in mentions],
    )
    return len(live)
