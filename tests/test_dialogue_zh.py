"""The Chinese "simple questions" set (engram.bench.zh_simple): engram is not worse than
BM25+dense (their RRF), and the dialogue parts cost it nothing."""

from __future__ import annotations

from engram.bench.zh_simple import load_zh_simple, run_zh_simple


def test_the_set_is_well_formed():
    corpus = load_zh_simple()
    ids = {d.id for d in corpus.docs}
    assert len(corpus.docs) >= 40 and len(corpus.queries) >= 30
    assert all(set(q.relevant) <= ids for q in corpus.queries)


def test_engram_is_not_worse_than_bm25_plus_dense():
    report = run_zh_simple(systems=["engram", "rrf"], ks=(1, 5))
    engram, rrf = report.system("engram").overall, report.system("rrf").overall
    assert engram.recall[5] >= rrf.recall[5] and engram.recall[1] >= rrf.recall[1]
    assert engram.recall[5] >= 0.9
