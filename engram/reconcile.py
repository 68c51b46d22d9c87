"""Decide what a new candidate does to what is already remembered.

Pure logic over the neighbours the caller found (same content, same key,
similar vectors), so every backend gets the same decisions:

- NOOP: the same statement (exactly or nearly) is already there — reinforce it;
- SUPERSEDE: same slot, new value (latest wins, the old one stays as history);
- DISPUTE: opposite feelings about the same thing with no sign that it changed —
  keep both and let the user settle it;
- ADD: anything else.

Polarity is a feeling on a preference (+1 likes, -1 dislikes: both hold something).
On any other kind, -1 says the slot's value no longer holds ("User no longer lives
in Berlin.": fact:location = berlin): such a statement ends the memory that holds
that very value, and only it — a slot holding another value (Paris) is left alone,
the news being about an older value. Without a value ("I quit my job") it ends
whatever the slot holds. A statement that something holds, in turn, is measured
against what the slot holds, not against what it no longer holds; a slot that only
says what no longer holds takes the new value (latest wins: "no longer lives in
Berlin", then "lives in Paris", or "lives in Berlin" again).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from engram.models import Action, Candidate, Kind, MemoryItem
from engram.text import cjk_words, content_words, is_cjk, normalize, restates

if TYPE_CHECKING:  # pragma: no cover
    from engram.providers.openai_compat import OpenAICompatLLM

log = logging.getLogger("engram.reconcile")

# words that say the newer statement replaces the older one
_CHANGE_MARKERS = re.compile(
    r"\b(now|anymore|any more|no longer|these days|nowadays|changed|switched|used to|since|stopped|gave up)\b"
    r"|现在|不再|已经|改成|改为|变成|如今|最近开始|以前|后来",
    re.IGNORECASE,
)


# words that say a statement is said again with a new value ("actually it's due in April now")
_NEW_VALUE_MARKERS = re.compile(r"\b(?:actually|now|changed|moved|pushed|postponed)\b|其实|现在|改到|改成|改为|推迟|提前|延期|换成",
                                re.IGNORECASE)
_FRAME_WORD_RE = re.compile(r"[^\W\d_]+|\d+")
_FRAME_MIN = 3  # words the two statements share before their values differ
_VALUE_MAX = 4  # words of a value


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    target: MemoryItem | None
    reason: str
    content: str | None = None  # UPDATE: the refined statement that replaces the target's text


# A judge decides the hard cases (see `llm_judge`): the candidate and its grey-zone
# neighbours in, a Decision out (None: no opinion, the candidate is added).
Judge = Callable[[Candidate, str, list[tuple[MemoryItem, float]]], "Decision | None"]


def signals_change(text: str) -> bool:
    return bool(_CHANGE_MARKERS.search(text))


def polarity_of(item: MemoryItem) -> int:
    return int(item.metadata.get("polarity", 0))


def negates(kind: Kind, polarity: int) -> bool:
    """Whether a statement says its slot's value no longer holds (see the module docstring)."""
    return polarity < 0 and kind is not Kind.PREFERENCE


def _same_value(a: str | None, b: str | None) -> bool:
    return normalize(a or "") == normalize(b or "")


def _in_slot(candidate: Candidate, said: str, same_key: list[MemoryItem]) -> Decision:
    """The decision for a candidate whose slot already holds memories (newest first)."""
    key, value = candidate.key, candidate.value
    holding = [m for m in same_key if not negates(m.kind, polarity_of(m))]
    if negates(candidate.kind, candidate.polarity):
        ended = next((m for m in holding if value is None or _same_value(m.value, value)), None)
        if ended is not None:
            reason = f"{key}: no longer {ended.value or 'so'} (said: {said.strip()[:80]})"
            return Decision(Action.SUPERSEDE, ended, reason)
        known = next((m for m in same_key if negates(m.kind, polarity_of(m)) and _same_value(m.value, value)), None)
        if known is not None:
            return Decision(Action.NOOP, known, f"{key}: already remembered as no longer {value or 'so'}")
        return Decision(Action.ADD, None, f"{key}: {value} no longer holds; nothing remembered holds it")
    if not holding:  # the slot only says what no longer holds: now something does
        gone = next((m for m in same_key if _same_value(m.value, value)), same_key[0])
        return Decision(Action.SUPERSEDE, gone, f"{key}: {value} holds now (was: no longer {gone.value or 'so'})")
    current = holding[0]
    old_polarity, new_polarity = polarity_of(current), candidate.polarity
    if old_polarity and new_polarity and old_polarity != new_polarity:
        if signals_change(said):
            return Decision(Action.SUPERSEDE, current, f"{key}: feeling changed (said: {said.strip()[:80]})")
        return Decision(Action.DISPUTE, current, f"{key}: contradicts an earlier statement; unclear whether it changed")
    if _same_value(value, current.value):
        if _new_day(candidate, current):
            return Decision(Action.SUPERSEDE, current, f"{key}: now due {candidate.due_at:%Y-%m-%d %H:%M}"
                            f" (was {current.due_at:%Y-%m-%d %H:%M}; latest wins)")
        return Decision(Action.NOOP, current, f"{key}: same value already remembered")
    return Decision(Action.SUPERSEDE, current, f"{key}: {current.value!s} -> {value!s} (latest wins)")


