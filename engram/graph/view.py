"""The user's graph as the user sees it: a pydantic model (`Memory.graph`), and a self-contained
HTML drawing (inline SVG, no script or CDN) for `engram graph --html`.

Only what live memories (active, disputed) back is shown: an entity whose memories were all
superseded or archived, or a relation whose memory was, is not part of the current graph.
"""

from __future__ import annotations

import html
import math
from collections import Counter

from pydantic import BaseModel, Field

from engram.graph.build import supported
from engram.store.base import Store


class GraphEntity(BaseModel):
    id: str
    name: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    memories: list[str] = Field(default_factory=list, description="ids of the live memories that name it")


class GraphRelation(BaseModel):
    source: str
    relation: str
    target: str
    memories: list[str] = Field(default_factory=list, description="the live memories that say it")
    reason: str = ""


class GraphTrace(BaseModel):
    action: str
    entity: str
    detail: str
    at: str


class UserGraph(BaseModel):
    """One user's entities and relations, with the trace of how names were resolved."""

    user_id: str
    entities: list[GraphEntity]
    relations: list[GraphRelation]
    history: list[GraphTrace] = Field(default_factory=list)


def user_graph(store: Store, user_id: str) -> UserGraph:
    """The user's graph as shown (empty on a store that keeps no graph: engram.graph.build.supported)."""
    if not supported(store):
        return UserGraph(user_id=user_id, entities=[], relations=[])
    snap = store.graph_snapshot(user_id)
    live = store.graph_live(user_id)
    memories: dict[str, list[str]] = {}
    for m in snap.mentions:
        if m.memory_id in live:
            memories.setdefault(m.entity_id, []).append(m.memory_id)
    aliases: dict[str, list[str]] = {}
    for a in snap.aliases:
        entity = snap.entities.get(a.entity_id)
        if entity is not None and a.alias != entity.name:
            aliases.setdefault(a.entity_id, []).append(a.alias)
    entities = [
        GraphEntity(id=e.id, name=e.name, type=e.type, aliases=sorted(set(aliases.get(e.id, []))),
                    memories=sorted(memories[e.id]))
        for e in snap.entities.values() if e.id in memories
    ]
    entities.sort(key=lambda e: (-len(e.memories), e.name))
    relations: dict[tuple[str, str, str], GraphRelation] = {}
    for edge in snap.edges:
        if edge.memory_id not in live or edge.src not in memories or edge.dst not in memories:
            continue
        r = relations.setdefault((edge.src, edge.rel, edge.dst), GraphRelation(
            source=edge.src, relation=edge.rel, target=edge.dst, reason=edge.reason))
        r.memories.append(edge.memory_id)
    history = [GraphTrace(action=h.action, entity=h.entity_id, detail=h.detail, at=h.at.isoformat())
               for h in store.graph_history(user_id)]
    return UserGraph(user_id=user_id, entities=entities, relations=list(relations.values()), history=history)


_COLOURS = {"person": "#4c78a8", "pet": "#f58518", "place": "#54a24b", "org": "#b279a2", "project": "#e45756",
            "product": "#9d755d", "work": "#eeca3b", "activity": "#72b7b2", "instrument": "#ff9da6"}


def to_html(graph: UserGraph, *, max_nodes: int = 120) -> str:
    """A self-contained page: the graph drawn as SVG on circles by type (the most linked entities
    first), with the relations as labelled lines, and the tables below."""
    shown = graph.entities[:max_nodes]
    ids = {e.id for e in shown}
    width = height = 900
    cx = cy = width / 2
    pos: dict[str, tuple[float, float]] = {}
    rings = Counter(e.type for e in shown)
    order = sorted(rings, key=lambda t: -rings[t])
    placed: Counter[str] = Counter()
    for e in shown:
        ring = order.index(e.type)
        radius = 90 + ring * (width / 2 - 120) / max(1, len(order) - 1 or 1)
        angle = 2 * math.pi * placed[e.type] / rings[e.type] + ring * 0.4
        placed[e.type] += 1
        pos[e.id] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    esc = html.escape
    lines = []
    for r in graph.relations:
        if r.source in ids and r.target in ids:
            (x1, y1), (x2, y2) = pos[r.source], pos[r.target]
            lines.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="#999"/>'
                         f'<text x="{(x1 + x2) / 2:.0f}" y="{(y1 + y2) / 2:.0f}" class="rel">{esc(r.relation)}</text>')
    nodes = []
    for e in shown:
        x, y = pos[e.id]
        size = 5 + min(15, 2 * math.log1p(len(e.memories)) * 2)
        nodes.append(f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{size:.0f}" fill="{_COLOURS.get(e.type, "#bab0ac")}">'
                     f'<title>{esc(e.name)} ({esc(e.type)}), {len(e.memories)} memories</title></circle>'
                     f'<text x="{x + size + 2:.0f}" y="{y + 4:.0f}">{esc(e.name)}</text>')
    names = {e.id: e.name for e in graph.entities}
    rows = "".join(f"<tr><td>{esc(e.name)}</td><td>{esc(e.type)}</td><td>{esc(', '.join(e.aliases))}</td>"
                   f"<td>{len(e.memories)}</td></tr>" for e in graph.entities)
    rels = "".join(f"<tr><td>{esc(names.get(r.source, r.source))}</td><td>{esc(r.relation)}</td>"
                   f"<td>{esc(names.get(r.target, r.target))}</td><td>{esc(r.reason)}</td></tr>" for r in graph.relations)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>engram graph: {esc(graph.user_id)}</title>
<style>body{{font-family:sans-serif;margin:1em}}svg text{{font-size:11px}}svg .rel{{fill:#777;font-size:9px}}
table{{border-collapse:collapse;margin-top:1em}}td,th{{border:1px solid #ccc;padding:2px 6px;text-align:left}}</style>
</head><body><h1>{esc(graph.user_id)}: {len(graph.entities)} entities, {len(graph.relations)} relations</h1>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
{''.join(lines)}{''.join(nodes)}</svg>
<table><tr><th>entity</th><th>type</th><th>aliases</th><th>memories</th></tr>{rows}</table>
<table><tr><th>source</th><th>relation</th><th>target</th><th>said as</th></tr>{rels}</table>
</body></html>"""
