"""numpy arrays ↔ pgvector's binary `vector` format, registered on each connection (no
pgvector Python package needed): 2-byte dimension, 2 unused bytes, big-endian float32s."""

from __future__ import annotations

import struct

import numpy as np
from psycopg import Connection
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

_HEADER = struct.Struct(">HH")


def register_vectors(conn: Connection) -> None:
    """Dump numpy arrays as `vector`, load `vector` as float32 arrays (text and binary)."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:  # the extension is not installed (yet): migrations create it
        return

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: np.ndarray) -> bytes:
            vector = np.asarray(obj, dtype=">f4").ravel()
            return _HEADER.pack(len(vector), 0) + vector.tobytes()

    class VectorBinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data: bytes) -> np.ndarray:
            dim = _HEADER.unpack_from(data)[0]
            return np.frombuffer(data, dtype=">f4", count=dim, offset=4).astype(np.float32)

    class VectorTextLoader(Loader):
        def load(self, data: bytes) -> np.ndarray:
            return np.array(bytes(data)[1:-1].split(b","), dtype=np.float32)

    conn.adapters.register_dumper(np.ndarray, VectorDumper)
    conn.adapters.register_loader(info.oid, VectorBinaryLoader)
    conn.adapters.register_loader(info.oid, VectorTextLoader)
