"""The global ``--db`` option and the `Memory` every command opens with it (shared by the
commands in engram.cli.app and the terminal chat in engram.cli.chat)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engram.config import Settings

if TYPE_CHECKING:  # pragma: no cover
    from engram.memory import Memory

state: dict[str, Path | None] = {"db": None}


def settings() -> Settings:
    db = state["db"]
    return Settings(path=db) if db is not None else Settings()


def open_memory() -> Memory:
    from engram.memory import Memory

    return Memory(settings=settings())
