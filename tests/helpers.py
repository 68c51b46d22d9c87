"""Test helpers: tell the episode `add()` keeps of each user turn apart from the facts drawn from it.

Since issue #12, `Memory.add(infer=True)` also stores each (non-chatter) user turn verbatim as a
memory of kind `turn` and source `episode`, and returns its ADD event last. Tests that count or list
what extraction found use `facts(...)` to leave those episodes out; nothing else is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from engram import Event, Kind, MemoryItem, SearchResult
from engram.models import Source

T = TypeVar("T")


def _item(x: Any) -> Any:
    """The memory behind an event, a search hit, a memory or an exported/JSON dict."""
    if isinstance(x, Event):
        return x.memory
    if isinstance(x, SearchResult):
        return x.memory
    if isinstance(x, dict) and isinstance(x.get("memory"), dict):
        return x["memory"]
    return x


def is_episode(x: Any) -> bool:
    """True for an episode: a user turn `add()` kept verbatim (kind turn, source episode)."""
    m = _item(x)
    if m is None:
        return False
    if isinstance(m, MemoryItem):
        return m.kind is Kind.TURN and m.source is Source.EPISODE
    if isinstance(m, dict):
        return m.get("kind") == Kind.TURN.value and m.get("source") == Source.EPISODE.value
    return False


def facts(xs: Iterable[T]) -> list[T]:
    """`xs` (events, memories, search hits or dicts) without the episodes."""
    return [x for x in xs if not is_episode(x)]


def episodes(xs: Iterable[T]) -> list[T]:
    """Only the episodes among `xs`."""
    return [x for x in xs if is_episode(x)]
