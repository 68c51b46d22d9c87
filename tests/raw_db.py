"""Looking inside a database file the way an auditor would (tests' helper)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def fts_terms(db_path: Path) -> set[str]:
    """Every term in the full-text index (a temp fts5vocab table; the file is not changed)."""
    db = sqlite3.connect(db_path)
    try:
        db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, memories_fts, row)")
        return {r[0] for r in db.execute("SELECT term FROM temp.vocab")}
    finally:
        db.close()
