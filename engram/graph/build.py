"""Building the graph: memories linked to the entities they name. The write path notes a new
memory for the write-behind worker (engram.embed_behind), which calls `link` for a batch in one
transaction; an edit, an LLM's typed entities, a bulk ingest and a store that cannot note link
in the write's own transaction (`link` inside `store.atomic()`).

Cheap by design: rules only (engram.graph.extract_entities), one snapshot read per call (cached
by the store), one `graph_write` per batch. The LLM's typed entities arrive through
`link_llm` when LLM extraction is configured (engram.graph.llm).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from engram.graph.extract_entities import SELF_REF, Found, extract
from engram.graph.llm import found_of
from engram.graph.resolve import Book
from engram.models import Candidate, MemoryItem, utcnow
from engram.store.base import Store

_USER = re.compile(r"^(?:the\s+)?user(?:['’]s\b|\b)", re.I)


def supported(store: Store) -> bool:
    """Whether the store keeps a graph (the ``graph_*`` methods of engram.store.base.Store;
    SQLite, PostgreSQL and Qdrant do. A backend without them simply has no graph: writes and
    searches go on without it)."""
    return callable(getattr(store, "graph_write", None))


def said_text(item: MemoryItem) -> str | None:
    """What the rules read of a memory: its text, first-person again for a fact ("User's
    daughter is Lily." → "My daughter is Lily."); None for what the assistant said."""
    if item.metadata.get("role") == "assistant":
        return None
    text = item.content
    if text.startswith("用户"):
        return "我" + text[2:]
    m = _USER.match(text)
    if m:
        return ("My" if m.group(0).lower().endswith(("'s", "’s")) else "I") + text[m.end():]
    return text


def read_ahead(items: Sequence[MemoryItem]) -> dict[str, tuple[str | None, Found]]:
    """What each memory names (its text as read, and the rules' finds), worked out before the
    transaction that links them: the rules are the costly part of linking, and inside it they
    kept every other writer waiting (`link`'s `ahead`)."""
    out: dict[str, tuple[str | None, Found]] = {}
    for item in items:
        text = said_text(item)
        out[item.id] = (text, extract(text) if text else Found())
    return out


def link(
    store: Store, items: Sequence[MemoryItem], *, replace: bool = False, given: Mapping[str, Candidate] | None = None,
    ahead: Mapping[str, tuple[str | None, Found]] | None = None,
) -> None:
    """Link each written memory to the entities it names; `replace`: re-derive (an edit);
    `given`: the LLM candidate a memory came from, whose typed entities and relations join
    the rules' (engram.graph.llm); `ahead`: `read_ahead`'s finds, used for a memory whose text
    is still the one they were read from."""
    if not supported(store):
        return
    by_user: dict[str, list[tuple[str, Found]]] = {}
    for item in items:
        text = said_text(item)
        early = (ahead or {}).get(item.id)
        found = early[1] if early is not None and early[0] == text else extract(text) if text else Found()
        candidate = (given or {}).get(item.id)
        if candidate is not None:
            found = merged(found, found_of(candidate.typed_entities, candidate.relations))
        if found.refs or replace:
            by_user.setdefault(item.user_id, []).append((item.id, found))
    for user_id, found_in in by_user.items():
        write(store, user_id, found_in, replace=replace)


def write(store: Store, user_id: str, found_in: Sequence[tuple[str, Found]], *, replace: bool = False) -> None:
    """Resolve `found_in` (memory id, what it names) against the user's graph and store it."""
    names = getattr(store, "graph_names", store.graph_snapshot)  # entities + aliases, where a backend has it apart
    book = Book.of(names(user_id), user_id, utcnow())
    for memory_id, found in found_in:
        book.link(memory_id, found)
    store.graph_write(
        user_id, entities=list(book.new_entities.values()), aliases=book.new_aliases, mentions=book.mentions,
        edges=book.edges, events=book.events, replace=[m for m, _ in found_in] if replace else (),
    )
    for keep, drop, reason in book.merges:
        store.graph_merge(user_id, keep, drop, reason, book.at)


def merged(rules: Found, llm: Found) -> Found:
    """The rules' entities and relations plus the LLM's (an entity both name is one ref; the
    LLM's type fills in where the rules had none)."""
    out = Found(list(rules.refs), list(rules.rels))
    moved = {SELF_REF: SELF_REF}
    for i, ref in enumerate(llm.refs):
        moved[i] = out.add(ref)
    for rel in llm.rels:
        out.relate(moved[rel.src], rel.rel, moved[rel.dst], rel.reason)
    return out
