"""`engram bench llm`: a fixed EN/ZH set through any OpenAI-compatible chat model.

It shows what a model (often a small local one) does to engram's memory: each
case of ``sets/llm_check.json`` is one user whose messages go through
`Memory.add` with LLM extraction and the judge, on a temporary database. It
counts, from `Memory.llm_usage()`:

- proposals the model made, and how many were grounded (kept) or ungrounded
  (dropped by `engram.grounding`: before issue #19 they were all stored);
- extraction answers that were valid JSON, invalid JSON, or no answer (timeout, error);
- judge calls, and judgements refused (first person, commentary, questions, ungrounded);
- latency per `add`, and what was stored from the model.

Against llama.cpp's server::

    pip install 'llama-cpp-python[server]'      # compiles llama.cpp (about 7.5 min on 2 cores)
    python -m llama_cpp.server --model qwen2.5-1.5b-instruct-q4_k_m.gguf --n_ctx 4096 --port 8080
    engram bench llm --base-url http://127.0.0.1:8080/v1 --timeout 120
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engram.bench.metrics import Latency, latency

Progress = Callable[[str], None]

__all__ = ["LLMCheckReport", "load_cases", "run_llm_check"]

_WATCHED = ("engram.extract.llm", "engram.reconcile")


class CaseResult(BaseModel):
    id: str
    stored: list[str] = Field(default_factory=list)  # memories the model added (source llm)
    dropped: list[str] = Field(default_factory=list)  # what grounding and the judge check refused, and why
    add_ms: list[float] = Field(default_factory=list)


class LLMCheckReport(BaseModel):
    base_url: str
    model: str
    cases: int
    adds: int
    proposals: int
    grounded: int
    ungrounded: int
    invalid_items: int
    translated: int
    extract_calls: int
    json_valid: int
    json_invalid: int
    no_answer: int
    judge_calls: int
    judge_refused: int
    judge_invalid: int
    judge_failed: int
    add_latency_ms: Latency
    tasks: dict[str, int]
    usage: dict[str, Any]
    results: list[CaseResult]
    wall_s: float
    json_path: str | None = None


def load_cases(path: Path | None = None) -> list[dict[str, Any]]:
    """The cases of the bundled set (or of `path`, same format)."""
    if path is None:
        text = resources.files("engram.bench").joinpath("sets/llm_check.json").read_text("utf-8")
    else:
        text = Path(path).read_text("utf-8")
    cases = json.loads(text)["cases"]
    if not cases or not all("id" in c and "say" in c for c in cases):
        raise ValueError("an LLM check set is {\"cases\": [{\"id\": …, \"say\": …}, …]}")
    return cases


class _Refusals(logging.Handler):
    """Collects what extraction and the judge log (INFO and up: what they dropped or refused, and why)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def run_llm_check(
    base_url: str,
    model: str | None = None,
    *,
    api_key: str | None = None,
    timeout: float = 120.0,
    grey_zone: float = 0.5,
    cases_path: Path | None = None,
    out_dir: Path | None = None,
    embedder: Any = None,
    progress: Progress | None = None,
) -> LLMCheckReport:
    """Run the set through the model at `base_url` (see the module docstring).

    `grey_zone` is lower than engram's default so the judge is asked more often.
    """
    from engram import Memory
    from engram.models import Source

    cases = load_cases(cases_path)
    watch = _Refusals()
    loggers = [logging.getLogger(name) for name in _WATCHED]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(watch)
        lg.setLevel(logging.INFO)
    start = time.perf_counter()
    results: list[CaseResult] = []
    try:
        with tempfile.TemporaryDirectory(prefix="engram-llm-check-") as folder:
            settings: dict[str, Any] = {
                "llm_base_url": base_url, "llm_model": model, "llm_timeout": timeout,
                "llm_extraction": "per_turn", "llm_compress": False, "llm_grey_zone": grey_zone,
                "llm_max_retries": 0,  # the model is measured, not the retries
            }
            if api_key:
                settings["llm_api_key"] = api_key
            with Memory(Path(folder) / "check.db", embedder=embedder, **settings) as memory:
                name = memory.llm.model if memory.llm is not None else "?"
                for n, case in enumerate(cases, 1):
                    if progress:
                        progress(f"{n}/{len(cases)} {case['id']}")
                    results.append(_run_case(memory, case, watch, Source.LLM))
                tasks = memory.llm_usage()["tasks"]
                usage = memory.llm_usage()["total"]
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(watch)
            lg.setLevel(level)
    report = _report(base_url, name, cases, results, Counter(tasks), usage, time.perf_counter() - start)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "llm-check.json"
        report.json_path = str(path)
        path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report


def _run_case(memory: Any, case: dict[str, Any], watch: _Refusals, llm_source: Any) -> CaseResult:
    user = f"check-{case['id']}"
    result = CaseResult(id=case["id"])
    seen = len(watch.lines)
    for message in [*case.get("before", []), case["say"]]:
        began = time.perf_counter()
        events = memory.add(message, user_id=user)
        result.add_ms.append((time.perf_counter() - began) * 1000)
        result.stored += [e.memory.content for e in events if e.memory.source is llm_source]
    result.dropped = watch.lines[seen:]
    return result


def _report(
    base_url: str, model: str, cases: Sequence[dict[str, Any]], results: list[CaseResult],
    tasks: Counter[str], usage: dict[str, Any], wall_s: float,
) -> LLMCheckReport:
    failed, bad_json = tasks["extract_failed"], tasks["extract_bad_json"]
    return LLMCheckReport(
        base_url=base_url, model=model, cases=len(cases), adds=sum(len(r.add_ms) for r in results),
        proposals=tasks["extract_items"], grounded=tasks["extract_grounded"],
        ungrounded=tasks["extract_ungrounded"], invalid_items=tasks["extract_invalid"],
        translated=tasks["extract_translated"], extract_calls=tasks["extract_calls"],
        json_valid=tasks["extract_calls"] - failed, json_invalid=bad_json, no_answer=failed - bad_json,
        judge_calls=tasks["judge_calls"] + tasks["judge_refused"] + tasks["judge_invalid"] + tasks["judge_failed"],
        judge_refused=tasks["judge_refused"], judge_invalid=tasks["judge_invalid"],
        judge_failed=tasks["judge_failed"],
        add_latency_ms=latency([ms for r in results for ms in r.add_ms]),
        tasks=dict(tasks), usage=usage, results=results, wall_s=wall_s,
    )
