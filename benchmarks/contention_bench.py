"""Throughput and latency with many writers (issue 13, item 4): P processes x T threads, each
thread adding and searching for its own user (or, with --shared-user, all for one user) on one
database file, against one writer.

    python benchmarks/contention_bench.py [--seconds 10] [--code /path/to/checkout] [--held-writer]

`--code` runs another checkout's engram (e.g. main, for a before/after). Prints aggregate
ops/s and the p50 / p95 / max latency of add and search for 1x1 and PxT writers, and per add the
time spent queuing for the writers' lock file and holding it (every write of the process: adds,
vectors and graph links set behind, access counts, packs). The run starts once every process is
loaded and warm.
`--held-writer`: search latency in a process whose other thread adds while another process holds
the writers' lock 40 ms in every 50 (the coupling of issue 13 item 4, apart from CPU load)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r'''
import json, sys, threading, time
sys.path.insert(0, CODE)
from engram import Memory
waited, held, since, taken = [0.0], [0.0], [0.0], [0]
try:  # where writers wait: the time spent queuing for the writers' lock file, and holding it
    import engram.store.sqlite.store as sqlite_store
    _flock = sqlite_store.fcntl.flock

    class _Timed:
        LOCK_EX, LOCK_UN = sqlite_store.fcntl.LOCK_EX, sqlite_store.fcntl.LOCK_UN
        LOCK_NB = sqlite_store.fcntl.LOCK_NB

        @staticmethod
        def flock(fd, op):
            t0 = time.perf_counter()
            try:
                _flock(fd, op)
            finally:
                t1 = time.perf_counter()
                waited[0] += t1 - t0
            if op & _Timed.LOCK_EX:  # one holder per process at a time: one slot is enough
                since[0] = t1
                taken[0] += 1
            elif op == _Timed.LOCK_UN:
                held[0] += t0 - since[0]

    sqlite_store.fcntl = _Timed
except (ImportError, AttributeError):
    pass
memory = Memory(PATH)
memory.add("I warm up the models.", user_id="warm-" + str(PROC))  # extraction, the embedder loaded
memory.search("what warms up?", user_id="warm-" + str(PROC))  # not the first measured search
results = {"add": [], "search": []}
lock = threading.Lock()

def work(thread):
    user = "shared" if SHARED else f"p{PROC}t{thread}"
    mine = {"add": [], "search": []}
    n = 0
    while time.time() < start + SECONDS:
        n += 1
        t0 = time.perf_counter()
        memory.add(f"I like item {n} of series {thread}, it is number {n * 7} on my list.", user_id=user)
        mine["add"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        memory.search(f"which item {n} do I like?", user_id=user)
        mine["search"].append(time.perf_counter() - t0)
    with lock:
        for k in mine:
            results[k] += mine[k]

print("ready", flush=True)  # loaded and warm: the parent says when to start, once all are
start = float(sys.stdin.readline())
while time.time() < start:
    time.sleep(0.001)
waited[0] = held[0] = 0.0  # the warm-up's writes not counted
taken[0] = 0
threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
for t in threads: t.start()
for t in threads: t.join()
memory.close()
results["lock_wait_s"] = [waited[0]]
results["lock_held_s"] = [held[0]]
results["lock_taken"] = [taken[0]]
print(json.dumps(results))
'''


def run(code: Path, processes: int, threads: int, seconds: float, shared: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(code)!r});"
                        f"from engram import Memory; Memory({str(path)!r}).close()"], check=True)
        script = (WORKER.replace("CODE", repr(str(code))).replace("PATH", repr(str(path)))
                  .replace("SECONDS", str(seconds)).replace("THREADS", str(threads)).replace("SHARED", str(shared)))
        children = [
            subprocess.Popen([sys.executable, "-c", script.replace("PROC", str(p))], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
            for p in range(processes)
        ]
        for child in children:  # every process loaded and warm (a slow load must not shorten its run)
            assert child.stdout.readline().strip() == "ready"
        start = time.time() + 0.2
        for child in children:
            child.stdin.write(f"{start}\n")
            child.stdin.flush()
        merged: dict[str, list[float]] = {"add": [], "search": [], "lock_wait_s": [], "lock_held_s": [], "lock_taken": []}
        for child in children:
            out, _ = child.communicate()
            for k, v in json.loads(out.strip().splitlines()[-1]).items():
                merged[k] += v
    ops = len(merged["add"]) + len(merged["search"])
    adds = max(1, len(merged["add"]))
    row = {"writers": processes * threads, "ops_per_s": ops / seconds,
           "lock_takes_per_add": sum(merged.pop("lock_taken")) / adds,
           "lock_wait_ms_per_add": 1000 * sum(merged.pop("lock_wait_s")) / adds,
           "lock_held_ms_per_add": 1000 * sum(merged.pop("lock_held_s")) / adds}
    for k, values in merged.items():
        values.sort()
        row[f"{k}_p50_ms"] = 1000 * statistics.median(values)
        row[f"{k}_p95_ms"] = 1000 * values[int(0.95 * (len(values) - 1))]
        row[f"{k}_max_ms"] = 1000 * values[-1]
    return row


STALL = r'''
import statistics, subprocess, sys, threading, time
sys.path.insert(0, CODE)
from engram import Memory
memory = Memory(PATH)
for i in range(20):
    memory.add(f"I like item {i} on my list.", user_id="reader", infer=False)
memory.search("which item?", user_id="reader")
memory.add("I warm up.", user_id="writer", infer=False)
memory.behind.flush()
holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
holder.stdout.readline()
stop, latencies = time.time() + SECONDS, []

def add():
    n = 0
    while time.time() < stop:
        n += 1
        memory.add(f"Note {n}: buy {n} apples.", user_id="writer", infer=False)

def search():
    n = 0
    while time.time() < stop:
        n += 1
        t0 = time.perf_counter()
        memory.search(f"which item {n % 20}?", user_id="reader")
        latencies.append(time.perf_counter() - t0)

threads = [threading.Thread(target=add), threading.Thread(target=search)]
for t in threads: t.start()
for t in threads: t.join()
holder.kill()
latencies.sort()
print(f"held_writer searches={len(latencies)} search_p50_ms={1000 * statistics.median(latencies):.1f}"
      f" search_p95_ms={1000 * latencies[int(0.95 * (len(latencies) - 1))]:.1f} search_max_ms={1000 * latencies[-1]:.1f}")
'''

HOLDER = r'''
import sys, time
sys.path.insert(0, CODE)
from engram import Memory
memory = Memory(PATH)
print("ready", flush=True)
end = time.time() + 600  # never outlives a parent that died
while time.time() < end:
    with memory.services.store.atomic():  # another process's long writes: 40 ms in every 50
        time.sleep(0.04)
    time.sleep(0.01)
'''


def held_writer(code: Path, seconds: float) -> None:
    """Searches of a process whose other thread adds, while another process holds the writers'
    lock 40 ms in every 50: a search must not wait for its sibling's turn at the lock."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        holder = HOLDER.replace("CODE", repr(str(code))).replace("PATH", repr(str(path)))
        script = (STALL.replace("HOLDER", repr(holder)).replace("CODE", repr(str(code)))
                  .replace("PATH", repr(str(path))).replace("SECONDS", str(seconds)))
        subprocess.run([sys.executable, "-c", script], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--shared-user", action="store_true", help="every writer adds for one user")
    parser.add_argument("--held-writer", action="store_true",
                        help="instead: searches while a sibling thread waits for another process's writes")
    args = parser.parse_args()
    if args.held_writer:
        held_writer(args.code, args.seconds)
        return
    for processes, threads in ((1, 1), (args.processes, args.threads)):
        row = run(args.code, processes, threads, args.seconds, args.shared_user)
        print(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
