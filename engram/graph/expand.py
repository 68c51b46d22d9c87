"""Graph-expanded retrieval: the entities a query names → their neighbours → the memories linked
to them, ranked by how well they match the rest of the query, as one more ranked signal for the
`Retriever` to fuse with the lexical and dense ones.

It runs for the questions a graph answers better than words do — lists ("what books has Melanie
read?", "哪些"), "both" / "in common", relationships ("Melanie's kids", "项目Y的联系人是谁") — and
only when the query names an entity the user's graph knows. Its cost is bounded: one hop, at most
`graph_fanout` neighbours per named entity, at most `graph_memories` memories read. A hub (an
entity linked to a large share of the user's memories, such as the user) is never followed as a
neighbour, and memories reached through it alone count little, so it cannot flood the results.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from collections.abc import Iterable

from engram.config import Settings
from engram.graph.build import supported
from engram.graph.extract_entities import SELF, SELF_REF, extract
from engram.graph.names import key, kin_key
from engram.models import Filters
from engram.store.base import Scope, Store
from engram.store.graph import EdgeRow, GraphSnapshot
from engram.text import lexical_tokens

LIVE = ("active", "disputed")
HUB_SHARE = 0.2  # an entity linked to more than this share of the linked memories is a hub
HUB_MIN = 25  # … and to more memories than this
NEIGHBOUR_WEIGHT = 0.5  # per neighbour a memory mentions (1 for a neighbour of the type asked for)
HUB_WEIGHT = 0.25  # per named hub a memory mentions (a named entity that is not a hub: 1)
TOPIC_FLOOR = 0.3  # share of a linked memory's graph score it keeps without any of the query's words

# words of a question that ask for entities of a type ("which cities", "哪些乐器")
_TYPE_WORDS = {
    "activit": "activity", "hobb": "activity", "sport": "activity", "do for fun": "activity",
    "instrument": "instrument", "pet": "pet", "animal": "pet", "book": "work", "novel": "work", "song": "work",
    "movie": "work", "film": "work", "show": "work", "citi": "place", "city": "place", "countr": "place",
    "place": "place", "where": "place", "compan": "org", "organi": "org", "employer": "org", "project": "project",
    "product": "product", "people": "person", "friend": "person", "who": "person", "artist": "name", "band": "name",
    "活动": "activity", "爱好": "activity", "运动": "activity", "乐器": "instrument", "宠物": "pet", "书": "work",
    "城市": "place", "地方": "place", "国家": "place", "哪里": "place", "公司": "org", "项目": "project", "谁": "person",
    "联系人": "person", "负责人": "person",
}
_TYPE_WORD = re.compile(r"(?<![a-z])(?:" + "|".join(sorted(map(re.escape, _TYPE_WORDS), key=len, reverse=True)) + ")")
_LIST = re.compile(
    r"\b(?:what|which|who|how many|how often|list|all|any|kinds? of|types? of|ways?|both|in common|together|"
    r"'s|’s|and)\b|哪些|哪几|什么|谁|几|都|一起|共同|关系|联系人|负责人",
    re.I,
)


@dataclass(slots=True)
class GraphIndex:
    """A snapshot arranged for queries (built once per snapshot, kept with it). Built from a
    part of the graph (`around`), `memories` holds no entity yet and `counts` only those near
    the named ones."""

    by_key: dict[str, str]
    han_keys: list[tuple[str, str]]  # (key, entity) for Chinese aliases: matched as substrings
    memories: dict[str, set[str]]  # entity -> memories that mention it
    neighbours: dict[str, Counter[str]]  # entity -> neighbour entities, weighted
    types: dict[str, str]
    hubs: set[str] = field(default_factory=set)
    max_words: int = 3
    counts: dict[str, int] = field(default_factory=dict)  # entity -> how many memories mention it

    @classmethod
    def of(cls, snap: GraphSnapshot) -> GraphIndex:
        memories: dict[str, set[str]] = {}
        linked: set[str] = set()
        for m in snap.mentions:
            memories.setdefault(m.entity_id, set()).add(m.memory_id)
            linked.add(m.memory_id)
        return cls.names(snap).with_edges(snap.edges, {e: len(ms) for e, ms in memories.items()}, len(linked), memories)

    @classmethod
    def names(cls, snap: GraphSnapshot) -> GraphIndex:
        """The snapshot's entities and aliases arranged for matching a query's words."""
        by_key = {a.key: a.entity_id for a in snap.aliases}
        han = [(k, e) for k, e in by_key.items() if "@" not in k and re.search(r"[\u4e00-\u9fff]", k)]
        words = max((k.count(" ") + 1 for k in by_key if "@" not in k), default=1)
        return cls(by_key, han, {}, {}, {i: e.type for i, e in snap.entities.items()}, set(), min(words, 4), {})

    def with_edges(
        self, edges: Iterable[EdgeRow], counts: dict[str, int], linked: int,
        memories: dict[str, set[str]] | None = None,
    ) -> GraphIndex:
        """This index with these edges and how many memories mention each entity (of `linked`
        memories the graph links at all): the whole graph's, or the part around the entities a
        query names (then `memories` holds none yet, and `counts` only those near them)."""
        neighbours: defaultdict[str, Counter[str]] = defaultdict(Counter)
        for e in edges:
            if e.src in self.types and e.dst in self.types:
                # neighbours are related (an edge), not merely named together: co-mentions
                # followed too lowered LoCoMo dev multi-hop R@10 (0.438 → 0.426)
                neighbours[e.src][e.dst] += 1
                neighbours[e.dst][e.src] += 1
        hubs = {e for e, n in counts.items() if n > max(HUB_MIN, HUB_SHARE * linked)}
        if SELF in self.by_key:
            hubs.add(self.by_key[SELF])
        return GraphIndex(self.by_key, self.han_keys, memories or {}, neighbours, self.types, hubs,
                          self.max_words, counts)


_CACHE: dict[int, tuple[GraphSnapshot, GraphIndex]] = {}


def index_of(snap: GraphSnapshot) -> GraphIndex:
    hit = _CACHE.get(id(snap))
    if hit is not None and hit[0] is snap:
        return hit[1]
    if len(_CACHE) > 32:
        _CACHE.clear()
    built = GraphIndex.of(snap)
    _CACHE[id(snap)] = (snap, built)
    return built


_WORD = re.compile(r"[A-Za-z0-9][\w'’\-]*")


def query_entities(index: GraphIndex, query: str) -> tuple[list[str], set[str]]:
    """The entities a query names (its words and Chinese runs matched against aliases, its
    relations — "Melanie's kids", "my wife", "我妈妈" — against relation aliases), and the entity
    types it asks for."""
    named: list[str] = []
    line = query.strip().splitlines()[-1] if query.strip() else ""
    words = [w.rstrip("'’").removesuffix("'s").removesuffix("’s") for w in _WORD.findall(line)]
    for size in range(index.max_words, 0, -1):
        for start in range(0, len(words) - size + 1):
            k = key(" ".join(words[start : start + size]))
            entity = index.by_key.get(k)
            if entity and entity not in named:
                named.append(entity)
    folded = key(line)
    for k, entity in index.han_keys:
        if k in folded and entity not in named:
            named.append(entity)
    found = extract(line)
    ids: list[str | None] = []
    for ref in found.refs:
        entity = None
        if ref.relation and ref.owner is not None:
            owner = index.by_key.get(SELF) if ref.owner == SELF_REF else ids[ref.owner]
            entity = index.by_key.get(kin_key(owner, ref.relation)) if owner else None
        if entity is None and ref.named:
            entity = index.by_key.get(key(ref.name))
        ids.append(entity)
        if entity and entity not in named:
            named.append(entity)
    lowered = line.lower()
    types = {_TYPE_WORDS[m.group(0)] for m in _TYPE_WORD.finditer(lowered)}
    return named, types


def applies(query: str) -> bool:
    """A list, "both" or relationship question (the ones the graph answers better than words)."""
    return _LIST.search(query) is not None


def expand(
    snap: GraphSnapshot, query: str, *, fanout: int, budget: int,
) -> dict[str, float]:
    """Memories the graph links to the query's entities and their neighbours, with a weight:
    1 per named entity a memory mentions (less for a hub), `NEIGHBOUR_WEIGHT` per neighbour,
    neighbours of an asked-for type ("which instruments") first. Empty when the query names
    no known entity or is not a question the graph serves."""
    if not snap.mentions or not applies(query):
        return {}
    index = index_of(snap)
    plan = _plan(index, *query_entities(index, query), fanout)
    return _weigh(plan, index.memories, budget)


def expand_in(store: Store, user_id: str, query: str, *, fanout: int, budget: int) -> dict[str, float]:
    """`expand` over the store, reading only what the query can reach: the user's entity names
    (cached) first, nothing more when the query names none the graph knows; else the named
    entities' edges and counts, then the memories of the entities `expand` follows. A cold
    search no longer loads the whole graph (~5 ms at 1,000 memories) for a query it cannot help."""
    if not applies(query):
        return {}
    if not callable(getattr(store, "graph_around", None)):  # a backend with the snapshot alone
        return expand(store.graph_snapshot(user_id), query, fanout=fanout, budget=budget)
    memo = getattr(store, "graph_memo", None)  # a repeated question: worked out once per graph state
    if memo is not None:
        return memo(user_id, ("expand", query, fanout, budget), lambda: _expand_read(store, user_id, query, fanout, budget))
    return _expand_read(store, user_id, query, fanout, budget)


def _expand_read(store: Store, user_id: str, query: str, fanout: int, budget: int) -> dict[str, float]:
    names = index_of(store.graph_names(user_id))
    named, types = query_entities(names, query)
    if not named:
        return {}
    edges, counts, linked = store.graph_around(user_id, named)
    plan = _plan(names.with_edges(edges, counts, linked), named, types, fanout)
    return _weigh(plan, store.graph_mentioned(user_id, list(dict.fromkeys(e for e, _ in plan))), budget)


def _plan(index: GraphIndex, named: list[str], types: set[str], fanout: int) -> list[tuple[str, float]]:
    """The entities whose memories `expand` counts, each with the weight a memory gets for it."""
    named = [e for e in named if index.counts.get(e)]
    if not named:
        return []
    if all(e in index.hubs for e in named) and not any(
        index.types.get(n) in types for e in named for n in index.neighbours[e] if n not in index.hubs
    ):
        return []  # only hubs, nothing of the type asked for: the graph knows no more than the words
    plan: list[tuple[str, float]] = []
    for entity in named:
        plan.append((entity, HUB_WEIGHT if entity in index.hubs else 1.0))
        ranked_near = [n for n, _ in index.neighbours[entity].most_common() if n not in index.hubs and n not in named]
        typed = [n for n in ranked_near if index.types.get(n) in types][:fanout]
        plan += [(n, 1.0 if typed else NEIGHBOUR_WEIGHT) for n in typed or ranked_near[:fanout]]
    return plan


def _weigh(plan: list[tuple[str, float]], memories: dict[str, set[str]], budget: int) -> dict[str, float]:
    """The `budget` best-weighted memories; ties broken by id, so the cut does not depend on
    the order a set or a backend's rows happen to come in (the whole graph and the part a
    query reaches then pick the same memories)."""
    weight: Counter[str] = Counter()
    for entity, share in plan:
        for memory_id in memories.get(entity, ()):
            weight[memory_id] += share
    return dict(heapq.nsmallest(budget, weight.items(), key=lambda kv: (-kv[1], kv[0])))


def ranked(
    store: Store, scope: Scope, query: str, filters: Filters, settings: Settings, found: Iterable[str],
) -> list[tuple[str, float]]:
    """The graph's ranked list for `query`: `expand`'s memories that the filters allow, each
    scored by its graph weight times how well it matches the query's words (BM25 over the
    graph's budget of memories), best first. `found`: memories the other retrievers already
    found (they passed the filters)."""
    if not supported(store):
        return []
    hits = expand_in(store, scope.user_id, query, fanout=settings.graph_fanout, budget=settings.graph_memories)
    if not hits:
        return []
    terms = list(dict.fromkeys(lexical_tokens(query)))
    lexical = dict(store.lexical_search(
        scope, terms, filters, settings.graph_memories, context_weight=settings.weight_context,
    )) if terms else {}
    # what the other searches found passed the filters; the rest must be live memories, and only
    # the default reading (live memories of any agent) can take them unread
    allowed = {i for i in hits if i in lexical} | {i for i in found if i in hits}
    statuses = {getattr(s, "value", s) for s in (filters.status or [])}
    if scope.agent_id is None and set(filters.model_fields_set) <= {"status"} and statuses == set(LIVE):
        # the rest of the hits by their status alone (light rows; not every live memory of the user)
        rows = store.signals([i for i in hits if i not in allowed])
        allowed |= {i for i, row in rows.items() if getattr(row.status, "value", row.status) in LIVE}
    if not allowed:
        return []
    top_graph = max(hits[i] for i in allowed)
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    scored = [
        (i, (hits[i] / top_graph) * (TOPIC_FLOOR + (1 - TOPIC_FLOOR) * lexical.get(i, 0.0) / top_lexical))
        for i in allowed
    ]
    scored.sort(key=lambda t: t[1], reverse=True)
    return scored
