"""REST load figures (not a unit test): search p50/p95 and add throughput with 50 concurrent
clients over loopback, against a real `engram serve` process (bounded: a few seconds a phase).

A fresh store in a temporary folder gets one admin key and `--users` users with `--seed`
verbatim memories each (written through `add_many`, before the server starts). Then
`--clients` httpx clients (asyncio, one connection each) run for `--seconds`:

1. add: each client adds short statements (rules extraction, `infer=True`) for its own user;
2. search: each client searches its user's memories with varied queries.

Every request is timed from send to parsed reply; errors are counted, never hidden.

    python benchmarks/rest_load.py                      # 50 clients, 1 worker, 8 s a phase
    python benchmarks/rest_load.py --workers 2 --seconds 15 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

PLACES = ["Berlin", "Lisbon", "Kyoto", "Oslo", "Lima", "Cairo", "Hanoi", "Quito", "Perth", "Riga"]
FOODS = ["green tea", "sardines", "ramen", "dark chocolate", "olives", "mango", "rye bread", "kimchi"]
QUERIES = ["where do I live?", "what do I like to eat?", "what do I drink?", "my trip plans", "我住在哪里",
           "favourite food", "what did I say about work?", "hobbies"]


def statement(rng: random.Random, i: int) -> str:
    return rng.choice([
        f"I visited {rng.choice(PLACES)} in {2000 + i % 25}.",
        f"I love {rng.choice(FOODS)}.",
        f"My colleague {i} works in {rng.choice(PLACES)}.",
        f"我喜欢{rng.choice(['喝茶', '跑步', '看书', '做饭'])}，第{i}次说。",
    ])


def seed(db: Path, users: int, per_user: int) -> str:
    """The store, its users' memories and an admin key (the secret returned)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from engram import Memory
    from engram.service.keys import KeyStore

    rng = random.Random(7)
    with Memory(db) as memory:
        memory.add_many({"messages": statement(rng, i), "user_id": f"load-{u}", "infer": False}
                        for u in range(users) for i in range(per_user))
        return KeyStore(memory.store).create(None, admin=True, name="rest_load")[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: Path, port: int, workers: int) -> subprocess.Popen:
    cmd = [sys.executable, "-c", "from engram.cli import main; main()", "--db", str(db), "-q", "serve",
           "--port", str(port), "--workers", str(workers)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    proc = subprocess.Popen(cmd, env=env, cwd=Path(__file__).resolve().parent.parent)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            raise SystemExit("the server exited during start-up")
        time.sleep(0.3)
    proc.terminate()
    raise SystemExit("the server did not become ready")


async def phase(url: str, secret: str, clients: int, seconds: float, make) -> dict:
    """`clients` loops sending `make(client, n)` requests until `seconds` have passed."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    stop_at = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {secret}"}, timeout=60,
                                 limits=limits) as http:
        async def run(c: int) -> None:
            n = 0
            while time.perf_counter() < stop_at:
                method, path, body = make(c, n)
                began = time.perf_counter()
                try:
                    reply = await http.request(method, path, json=body)
                    reply.json()
                    if reply.status_code >= 400:
                        errors[str(reply.status_code)] = errors.get(str(reply.status_code), 0) + 1
                    else:
                        latencies.append(time.perf_counter() - began)
                except httpx.HTTPError as exc:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                n += 1

        began = time.perf_counter()
        await asyncio.gather(*(run(c) for c in range(clients)))
        elapsed = time.perf_counter() - began
    ms = sorted(x * 1000 for x in latencies)
    return {
        "requests": len(ms), "errors": errors, "seconds": round(elapsed, 2),
        "per_second": round(len(ms) / elapsed, 1),
        "p50_ms": round(statistics.median(ms), 1) if ms else None,
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1) if ms else None,
        "max_ms": round(ms[-1], 1) if ms else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=8.0, help="per phase")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seed", type=int, default=200, help="memories per user before the run")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "load.db"
        began = time.perf_counter()
        secret = seed(db, args.users, args.seed)
        seeded = time.perf_counter() - began
        port = free_port()
        server = start_server(db, port, args.workers)
        url = f"http://127.0.0.1:{port}"
        try:
            add = asyncio.run(phase(url, secret, args.clients, args.seconds, lambda c, n: (
                "POST", "/v1/memories", {"messages": statement(rng, n), "user_id": f"load-{c % args.users}"})))
            search = asyncio.run(phase(url, secret, args.clients, args.seconds, lambda c, n: (
                "POST", "/v1/memories/search",
                {"query": QUERIES[(c + n) % len(QUERIES)], "user_id": f"load-{c % args.users}", "limit": 10})))
        finally:
            server.terminate()
            server.wait(30)
    report = {"clients": args.clients, "workers": args.workers, "users": args.users,
              "memories_per_user_before": args.seed, "seed_seconds": round(seeded, 1), "cpus": os.cpu_count(),
              "add": add, "search": search}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.clients} clients, {args.workers} worker(s), {args.users} users x {args.seed} memories, "
          f"{os.cpu_count()} CPUs")
    for name, figures in (("add", add), ("search", search)):
        print(f"{name:7} {figures['per_second']:8.1f}/s  p50 {figures['p50_ms']} ms  p95 {figures['p95_ms']} ms  "
              f"({figures['requests']} ok, errors {figures['errors'] or 'none'})")


if __name__ == "__main__":
    main()
