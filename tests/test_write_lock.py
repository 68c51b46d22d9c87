"""Writers queue for the file without stopping readers (issue 13, item 4): while a thread of this
process waits for another process's write to end, this process's searches still complete."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

from engram import Memory
from child_workers import hold_the_write_lock


def another_process_holds_the_write_lock(db_path: Path):
    """(the other process, its `release` event) once it holds the write transaction."""
    context = multiprocessing.get_context("spawn")
    held, release = context.Event(), context.Event()
    other = context.Process(target=hold_the_write_lock, args=(str(db_path), held, release))
    other.start()
    assert held.wait(60)
    return other, release


def waiting_for_the_file_lock(lock_path: Path) -> bool:
    """A process is queued for the writers' lock file (a blocked request in /proc/locks)."""
    inode = f":{os.stat(lock_path).st_ino} "
    with open("/proc/locks") as locks:
        return any("->" in line and inode in line for line in locks)


def test_a_search_completes_while_a_writer_of_its_process_waits_for_another_process(
    db_path: Path, embedder
) -> None:
    with Memory(db_path, embedder=embedder) as memory:
        memory.add("I play the cello every Sunday.", user_id="alice", infer=False)
        memory.behind.flush()
        other, release = another_process_holds_the_write_lock(db_path)
        try:
            writer = threading.Thread(
                target=memory.add, args=("I keep bees on the roof.",), kwargs={"user_id": "bob", "infer": False}
            )
            writer.start()
            deadline = time.monotonic() + 60
            while not waiting_for_the_file_lock(Path(str(db_path) + "-lock")):
                assert time.monotonic() < deadline, "the add never queued for the other process's write"
                time.sleep(0.01)
            found: list[str] = []
            search = threading.Thread(
                target=lambda: found.extend(h.memory.content for h in memory.search("cello", user_id="alice"))
            )
            search.start()
            search.join(30)  # the other process holds the file until we release it: no timing involved
            assert not search.is_alive(), "the search waited for another process's write"
            assert found == ["I play the cello every Sunday."]
            assert writer.is_alive()  # still queued: the search did not slip past a released lock
        finally:
            release.set()
            other.join(60)
        writer.join(60)
        assert [m.content for m in memory.get_all(user_id="bob")] == ["I keep bees on the roof."]

