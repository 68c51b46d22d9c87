"""Code run in child processes by the reliability tests (spawned: importable by name)."""

from __future__ import annotations

import os
from pathlib import Path


def say_city(path: str, user_id: str, city: str, start: object) -> None:
    """One process saying where the user lives, released together with the others."""
    from engram import Memory

    with Memory(Path(path)) as memory:
        start.wait()  # type: ignore[attr-defined]
        memory.add(f"I live in {city}", user_id=user_id)


def write_until_the_disk_is_full(path: str, room: int) -> None:
    """Add verbatim turns with at most `room` more bytes allowed per file (RLIMIT_FSIZE), printing
    each acknowledged id, then the error that stopped it."""
    import resource
    import signal

    from engram import Memory

    with Memory(Path(path)) as memory:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), no signal
        limit = max(Path(path).stat().st_size, Path(path + "-wal").stat().st_size) + room
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        for n in range(100_000):
            try:
                event = memory.add(f"Entry {n}: " + "the quick brown fox jumps " * 40, user_id="u1", infer=False)[0]
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                print(f"STOPPED {type(exc).__module__}.{type(exc).__name__}: {exc}", flush=True)
                return
            print(f"ACK {event.memory.id}", flush=True)


def write_forever(path: str) -> None:
    """Add memories until killed, printing each acknowledged id (kill -9 tests)."""
    from engram import Memory

    memory = Memory(Path(path))
    run = os.getpid()  # each writer says new things: a restatement would acknowledge an old id again
    for n in range(1_000_000):
        text = f"I visited city number {run}-{n} on my trip." if n % 2 else f"Kill test note {run}-{n}: buy {n} apples."
        event = memory.add(text, user_id=f"u{n % 3}", infer=n % 2 == 1)
        for e in event:
            print(f"ACK {e.memory.id}", flush=True)


def add_then_crash(path: str, texts: list[str]) -> None:
    """Add `texts` while the write-behind worker cannot embed, print each acknowledged id, then
    die without closing (os._exit): their rows are committed and have no vector yet."""
    import threading

    from engram import Memory
    from engram.providers.embedders import WordLlamaEmbedder

    class StuckBehind(WordLlamaEmbedder):
        def embed(self, texts):  # the worker thread never gets its vectors made
            if threading.current_thread().name == "engram-embed-behind":
                threading.Event().wait()
            return super().embed(texts)

    memory = Memory(Path(path), embedder=StuckBehind())
    for text in texts:
        event = memory.add(text, user_id="u1", infer=False)[0]
        print(f"ACK {event.memory.id}", flush=True)
    os._exit(0)


def hold_the_write_lock(path: str, held: object, release: object) -> None:
    """Hold the store's write transaction (every other writer of the file waits) until `release`."""
    from engram import Memory

    with Memory(Path(path)) as memory, memory.services.store.atomic():
        held.set()  # type: ignore[attr-defined]
        release.wait(60)  # type: ignore[attr-defined]
