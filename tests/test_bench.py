"""engram.bench: loaders, metrics, baselines, an end-to-end LoCoMo run and the CLI, on tiny slices."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engram.bench.baselines import BM25Index, plain_tokens
from engram.bench.data import load_locomo, load_madial, parse_datetime, parse_evidence
from engram.bench.metrics import all_at, mean_all, mean_recall, mrr, percentiles, ranks_of, recall_at

DATA = Path(__file__).parents[1].parent / "shared" / "data"
LOCOMO = DATA / "locomo-dev" / "26.json"
MADIAL = DATA / "madial-dev"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared evaluation data not found at {path} (expected next to the repository)")
    return path


@pytest.fixture(scope="module")
def tiny_locomo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sessions 1-2 of conversation 26, its questions, and one exact-quote question."""
    data = json.loads(need(LOCOMO).read_text(encoding="utf-8"))
    keep = {
        k: v for k, v in data.items()
        if not (m := re.match(r"(?:events_)?session_(\d+)", k)) or int(m[1]) <= 2
    }
    turns = keep["session_2"]
    quoted = max(turns, key=lambda t: len(t["text"]))
    keep["qa"] = data["qa"] + [
        {"question": quoted["text"], "answer": "-", "evidence": [quoted["dia_id"]], "category": 4}
    ]
    path = tmp_path_factory.mktemp("locomo") / "tiny.json"
    path.write_text(json.dumps(keep), encoding="utf-8")
    return path


# --- loaders ---------------------------------------------------------------------
def test_lenient_evidence_parser() -> None:
    assert parse_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert parse_evidence("D:11:26") == ["D11:26"]
    assert parse_evidence(["D30:05", "D30:5"]) == ["D30:5"]
    assert parse_evidence(None) == [] and parse_evidence(["nonsense"]) == []


def test_locomo_dates() -> None:
    assert parse_datetime("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
    assert parse_datetime("12:48 am on 1 February, 2023").isoformat() == "2023-02-01T00:48:00+00:00"
    assert parse_datetime("2023-12-25").isoformat() == "2023-12-25T00:00:00+00:00"
    assert parse_datetime("sometime") is None


def test_load_locomo_slice(tiny_locomo: Path) -> None:
    [corpus] = load_locomo(tiny_locomo)
    ids = {d.id for d in corpus.docs}
    assert corpus.docs[0].id == "D1:1"
    assert corpus.docs[0].text.startswith("Caroline: ")
    assert corpus.docs[0].timestamp.isoformat() == "2023-05-08T13:56:00+00:00"
    assert all(d.id.startswith(("D1:", "D2:")) for d in corpus.docs)
    assert any("[shares a photo:" in d.text for d in corpus.docs) == any(
        "blip_caption" in t for s in ("session_1", "session_2")
        for t in json.loads(tiny_locomo.read_text())[s]
    )
    assert corpus.queries and all(set(q.relevant) <= ids for q in corpus.queries)
    assert {q.category for q in corpus.queries} <= {1, 2, 3, 4}
    assert corpus.skipped["questions of category 5"] > 0
    assert corpus.skipped["questions without valid evidence"] > 0


def test_load_locomo_list_format(tiny_locomo: Path, tmp_path: Path) -> None:
    data = json.loads(tiny_locomo.read_text())
    qa = data.pop("qa")
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([{"sample_id": "conv-26", "conversation": data, "qa": qa}]))
    [corpus] = load_locomo(path)
    [flat] = load_locomo(tiny_locomo)
    assert corpus.id == "conv-26"
    assert [d.text for d in corpus.docs] == [d.text for d in flat.docs]
    assert [q.relevant for q in corpus.queries] == [q.relevant for q in flat.queries]


