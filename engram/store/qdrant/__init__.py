"""Qdrant as engram's search layer (the ``qdrant`` extra): ``qdrant://host:6333`` for a server or
cluster, ``qdrant:///absolute/folder`` for qdrant-client's local mode (see `store`)."""

from engram.store.qdrant.store import QdrantStore, open_qdrant

__all__ = ["QdrantStore", "open_qdrant"]
