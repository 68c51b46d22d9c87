"""An in-memory index of one user's memories: vectors and lexical postings.

Why in memory: ranking has to stay under a millisecond at the sizes one user
reaches. Brute-force cosine over a user's contiguous rows beats any ANN index
there (FACTS.md: 0.1 ms at 1k rows), and BM25 over per-user postings in numpy
takes tens of microseconds where FTS5's `bm25()` needed ~1.1 ms on a LoCoMo
conversation (it scores every matching row through SQL callbacks). BM25
statistics are the user's own (idf within the scope), which is also what a
per-user memory should mean.

The database stays the truth (vectors as blobs, tokens in the FTS5 table): an
index is loaded lazily from it, patched on this process's writes, and dropped
when another process changes this user's memories.

Past `EXACT_UP_TO` rows the dense side goes through an IVF index
(`engram.store.ivf`): the rows of the clusters nearest to the query are ranked
exactly (at least `ivf.NPROBE` clusters and `SHORTLIST` rows). The first dense
search that needs one builds it (100k rows: ~0.5 s, on top of the ~1.5 s the
scope takes to load); it takes new rows as they are written, and once the scope
has doubled or a quarter of its entries are deleted it is rebuilt on a
background thread while the old one keeps serving. Smaller scopes are ranked
exactly over every row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np

from engram.blas import one_thread
from engram.dialogue import Conversations, TurnPlace
from engram.store import ivf as _ivf
from engram.store.base import CONTEXT_PREFIX
from engram.store.fixed_point import as_held, fixed, unfixed
from engram.store.ivf import IVF, Build
from engram.store.recall_memo import Ranked, RecallMemo, vector_key

EXACT_UP_TO = 20_000  # dense search is exact up to this many rows; above, it probes an IVF index
SHORTLIST = 2_000  # an IVF search ranks at least this many rows exactly
RESTATEMENT_SHORTLIST = 16  # rows sharing the most words whose vectors a duplicate check reads
RESTATEMENT_POSTINGS = 512  # postings a duplicate check reads to find them, rarest words first
BUILD_IN_BACKGROUND = True  # rebuilds on a thread (a first build is always inline)
ANSWERS_BACK = 1.0  # share of an answer's words a question turn is read with
# turns of the thread a turn is read with (the turn it answers, the one that answers, ...), each
# counting THREAD_DECAY x the one after it: LoCoMo dev R@10 0.779 → 0.801 at 2 hops (0.793-0.801
# for decays 0.5-0.8 and 2-4 hops). Its cost: [assistant, user] pairs stored verbatim per speaker
# (the conversation bench's raw mode) 0.761 → 0.731 (0.737 at decay 0.5, 0.746 at 0.3).
THREAD_HOPS = 2
THREAD_DECAY = 0.7
BM25_K1 = 1.2
BM25_B = 0.75

# small integer codes so filters are numpy comparisons
STATUS_CODES = {"active": 0, "superseded": 1, "disputed": 2, "archived": 3}
STATUS_NAMES = {code: name for name, code in STATUS_CODES.items()}
GONE = -1

Allowed = Callable[[np.ndarray], np.ndarray]
# (since, until) in POSIX seconds, either open: rows said in [since, until)
Window = tuple[float | None, float | None]

# OpenBLAS splits a big matrix-vector product over threads; on a busy 2-core
# machine the hand-off costs more than the product (10k×256: 8 ms with two
# threads, 0.4 ms with one), so large products run single-threaded.
_THREADED_ROWS = 4096
# copying a permitted row out of the matrix and scoring it costs about this many
# times scoring a row in place (a cluster's rows are contiguous)
_GATHER_COST = 2.5
_UNASSIGNED_MAX = 4096  # rows written between searches that wait to join the IVF


def _one_blas_thread(rows: int) -> AbstractContextManager:
    return one_thread() if rows >= _THREADED_ROWS else nullcontext()


class _Postings:
    """One term's postings: appended as Python lists (cheap while a scope loads), copied to
    numpy on use. The copy grows in place, so after a write only the new postings are
    converted: a common word's list ("user": every memory) is not rebuilt per message."""

    __slots__ = ("docs", "tfs", "_docs", "_tfs", "_filled")

    def __init__(self) -> None:
        self.docs: list[int] = []
        self.tfs: list[int] = []
        self._docs = _NO_DOCS
        self._tfs = _NO_TFS
        self._filled = 0

    def append(self, doc: int, tf: int) -> None:
        self.docs.append(doc)
        self.tfs.append(tf)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.docs)
        if self._filled < n:
            if len(self._docs) < n:  # room to grow: later postings are written in place
                capacity = n if self._filled == 0 else max(n, 2 * len(self._docs))
                docs, tfs = np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.float32)
                docs[: self._filled], tfs[: self._filled] = self._docs[: self._filled], self._tfs[: self._filled]
                self._docs, self._tfs = docs, tfs
            self._docs[self._filled : n] = self.docs[self._filled :]
            self._tfs[self._filled : n] = self.tfs[self._filled :]
            self._filled = n
        return self._docs[:n], self._tfs[:n]


_NO_DOCS = np.zeros(0, dtype=np.int64)
_NO_TFS = np.zeros(0, dtype=np.float32)


