"""Start-up time of whole processes (issue #14 goals): median of repeated runs.

    python benchmarks/startup.py [--runs 7]

Measures `python -c "import engram"`, `engram --help` and `engram search` on an existing store
(made once in a temporary folder), each as a fresh process from this checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "engram"]


def median_seconds(command: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ENGRAM_PATH": str(Path(tmp) / "e.db"), "PYTHONPATH": str(Path.cwd())}
        subprocess.run([*CLI, "add", "I live in Lisbon and I prefer dark mode.", "-u", "alice"], check=True,
                       stdout=subprocess.DEVNULL, env=env)
        for label, command in (
            ('python -c "pass" (the interpreter alone)', [sys.executable, "-c", "pass"]),
            ('python -c "import engram"', [sys.executable, "-c", "import engram"]),
            ("engram --help", [*CLI, "--help"]),
            ('engram search "where do I live" -u alice', [*CLI, "search", "where do I live", "-u", "alice"]),
        ):
            print(f"{median_seconds(command, args.runs, env):6.2f} s  {label}")


if __name__ == "__main__":
    main()
