"""What a scope index worked out for a question, kept until the index changes.

An agent asks the same things again and again between writes ("what do I like to drink?"
before every reply), and a search reads the same lexical and dense rankings for them each
time. `RecallMemo` keeps the last `capacity` readings, least recently used dropped first,
and forgets them all at once when the index changes. Rankings are held packed (ids, and
scores in one float64 array: 16 bytes an entry, not ~80 as Python tuples), so a few hundred
recent questions of one user cost well under a megabyte, and the index cache's memory
budget counts them (`nbytes`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

CAPACITY = 1024  # readings (a search makes two or three: ~400 recent questions a user)


class Ranked:
    """A ranking [(id, score), …] as packed: ids and their scores."""

    __slots__ = ("ids", "scores")

    def __init__(self, ranked: list[tuple[str, float]]) -> None:
        self.ids = tuple(i for i, _ in ranked)
        self.scores = np.fromiter((s for _, s in ranked), dtype=np.float64, count=len(ranked))

    def unpack(self) -> list[tuple[str, float]]:
        return list(zip(self.ids, self.scores.tolist(), strict=True))

    def __len__(self) -> int:
        return len(self.ids)


def vector_key(vector: np.ndarray) -> bytes:
    """A query vector as a memo key: 16 bytes, not its 2 KB."""
    return hashlib.blake2b(np.ascontiguousarray(vector, dtype=np.float32).tobytes(), digest_size=16).digest()


class RecallMemo:
    """Readings by key, valid while the index's change counter stays where it was."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._readings: dict[Hashable, Any] = {}  # least recently used first
        self._version: int | None = None
        self._entries = 0  # ids held by the readings (what `nbytes` counts)

    def get(self, key: Hashable, version: int, compute: Callable[[], Any]) -> Any:
        """`compute()`, or what it gave for `key` at this `version` (the value is shared)."""
        if version != self._version:
            self._readings.clear()
            self._entries = 0
            self._version = version
        value = self._readings.pop(key, None)
        if value is None:
            if len(self._readings) >= self.capacity:
                oldest = next(iter(self._readings))
                self._entries -= len(self._readings.pop(oldest))
            value = compute()
            self._entries += len(value)
        self._readings[key] = value  # now the most recently used
        return value

    def nbytes(self) -> int:
        """About what the readings hold: 16 bytes an id and score, ~300 bytes a reading."""
        return 16 * self._entries + 300 * len(self._readings)