class _Field(dict):
    """A field's postings by term. Those read from a pack stay in flat CSR arrays until a
    query or a write touches the term (a cold user's query reads a few of its thousands)."""

    def __init__(
        self, terms: Sequence[str] = (), offsets: np.ndarray | None = None,
        docs: np.ndarray | None = None, tfs: np.ndarray | None = None,
    ) -> None:
        super().__init__()
        self._slots = dict(zip(terms, range(len(terms)), strict=True))
        self._offsets, self._docs, self._tfs = offsets, docs, tfs
        self.unpacked = 0  # postings held as Python lists (`nbytes` without a walk over them)

    def get(self, term: str, default: _Postings | None = None) -> _Postings | None:  # type: ignore[override]
        found = dict.get(self, term)
        if found is None and self._slots:
            slot = self._slots.pop(term, None)
            if slot is not None:
                found = self[term] = self._unpacked(slot)
        return default if found is None else found

    def _unpacked(self, slot: int) -> _Postings:
        start, end = int(self._offsets[slot]), int(self._offsets[slot + 1])
        postings = _Postings()
        postings._docs = self._docs[start:end].astype(np.int64)
        postings._tfs = self._tfs[start:end].copy()
        postings.docs, postings.tfs = postings._docs.tolist(), postings._tfs.astype(np.int64).tolist()
        postings._filled = end - start
        self.unpacked += end - start
        return postings

    def __len__(self) -> int:
        return dict.__len__(self) + len(self._slots)

    def __bool__(self) -> bool:
        return len(self) > 0

    def csr(self) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        """(terms joined by newlines, offsets, docs, term frequencies) of every term."""
        terms: list[str] = []
        offsets = [0]
        docs: list[np.ndarray] = []
        tfs: list[np.ndarray] = []
        for term, slot in self._slots.items():
            start, end = int(self._offsets[slot]), int(self._offsets[slot + 1])
            terms.append(term)
            docs.append(self._docs[start:end])
            tfs.append(self._tfs[start:end])
            offsets.append(offsets[-1] + end - start)
        for term, postings in dict.items(self):
            terms.append(term)
            docs.append(np.asarray(postings.docs, dtype=np.int32))
            tfs.append(np.asarray(postings.tfs, dtype=np.float32))
            offsets.append(offsets[-1] + len(postings.docs))
        return "\n".join(terms), np.asarray(offsets, dtype=np.int64), _joined(docs, np.int32), _joined(tfs, np.float32)

    def nbytes(self) -> int:
        """About what the field holds in memory: packed postings at 8 bytes, unpacked ones as
        Python lists plus their numpy copy (~90 bytes), ~150 bytes of overhead per term."""
        packed = 0 if self._docs is None else self._docs.nbytes + self._tfs.nbytes + self._offsets.nbytes
        return packed + 90 * self.unpacked + 150 * len(self)


def _joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    """Arrays end to end as one of `dtype` (an empty one for none)."""
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)


def _post(field: _Field, index: int, words: Sequence[str]) -> int:
    """Add one row's words (with their counts) to a field's postings; returns the length."""
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    for word, tf in counts.items():
        postings = field.get(word)
        if postings is None:
            postings = field[word] = _Postings()
        postings.append(index, tf)
    field.unpacked += len(counts)
    return len(words)


