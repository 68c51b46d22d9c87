"""The memory capsule (OptMem): deltas at session end, promotion, the capsule.

    session ends ─► compress: the session's memories → one structured delta
                    (preferences · known facts · current task state · identity),
                    stored as a `summary` memory that links its sources
    add ──────────► promote: explicit, identity, and what a later session says
                    again become `long_term`
    capsule ──────► long-term memories + the current versions of the deltas'
                    sources, deduplicated, ordered by section and score, packed
                    into an exact token budget by evicting the lowest
                    importance/use/recency; cached per user until memory changes
    context ──────► engram.context: this capsule + the few memories most relevant
                    to the message, packed into a budget

The capsule is built from the deltas' *sources*, not their frozen text, so a
fact that changed after its session ended shows its new value, and a deleted
memory leaves the capsule at once. Everything here is deterministic and needs
no LLM.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataclasses import dataclass

from pydantic import BaseModel, Field

from engram.models import (
    Action,
    Filters,
    Kind,
    Layer,
    MemoryItem,
    Message,
    Source,
    Status,
    new_id,
    utcnow,
)
from engram.privacy import redact
from engram.reconcile import negates, polarity_of
from engram.records import make_record
from engram.store.base import HistoryEvent, MemoryRow, Record, Scope
from engram.templates import render
from engram.text import normalize
from engram.tokens import TokenCounter, get_counter

if TYPE_CHECKING:  # pragma: no cover
    from engram.retrieve import Retriever
    from engram.services import Services

# the LLM's delta lines for (scope, items, lines, language), or None: keep the deterministic ones
Compressor = Callable[[Scope, Sequence[MemoryItem], Sequence["Line"], str], "list[Line] | None"]

log = logging.getLogger("engram.capsule")

__all__ = [
    "Capsule",
    "CapsuleEngine",
    "Context",
    "Delta",
    "LeftOut",
    "Line",
    "SECTIONS",
    "compress_items",
    "keep_score",
    "promotion",
]

SECTIONS = ("preferences", "facts", "events", "task", "identity")
SECTION_OF_KIND: dict[Kind, str] = {
    Kind.PREFERENCE: "preferences",
    Kind.FACT: "facts",
    Kind.EVENT: "events",
    Kind.TASK: "task",
    Kind.DECISION: "task",
    Kind.IDENTITY: "identity",
}
_SECTION_OF_VALUE = {kind.value: section for kind, section in SECTION_OF_KIND.items()}


def section_of(kind: Kind | str, key: str | None) -> str:
    """A memory's capsule section: by its kind, except that a routine ("User calls their mom
    every Sunday", a task keyed ``habit:…``) is known about the user, not a task's state."""
    if key and key.startswith("habit:"):
        return "facts"
    return _SECTION_OF_VALUE.get(kind.value if isinstance(kind, Kind) else kind, "facts")

# kinds that become long-term when a later session says them again
_PROMOTE_AGAIN = {Kind.PREFERENCE, Kind.FACT, Kind.IDENTITY, Kind.DECISION}
_DIRECT_KINDS = {k.value for k in _PROMOTE_AGAIN}  # in the capsule when added outside a session
# markers as the bundled templates render them; used only to estimate line costs
_MARKERS = {"zh": ("（已更新）", "（待确认）"), "en": (" (updated)", " (unconfirmed)")}


# --------------------------------------------------------------------------- models
class Line(BaseModel):
    """One line of a delta, a capsule or a context, and the memory it comes from."""

    section: str
    text: str
    memory_id: str | None = None
    kind: Kind | None = None
    updated: bool = False  # replaced an earlier value ("已更新")
    disputed: bool = False  # contradicts another memory, not settled
    score: float = 0.0
    tokens: int = 0
    when: str | None = None  # date shown for events and raw turns in a context


@dataclass(slots=True)
class LeftOut:
    """A memory that did not make it into a capsule or context, and why.

    A plain dataclass: a capsule of a 10k-memory user reports thousands of these.
    """

    memory_id: str
    content: str
    section: str
    score: float
    reason: str  # "budget" | "duplicate of <id>" | "in capsule"
    tokens: int = 0  # what its line would have cost (at least; not counted when clearly too long)


