"""Longer fuzz of the public API than the test suite's (issue 13, item 9).

    python benchmarks/fuzz_api.py [--calls 3000] [--seed 1]

Prints how many calls were made, how many raised something other than an EngramError (by
class and place), and whether every reading call still works afterwards."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout, not an installed engram

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from engram import Memory  # noqa: E402
from fuzz_calls import OUTCOMES, attempt, calls, still_works  # noqa: E402

CALLS = calls()  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    failures: Counter[str] = Counter()
    examples: dict[str, str] = {}
    made = 0
    with tempfile.TemporaryDirectory() as folder, Memory(Path(folder) / "fuzz.db") as memory:
        memory.add("I love coffee.", user_id="u1")

        @settings(max_examples=args.calls, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None, phases=["generate"])
        @given(data=st.data())
        def run(data: st.DataObject) -> None:
            nonlocal made
            made += 1
            failure = attempt(memory, data.draw(CALLS))
            if failure is not None:
                lines = failure.strip().splitlines()
                where = next((x.strip() for x in reversed(lines) if x.strip().startswith("File")), "?")
                key = f"{lines[-1][:80]} @ {where[-90:]}"
                failures[key] += 1
                examples.setdefault(key, failure[:1500])

        run()
        broken = still_works(memory)
    made = sum(OUTCOMES.values())
    print(f"calls: {made}, non-engram exceptions: {sum(failures.values())} in {len(failures)} classes")
    worked = sum(v for k, v in OUTCOMES.items() if k.startswith("worked"))
    print(f"worked: {worked}, refused with an EngramError: {OUTCOMES['engram error']}")
    print("worked by method:", ", ".join(f"{k[8:]} {v}" for k, v in sorted(OUTCOMES.items()) if k.startswith("worked")))
    for key, count in failures.most_common():
        print(f"{count:5d}  {key}")
    for key in list(examples)[:40]:
        print("----", examples[key][:600])
    print(f"later calls broken: {len(broken)}")
    for b in broken[:5]:
        print(b[:1500])


if __name__ == "__main__":
    main()
