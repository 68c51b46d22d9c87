"""The labelled EN/ZH sets (tests/data/extraction): precision ≥ 0.95 and recall ≥ 0.80 in each language."""

from pathlib import Path

import pytest

from engram.bench.extraction import labelled_scores

DATA = Path(__file__).parent / "data" / "extraction"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labelled_precision_and_recall(lang):
    r = labelled_scores(DATA / f"labelled_{lang}.jsonl")
    assert r["labelled"] >= 98 and r["produced"] > 0
    assert r["subject_errors"] == 0, r["false_positives"]
    assert r["precision"] >= 0.95, r["false_positives"]
    assert r["recall"] >= 0.80, r["misses"]