class Delta(BaseModel):
    """The compressed increment of a session (or of a day / a task)."""

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    language: str = "en"
    lines: list[Line] = Field(default_factory=list)
    text: str = ""
    summary: MemoryItem | None = None  # the stored `summary` memory; None when nothing to compress
    sources: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utcnow)
    end_reason: str | None = None
    already_ended: bool = False  # this call found the session ended already (idempotent end)

    def section(self, name: str) -> list[Line]:
        return [line for line in self.lines if line.section == name]


class Capsule(BaseModel):
    """What a user's long-term memory looks like inside a token budget."""

    user_id: str
    agent_id: str | None = None
    language: str = "en"
    text: str = ""  # exactly what is injected ("" when there is nothing to say)
    token_count: int = 0
    budget: int
    encoding: str
    lines: list[Line] = Field(default_factory=list)
    memories: list[MemoryItem] = Field(default_factory=list)
    left_out: list[LeftOut] = Field(default_factory=list)
    last_updated: datetime | None = None
    built_at: datetime = Field(default_factory=utcnow)
    version: int = 0
    cached: bool = False

    @property
    def memory_ids(self) -> list[str]:
        return [m.id for m in self.memories]


class Context(BaseModel):
    """Everything to put in front of the LLM for one turn, inside a token budget."""

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    query: str
    language: str = "en"
    text: str = ""  # the rendered system-prompt block ("" when there is nothing to say)
    token_count: int = 0
    budget: int
    encoding: str
    capsule: Capsule
    relevant: list[Line] = Field(default_factory=list)
    clarifications: list[str] = Field(default_factory=list)
    reminders: list[str] = Field(default_factory=list)  # tasks due soon (engram.reminders)
    paused: bool = False  # the user paused memory: nothing new is remembered
    turns: list[Message] = Field(default_factory=list)
    memories: list[MemoryItem] = Field(default_factory=list)  # every memory the text uses
    left_out: list[LeftOut] = Field(default_factory=list)
    built_at: datetime = Field(default_factory=utcnow)


# --------------------------------------------------------------------------- templates
def sections_of(lines: Iterable[Line]) -> list[dict[str, Any]]:
    by_section: dict[str, list[Line]] = {}
    for line in lines:
        by_section.setdefault(line.section, []).append(line)
    return [{"key": key, "lines": by_section[key]} for key in SECTIONS if key in by_section]


def summary_record(summary: MemoryItem) -> Record:
    """A delta as stored: not indexed for search (its text is frozen at compression time and
    would surface stale values; its sources are searchable one by one)."""
    record = make_record(summary)
    record.tokens = []
    return record


def delta_without(summary: MemoryItem, gone: Mapping[str, MemoryItem], template_dir: Path | None) -> MemoryItem | None:
    """A new summary for a session or user delta that quoted deleted memories (`gone`): its
    other lines, rendered again. The capsule shows a delta's sources, so deleting the whole
    delta for one forgotten line ("forget my trip") dropped the rest of it from the capsule
    (an allergy among them) until the next session ended.

    None when the delta must simply go: nothing else in it, a merge (`lifecycle` restores its
    sources), an LLM wrote it (a line may say a deleted memory's words under another id), or a
    line left still contains a deleted memory's text."""
    if summary.kind is not Kind.SUMMARY or "delta_of" not in summary.metadata or summary.metadata.get("compressed_by") != "rules":
        return None
    lines = [Line.model_validate(ln) for ln in summary.metadata.get("lines", [])]
    kept = [ln for ln in lines if ln.memory_id not in gone]
    said = [normalize(m.content) for i, m in gone.items() if i != summary.id and m.kind is not Kind.SUMMARY]
    if not kept or any(text and text in normalize(ln.text) for ln in kept for text in said):
        return None
    return summary.model_copy(update={
        "id": new_id(),
        "content": render(
            "delta", summary.language, template_dir, sections=sections_of(kept),
            session_id=summary.session_id, date=summary.created_at.strftime("%Y-%m-%d"),
        ),
        "sources": [i for i in summary.sources if i not in gone],
        "metadata": {**summary.metadata, "lines": [
            ln.model_dump(mode="json", include={"section", "text", "memory_id", "kind", "updated", "disputed"}) for ln in kept
        ]},
        "updated_at": utcnow(),
    })


