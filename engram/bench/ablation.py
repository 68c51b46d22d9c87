"""LoCoMo ablation: what each part of retrieval adds, one part switched off at a time.

Every row is a full `engram bench locomo` run of the ``engram`` system (public API,
``session_id`` passed) with one part's settings changed; the first row has every part on,
and a last row ingests the same turns in a shuffled order (their order must come from the
conversation: it should match the first row). Reported: R@5 and R@10 overall, R@10 per
category, and the change of R@10 against all parts on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engram.bench.retrieval import Progress, run_locomo

# part -> the settings that switch it off: the turn each turn answers (context), a question
# hit bringing its answer (pairs), named speakers, filler, MMR, dates resolved at ingest,
# time tolerance and relevance scaling (time-soft), the whole time boost (time)
PARTS: dict[str, dict[str, Any]] = {
    "context": {"weight_context": 0.0},
    "pairs": {"pair_factor": 0.0},
    "speakers": {"weight_speaker": 0.0, "speaker_name_weight": 1.0},
    "filler": {"filler_factor": 1.0},
    "diversity": {"diversity_copy": 0.0, "diversity_session": 0.0},
    "dates": {"resolve_dates": False},
    "time-soft": {"time_tolerance_days": 0.0, "time_by_relevance": False},
    "time": {"weight_time": 0.0},
}
ALL_ON = "all parts on"
SHUFFLED = "all on, shuffled ingest"


class AblationRow(BaseModel):
    name: str
    settings: dict[str, Any]
    recall_5: float
    recall_10: float
    by_category: dict[str, float]  # R@10
    delta_10: float = 0.0  # against all parts on
    search_p50_ms: float


class AblationReport(BaseModel):
    files: list[str]
    n_queries: int
    base_settings: dict[str, Any]
    rows: list[AblationRow]


def run_ablation(
    files: Iterable[str | Path],
    parts: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    base_settings: Mapping[str, Any] | None = None,
    shuffle_seed: int | None = 13,
    max_sessions: int | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> AblationReport:
    """One LoCoMo run with every part on, one per part switched off, and (with `shuffle_seed`)
    one with the turns ingested shuffled. With `out_dir`, writes ``locomo-ablation.json``."""
    paths = [str(p) for p in files]
    chosen = dict(PARTS if parts is None else parts)
    base = dict(base_settings or {})
    runs: list[tuple[str, dict[str, Any], int | None]] = [(ALL_ON, {}, None)]
    runs += [(name, dict(off), None) for name, off in chosen.items()]
    if shuffle_seed is not None:
        runs.append((SHUFFLED, {}, shuffle_seed))
    rows: list[AblationRow] = []
    n_queries = 0
    for number, (name, off, seed) in enumerate(runs, 1):
        if progress:
            progress(f"[{number}/{len(runs)}] {name}")
        report = run_locomo(
            paths, systems=["engram"], ks=(5, 10), max_sessions=max_sessions,
            engram_settings={**base, **off}, shuffle_seed=seed,
        )
        system = report.system("engram")
        n_queries = report.n_queries
        rows.append(AblationRow(
            name=name, settings=off, recall_5=system.overall.recall[5], recall_10=system.overall.recall[10],
            by_category={c: s.recall[10] for c, s in system.by_category.items()},
            search_p50_ms=system.search_ms.p50,
        ))
    for row in rows:
        row.delta_10 = row.recall_10 - rows[0].recall_10
    result = AblationReport(files=paths, n_queries=n_queries, base_settings=base, rows=rows)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "locomo-ablation.json").write_text(json.dumps(result.model_dump(), indent=1), encoding="utf-8")
    return result


def markdown(report: AblationReport) -> str:
    """The ablation as a Markdown table (for closing notes and READMEs)."""
    categories = list(report.rows[0].by_category) if report.rows else []
    head = ["part switched off", "R@5", "R@10", "ΔR@10", *categories]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in report.rows:
        cells = [row.name, f"{row.recall_5:.3f}", f"{row.recall_10:.3f}", f"{row.delta_10:+.3f}"]
        cells += [f"{row.by_category.get(c, 0.0):.3f}" for c in categories]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
