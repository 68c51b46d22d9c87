"""A small Chinese "simple questions" set (MemDaily-style): one user's everyday messages, each
question answered by one of them ("我家的猫叫什么名字？" → "我们家养了一只橘猫，叫咪咪").

MemDaily itself is not available offline; ``sets/zh_simple.json`` was written for engram,
with distractors that share the questions' words. `run_zh_simple` scores engram against
plain BM25, dense and their RRF (the "BM25+dense" reference) with the retrieval harness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from engram.bench.data import Corpus, Doc, Query, parse_datetime
from engram.bench.retrieval import SYSTEMS, Progress, RetrievalReport, run_corpora


def load_zh_simple(path: str | Path | None = None) -> Corpus:
    """The set as one corpus (the bundled file unless `path` names another of its shape)."""
    if path is None:
        text = resources.files("engram.bench").joinpath("sets/zh_simple.json").read_text("utf-8")
    else:
        text = Path(path).read_text("utf-8")
    data = json.loads(text)
    docs = [
        Doc(id=m["id"], text=m["text"], timestamp=parse_datetime(m.get("time")), session=m.get("session"))
        for m in data["messages"]
    ]
    queries = [
        Query(id=f"zh-simple/q{i}", text=q["q"], relevant=list(q["relevant"]))
        for i, q in enumerate(data["questions"])
    ]
    return Corpus(id="zh-simple", source="engram.bench/sets/zh_simple.json", language="zh", docs=docs, queries=queries)


def run_zh_simple(
    systems: Iterable[str] = SYSTEMS, ks: Iterable[int] = (1, 3, 5, 10), *, path: str | Path | None = None,
    engram_settings: dict | None = None, progress: Progress | None = None,
) -> RetrievalReport:
    return run_corpora(
        [load_zh_simple(path)], systems=systems, ks=ks, benchmark="zh-simple",
        engram_settings=engram_settings, progress=progress,
    )