# --------------------------------------------------------------------------- scoring
def majority_language(items: Iterable[MemoryItem]) -> str:
    """The language most of `items` are in; English on a tie or when empty."""
    return _majority(i.language for i in items)


def _majority(languages: Iterable[str]) -> str:
    counts = Counter(languages)
    return "zh" if counts.get("zh", 0) > counts.get("en", 0) else "en"


def keep_score(item: MemoryItem, now: datetime, half_life_days: float = 30.0) -> float:
    """What a memory is worth keeping in a capsule: importance, use and recency.

    Use counts retrievals and reinforcements (a statement said again);
    recency runs from the last use or change. The lowest score is evicted first.
    """
    return _keep_score(
        item.importance, item.access_count, item.strength, item.updated_at.timestamp(),
        item.last_accessed.timestamp() if item.last_accessed else None, now.timestamp(),
        half_life_days, bool(item.metadata.get("pinned")),
    )


def _keep_score(
    importance: float, access_count: int, strength: float, updated_at: float,
    last_accessed: float | None, now: float, half_life_days: float, pinned: bool = False,
) -> float:
    uses = access_count + max(0.0, strength - 1.0)
    use = 1.0 - 1.0 / (1.0 + math.log1p(uses))
    age_days = max(0.0, (now - max(updated_at, last_accessed or updated_at)) / 86400.0)
    recency = math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 0.0
    # a pinned memory (the user asked to keep it) outranks everything else
    return 0.5 * importance + 0.25 * use + 0.25 * recency + (1.0 if pinned else 0.0)


def line_of(
    item: MemoryItem, counter: TokenCounter | None, line_tokens: int, **extra: Any
) -> Line:
    """A line for `item`, cut to `line_tokens`; with `counter=None` it is cut (and
    counted) later by `_measure`, so that lines never considered cost nothing."""
    line = Line(
        section=section_of(item.kind, item.key),
        text=item.content.strip(),
        memory_id=item.id,
        kind=item.kind,
        updated=item.supersedes is not None,
        disputed=item.status is Status.DISPUTED,
        **extra,
    )
    if counter is not None:
        _measure(line, counter, line_tokens)
    return line


def _measure(line: Line, counter: TokenCounter, line_tokens: int) -> int:
    """Cut the line to `line_tokens` and set `line.tokens` to its estimated rendered cost."""
    if line.tokens:
        return line.tokens
    n = counter.count(line.text)
    if n > line_tokens:
        line.text = counter.truncate(line.text, line_tokens)
        n = counter.count(line.text)
    # "- " and the newline, a marker or a date at most a few more; the exact render is checked
    line.tokens = n + 2 + 5 * (line.updated + line.disputed) + (6 if line.when else 0)
    return line.tokens


def line_cost(line: Line, counter: TokenCounter, language: str, prefix: str = "- ") -> int:
    """Estimated tokens of a rendered line (the exact render is checked afterwards)."""
    updated, disputed = _MARKERS.get(language, _MARKERS["en"])
    text = prefix + (f"[{line.when}] " if line.when else "") + line.text
    text += (updated if line.updated else "") + (disputed if line.disputed else "")
    return counter.count(text + "\n")


