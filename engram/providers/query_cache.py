"""Query vectors kept for repeated queries: an agent asks the same thing again and again
("what does the user like?" every turn), and a multilingual embedder costs ~3-15 ms a query.

An LRU keyed by (model, text): a different embedder never reads another's vectors. Vectors
are handed out read-only, so no caller can change what the next one gets.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from engram.providers.embedders import Embedder

QUERY_CACHE_SIZE = 512  # queries (2 KB each at 512-d)


class QueryCache:
    """The last `size` query vectors, by (model, text)."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def vector(self, embedder: Embedder, text: str) -> np.ndarray:
        """`text`'s vector by `embedder`, made once while it stays among the recent ones."""
        key = (embedder.name, text)
        with self._lock:
            found = self._vectors.get(key)
            if found is not None:
                self._vectors.move_to_end(key)
                self.hits += 1
                return found
        embed_query = getattr(embedder, "embed_query", None)  # an embedder's cheaper way for queries
        made = embed_query(text) if embed_query is not None else embedder.embed([text])[0]
        vector = np.array(made, dtype=np.float32)
        vector.setflags(write=False)
        with self._lock:
            self.misses += 1
            if self.size > 0:
                self._vectors[key] = vector
                if len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return vector
