"""The `Embedder` protocol and the offline default, wordllama.

wordllama ships its weights and tokenizer inside its wheel, so the default
path never touches the network. Its 0.4.0.post1 `load()` looks for the
tokenizer in the wrong folder and then tries to download it; pointing
`cache_dir` at the package folder with downloads disabled loads it offline.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from engram.providers.shared import shared_model
from engram.providers.vectors import normalise_rows

if TYPE_CHECKING:
    from engram.config import Settings


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows."""

    name: str
    dim: int
    # languages the model represents well; None = any. Retrieval skips dense
    # search for queries in other languages.
    languages: frozenset[str] | None

    def embed(self, texts: list[str]) -> np.ndarray: ...


class WordLlamaEmbedder:
    """Static token embeddings (256-d by default): ~0.1 ms per short text on a CPU."""

    @staticmethod
    def name_for(dim: int) -> str:
        """The model name its vectors carry in a store."""
        return f"wordllama-l2-supercat-{dim}"

    def __init__(self, dim: int = 256) -> None:
        if dim not in (64, 128, 256):
            raise ValueError(f"wordllama supports dimensions 64, 128 or 256, not {dim}")
        self.dim = dim
        self.name = self.name_for(dim)
        # its vocabulary barely covers Chinese: near chance on MADial-zh
        self.languages = frozenset({"en"})
        self._model = None
        self._word_ids: dict[str, tuple[int, ...]] = {}  # see _token_ids

    def _load(self):
        if self._model is None:
            self._model = shared_model(("wordllama", self.dim), lambda: _load_wordllama(self.dim))
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._model or self._load()
        if len(texts) == 1:
            return self._embed_one(model, texts[0])
        return normalise_rows(model.embed(list(texts), norm=False))

    def _embed_one(self, model, text: str) -> np.ndarray:
        """One text (every add and search): the same mean of token rows as `model.embed`,
        without its batch machinery. `encode_batch` hands even one text to the tokenizer's
        thread pool, which costs ~0.2 ms on a busy machine; this runs in this thread."""
        table = model.embedding  # one row per token id (checked in _load)
        ids = self._token_ids(model.tokenizer, text)
        if not ids:
            return np.zeros((1, table.shape[1]), dtype=np.float32)
        row = np.add.reduce(table[ids], axis=0, dtype=np.float32)
        norm = float(np.sqrt(row @ row))
        return (row / (norm or 1.0)).reshape(1, -1)

    def _token_ids(self, tokenizer, text: str) -> list[int]:
        """The tokenizer's ids for `text`, from a cache of words where that is exact.

        The tokenizer (Llama's BPE) turns each space into "▁" and runs over the whole
        text, and none of its 32k tokens holds a "▁" after its first character: with
        single spaces, a text's ids are its words' ids one after another. Words seen
        before cost a dict lookup instead of a pass of the tokenizer (~50 µs in place).
        """
        words = text.split(" ")
        if "" in words or "▁" in text:  # runs of spaces merge across words ("▁▁"): no shortcut
            return tokenizer.encode(text, add_special_tokens=False).ids
        cache = self._word_ids
        known = [cache.get(word) for word in words]
        missing = {word for word, ids in zip(words, known, strict=True) if ids is None}
        if len(missing) <= _WORDS_ALONE:  # a new name or number: tokenize just that word
            fresh = {word: tuple(tokenizer.encode(word, add_special_tokens=False).ids) for word in missing}
            self._remember(fresh)
            return [
                i for word, ids in zip(words, known, strict=True)
                for i in (ids if ids is not None else fresh[word])
            ]
        encoding = tokenizer.encode(text, add_special_tokens=False)
        groups: list[list[int]] = []
        for token, token_id in zip(encoding.tokens, encoding.ids, strict=True):
            if token.startswith("▁") or not groups:
                groups.append([])
            groups[-1].append(token_id)
        if len(groups) == len(words):  # every word starts a token with "▁": cache them
            self._remember({word: tuple(ids) for word, ids in zip(words, groups, strict=True)})
        return encoding.ids

    def _remember(self, word_ids: dict[str, tuple[int, ...]]) -> None:
        """Words' token ids into the cache, which starts over once past `_WORD_CACHE`."""
        if len(self._word_ids) > _WORD_CACHE:
            self._word_ids.clear()
        self._word_ids.update(word_ids)


def _load_wordllama(dim: int) -> Any:
    """wordllama's model at `dim`, from its package folder (offline: see above). The wheel holds
    the 256-d weights only; 64 and 128 are their first dimensions (`trunc_dim`, the model is
    trained for it), which `dim=` would look for as files of their own and fail offline."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import wordllama
    from wordllama import WordLlama

    # wordllama calls logging.basicConfig(level=INFO) on import,
    # which would reconfigure the application's logging: undo it
    root.handlers[:] = handlers
    root.setLevel(level)

    model = WordLlama.load(
        cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=256, trunc_dim=None if dim == 256 else dim,
    )
    if model.tokenizer.get_vocab_size() > model.embedding.shape[0]:
        raise RuntimeError("wordllama's tokenizer has ids past its embedding table")
    return model


_WORD_CACHE = 50_000  # words whose token ids are kept (a few MB)
_WORDS_ALONE = 3  # up to this many unknown words are tokenized one by one (~5 µs each; a text ~20)


def make_embedder(settings: Settings) -> Embedder:
    """The embedder the configuration asks for."""
    if settings.embedder == "openai":
        from engram.providers.openai_compat import EmbeddingSettings, OpenAICompatEmbedder

        return OpenAICompatEmbedder(
            EmbeddingSettings(
                base_url=settings.embedding_base_url,
                model=settings.embedding_model,
                api_key=settings.embedding_api_key,
                timeout=settings.embedding_timeout,
            )
        )
    if settings.embedder == "use":
        from engram.providers.use import USEEmbedder

        return USEEmbedder(fast_queries=settings.fast_queries)
    return WordLlamaEmbedder(settings.embedding_dim)
