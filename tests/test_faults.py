"""Faults (issue 13, items 10-11): a read-only store still reads; a full disk loses no
acknowledged write and says so; a file that is not an engram database is named as such;
the CLI prints one line, never a traceback; deleted text leaves the WAL once no reader needs it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram import Memory
from engram.cli import app
from engram.store.base import NotADatabase, StoreReadOnly

ROOT = Path(__file__).resolve().parent.parent


def child(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Python `code` in a fresh process, with this checkout and tests/ first on its path."""
    prelude = f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'tests')!r}]\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def cli(db: Path, *args: str):
    return CliRunner().invoke(app, ["--db", str(db), *args])


def test_a_read_only_store_serves_reads_and_refuses_writes_clearly(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder) as memory:
        kept = memory.add("I love green tea.", user_id="u1")[0].memory
    with Memory(db_path, embedder=embedder, read_only=True) as memory:
        assert kept.id in [r.memory.id for r in memory.search("tea", user_id="u1")]
        assert memory.get(kept.id).content == kept.content
        assert memory.get_all(user_id="u1") and memory.export(user_id="u1", history=True)["memories"]
        memory.capsule("u1")
        memory.context("what do I drink?", user_id="u1")
        for _ in range(300):  # many uses: counted in memory, never written
            memory.search("tea", user_id="u1")
        with pytest.raises(StoreReadOnly, match="read-only"):
            memory.add("I love coffee.", user_id="u1")
        with pytest.raises(StoreReadOnly):
            memory.delete(kept.id)
    result = subprocess.run(
        [sys.executable, "-c", "from engram.cli import app; app()", "--db", str(db_path), "add", "I love rain.",
         "--user", "u1"], capture_output=True, text=True, cwd=ROOT, env={"ENGRAM_READ_ONLY": "1", "ENGRAM_EMBEDDER": "wordllama", "PATH": "/usr/bin"},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr + result.stdout
    assert "read-only" in result.stdout + result.stderr


@pytest.mark.parametrize("damage", ["garbage", "truncated", "someone_else"])
def test_a_file_that_is_not_an_engram_database_is_named_so(db_path, embedder, damage) -> None:
    if damage == "garbage":
        db_path.write_bytes(b"this is a text file, not a database\n" * 200)
    elif damage == "truncated":
        with Memory(db_path, embedder=embedder) as memory:
            for n in range(60):
                memory.add(f"Note {n}: " + "words to fill pages " * 30, user_id="u1", infer=False)
        data = db_path.read_bytes()
        db_path.write_bytes(data[: len(data) // 3])
    else:
        other = sqlite3.connect(db_path)
        other.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        other.commit()
        other.close()
    before = db_path.read_bytes()
    with pytest.raises(NotADatabase, match="not an engram database"):
        with Memory(db_path, embedder=embedder) as memory:
            memory.get_all(user_id="u1", limit=None)
            memory.search("words", user_id="u1")
            memory.add("I love tea.", user_id="u1")
    result = cli(db_path, "list", "--user", "u1")
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    assert "not an engram database" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    if damage != "truncated":
        assert db_path.read_bytes() == before  # nothing was written into someone else's file


def test_a_full_disk_loses_no_acknowledged_write_and_says_nothing_was_written(db_path, embedder) -> None:
    Memory(db_path, embedder=embedder).close()
    done = child(f"from child_workers import write_until_the_disk_is_full\n"
                 f"write_until_the_disk_is_full({str(db_path)!r}, 300_000)")
    lines = done.stdout.splitlines()
    acked = [line.split()[1] for line in lines if line.startswith("ACK ")]
    assert acked and lines[-1].startswith("STOPPED engram.store.base.StoreFull: no space left"), done.stdout[-500:] + done.stderr[-2000:]
    assert "nothing was written" in lines[-1]
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    with Memory(db_path, embedder=embedder) as memory:
        stored = {m.id for m in memory.get_all(user_id="u1", limit=None)}
        assert set(acked) <= stored and len(stored) == len(acked)
        memory.add("After the disk was freed.", user_id="u1", infer=False)  # it works on


def test_deleted_text_leaves_the_wal_once_the_reader_that_needed_it_ends(db_path, embedder) -> None:
    secret = "Zanzibarquokka"
    with Memory(db_path, embedder=embedder) as memory:
        doomed = memory.add(f"My childhood pet was called {secret}.", user_id="u1", infer=False)[0].memory
        memory.add("Unrelated note about the weather.", user_id="u1", infer=False)
        reader = sqlite3.connect(db_path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()  # holds a snapshot with the text
        memory.delete(doomed.id)
        reader.execute("COMMIT")
        reader.close()
        memory.add("The next write after the reader ended.", user_id="u1", infer=False)
        on_disk = db_path.read_bytes() + (Path(str(db_path) + "-wal").read_bytes()
                                          if Path(str(db_path) + "-wal").exists() else b"")
        assert secret.encode() not in on_disk


def test_a_closed_store_raises_an_engram_error(db_path, embedder) -> None:
    from engram.store.base import StoreError

    memory = Memory(db_path, embedder=embedder)
    memory.close()
    with pytest.raises(StoreError):
        memory.get_all(user_id="u1")
