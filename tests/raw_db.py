"""Looking inside a database file the way an auditor would (tests' helper)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def index_terms(db_path: Path) -> set[str]:
    """Every lexical token the database holds for search (the memories' `tokens`)."""
    db = sqlite3.connect(db_path)
    try:
        return {t for (tokens,) in db.execute("SELECT tokens FROM memories") for t in tokens.split()}
    finally:
        db.close()