# --------------------------------------------------------------------------- compression
def compress_items(
    items: Sequence[MemoryItem], *, counter: TokenCounter, line_tokens: int
) -> list[Line]:
    """Merge a session's memories into delta lines, deterministically.

    - only what the five sections hold (no turns, no summaries, nothing archived);
    - superseded memories give way to their successor (latest wins);
    - one line per slot (`key`): the latest, marked updated when the slot
      changed value in these items or replaced an older memory;
    - the same statement once.
    """
    ordered = sorted(items, key=lambda i: (i.created_at, i.updated_at))
    latest_by_key: dict[str, MemoryItem] = {}
    values_by_key: dict[str, set[str]] = {}
    for item in ordered:
        slot = _slot(item.key, item.kind, polarity_of(item))
        if item.kind in SECTION_OF_KIND and slot:
            values_by_key.setdefault(slot, set()).add(normalize(item.value or item.content))
            if item.status in (Status.ACTIVE, Status.DISPUTED):
                latest_by_key[slot] = item
    lines: list[Line] = []
    seen_text: set[str] = set()
    for item in ordered:
        if item.kind not in SECTION_OF_KIND or item.status not in (Status.ACTIVE, Status.DISPUTED):
            continue
        slot = _slot(item.key, item.kind, polarity_of(item))
        if slot and latest_by_key.get(slot) is not item:
            continue
        text = normalize(item.content)
        if text in seen_text:
            continue
        seen_text.add(text)
        # what happened in the session is dated: "[2024-05-08] User donated their old car…"
        when = (item.valid_from or item.created_at).date().isoformat() if item.kind is Kind.EVENT else None
        line = line_of(item, counter, line_tokens, when=when)
        if slot and len(values_by_key.get(slot, ())) > 1:
            line.updated = True
        lines.append(line)
    order = {name: i for i, name in enumerate(SECTIONS)}
    lines.sort(key=lambda ln: order[ln.section])  # stable: within a section, in the order said
    return lines


def _slot(key: str | None, kind: Kind | str, polarity: int) -> str | None:
    """What one capsule line stands for: a memory's key, except that "no longer lives in
    Berlin" has a slot of its own; sharing one, it would hide "lives in Paris"."""
    if key is None:
        return None
    return f"{key}:no-longer" if negates(Kind(kind), polarity) else key


# --------------------------------------------------------------------------- promotion
def promotion(
    action: Action, item: MemoryItem, previous: MemoryItem | None, session_id: str | None
) -> tuple[MemoryItem, str] | None:
    """Whether what `add` is about to write makes `item` long-term: (promoted copy, reason).

    - explicit ("remember …") and identity memories at once;
    - a memory that replaces a long-term one (`previous`: its slot is established);
    - a preference, fact, identity or decision said again (NOOP) in a session
      other than the ones it was seen in (recorded in ``metadata["seen_in"]``).

    Decided before the write, so the promotion lands in the same transaction.
    """
    if item.layer is Layer.LONG_TERM or item.status is not Status.ACTIVE:
        return None
    reason = None
    extra: dict[str, Any] = {}
    if action in (Action.ADD, Action.SUPERSEDE, Action.UPDATE):
        if item.source is Source.EXPLICIT:
            reason = "explicit: the user asked to remember it"
        elif item.kind is Kind.IDENTITY:
            reason = "identity"
        elif action is Action.SUPERSEDE and previous is not None and previous.layer is Layer.LONG_TERM:
            reason = f"replaces long-term memory {previous.id}"
    elif action is Action.NOOP and session_id is not None and item.kind in _PROMOTE_AGAIN:
        seen = [s for s in [item.session_id, *item.metadata.get("seen_in", [])] if s]
        if seen and session_id not in seen:
            reason = f"seen again in a later session ({session_id})"
            extra["seen_in"] = list(dict.fromkeys([*seen, session_id]))
    if reason is None:
        return None
    promoted = item.model_copy(
        update={"layer": Layer.LONG_TERM, "metadata": {**item.metadata, **extra, "promoted": reason}}
    )
    return promoted, reason


