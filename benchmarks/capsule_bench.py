"""Capsule and context figures (not a unit test): how long they take, and how many tokens they save.

1. Scale: one user with N memories (default 1k and 10k), laid out as a heavy user's
   store would be after many sessions: 15% long-term, the rest in sessions of 20
   memories, each session compressed into a delta (a `summary` memory linking
   its sources). Memories are written straight to the store (synthetic EN/ZH
   statements, wordllama embeddings) so setting up 10k takes seconds. Measured:
   `Memory.capsule` cold (cache cleared; every candidate loaded, scored, deduplicated,
   packed and rendered), cached (the per-user version check and a dict hit), and
   `Memory.context` (cached capsule + hybrid retrieval + packing + rendering).
2. LoCoMo: each conversation is replayed as a user would live it: every turn goes
   through `add` (rules extraction) in its LoCoMo session, each session is ended
   (delta), and every turn is also stored verbatim for retrieval. Then every
   question of categories 1-4 gets `Memory.context(question)` (default budget);
   its token count is compared with the tokens of the whole conversation (what a
   long-context agent would send), and we count how often the context holds at
   least one evidence turn.

    python benchmarks/capsule_bench.py                      # both parts, defaults
    python benchmarks/capsule_bench.py --sizes 1000 --locomo ../shared/data/locomo-dev/26.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engram import Kind, Layer, Memory
from engram.models import MemoryItem
from engram.providers.embedders import WordLlamaEmbedder
from engram.store.base import Scope
from engram.tokens import get_counter

HERE = Path(__file__).resolve().parent
DEFAULT_LOCOMO = sorted((HERE.parent.parent / "shared" / "data" / "locomo-dev").glob("*.json"))

_ADJ = ["spicy", "sweet", "quiet", "early", "late", "long", "short", "dark", "bright", "green", "blue", "red", "warm", "cold", "fresh", "old", "new", "small", "large", "simple"]
_NOUN = ["coffee", "tea", "ramen", "sushi", "jazz", "rock", "novels", "podcasts", "meetings", "reports", "charts", "emails", "trains", "bikes", "hikes", "museums", "gardens", "cats", "dogs", "chess", "tennis", "yoga", "cooking", "painting", "movies", "concerts"]
_WHEN = ["at work", "on weekends", "in the morning", "at night", "when travelling", "with friends", "at home", "in winter", "in summer", "on Mondays", "after lunch", "before bed", "on holidays", "with family", "when busy"]
_ZH_ADJ = ["辣的", "甜的", "安静的", "早上的", "长的", "短的", "新的", "老的", "简单的", "温暖的"]
_ZH_NOUN = ["咖啡", "茶", "拉面", "寿司", "爵士乐", "小说", "播客", "会议", "报告", "图表", "火车", "徒步", "博物馆", "猫", "围棋"]
_KINDS = [(Kind.PREFERENCE, 0.4), (Kind.FACT, 0.35), (Kind.TASK, 0.1), (Kind.EVENT, 0.13), (Kind.IDENTITY, 0.02)]


def _statement(i: int, kind: Kind, rng: random.Random) -> tuple[str, str, str]:
    """(content, language, key) of a distinct synthetic memory."""
    if rng.random() < 0.1:
        adj, noun = rng.choice(_ZH_ADJ), rng.choice(_ZH_NOUN)
        verb = {"preference": "喜欢", "fact": "有", "task": "需要准备", "event": "参加了", "identity": "希望助手像"}[kind.value]
        return f"用户{verb}{adj}{noun}（第{i}项）", "zh", f"{kind.value}:zh_{i}"
    adj, noun, when = rng.choice(_ADJ), rng.choice(_NOUN), rng.choice(_WHEN)
    text = {
        "preference": f"User prefers {adj} {noun} {when} (#{i}).",
        "fact": f"User owns {adj} {noun} kept {when} (#{i}).",
        "task": f"User needs to sort out the {adj} {noun} {when} (#{i}).",
        "event": f"User went to see {adj} {noun} {when} (#{i}).",
        "identity": f"Assistant should talk like a {adj} {noun} expert (#{i}).",
    }[kind.value]
    return text, "en", f"{kind.value}:{noun}_{i}"


def populate(memory: Memory, user: str, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    kinds, weights = zip(*_KINDS, strict=True)
    items = []
    for i in range(n):
        kind = rng.choices(kinds, weights)[0]
        content, language, key = _statement(i, kind, rng)
        when = now - timedelta(days=rng.uniform(0, 365))
        items.append(MemoryItem(
            user_id=user, content=content, kind=kind, language=language, key=key,
            layer=Layer.LONG_TERM if rng.random() < 0.15 else Layer.EPISODIC,
            importance=round(rng.uniform(0.3, 0.95), 2), access_count=rng.choice([0, 0, 0, 1, 2, 5, 12]),
            created_at=when, updated_at=when, session_id=None,
        ))
    episodic = [i for i in items if i.layer is Layer.EPISODIC]
    for j in range(0, len(episodic), 20):
        for item in episodic[j : j + 20]:
            item.session_id = f"s{j // 20}"
    records = [memory._record(item) for item in items]
    for start in range(0, len(records), 2000):
        memory._embed_records(records[start : start + 2000])
    memory.store.write(inserts=records)
    scope = Scope(user)
    for j in range(0, len(episodic), 20):
        memory.capsules.compress(scope, episodic[j : j + 20], session_id=f"s{j // 20}", of="session")


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 3),
        "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "n": len(ordered),
    }


def bench_scale(n: int, embedder: Any, reps: int = 7, queries: int = 50) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "scale.db", embedder=embedder)
        t0 = time.perf_counter()
        populate(memory, "heavy", n)
        setup = time.perf_counter() - t0
        cold = []
        for _ in range(reps):
            memory.capsules._cache.clear()
            start = time.perf_counter()
            capsule = memory.capsule("heavy")
            cold.append(time.perf_counter() - start)
        cached = []
        for _ in range(200):
            start = time.perf_counter()
            hit = memory.capsule("heavy")
            cached.append(time.perf_counter() - start)
        assert hit.cached
        rng = random.Random(3)
        contexts, tokens = [], []
        for _ in range(queries):
            question = f"What do I think about {rng.choice(_ADJ)} {rng.choice(_NOUN)} {rng.choice(_WHEN)}?"
            start = time.perf_counter()
            context = memory.context(question, user_id="heavy")
            contexts.append(time.perf_counter() - start)
            tokens.append(context.token_count)
        memory.close()
    return {
        "memories": n,
        "setup_s": round(setup, 1),
        "capsule_lines": len(capsule.lines),
        "capsule_tokens": capsule.token_count,
        "capsule_left_out": len(capsule.left_out),
        "capsule_cold": _ms(cold),
        "capsule_cached": _ms(cached),
        "context": _ms(contexts),
        "context_tokens_p50": statistics.median(tokens),
    }


def _locomo_conversations(path: Path) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(id, conversation, qa) from either LoCoMo layout (shared loader when present)."""
    try:
        from engram.bench.data import locomo_samples

        data = json.loads(path.read_text(encoding="utf-8"))
        return list(locomo_samples(data, path.stem))
    except ImportError:  # pragma: no cover - the loader is another helper's
        data = json.loads(path.read_text(encoding="utf-8"))
        samples = data if isinstance(data, list) else [data]
        return [(str(s.get("sample_id", path.stem)), s.get("conversation", s), s.get("qa", [])) for s in samples]