class ScopeIndex:
    """One user's rows: vectors, token postings and the columns searches filter on."""

    def __init__(
        self, dim: int, approximate_above: int | None = None, background: bool | None = None
    ) -> None:
        self.dim = dim
        # rows past which dense search uses the IVF index (None: `EXACT_UP_TO`)
        self.approximate_above = approximate_above
        # rebuild the IVF on a thread (None: `BUILD_IN_BACKGROUND`)
        self.background = background
        self.size = 0
        self.rowids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.has_vector = np.zeros(0, dtype=bool)
        self.status = np.zeros(0, dtype=np.int8)
        self.agent = np.zeros(0, dtype=np.int32)
        # each row's language, as a code into `language_names` (what a search weighs a lexical hit
        # in another language by, engram.fusion, read here instead of from every hit's row)
        self.language = np.zeros(0, dtype=np.int8)
        self.language_names: list[str] = [""]  # code 0: not known (a row added without it)
        self.doc_len = np.zeros(0, dtype=np.float32)
        # when each row was said (POSIX seconds): time ranges filter here, not through SQL
        self.created = np.zeros(0, dtype=np.float64)
        self.position: dict[int, int] = {}
        self.agent_codes: dict[str | None, int] = {None: 0}
        self.postings: _Field = _Field()
        self.ids: list[str] = []  # memory ids by row, so hits need no lookup
        self.words: list[Sequence[str]] = []
        # the turn an episode answers (its `ctx:` tokens): a second, weaker field per row
        self.context: _Field = _Field()
        self.context_len = np.zeros(0, dtype=np.float32)
        # turns of conversations in their own order (engram.dialogue); `answered[i]`: the row
        # of the turn row i answers (-1: none), refreshed before a search reads it
        self.conversations = Conversations()
        self.answered = np.zeros(0, dtype=np.int64)
        self._dialogue = np.zeros(0, dtype=np.int64)  # rows that answer a turn
        # `asked[i]`: `answered[i]` where that turn is another speaker's or named by `reply_to`
        # (-1: none), what dense search reads a turn with; a speaker's own previous turn is not
        # (per-speaker scopes hold only those: LoCoMo conversation mode R@10 0.766 → 0.756)
        self.asked = np.zeros(0, dtype=np.int64)
        self._replies = np.zeros(0, dtype=np.int64)  # rows with a turn in `asked`
        self.row_of: dict[str, int] = {}  # memory id -> its current row
        self.named: dict[int, tuple[float, float]] = {}  # row -> days its turn talks about
        # row -> how to read them: a turn's dates are parsed when a search asks for them
        # (`named_spans`, a shortlist), not for every turn written or loaded (~0.1 ms each)
        self._unread: dict[int, Callable[[], tuple[float, float] | None]] = {}
        self._ivf: IVF | None = None
        self._building: Build | None = None
        # rows written since the last dense search, put into the IVF's clusters by the next
        # (one product for them all, and the centroids are read then anyway)
        self._unassigned: list[int] = []
        # rows whose vector is a stand-in held for reading your writes until the real one lands
        # (`hold`): in memory only, never packed, never in the IVF
        self.provisional: set[int] = set()
        self._writes = 0  # counts changes, so the IVF check runs once per change
        self._ivf_checked = -1
        self._live_vectors = 0
        self._stats: dict[str, tuple[np.ndarray, int, np.ndarray]] = {}
        self._masks: dict[tuple[tuple[str, ...], str | None], np.ndarray] = {}
        # what questions read (their lexical and dense rankings, the turns of the speakers they
        # name) until the index changes (`_writes`): an agent asks the same things again and again
        self._memo = RecallMemo()

    # -- building ----------------------------------------------------------------
    def _grow(self, extra: int) -> None:
        need = self.size + extra
        if need <= len(self.rowids):
            return
        capacity = max(need, 2 * len(self.rowids), 64)

        def widen(array: np.ndarray) -> np.ndarray:
            grown = np.zeros((capacity,) + array.shape[1:], dtype=array.dtype)
            grown[: self.size] = array[: self.size]
            return grown

        self.rowids = widen(self.rowids)
        self.matrix = widen(self.matrix)
        self.has_vector = widen(self.has_vector)
        self.status = widen(self.status)
        self.agent = widen(self.agent)
        self.language = widen(self.language)
        self.doc_len = widen(self.doc_len)
        self.created = widen(self.created)
        self.context_len = widen(self.context_len)
        for name in ("answered", "asked"):
            links = np.full(capacity, -1, dtype=np.int64)
            links[: self.size] = getattr(self, name)[: self.size]
            setattr(self, name, links)

    def add(
        self,
        rowids: Sequence[int],
        ids: Sequence[str],
        vectors: Sequence[np.ndarray | None],
        tokens: Sequence[Sequence[str]],
        statuses: Iterable[str],
        agents: Iterable[str | None],
        places: Sequence[TurnPlace | str | None] | None = None,
        created: Sequence[float] | None = None,
        named: Sequence[tuple[float, float] | Callable[[], tuple[float, float] | None] | None] | None = None,
        languages: Sequence[str] | None = None,
    ) -> None:
        """Append rows; `places`: where each turn of a conversation sits (read with the turn
        it answers, see `lexical`). `created`: when each was said; `named`: the days it talks
        about, or how to read them when asked; `languages`: each row's language."""
        self._grow(len(rowids))
        start = self.size
        given = [offset for offset, vector in enumerate(vectors) if vector is not None]
        if given:  # at the index's precision, all at once (a full load passes every row of the user)
            rows = [start + offset for offset in given]
            self.matrix[rows] = unfixed(*fixed(np.stack([vectors[o] for o in given])))
            self.has_vector[rows] = True
        for offset, (rowid, _vector, words) in enumerate(zip(rowids, vectors, tokens, strict=True)):
            index = start + offset
            self.rowids[index] = rowid
            self.position[rowid] = index
            self.words.append(self._index_tokens(index, words))
            self.ids.append(ids[offset])
            self.row_of[ids[offset]] = index
            place = places[offset] if places is not None else None
            if isinstance(place, str):  # a conversation key alone: ordered by when it was said
                place = TurnPlace(place, (0.0, 0.0, float(created[offset]) if created is not None else 0.0))
            if place is not None:
                self.conversations.place(index, place, ids[offset])
            span = named[offset] if named is not None else None
            if callable(span):
                self._unread[index] = span
            elif span is not None:
                self.named[index] = span
        end = start + len(rowids)
        self.status[start:end] = [STATUS_CODES[s] for s in statuses]
        self.agent[start:end] = [self.agent_codes.setdefault(a, len(self.agent_codes)) for a in agents]
        if created is not None:
            self.created[start:end] = created
        if languages is not None:
            self.language[start:end] = [self._language_code(lang) for lang in languages]
        self.size = end
        if self._ivf is not None:
            self._unassigned.extend(range(start, end))
            if len(self._unassigned) >= _UNASSIGNED_MAX:  # many writes and no search: batch them now
                self._assign_unassigned()
        self._writes += 1
        self._stats.clear()
        self._masks.clear()

    def _index_tokens(self, index: int, words: Sequence[str]) -> Sequence[str]:
        """Post a row's own words; the words marked as context (`CONTEXT_PREFIX`, after its
        own: the turn an episode answers) go to the weaker context field. Returns its own words."""
        if not words or not words[-1].startswith(CONTEXT_PREFIX):
            self.doc_len[index] = _post(self.postings, index, words)
            return words
        split = next(i for i, w in enumerate(words) if w.startswith(CONTEXT_PREFIX))
        own = words[:split]
        self.doc_len[index] = _post(self.postings, index, own)
        self.context_len[index] += _post(self.context, index, [w[len(CONTEXT_PREFIX):] for w in words[split:]])
        return own

    def _links(self) -> np.ndarray:
        """`answered`, with the conversations changed since the last search linked again."""
        if self.conversations.dirty:
            for row, answered in self.conversations.refresh().items():
                self.answered[row] = answered
                self.asked[row] = answered if answered >= 0 and self.conversations.replies(row, answered) else -1
            self._dialogue = np.flatnonzero(self.answered[: self.size] >= 0)
            self._replies = np.flatnonzero(self.asked[: self.size] >= 0)
        return self.answered

    def answered_ids(self, ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """For each memory id that is a turn: (the turn it answers, the turn answering it)."""
        answered = self._links()
        rows = {i: self.row_of[i] for i in ids if i in self.row_of and self.status[self.row_of[i]] != GONE}
        out: dict[str, tuple[str | None, str | None]] = {}
        for memory_id, row in rows.items():
            place = self.conversations.places.get(row)
            if place is None:
                continue
            before = int(answered[row])
            after = next(
                (r for r in self.conversations.answering(row, memory_id) if answered[r] == row and self.status[r] != GONE),
                None,
            )
            out[memory_id] = (
                self.ids[before] if before >= 0 and self.status[before] != GONE else None,
                None if after is None else self.ids[after],
            )
        return out

    def speakers(self) -> set[str]:
        return self.conversations.speakers()

    def named_spans(self, ids: Sequence[str]) -> dict[str, tuple[float, float]]:
        rows = [(i, self.row_of.get(i)) for i in ids]
        self._read_spans([r for _, r in rows if r in self._unread])
        return {i: self.named[r] for i, r in rows if r is not None and r in self.named}

    def _read_spans(self, rows: Iterable[int]) -> None:
        for row in rows:
            span = self._unread.pop(row)()
            if span is not None:
                self.named[row] = span

    def speaker_rows(self, speakers: set[str]) -> set[str]:
        """Ids of the turns said by any of `speakers` (the caller does not change the set)."""
        by = self.conversations.by_speaker
        return self._memo.get(
            ("said by", frozenset(speakers)),
            self._writes,
            lambda: {self.ids[row] for s in speakers for row in by.get(s, ()) if self.status[row] != GONE},
        )

    def set_status(self, rowid: int, status: str | None) -> None:
        """`None` marks the row deleted; its postings are skipped from then on."""
        index = self.position.get(rowid)
        if index is not None:
            self.status[index] = GONE if status is None else STATUS_CODES[status]
            if status is None:
                self._stats.clear()
        self._writes += 1
        self._masks.clear()

    def _language_code(self, language: str) -> int:
        if language not in self.language_names:
            if len(self.language_names) >= 127:
                return 0  # (int8 codes; a store of more languages reads the rest from their rows)
            self.language_names.append(language)
        return self.language_names.index(language)

    def languages(self, memory_ids: Iterable[str]) -> dict[str, str]:
        """The language of each of these memories the index holds and knows it of."""
        out = {}
        for memory_id in memory_ids:
            row = self.row_of.get(memory_id)
            if row is not None and self.language[row]:
                out[memory_id] = self.language_names[self.language[row]]
        return out

    def status_of(self, rowid: int) -> str | None:
        """A row's status as indexed (None: deleted or unknown)."""
        index = self.position.get(rowid)
        code = None if index is None else int(self.status[index])
        return None if code is None or code == GONE else STATUS_NAMES[code]

    def holes(self) -> np.ndarray:
        """Rowids of live rows still without a vector (written behind, in this or another process)."""
        n = self.size
        return self.rowids[:n][~self.has_vector[:n] & (self.status[:n] != GONE)]

    def set_vector(self, rowid: int, vector: np.ndarray) -> None:
        """A row written without its vector gets it (write-behind): dense search finds it from now
        (in place of the stand-in `hold` gave it, if any)."""
        index = self.position.get(rowid)
        if index is None:
            return
        self.matrix[index] = as_held(vector)
        self.has_vector[index] = True
        self.provisional.discard(index)
        if self._ivf is not None:
            self._unassigned.append(index)
        self._writes += 1

    def hold(self, vectors: Sequence[tuple[str, np.ndarray]]) -> bool:
        """Stand-in vectors (memory id, vector) for rows still waiting for theirs, so that a search
        right after a write finds them by meaning (engram.embed_behind) without running the whole
        model in the caller's thread; the real vector replaces each (`set_vector`). A row with a
        vector by now keeps it. False, holding nothing, in a scope large enough for the IVF (whose
        clusters take only real vectors): the caller then makes the real ones."""
        if self.size > self._threshold():
            return False
        for memory_id, vector in vectors:
            index = self.row_of.get(memory_id)
            if index is None or self.has_vector[index] or self.status[index] == GONE:
                continue
            self.matrix[index] = as_held(vector)
            self.has_vector[index] = True
            self.provisional.add(index)
        self._writes += 1
        return True

    def replace(self, rowid: int, vector: np.ndarray | None, words: Sequence[str], language: str | None = None) -> None:
        """Content changed: the old row goes, a new one takes its rowid (and `language`, when given)."""
        index = self.position.get(rowid)
        if index is None:
            return
        status, agent = int(self.status[index]), int(self.agent[index])
        self.status[index] = GONE
        del self.position[rowid]
        self._grow(1)
        new = self.size
        self.rowids[new] = rowid
        held = index in self.provisional  # a stand-in for the old text is no vector for the new one
        self.provisional.discard(index)
        self.matrix[new] = as_held(vector) if vector is not None else self.matrix[index]
        self.has_vector[new] = vector is not None or (bool(self.has_vector[index]) and not held)
        self.status[new], self.agent[new] = status, agent
        self.language[new] = self._language_code(language) if language is not None else self.language[index]
        self.created[new] = self.created[index]
        self.position[rowid] = new
        self.words.append(self._index_tokens(new, words))
        self.ids.append(self.ids[index])
        self.row_of[self.ids[index]] = new
        self.conversations.move(index, new)
        if index in self.named:
            self.named[new] = self.named.pop(index)
        if index in self._unread:
            self._unread[new] = self._unread.pop(index)
        self.size += 1
        if self._ivf is not None:
            self._unassigned.append(new)
        self._writes += 1
        self._stats.clear()
        self._masks.clear()

    # -- memory and persistence --------------------------------------------------
    @property
    def clean(self) -> bool:
        """No row is deleted or replaced, and none holds a stand-in vector: every row is live
        content with what the store has (only such an index is packed, so a pack never keeps text
        that was deleted or rewritten, nor a vector the store never had)."""
        return not self.provisional and not bool(np.any(self.status[: self.size] == GONE))

    def nbytes(self) -> int:
        """About what this index holds in memory (the cache's budget counts this)."""
        arrays = sum(
            a.nbytes for a in (
                self.rowids, self.matrix, self.has_vector, self.status, self.agent, self.language, self.doc_len,
                self.created, self.context_len,
            )
        )
        ivf = self._ivf.nbytes() if self._ivf is not None else 0
        # ids, words, the rowid -> row dict and the store's content hash: ~400 bytes a row
        # (tracemalloc on 1,000-memory users: 2.2 MB loaded from the table, 1.6 MB from a pack);
        # a turn whose days are not read yet holds its text until then (~250 bytes)
        spans = 250 * len(self._unread)
        return (arrays + ivf + 400 * self.size + spans + self.postings.nbytes() + self.context.nbytes()
                + self._memo.nbytes())

    def to_parts(self) -> dict[str, np.ndarray | str | list | dict | int]:
        """The index as flat parts (`engram.store.scope_pack`); only a `clean` one."""
        self._read_spans(list(self._unread))  # a pack holds the days read, not how to read them
        n = self.size
        terms, offsets, docs, tfs = self.postings.csr()
        c_terms, c_offsets, c_docs, c_tfs = self.context.csr()
        steps, scale = fixed(self.matrix[:n]) if n else (np.zeros((0, self.dim), np.int16), np.zeros(0, np.float32))
        return {
            "dim": self.dim, "size": n,
            "rowids": self.rowids[:n], "has_vector": self.has_vector[:n],
            "status": self.status[:n], "agent": self.agent[:n], "doc_len": self.doc_len[:n],
            "language": self.language[:n], "language_names": self.language_names,
            "created": self.created[:n], "context_len": self.context_len[:n],
            "steps": steps, "scale": scale,  # the matrix (`fixed`)
            "ids": "\n".join(self.ids),
            "agents": [a for a, _ in sorted(self.agent_codes.items(), key=lambda kv: kv[1])],
            "places": [
                [row, p.conversation, list(p.order), p.speaker, p.turn_id, p.reply_to]
                for row, p in self.conversations.places.items()
            ],
            "named": [[row, span[0], span[1]] for row, span in self.named.items()],
            "terms": terms, "offsets": offsets, "docs": docs, "tfs": tfs,
            "c_terms": c_terms, "c_offsets": c_offsets, "c_docs": c_docs, "c_tfs": c_tfs,
        }

    @classmethod
    def from_parts(cls, parts: dict, approximate_above: int | None = None) -> ScopeIndex:
        """An index back from `to_parts` (the IVF, if any, is built again on first use)."""
        index = cls(int(parts["dim"]), approximate_above)
        n = index.size = int(parts["size"])
        index.rowids, index.has_vector = parts["rowids"], parts["has_vector"]
        index.matrix = unfixed(parts["steps"], parts["scale"])  # as `as_held` keeps it
        index.status, index.agent, index.doc_len = parts["status"], parts["agent"], parts["doc_len"]
        index.language, index.language_names = parts["language"], list(parts["language_names"])
        index.created, index.context_len = parts["created"], parts["context_len"]
        index.ids = parts["ids"].split("\n") if n else []
        index.words = [()] * n
        index.position = dict(zip(index.rowids.tolist(), range(n), strict=True))
        index.row_of = dict(zip(index.ids, range(n), strict=True))
        index.agent_codes = {agent: code for code, agent in enumerate(parts["agents"])}
        index.answered = np.full(n, -1, dtype=np.int64)  # linked again on first use (`_links`)
        index.asked = np.full(n, -1, dtype=np.int64)
        for row, conversation, order, speaker, turn_id, reply_to in parts["places"]:
            index.conversations.place(
                row, TurnPlace(conversation, tuple(order), speaker, turn_id, reply_to), index.ids[row]
            )
        index.named = {row: (since, until) for row, since, until in parts["named"]}

        def field(prefix: str) -> _Field:
            terms = parts[prefix + "terms"]
            return _Field(
                terms.split("\n") if terms else [], parts[prefix + "offsets"], parts[prefix + "docs"],
                parts[prefix + "tfs"],
            )

        index.postings, index.context = field(""), field("c_")
        return index

    # -- searching ---------------------------------------------------------------
    def _mask(
        self, statuses: list[str], agent_id: str | None, allowed: Allowed | None,
        window: Window | None = None,
    ) -> np.ndarray | None:
        """Rows passing the filters (a fresh array: callers may change it)."""
        key = (tuple(statuses), agent_id)
        if allowed is None and key in self._masks:
            mask = self._masks[key].copy()
        else:
            mask = self._passing(None, statuses, agent_id, allowed)
            if allowed is None and mask is not None:
                self._masks[key] = mask.copy()
        if mask is not None and window is not None:
            mask &= self._within(None, window)
        return mask

    def _passing(
        self, rows: np.ndarray | None, statuses: list[str], agent_id: str | None, allowed: Allowed | None,
        window: Window | None = None,
    ) -> np.ndarray | None:
        """Which of `rows` (None: every row) pass the filters; None when none can."""
        pick = slice(0, self.size) if rows is None else rows
        codes = [STATUS_CODES[s] for s in statuses]
        status = self.status[pick]
        mask = status == codes[0]
        for code in codes[1:]:  # a few codes: comparisons beat np.isin's sort
            mask |= status == code
        if agent_id is not None:
            code = self.agent_codes.get(agent_id)
            if code is None:
                return None
            mask &= self.agent[pick] == code
        if allowed is not None:
            mask &= allowed(self.rowids[pick])
        if window is not None:
            mask &= self._within(rows, window)
        return mask

    def _within(self, rows: np.ndarray | None, window: Window) -> np.ndarray:
        """Which of `rows` (None: every row) were said inside `window`."""
        since, until = window
        created = self.created[: self.size] if rows is None else self.created[rows]
        inside = np.ones(len(created), dtype=bool)
        if since is not None:
            inside &= created >= since
        if until is not None:
            inside &= created < until
        return inside

    def _top(
        self, scores: np.ndarray, indexes: np.ndarray, limit: int, ties: bool = False
    ) -> list[tuple[str, float]]:
        """The best `limit` of `indexes` (rows) by `scores` (aligned with `indexes`), as (id, score);
        with `ties`, also the rows tied with the last one (BM25 ties often; cosines of
        different texts hardly ever)."""
        if len(indexes) == 0 or limit <= 0:
            return []
        k = min(limit, len(indexes))
        if k == len(indexes):
            top = np.arange(len(indexes))
        else:
            top = np.argpartition(-scores, k - 1)[:k]
            if ties:  # which of the tied rows made the cut would depend on the writing order
                last = scores[top].min()
                better = top[scores[top] > last]
                tied = np.flatnonzero(scores == last)
                top = np.concatenate([better, tied[: 2 * limit - len(better)]])
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[indexes[i]], float(scores[i])) for i in top]

    def _threshold(self) -> int:
        return EXACT_UP_TO if self.approximate_above is None else self.approximate_above

    def _approximate(self) -> IVF | None:
        """The IVF index when this scope is large enough for one: built here when there is
        none; when stale (see `IVF.stale`) rebuilt, in the background by default."""
        n = self.size
        threshold = self._threshold()
        if n <= threshold:
            return None
        if self._building is not None and self._building.done:
            self._install()
        self._assign_unassigned()
        if self._ivf_checked != self._writes:
            live = self._real_vectors(0, n)
            self._live_vectors = int(np.count_nonzero(live))
            self._ivf_checked = self._writes
            if self._live_vectors <= threshold:
                self._ivf = self._building = None  # mostly deleted: the exact path is cheap again
                self._unassigned.clear()
            elif self._building is None and (self._ivf is None or self._ivf.stale(self._live_vectors)):
                # with none to serve meanwhile, build inline: exact search of a large scope
                # during a background build would cost more than the wait
                background = self._ivf is not None and (
                    BUILD_IN_BACKGROUND if self.background is None else self.background
                )
                if not background:
                    self._ivf = None  # its copy of the vectors goes before the new one is made
                    self._unassigned.clear()
                self._building = Build(self.matrix, np.flatnonzero(live), n, seed=n, background=background)
                if self._building.done:
                    self._install()
        return self._ivf

    def _real_vectors(self, start: int, end: int) -> np.ndarray:
        """Mask of the live rows in [start, end) with a real vector (what the IVF clusters)."""
        live = self.has_vector[start:end] & (self.status[start:end] != GONE)
        if self.provisional:
            held = np.fromiter(self.provisional, dtype=np.int64, count=len(self.provisional))
            held = held[(held >= start) & (held < end)]
            live[held - start] = False
        return live

    def _assign_unassigned(self) -> None:
        if self._unassigned and self._ivf is not None:
            rows = np.asarray(self._unassigned, dtype=np.int64)
            self._unassigned.clear()
            rows = rows[self.has_vector[rows] & (self.status[rows] != GONE)]
            self._ivf.add(rows, self.matrix[rows])

    def _install(self) -> None:
        """Swap in a finished build, with the rows written since it started."""
        build, self._building = self._building, None
        if build is None or build.result is None:
            return  # failed: the next write's check starts another
        index, n = build.result, self.size
        if build.upto < n:
            later = build.upto + np.flatnonzero(self._real_vectors(build.upto, n))
            index.add(later, self.matrix[later])
        self._unassigned.clear()  # all of them were in the build or just added
        self._ivf = index
        self._ivf_checked = -1  # count the live rows again against the new index

    def dense(
        self, query: np.ndarray, statuses: list[str], agent_id: str | None, limit: int,
        allowed: Allowed | None = None, window: Window | None = None, context_weight: float = 0.0,
    ) -> list[tuple[str, float]]:
        """Top `limit` (id, score) among rows passing the filters: the cosine, plus
        `context_weight` × the best cosine among the turn a row answers and the turns answering
        it (as `lexical` reads BM25; "I hold it for 30-60 seconds" is about the pose it was asked)."""
        if allowed is not None:  # a filter of the caller's: not comparable between calls
            return self._dense(query, statuses, agent_id, limit, allowed, window, context_weight)
        # which IVF answers (one built in the background is swapped in here) is part of the answer
        key = ("dense", vector_key(query), tuple(statuses), agent_id, limit, window, context_weight, id(self._approximate()))
        return self._memo.get(
            key, self._writes, lambda: Ranked(self._dense(query, statuses, agent_id, limit, None, window, context_weight))
        ).unpack()

    def _dense(
        self, query: np.ndarray, statuses: list[str], agent_id: str | None, limit: int,
        allowed: Allowed | None, window: Window | None, context_weight: float = 0.0,
    ) -> list[tuple[str, float]]:
        n = self.size
        if n == 0:
            return []
        mask = self._mask(statuses, agent_id, allowed, window)
        if mask is None:
            return []
        mask &= self.has_vector[:n]
        if not mask.any():
            return []
        index = self._approximate()  # may build (inline): outside the one-thread limit
        large = n > self._threshold()
        with _one_blas_thread(n):
            if index is not None:
                permitted = int(np.count_nonzero(mask))
                if permitted == 0:
                    return []
                # a filter passing a share s of the rows pushes its top rows deeper into the
                # unfiltered ranking: probe NPROBE/√s clusters (agent filters of 4-50%, even
                # ones that follow the content: recall ≥ 0.97). Where that would scan more
                # than gathering the permitted rows (s below ~0.1), gather them instead.
                share = min(1.0, permitted / max(self._live_vectors, 1))
                nprobe = min(index.clusters, math.ceil(_ivf.NPROBE / math.sqrt(share)))
                if _GATHER_COST * permitted >= self._live_vectors * nprobe / index.clusters:
                    rows, scores = index.search(query, mask, nprobe, SHORTLIST, limit)
                    if context_weight > 0:  # the probed rows' turns around may lie in other clusters
                        rows, scores = self._with_linked(rows, scores, mask, query)
                        scores = self._read_dense_with_answered(rows, scores, query, context_weight)
                    return self._top(scores, rows, limit)
            indexes = np.flatnonzero(mask)
            if large and _GATHER_COST * len(indexes) < n:  # few rows to rank: copy them out
                scores = self.matrix[indexes] @ query
                if context_weight > 0:
                    scores = self._read_dense_with_answered(indexes, scores, query, context_weight)
                return self._top(scores, indexes, limit)
            # one product over all rows beats copying the permitted ones out first
            cosines = self.matrix[:n] @ query
            scores = cosines[indexes]
            if context_weight > 0:
                scores = self._read_dense_with_answered(indexes, scores, query, context_weight, cosines)
            return self._top(scores, indexes, limit)

    def _turns_around(self, rows: np.ndarray) -> np.ndarray:
        """The rows of the turns `rows` answer and of the turns answering them (`asked`), not
        among `rows` themselves."""
        self._links()
        among = np.zeros(self.size, dtype=bool)
        among[rows] = True
        before = self.asked[rows]
        answering = self._replies[among[self.asked[self._replies]]]
        near = np.unique(np.concatenate([before[before >= 0], answering]))
        return near[~among[near]]

    def _with_linked(
        self, rows: np.ndarray, scores: np.ndarray, mask: np.ndarray, query: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`rows` (and their cosines `scores`) joined by the turns around them that pass `mask`:
        an answer is found through its question's cluster."""
        extra = self._turns_around(rows)
        extra = extra[mask[extra]]
        if len(extra) == 0:
            return rows, scores
        return np.concatenate([rows, extra]), np.concatenate([scores, self.matrix[extra] @ query])

    def _read_dense_with_answered(
        self, rows: np.ndarray, scores: np.ndarray, query: np.ndarray, weight: float,
        cosines: np.ndarray | None = None,
    ) -> np.ndarray:
        """`scores` (the cosines of `rows`) plus `weight` × the best cosine among the turn each
        row answers and the turns answering it (`asked`, as `_around` reads them); `cosines`:
        every row's, when the search has them, otherwise those of the turns around are computed."""
        self._links()
        n = self.size
        if cosines is None:
            cosines = np.zeros(n, dtype=np.float32)
            cosines[rows] = scores
            near = self._turns_around(rows)
            cosines[near] = self.matrix[near] @ query
        usable = (self.status[:n] != GONE) & self.has_vector[:n]
        values = np.where(usable, np.maximum(cosines[:n], 0.0), 0.0).astype(np.float32)
        return scores + weight * self._around(values, self.asked, self._replies)[rows]

    def _around(self, values: np.ndarray, links: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each of `rows` (in a full-length array, 0 elsewhere): the value of the turn it
        answers (`links`), or `ANSWERS_BACK` × the best value of the turns answering it, whichever
        is larger. The best, not the sum: a turn in the middle of a long exchange on the topic is
        not the more relevant for having many neighbours on it."""
        context = np.zeros_like(values)
        if len(rows):
            sources = links[rows]
            context[rows] = values[sources]
            if ANSWERS_BACK > 0:
                np.maximum.at(context, sources, ANSWERS_BACK * values[rows])
        return context

    def _field_stats(self, name: str, lengths: np.ndarray, live: np.ndarray) -> tuple[float, int, np.ndarray]:
        """(average length, live row count, live mask) of a field; kept until the next write.
        Length norms are computed per posting: after a write, O(scope) work here ran per message."""
        stats = self._stats.get(name)
        if stats is None:
            count = int(np.count_nonzero(live))
            average = float(np.sum(lengths, where=live)) / count if count else 0.0
            stats = self._stats[name] = (average, count if average > 0 else 0, live)
        return stats

    def _bm25(
        self, name: str, field: dict[str, _Postings], lengths: np.ndarray, live: np.ndarray,
        terms: Sequence[str], weights: Sequence[float] | None, scores: np.ndarray, scale: float,
    ) -> bool:
        """Add `scale` × BM25 of `terms` over one field into `scores`; False if no term hit."""
        average, count, live = self._field_stats(name, lengths, live)
        if count == 0:
            return False
        hit = False
        for position, term in enumerate(terms):
            postings = field.get(term)
            if postings is None:
                continue
            docs, tfs = postings.arrays()
            df = int(live[docs].sum())
            if df == 0:
                continue
            idf = scale * np.log(1.0 + (count - df + 0.5) / (df + 0.5))
            if weights is not None:
                idf *= weights[position]
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[docs] / average)
            scores[docs] += idf * tfs * (BM25_K1 + 1.0) / (tfs + norm)
            hit = True
        return hit

    def lexical(
        self, terms: Sequence[str], statuses: list[str], agent_id: str | None, limit: int,
        allowed: Allowed | None = None, weights: Sequence[float] | None = None,
        context_weight: float = 0.0, window: Window | None = None,
    ) -> list[tuple[str, float]]:
        """Top `limit` (id, score) among rows passing the filters and sharing a term.

        The score is BM25 over a row's own words plus `context_weight` × BM25 over
        its neighbouring turns' words (a question and its answer sit in two turns).
        """
        if allowed is not None:  # a filter of the caller's: not comparable between calls
            return self._lexical(terms, statuses, agent_id, limit, allowed, weights, context_weight, window)
        key = ("lexical", tuple(terms), tuple(statuses), agent_id, limit,
               None if weights is None else tuple(weights), context_weight, window)
        return self._memo.get(
            key, self._writes, lambda: Ranked(self._lexical(terms, statuses, agent_id, limit, None, weights, context_weight, window))
        ).unpack()

    def _lexical(
        self, terms: Sequence[str], statuses: list[str], agent_id: str | None, limit: int,
        allowed: Allowed | None, weights: Sequence[float] | None, context_weight: float, window: Window | None,
    ) -> list[tuple[str, float]]:
        n = self.size
        if n == 0:
            return []
        mask = self._mask(statuses, agent_id, allowed, window)
        if mask is None or not mask.any():  # (the superseded rows of a user who never changed a fact)
            return []
        live = self.status[:n] != GONE
        scores = np.zeros(n, dtype=np.float32)
        hit = self._bm25("own", self.postings, self.doc_len[:n], live, terms, weights, scores, 1.0)
        if context_weight > 0 and hit:
            self._read_with_answered(scores, live, context_weight)
        if context_weight > 0 and self.context:
            with_context = live & (self.context_len[:n] > 0)
            hit |= self._bm25(
                "context", self.context, self.context_len[:n], with_context, terms, weights, scores,
                context_weight,
            )
        if not hit:
            return []
        indexes = np.flatnonzero(mask & (scores > 0))
        return self._top(scores[indexes], indexes, limit, ties=True)

    def _read_with_answered(self, scores: np.ndarray, live: np.ndarray, weight: float) -> None:
        """Each turn scores `weight` x the best own score among the turn it answers and the
        turns answering it (`_around`): a question and its answer sit in two turns.

        Then the thread before, where each turn answers another speaker's (`asked`): the turn the
        answered one answers adds `THREAD_DECAY` x its score, and so on for `THREAD_HOPS` turns.
        "It was one of those moments where I felt in awe" answers "How did it make you feel?",
        which answers the turn about the meteor shower. A speaker's own earlier turns are not a
        thread (the conversation bench, default `add()`: R@10 0.762 with them, 0.766 without)."""
        answered = self._links()
        rows = self._dialogue
        if len(rows) == 0:
            return
        own = np.where(live, scores, 0.0).astype(np.float32)
        context = self._around(own, answered, rows)
        share, thread = 1.0, self.asked[rows]
        for _ in range(1, THREAD_HOPS):
            further = thread >= 0
            thread[further] = self.asked[thread[further]]
            further = (thread >= 0) & (thread != rows)  # a reply_to cycle leads back to the turn
            if not further.any():
                break
            share *= THREAD_DECAY
            context[rows[further]] += share * own[thread[further]]
        scores += weight * context

    def restatements(
        self, query: np.ndarray | None, terms: Sequence[str], statuses: list[str], agent_id: str | None,
        limit: int, allowed: Allowed | None = None, window: Window | None = None,
        shortlist: int = RESTATEMENT_SHORTLIST,
    ) -> list[tuple[str, float]]:
        """Top `limit` (id, cosine) among the `shortlist` rows sharing most of `terms`
        (`query` None: the shortlist, by the weight of the words shared).

        A restatement shares its wording (``engram.text.restates``), so only those rows'
        vectors are read: a duplicate check over all of a scope's vectors cost more than
        the rest of an add, the matrix being cold in the cache by the next message.
        Shared terms count by rarity (idf), the rarest first, until `RESTATEMENT_POSTINGS`
        postings are read ("user", in every memory, barely is; a rarest word past that
        budget reads its newest rows): the check costs the same at 1k rows and at 100k,
        where scoring every row took ~0.4 ms.
        """
        n = self.size
        found = sorted((p.docs for p in map(self.postings.get, terms) if p is not None), key=len)
        if n == 0 or not found:
            return []
        shared: dict[int, float] = {}
        budget = RESTATEMENT_POSTINGS
        for docs in found:  # plain Python: a few hundred postings, no scope-sized array
            if budget <= 0:
                break
            weight = math.log1p(n / len(docs))
            for doc in docs[-budget:]:
                shared[doc] = shared.get(doc, 0.0) + weight
            budget -= len(docs)
        rows = np.fromiter(shared, dtype=np.int64, count=len(shared))
        scores = np.fromiter(shared.values(), dtype=np.float32, count=len(shared))
        passing = self._passing(rows, statuses, agent_id, allowed, window)
        if passing is None:
            return []
        if query is None:  # the shortlist itself, by shared words (rows not embedded yet too)
            return self._top(scores[passing], rows[passing], min(limit, shortlist))
        keep = passing & self.has_vector[rows]
        rows, scores = rows[keep], scores[keep]
        if len(rows) > shortlist:
            rows = rows[np.argpartition(-scores, shortlist - 1)[:shortlist]]
        return self._top(self.matrix[rows] @ query, rows, limit)
