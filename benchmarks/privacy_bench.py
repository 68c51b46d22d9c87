"""Privacy detectors against the privacy corpora: recall, false positives, cost.

    python benchmarks/privacy_bench.py                  # this checkout's engram.privacy
    python benchmarks/privacy_bench.py --module OLD.py  # another version (e.g. `git show main:engram/privacy.py`)

Prints, per secret kind, how many positives are redacted (value gone from `redact`)
and how many are found with the right kind; the false positives on the negative
corpus; and the p50/p95 cost of `redact` per message (µs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "privacy"


def _load(path: str | None) -> ModuleType:
    if path is None:
        sys.path.insert(0, str(DATA.parent.parent.parent))
        import engram.privacy as module

        return module
    spec = importlib.util.spec_from_file_location("privacy_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", help="path of a privacy.py to measure instead of engram.privacy")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    privacy = _load(args.module)
    positives = [json.loads(line) for line in (DATA / "positives.jsonl").read_text("utf-8").splitlines() if line]
    negatives = [
        line for line in (DATA / "negatives.txt").read_text("utf-8").splitlines() if line and not line.startswith("#")
    ]
    redacted: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # redacted, right kind, total
    for case in positives:
        out = privacy.redact(case["text"])
        found = {(f.kind.value, case["text"][f.start : f.end]) for f in privacy.scan(case["text"])}
        for s in case["secrets"]:
            row = redacted[s["kind"]]
            row[0] += s["value"] not in out
            row[1] += (s["kind"], s["value"]) in found
            row[2] += 1
    kinds_caught = sum(r[0] == r[2] for r in redacted.values())
    print(f"{'kind':10} redacted  right-kind  of")
    for kind, (gone, right, total) in sorted(redacted.items()):
        print(f"{kind:10} {gone:8} {right:11} {total:3}")
    print(f"secret kinds fully redacted: {kinds_caught} of {len(redacted)}")
    print(f"secrets redacted: {sum(r[0] for r in redacted.values())} of {sum(r[2] for r in redacted.values())}")
    fps = [t for t in negatives if privacy.scan(t)]
    print(f"false positives: {len(fps)} of {len(negatives)} negative sentences")
    for t in fps:
        print("   FP:", t)
    texts = [c["text"] for c in positives] + negatives
    samples: list[float] = []
    for _ in range(args.rounds):
        for text in texts:
            t0 = time.perf_counter()
            privacy.redact(text)
            samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    p95 = samples[int(0.95 * len(samples))]
    print(f"redact per message: p50 {statistics.median(samples):.1f} µs, p95 {p95:.1f} µs ({len(texts)} messages)")


if __name__ == "__main__":
    main()
