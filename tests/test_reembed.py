"""Changing the embedder on an existing store (issue #14): detected with a message that says
what to do, and `reembed` re-embeds in place, resumably."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from engram import Memory
from engram.reembed import EmbedderMismatch, reembed
from engram.store.sqlite import SQLiteStore


class HashEmbedder:
    """A small real embedder (hashed character trigrams, 64-d): another model than wordllama."""

    name = "trigram-hash-64"
    dim = 64
    languages = None

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()} "
            for i in range(len(padded) - 2):
                out[row, hashlib.blake2b(padded[i:i + 3].encode(), digest_size=2).digest()[0] % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def test_another_embedder_is_refused_with_what_to_do_then_reembed_fixes_it(db_path, embedder):
    with Memory(db_path, embedder=embedder) as m:
        for said in ("I live in Lisbon.", "I prefer tea.", "I work as a nurse."):
            m.add(said, user_id="u", infer=False)  # three memories, verbatim
    with pytest.raises(EmbedderMismatch, match="engram reembed"):
        Memory(db_path, embedder=HashEmbedder())

    other = HashEmbedder()
    store = SQLiteStore(db_path, dim=other.dim)
    seen = []

    def stop_after_one(done, total):
        seen.append((done, total))
        raise KeyboardInterrupt  # interrupted after the first batch

    with pytest.raises(KeyboardInterrupt):
        reembed(store, other, batch=1, progress=stop_after_one)
    assert seen == [(1, 3)]
    assert reembed(store, other, batch=2) == 2  # resumes: only what is left
    assert reembed(store, other) == 0
    store.close()
    with Memory(db_path, embedder=other) as m:
        assert m.search("Lisbon", user_id="u")[0].memory.content == "I live in Lisbon."
