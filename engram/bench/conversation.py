"""`engram bench conversation`: what `add()` keeps of a real conversation, said turn by turn.

The protocol (issue #12), for every LoCoMo conversation:

- every turn is said through `Memory.add` by its speaker (``user_id`` = the speaker, so
  "I" is that speaker): the other speaker's preceding turn as the ``assistant`` message,
  then the turn as the ``user`` message, with the turn's ``dia_id`` in metadata, its
  session as ``session_id`` and its session's date as the timestamp;
- ``conversation`` mode uses the defaults (``infer=True``, no LLM); ``raw`` mode stores
  the same messages verbatim (``infer=False``) for comparison;
- each category 1-4 question is searched in the scope of the speaker it names (both
  speakers' scopes, merged by score, when it names neither or both); a hit counts for
  the evidence turn in its metadata, so recall@k is the share of a question's evidence
  turns among its top k memories.

It reports recall@k per category, turns kept (a turn is kept when any memory carries its
``dia_id``), facts per turn, add and search latency, and — for what is extracted —
observation coverage and support (`engram.bench.extraction.observation_scores`), with the
labelled-sentence precision and recall of the rules beside them.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engram.bench.data import LOCOMO_CATEGORIES, locomo_corpus, locomo_samples, session_turns
from engram.bench.metrics import Latency, latency, mean_recall, ranks_of
from engram.config import Settings

MODES: dict[str, bool] = {"conversation": True, "raw": False}  # mode -> infer
# the labelled sentences of the rules (in a source checkout; an installed wheel has none)
LABELLED_SETS: tuple[Path, ...] = tuple(
    p for p in (Path(__file__).resolve().parents[2] / "tests" / "data" / "extraction").glob("labelled_*.jsonl")
)
DEFAULT_KS: tuple[int, ...] = (1, 5, 10, 20)
Progress = Callable[[str], None]


class ModeReport(BaseModel):
    mode: str
    recall: dict[int, float]
    by_category: dict[str, dict[int, float]] = Field(default_factory=dict)
    turns: int = 0
    turns_kept: float = Field(0.0, description="share of turns with at least one memory")
    facts: int = 0
    facts_per_turn: float = 0.0
    episodes: int = 0
    coverage: float | None = Field(None, description="share of annotated observations covered by facts")
    support: float | None = Field(None, description="share of facts supported by an observation of their turn")
    add_ms: Latency
    search_ms: Latency


class ConversationReport(BaseModel):
    benchmark: str = "conversation"
    started_at: datetime
    wall_s: float = 0.0
    conversations: list[str]
    questions: int
    questions_by_category: dict[str, int]
    ks: list[int]
    modes: list[ModeReport]
    labelled: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="precision/recall of the rules on the labelled sentences, per language"
    )
    json_path: str | None = None


def _messages(previous: str | None, text: str) -> list[dict[str, str]]:
    said = [{"role": "assistant", "content": previous}] if previous else []
    return said + [{"role": "user", "content": text}]


def _scopes(question: str, speakers: Sequence[str]) -> list[str]:
    """The speakers a question is about: those it names, else both."""
    lowered = question.lower()
    named = [s for s in speakers if s.lower() in lowered]
    return named if len(named) == 1 else list(speakers)


class _Run:
    """One mode on one conversation: say every turn, then search every question."""

    def __init__(self, infer: bool, embedder: Any, settings: dict[str, Any]) -> None:
        from engram.memory import Memory

        self._tmp = tempfile.TemporaryDirectory(prefix="engram-conv-")
        self.memory = Memory(
            settings=Settings(path=Path(self._tmp.name) / "conv.db", reinforce=False, **settings),
            embedder=embedder,
        )
        self.infer = infer
        self.add_ms: list[float] = []
        self.search_ms: list[float] = []

    def say(self, conversation: dict[str, Any]) -> datetime | None:
        last: datetime | None = None
        for session, when, turns in session_turns(conversation):
            previous: dict[str, Any] | None = None
            for index, turn in enumerate(turns):
                said_at = None if when is None else when + timedelta(seconds=index)
                other = previous["text"] if previous and previous["speaker"] != turn["speaker"] else None
                began = time.perf_counter()
                self.memory.add(
                    _messages(other, turn["text"]), user_id=turn["speaker"], session_id=session,
                    metadata={"dia_id": turn["dia_id"]}, timestamp=said_at, infer=self.infer,
                )
                self.add_ms.append((time.perf_counter() - began) * 1000.0)
                previous = turn
                last = said_at or last
        return last

    def search(self, question: str, speakers: Sequence[str], limit: int, now: datetime | None) -> list[str]:
        began = time.perf_counter()
        hits = []
        for speaker in _scopes(question, speakers):
            hits += self.memory.search(question, user_id=speaker, limit=limit, now=now)
        self.search_ms.append((time.perf_counter() - began) * 1000.0)
        hits.sort(key=lambda h: -h.score)
        return [str(h.memory.metadata.get("dia_id")) for h in hits[:limit]]

    def kept(self, speakers: Sequence[str]) -> tuple[dict[str, list[str]], set[str], int, int]:
        """Facts by turn (what extraction kept, any status: a fact said again is kept from each
        turn that said it, as its provenance lists them), turns with any memory, episodes, and
        facts (each once)."""
        from engram.kinds import RESTATED_KEY
        from engram.models import Kind

        facts: dict[str, list[str]] = {}
        turns: set[str] = set()
        episodes = distinct = 0
        for speaker in speakers:
            items = self.memory.get_all(user_id=speaker, filters={"status": []}, limit=None)
            turn_of = {i.id: str(i.metadata["dia_id"]) for i in items if i.kind is Kind.TURN and "dia_id" in i.metadata}
            for item in items:
                dia_id = item.metadata.get("dia_id")
                if dia_id is None:
                    continue
                turns.add(str(dia_id))
                if item.kind is Kind.TURN:
                    episodes += 1
                elif item.kind is not Kind.SUMMARY:
                    distinct += 1
                    again = (turn_of.get(e) for e in item.metadata.get(RESTATED_KEY, ()))
                    for turn in dict.fromkeys([str(dia_id), *filter(None, again)]):
                        facts.setdefault(turn, []).append(item.content)
        return facts, turns, episodes, distinct

    def close(self) -> None:
        self.memory.close()
        self._tmp.cleanup()


def run_conversation(
    files: Iterable[str | Path],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    modes: Sequence[str] = tuple(MODES),
    out_dir: str | Path | None = None,
    engram_settings: dict[str, Any] | None = None,
    labelled: Sequence[str | Path] = (),
    progress: Progress | None = None,
) -> ConversationReport:
    """The conversation protocol over every LoCoMo conversation in `files`."""
    from engram.bench.extraction import labelled_scores, observation_scores
    from engram.providers.embedders import make_embedder

    started, began = datetime.now().astimezone(), time.perf_counter()
    settings = dict(engram_settings or {})
    embedder = make_embedder(Settings(**settings))
    ks = sorted(set(ks))
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {', '.join(unknown)}; expected {', '.join(MODES)}")
    samples = [s for path in files for s in locomo_samples(json.loads(Path(path).read_text("utf-8")), Path(path).stem)]
    ranks: dict[str, list[tuple[int | None, list[int | None]]]] = {m: [] for m in modes}
    stats: dict[str, dict[str, Any]] = {
        m: {"add": [], "search": [], "turns": 0, "kept": 0, "facts": 0, "episodes": 0, "obs": [], "sup": []}
        for m in modes
    }
    by_category: dict[str, int] = {}
    for sample_id, conversation, qa in samples:
        corpus = locomo_corpus(sample_id, conversation, qa)
        speakers = [s for s in (conversation.get("speaker_a"), conversation.get("speaker_b")) if s]
        for query in corpus.queries:
            name = LOCOMO_CATEGORIES.get(query.category or 0, "other")
            by_category[name] = by_category.get(name, 0) + 1
        for mode in modes:
            if progress:
                progress(f"{sample_id}: {mode} mode, saying {len(corpus.docs)} turns")
            run = _Run(MODES[mode], embedder, settings)
            try:
                now = run.say(conversation)
                if progress:
                    progress(f"{sample_id}: {mode} mode, {len(corpus.queries)} questions")
                for query in corpus.queries:
                    found = run.search(query.text, speakers, max(ks), now)
                    ranks[mode].append((query.category, ranks_of(found, query.relevant)))
                facts, turns, episodes, distinct = run.kept(speakers)
                scores = observation_scores(conversation, facts)
                numbers = stats[mode]
                numbers["add"] += run.add_ms
                numbers["search"] += run.search_ms
                numbers["turns"] += len(corpus.docs)
                numbers["kept"] += len(turns)
                numbers["facts"] += distinct
                numbers["episodes"] += episodes
                numbers["obs"].append((scores["coverage"], scores["observations"]))
                numbers["sup"].append((scores["support"], scores["facts"]))
            finally:
                run.close()
    reports = [_mode_report(mode, ranks[mode], stats[mode], ks) for mode in modes]
    report = ConversationReport(
        started_at=started, conversations=[s[0] for s in samples],
        questions=len(ranks[modes[0]]) if modes else 0, questions_by_category=by_category, ks=ks,
        modes=reports, labelled={str(Path(p).stem): labelled_scores(p) for p in labelled},
    )
    report.wall_s = time.perf_counter() - began
    if out_dir is not None:
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"conversation-{started:%Y%m%d-%H%M%S}.json"
        report.json_path = str(path)
        path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report


def _weighted(pairs: list[tuple[float, int]]) -> float | None:
    total = sum(n for _, n in pairs)
    return sum(v * n for v, n in pairs) / total if total else None


def _mode_report(
    mode: str, ranks: list[tuple[int | None, list[int | None]]], numbers: dict[str, Any], ks: Sequence[int]
) -> ModeReport:
    categories: dict[str, list[list[int | None]]] = {}
    for category, found in ranks:
        categories.setdefault(LOCOMO_CATEGORIES.get(category or 0, "other"), []).append(found)
    every = [found for _, found in ranks]
    turns = numbers["turns"] or 1
    return ModeReport(
        mode=mode,
        recall={k: mean_recall(every, k) for k in ks},
        by_category={name: {k: mean_recall(found, k) for k in ks} for name, found in categories.items()},
        turns=numbers["turns"], turns_kept=numbers["kept"] / turns, facts=numbers["facts"],
        facts_per_turn=numbers["facts"] / turns, episodes=numbers["episodes"],
        coverage=_weighted(numbers["obs"]), support=_weighted(numbers["sup"]),
        add_ms=latency(numbers["add"]), search_ms=latency(numbers["search"]),
    )
