"""LLM cost and reply-path latency of engram's LLM features, on LoCoMo turns, offline.

    python benchmarks/llm_cost.py [../shared/data/locomo-dev/26.json] [--turns 100] [--latency-ms 200]

Runs the real `openai` SDK against the scripted OpenAI-compatible server of the
tests (tests/fake_llm.py) with a responder that answers like a small model
would: the extraction prompt gets about one memory per substantive line, the
compress prompt a four-section delta, the judge an ADD. Usage numbers are
computed from the exact prompt and answer with engram.tokens (cl100k_base),
so prompt/completion tokens are what a real endpoint would bill for engram's
prompts (the completions are of plausible length, not a real model's).

Each LoCoMo turn is one `Memory.add` by its speaker (one user per speaker),
each LoCoMo session one engram session, ended (and compressed) at its end.

1. cost: LLM calls and tokens per 100 turns, per-turn vs batched extraction
   (by task: extract / compress / judge);
2. latency: the reply path of `add` (what an agent waits for before it can
   answer) with the LLM answering after `--latency-ms`: rules only, LLM in
   the foreground, LLM in the background.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_llm import FakeLLM  # noqa: E402
from llm_scripts import task_of  # noqa: E402

from engram import Memory  # noqa: E402
from engram.providers.embedders import WordLlamaEmbedder  # noqa: E402
from engram.tokens import count_tokens  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev" / "26.json"
_LINE = re.compile(r"^(?:User|用户)[:：]\s*(.+)$")
_ITEM = re.compile(r"^- #(\d+) \[category: (\w+)\] (.+?) \(source session")


class MeteredFakeLLM(FakeLLM):
    """The scripted server, billing with engram's exact token counter."""

    def _chat_body(self, request: dict[str, Any], text: str) -> dict[str, Any]:
        body = super()._chat_body(request, text)
        prompt = sum(count_tokens(str(m.get("content", ""))) + 4 for m in request.get("messages", [])) + 3
        completion = count_tokens(text)
        body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                         "total_tokens": prompt + completion}
        return body


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n]).rstrip(",.;:!?")


def responder(latency_s: float = 0.0):
    def respond(request: dict[str, Any]) -> str:
        if latency_s:
            time.sleep(latency_s)
        task = task_of(request)
        prompt = request["messages"][-1]["content"]
        if task == "extract":
            memories, turn = [], 0
            for line in prompt.splitlines():
                if line.startswith(("Turn ", "第")):
                    turn += 1
                found = _LINE.match(line)
                if found and len(found.group(1).split()) >= 8:
                    memories.append({
                        "content": f"User said: {_words(found.group(1), 14)}.", "kind": "fact",
                        "reason": "stated by the user", "key": None, "value": None, "importance": 0.5,
                        "polarity": 0, "due": None, **({"turn": turn} if turn else {}),
                    })
            return json.dumps({"memories": memories})
        if task == "compress":
            sections: dict[str, list[dict[str, Any]]] = {"preferences": [], "facts": [], "task": [], "identity": []}
            for line in prompt.splitlines():
                found = _ITEM.match(line)
                if found:
                    section = found.group(2) if found.group(2) in sections else "facts"
                    sections[section].append({"text": _words(found.group(3), 12), "updated": False,
                                              "from": [int(found.group(1))]})
            return json.dumps(sections)
        if task == "judge":
            return json.dumps({"action": "ADD", "target": None, "reason": "a different detail"})
        return "ok"

    return respond


