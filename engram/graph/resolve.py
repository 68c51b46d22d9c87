"""Entity resolution within one user: which stored entity a name or relation refers to.

- the same key (case, spacing, articles, traditional/simplified Chinese: engram.graph.names.key);
- a nickname the conversation uses: a new name of at least three letters that begins exactly one
  known person's name ("Mel" → "Melanie") joins that person as an alias;
- a relation named later: "my wife" (an entity known only by its relation) becomes "Anna" once the
  user says "my wife Anna" or "Anna is my wife" (the two are merged);
- every creation, alias and merge leaves a `GraphEvent` (the trace `engram graph` shows).

It works on an in-memory `Book` of the user's aliases, so a batch of memories is resolved
against the entities the earlier ones of the batch created, and written at once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from engram.graph.extract_entities import SELF, SELF_REF, Found
from engram.graph.names import key, kin_key
from engram.store.graph import AliasRow, EdgeRow, EntityRow, GraphEvent, GraphSnapshot, MentionRow

# relations one person has at most one of: "my wife" and "my wife Anna" are one person
# (not "my friend" and "my friend Sam": someone has many friends)
SINGLE = frozenset({
    "mother", "father", "wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "boss", "sister",
    "brother", "son", "daughter", "grandmother", "grandfather", "dog", "cat", "puppy", "kitten", "horse",
})
_PERSONISH = ("person", "name")
NICKNAME_MIN = 3


def new_entity_id() -> str:
    return f"ent_{uuid.uuid4().hex[:16]}"


@dataclass(slots=True)
class Book:
    """One user's aliases and entities while a batch is resolved, and what the batch adds."""

    user_id: str
    at: datetime
    by_key: dict[str, str] = field(default_factory=dict)  # alias key -> entity id
    entities: dict[str, EntityRow] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)  # entities known by a name, not only a relation
    new_entities: dict[str, EntityRow] = field(default_factory=dict)
    new_aliases: list[AliasRow] = field(default_factory=list)
    mentions: list[MentionRow] = field(default_factory=list)
    edges: list[EdgeRow] = field(default_factory=list)
    events: list[GraphEvent] = field(default_factory=list)
    merges: list[tuple[str, str, str]] = field(default_factory=list)  # (keep, drop, reason)

    @classmethod
    def of(cls, snapshot: GraphSnapshot, user_id: str, at: datetime) -> Book:
        book = cls(user_id, at, entities=dict(snapshot.entities))
        for alias in snapshot.aliases:
            book.by_key[alias.key] = alias.entity_id
            if "@" not in alias.key:
                book.named.add(alias.entity_id)
        return book

    # -- entities ------------------------------------------------------------------
    def create(self, name: str, type_: str, alias_key: str, reason: str) -> str:
        entity = EntityRow(new_entity_id(), self.user_id, name, type_, self.at)
        self.entities[entity.id] = self.new_entities[entity.id] = entity
        self.alias(entity.id, alias_key, name, None)
        self.events.append(GraphEvent(self.user_id, "CREATE", entity.id, None, f"{name!r} ({type_}): {reason}", self.at))
        return entity.id

    def alias(self, entity_id: str, alias_key: str, said: str, reason: str | None) -> None:
        if self.by_key.get(alias_key) == entity_id:
            return
        self.by_key[alias_key] = entity_id
        self.new_aliases.append(AliasRow(entity_id, alias_key, said))
        if "@" not in alias_key:
            self.named.add(entity_id)
        if reason:
            name = self.entities[entity_id].name
            self.events.append(GraphEvent(self.user_id, "ALIAS", entity_id, None, f"{said!r} = {name!r}: {reason}", self.at))

    def retype(self, entity_id: str, type_: str) -> None:
        """A name first seen without a type gets the one a later statement gives it."""
        entity = self.entities[entity_id]
        if entity.type == "name" and type_ != "name":
            entity = EntityRow(entity.id, entity.user_id, entity.name, type_, entity.created_at)
            self.entities[entity_id] = self.new_entities[entity_id] = entity

    def self_id(self) -> str:
        return self.by_key.get(SELF) or self.create("user", "person", SELF, "the user")

    def nickname_of(self, k: str) -> str | None:
        """The one known person whose name `k` begins, or whose name begins `k` (a nickname
        the conversation uses, before or after the full name: "Mel" and "Melanie")."""
        if len(k) < NICKNAME_MIN or " " in k:
            return None
        hits = {
            eid for alias_key, eid in self.by_key.items()
            if "@" not in alias_key and alias_key != k and " " not in alias_key and len(alias_key) >= NICKNAME_MIN
            and (alias_key.startswith(k) or k.startswith(alias_key)) and self.entities[eid].type in _PERSONISH
        }
        return hits.pop() if len(hits) == 1 else None

    def rename(self, entity_id: str, name: str) -> None:
        """The fuller name is the one shown ("Mel" → "Melanie")."""
        entity = self.entities[entity_id]
        if len(name) > len(entity.name) and key(name).startswith(key(entity.name)):
            entity = EntityRow(entity.id, entity.user_id, name, entity.type, entity.created_at)
            self.entities[entity_id] = self.new_entities[entity_id] = entity

    # -- one memory ------------------------------------------------------------------
    def link(self, memory_id: str, found: Found) -> None:
        """Resolve what one memory said and record its mentions and edges."""
        ids: list[str] = []
        keep = [not r.known_only or key(r.name) in self.by_key for r in found.refs]
        for ref, kept in zip(found.refs, keep, strict=True):
            if not kept:  # never referred to by a relation (only other refs may be owners)
                ids.append("")
                continue
            owner = None
            if ref.relation is not None and ref.owner is not None:
                owner = self.self_id() if ref.owner == SELF_REF else ids[ref.owner]
            ids.append(self._resolve(ref.name, ref.type, ref.named, owner, ref.relation))
        uses_self = any(r.src == SELF_REF or r.dst == SELF_REF for r in found.rels)
        roles: dict[str, str] = {}
        for ref, eid in zip(found.refs, ids, strict=True):
            if not eid:
                continue
            if roles.get(eid) != "speaker":
                roles[eid] = ref.role
        if uses_self:
            roles.setdefault(self.self_id(), "subject")
        self.mentions += [MentionRow(eid, memory_id, role) for eid, role in roles.items()]
        for rel in found.rels:
            src = self.self_id() if rel.src == SELF_REF else ids[rel.src]
            dst = self.self_id() if rel.dst == SELF_REF else ids[rel.dst]
            if src and dst and src != dst:
                self.edges.append(EdgeRow(src, rel.rel, dst, memory_id, rel.reason[:200]))

    def _resolve(self, name: str, type_: str, named: bool, owner: str | None, relation: str | None) -> str:
        kin = kin_key(owner, relation) if owner and relation else None
        if not named:
            assert kin is not None
            known = self.by_key.get(kin)
            if known:
                return known
            owner_name = self.entities[owner].name if owner else ""
            shown = name if owner_name == "user" or name.startswith("我") else f"{owner_name}'s {name.split(' ', 1)[-1]}"
            return self.create(shown, type_, kin, f"said as {name!r}")
        k = key(name)
        eid = self.by_key.get(k)
        if eid is None and type_ in _PERSONISH:
            eid = self.nickname_of(k)
            if eid is not None:
                self.alias(eid, k, name, "a shorter or longer form of the name, used in the conversation")
                self.rename(eid, name)
        if eid is None:
            eid = self.create(name, type_, k, "first mentioned")
        self.retype(eid, type_)
        if kin is not None:
            known = self.by_key.get(kin)
            if known is None:
                self.alias(eid, kin, f"{relation} of {self.entities[owner].name}", "the relation was named")
            elif known != eid and known not in self.named and relation in SINGLE:
                self._merge(eid, known, f"{self.entities[known].name!r} is {name!r}, as said")
            elif known != eid:  # another of them ("a son named Leo" after "一个儿子叫乐乐"): theirs too
                self.alias(eid, f"{kin}/{eid}", f"{relation} of {self.entities[owner].name}", "another relation was named")
        return eid

    def _merge(self, keep: str, drop: str, reason: str) -> None:
        """`drop` (known only by its relation) is `keep`: its aliases move now, the rest when written."""
        for alias_key, eid in list(self.by_key.items()):
            if eid == drop:
                self.by_key[alias_key] = keep
        self.mentions = [MentionRow(keep if m.entity_id == drop else m.entity_id, m.memory_id, m.role) for m in self.mentions]
        self.edges = [
            EdgeRow(keep if e.src == drop else e.src, e.rel, keep if e.dst == drop else e.dst, e.memory_id, e.reason)
            for e in self.edges
        ]
        self.new_aliases = [AliasRow(keep if a.entity_id == drop else a.entity_id, a.key, a.alias) for a in self.new_aliases]
        if drop in self.new_entities:  # created in this batch: nothing stored to merge
            del self.new_entities[drop]
            self.events = [e for e in self.events if e.entity_id != drop]
            self.events.append(GraphEvent(self.user_id, "MERGE", keep, None, reason, self.at))
        else:
            self.merges.append((keep, drop, reason))
        self.entities.pop(drop, None)