def _frame_words(text: str) -> list[str]:
    out: list[str] = []
    for w in _FRAME_WORD_RE.findall(normalize(text)):
        out.extend(cjk_words(w) if is_cjk(w[0]) else (w,))
    return out


def new_value(new: str, old: str) -> bool:
    """`new` says what `old` says with its last words changed: "User's baby is due in March." →
    "… due in April.", "用户的老婆预产期是三月" → "用户的老婆预产期改到四月了". The words before
    the values (at least `_FRAME_MIN`, and most of the statement) are the same, and the values
    (at most `_VALUE_MAX` words each) share none. ("User plays guitar" and "User plays piano"
    share only two words: the rules leave them both.)"""
    a, b = _frame_words(new), _frame_words(old)
    shared = 0
    while shared < min(len(a), len(b)) and a[shared] == b[shared]:
        shared += 1
    tail_a, tail_b = a[shared:], b[shared:]
    return shared >= _FRAME_MIN and shared >= 0.6 * min(len(a), len(b)) \
        and 1 <= len(tail_a) <= _VALUE_MAX and 1 <= len(tail_b) <= _VALUE_MAX and not set(tail_a) & set(tail_b)


def _new_day(candidate: Candidate, current: MemoryItem) -> bool:
    """A one-off task said again with another due time ("the launch moved to April 2nd"); a
    routine's next due moves on by itself, so only its schedule (the value) counts."""
    return (candidate.recurrence is None and candidate.due_at is not None and current.due_at is not None
            and candidate.due_at != current.due_at)


def same_statement(candidate: Candidate, words: frozenset[str], kind: str, content: str, overlap: float) -> bool:
    """A memory of this kind and content says what the candidate says, in other words
    (`words`: the candidate's `content_words`)."""
    return kind == candidate.kind and restates(words, content_words(content), overlap)


def decide(
    candidate: Candidate,
    *,
    said: str,
    exact: list[MemoryItem],
    same_key: list[MemoryItem] | Callable[[], list[MemoryItem]],
    similar: list[tuple[MemoryItem, float]] | Callable[[], list[tuple[MemoryItem, float]]],
    duplicate_similarity: float,
    judge: Judge | None = None,
    grey_zone: float = 1.0,
    overlap: float = 0.5,
    worded: list[MemoryItem] | Callable[[], list[MemoryItem]] = (),
) -> Decision:
    """The action for `candidate`, given its neighbours (all live memories of the scope).

    `said` is the user's original sentence, used to spot words of change.
    When the rules would ADD but a neighbour's cosine lies in the grey zone
    [`grey_zone`, `duplicate_similarity`), `judge` (the LLM) decides, if given.
    `worded`: live memories that share the most words with the candidate, newest first (an
    unkeyed fact said again with a new value and a word of change supersedes the one it rewords).
    `same_key`, `similar` and `worded` may be functions: each is looked up only when the
    decision gets that far (a statement said again needs none).
    """
    if exact:
        return Decision(Action.NOOP, exact[0], "already remembered (same statement)")
    if candidate.key:
        in_slot = same_key() if callable(same_key) else same_key
        if in_slot:
            return _in_slot(candidate, said, in_slot)
    if callable(similar):
        similar = similar()
    close = [(item, similarity) for item, similarity in similar if similarity >= duplicate_similarity]
    words = content_words(candidate.content) if close else frozenset()
    for item, similarity in close:
        if same_statement(candidate, words, item.kind, item.content, overlap):
            return Decision(
                Action.NOOP, item, f"near-duplicate of an existing memory (cosine {similarity:.2f})"
            )
    if candidate.kind in (Kind.FACT, Kind.EVENT) and not candidate.key and _NEW_VALUE_MARKERS.search(said):
        # "Actually my baby is due in April now", "预产期改到四月了": the unkeyed fact said before,
        # with its new value (said as what happened, too)
        if callable(worded):
            worded = worded()
        again = next((item for item in worded if item.kind is Kind.FACT and not item.key
                      and new_value(candidate.content, item.content)), None)
        if again is not None:
            return Decision(Action.SUPERSEDE, again, f"the same statement with a new value (said: {said.strip()[:80]})")
    if judge is not None:
        # close vectors with different wording ("tea number 1" / "tea number 2") are for the judge
        grey = [(item, sim) for item, sim in similar if grey_zone <= sim]
        if grey:
            judged = judge(candidate, said, grey)
            if judged is not None:
                return judged
    return Decision(Action.ADD, None, candidate.reason or "new memory")


