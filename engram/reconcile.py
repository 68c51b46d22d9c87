"""Decide what a new candidate does to what is already remembered.

Pure logic over the neighbours the caller found (same content, same key,
similar vectors), so every backend gets the same decisions:

- NOOP: the same statement (exactly or nearly) is already there — reinforce it;
- SUPERSEDE: same slot, new value (latest wins, the old one stays as history);
- DISPUTE: opposite feelings about the same thing with no sign that it changed —
  keep both and let the user settle it;
- ADD: anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.models import Action, Candidate, MemoryItem
from engram.text import normalize

# words that say the newer statement replaces the older one
_CHANGE_MARKERS = re.compile(
    r"\b(now|anymore|any more|no longer|these days|nowadays|changed|switched|used to|since)\b"
    r"|现在|不再|已经|改成|改为|变成|如今|最近开始|以前|后来",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    target: MemoryItem | None
    reason: str


def signals_change(text: str) -> bool:
    return bool(_CHANGE_MARKERS.search(text))


def polarity_of(item: MemoryItem) -> int:
    return int(item.metadata.get("polarity", 0))


def decide(
    candidate: Candidate,
    *,
    said: str,
    exact: list[MemoryItem],
    same_key: list[MemoryItem],
    similar: list[tuple[MemoryItem, float]],
    duplicate_similarity: float,
) -> Decision:
    """The action for `candidate`, given its neighbours (all live memories of the scope).

    `said` is the user's original sentence, used to spot words of change.
    """
    if exact:
        return Decision(Action.NOOP, exact[0], "already remembered (same statement)")
    if candidate.key and same_key:
        current = same_key[0]
        old_polarity, new_polarity = polarity_of(current), candidate.polarity
        if old_polarity and new_polarity and old_polarity != new_polarity:
            if signals_change(said):
                return Decision(
                    Action.SUPERSEDE, current,
                    f"{candidate.key}: feeling changed (said: {said.strip()[:80]})",
                )
            return Decision(
                Action.DISPUTE, current,
                f"{candidate.key}: contradicts an earlier statement; unclear whether it changed",
            )
        if normalize(candidate.value or "") == normalize(current.value or ""):
            return Decision(Action.NOOP, current, f"{candidate.key}: same value already remembered")
        return Decision(
            Action.SUPERSEDE, current,
            f"{candidate.key}: {current.value!s} -> {candidate.value!s} (latest wins)",
        )
    for item, similarity in similar:
        if similarity >= duplicate_similarity and item.kind == candidate.kind:
            return Decision(
                Action.NOOP, item, f"near-duplicate of an existing memory (cosine {similarity:.2f})"
            )
    return Decision(Action.ADD, None, candidate.reason or "new memory")
