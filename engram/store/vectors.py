"""An in-memory, per-user matrix of a store's vectors for exact dense search.

Brute force over one user's contiguous rows beats any ANN index at the sizes a
single user reaches (FACTS.md: 0.1 ms at 1k rows, ~7 ms at 100k). Past
`PREFILTER_ROWS` rows a 64-dimension prefix of each vector (wordllama is
trained so that prefixes still work) picks a shortlist that the full vectors
then rank exactly, keeping large scopes inside a few milliseconds.

The database stays the truth: a matrix is loaded lazily from it, patched on
this process's writes, and dropped when another process changes the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

PREFILTER_ROWS = 20_000
PREFIX_DIM = 64
SHORTLIST = 2_000

# small integer codes so masks are numpy comparisons
STATUS_CODES = {"active": 0, "superseded": 1, "disputed": 2, "archived": 3}
GONE = -1


class UserVectors:
    """One user's vectors with the columns dense search filters on."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.size = 0
        self.rowids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.status = np.zeros(0, dtype=np.int8)
        self.agent = np.zeros(0, dtype=np.int32)
        self.position: dict[int, int] = {}
        self.agent_codes: dict[str | None, int] = {None: 0}
        self._prefix: np.ndarray | None = None

    def _grow(self, extra: int) -> None:
        need = self.size + extra
        if need <= len(self.rowids):
            return
        capacity = max(need, 2 * len(self.rowids), 64)

        def widen(array: np.ndarray) -> np.ndarray:
            shape = (capacity,) + array.shape[1:]
            grown = np.zeros(shape, dtype=array.dtype)
            grown[: self.size] = array[: self.size]
            return grown

        self.rowids = widen(self.rowids)
        self.matrix = widen(self.matrix)
        self.status = widen(self.status)
        self.agent = widen(self.agent)

    def add(
        self,
        rowids: Iterable[int],
        vectors: np.ndarray,
        statuses: Iterable[str],
        agents: Iterable[str | None],
    ) -> None:
        rowids = list(rowids)
        self._grow(len(rowids))
        start = self.size
        end = start + len(rowids)
        self.rowids[start:end] = rowids
        self.matrix[start:end] = vectors
        self.status[start:end] = [STATUS_CODES[s] for s in statuses]
        self.agent[start:end] = [
            self.agent_codes.setdefault(a, len(self.agent_codes)) for a in agents
        ]
        for offset, rowid in enumerate(rowids):
            self.position[rowid] = start + offset
        self.size = end
        self._prefix = None

    def set_status(self, rowid: int, status: str | None) -> None:
        index = self.position.get(rowid)
        if index is not None:
            self.status[index] = GONE if status is None else STATUS_CODES[status]

    def set_vector(self, rowid: int, vector: np.ndarray) -> None:
        index = self.position.get(rowid)
        if index is not None:
            self.matrix[index] = vector
            self._prefix = None

    def search(
        self,
        query: np.ndarray,
        statuses: list[str],
        agent_id: str | None,
        limit: int,
        allowed: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> list[tuple[int, float]]:
        """Top `limit` (rowid, cosine) among rows passing the filters."""
        n = self.size
        if n == 0 or limit <= 0:
            return []
        codes = [STATUS_CODES[s] for s in statuses]
        status = self.status[:n]
        mask = status == codes[0] if len(codes) == 1 else np.isin(status, codes)
        if agent_id is not None:
            code = self.agent_codes.get(agent_id)
            if code is None:
                return []
            mask &= self.agent[:n] == code
        if allowed is not None:
            mask &= allowed(self.rowids[:n])
        if n > PREFILTER_ROWS:
            if self._prefix is None:
                self._prefix = np.ascontiguousarray(self.matrix[:n, :PREFIX_DIM])
            rough = self._prefix @ query[:PREFIX_DIM]
            rough[~mask] = -np.inf
            keep = min(SHORTLIST, n)
            shortlist = np.argpartition(-rough, keep - 1)[:keep]
            shortlist = shortlist[mask[shortlist]]
            scores = self.matrix[shortlist] @ query
            indexes = shortlist
        else:
            indexes = np.flatnonzero(mask)
            rows = self.matrix[:n] if len(indexes) == n else self.matrix[indexes]
            scores = rows @ query
        if len(indexes) == 0:
            return []
        k = min(limit, len(indexes))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.rowids[indexes[i]]), float(scores[i])) for i in top]
