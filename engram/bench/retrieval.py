"""Retrieval benchmarks: LoCoMo and MADial-Bench recall and latency, engram against baselines.

For every corpus (a LoCoMo conversation, a MADial user) each system gets a
fresh index: engram a fresh temporary database (`Memory` with
``reinforce=False`` so searching does not change later rankings), ingesting
every document with `Memory.add_many` (``infer=False``, one scope per corpus,
the document's timestamp, its id in metadata), timed per document; then every
query is searched (``limit = max(ks)``; relative dates such as "last year" read
from the corpus's latest document, ``now=``) and timed, and results are mapped back
to document ids through the metadata.

Systems:

==============  ===========================================================
``engram``       engram with default settings (hybrid: BM25 ∥ dense → fusion)
``engram-bm25``  engram with ``weight_dense=0`` (its lexical retriever only)
``engram-dense`` engram with ``weight_lexical=0`` (its dense retriever only)
``bm25``         plain BM25 in numpy (`engram.bench.baselines`)
``dense``        wordllama cosine in numpy
``rrf``          RRF (k=60) of ``bm25`` and ``dense``
==============  ===========================================================
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engram.bench.baselines import BASELINES, make_baseline
from engram.bench.data import LOCOMO_CATEGORIES, Corpus, load_locomo, load_madial
from engram.bench.metrics import Latency, mean_all, mean_recall, mrr, percentiles, ranks_of
from engram.config import Settings

ENGRAM_SYSTEMS: dict[str, dict[str, Any]] = {
    "engram": {},
    "engram-bm25": {"weight_dense": 0.0},
    "engram-dense": {"weight_lexical": 0.0},
}
SYSTEMS: tuple[str, ...] = (*ENGRAM_SYSTEMS, *BASELINES)
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10, 20)
DEFAULT_LIMIT = Settings.model_fields["search_limit"].default
DESCRIPTIONS = {
    "engram": "engram, default settings",
    "engram-bm25": "engram, weight_dense=0",
    "engram-dense": "engram, weight_lexical=0",
    "bm25": "plain BM25 (numpy)",
    "dense": "wordllama cosine (numpy)",
    "rrf": "RRF(k=60) of bm25 and dense",
}

Progress = Callable[[str], None]


class Scores(BaseModel):
    n: int
    recall: dict[int, float]
    all_at: dict[int, float]
    mrr: float


class QueryResult(BaseModel):
    id: str
    category: int | None = None
    relevant: list[str]
    ranks: list[int | None] = Field(description="rank of each relevant document (None: not in the top max(k))")
    retrieved: list[str]
    search_ms: float


class SystemReport(BaseModel):
    system: str
    description: str = ""
    overall: Scores
    by_category: dict[str, Scores] = Field(default_factory=dict)
    ingest_ms: Latency = Field(description="per document (a batch's time divided among its documents)")
    search_ms: Latency
    search_default_ms: Latency | None = Field(
        None, description="a second pass at the default limit (5): what an agent's search costs"
    )
    ingest_total_s: float = 0.0
    stored: int = Field(0, description="documents the system actually stored")
    queries: list[QueryResult] = Field(default_factory=list)


class CorpusInfo(BaseModel):
    id: str
    source: str
    docs: int
    queries: int
    skipped: dict[str, int]


class RetrievalReport(BaseModel):
    benchmark: str
    started_at: datetime
    wall_s: float = 0.0
    ks: list[int]
    corpora: list[CorpusInfo]
    n_docs: int
    n_queries: int
    queries_by_category: dict[str, int] = Field(default_factory=dict)
    systems: list[SystemReport]
    engram_settings: dict[str, Any] = Field(default_factory=dict)
    ingest_batch: int = 1
    embedder: str = Field("", description="the embedder engram's systems ran with")
    embed_ms: dict[str, float] = Field(
        default_factory=dict,
        description="its cost: one short text, one long text, per text in a batch of 64, a one-line question",
    )
    json_path: str | None = None
    png_path: str | None = None

    def system(self, name: str) -> SystemReport:
        for report in self.systems:
            if report.system == name:
                return report
        raise KeyError(name)


class LocomoReport(RetrievalReport):
    pass


class MadialReport(RetrievalReport):
    language: str | None = None


# --- running systems -------------------------------------------------------------
class _Run:
    """One system on one corpus: ingest, then ranked document ids per query."""

    def __init__(self, name: str, corpus: Corpus, embedder: Any, settings: Mapping[str, Any],
                 ingest_batch: int, id_key: str, shuffle_seed: int | None = None) -> None:
        self.name = name
        self.corpus = corpus
        self.embedder = embedder
        self.settings = settings
        self.ingest_batch = max(1, ingest_batch)
        self.id_key = id_key
        self.shuffle_seed = shuffle_seed
        self.ingest_ms: list[float] = []
        self.stored = 0
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._memory: Any = None
        self._index: Any = None
        self._now: datetime | None = None

    def ingest(self) -> None:
        docs = self.corpus.docs
        if self.shuffle_seed is not None:  # order must come from the documents, not the import
            docs = random.Random(self.shuffle_seed).sample(docs, len(docs))
        if self.name in ENGRAM_SYSTEMS:
            from engram.memory import Memory

            self._tmp = tempfile.TemporaryDirectory(prefix="engram-bench-")
            settings = Settings(
                path=Path(self._tmp.name) / "bench.db",
                reinforce=False,
                **{**self.settings, **ENGRAM_SYSTEMS[self.name]},
            )
            self._memory = Memory(settings=settings, embedder=self.embedder)
            self.scope = f"bench-{self.corpus.id}"
            # questions about a replayed conversation read "last year" from its end, not today
            self._now = max((d.timestamp for d in docs if d.timestamp is not None), default=None)
            for start in range(0, len(docs), self.ingest_batch):
                batch = docs[start : start + self.ingest_batch]
                entries = [
                    {
                        "messages": d.text,
                        "user_id": self.scope,
                        "infer": False,
                        "timestamp": d.timestamp,
                        "session_id": d.session,
                        "metadata": {self.id_key: d.id},
                    }
                    for d in batch
                ]
                began = time.perf_counter()
                events = self._memory.add_many(entries)
                elapsed = (time.perf_counter() - began) * 1000.0
                self.ingest_ms += [elapsed / len(batch)] * len(batch)
                self.stored += len(events)
        else:
            self._index = make_baseline(self.name, self.embedder)
            began = time.perf_counter()
            self._index.build([d.text for d in docs])
            elapsed = (time.perf_counter() - began) * 1000.0
            self.ingest_ms = [elapsed / max(1, len(docs))] * len(docs)
            self.stored = len(docs)

    def search(self, text: str, limit: int) -> list[str]:
        if self._memory is not None:
            results = self._memory.search(text, user_id=self.scope, limit=limit, now=self._now)
            return [str(r.memory.metadata.get(self.id_key)) for r in results]
        return [self.corpus.docs[i].id for i in self._index.search(text, limit)]

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
        if self._tmp is not None:
            self._tmp.cleanup()


def _embed_latency(embedder: Any, repeat: int = 5) -> dict[str, float]:
    """What the embedder costs, warm (median ms): a short text, a long one, a text in a batch of 64,
    and a one-line question the way a search embeds it (USE: from its token vectors)."""
    import statistics

    short = ["What martial art does she practise these days?"]
    long = [" ".join(["I told you about the trip to the mountains with my sister last spring."] * 12)]
    batch = [f"{short[0]} ({i})" for i in range(64)]

    def median_ms(texts: list[str], runs: int, embed: Callable[[list[str]], Any] = embedder.embed) -> float:
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            embed(texts)
            times.append((time.perf_counter() - began) * 1000.0)
        return round(statistics.median(times), 3)

    embed_query = getattr(embedder, "embed_query", None)
    one = median_ms(short, repeat * 4)
    return {
        "short": one, "long": median_ms(long, repeat), "batched": round(median_ms(batch, 2) / len(batch), 3),
        "query": median_ms(short, repeat * 4, lambda t: embed_query(t[0])) if embed_query else one,
    }


def _scores(results: Sequence[QueryResult], ks: Sequence[int]) -> Scores:
    ranks = [r.ranks for r in results]
    return Scores(
        n=len(results),
        recall={k: mean_recall(ranks, k) for k in ks},
        all_at={k: mean_all(ranks, k) for k in ks},
        mrr=mrr(ranks),
    )


def run_corpora(
    corpora: Sequence[Corpus],
    *,
    systems: Iterable[str] = SYSTEMS,
    ks: Iterable[int] = DEFAULT_KS,
    benchmark: str = "retrieval",
    categories: Mapping[int, str] | None = None,
    ingest_batch: int = 1,
    engram_settings: Mapping[str, Any] | None = None,
    id_key: str = "doc_id",
    progress: Progress | None = None,
    report_cls: type[RetrievalReport] = RetrievalReport,
    shuffle_seed: int | None = None,
    **report_fields: Any,
) -> RetrievalReport:
    """Every system over every corpus; one report with per-category scores and latencies.
    With `shuffle_seed`, each corpus is ingested in a shuffled order."""
    systems = list(dict.fromkeys(systems))
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown system(s) {', '.join(unknown)}; known: {', '.join(SYSTEMS)}")
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1:
        raise ValueError("ks must be positive integers")
    limit = max(ks)
    overrides = dict(engram_settings or {})
    started, began = datetime.now(UTC), time.perf_counter()

    from engram.providers.embedders import WordLlamaEmbedder, make_embedder

    # engram's systems use the configured embedder; the `dense`/`rrf` baselines stay wordllama
    embedder = make_embedder(Settings(**overrides))  # `--set fast_queries=false` reaches it too
    baseline_embedder = embedder if isinstance(embedder, WordLlamaEmbedder) else WordLlamaEmbedder()
    embedder.embed(["warm up"])  # load the models outside the timings
    baseline_embedder.embed(["warm up"])
    embed_ms = _embed_latency(embedder)

    results: dict[str, list[QueryResult]] = {s: [] for s in systems}
    ingest: dict[str, list[float]] = {s: [] for s in systems}
    stored: dict[str, int] = {s: 0 for s in systems}
    default_ms: dict[str, list[float]] = {s: [] for s in systems}
    for number, corpus in enumerate(corpora, 1):
        for name in systems:
            if progress:
                progress(f"[{number}/{len(corpora)}] {corpus.id}: {name}")
            run = _Run(
                name, corpus, embedder if name in ENGRAM_SYSTEMS else baseline_embedder,
                overrides, ingest_batch, id_key, shuffle_seed,
            )
            try:
                run.ingest()
                for query in corpus.queries:
                    t0 = time.perf_counter()
                    retrieved = run.search(query.text, limit)
                    elapsed = (time.perf_counter() - t0) * 1000.0
                    results[name].append(
                        QueryResult(
                            id=query.id,
                            category=query.category,
                            relevant=query.relevant,
                            ranks=ranks_of(retrieved, query.relevant),
                            retrieved=retrieved,
                            search_ms=elapsed,
                        )
                    )
                if run.name in ENGRAM_SYSTEMS:  # again, at the limit an agent asks for
                    for query in corpus.queries:
                        t0 = time.perf_counter()
                        run.search(query.text, DEFAULT_LIMIT)
                        default_ms[name].append((time.perf_counter() - t0) * 1000.0)
            finally:
                run.close()
            ingest[name] += run.ingest_ms
            stored[name] += run.stored

    category_names = dict(categories or {})
    reports = []
    for name in systems:
        found = results[name]
        by_category = {}
        for code, label in category_names.items():
            subset = [r for r in found if r.category == code]
            if subset:
                by_category[label] = _scores(subset, ks)
        reports.append(
            SystemReport(
                system=name,
                description=DESCRIPTIONS.get(name, ""),
                overall=_scores(found, ks),
                by_category=by_category,
                ingest_ms=Latency(**percentiles(ingest[name])),
                search_ms=Latency(**percentiles([r.search_ms for r in found])),
                search_default_ms=Latency(**percentiles(default_ms[name])) if default_ms[name] else None,
                ingest_total_s=sum(ingest[name]) / 1000.0,
                stored=stored[name],
                queries=found,
            )
        )
    all_queries = [q for c in corpora for q in c.queries]
    return report_cls(
        benchmark=benchmark,
        started_at=started,
        wall_s=time.perf_counter() - began,
        ks=ks,
        corpora=[
            CorpusInfo(id=c.id, source=c.source, docs=len(c.docs), queries=len(c.queries), skipped=c.skipped)
            for c in corpora
        ],
        n_docs=sum(len(c.docs) for c in corpora),
        n_queries=len(all_queries),
        queries_by_category={
            label: sum(1 for q in all_queries if q.category == code) for code, label in category_names.items()
        },
        systems=reports,
        engram_settings=overrides,
        ingest_batch=ingest_batch,
        embedder=embedder.name,
        embed_ms=embed_ms,
        **report_fields,
    )


# --- entry points ----------------------------------------------------------------
def _paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    if isinstance(paths, (str, Path)):
        return [Path(paths)]
    return [Path(p) for p in paths]


def run_locomo(
    path: str | Path | Iterable[str | Path],
    systems: Iterable[str] = SYSTEMS,
    ks: Iterable[int] = DEFAULT_KS,
    *,
    out_dir: str | Path | None = None,
    max_sessions: int | None = None,
    ingest_batch: int = 1,
    engram_settings: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    shuffle_seed: int | None = None,
) -> LocomoReport:
    """LoCoMo turn-level retrieval over one or more files (either LoCoMo layout).

    With `out_dir`, writes ``locomo.json`` and ``locomo.png`` there; with `shuffle_seed`, the
    turns are ingested in a shuffled order (their order must come from the conversation).
    """
    corpora = [c for p in _paths(path) for c in load_locomo(p, max_sessions=max_sessions)]
    report = run_corpora(
        corpora, systems=systems, ks=ks, benchmark="locomo", categories=LOCOMO_CATEGORIES,
        ingest_batch=ingest_batch, engram_settings=engram_settings, id_key="dia_id",
        progress=progress, report_cls=LocomoReport, shuffle_seed=shuffle_seed,
    )
    if out_dir is not None:
        write_outputs(report, out_dir, "locomo")
    return report  # type: ignore[return-value]


def run_madial(
    path: str | Path,
    lang: str | None = None,
    systems: Iterable[str] = SYSTEMS,
    ks: Iterable[int] = DEFAULT_KS,
    *,
    memories: str | None = None,
    out_dir: str | Path | None = None,
    with_scene: bool = True,
    all_test_turns: bool = False,
    ingest_batch: int = 1,
    engram_settings: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> MadialReport:
    """MADial-Bench memory recall for one language folder (``zh``/``en`` under `path`, or `path` itself);
    with `memories` another language than `lang`, its dialogues over that language's memories
    (``madial-zh-to-en``, `cross_language_corpora`).

    With `out_dir`, writes ``{benchmark}.json`` and ``.png`` there.
    """
    if memories and lang and memories != lang:
        corpora = cross_language_corpora(path, lang, memories, with_scene=with_scene, all_test_turns=all_test_turns)
        benchmark, language = f"madial-{lang}-to-{memories}", f"{lang}->{memories}"
    else:
        corpora = load_madial(path, lang, with_scene=with_scene, all_test_turns=all_test_turns)
        benchmark, language = (f"madial-{lang}" if lang else "madial"), lang
    report = run_corpora(
        corpora, systems=systems, ks=ks, benchmark=benchmark,
        ingest_batch=ingest_batch, engram_settings=engram_settings, id_key="memory_id",
        progress=progress, report_cls=MadialReport, language=language,
    )
    if out_dir is not None:
        write_outputs(report, out_dir, report.benchmark)
    return report  # type: ignore[return-value]


def cross_language_corpora(
    path: str | Path, query_lang: str, memory_lang: str, *, with_scene: bool = True, all_test_turns: bool = False
) -> list[Corpus]:
    """MADial's parallel data read across languages: the `memory_lang` memories, searched with the
    `query_lang` dialogues (the same memory ids in both). A user's corpora are paired by user
    (or one with one); relevant ids missing from the other language are left out."""
    asked = load_madial(path, query_lang, with_scene=with_scene, all_test_turns=all_test_turns)
    held = load_madial(path, memory_lang, with_scene=with_scene, all_test_turns=all_test_turns)

    def user(corpus: Corpus) -> str:
        return corpus.id.rsplit("-u", 1)[1] if "-u" in corpus.id else ""

    out = []
    for queries in asked:
        memories = next((c for c in held if user(c) == user(queries)), held[0] if len(held) == 1 else None)
        if memories is None:
            continue
        known = {d.id for d in memories.docs}
        kept, skipped = [], dict(queries.skipped)
        for query in queries.queries:
            relevant = [r for r in query.relevant if r in known]
            if relevant:
                kept.append(query.model_copy(update={"relevant": relevant}))
            else:
                skipped["queries whose memories the other language lacks"] = skipped.get(
                    "queries whose memories the other language lacks", 0) + 1
        out.append(Corpus(
            id=f"madial-{query_lang}-to-{memory_lang}" + (f"-u{user(queries)}" if user(queries) else ""),
            source=f"{queries.source} -> {memories.source}", language=f"{query_lang}->{memory_lang}",
            docs=memories.docs, queries=kept, skipped=skipped,
        ))
    return out


# --- outputs ---------------------------------------------------------------------
def write_outputs(report: RetrievalReport, out_dir: str | Path, stem: str) -> RetrievalReport:
    """Write ``{stem}.json`` then ``{stem}.png`` under `out_dir`; record their paths in the report.

    The results are written first: a chart that cannot be drawn (no matplotlib) loses nothing,
    and the report's `png_path` stays None."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, png_path = out / f"{stem}.json", out / f"{stem}.png"
    report.json_path = str(json_path)
    json_path.write_text(
        json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    try:
        import matplotlib  # noqa: F401  (optional: the [bench] extra)
    except ImportError:
        return report
    report.png_path = str(plot_recall(report, png_path))
    return report


def plot_recall(report: RetrievalReport, path: str | Path) -> Path:
    """Recall@k per system (left) and recall@10 (or the largest k ≤ 10) per category (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    categories = list(report.queries_by_category) if report.queries_by_category else []
    columns = 2 if categories else 1
    fig, axes = plt.subplots(1, columns, figsize=(6.5 * columns, 4.5), squeeze=False)
    left = axes[0][0]
    for system in report.systems:
        ks = sorted(system.overall.recall)
        engram = system.system in ENGRAM_SYSTEMS
        left.plot(
            ks, [system.overall.recall[k] for k in ks], marker="o" if engram else "s",
            linestyle="-" if engram else "--", label=system.system,
        )
    left.set_xscale("log")
    left.set_xticks(report.ks, [str(k) for k in report.ks])
    left.minorticks_off()
    left.set_xlabel("k")
    left.set_ylabel("recall@k")
    left.set_ylim(0, 1)
    left.grid(alpha=0.3)
    left.set_title(f"{report.benchmark}: {report.n_queries} queries, {report.n_docs} documents")
    left.legend(fontsize=8)
    if categories:
        k = max([k for k in report.ks if k <= 10] or report.ks[:1])
        right = axes[0][1]
        width = 0.8 / max(1, len(report.systems))
        for i, system in enumerate(report.systems):
            values = [
                system.by_category[c].recall[k] if c in system.by_category else 0.0 for c in categories
            ]
            right.bar(
                [j + i * width for j in range(len(categories))], values, width, label=system.system,
                hatch="" if system.system in ENGRAM_SYSTEMS else "//",
            )
        right.set_xticks(
            [j + width * (len(report.systems) - 1) / 2 for j in range(len(categories))],
            [f"{c}\n(n={report.queries_by_category[c]})" for c in categories],
        )
        right.set_ylim(0, 1)
        right.set_ylabel(f"recall@{k}")
        right.set_title(f"recall@{k} by category")
        right.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
