"""How well `SearchResult.relevance` separates answers from the rest (issue #14's absolute score).

    python benchmarks/relevance_bench.py ../shared/data/locomo-dev/26.json [more LoCoMo files]

Ingests every turn of each conversation (verbatim, one scope each), searches each question
(categories 1-4) for its top 10, and reports, for several thresholds, the share of retrieved
evidence turns kept (recall kept) and of retrieved non-evidence turns dropped.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from engram import Memory
from engram.bench.data import load_locomo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args()
    gold: list[float] = []
    other: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "r.db") as memory:
        for corpus in (c for f in args.files for c in load_locomo(f)):
            memory.add_many({"messages": d.text, "user_id": corpus.id, "metadata": {"doc": d.id},
                             **({"timestamp": d.timestamp} if d.timestamp else {})} for d in corpus.docs)
            for query in corpus.queries:
                for hit in memory.search(query.text, user_id=corpus.id, limit=args.k):
                    (gold if hit.memory.metadata.get("doc") in query.relevant else other).append(hit.relevance)
    print(f"{len(gold)} evidence hits, {len(other)} other hits in the top {args.k}")
    for threshold in (0.1, 0.2, 0.3, 0.5):
        kept = sum(r >= threshold for r in gold) / max(1, len(gold))
        dropped = sum(r < threshold for r in other) / max(1, len(other))
        print(f"threshold {threshold:.1f}: evidence kept {kept:.3f}, other dropped {dropped:.3f}")


if __name__ == "__main__":
    main()
