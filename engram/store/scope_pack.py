"""A user's `ScopeIndex` as one byte string, so a cold user's first search reads one row.

Why: loading a user's index from the memories table reads every row of the user (a
vector blob and the FTS5 tokens each, scattered over the file) and posts every token
in Python: 20-50 ms per 1,000 memories, most of a cold search. A pack is the same
index laid out flat (numpy arrays, postings as CSR, strings joined), written once
after a full load and read back in about a millisecond; its postings are turned
into Python objects only for the terms a query uses.

Layout: 4-byte little-endian header length, a JSON header (name -> kind, dtype,
shape, offset, length), then the raw parts. Nothing here knows the store: each backend
keeps its packs in a table of its own and catches a pack up with what its database
says changed since (`restore`, `last_rowid`, `apply_statuses` are the shared steps).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from typing import Any

import numpy as np

from engram.store.scope_index import ScopeIndex

FORMAT = 4  # bump when the layout or what it holds changes: an older pack is then ignored and rewritten
# (2: turns without a session are placed in a conversation inferred from their times; 3: the
# vectors as 16-bit steps and a scale per row, `engram.store.fixed_point`; 4: each row's language)

Part = np.ndarray | str | list | dict | int | float | None

# a user with fewer memories loads from the table about as fast as from a pack (~2 ms per 100)
PACK_FROM_ROWS = 200
# a stale pack is written again once this many rows (or an eighth of the scope) were added since:
# fewer are cheaper to append on each cold load than a rewrite of the whole pack
REPACK_ROWS = 256


def encode(parts: dict[str, Part]) -> bytes:
    """Arrays and strings as raw bytes, anything else inside the JSON header."""
    header: dict[str, Any] = {"format": FORMAT}
    chunks: list[bytes] = []
    offset = 0
    for name, value in parts.items():
        if isinstance(value, np.ndarray):
            data = np.ascontiguousarray(value).tobytes()
            header[name] = ["array", value.dtype.str, list(value.shape), offset, len(data)]
        elif isinstance(value, str):
            data = value.encode("utf-8")
            header[name] = ["text", offset, len(data)]
        else:
            header[name] = ["json", value]
            continue
        chunks.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return struct.pack("<I", len(head)) + head + b"".join(chunks)


def decode(blob: bytes) -> dict[str, Part] | None:
    """The parts of a pack (arrays are writable copies); None for another format or a damaged blob."""
    try:
        (length,) = struct.unpack_from("<I", blob, 0)
        header = json.loads(bytes(blob[4 : 4 + length]))
        if header.pop("format", None) != FORMAT:
            return None
        body = memoryview(blob)[4 + length :]
        parts: dict[str, Part] = {}
        for name, spec in header.items():
            if spec[0] == "array":
                _, dtype, shape, offset, size = spec
                parts[name] = np.frombuffer(body[offset : offset + size], dtype=np.dtype(dtype)).reshape(shape).copy()
            elif spec[0] == "text":
                _, offset, size = spec
                parts[name] = bytes(body[offset : offset + size]).decode("utf-8")
            else:
                parts[name] = spec[1]
        return parts
    except (struct.error, ValueError, TypeError, KeyError, IndexError):
        return None


def restore(blob: bytes | None, dim: int) -> tuple[ScopeIndex, dict[str, Part]] | None:
    """The index a pack holds, with its parts (a backend keeps extras there); None for no pack,
    another format, a damaged blob or one of another dimension."""
    parts = None if blob is None else decode(blob)
    if parts is None or parts.get("dim") != dim:
        return None
    try:
        return ScopeIndex.from_parts(parts), parts
    except (KeyError, ValueError, TypeError, IndexError):  # a part missing or of the wrong shape: rebuilt from rows
        return None


def last_rowid(index: ScopeIndex) -> int:
    """The newest row the index holds: rows past it were added since."""
    return int(index.rowids[: index.size].max()) if index.size else 0


def apply_statuses(index: ScopeIndex, rows: Iterable[tuple[int, str]], upto: int) -> list[int]:
    """Bring the index's rows up to `upto` to the statuses the database has now (`rows`: rowid,
    status of each of the user's rows up to `upto`). A row the index holds that is not there
    any more is marked deleted (a pack is dropped when a row is deleted, but a reader never
    trusts that alone); returns the rows there that the index lacks (committed after a later
    row), to be read like new ones."""
    seen: set[int] = set()
    late: list[int] = []
    for rowid, status in rows:
        seen.add(rowid)
        if rowid not in index.position:
            late.append(rowid)
        elif index.status_of(rowid) != status:
            index.set_status(rowid, status)
    for rowid in [r for r in index.position if r <= upto and r not in seen and index.status_of(r) is not None]:
        index.set_status(rowid, None)
    return late
