"""What the entity graph stores, in a backend's terms: the rows of the `Store` protocol's
``graph_*`` methods (engram.store.base). The logic that fills them is engram.graph's.

The contract every backend keeps (SQLite: engram.store.sqlite.graph):

- everything is scoped by ``user_id``: one user's entities never link to another's memories;
- an entity lives while some memory mentions it: deleting a memory (any path: delete, forget,
  delete_all, capacity) deletes its mentions and the edges it backs in the same transaction, and
  an entity left without mentions is deleted with its aliases and history;
- an edge is backed by the memory that said it (`memory_id`): the relation stands while that
  memory does; views show only what live memories (active, disputed) back;
- `graph_write` with ``replace=[memory ids]`` first drops those memories' mentions and edges
  (an edit re-derives them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(slots=True)
class EntityRow:
    """An entity of one user: a person, pet, place, organisation, project, product, work, activity."""

    id: str
    user_id: str
    name: str  # as shown: the fullest name the user used
    type: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class AliasRow:
    """A way the user names an entity: `key` is normalised (engram.graph.names.key)."""

    entity_id: str
    key: str
    alias: str  # as said


@dataclass(frozen=True, slots=True)
class MentionRow:
    """A memory that is about an entity: ``role`` is "speaker" (said by it), "subject" or "mention"."""

    entity_id: str
    memory_id: str
    role: str


@dataclass(frozen=True, slots=True)
class EdgeRow:
    """A typed relation between two entities, backed by the memory that said it, with a reason."""

    src: str
    rel: str
    dst: str
    memory_id: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class GraphEvent:
    """A trace of resolution: an entity created, an alias joined, two merged, one split."""

    user_id: str
    action: str  # CREATE, ALIAS, MERGE, SPLIT
    entity_id: str
    other_id: str | None
    detail: str
    at: datetime


@dataclass(slots=True)
class GraphSnapshot:
    """One user's whole graph as stored (every link, whatever its memory's status)."""

    entities: dict[str, EntityRow] = field(default_factory=dict)
    aliases: list[AliasRow] = field(default_factory=list)
    mentions: list[MentionRow] = field(default_factory=list)
    edges: list[EdgeRow] = field(default_factory=list)
