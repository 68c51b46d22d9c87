"""Session-end compression through OptMem's compress prompt (section 3.2), validated.

`engram.capsule.CapsuleEngine.compress` computes the deterministic delta
first (`compress_items`) and, when an LLM is configured, asks it for a better
one through this module: merge alike entries, resolve conflicts latest-wins
with an "updated" mark, four sections, short lines, at most
`llm_compress_tokens` tokens. The answer is JSON (`CompressOutput`, documented
in ``prompts/compress.*.j2``)::

    {"preferences": [{"text": "…", "updated": false, "from": [1, 3]}],
     "facts": [...], "task": [...], "identity": [...]}

It is accepted only when it validates: known sections, non-empty short lines
in the user's language, entry numbers that exist, and a rendered delta within
the budget. Current memories the model left out (its ``from`` lists cite none
of them) are added back from the deterministic lines. Anything else raises
`LLMBadOutput` and the deterministic delta is used. The capsule is built from
the delta's sources either way, so a poor summary cannot hide a memory.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engram.extract.llm import has_cjk
from engram.models import Kind, MemoryItem, Status

if TYPE_CHECKING:  # pragma: no cover
    from engram.capsule import Line
    from engram.providers.openai_compat import OpenAICompatLLM
    from engram.tokens import TokenCounter

log = logging.getLogger("engram.compress_llm")

__all__ = ["CompressLine", "CompressOutput", "compress_with_llm"]

_SECTION_ALIASES = {
    "preferences": "preferences", "preference": "preferences", "user_preferences": "preferences",
    "用户偏好": "preferences", "偏好": "preferences",
    "facts": "facts", "fact": "facts", "known_facts": "facts", "已知事实": "facts", "事实": "facts",
    "task": "task", "tasks": "task", "task_state": "task", "current_task_state": "task",
    "当前任务状态": "task", "任务状态": "task", "任务": "task",
    "identity": "identity", "身份设定": "identity", "身份": "identity",
}
_UPDATED_MARK = re.compile(r"\s*(?:[（(]\s*(?:已更新|updated)\s*[)）]|【已更新】|\[updated\])\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)、])\s*")


class CompressLine(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    text: str = Field(min_length=1)
    updated: bool = False
    sources: list[int] = Field(default_factory=list, alias="from")

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _BULLET.sub("", value).strip() if isinstance(value, str) else value

    @field_validator("sources", mode="before")
    @classmethod
    def _sources(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, (int, str)):
            value = [value]
        out = []
        for v in value:
            try:
                out.append(int(str(v).lstrip("#")))
            except ValueError:
                continue
        return out


class CompressOutput(BaseModel):
    """The four sections of a delta; each a list of lines (a bare string is a line)."""

    preferences: list[CompressLine] = Field(default_factory=list)
    facts: list[CompressLine] = Field(default_factory=list)
    task: list[CompressLine] = Field(default_factory=list)
    identity: list[CompressLine] = Field(default_factory=list)

    @classmethod
    def parse(cls, data: Any) -> CompressOutput:
        from engram.providers.openai_compat import LLMBadOutput

        if not isinstance(data, dict):
            raise LLMBadOutput(f"compress: expected a JSON object of sections, got {type(data).__name__}")
        sections: dict[str, list[Any]] = {}
        for name, lines in data.items():
            key = _SECTION_ALIASES.get(str(name).strip().strip("【】[]").lower().replace(" ", "_"))
            if key is None:
                continue
            if not isinstance(lines, list):
                raise LLMBadOutput(f"compress: section {name!r} is not a list")
            sections.setdefault(key, []).extend({"text": ln} if isinstance(ln, str) else ln for ln in lines)
        if not sections:
            raise LLMBadOutput(f"compress: no known section in {list(data)[:6]}")
        try:
            return cls.model_validate(sections)
        except ValidationError as err:
            raise LLMBadOutput(f"compress: {str(err).splitlines()[0]}") from err


def _notes(items: Sequence[MemoryItem], language: str) -> dict[str, str]:
    number = {item.id: n for n, item in enumerate(items, 1)}
    notes: dict[str, str] = {}
    for item in items:
        if item.status is Status.SUPERSEDED:
            newer = number.get(item.superseded_by or "")
            if language == "zh":
                notes[item.id] = f"已被#{newer}取代" if newer else "已过时"
            else:
                notes[item.id] = f"replaced by #{newer}" if newer else "out of date"
        elif item.status is Status.DISPUTED:
            notes[item.id] = "与另一条矛盾，待确认" if language == "zh" else "contradicts another entry, unconfirmed"
    return notes


def compress_with_llm(
    llm: OpenAICompatLLM,
    items: Sequence[MemoryItem],
    fallback: Sequence[Line],
    *,
    language: str,
    counter: TokenCounter,
    line_tokens: int,
    max_tokens: int,
    template_dir: Path | None = None,
    user_id: str | None = None,
) -> list[Line]:
    """The delta's lines as the LLM writes them, validated; raises `LLMError` otherwise."""
    from engram.capsule import SECTION_OF_KIND, SECTIONS, Line, sections_of
    from engram.templates import render
    from engram.providers.openai_compat import LLMBadOutput

    entries = sorted(
        (i for i in items if i.kind in SECTION_OF_KIND
         and i.status in (Status.ACTIVE, Status.DISPUTED, Status.SUPERSEDED)),
        key=lambda i: (i.created_at, i.updated_at),
    )
    notes = _notes(entries, language)
    prompt = render(
        "compress", language, template_dir, max_tokens=max_tokens,
        items=[
            {
                "n": n, "category": SECTION_OF_KIND[i.kind] if language != "zh" else _ZH_CATEGORY[i.kind],
                "content": i.content.strip(), "session": i.session_id or "-",
                "time": i.created_at.strftime("%Y-%m-%d %H:%M"), "note": notes.get(i.id, ""),
            }
            for n, i in enumerate(entries, 1)
        ],
    )
    data = llm.chat_json([{"role": "user", "content": prompt}], user_id=user_id, task="compress")
    output = CompressOutput.parse(data)

    by_number = {n: item for n, item in enumerate(entries, 1)}
    lines: list[Line] = []
    cited: set[str] = set()
    any_sources = False
    dropped = 0
    for section in SECTIONS:
        for raw in getattr(output, section):
            text = raw.text
            updated = raw.updated or bool(_UPDATED_MARK.search(text))
            text = _UPDATED_MARK.sub("", text).strip()
            if not text:
                continue
            sources = [by_number[n] for n in raw.sources if n in by_number]
            any_sources = any_sources or bool(sources)
            source_language = "zh" if any(s.language == "zh" for s in sources) else (
                "en" if sources else language)
            if source_language == "zh" and not has_cjk(text):
                dropped += 1  # translated: the deterministic line comes back below
                continue
            cited.update(s.id for s in sources)
            first = sources[-1] if sources else None  # the latest source speaks for the line
            lines.append(Line(
                section=section, text=counter.truncate(text, line_tokens),
                memory_id=first.id if first else None, kind=first.kind if first else None,
                updated=updated, disputed=any(s.status is Status.DISPUTED for s in sources),
            ))
    if not lines:
        raise LLMBadOutput("compress: the answer holds no usable line")
    if dropped:
        log.info("LLM compression: dropped %d line(s) not in the user's language", dropped)
    if any_sources or dropped:
        missing = [ln for ln in fallback if ln.memory_id and ln.memory_id not in cited]
        if missing and not any_sources:
            raise LLMBadOutput("compress: lines were dropped and the answer cites no entries")
        if missing:
            log.info("LLM compression left out %d current memories; adding their lines back", len(missing))
            lines += [ln.model_copy() for ln in missing]
    order = {name: i for i, name in enumerate(SECTIONS)}
    lines.sort(key=lambda ln: order[ln.section])
    text = render("delta", language, template_dir, sections=sections_of(lines), session_id=None, date="")
    tokens = counter.count(text)
    if tokens > max_tokens:
        raise LLMBadOutput(f"compress: {tokens} tokens, over the {max_tokens}-token budget")
    return lines


_ZH_CATEGORY = {
    Kind.PREFERENCE: "用户偏好", Kind.FACT: "已知事实", Kind.EVENT: "已知事实",
    Kind.TASK: "当前任务状态", Kind.DECISION: "当前任务状态", Kind.IDENTITY: "身份设定",
}
