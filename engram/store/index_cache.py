"""Per-user `ScopeIndex`es held within a memory budget, least recently used evicted first.

Why: a process serving many users kept every index it ever loaded (~2.5 MB per 1,000
memories): on a 1M-memory store RSS reached 2.5 GB once every user had searched. An
evicted user's index is loaded again on their next search (from its pack, see
`engram.store.scope_pack`, in a few milliseconds), so the budget trades memory for
that reload, never correctness.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator

from engram.store.scope_index import ScopeIndex

DEFAULT_BUDGET_MB = 256
REMEASURE_EVERY = 256  # loads between two measurements of every cached index


class IndexCache:
    """user_id -> ScopeIndex, LRU by the indexes' estimated bytes (`ScopeIndex.nbytes`).

    An index is measured when it comes in, and every cached one again every `REMEASURE_EVERY`
    loads (growth from writes and the questions' memo counts soon); eviction goes by the sizes
    on record. Measuring every index on every load cost O(users) a load: ~3 ms a cold search
    with 300 users cached, and so did measuring them all whenever the cache was full, as it
    is for good once a process has served more users than the budget holds (~2 ms of a
    restarted process's first searches at 1M memories). The index just put in is never
    evicted, however large: a search needs it.
    """

    def __init__(self, budget_mb: float = DEFAULT_BUDGET_MB, on_evict: Callable[[str], None] | None = None) -> None:
        self.budget = int(budget_mb * 1024 * 1024)
        self.on_evict = on_evict
        self.evictions = 0
        self._entries: OrderedDict[str, ScopeIndex] = OrderedDict()
        self._sizes: dict[str, int] = {}  # bytes on record per user (`_fit`)
        self._recorded = 0  # their sum
        self._loads = 0

    def get(self, user_id: str) -> ScopeIndex | None:
        """The user's index (now the most recently used), or None."""
        index = self._entries.get(user_id)
        if index is not None:
            self._entries.move_to_end(user_id)
        return index

    def __getitem__(self, user_id: str) -> ScopeIndex:
        return self._entries[user_id]

    def __setitem__(self, user_id: str, index: ScopeIndex) -> None:
        self._entries[user_id] = index
        self._entries.move_to_end(user_id)
        self._record(user_id, index.nbytes())
        self._loads += 1
        if self._loads % REMEASURE_EVERY == 0:
            self._remeasure()
        self._fit(keep=user_id)

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def pop(self, user_id: str, default: ScopeIndex | None = None) -> ScopeIndex | None:
        self._record(user_id, 0)
        return self._entries.pop(user_id, default)

    def clear(self) -> None:
        self._entries.clear()
        self._sizes.clear()
        self._recorded = 0

    def _record(self, user_id: str, size: int) -> None:
        self._recorded += size - self._sizes.pop(user_id, 0)
        if size:
            self._sizes[user_id] = size

    def _remeasure(self) -> None:
        for user_id, index in self._entries.items():
            self._record(user_id, index.nbytes())

    def _fit(self, keep: str) -> None:
        """Evict the least recently used until the rest fits the budget (by the sizes on record)."""
        while self._recorded > self.budget and len(self._entries) > 1:
            user_id = next(iter(self._entries))
            if user_id == keep:
                self._entries.move_to_end(user_id)
                continue
            self.pop(user_id)
            self.evictions += 1
            if self.on_evict is not None:
                self.on_evict(user_id)
