"""Offline extraction figures (not a unit test): labelled precision/recall, LoCoMo coverage/support, speed.

    python benchmarks/extraction_bench.py                                  # defaults below
    python benchmarks/extraction_bench.py --locomo FILE.json ... --examples 10
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engram.bench.extraction import (  # noqa: E402
    extraction_only,
    extraction_timing,
    labelled_scores,
    observation_scores,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--labelled", nargs="*", default=sorted(glob.glob(str(ROOT / "tests/data/extraction/labelled_*.jsonl"))))
    ap.add_argument("--locomo", nargs="*", default=sorted(glob.glob(str(ROOT.parent / "shared/data/locomo-dev/*.json"))))
    ap.add_argument("--examples", type=int, default=8, help="facts shown per conversation")
    args = ap.parse_args()
    for path in args.labelled:
        r = labelled_scores(path)
        print(f"{Path(path).name}: precision {r['precision']:.3f} ({r['correct']}/{r['produced']}), "
              f"recall {r['recall']:.3f} ({r['found']}/{r['labelled']}), subject errors {r['subject_errors']}")
        for m in r["misses"]:
            print("   miss:", m)
        for f in r["false_positives"]:
            print("   false:", f)
    convs = []
    for path in args.locomo:
        conv = json.loads(Path(path).read_text(encoding="utf-8"))
        convs.append(conv)
        facts = extraction_only(conv)
        s = observation_scores(conv, facts)
        print(f"{Path(path).name}: coverage {s['coverage']:.3f} ({s['covered']}/{s['observations']}), "
              f"support {s['support']:.3f} ({s['supported']}/{s['facts']}), turns with facts "
              f"{s['turns_with_facts']}/{s['turns']}, facts/turn {s['facts_per_turn']:.2f}")
        sample = [(t, f) for t, fs in facts.items() for f in fs]
        for t, f in random.Random(0).sample(sample, min(args.examples, len(sample))):
            print(f"   {t}: {f}")
    if convs:
        t = extraction_timing(convs)
        print(f"extract_candidates per LoCoMo turn: p50 {t['p50_ms']:.3f} ms, p95 {t['p95_ms']:.3f} ms "
              f"({t['turns']} turns)")


if __name__ == "__main__":
    main()
