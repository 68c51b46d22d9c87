"""The global ``--db`` option and the `Memory` every command opens with it (shared by the
commands in engram.cli.app and the terminal chat in engram.cli.chat)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInput

if TYPE_CHECKING:  # pragma: no cover
    from engram.config import Settings  # pydantic-settings: loaded when a command runs, not for --help
    from engram.memory import Memory

state: dict[str, Any] = {"db": None, "quiet": False}
STDIO = "-"  # for a file argument: stdin (add, import) or stdout (export)


def read_text(value: str) -> str:
    """`-` reads the whole of stdin; anything else is the text itself."""
    return sys.stdin.read() if value == STDIO else value


def check_db() -> None:
    """An explicit --db in a folder that does not exist is a mistake, not a new empty store."""
    db = state["db"]
    if db is not None and not Path(db).expanduser().parent.is_dir():
        raise InvalidInput(f"--db {db}: folder {Path(db).expanduser().parent} does not exist")


def settings() -> Settings:
    from engram.config import Settings

    db = state["db"]
    return Settings(path=db) if db is not None else Settings()


def open_memory() -> Memory:
    from engram.memory import Memory

    return Memory(settings=settings())
