"""Migrate throughput to and from Qdrant (not part of the test suite): a SQLite store of
`--memories` memories over `--users` users is copied SQLite -> Qdrant (local mode) -> SQLite,
each copy verified by `engram migrate`'s counts and per-user checksums.

    PYTHONPATH=. python scripts/qdrant_migrate_measure.py [--memories 20000] [--users 20] [--batch 500]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from engram.migrate import migrate
from engram.models import MemoryItem
from engram.providers.embedders import WordLlamaEmbedder
from engram.records import embed_records, make_record
from engram.store.open import open_store

WORDS = ("green tea, the red bike, a trip to Rome, the quarterly report, jazz records, sourdough, the marathon,"
         " a new laptop, the garden, chess lessons, the piano, a blue jacket, 北京烤鸭, 上海的咖啡").split(", ")


def fill(store, embedder, users: int, count: int, rng: random.Random) -> None:
    for start in range(0, count, 1000):
        records = [
            make_record(MemoryItem(
                user_id=f"u{n % users}", content=f"I talked about {rng.choice(WORDS)} with {rng.choice(WORDS)} (note {n})."
            ))
            for n in range(start, min(count, start + 1000))
        ]
        embed_records(embedder, records)
        store.write(inserts=records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="engram-qdrant-migrate-"))
    embedder = WordLlamaEmbedder()
    source = open_store(folder / "source.db", dim=embedder.dim)
    t = time.perf_counter()
    fill(source, embedder, args.users, args.memories, random.Random(7))
    print(f"filled SQLite with {args.memories:,} memories ({args.users} users) in {time.perf_counter() - t:.1f} s")
    steps = (("SQLite -> Qdrant", source, f"qdrant://{folder / 'qdrant'}"), ("Qdrant -> SQLite", None, folder / "back.db"))
    for name, src, target_url in steps:
        src = src or open_store(f"qdrant://{folder / 'qdrant'}", dim=embedder.dim, read_only=True)
        target = open_store(target_url, dim=embedder.dim)
        report = migrate(src, target, embedder=embedder, batch=args.batch)
        print(f"migrate {name}: {report.copied['memories']:,} memories in {report.seconds:.1f} s"
              f" = {report.memories_per_s:,.0f} memories/s (verified {report.users} users)")
        src.close()
        target.close()


if __name__ == "__main__":
    main()
