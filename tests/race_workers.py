"""Code run in child processes by the reliability tests (spawned: importable by name)."""

from __future__ import annotations

from pathlib import Path


def say_city(path: str, user_id: str, city: str, start: object) -> None:
    """One process saying where the user lives, released together with the others."""
    from engram import Memory

    with Memory(Path(path)) as memory:
        start.wait()  # type: ignore[attr-defined]
        memory.add(f"I live in {city}", user_id=user_id)
