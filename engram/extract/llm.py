"""LLM extraction: the layered design's "memory secretary" prompt, validated.

One chat call reads one turn (or a batch of turns) and answers with JSON
(`ExtractionOutput`, documented in ``prompts/extract.*.j2``)::

    {"memories": [{"content": "用户喜欢喝绿茶", "kind": "preference", "reason": "…",
                   "key": "preference:绿茶", "value": "like", "importance": 0.7,
                   "polarity": 1, "due": null, "turn": 1}]}

A bare list (the seed's "JSON list") and ``type`` for ``kind`` (also the
seed's Chinese category names) are accepted. Items are validated one by one:
an invalid item is dropped and counted, the others are kept. A memory of a
Chinese turn must be written in Chinese: an item the model translated is
dropped and counted (the rules still see the turn). An item not grounded in
what the user said or confirmed (`engram.grounding`: a copied example, an
assistant's sentence, first person, a question) is dropped and counted too. Anything wrong with the
answer as a whole raises `LLMBadOutput`; the caller then keeps the rules'
candidates only, so nothing is lost because an LLM failed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engram.graph.llm import grounded, parse_entities, parse_relations
from engram.grounding import proposal_problem, source_of
from engram.models import Candidate, Kind, Message, Source, as_utc
from engram.text import cjk_ratio, detect_language, normalize

if TYPE_CHECKING:  # pragma: no cover - the openai SDK is imported only when an LLM is configured
    from engram.providers.openai_compat import OpenAICompatLLM

log = logging.getLogger("engram.extract.llm")

__all__ = [
    "ExtractedMemory",
    "ExtractionOutput",
    "ExtractionResult",
    "LLMExtractor",
    "has_cjk",
    "novel_candidates",
]

LLM_CONFIDENCE = 0.7
RULE_OVERLAP = 0.85  # cosine at which an LLM candidate says what a rule candidate already says
MAX_CONTENT_CHARS = 400

KIND_ALIASES: dict[str, Kind] = {
    "fact": Kind.FACT, "facts": Kind.FACT, "事实": Kind.FACT,
    "decision": Kind.DECISION, "decisions": Kind.DECISION, "commitment": Kind.DECISION,
    "decision_commitment": Kind.DECISION, "决策": Kind.DECISION, "承诺": Kind.DECISION,
    "决策与承诺": Kind.DECISION, "决定": Kind.DECISION,
    "preference": Kind.PREFERENCE, "preferences": Kind.PREFERENCE, "user_preference": Kind.PREFERENCE,
    "偏好": Kind.PREFERENCE, "用户偏好": Kind.PREFERENCE,
    "task": Kind.TASK, "tasks": Kind.TASK, "goal": Kind.TASK, "goals": Kind.TASK, "task_goal": Kind.TASK,
    "todo": Kind.TASK, "任务": Kind.TASK, "目标": Kind.TASK, "任务与目标": Kind.TASK,
    "identity": Kind.IDENTITY, "身份": Kind.IDENTITY, "身份设定": Kind.IDENTITY,
    "event": Kind.EVENT, "events": Kind.EVENT, "事件": Kind.EVENT,
}
_KEY_RE = re.compile(r"^(preference|fact|task|identity|decision|event):\S.{0,80}$")
_PLACEHOLDER_RE = re.compile(r"\[REDACTED:\w+\]")


def has_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", text))


# --------------------------------------------------------------------------- schema
class ExtractedMemory(BaseModel):
    """One memory as the model gives it (validated, clamped)."""

    model_config = ConfigDict(extra="ignore")

    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    kind: Kind
    reason: str = ""
    key: str | None = None
    value: str | None = None
    importance: float = 0.5
    polarity: int = 0
    due: str | None = None
    turn: int | None = None
    entities: list[tuple[str, str]] = Field(default_factory=list)  # (name, type): engram.graph.llm
    relations: list[tuple[str, str, str, str]] = Field(default_factory=list)  # (source, relation, target, reason)

    @field_validator("entities", mode="before")
    @classmethod
    def _entities(cls, value: Any) -> Any:
        return parse_entities(value)

    @field_validator("relations", mode="before")
    @classmethod
    def _relations(cls, value: Any) -> Any:
        return parse_relations(value)

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> Any:
        if isinstance(value, str):
            name = value.strip().lower().replace(" ", "_").replace("-", "_")
            if name in KIND_ALIASES:
                return KIND_ALIASES[name]
        return value

    @field_validator("kind")
    @classmethod
    def _extractable(cls, value: Kind) -> Kind:
        if value in (Kind.SUMMARY, Kind.TURN):
            raise ValueError(f"kind {value.value} is not extracted")
        return value

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: Any) -> Any:
        return "" if value is None else str(value)[:200]

    @field_validator("key", "value", "due", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> Any:
        if value is None:
            return None
        text = str(value).strip()
        return text[:120] or None

    @field_validator("importance", mode="before")
    @classmethod
    def _importance(cls, value: Any) -> Any:
        if value is None:
            return 0.5
        number = float(value)
        if number > 1.0 and number <= 10.0:  # a 1-10 scale
            number /= 10.0
        return min(1.0, max(0.0, number))

    @field_validator("polarity", mode="before")
    @classmethod
    def _polarity(cls, value: Any) -> Any:
        if value is None:
            return 0
        number = float(value)
        return 0 if number == 0 else (1 if number > 0 else -1)

    @field_validator("turn", mode="before")
    @classmethod
    def _turn(cls, value: Any) -> Any:
        return None if value in (None, "") else int(value)


class ExtractionOutput(BaseModel):
    """The whole answer: ``{"memories": [ExtractedMemory, …]}`` (items checked one by one)."""

    memories: list[dict[str, Any]]


@dataclass
class ExtractionResult:
    """Valid candidates, each with the index of the turn it came from, and what was dropped."""

    candidates: list[tuple[Candidate, int]] = field(default_factory=list)
    invalid: int = 0  # items that failed the schema
    translated: int = 0  # items not in the language the user spoke
    ungrounded: int = 0  # items not supported by what the user said (engram.grounding)
    raw_items: int = 0
    ungrounded_links: int = 0  # entities and relations not named in what the user said (engram.graph.llm)


def _items(data: Any) -> list[Any]:
    """The list of memories in an answer, or LLMBadOutput."""
    from engram.providers.openai_compat import LLMBadOutput

    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for name in ("memories", "items", "记忆", "results"):
            if isinstance(data.get(name), list):
                return data[name]
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
        if "content" in data:  # a single memory as an object
            return [data]
    raise LLMBadOutput(f"extraction: expected {{\"memories\": [...]}}, got {str(data)[:120]!r}")


# --------------------------------------------------------------------------- extractor
def _due(text: str | None, now: datetime) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=now.tzinfo)
        if len(text) <= 10:  # a date alone: the end of that day, as the rules do
            value = value.replace(hour=23, minute=59)
    value = as_utc(value)
    if value < as_utc(now) - timedelta(days=366 * 5):  # nonsense (a year typo): keep no date
        return None
    return value


def _normal_key(key: str | None) -> str | None:
    if not key:
        return None
    key = key.strip().lower().replace(" ", "_")
    return key if _KEY_RE.match(key) else None


def turn_language(messages: Sequence[Message]) -> str:
    """The language the user spoke in a turn (their messages; all of them if none is the user's)."""
    said = " ".join(m.content for m in messages if m.role == "user") or " ".join(m.content for m in messages)
    return detect_language(said)


class LLMExtractor:
    """Runs the extraction prompt through an `OpenAICompatLLM` (shared, thread-safe)."""

    def __init__(self, llm: OpenAICompatLLM, *, template_dir: Path | None = None) -> None:
        self.llm = llm
        self.template_dir = template_dir

    def messages(self, turns: Sequence[Sequence[Message]], now: datetime) -> list[dict[str, str]]:
        """The chat messages for `turns` (system: the secretary prompt; user: the conversation)."""
        from engram.templates import render

        language = turn_language([m for turn in turns for m in turn])
        batch = len(turns) > 1
        system = render(
            "extract", language, self.template_dir,
            today=now.strftime("%Y-%m-%d (%A)"), batch=batch,
        )
        labels = {"user": "用户", "assistant": "助手", "system": "系统", "tool": "工具"} if language == "zh" else {
            "user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}
        colon = "：" if language == "zh" else ": "
        parts: list[str] = []
        for number, turn in enumerate(turns, 1):
            if batch:
                parts.append(f"第{number}轮" if language == "zh" else f"Turn {number}")
            parts += [f"{labels.get(m.role, m.role)}{colon}{m.content.strip()}" for m in turn if m.content.strip()]
        header = "对话：" if language == "zh" else "Conversation:"
        return [{"role": "system", "content": system}, {"role": "user", "content": header + "\n" + "\n".join(parts)}]

    def extract(
        self,
        turns: Sequence[Sequence[Message]],
        *,
        now: datetime,
        said_at: Sequence[datetime] | None = None,
        user_id: str | None = None,
    ) -> ExtractionResult:
        """Candidates (source llm) in `turns`; raises `LLMError` when the answer is unusable."""
        said_at = list(said_at) if said_at else [now] * len(turns)
        data = self.llm.chat_json(self.messages(turns, now), user_id=user_id, task="extract")
        raw = _items(data)
        source, assistant = source_of([m for turn in turns for m in turn])
        result = ExtractionResult(raw_items=len(raw))
        languages = [turn_language(turn) for turn in turns]
        overall = turn_language([m for turn in turns for m in turn])
        user_text = [" ".join(m.content for m in turn if m.role == "user") for turn in turns]
        seen: set[str] = set()
        for entry in raw:
            if isinstance(entry, dict) and "kind" not in entry and "type" in entry:
                entry = {**entry, "kind": entry["type"]}
            try:
                item = ExtractedMemory.model_validate(entry)
            except (ValidationError, TypeError, ValueError) as err:
                result.invalid += 1
                log.info("LLM extraction: dropped an invalid item (%s)", str(err).splitlines()[0][:120])
                continue
            index = item.turn - 1 if item.turn is not None and 1 <= item.turn <= len(turns) else len(turns) - 1
            spoken = languages[index] if item.turn is not None else overall
            if spoken == "zh" and not has_cjk(item.content):
                result.translated += 1
                log.info("LLM extraction: dropped a memory not written in the user's language: %r", item.content[:80])
                continue
            if spoken == "en" and cjk_ratio(item.content) > 0.5 and not has_cjk(user_text[index]):
                result.translated += 1
                log.info("LLM extraction: dropped a memory not written in the user's language: %r", item.content[:80])
                continue
            problem = proposal_problem(item.content, source, assistant)
            if problem is not None:
                result.ungrounded += 1
                log.info("LLM extraction: dropped %r: %s", item.content[:80], problem)
                continue
            text = normalize(item.content)
            if text in seen:
                continue
            seen.add(text)
            entities, relations, dropped = grounded(item.entities, item.relations, user_text[index] or source)
            result.ungrounded_links += dropped
            result.candidates.append((
                Candidate(
                    content=item.content, kind=item.kind, key=_normal_key(item.key),
                    value=item.value, polarity=item.polarity, importance=item.importance,
                    confidence=LLM_CONFIDENCE, language=detect_language(item.content), source=Source.LLM,
                    reason=f"llm: {item.reason}".strip() if item.reason else "llm extraction",
                    due_at=_due(item.due, now) if item.kind is Kind.TASK else None,
                    valid_from=said_at[index], typed_entities=entities, relations=relations,
                ),
                index,
            ))
        return result


# --------------------------------------------------------------------------- merging
def novel_candidates(
    llm: Sequence[tuple[Candidate, int]],
    rules: Sequence[Candidate],
    embed: Callable[[list[str]], np.ndarray] | None = None,
    *,
    overlap: float = RULE_OVERLAP,
) -> list[tuple[Candidate, int]]:
    """LLM candidates that say something the rules did not.

    Rules win where both speak: same statement, same slot (key), or a cosine
    of at least `overlap` between the two texts. The rules' candidates carry
    exact slots, polarity and dates; the LLM adds what no rule caught.
    """
    if not llm or not rules:
        return list(llm)
    rule_text = {normalize(c.content) for c in rules}
    rule_keys = {c.key for c in rules if c.key}
    kept = [
        (c, i) for c, i in llm
        if normalize(c.content) not in rule_text and not (c.key and c.key in rule_keys)
    ]
    if not kept or embed is None:
        return kept
    vectors = embed([c.content for c, _ in kept] + [c.content for c in rules])
    mine, theirs = vectors[: len(kept)], vectors[len(kept):]
    best = (mine @ theirs.T).max(axis=1)
    return [pair for pair, score in zip(kept, best, strict=True) if score < overlap]


def dropped_by_policy(content: str, drop_placeholders: Sequence[str]) -> bool:
    """An LLM candidate that holds the placeholder of a category the policy drops."""
    return any(p in content for p in drop_placeholders) if _PLACEHOLDER_RE.search(content) else False