def test_load_madial_slice(tmp_path: Path) -> None:
    source = need(MADIAL / "zh")
    for name in ("memory.jsonl", "dialogue.jsonl"):
        lines = (source / name).read_text(encoding="utf-8").splitlines()[:5]
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    [corpus] = load_madial(tmp_path)
    assert len(corpus.docs) == 5
    assert corpus.docs[0].id == "1" and "圣诞节" in corpus.docs[0].text
    assert corpus.docs[0].timestamp.isoformat() == "2023-12-25T00:00:00+00:00"
    ids = {d.id for d in corpus.docs}
    for query in corpus.queries:
        assert set(query.relevant) <= ids
        assert "<BOD>" not in query.text and query.text.startswith("<Bart>")
    first = json.loads((tmp_path / "dialogue.jsonl").read_text(encoding="utf-8").splitlines()[0])
    turn = first["test-turn"][0]
    assert corpus.queries[0].text.count("\n") == turn - 2  # lines 1 .. turn-1
    assert first["dialogue"][turn].split(":", 1)[1].strip()[:15] not in corpus.queries[0].text


# --- metrics ---------------------------------------------------------------------
def test_metrics_on_hand_made_rankings() -> None:
    a = ranks_of(["x", "b", "y", "a"], ["a", "b"])  # ranks 4 and 2
    b = ranks_of(["c", "z"], ["c"])  # rank 1
    c = ranks_of(["z", "y"], ["q", "r"])  # nothing found
    assert a == [4, 2] and b == [1] and c == [None, None]
    assert recall_at(a, 1) == 0.0 and recall_at(a, 2) == 0.5 and recall_at(a, 4) == 1.0
    assert all_at(a, 3) == 0.0 and all_at(a, 4) == 1.0
    queries = [a, b, c]
    assert mean_recall(queries, 1) == pytest.approx(1 / 3)
    assert mean_recall(queries, 2) == pytest.approx(0.5)
    assert mean_recall(queries, 4) == pytest.approx(2 / 3)
    assert mean_all(queries, 2) == pytest.approx(1 / 3)
    assert mean_all(queries, 4) == pytest.approx(2 / 3)
    assert mrr(queries) == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    stats = percentiles([float(v) for v in range(1, 101)])
    assert stats["p50"] == pytest.approx(50.5) and stats["p95"] == pytest.approx(95.05)
    assert stats["p99"] == pytest.approx(99.01) and stats["n"] == 100


def test_plain_bm25() -> None:
    assert plain_tokens("I like 绿茶 and Tea") == ["like", "绿茶", "and", "tea"]
    assert plain_tokens("喜欢绿茶") == ["喜欢", "欢绿", "绿茶"]
    index = BM25Index()
    index.build(["the cat sat on the mat", "dogs chase cats", "我喜欢喝绿茶", "a mat of grass"])
    assert index.search("cat mat", 2) == [0, 3]
    assert index.search("绿茶", 5) == [2]
    assert index.search("unrelated", 5) == []