# --------------------------------------------------------------------------- LLM judge
class Judgement(BaseModel):
    """The judge's answer (documented in ``prompts/reconcile.*.j2``)."""

    model_config = ConfigDict(extra="ignore")

    action: Literal["ADD", "UPDATE", "SUPERSEDE", "DISPUTE", "NOOP"]
    target: int | None = None
    content: str | None = None
    reason: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("target", mode="before")
    @classmethod
    def _target(cls, value: Any) -> Any:
        if value in (None, "", "null"):
            return None
        return int(str(value).lstrip("#"))

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: Any) -> Any:
        return "" if value is None else str(value)[:200]


def llm_judge(
    llm: OpenAICompatLLM,
    *,
    template_dir: Path | None = None,
    user_id: str | None = None,
    on_result: Callable[[str], None] | None = None,
) -> Judge:
    """A `Judge` that asks the LLM; any failure, invalid or refused answer is no opinion (ADD).

    An UPDATE's merged text is refused unless it passes `engram.grounding.judgement_problem`.
    `on_result` is told what happened ("ADD", "UPDATE", … or "failed"/"invalid"/"refused").
    """
    from engram.templates import render
    from engram.extract.llm import has_cjk
    from engram.grounding import judgement_problem
    from engram.providers.openai_compat import LLMError

    def note(what: str) -> None:
        if on_result is not None:
            on_result(what)

    def judge(candidate: Candidate, said: str, grey: list[tuple[MemoryItem, float]]) -> Decision | None:
        prompt = render(
            "reconcile", candidate.language, template_dir, candidate=candidate.content, said=said.strip()[:500],
            neighbours=[
                {"n": n, "content": item.content, "kind": item.kind.value,
                 "time": item.created_at.strftime("%Y-%m-%d"), "similarity": round(sim, 2)}
                for n, (item, sim) in enumerate(grey, 1)
            ],
        )
        try:
            answer = llm.chat_json(
                [{"role": "user", "content": prompt}], schema=Judgement, user_id=user_id, task="judge"
            )
        except LLMError as err:
            log.warning("LLM reconciliation failed (%s); adding the memory", err)
            note("failed")
            return None
        action = Action(answer.action)
        if action is Action.ADD:
            note("ADD")
            return Decision(Action.ADD, None, f"llm: {answer.reason}".strip() if answer.reason else "llm: new memory")
        if answer.target is None or not 1 <= answer.target <= len(grey):
            log.info("LLM reconciliation named no valid target (%r); adding the memory", answer.target)
            note("invalid")
            return None
        target = grey[answer.target - 1][0]
        content = (answer.content or "").strip() or None
        if action is Action.UPDATE:
            content = content or candidate.content
            if candidate.language == "zh" and not has_cjk(content):
                log.info("LLM reconciliation merged into another language; adding the memory instead")
                note("invalid")
                return None
            problem = judgement_problem(content, candidate=candidate.content, said=said, old=target.content)
            if problem is not None:  # the rules' decision stands: the old memory stays as it is
                log.info("LLM reconciliation refused: %r: %s", content[:80], problem)
                note("refused")
                return None
        note(action.value)
        reason = f"llm: {answer.reason}" if answer.reason else f"llm: {action.value.lower()}"
        return Decision(action, target, reason, content if action is Action.UPDATE else None)

    return judge