def _evidence(value: Any) -> set[str]:
    from engram.bench.data import parse_evidence

    return set(parse_evidence(value))


def bench_locomo(paths: list[Path], embedder: Any) -> dict[str, Any]:
    from engram.bench.data import normalise_dia_id, parse_datetime, turn_text

    counter = get_counter("cl100k_base")
    per_conversation = []
    all_tokens: list[int] = []
    for path in paths:
        for sample_id, conversation, qa in _locomo_conversations(path):
            with tempfile.TemporaryDirectory() as tmp:
                memory = Memory(Path(tmp) / "locomo.db", embedder=embedder, reinforce=False)
                user = f"locomo-{sample_id}"
                full_lines = []
                sessions = sorted(
                    (int(k.split("_")[1]), v) for k, v in conversation.items()
                    if k.startswith("session_") and k.split("_")[1].isdigit() and isinstance(v, list)
                )
                ingest_start = time.perf_counter()
                for number, turns in sessions:
                    when = parse_datetime(conversation.get(f"session_{number}_date_time"))
                    sid = f"{sample_id}-s{number}"
                    batch = []
                    for turn in turns:
                        text = turn_text(turn)
                        full_lines.append(text)
                        speaker_words = turn.get("text", "")
                        if speaker_words.strip():  # rules extraction, in its session
                            memory.add(speaker_words, user_id=user, session_id=sid, timestamp=when)
                        batch.append({
                            "messages": text, "user_id": user, "infer": False, "timestamp": when,
                            "metadata": {"dia_id": normalise_dia_id(turn.get("dia_id"))},
                        })
                    memory.add_many(batch)
                    memory.end_session(user, sid)
                ingest_s = time.perf_counter() - ingest_start
                full = counter.count("\n".join(full_lines))
                capsule = memory.capsule(user)
                tokens, hits, asked, build = [], 0, 0, []
                for item in qa:
                    if item.get("category") not in (1, 2, 3, 4):
                        continue
                    evidence = _evidence(item.get("evidence"))
                    start = time.perf_counter()
                    context = memory.context(str(item["question"]), user_id=user)
                    build.append(time.perf_counter() - start)
                    tokens.append(context.token_count)
                    used = {m.metadata.get("dia_id") for m in context.memories}
                    asked += 1
                    hits += bool(evidence & used)
                memory.close()
            all_tokens += tokens
            per_conversation.append({
                "conversation": sample_id,
                "turns": len(full_lines),
                "full_conversation_tokens": full,
                "questions": asked,
                "context_tokens_mean": round(statistics.mean(tokens), 1),
                "context_tokens_p50": statistics.median(tokens),
                "context_tokens_max": max(tokens),
                "share_of_full": round(statistics.mean(tokens) / full, 4),
                "capsule_tokens": capsule.token_count,
                "capsule_lines": len(capsule.lines),
                "evidence_in_context": round(hits / asked, 3),
                "context_ms": _ms(build),
                "ingest_s": round(ingest_s, 1),
            })
    return {"conversations": per_conversation, "context_tokens_mean": round(statistics.mean(all_tokens), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="memories per user, comma-separated ('' to skip)")
    parser.add_argument("--locomo", nargs="*", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo files ('' to skip)")
    parser.add_argument("--out", type=Path, default=Path("bench-results/capsule_bench.json"))
    args = parser.parse_args(argv)
    embedder = WordLlamaEmbedder()
    report: dict[str, Any] = {"scale": [], "locomo": None}
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        result = bench_scale(size, embedder)
        report["scale"].append(result)
        print(json.dumps(result), file=sys.stderr)
    paths = [p for p in args.locomo if str(p) and p.exists()]
    if paths:
        report["locomo"] = bench_locomo(paths, embedder)
        print(json.dumps(report["locomo"], indent=1), file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
