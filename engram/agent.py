"""`MemoryAgent`: the layered design's memory-enhanced agent loop (section 3.3).

For each user message:

1. build `Memory.context` (capsule + the memories relevant to the message +
   clarifying questions) and put it in the system prompt (``prompts/agent.*.j2``);
2. call the chat model with the system prompt, the recent conversation and the message;
3. return the reply;
4. record the turn and extract memories from it, in the background by default
   (`Memory.add(..., background=True)`: no LLM latency added to the reply).

    >>> from engram import Memory
    >>> from engram.agent import MemoryAgent
    >>> memory = Memory(llm_base_url="http://127.0.0.1:11434/v1", llm_model="qwen2.5")
    >>> agent = MemoryAgent(memory, user_id="alice")
    >>> agent.chat("I prefer short answers, in Markdown")
    >>> agent.end()                       # the session's delta; the next chat starts a new one
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from engram.capsule import Context, Delta, render
from engram.errors import InvalidInput
from engram.llm import LLMNotConfigured

if TYPE_CHECKING:  # pragma: no cover
    from engram.memory import Memory
    from engram.providers.openai_compat import OpenAICompatLLM

log = logging.getLogger("engram.agent")

__all__ = ["MemoryAgent"]


class MemoryAgent:
    """A chat agent with long-term memory over any OpenAI-compatible chat model.

    `llm` defaults to the memory's configured client (``ENGRAM_LLM_*``); pass
    another one to chat with a different model than the one that extracts.
    `system_prompt` replaces the default persona line; the memory block is
    always added. `background=False` extracts before `chat` returns.
    """

    def __init__(
        self,
        memory: Memory,
        llm: OpenAICompatLLM | None = None,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        system_prompt: str | None = None,
        background: bool = True,
        history_turns: int = 10,
        context_budget: int | None = None,
    ) -> None:
        self.memory = memory
        self.llm = llm if llm is not None else memory.llm
        if self.llm is None:
            raise LLMNotConfigured("MemoryAgent")
        self.user_id = user_id
        self.agent_id = agent_id
        self.system_prompt = system_prompt
        self.background = background
        self.history_turns = history_turns
        self.context_budget = context_budget
        self.last_context: Context | None = None
        self._open(session_id)

    def _open(self, session_id: str | None) -> None:
        session = self.memory.session(self.user_id, session_id, agent_id=self.agent_id)
        self.session_id = session.session_id
        # resuming a session: its working memory is the conversation so far
        self.history: list[dict[str, str]] = [
            {"role": t.role, "content": t.content} for t in session.turns()
        ]

    def __repr__(self) -> str:
        return f"MemoryAgent(user_id={self.user_id!r}, session_id={self.session_id!r}, llm={self.llm!r})"

    def messages(self, message: str) -> list[dict[str, str]]:
        """What is sent to the chat model for `message` (also sets `last_context`)."""
        context = self.memory.context(
            message, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id,
            budget=self.context_budget,
        )
        self.last_context = context
        system = render(
            "agent", context.language, self.memory.settings.template_dir,
            base=self.system_prompt or "", memory=context.text,
        )
        recent = self.history[-2 * self.history_turns :] if self.history_turns > 0 else []
        return [{"role": "system", "content": system}, *recent, {"role": "user", "content": message}]

    def chat(self, message: str) -> str:
        """Answer `message` with memory; the turn is recorded and mined for memories.

        When the chat model fails the error propagates (an `LLMError`), and the
        user's message is still recorded: nothing they said is lost.
        """
        if not isinstance(message, str) or not message.strip():
            raise InvalidInput("message must be a non-empty string")
        from engram.providers.openai_compat import LLMError

        messages = self.messages(message)
        try:
            reply = self.llm.chat(
                messages, user_id=self.memory.llm_tasks.budget_user(self.user_id), task="reply"
            ).text
        except LLMError:
            self._record([{"role": "user", "content": message}])
            raise
        turn = [{"role": "user", "content": message}, {"role": "assistant", "content": reply}]
        self.history += turn
        self._record(turn)
        return reply

    def _record(self, turn: list[dict[str, Any]]) -> None:
        self.memory.add(
            turn, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id,
            background=self.background,
        )

    def end(self, timeout: float | None = None, *, restart: bool = True) -> Delta:
        """Finish background extraction, end the session (its delta) and, with `restart`,
        open a fresh one for the next `chat`."""
        if not self.memory.flush(timeout):
            log.warning("background extraction still running at session end; it will finish later")
        delta = self.memory.end_session(self.user_id, self.session_id, agent_id=self.agent_id)
        if restart:
            self._open(None)
        return delta
