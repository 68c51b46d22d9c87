"""What the memory proxy adds to a chat call: p50/p95 of direct upstream calls vs the same calls
through `engram proxy`, on loopback, bounded.

The upstream is the scripted OpenAI-compatible server of the tests (tests/fake_llm.py, answers
at once), so the difference is the proxy's own cost: key check, `Memory.context` over the
user's memories, the system-message rewrite, the second HTTP hop, and recording the turn in
the background. The proxy runs as the real command (`python -m engram proxy`) in its own
process with a real API key; requests alternate direct / proxied so both see the same machine.

    python benchmarks/proxy_latency.py                      # 200 calls each way, 300 memories
    python benchmarks/proxy_latency.py -n 500 --memories 2000 --stream --out proxy.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_llm import FakeLLM  # noqa: E402  (the tests' upstream)
from service_commands import command_serving, free_port  # noqa: E402

TOPICS = ["tea", "coffee", "running", "Berlin", "Python", "piano", "cats", "hiking", "sushi", "jazz",
          "绿茶", "跑步", "上海", "钢琴", "火锅"]


def seed(db: Path, memories: int) -> str:
    """`memories` statements for user `bench`; returns an API key for them."""
    from engram import Memory
    from engram.service.keys import KeyStore

    with Memory(db) as memory:
        memory.add_many({"messages": f"Note {i}: I like {TOPICS[i % len(TOPICS)]} number {i}", "user_id": "bench"}
                        for i in range(memories))
        memory.add("I prefer green tea over coffee", user_id="bench")
        return KeyStore(memory.store).create("bench")[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 50), 2), "p95_ms": round(percentile(values, 95), 2),
            "mean_ms": round(statistics.fmean(values), 2)}


def timed(http: httpx.Client, url: str, body: dict, headers: dict[str, str]) -> float:
    start = time.perf_counter()
    with http.stream("POST", url, json=body, headers=headers) as response:
        for _ in response.iter_raw():
            pass
        response.raise_for_status()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--requests", type=int, default=200, help="calls each way (default 200)")
    parser.add_argument("--memories", type=int, default=300, help="memories of the user (default 300)")
    parser.add_argument("--stream", action="store_true", help="streamed replies (time to the last byte)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as upstream:
        db = Path(tmp) / "engram.db"
        key = seed(db, args.memories)
        upstream.reply("A short answer from the model.", times=10**6)
        port = free_port()
        command = ["--db", str(db), "-q", "proxy", "--upstream", upstream.base_url, "--port", str(port)]
        with command_serving(command, port, tmp) as proxy, httpx.Client(timeout=60) as http:
            questions = [f"What do I like about {TOPICS[i % len(TOPICS)]}? ({i})" for i in range(args.requests + 10)]
            direct, proxied = [], []
            for i, question in enumerate(questions):
                body = {"model": "fake-model", "stream": args.stream, "messages": [
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": question}]}
                d = timed(http, f"{upstream.base_url}/chat/completions", body, {})
                p = timed(http, f"{proxy}/v1/chat/completions", body, {"Authorization": f"Bearer {key}"})
                if i >= 10:  # warm-up: first connections, the proxy's first context build
                    direct.append(d)
                    proxied.append(p)
        injected = sum("green tea" in str(r["messages"][0]["content"]) for r in upstream.requests[1::2])
    report = {
        "requests_each_way": args.requests, "memories": args.memories + 1, "stream": args.stream,
        "direct": summary(direct), "proxied": summary(proxied),
        "added_p50_ms": round(percentile(proxied, 50) - percentile(direct, 50), 2),
        "added_p95_ms": round(percentile(proxied, 95) - percentile(direct, 95), 2),
        "proxied_requests_with_memory_injected": injected,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
