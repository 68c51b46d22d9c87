"""What a ``qdrant://`` URL names: the Qdrant to talk to, the collection, and the side store.

- ``qdrant:///absolute/folder``: qdrant-client's local mode keeps the collection in the
  folder; the side store is ``folder/engram.db`` unless ``?side=`` says otherwise.
- ``qdrant://host:6333`` (``qdrants://`` for TLS): a Qdrant server or cluster; the side store
  must be given: ``?side=/absolute/engram.db``. ``?api_key=`` or ``ENGRAM_QDRANT_API_KEY``.
- ``?collection=name`` (default ``engram``): one collection per store.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from engram.store.base import StoreError

DEFAULT_COLLECTION = "engram"


@dataclass(frozen=True, slots=True)
class QdrantTarget:
    local_path: Path | None  # local mode's folder
    url: str | None  # a server's http(s) URL
    api_key: str | None
    collection: str
    side: Path  # the SQLite side store: history, sessions, state, jobs and the memories' rows


def parse(target: str) -> QdrantTarget:
    parts = urlsplit(target)
    if parts.scheme not in ("qdrant", "qdrants"):
        raise StoreError(f"not a Qdrant URL: {target!r}")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    collection = query.get("collection", DEFAULT_COLLECTION)
    side = query.get("side")
    if not parts.netloc:  # qdrant:///folder
        folder = Path(unquote(parts.path))
        if not folder.is_absolute():
            raise StoreError(f"Qdrant local mode needs an absolute folder: qdrant:///absolute/path, not {target!r}")
        return QdrantTarget(folder, None, None, collection, Path(side) if side else folder / "engram.db")
    if not side:
        raise StoreError(
            f"a Qdrant server needs a side store for history and sessions: {target.split('?')[0]}?side=/absolute/engram.db"
        )
    scheme = "https" if parts.scheme == "qdrants" else "http"
    host = parts.hostname or "localhost"
    url = f"{scheme}://{host}:{parts.port or 6333}"
    api_key = query.get("api_key") or os.environ.get("ENGRAM_QDRANT_API_KEY")
    return QdrantTarget(None, url, api_key, collection, Path(side))