def load_turns(path: Path, limit: int) -> list[tuple[str, str, str, str]]:
    """(session key, speaker, text, date) of the first `limit` turns, in order."""
    data = json.loads(path.read_text())
    conversation = data.get("conversation", data)
    sessions = sorted(
        (k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    turns = []
    for key in sessions:
        for turn in conversation[key]:
            text = str(turn.get("text", "")).strip()
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            if text:
                turns.append((key, turn["speaker"], text, conversation.get(f"{key}_date_time", "")))
            if len(turns) >= limit:
                return turns
    return turns


def replay(memory: Memory, turns: list[tuple[str, str, str, str]], *, background: bool = False) -> list[float]:
    """Every turn as one add; each LoCoMo session ended at its end; returns add() latencies (s)."""
    latencies: list[float] = []
    open_sessions: dict[str, str] = {}
    for index, (session, speaker, text, _) in enumerate(turns):
        for who, current in list(open_sessions.items()):
            if current != session:
                memory.flush()
                memory.end_session(who, f"{who}-{current}")
                del open_sessions[who]
        open_sessions[speaker] = session
        start = time.perf_counter()
        memory.add(text, user_id=speaker, session_id=f"{speaker}-{session}", background=background)
        latencies.append(time.perf_counter() - start)
        del index
    memory.flush()
    for who, current in open_sessions.items():
        memory.end_session(who, f"{who}-{current}")
    return latencies


def by_task(fake: FakeLLM) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for request in fake.requests:
        task = task_of(request)
        row = out.setdefault(task, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["calls"] += 1
    return out


def cost_run(turns, embedder, mode: str, batch: int, tmp: Path) -> dict[str, Any]:
    with MeteredFakeLLM() as fake:
        fake.responder = responder()
        settings = {"llm_base_url": fake.base_url, "llm_model": "small-model", "llm_max_retries": 0,
                    "llm_extraction": mode, "llm_batch_turns": batch, "reinforce": False}
        with Memory(tmp / f"cost-{mode}-{batch}.db", embedder=embedder, **settings) as memory:
            replay(memory, turns)
            usage = memory.llm_usage()
        tasks = by_task(fake)
    total = usage["total"]
    scale = 100 / len(turns)
    return {
        "mode": mode if mode != "batch" else f"batch of {batch}",
        "calls_per_100_turns": round(total["calls"] * scale, 1),
        "prompt_tokens_per_100_turns": round(total["prompt_tokens"] * scale),
        "completion_tokens_per_100_turns": round(total["completion_tokens"] * scale),
        "calls_by_task": {k: v["calls"] for k, v in tasks.items()},
        "counters": usage["tasks"],
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def latency_run(turns, embedder, latency_s: float, tmp: Path) -> list[dict[str, Any]]:
    rows = []
    with MeteredFakeLLM() as fake:
        fake.responder = responder(latency_s)
        llm = {"llm_base_url": fake.base_url, "llm_model": "small-model", "llm_max_retries": 0, "reinforce": False}
        for name, settings, background in (
            ("rules only (no LLM)", {}, False),
            ("LLM per turn, foreground", {**llm, "llm_extraction": "per_turn"}, False),
            ("LLM per turn, background=True", {**llm, "llm_extraction": "per_turn"}, True),
            ("LLM batch of 8, foreground", {**llm, "llm_extraction": "batch", "llm_batch_turns": 8}, False),
        ):
            with Memory(tmp / f"lat-{len(rows)}.db", embedder=embedder, **settings) as memory:
                memory.add("warm-up", user_id="warm")  # first-call costs out of the measurement
                start = time.perf_counter()
                lat = replay(memory, turns, background=background)
                wall = time.perf_counter() - start
            rows.append({
                "path": name, "add_p50_ms": round(_pct(lat, 0.5), 2), "add_p95_ms": round(_pct(lat, 0.95), 2),
                "add_mean_ms": round(statistics.mean(lat) * 1000, 2), "replay_wall_s": round(wall, 2),
            })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--batch", type=int, nargs="*", default=[4, 8, 16])
    parser.add_argument("--latency-ms", type=float, default=200.0, help="simulated LLM answer time")
    parser.add_argument("--latency-turns", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path("bench-results") / "llm_cost.json")
    args = parser.parse_args()

    turns = load_turns(args.data, args.turns)
    embedder = WordLlamaEmbedder()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        cost = [cost_run(turns, embedder, "per_turn", 1, tmp)]
        cost += [cost_run(turns, embedder, "batch", n, tmp) for n in args.batch]
        latency = latency_run(turns[: args.latency_turns], embedder, args.latency_ms / 1000, tmp)

    sessions = len({t[0] for t in turns})
    print(f"LoCoMo {args.data.name}: {len(turns)} turns over {sessions} sessions, 2 speakers\n")
    print("| extraction | LLM calls / 100 turns | by task | prompt tokens | completion tokens |")
    print("|---|---|---|---|---|")
    for row in cost:
        tasks = ", ".join(f"{k} {v}" for k, v in sorted(row["calls_by_task"].items()))
        print(f"| {row['mode']} | {row['calls_per_100_turns']} | {tasks} | {row['prompt_tokens_per_100_turns']:,}"
              f" | {row['completion_tokens_per_100_turns']:,} |")
    print(f"\nreply path of add(), LLM answering in {args.latency_ms:.0f} ms, {args.latency_turns} turns:\n")
    print("| path | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|")
    for row in latency:
        print(f"| {row['path']} | {row['add_p50_ms']} | {row['add_p95_ms']} | {row['add_mean_ms']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"data": str(args.data), "turns": len(turns), "cost": cost,
                                    "latency_ms": args.latency_ms, "latency": latency}, indent=2))
    print(f"\nwritten: {args.out}")


if __name__ == "__main__":
    main()
