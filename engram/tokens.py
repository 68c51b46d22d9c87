"""Exact token counting for budgets, offline.

The capsule and the context promise a token budget, so they are counted with
the tokenizer of the model that will read them. `bpe-openai` bundles OpenAI's
``cl100k_base`` and ``o200k_base`` (byte-identical to tiktoken's files), so
counting needs no network.

The `encoding` setting accepts an encoding name (``cl100k_base``,
``o200k_base``) or an OpenAI model name (``gpt-4o`` → ``o200k_base``).

Fallback, documented: any other name (another vendor's tokenizer, a legacy
encoding that needs ``tiktoken_ext``) is counted with ``cl100k_base`` and
multiplied by `FALLBACK_MARGIN`, rounded up; `TokenCounter.exact` is then
False and a warning is logged once. cl100k_base over-counts Chinese for
Qwen/DeepSeek-style tokenizers and the margin covers moderate under-counts
elsewhere, so a budget counted this way errs on the short side.

Text is counted as plain text: special-token strings such as
``<|endoftext|>`` inside user content are ordinary characters here.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

# `import bpe_openai` parses every bundled table in Python just to list special tokens
# (~0.8 s). Its Rust tokenizer (`_bindings`, ~20 ms) is what counting needs: it is loaded on
# its own (`_rust`), and the package itself only for what only it knows (model names,
# encodings the Rust side lacks).

log = logging.getLogger("engram.tokens")

__all__ = ["FALLBACK_MARGIN", "TokenCounter", "count_tokens", "get_counter", "truncate_tokens"]

FALLBACK_MARGIN = 1.15
_FALLBACK_ENCODING = "cl100k_base"
_CHUNK_CHARS = 100_000  # bpe-openai refuses inputs over 200k tokens; count long texts in pieces
_ELLIPSIS = "…"


@lru_cache(maxsize=1)
def _rust() -> Any | None:
    """bpe-openai's compiled tokenizer module, loaded without running the package's
    ``__init__``; None if this build lays it out differently (then the package is used)."""
    try:
        spec = importlib.util.find_spec("bpe_openai")
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(next(iter(spec.submodule_search_locations)))
        path = next(p for p in folder.iterdir() if p.name.startswith("_bindings.") and p.suffix in (".so", ".pyd"))
        loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(path))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
        loader.exec_module(module)
        return module
    except Exception:  # noqa: BLE001 - any surprise: the package's own (slower) path
        log.debug("bpe-openai's Rust tokenizer not loadable on its own; importing the package")
        return None


def _resolve(name: str) -> tuple[str, bool]:
    """(encoding name to load, exact?) for an encoding or model name."""
    rust = _rust()
    if rust is not None and name in rust.supported_encodings():
        return name, True
    import bpe_openai

    known = set(bpe_openai.list_encoding_names())
    if name in known:
        return name, True
    try:
        return bpe_openai.encoding_name_for_model(name), True
    except Exception:  # noqa: BLE001 - any failure means "not an OpenAI model name"
        return _FALLBACK_ENCODING, False


class TokenCounter:
    """Counts and truncates text in one encoding; thread-safe to share."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.requested = encoding
        name, exact = _resolve(encoding)
        rust = _rust()
        self._rust = rust.tokenizer_for_encoding(name) if rust is not None and name in rust.supported_encodings() \
            else None
        self._package: Any = None  # bpe_openai's Encoding, loaded only when the Rust one is missing
        if self._rust is None:
            import bpe_openai

            try:
                self._package = bpe_openai.get_encoding(name)
            except Exception as exc:  # noqa: BLE001 - legacy encodings need tiktoken_ext
                log.warning("token encoding %r cannot be loaded offline (%s); using the fallback", name, exc)
                name, exact = _FALLBACK_ENCODING, False
                self._package = bpe_openai.get_encoding(name)
        if not exact:
            log.warning(
                "unknown token encoding %r: counting with %s x %.2f (approximate)",
                encoding, name, FALLBACK_MARGIN,
            )
        self.name = name
        self.exact = exact

    def __repr__(self) -> str:
        return f"TokenCounter({self.requested!r} -> {self.name}, exact={self.exact})"

    def _encode_chunk(self, text: str) -> list[int]:
        """Plain-text token ids (special-token strings are ordinary characters either way)."""
        return self._rust.encode(text) if self._rust is not None else self._package.encode_ordinary(text)

    def _decode(self, ids: list[int]) -> str:
        """Text of `ids`, a trailing partial character dropped."""
        if self._package is None:
            import bpe_openai  # truncation only: rare, and exact bytes matter here

            self._package = bpe_openai.get_encoding(self.name)
        return self._package.decode_bytes(ids).decode("utf-8", errors="ignore")

    def _encode(self, text: str) -> list[int]:
        if len(text) <= _CHUNK_CHARS:
            return self._encode_chunk(text)
        # cut at whitespace near the chunk size so few tokens straddle a cut
        ids: list[int] = []
        start = 0
        while start < len(text):
            end = min(len(text), start + _CHUNK_CHARS)
            if end < len(text):
                space = text.rfind(" ", start + _CHUNK_CHARS // 2, end)
                end = space if space > start else end
            ids += self._encode_chunk(text[start:end])
            start = end
        return ids

    def count(self, text: str) -> int:
        """Tokens of `text` (0 for empty)."""
        if not text:
            return 0
        n = len(self._encode(text))
        return n if self.exact else math.ceil(n * FALLBACK_MARGIN)

    def truncate(self, text: str, max_tokens: int, *, ellipsis: str = _ELLIPSIS) -> str:
        """`text` cut to at most `max_tokens` tokens (with `ellipsis` when cut).

        Cuts on a token boundary and drops a trailing partial character, so the
        result re-counts within the limit.
        """
        if max_tokens <= 0 or not text:
            return ""
        if self.count(text) <= max_tokens:
            return text
        room = max_tokens - self.count(ellipsis)
        if room <= 0:
            return ""
        if not self.exact:
            room = int(room / FALLBACK_MARGIN)
        ids = self._encode(text)[:room]
        while ids:
            cut = self._decode(ids).rstrip()
            candidate = cut + ellipsis
            if self.count(candidate) <= max_tokens:
                return candidate
            ids = ids[:-1]
        return ""


@lru_cache(maxsize=8)
def get_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """One shared counter per encoding name (loading an encoding takes a moment)."""
    return TokenCounter(encoding)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    return get_counter(encoding).count(text)


def truncate_tokens(text: str, max_tokens: int, encoding: str = "cl100k_base") -> str:
    return get_counter(encoding).truncate(text, max_tokens)
