"""Add and search latency with the default embedder and write-behind embedding.

    python benchmarks/add_latency.py [--adds 300] [--locomo ../shared/data/locomo-dev/26.json]

- add: `Memory.add(one short message, user_id=…)` with default settings (infer=True, no LLM,
  the multilingual embedder, vectors made behind); p50/p95 per call, then how long `flush` took
  to make the vectors still pending.
- add, embedding with the row (``embed_behind=False``): the same messages, for comparison.
- search at LoCoMo size (one conversation's turns, `add_many`): every question once (its query
  embedding included), then every question again (the query vector cached).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engram import Memory  # noqa: E402
from engram.bench.data import load_locomo  # noqa: E402
from engram.config import Settings  # noqa: E402
from engram.providers.embedders import make_embedder  # noqa: E402

SAYINGS = [
    "I practice taekwondo twice a week.", "I just got a puppy! Her name's Coco.",
    "We're planning a trip to Japan in April.", "I can't eat gluten.", "I drink green tea in the evening.",
    "My sister Anna works as a nurse.", "我养了一只猫，叫咪咪。", "我女儿叫小雨，今年七岁。",
    "I moved to Porto last year.", "I'm learning the cello.", "我每天早上跑步。", "My favourite book is Dune.",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_adds(embedder, adds: int, behind: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        with Memory(Path(folder) / "add.db", embedder=embedder, embed_behind=behind) as m:
            m.add("Hello, I'm warming up.", user_id="warm")
            m.flush()
            times = []
            for n in range(adds):
                text = f"{SAYINGS[n % len(SAYINGS)]} ({n})" if n >= len(SAYINGS) else SAYINGS[n]
                began = time.perf_counter()
                m.add(text, user_id=f"user{n % 20}")
                times.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            m.flush()
            flush_ms = (time.perf_counter() - began) * 1000
    return {"p50": round(statistics.median(times), 3), "p95": round(percentile(times, 0.95), 3),
            "flush_ms": round(flush_ms, 1)}


def time_searches(embedder, locomo: Path) -> dict[str, float]:
    corpus = load_locomo(locomo)[0]
    with tempfile.TemporaryDirectory() as folder:
        with Memory(Path(folder) / "search.db", embedder=embedder, reinforce=False) as m:
            m.add_many([{"messages": d.text, "user_id": "u", "infer": False, "timestamp": d.timestamp,
                         "session_id": d.session} for d in corpus.docs])
            m.search("warm up", user_id="u")
            passes = []
            for _ in range(2):
                times = []
                for q in corpus.queries:
                    began = time.perf_counter()
                    m.search(q.text, user_id="u")
                    times.append((time.perf_counter() - began) * 1000)
                passes.append(times)
    first, again = passes
    return {"memories": len(corpus.docs), "queries": len(corpus.queries),
            "p50": round(statistics.median(first), 3), "p95": round(percentile(first, 0.95), 3),
            "cached_p50": round(statistics.median(again), 3), "cached_p95": round(percentile(again, 0.95), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--embedder", default=Settings().embedder)
    parser.add_argument("--locomo", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/locomo-dev/26.json")
    args = parser.parse_args()
    embedder = make_embedder(Settings(embedder=args.embedder))
    embedder.embed(["load the model"])
    out = {
        "embedder": embedder.name,
        "add_behind_ms": time_adds(embedder, args.adds, behind=True),
        "add_with_row_ms": time_adds(embedder, max(50, args.adds // 3), behind=False),
    }
    if args.locomo.is_file():
        out["search_ms"] = time_searches(embedder, args.locomo)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
