"""mem0 shapes for code migrating from mem0: engram's own types stay as they are.

    from engram.compat.mem0 import to_mem0
    to_mem0(memory.search("where do I live?", user_id="alice"))
    # {"results": [{"id": …, "memory": "User lives in Lisbon.", "score": 0.91, "metadata": {…}, …}]}

`config_from_mem0` maps mem0's nested ``Memory.from_config`` dict onto engram settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engram.errors import InvalidInput
from engram.models import MemoryItem, SearchResult

__all__ = ["config_from_mem0", "to_mem0"]


def to_mem0(results: Iterable[SearchResult | MemoryItem]) -> dict[str, list[dict[str, Any]]]:
    """`search` results or `get_all` items as mem0 returns them: ``{"results": [...]}``."""
    return {"results": [r.to_mem0() for r in results]}


# mem0 names that carry over; everything else in its config has no engram counterpart
_LLM_KEYS = {"model": "llm_model", "api_key": "llm_api_key", "openai_base_url": "llm_base_url",
             "base_url": "llm_base_url", "ollama_base_url": "llm_base_url", "temperature": "llm_temperature",
             "max_tokens": "llm_max_tokens"}
_EMBEDDER_KEYS = {"model": "embedding_model", "api_key": "embedding_api_key",
                  "openai_base_url": "embedding_base_url", "base_url": "embedding_base_url",
                  "ollama_base_url": "embedding_base_url", "embedding_dims": "embedding_dim"}
_SECTIONS = {"llm", "embedder", "vector_store", "graph_store", "reranker", "history_db_path", "version"}
_OPENAI_COMPATIBLE = {"openai", "ollama", "lmstudio", "azure_openai", "together", "deepseek", "vllm"}
_STORES = {"sqlite", "chroma", "faiss", "qdrant", "pgvector"}  # local ones keep `path`; engram is SQLite


def config_from_mem0(config: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """engram setting overrides from mem0's ``{"llm": {...}, "embedder": {...}, "vector_store": {...}}``.

    Only names engram has (`known`) are set; a section engram cannot honour (an unknown vector
    store with no local path) is an `InvalidInput` naming it, never silently ignored."""
    if not isinstance(config, Mapping):
        raise InvalidInput(f"a mem0 config is a dict, not {type(config).__name__}")
    names = set(known)
    out: dict[str, Any] = {}
    for section, mapping in (("llm", _LLM_KEYS), ("embedder", _EMBEDDER_KEYS)):
        block = config.get(section) or {}
        for key, value in dict(block.get("config") or {}).items():
            target = mapping.get(key)
            if target in names and value is not None:
                out[target] = value
    store = config.get("vector_store") or {}
    provider = store.get("provider")
    path = dict(store.get("config") or {}).get("path") or dict(store.get("config") or {}).get("db_path")
    if provider is not None and provider not in _STORES:
        raise InvalidInput(f"vector_store provider {provider!r}: engram keeps vectors in its SQLite file; "
                           "use a local provider or none")
    if path:
        out["path"] = path
    if "history_db_path" in config and "path" not in out:
        out["path"] = config["history_db_path"]
    embedder = config.get("embedder") or {}
    if embedder.get("provider") in _OPENAI_COMPATIBLE and "embedder" in names:
        out["embedder"] = "openai"  # engram's client for any OpenAI-compatible endpoint
    for key, value in config.items():  # flat engram settings are welcome too
        if key in names and key not in out and key not in _SECTIONS:
            out[key] = value
    return out
