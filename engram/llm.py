"""The optional LLM: made from `Settings` only when one is configured, and what engram asks it.

No LLM is used unless ``llm_base_url`` or ``llm_model`` is set (or a client is
passed to `Memory`); on the default path neither the client nor the `openai`
SDK is even imported. With one, `LLMTasks` runs:

- extraction (`engram.extract.llm`): per turn, or per batch of
  ``llm_batch_turns`` turns (``llm_extraction = "batch"``), on top of the rules;
- compression of session deltas (`engram.compress_llm`, hooked into the
  capsule's delta function);
- the judge of reconciliation's hard cases (`engram.reconcile.llm_judge`).

Every LLM failure is logged and counted here (`LLMTasks.stats`) and degrades
to the rules; nothing is lost because an LLM failed.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engram.config import Settings
from engram.errors import EngramError
from engram.models import Candidate, Message
from engram.privacy import Policy, SecretKind, placeholder, redact

if TYPE_CHECKING:  # pragma: no cover
    from engram.capsule import Line
    from engram.services import Services
    from engram.models import MemoryItem
    from engram.providers.openai_compat import LLMSettings, OpenAICompatLLM
    from engram.reconcile import Judge
    from engram.store.base import Scope

log = logging.getLogger("engram.llm")

_JUDGE_PROBLEMS = ("failed", "invalid", "refused")

__all__ = ["LLMNotConfigured", "LLMStats", "LLMTasks", "llm_settings", "make_llm"]


class LLMNotConfigured(EngramError):
    """Something needs a chat LLM and none is configured."""

    def __init__(self, what: str = "this") -> None:
        super().__init__(
            f"{what} needs an LLM: set ENGRAM_LLM_BASE_URL (any OpenAI-compatible endpoint: OpenAI, "
            "DeepSeek, Qwen/DashScope, Ollama, vLLM, llama.cpp) and/or ENGRAM_LLM_MODEL, "
            "with ENGRAM_LLM_API_KEY when the server wants one (or [llm] base_url/model in the config file)"
        )


def llm_settings(settings: Settings) -> LLMSettings:
    from engram.providers.openai_compat import LLMSettings

    return LLMSettings(
        base_url=settings.llm_base_url, model=settings.llm_model, api_key=settings.llm_api_key,
        timeout=settings.llm_timeout, max_retries=settings.llm_max_retries,
        temperature=settings.llm_temperature, json_mode=settings.llm_json_mode,
        price_per_1k_prompt=settings.llm_price_per_1k_prompt,
        price_per_1k_completion=settings.llm_price_per_1k_completion,
        call_budget=settings.llm_call_budget, stream=settings.llm_stream,
        max_tokens={
            "extract": settings.llm_max_tokens_extract, "judge": settings.llm_max_tokens_judge,
            "compress": settings.llm_max_tokens_compress or 2 * settings.llm_compress_tokens + 100,
            "reply": settings.llm_max_tokens_reply,
        },
    )


def make_llm(settings: Settings) -> OpenAICompatLLM | None:
    """The configured chat client, or None (nothing imported) when no LLM is configured."""
    if not settings.llm_enabled:
        return None
    from engram.providers.openai_compat import OpenAICompatLLM

    return OpenAICompatLLM(llm_settings(settings))


class LLMStats:
    """Thread-safe counts of what the LLM tasks did (calls, fallbacks, dropped items…)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, name: str, n: int = 1) -> None:
        if n:
            with self._lock:
                self._counts[name] += n

    def __getitem__(self, name: str) -> int:
        with self._lock:
            return self._counts[name]

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._counts.items()))


