"""A user's `ScopeIndex` as one byte string, so a cold user's first search reads one row.

Why: loading a user's index from the memories table reads every row of the user (a
vector blob and the FTS5 tokens each, scattered over the file) and posts every token
in Python: 20-50 ms per 1,000 memories, most of a cold search. A pack is the same
index laid out flat (numpy arrays, postings as CSR, strings joined), written once
after a full load and read back in about a millisecond; its postings are turned
into Python objects only for the terms a query uses.

Layout: 4-byte little-endian header length, a JSON header (name -> kind, dtype,
shape, offset, length), then the raw parts. Nothing here knows the store.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

FORMAT = 1  # bump when the layout changes: an older pack is then ignored and rewritten

Part = np.ndarray | str | list | dict | int | float | None


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
