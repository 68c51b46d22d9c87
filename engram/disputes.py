"""Contradictions the user has to settle: clarifying questions and `resolve`.

Reconciliation marks two memories `disputed` when a new statement contradicts
an active one without a sign that it replaces it ("I love coffee" … later
"I hate coffee"); both keep ``metadata["disputes"]`` pointing at each other.
They stay retrievable — `Memory.search` returns them by default with a
`Clarification` attached, and `context()` lists the question — until
`resolve` settles them:

- ``keep=<id>`` / ``"newer"`` / ``"older"``: that one becomes active again; the
  other is superseded (``superseded_by``, and ``valid_to``: when the newer
  statement was made if the newer one wins, or its own start if the older one
  wins — it was never true);
- ``"both"``: both hold (different contexts): both active again;
- ``"neither"``: both superseded as of now.

Questions are in the language of the newer statement::

    You said earlier that you love coffee, and now that you dislike coffee — has that changed?
    我记得您之前说喜欢咖啡，但现在说讨厌咖啡，是偏好发生了变化吗？
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from engram.errors import InvalidInput, NotFound
from engram.models import (
    Action,
    Clarification,
    Event,
    Filters,
    Kind,
    MemoryItem,
    Status,
    utcnow,
)
from engram.store.base import Scope, Store, Transition

if TYPE_CHECKING:  # pragma: no cover
    from engram.display import Display

__all__ = ["clarification_for", "clarifications", "dispute_group", "question", "resolve"]

KEEP_CHOICES = ("newer", "older", "both", "neither")

# "User loves coffee." -> "you love coffee"
_EN_SUBJECT = (
    (re.compile(r"^User's\s+", re.I), "your "),
    (re.compile(r"^User\s+is\b", re.I), "you are"),
    (re.compile(r"^User\s+was\b", re.I), "you were"),
    (re.compile(r"^User\s+has\b", re.I), "you have"),
    (re.compile(r"^User\s+does\b", re.I), "you do"),
    (re.compile(r"^User\s+doesn't\b", re.I), "you don't"),
)
_EN_VERB = re.compile(r"^User\s+((?:\w+ly\s+)*)([a-z]+)\b")
_EN_REST = ((re.compile(r"\btheir\b"), "your"), (re.compile(r"\bthemselves\b"), "yourself"),
            (re.compile(r"\bthey are\b"), "you are"), (re.compile(r"\bthey\b"), "you"))


def _base_verb(verb: str) -> str:
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb


def _second_person_en(content: str) -> str:
    text = content.strip().rstrip(".!")
    for pattern, replacement in _EN_SUBJECT:
        if pattern.match(text):
            text = pattern.sub(replacement, text, count=1)
            break
    else:
        m = _EN_VERB.match(text)
        if m:
            text = "you " + m.group(1) + _base_verb(m.group(2)) + text[m.end():]
        else:
            return f"“{text}”"
    for pattern, replacement in _EN_REST:
        text = pattern.sub(replacement, text)
    return text


def _second_person_zh(content: str) -> str:
    text = content.strip().rstrip("。！.!")
    if text.startswith("用户的"):
        text = "您的" + text[3:]
    elif text.startswith("用户"):
        text = text[2:]
    return text.replace("用户", "您")


def question(older: MemoryItem, newer: MemoryItem, language: str | None = None) -> str:
    """The clarifying question for two contradicting memories (older first)."""
    language = language or newer.language
    if language == "zh":
        topic = "偏好" if newer.kind is Kind.PREFERENCE else "情况"
        return (
            f"我记得您之前说{_second_person_zh(older.content)}，"
            f"但现在说{_second_person_zh(newer.content)}，是{topic}发生了变化吗？"
        )
    return (
        f"You said earlier that {_second_person_en(older.content)}, and now that "
        f"{_second_person_en(newer.content)} — has that changed?"
    )


def _links(item: MemoryItem) -> list[str]:
    value = item.metadata.get("disputes")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def dispute_group(store: Store, item: MemoryItem) -> list[MemoryItem]:
    """The disputed memories `item` conflicts with (itself included), oldest first."""
    scope = Scope(item.user_id, item.agent_id)
    found: dict[str, MemoryItem] = {item.id: item}
    frontier = [item]
    while frontier:
        wanted = [i for m in frontier for i in _links(m) if i not in found]
        frontier = [m for m in store.get_many(wanted) if m.status is Status.DISPUTED and m.user_id == item.user_id]
        found.update((m.id, m) for m in frontier)
    if item.key:
        for other in store.find_by_key(scope, item.key, Filters(status=[Status.DISPUTED])):
            found.setdefault(other.id, other)
    return sorted(found.values(), key=lambda m: (m.created_at, m.id))


def clarification_for(store: Store, item: MemoryItem) -> Clarification | None:
    """The question to ask about a disputed memory (None when it is not disputed)."""
    if item.status is not Status.DISPUTED:
        return None
    group = dispute_group(store, item)
    if len(group) < 2:
        return None
    older, newer = group[0], group[-1]
    return Clarification(
        memory_ids=[m.id for m in group], key=item.key, question=question(older, newer),
        language=newer.language, contents=[m.content for m in group],
    )


def clarifications(
    store: Store, scope: Scope, *, items: Iterable[MemoryItem] | None = None, limit: int | None = None
) -> list[Clarification]:
    """Open questions of a scope (or about `items`), newest dispute first, one per group."""
    if items is None:
        items = store.list(scope, Filters(status=[Status.DISPUTED]))
    out: list[Clarification] = []
    seen: set[str] = set()
    for item in items:
        if item.status is not Status.DISPUTED or item.id in seen:
            continue
        clar = clarification_for(store, item)
        if clar is None:
            continue
        seen.update(clar.memory_ids)
        out.append(clar)
        if limit is not None and len(out) >= limit:
            break
    return out


def resolve(
    store: Store, display: Display, memory_id: str, keep: str, *, now: datetime | None = None
) -> list[Event]:
    """Settle the dispute `memory_id` belongs to; see the module docstring for `keep`.
    The events show memories as `display` redacts them."""
    now = utcnow() if now is None else now
    item = store.get(memory_id) if isinstance(memory_id, str) and memory_id else None
    if item is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    if item.status is not Status.DISPUTED:
        raise InvalidInput(f"memory {memory_id!r} is {item.status.value}, not disputed: nothing to resolve")
    if not isinstance(keep, str) or not keep:
        raise InvalidInput(f"keep must be a memory id or one of {', '.join(KEEP_CHOICES)}")
    group = dispute_group(store, item)
    ids = [m.id for m in group]
    if keep == "this":
        keep = item.id
    if keep == "newer":
        winners = [group[-1]]
    elif keep == "older":
        winners = [group[0]]
    elif keep == "both":
        winners = list(group)
    elif keep == "neither":
        winners = []
    elif keep in ids:
        winners = [m for m in group if m.id == keep]
    else:
        raise InvalidInput(
            f"keep must be one of {', '.join(KEEP_CHOICES)} or the id of a disputed memory in "
            f"this group ({', '.join(ids)}), not {keep!r}"
        )
    winner_ids = {m.id for m in winners}
    winner = winners[0] if len(winners) == 1 else None
    transitions: list[Transition] = []
    patch = {"disputes": None, "resolved_at": now.isoformat(), "resolved_keep": keep}
    for m in group:
        if m.id in winner_ids:
            transitions.append(Transition(
                memory_id=m.id, status=Status.ACTIVE.value, action="RESOLVE",
                reason=f"dispute settled: kept ({keep})", at=now, from_status=(Status.DISPUTED.value,),
                metadata=patch,
            ))
            continue
        if winner is not None:
            # the newer statement winning ends the older one when it was made;
            # the older winning means the newer one never held
            end = winner.valid_from or winner.created_at
            if m.created_at > winner.created_at:
                end = m.valid_from or m.created_at
            fields = {"valid_to": end, "superseded_by": winner.id}
        else:
            fields = {"valid_to": now}
        transitions.append(Transition(
            memory_id=m.id, status=Status.SUPERSEDED.value, action="SUPERSEDE",
            reason="dispute settled: " + ("the other statement holds" if winner else "neither holds"),
            at=now, from_status=(Status.DISPUTED.value,), metadata=patch, fields=fields,
            related_id=winner.id if winner else None,
        ))
    changed = set(store.transition(transitions, atomic=True))
    if not changed:
        raise InvalidInput("the dispute changed meanwhile; look again and retry")
    after = {m.id: m for m in store.get_many(ids)}
    events = []
    for m in group:
        current = after.get(m.id)
        if current is None:
            continue
        action = Action.RESOLVE if m.id in winner_ids else Action.SUPERSEDE
        events.append(Event(
            action=action, memory=display.item(current), previous=display.item(m),
            reason=f"dispute settled (keep={keep})",
        ))
    return events
