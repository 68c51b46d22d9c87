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

import logging
import math
from functools import lru_cache

# bpe_openai is imported on first use: loading its tables costs ~1 s at start-up

log = logging.getLogger("engram.tokens")

__all__ = ["FALLBACK_MARGIN", "TokenCounter", "count_tokens", "get_counter", "truncate_tokens"]

FALLBACK_MARGIN = 1.15
_FALLBACK_ENCODING = "cl100k_base"
_CHUNK_CHARS = 100_000  # bpe-openai refuses inputs over 200k tokens; count long texts in pieces
_ELLIPSIS = "…"


def _resolve(name: str) -> tuple[str, bool]:
    """(encoding name to load, exact?) for an encoding or model name."""
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
        import bpe_openai

        self.requested = encoding
        name, exact = _resolve(encoding)
        try:
            self._enc = bpe_openai.get_encoding(name)
        except Exception as exc:  # noqa: BLE001 - legacy encodings need tiktoken_ext
            log.warning("token encoding %r cannot be loaded offline (%s); using the fallback", name, exc)
            name, exact = _FALLBACK_ENCODING, False
            self._enc = bpe_openai.get_encoding(name)
        if not exact:
            log.warning(
                "unknown token encoding %r: counting with %s x %.2f (approximate)",
                encoding, name, FALLBACK_MARGIN,
            )
        self.name = name
        self.exact = exact

    def __repr__(self) -> str:
        return f"TokenCounter({self.requested!r} -> {self.name}, exact={self.exact})"

    def _encode(self, text: str) -> list[int]:
        if len(text) <= _CHUNK_CHARS:
            return self._enc.encode_ordinary(text)
        # cut at whitespace near the chunk size so few tokens straddle a cut
        ids: list[int] = []
        start = 0
        while start < len(text):
            end = min(len(text), start + _CHUNK_CHARS)
            if end < len(text):
                space = text.rfind(" ", start + _CHUNK_CHARS // 2, end)
                end = space if space > start else end
            ids += self._enc.encode_ordinary(text[start:end])
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
            cut = self._enc.decode_bytes(ids).decode("utf-8", errors="ignore").rstrip()
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
