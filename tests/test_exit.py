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
    """The threads of numpy's BLAS (another one a test loaded later is none of engram's);
    numpy loaded first, or there is no BLAS to count and every comparison holds."""
    import numpy  # noqa: F401
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
    assert before, "numpy's BLAS is found"
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


def test_an_open_memory_holds_blas_to_one_thread_and_its_close_gives_the_setting_back(tmp_path):
    """While a Memory is open its products run on one BLAS thread (engram.blas: a pool handed
    back and forth between calls spun on the other core); searching while the embedder works
    behind keeps it there, and closing restores what the host had."""
    from threadpoolctl import threadpool_limits

    from engram import Memory

    with threadpool_limits(limits=2, user_api="blas"):  # the host's own setting
        before = blas_threads()
        with Memory(tmp_path / "m.db", embedder="use") as m:
            def search() -> None:
                for n in range(15):
                    m.search(f"where did I travel in year {n}?", user_id="ana")

            searching = threading.Thread(target=search)
            searching.start()
            for n in range(30):
                m.add(f"I travelled to place number {n} in {2000 + n}.", user_id="ana")
                assert all(t == 1 for t in blas_threads())
            searching.join()
            m.flush()
            assert all(t == 1 for t in blas_threads())
        assert blas_threads() == before == [2] * len(before)
        m.close()  # a second close gives nothing back twice
        assert blas_threads() == before


def test_a_memory_told_to_leave_blas_alone_does(tmp_path):
    from threadpoolctl import threadpool_limits

    from engram import Memory

    with threadpool_limits(limits=2, user_api="blas"):
        with Memory(tmp_path / "m.db", embedder="wordllama", blas_one_thread=False) as m:
            m.add("I travelled to Lisbon.", user_id="ana")
            assert blas_threads() == [2] * len(blas_threads())
            with Memory(tmp_path / "other.db", embedder="wordllama") as other:  # one that holds
                assert all(t == 1 for t in blas_threads())
                other.add("I travelled to Porto.", user_id="ana")
            assert blas_threads() == [2] * len(blas_threads())


def test_the_hold_takes_effect_whichever_thread_set_blas_before(tmp_path):
    """threadpoolctl lets one thread at a time set OpenBLAS's threads (the last one that did,
    while it lives): a thread of the host's that set them, or a worker that multiplied first,
    must not leave a Memory's hold without effect, nor keep the host's setting from coming back."""
    from threadpoolctl import ThreadpoolController

    from engram import Memory
    from engram.blas import one_thread

    ready, done = threading.Event(), threading.Event()

    def host_thread() -> None:  # sets the host's threads, multiplies, then lives on
        ThreadpoolController().limit(limits=2, user_api="blas")
        with one_thread():
            pass
        ready.set()
        done.wait(30)

    alive = threading.Thread(target=host_thread)
    alive.start()
    try:
        ready.wait(30)
        assert blas_threads() == [2] * len(blas_threads())
        with Memory(tmp_path / "m.db", embedder="wordllama"):
            assert all(t == 1 for t in blas_threads())
        assert blas_threads() == [2] * len(blas_threads())
    finally:
        done.set()
        alive.join()
