"""Helpers for tests of engram's LLM tasks against the scripted server (tests/fake_llm.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

EXTRACT_MARKS = ("memory secretary", "记忆秘书")
COMPRESS_MARKS = ("memory optimisation expert", "记忆优化专家")
JUDGE_MARKS = ("You maintain a user's long-term memory", "你负责维护用户的长期记忆")


def prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []))


def task_of(request: dict[str, Any]) -> str:
    """Which engram task a chat request is: extract, compress, judge, or chat (an agent's reply)."""
    text = prompt_text(request)
    if any(m in text for m in EXTRACT_MARKS):
        return "extract"
    if any(m in text for m in COMPRESS_MARKS):
        return "compress"
    if any(m in text for m in JUDGE_MARKS):
        return "judge"
    return "chat"


Answer = str | dict | list | Callable[[dict[str, Any]], Any] | None


def _render(answer: Answer, request: dict[str, Any]) -> str:
    if callable(answer):
        answer = answer(request)
    if isinstance(answer, str):
        return answer
    return json.dumps(answer, ensure_ascii=False)


def router(
    *,
    extract: Answer = None,
    compress: Answer = None,
    judge: Answer = None,
    chat: Answer = "ok",
) -> Callable[[dict[str, Any]], str]:
    """A responder for FakeLLM that answers each engram task its own way.

    Defaults: extraction finds nothing, compression fails validation (so the
    deterministic delta is kept), the judge says ADD, a chat reply is "ok".
    """
    defaults = {
        "extract": {"memories": []},
        "compress": "not json",
        "judge": {"action": "ADD", "target": None, "reason": "different"},
        "chat": chat,
    }
    answers = {"extract": extract, "compress": compress, "judge": judge, "chat": chat}

    def respond(request: dict[str, Any]) -> str:
        task = task_of(request)
        answer = answers[task]
        return _render(defaults[task] if answer is None else answer, request)

    return respond


def requests_of(fake: Any, task: str) -> list[dict[str, Any]]:
    return [r for r in list(fake.requests) if task_of(r) == task]