# --- end to end ------------------------------------------------------------------
def test_run_locomo_end_to_end(tiny_locomo: Path, tmp_path: Path) -> None:
    from engram.bench.retrieval import run_locomo

    report = run_locomo(tiny_locomo, systems=["engram", "bm25", "rrf"], ks=(1, 5, 10), out_dir=tmp_path)
    assert Path(report.json_path).is_file() and Path(report.png_path).is_file()
    assert Path(report.png_path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads(Path(report.json_path).read_text())
    assert [s["system"] for s in saved["systems"]] == ["engram", "bm25", "rrf"]
    for system in report.systems:
        assert system.overall.n == report.n_queries > 0
        for value in [*system.overall.recall.values(), *system.overall.all_at.values(), system.overall.mrr]:
            assert 0.0 <= value <= 1.0
        assert system.overall.recall[1] <= system.overall.recall[5] <= system.overall.recall[10]
        assert system.stored == report.n_docs
        assert system.search_ms.n == report.n_queries and system.search_ms.p50 > 0
    engram = report.system("engram")
    quoted = engram.queries[-1]
    assert quoted.ranks == [1], f"exact quote not at rank 1: {quoted}"


def test_a_bench_setting_reaches_the_embedder(tiny_locomo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--set fast_queries=false` was dropped on the way: only settings named embed… reached it."""
    from engram.bench.retrieval import run_locomo
    from engram.providers import embedders

    made = []
    real = embedders.make_embedder
    monkeypatch.setattr(embedders, "make_embedder", lambda settings: made.append(settings) or real(settings))
    run_locomo(tiny_locomo, systems=["engram"], ks=(1,), engram_settings={"fast_queries": False, "embedder": "wordllama"})
    assert [(s.fast_queries, s.embedder) for s in made] == [(False, "wordllama")]


def test_cli_bench_locomo(tiny_locomo: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engram.cli.bench import bench_app

    result = CliRunner().invoke(
        bench_app,
        ["locomo", str(tiny_locomo), "--out", str(tmp_path), "-k", "1,5", "--systems", "engram,bm25"],
    )
    assert result.exit_code == 0, result.output
    assert "R@5" in result.output and "engram" in result.output and "single-hop" in result.output
    assert (tmp_path / "locomo.json").is_file() and (tmp_path / "locomo.png").is_file()
    bad = CliRunner().invoke(bench_app, ["locomo", str(tiny_locomo), "--systems", "nope", "--out", str(tmp_path)])
    assert bad.exit_code == 1 and "unknown system" in bad.output


def test_without_matplotlib_the_results_are_written_and_a_one_line_hint_given(
    tiny_locomo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from typer.testing import CliRunner

    from engram.cli.bench import bench_app

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [bench] extra were not installed
    result = CliRunner().invoke(bench_app, ["locomo", str(tiny_locomo), "--out", str(tmp_path), "-k", "1",
                                            "--systems", "bm25"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "locomo.json").is_file() and not (tmp_path / "locomo.png").exists()
    assert "pip install 'engramdb[bench]'" in result.stderr


def test_bench_scale_on_a_missing_workdir_is_a_one_line_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engram.cli.bench import bench_app

    result = CliRunner().invoke(bench_app, ["scale", "--quick", "--workdir", str(tmp_path / "nope")])
    assert result.exit_code == 1 and result.stderr.startswith("error: --workdir") and result.stderr.count("\n") == 1


def test_bench_scale_runs_on_sqlite_and_qdrant_with_writers_that_cross_no_user(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_client")
    from engram.bench.scale import run_scale

    report = run_scale(
        sizes=(40,), users_total=60, users=3, adds=2, searches=3, batch=50, stores=("sqlite", "qdrant"),
        writers=2, writer_adds=4, workdir=tmp_path, out_dir=tmp_path / "out",
    )
    phases = {(p.store, p.name): p for p in report.phases}
    # qdrant's local mode is one process per folder: no writers phase there
    assert set(phases) == {
        ("sqlite", "single-scope-40"), ("sqlite", "multi-user-60"), ("sqlite", "writers-2"),
        ("qdrant", "single-scope-40"), ("qdrant", "multi-user-60"),
    }
    writers = phases["sqlite", "writers-2"]
    assert writers.memories == 8 and writers.cross_user_hits == 0 and writers.add_ms.n == 8
    multi = phases["qdrant", "multi-user-60"]
    assert multi.search_cold_ms.n == multi.search_restart_ms.n == 3 and multi.db_mb > 0
    assert list(tmp_path.iterdir()) == [tmp_path / "out"]  # every store removed


def test_bench_conversation_counts_a_fact_for_every_turn_that_said_it(tmp_path: Path) -> None:
    from engram.bench.conversation import run_conversation

    said = "I practice taekwondo."
    conversation = {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": said},
                      {"speaker": "Ben", "dia_id": "D1:2", "text": "Cool! Since when?"}],
        "session_2_date_time": "2:10 pm on 20 May, 2023",
        "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "How was your week?"},
                      {"speaker": "Ana", "dia_id": "D2:2", "text": said}],
        "session_1_observation": {"Ana": [["Ana practices taekwondo.", "D1:1"]]},
        "session_2_observation": {"Ana": [["Ana practices taekwondo.", "D2:2"]]},
        "qa": [{"question": "What martial art does Ana practice?", "answer": "taekwondo", "evidence": ["D2:2"],
                "category": 4}],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(conversation), encoding="utf-8")
    report = run_conversation([path], modes=["conversation"], ks=[1, 5])
    (mode,) = report.modes
    assert mode.facts == 1  # one fact, said twice
    assert mode.coverage == 1.0 and mode.support == 1.0  # kept from both turns, as its provenance says
    assert mode.recall[5] == 1.0