# --------------------------------------------------------------------------- engine
class CapsuleEngine:
    """Builds deltas and capsules; caches capsules per user.

    `compress_with`: the LLM's delta writer (engram.llm), or None: deltas are the rules' lines."""

    def __init__(
        self, services: Services, retriever: Retriever, *,
        compress_with: Compressor | None = None, cache_size: int = 1024,
    ) -> None:
        self.services = services
        self.retriever = retriever
        self.compress_with = compress_with
        self._cache: OrderedDict[tuple[Any, ...], tuple[int, Capsule]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._daily_checked: dict[Scope, Any] = {}  # scope -> day its daily delta was checked

    @property
    def settings(self) -> Any:
        return self.services.settings

    @property
    def counter(self) -> TokenCounter:
        return get_counter(self.settings.token_encoding)

    # -- promotion -------------------------------------------------------------------
    # -- compression -----------------------------------------------------------------
    def compress(
        self,
        scope: Scope,
        items: Sequence[MemoryItem],
        *,
        session_id: str | None,
        of: str,
        end_reason: str | None = None,
        llm: bool = True,
    ) -> Delta:
        """Compress `items` into a delta and store it as a `summary` memory linking its sources
        (with `llm` and an LLM configured, OptMem's compress prompt writes it)."""
        s = self.settings
        items = [i for i in items if i.source is not Source.EPISODE]  # the marks, not the transcript
        language = majority_language(i for i in items if i.kind in SECTION_OF_KIND)
        lines = compress_items(items, counter=self.counter, line_tokens=s.line_tokens)
        sources = [ln.memory_id for ln in lines if ln.memory_id]
        # with an LLM: its delta (OptMem's compress prompt) when it validates, else these lines;
        # the capsule follows the same sources either way (engram.compress_llm)
        compress_with = self.compress_with if llm else None
        written = compress_with(scope, items, lines, language) if lines and compress_with is not None else None
        if written:
            lines = written
        delta = Delta(
            user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id,
            language=language, lines=lines, sources=sources,
            end_reason=end_reason,
        )
        if not lines:
            log.debug("compressed %s %s: nothing to remember", of, session_id or scope.user_id)
            return delta
        delta.text = render(
            "delta", language, s.template_dir, sections=sections_of(lines),
            session_id=session_id, date=delta.created_at.strftime("%Y-%m-%d"),
        )
        agent_ids = {i.agent_id for i in items}
        summary = MemoryItem(
            user_id=scope.user_id,
            agent_id=scope.agent_id or (agent_ids.pop() if len(agent_ids) == 1 else None),
            session_id=session_id, content=delta.text, kind=Kind.SUMMARY, language=language,
            importance=0.6, confidence=1.0, source=Source.LLM if written else Source.RULE,
            sources=delta.sources,
            metadata={
                "delta_of": of,
                "compressed_by": "llm" if written else "rules",
                "lines": [ln.model_dump(mode="json", include={"section", "text", "memory_id", "kind", "updated", "disputed"}) for ln in lines],
            },
            created_at=delta.created_at, updated_at=delta.created_at,
        )
        record = summary_record(summary)
        self.services.store.write(
            inserts=[record],
            events=[HistoryEvent.of(summary, "ADD", None, f"delta of {of} {session_id or ''}".strip())],
        )
        delta.summary = summary
        log.debug(
            "compressed %s %s: %d memories -> %d lines (summary %s)",
            of, session_id or scope.user_id, len(items), len(lines), summary.id,
        )
        return delta

    @staticmethod
    def delta_from_summary(summary: MemoryItem, **extra: Any) -> Delta:
        """Rebuild a stored delta (an idempotent `end_session` returns the same delta again)."""
        lines = [Line.model_validate(ln) for ln in summary.metadata.get("lines", [])]
        return Delta(
            user_id=summary.user_id, agent_id=summary.agent_id, session_id=summary.session_id,
            language=summary.language, lines=lines, text=summary.content, summary=summary,
            sources=list(summary.sources), created_at=summary.created_at, **extra,
        )

    def compress_session(
        self, scope: Scope, session_id: str, since: datetime | None, reason: str, *, llm: bool = True
    ) -> Delta:
        """The delta of one session: its memories written since its last compression."""
        user = Scope(scope.user_id)  # session ids are unique per user
        items = self.services.store.list(user, Filters(session_id=session_id, status=[]))
        if since is not None:
            items = [i for i in items if i.updated_at >= since]
        return self.compress(scope, items, session_id=session_id, of="session", end_reason=reason, llm=llm)

    def last_user_delta(self, scope: Scope) -> MemoryItem | None:
        found = self.services.store.list(
            scope, Filters(kind=[Kind.SUMMARY], status=[], metadata={"delta_of": "user"}), limit=1
        )
        return found[0] if found else None

    def compress_user(self, scope: Scope, *, reason: str) -> Delta:
        """The delta of everything written since the user's last user-level delta (daily / task)."""
        last = self.last_user_delta(scope)
        items = self.services.store.list(scope, Filters(status=[]))
        if last is not None:
            items = [i for i in items if i.updated_at > last.created_at]
        items = [i for i in items if i.kind in SECTION_OF_KIND]
        return self.compress(scope, items, session_id=None, of="user", end_reason=reason)

    def maybe_compress_daily(self, scope: Scope, now: datetime) -> Delta | None:
        """With ``compression = "daily"``: one user-level delta per (UTC) day."""
        if self.settings.compression != "daily":
            return None
        if self._daily_checked.get(scope) == now.date():
            return None
        last = self.last_user_delta(scope)
        self._daily_checked[scope] = now.date()
        if last is not None and last.created_at.date() >= now.date():
            return None
        return self.compress_user(scope, reason="daily")

    # -- capsule ---------------------------------------------------------------------
    def candidates(self, scope: Scope) -> list[MemoryRow]:
        """Long-term memories + the current versions of every delta's sources (light rows)."""
        rows = self.services.store.item_rows(scope, [Status.ACTIVE.value, Status.SUPERSEDED.value])
        by_id = {r.id: r for r in rows}
        kinds = {k.value for k in SECTION_OF_KIND}
        # long-term memories, and what was added outside any session (mem0-style `add`: no
        # session ends to make a delta of it), ranked with the rest when the capsule is packed
        found = {
            r.id for r in rows
            if r.status == "active" and r.kind in kinds
            and (r.layer == Layer.LONG_TERM.value or (r.session_id is None and r.kind in _DIRECT_KINDS))
        }
        for row in rows:
            if row.kind != Kind.SUMMARY.value or row.status != "active":
                continue
            for source in row.sources:
                current = by_id.get(source)
                for _ in range(16):  # follow superseded_by to the current version
                    if current is None or current.status == "active" or not current.superseded_by:
                        break
                    current = by_id.get(current.superseded_by)
                if current is not None and current.status == "active" and current.kind in kinds:
                    found.add(current.id)
        return [by_id[i] for i in found]

    def capsule(self, scope: Scope, *, budget: int | None = None, language: str | None = None) -> Capsule:
        """The user's capsule within `budget` tokens; cached until the user's memory changes."""
        s = self.settings
        budget = s.capsule_budget if budget is None else budget
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
            from engram.errors import InvalidInput

            raise InvalidInput(f"budget must be a non-negative integer, not {budget!r}")
        self.maybe_compress_daily(scope, utcnow())
        version = self.services.store.user_version(scope.user_id)
        key = (scope.user_id, scope.agent_id, budget, language, s.token_encoding, s.template_dir, s.line_tokens)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] == version:
                self._cache.move_to_end(key)
                return hit[1].model_copy(update={"cached": True})
        capsule = self._build(scope, budget, language, version)
        with self._lock:
            self._cache[key] = (version, capsule)
            self._cache.move_to_end(key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return capsule

    def _build(self, scope: Scope, budget: int, language: str | None, version: int) -> Capsule:
        s, counter, now = self.settings, self.counter, utcnow()
        rows = self.candidates(scope)
        language = language or _majority(r.language for r in rows)
        capsule = Capsule(
            user_id=scope.user_id, agent_id=scope.agent_id, language=language, budget=budget,
            encoding=s.token_encoding, version=version, built_at=now,
        )
        stamp = now.timestamp()
        scored = sorted(
            (
                (_keep_score(r.importance, r.access_count, r.strength, r.updated_at.timestamp(),
                             r.last_accessed.timestamp() if r.last_accessed else None,
                             stamp, s.recency_half_life_days, r.pinned), r)
                for r in rows
            ),
            key=lambda pair: (-pair[0], -pair[1].updated_at.timestamp(), pair[1].id),
        )
        by_id = {row.id: row for _, row in scored}
        if rows:
            capsule.last_updated = max(r.updated_at for r in rows)
        privacy = self.services.privacy

        def render_lines(chosen: list[Line]) -> str:
            if not chosen:
                return ""
            order = {name: i for i, name in enumerate(SECTIONS)}
            ordered = sorted(chosen, key=lambda ln: (order[ln.section], -ln.score))
            return render(
                "capsule", language, s.template_dir, sections=sections_of(ordered),
                last_updated=(capsule.last_updated or now).strftime("%Y-%m-%d"),
            )

        # Best score first, a line goes in when it fits the room the lines above it
        # left; so a line is left out only when it is longer than that room, and
        # eviction hits the lowest scores first. One memory per slot and per
        # statement (the better-scored kept). Lines that cannot fit by a lower
        # bound are never counted, which keeps 10k candidates cheap.
        room = budget
        if scored:
            first = scored[0][1]
            probe = Line(section=section_of(first.kind, first.key), text=first.content.strip())
            _measure(probe, counter, s.line_tokens)
            header = counter.count(render_lines([probe])) - line_cost(probe, counter, language)
            room -= max(0, header - self._heading_cost(probe.section, language))
        chosen: list[Line] = []
        rest: list[Line] = []
        sections: set[str] = set()
        seen_keys: dict[str, str] = {}
        seen_text: dict[str, str] = {}
        half = s.line_tokens // 2
        for score, item in scored:
            section = section_of(item.kind, item.key)
            slot = _slot(item.key, item.kind, item.polarity)
            dup_of = seen_keys.get(slot) if slot else None
            if dup_of is None:
                heading = 0 if section in sections else self._heading_cost(section, language)
                lower = min(len(item.content.split()), half) + 1  # each word is a token at least
                if lower + heading > room:
                    capsule.left_out.append(LeftOut(item.id, item.content, section, score, "budget", lower))
                    continue
                canonical = normalize(item.content)
                dup_of = seen_text.get(canonical)
            if dup_of is not None:
                capsule.left_out.append(LeftOut(item.id, item.content, section, score, f"duplicate of {dup_of}"))
                continue
            if slot:
                seen_keys[slot] = item.id
            seen_text[canonical] = item.id
            line = Line(
                section=section, text=redact(item.content.strip(), privacy), memory_id=item.id,
                kind=Kind(item.kind), updated=item.supersedes is not None, score=score,
            )  # redacted again: memories stored before a policy change
            need = _measure(line, counter, s.line_tokens) + heading
            if need <= room:
                room -= need
                chosen.append(line)
                sections.add(section)
            else:
                rest.append(line)
        text = render_lines(chosen)
        tokens = counter.count(text)
        while tokens > budget:  # the estimate was short: evict the lowest score and re-check
            evicted = min(chosen, key=lambda ln: ln.score)
            chosen.remove(evicted)
            rest.append(evicted)
            text = render_lines(chosen)
            tokens = counter.count(text)
        capsule.text, capsule.token_count = text, tokens
        order = {name: i for i, name in enumerate(SECTIONS)}
        capsule.lines = sorted(chosen, key=lambda ln: (order[ln.section], -ln.score))
        chosen_ids = [ln.memory_id for ln in capsule.lines if ln.memory_id]
        full = {m.id: self.services.display.item(m) for m in self.services.store.get_many(chosen_ids)}
        capsule.memories = [full[i] for i in chosen_ids if i in full]
        capsule.left_out += [
            LeftOut(ln.memory_id or "", by_id[ln.memory_id].content, ln.section, ln.score, "budget", ln.tokens)  # type: ignore[index]
            for ln in rest
        ]
        capsule.left_out.sort(key=lambda x: -x.score)
        log.debug(
            "capsule for %s: %d memories, %d/%d tokens, %d left out (version %d)",
            scope.user_id, len(capsule.lines), tokens, budget, len(capsule.left_out), version,
        )
        return capsule

    def _heading_cost(self, section: str, language: str) -> int:
        return _heading_tokens(self.settings.token_encoding, section, language)

@lru_cache(maxsize=64)
def _heading_tokens(encoding: str, section: str, language: str) -> int:
    titles = {
        "zh": {"preferences": "【用户偏好】", "facts": "【已知事实】", "events": "【近期事件】", "task": "【当前任务状态】",
               "identity": "【身份设定】"},
        "en": {"preferences": "[User preferences]", "facts": "[Known facts]", "events": "[Recent events]",
               "task": "[Current task state]", "identity": "[Identity]"},
    }
    return get_counter(encoding).count(titles.get(language, titles["en"])[section] + "\n")
