"""The `engram` command line: mirrors the library (see `engram --help`)."""

from __future__ import annotations

import sys

from engram.cli.app import app

__all__ = ["app", "hoist_db", "main"]


def hoist_db(args: list[str]) -> list[str]:
    """Move ``--db PATH`` / ``--db=PATH`` from anywhere to the front, where the group option is
    parsed, so ``engram list -u a --db x.db`` works like ``engram --db x.db list -u a``.
    Nothing after ``--`` moves."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg == "--db" and i + 1 < len(args):
            front += args[i:i + 2]
            i += 2
            continue
        if arg.startswith("--db="):
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


def main() -> None:
    """The `engram` console script."""
    app(args=hoist_db(sys.argv[1:]), prog_name="engram")
