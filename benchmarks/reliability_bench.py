"""The long versions of the reliability suites (issue 13); the test suite runs short ones.

    python benchmarks/reliability_bench.py [--kills 80] [--race-rounds 10]
    python benchmarks/fuzz_api.py --calls 3000        # the API fuzz

Prints kills survived and acknowledged writes lost, and same-user race rounds that left
exactly one current value (threads and processes)."""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout, not an installed engram

from child_workers import say_city  # noqa: E402
from test_crash import kill_while_writing  # noqa: E402
from test_races import CITIES, assert_one_current, threads_say_cities  # noqa: E402

from engram import Memory  # noqa: E402


def race_round(folder: Path, n: int, processes: bool) -> bool:
    path = folder / f"race{n}{'p' if processes else 't'}.db"
    Memory(path).close()
    if processes:
        context = multiprocessing.get_context("spawn")
        start = context.Barrier(4)
        workers = [context.Process(target=say_city, args=(str(path), "u", c, start)) for c in CITIES[:4]]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        count = 4
    else:
        with Memory(path) as memory:
            threads_say_cities(memory, "u", CITIES)
        count = len(CITIES)
    with Memory(path) as memory:
        try:
            assert_one_current(memory, "u", count)
        except AssertionError:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=80)
    parser.add_argument("--race-rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "crash.db"
        Memory(path).close()
        acked, lost = kill_while_writing(path, args.kills)
        print(f"kill -9: {args.kills} kills survived, {acked} acknowledged writes, {lost} lost, integrity_check ok")
        for processes in (False, True):
            good = sum(race_round(Path(folder), n, processes) for n in range(args.race_rounds))
            kind = "4 processes" if processes else f"{len(CITIES)} threads"
            print(f"same-user race ({kind}): {good}/{args.race_rounds} rounds left exactly one current value")


if __name__ == "__main__":
    main()
