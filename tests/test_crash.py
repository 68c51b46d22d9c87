"""kill -9 in the middle of writes (issue 13, suites): every acknowledged write is there after
each kill, the file passes integrity_check, and the next process writes on."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kill_while_writing(db_path: Path, kills: int, acks_before_kill: int = 5) -> tuple[int, int]:
    """Start a writer, kill -9 it after a few acknowledged writes, `kills` times.
    Returns (acknowledged writes, writes lost)."""
    acked: set[str] = set()
    prelude = f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'tests')!r}]\n"
    code = prelude + f"from child_workers import write_forever; write_forever({str(db_path)!r})"
    for n in range(kills):
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert child.stdout is not None
        seen = 0
        deadline = time.monotonic() + 60
        for line in child.stdout:
            if line.startswith("ACK "):
                acked.add(line.split()[1])
                seen += 1
            if seen >= acks_before_kill + n % 3 or time.monotonic() > deadline:
                break
        os.kill(child.pid, signal.SIGKILL)
        for line in child.stdout:  # what it acknowledged before the signal landed
            if line.startswith("ACK "):
                acked.add(line.split()[1])
        child.wait()
    db = sqlite3.connect(db_path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {r[0] for r in db.execute("SELECT id FROM memories")}
    finally:
        db.close()
    return len(acked), len(acked - stored)


def test_acknowledged_writes_survive_kill_9(db_path: Path, embedder) -> None:
    from engram import Memory

    Memory(db_path, embedder=embedder).close()
    acked, lost = kill_while_writing(db_path, kills=4)
    assert acked >= 20 and lost == 0
    with Memory(db_path, embedder=embedder) as memory:  # and it works on
        memory.add("After the crashes.", user_id="u9", infer=False)
        assert memory.get_all(user_id="u9")
