"""A metadata filter in mem0's language as SQL, for any backend: the logic (AND / OR / NOT,
operators per key) is here, each backend says how one key compares (its JSON functions)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# (key, operator, operand) -> (SQL, parameters): one comparison of one metadata key
Leaf = Callable[[str, str, Any], tuple[str, list[Any]]]


def metadata_sql(condition: Mapping[str, Any], leaf: Leaf, *, true: str, false: str) -> tuple[str, list[Any]]:
    """``{"k": v}`` equals, ``{"k": {"gte": 3, "ne": 5}}`` operators (eq ne gt gte lt lte in nin
    contains, checked by `engram.validate.filters`), ``{"AND"|"OR": [conditions]}``,
    ``{"NOT": condition}`` (a memory without the key is "not" it)."""
    parts: list[str] = []
    params: list[Any] = []
    for name, value in condition.items():
        if name in ("AND", "OR"):
            subs = [metadata_sql(c, leaf, true=true, false=false) for c in value]
            parts.append("(" + f" {name} ".join(s for s, _ in subs) + ")" if subs else true)
            params += [p for _, args in subs for p in args]
        elif name == "NOT":
            clause, args = metadata_sql(value, leaf, true=true, false=false)
            parts.append(f"NOT COALESCE(({clause}), {false})")
            params += args
        else:
            for op, operand in (value if isinstance(value, Mapping) else {"eq": value}).items():
                sql, args = leaf(name, op, operand)
                parts.append(sql)
                params += args
    return " AND ".join(parts) or true, params