class LLMTasks:
    """The LLM side of one `Memory`: the client (lazy) and the tasks that use it."""

    def __init__(self, services: Services, client: OpenAICompatLLM | None = None) -> None:
        self.services = services
        self._client = client
        self._made = client is not None
        self._lock = threading.Lock()
        self.stats = LLMStats()

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def client(self) -> OpenAICompatLLM | None:
        """The chat client; made on first use, None when no LLM is configured."""
        if not self._made:
            with self._lock:
                if not self._made:
                    self._client = make_llm(self.settings)
                    self._made = True
        return self._client

    @property
    def enabled(self) -> bool:
        return self._client is not None if self._made else self.settings.llm_enabled

    def budget_user(self, user_id: str) -> str | None:
        """Whose budget a call spends: the user's, or (``llm_budget_scope = "global"``) everyone's."""
        return user_id if self.settings.llm_budget_scope == "user" else None

    def usage(self) -> dict[str, Any]:
        """Calls, failures, tokens and cost (total and per user) plus the task counters."""
        client = self._client if self._made else None
        ledger = client.ledger.snapshot() if client is not None else {"total": {}, "users": {}}
        return {**ledger, "tasks": self.stats.snapshot()}

    # -- extraction ----------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.settings.llm_extraction if self.enabled else "off"

    def _drop_placeholders(self) -> list[str]:
        policy = self.services.privacy
        return [placeholder(k) for k in SecretKind if policy.action(k) is Policy.DROP]

    def extract(
        self,
        scope: Scope,
        turns: Sequence[Sequence[Message]],
        said_at: Sequence[datetime],
        rules: Sequence[Candidate],
    ) -> list[tuple[Candidate, int]]:
        """LLM candidates of `turns` that the rules' candidates do not already say.

        Messages are redacted by the privacy policy before they are sent. Any LLM
        error: logged, counted (``extract_failed``), and no LLM candidates.
        """
        client = self.client
        if client is None:
            return []
        from engram.extract.llm import LLMExtractor, dropped_by_policy, novel_candidates
        from engram.providers.openai_compat import LLMBadOutput, LLMError

        policy = self.services.privacy
        clean = [
            [Message(role=m.role, content=redact(m.content, policy)) for m in turn if m.content.strip()]
            for turn in turns
        ]
        if not any(len(m.content.strip()) >= 2 for turn in clean for m in turn if m.role == "user"):
            return []  # nothing the user said: no call
        extractor = LLMExtractor(client, template_dir=self.settings.template_dir)
        self.stats.add("extract_calls")
        try:
            result = extractor.extract(
                clean, now=said_at[-1], said_at=said_at, user_id=self.budget_user(scope.user_id)
            )
        except LLMError as err:
            self.stats.add("extract_failed")
            if isinstance(err, LLMBadOutput):
                self.stats.add("extract_bad_json")
            log.warning("LLM extraction failed (%s); this turn keeps the rules' memories only", err)
            return []
        self.stats.add("extract_items", result.raw_items)
        self.stats.add("extract_invalid", result.invalid)
        self.stats.add("extract_translated", result.translated)
        self.stats.add("extract_ungrounded", result.ungrounded)
        self.stats.add("extract_grounded", len(result.candidates))
        self.stats.add("extract_links_ungrounded", result.ungrounded_links)
        drop = self._drop_placeholders()
        found = [(c, i) for c, i in result.candidates if not dropped_by_policy(c.content, drop)]
        novel = novel_candidates(found, rules, self.services.embedder.embed)
        self.stats.add("extract_covered_by_rules", len(found) - len(novel))
        self.stats.add("extract_kept", len(novel))
        return novel

    # -- reconciliation ------------------------------------------------------------
    def judge(self, scope: Scope) -> Judge | None:
        """The grey-zone judge for this scope, or None (no LLM, or ``llm_reconcile`` off)."""
        if not self.settings.llm_reconcile or not self.enabled:
            return None
        client = self.client
        if client is None:
            return None
        from engram.reconcile import llm_judge

        def counted(what: str) -> None:
            self.stats.add("judge_calls" if what not in _JUDGE_PROBLEMS else f"judge_{what}")
            if what not in _JUDGE_PROBLEMS:
                self.stats.add(f"judge_{what.lower()}")

        return llm_judge(
            client, template_dir=self.settings.template_dir,
            user_id=self.budget_user(scope.user_id), on_result=counted,
        )

    # -- compression ---------------------------------------------------------------
    @property
    def compressing(self) -> bool:
        return self.settings.llm_compress and self.enabled

    def compress(
        self, scope: Scope, items: Sequence[MemoryItem], lines: Sequence[Line], language: str
    ) -> list[Line] | None:
        """The delta's lines written by the LLM, validated; None: keep the deterministic ones."""
        client = self.client if self.compressing else None
        if client is None or len(lines) + sum(1 for i in items if i.status.value == "superseded") < 2:
            return None  # nothing to merge: a call would not improve one line
        from engram.compress_llm import compress_with_llm
        from engram.tokens import get_counter
        from engram.providers.openai_compat import LLMError

        s = self.settings
        self.stats.add("compress_calls")
        try:
            better = compress_with_llm(
                client, items, lines, language=language, counter=get_counter(s.token_encoding),
                line_tokens=s.line_tokens, max_tokens=s.llm_compress_tokens,
                template_dir=s.template_dir, user_id=self.budget_user(scope.user_id),
            )
        except LLMError as err:
            self.stats.add("compress_failed")
            log.warning("LLM compression failed (%s); using the deterministic delta", err)
            return None
        self.stats.add("compress_used")
        return better
