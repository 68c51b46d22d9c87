"""Lifecycle and privacy figures: maintenance time at scale, redaction precision/recall.

    python benchmarks/maintain_bench.py                      # 100k memories, one user
    python benchmarks/maintain_bench.py --size 20000 --users 20
    python benchmarks/maintain_bench.py --privacy-only

Maintenance: `--size` synthetic memories (turns, facts, preferences, events; ~20 %
Chinese; 3 % near-duplicate paraphrases so merging has work) spread over two years,
bulk-written with embeddings in batches (the path `Memory.add_many` takes), then
`Memory.maintain()` on a clock set to "now": decayed small talk is archived, the
capacity (`--capacity`, default a quarter of the memories per user) evicts the least valuable,
near-duplicates merge. A second run measures the steady state (nothing left to do).

Privacy: every secret of tests/data/secrets_corpus.jsonl is a true span; a finding
of `engram.privacy.scan` is a true positive when it overlaps a true span of the same
text. Recall = true spans fully covered / true spans; precision = findings that
overlap a true span / findings (negatives contribute only false positives).

Writes bench-results/maintain.json and prints a summary.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engram import Kind, Memory, MemoryItem  # noqa: E402
from engram.privacy import scan  # noqa: E402

NOW = datetime(2026, 6, 1, tzinfo=UTC)
NAMES = "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent".split()
PLACES = "Berlin Paris Oslo Lisbon Kyoto Austin Denver Porto Vienna Dublin Prague Seoul Lima Quito".split()
THINGS = ("jazz", "sushi", "hiking", "chess", "tea", "running", "opera", "poetry", "cycling", "baking",
          "pottery", "sailing", "climbing", "photography", "gardening", "knitting")
ZH_PLACES = "北京 上海 杭州 成都 西安 南京 广州 深圳 武汉 厦门".split()
ZH_THINGS = "火锅 爬山 游泳 书法 围棋 咖啡 茶 摄影 跑步 钢琴".split()


def synthetic(rng: random.Random, n: int, user: str) -> list[MemoryItem]:
    items: list[MemoryItem] = []
    start = NOW - timedelta(days=730)
    while len(items) < n:
        when = start + timedelta(seconds=rng.uniform(0, 730 * 86400))
        roll = rng.random()
        zh = rng.random() < 0.2
        if roll < 0.55:  # small talk, stored verbatim
            text = (f"今天在{rng.choice(ZH_PLACES)}天气{rng.choice(['不错', '很热', '下雨'])}，聊了{rng.choice(ZH_THINGS)}"
                    if zh else f"{rng.choice(NAMES)} said the weather in {rng.choice(PLACES)} was "
                    f"{rng.choice(['lovely', 'awful', 'rainy', 'hot'])} on day {rng.randint(1, 9999)}")
            kind, importance = Kind.TURN, 0.3
        elif roll < 0.75:
            text = (f"用户的朋友{rng.randint(1, 999)}号住在{rng.choice(ZH_PLACES)}" if zh else
                    f"User's friend {rng.choice(NAMES)} {rng.randint(1, 999)} lives in {rng.choice(PLACES)}.")
            kind, importance = Kind.FACT, rng.choice([0.4, 0.5, 0.7])
        elif roll < 0.9:
            text = (f"用户喜欢{rng.choice(ZH_THINGS)}和{rng.choice(ZH_THINGS)}{rng.randint(1, 99)}" if zh else
                    f"User enjoys {rng.choice(THINGS)} with {rng.choice(NAMES)} on weekends {rng.randint(1, 99)}.")
            kind, importance = Kind.PREFERENCE, 0.7
        else:
            text = (f"用户{rng.randint(1, 12)}月去了{rng.choice(ZH_PLACES)}参加{rng.choice(ZH_THINGS)}活动" if zh else
                    f"User went to {rng.choice(PLACES)} for a {rng.choice(THINGS)} event in month {rng.randint(1, 12)}.")
            kind, importance = Kind.EVENT, 0.5
        items.append(MemoryItem(user_id=user, content=text, kind=kind, importance=importance,
                                language="zh" if zh else "en", created_at=when, updated_at=when, valid_from=when))
        if kind is not Kind.TURN and rng.random() < 0.03 and len(items) < n:  # a near-duplicate later on
            later = when + timedelta(days=rng.uniform(1, 30))
            twin = text.rstrip(".") + ("，他说过" if zh else ", as mentioned before.")
            items.append(items[-1].model_copy(update={
                "id": MemoryItem(user_id=user, content="x").id, "content": twin,
                "created_at": later, "updated_at": later, "valid_from": later}))
    return items


def ingest(memory: Memory, items: list[MemoryItem], batch: int = 5000) -> float:
    started = time.perf_counter()
    for i in range(0, len(items), batch):
        records = [memory._record(item) for item in items[i : i + batch]]
        memory._embed_records(records)
        memory.store.write(inserts=records)
    return time.perf_counter() - started


def bench_maintain(size: int, users: int, capacity: int | None, workdir: str | None) -> dict:
    rng = random.Random(7)
    per_user = size // users
    capacity = capacity if capacity is not None else per_user // 4
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        db = Path(tmp) / "engram.db"
        with Memory(db, capacity_per_user=capacity) as memory:
            items = [i for u in range(users) for i in synthetic(rng, per_user, f"user{u}")]
            kinds = Counter(i.kind.value for i in items)
            ingest_s = ingest(memory, items)
            progress: list[tuple[int, int]] = []
            first = memory.maintain(now=NOW, progress=lambda d, t, w: progress.append((d, t)))
            second = memory.maintain(now=NOW)
            disk = sum(p.stat().st_size for p in db.parent.glob("engram.db*"))
    return {
        "size": len(items), "users": users, "capacity_per_user": capacity, "kinds": dict(kinds),
        "ingest_s": round(ingest_s, 1), "ingest_per_s": round(len(items) / ingest_s),
        "maintain_first": first.model_dump(mode="json"), "maintain_second": second.model_dump(mode="json"),
        "progress_calls": len(progress), "disk_mb": round(disk / 2**20, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def bench_privacy() -> dict:
    corpus = [json.loads(line) for line in (ROOT / "tests/data/secrets_corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
    true_spans = covered = findings = hits = 0
    by_kind: dict[str, Counter] = {}
    misses, false_positives = [], []
    for case in corpus:
        text = case["text"]
        truth = []
        for secret in case["secrets"]:
            start = text.find(secret["value"])
            truth.append((start, start + len(secret["value"]), secret["kind"]))
        found = scan(text)
        for start, end, kind in truth:
            true_spans += 1
            ok = any(f.start <= start and f.end >= end for f in found)
            covered += ok
            by_kind.setdefault(kind, Counter())["true"] += 1
            by_kind[kind]["covered"] += ok
            if not ok:
                misses.append(text)
        for f in found:
            findings += 1
            ok = any(f.start < end and start < f.end for start, end, _ in truth)
            hits += ok
            by_kind.setdefault(f.kind.value, Counter())["found"] += 1
            by_kind[f.kind.value]["found_true"] += ok
            if not ok:
                false_positives.append(text)
    return {
        "texts": len(corpus), "positives": sum(1 for c in corpus if c["secrets"]),
        "negatives": sum(1 for c in corpus if not c["secrets"]), "true_spans": true_spans,
        "findings": findings, "recall": round(covered / true_spans, 4), "precision": round(hits / findings, 4),
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "misses": misses, "false_positives": false_positives,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1)
    parser.add_argument("--capacity", type=int, default=None)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--privacy-only", action="store_true")
    parser.add_argument("--out", default="bench-results")
    args = parser.parse_args()
    report: dict = {"privacy": bench_privacy()}
    p = report["privacy"]
    print(f"redaction on {p['texts']} texts ({p['true_spans']} secrets, {p['negatives']} negatives): "
          f"recall {p['recall']:.3f}, precision {p['precision']:.3f}")
    if not args.privacy_only:
        m = report["maintain"] = bench_maintain(args.size, args.users, args.capacity, args.workdir)
        f, s = m["maintain_first"], m["maintain_second"]
        print(f"{m['size']} memories, {m['users']} user(s): ingest {m['ingest_s']} s ({m['ingest_per_s']}/s)")
        print(f"maintain: {f['seconds']:.2f} s (phases {f['phases']}); archived {f['archived']}, "
              f"evicted {f['evicted']}, merged {f['merged_sources']} into {f['merged_groups']}")
        print(f"maintain again: {s['seconds']:.2f} s; archived {s['archived']}, evicted {s['evicted']}, "
              f"merged {s['merged_sources']}; disk {m['disk_mb']} MB, peak RSS {m['peak_rss_mb']} MB")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "maintain.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
