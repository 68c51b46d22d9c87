"""What leaves engram is redacted again under today's privacy policy (memories stored before a
policy change must not show what the policy now hides). One place does it for every read path."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engram.models import Clarification, HistoryEntry, MemoryItem
from engram.privacy import PrivacyPolicy, redact
from engram.sanitize import redact_json

_CLEAN_VERSIONS_KEPT = 100_000


class Display:
    """Redacts memories, clarifications and history entries on the way out."""

    def __init__(self, privacy: PrivacyPolicy) -> None:
        self.privacy = privacy
        # (id, updated_at) of memory versions that redaction leaves as they are: each
        # version is scanned once, not on every read (a search shows ~5-20 of them)
        self._clean_versions: set[tuple[str, datetime]] = set()

    def item(self, item: MemoryItem) -> MemoryItem:
        """`item` as it may be shown: redacted again (memories stored before a policy change)."""
        version = (item.id, item.updated_at)
        if version in self._clean_versions:
            return item
        changes: dict[str, Any] = {}
        clean = redact(item.content, self.privacy)
        if clean != item.content:
            changes["content"] = clean
        if item.value and (value := redact(item.value, self.privacy)) != item.value:
            changes["value"] = value
        if item.metadata and (meta := redact_json(item.metadata, self.privacy)) != item.metadata:
            changes["metadata"] = meta
        if item.entities and (entities := redact_json(item.entities, self.privacy)) != item.entities:
            changes["entities"] = entities
        if changes:
            return item.model_copy(update=changes)
        if len(self._clean_versions) >= _CLEAN_VERSIONS_KEPT:
            self._clean_versions.clear()
        self._clean_versions.add(version)
        return item

    def clarification(self, clar: Clarification | None) -> Clarification | None:
        if clar is None:
            return None
        return clar.model_copy(update={
            "question": redact(clar.question, self.privacy),
            "contents": [redact(c, self.privacy) for c in clar.contents],
        })

    def history_entry(self, entry: HistoryEntry) -> HistoryEntry:
        return entry.model_copy(update={
            "old_content": redact(entry.old_content, self.privacy) if entry.old_content else entry.old_content,
            "new_content": redact(entry.new_content, self.privacy) if entry.new_content else entry.new_content,
            "reason": redact(entry.reason, self.privacy),
        })

    def text(self, text: str) -> str:
        return redact(text, self.privacy)
