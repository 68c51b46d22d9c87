"""A process that uses engram ends cleanly: its workers stop before the interpreter does, and
engram leaves the host's BLAS thread setting as it found it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def blas_threads() -> list[int]:
    """The threads of numpy's BLAS (another one a test loaded later is none of engram's)."""
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas" and "numpy" in lib["filepath"]]


def test_a_script_that_never_closes_its_memory_exits_with_every_vector_made(tmp_path):
    db = tmp_path / "m.db"
    code = (
        "from engram import Memory\n"
        f"m = Memory({str(db)!r}, embedder='wordllama')\n"
        "for n in range(20):\n"
        "    m.add(f'I visited city number {n} last summer.', user_id='ana')\n"
    )  # no close, no flush: the embed-behind worker still owes these vectors at exit
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as raw:
        (vectorless,) = raw.execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone()
        (rows,) = raw.execute("SELECT count(*) FROM memories").fetchone()
    assert rows >= 20 and vectorless == 0


def test_one_blas_thread_while_held_and_the_setting_restored_after_every_holder():
    from engram.blas import one_thread

    before = blas_threads()
    with one_thread(), one_thread():  # re-entrant
        assert all(n == 1 for n in blas_threads())
    assert blas_threads() == before
    seen: list[list[int]] = []
    start = threading.Barrier(4)

    def hold() -> None:
        start.wait()
        for _ in range(50):  # enter and leave, interleaved with the other threads
            with one_thread():
                seen.append(blas_threads())

    workers = [threading.Thread(target=hold) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(seen) == 200
    assert blas_threads() == before


def test_searching_while_the_embedder_works_behind_leaves_the_blas_setting_alone(tmp_path):
    from engram import Memory

    before = blas_threads()
    with Memory(tmp_path / "m.db", embedder="use") as m:
        def search() -> None:
            for n in range(15):
                m.search(f"where did I travel in year {n}?", user_id="ana")

        searching = threading.Thread(target=search)
        searching.start()
        for n in range(30):
            m.add(f"I travelled to place number {n} in {2000 + n}.", user_id="ana")
        searching.join()
        m.flush()
        assert blas_threads() == before
