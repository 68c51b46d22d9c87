"""Typed entities and relations from the LLM extraction (when one is configured), checked
against what the user said before they reach the graph.

The extraction prompt (prompts/extract.*.j2) asks, per memory, for ``entities`` ([{name, type}])
and ``relations`` ([{source, relation, target, reason}], an end may be "user"). An entity is kept
only when its name appears in what the user said (case, width and traditional/simplified
Chinese aside: engram.graph.names.key): a model's guess at a name is not a memory. A relation is
kept only when both its ends are kept entities (or the user) and its name is a short label.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from engram.graph.extract_entities import SELF_REF, Found, Ref
from engram.graph.names import key

TYPES = frozenset({"person", "pet", "place", "org", "project", "product", "work", "activity", "instrument", "name"})
_TYPE_ALIASES = {"organisation": "org", "organization": "org", "company": "org", "location": "place", "city": "place",
                 "country": "place", "animal": "pet", "book": "work", "song": "work", "movie": "work", "people": "person",
                 "人物": "person", "人": "person", "宠物": "pet", "地点": "place", "组织": "org", "公司": "org",
                 "项目": "project", "产品": "product", "作品": "work", "活动": "activity", "乐器": "instrument"}
_RELATION = re.compile(r"^[\w\u4e00-\u9fff]{1,40}$")
_USER = {"user", "the user", "用户", "我", "i", "me"}


def parse_entities(value: Any) -> list[tuple[str, str]]:
    """[(name, type)] from the model's ``entities`` (objects or bare names), well-formed ones only."""
    out: list[tuple[str, str]] = []
    for entry in value if isinstance(value, list) else []:
        name, type_ = (entry.get("name"), entry.get("type", "name")) if isinstance(entry, dict) else (entry, "name")
        if not isinstance(name, str) or not name.strip() or len(name) > 60:
            continue
        type_ = str(type_ or "name").strip().lower()
        type_ = _TYPE_ALIASES.get(type_, type_)
        out.append((name.strip(), type_ if type_ in TYPES else "name"))
    return out


def parse_relations(value: Any) -> list[tuple[str, str, str, str]]:
    """[(source, relation, target, reason)] from the model's ``relations``, well-formed ones only."""
    out: list[tuple[str, str, str, str]] = []
    for entry in value if isinstance(value, list) else []:
        if not isinstance(entry, dict):
            continue
        parts = [entry.get(k) for k in ("source", "relation", "target")]
        if not all(isinstance(p, str) and p.strip() for p in parts):
            continue
        source, relation, target = (p.strip() for p in parts)  # type: ignore[union-attr]
        relation = relation.lower().replace(" ", "_").replace("-", "_")
        if _RELATION.match(relation):
            out.append((source, relation, target, str(entry.get("reason") or "")[:200]))
    return out


def grounded(
    entities: Sequence[tuple[str, str]], relations: Sequence[tuple[str, str, str, str]], said: str,
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str, str]], int]:
    """The entities named in `said` (what the user said), the relations between them (or the
    user), and how many of either were dropped."""
    text = key(said)
    kept = [(_as_said(n, said), t) for n, t in entities if key(n) and key(n) in text]
    names = {key(n) for n, _ in kept}
    rels = [
        r for r in relations
        if all(key(end) in names or end.strip().lower() in _USER for end in (r[0], r[2]))
    ]
    return kept, rels, len(entities) - len(kept) + len(relations) - len(rels)


def _as_said(name: str, said: str) -> str:
    """`name` as the user wrote it ("張三" from the model, "张三" in the conversation)."""
    plain = unicodedata.normalize("NFKC", said)
    k = key(name)
    first = k[:1]
    for start in range(0, max(0, len(plain) - len(name)) + 1):
        if key(plain[start]) == first and key(plain[start : start + len(name)]) == k:
            return plain[start : start + len(name)]
    return name


def found_of(entities: Sequence[tuple[str, str]], relations: Sequence[tuple[str, str, str, str]]) -> Found:
    """The LLM's entities and relations in the rules' terms (engram.graph.extract_entities)."""
    found = Found()
    index: dict[str, int] = {}
    for name, type_ in entities:
        index[key(name)] = found.add(Ref(name, type_))

    def end(name: str) -> int | None:
        return SELF_REF if name.strip().lower() in _USER else index.get(key(name))

    for source, relation, target, reason in relations:
        src, dst = end(source), end(target)
        if src is not None and dst is not None:
            found.relate(src, relation, dst, f"llm: {reason}" if reason else "llm extraction")
    return found
