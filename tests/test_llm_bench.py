"""`engram bench llm` against the scripted server, playing a weak local model (issue #19)."""

from __future__ import annotations

import json
from pathlib import Path

from llm_scripts import prompt_text, requests_of, router
from typer.testing import CliRunner

from engram.bench.llm_check import load_cases

COPIED = {"content": "User's project manager is Li Hua.", "kind": "fact"}


def weak_model(request):
    """Copies the old prompt example every time, gets the puppy right, breaks JSON on small talk."""
    said = prompt_text(request).split("Conversation:")[-1].split("对话：")[-1]
    if "weather" in said or "天气" in said:
        return "Sure! Here are the memories: {memories: [oops"
    found = [COPIED]
    if "Coco" in said and "Assistant" not in said:
        found.append({"content": "User's puppy is named Coco.", "kind": "fact"})
    return {"memories": found}


def test_the_bundled_set_is_small_and_bilingual():
    cases = load_cases()
    zh = [c for c in cases if any("\u4e00" <= ch <= "\u9fff" for ch in json.dumps(c["say"], ensure_ascii=False))]
    assert 18 <= len(cases) <= 25 and 8 <= len(zh) <= len(cases) - 8
    assert sum(1 for c in cases if c.get("judge")) >= 3


def test_bench_llm_counts_grounded_ungrounded_json_and_judge_refusals(fake_llm, tmp_path: Path):
    from engram.cli.bench import bench_app

    fake_llm.responder = router(extract=weak_model, judge=lambda request: {
        "action": "UPDATE", "target": 1, "reason": "merged",
        "content": "用户询问是否喜欢香菜，我不同意。" if "用户" in prompt_text(request)
        else "I work at Acme. This information is consistent with the existing memory."})
    done = CliRunner().invoke(bench_app, ["llm", "--base-url", fake_llm.base_url, "--timeout", "5",
                                          "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "llm-check.json").read_text())
    cases = load_cases()
    adds = len(cases) + sum(len(c.get("before", [])) for c in cases)
    assert report["model"] == "fake-model" and report["adds"] == adds == report["extract_calls"]
    broken = sum(1 for c in cases if "weather" in str(c["say"]) or "天气" in str(c["say"]))
    assert (report["json_invalid"], report["no_answer"], report["json_valid"]) == (broken, 0, adds - broken)
    # the copied example, every time the answer was JSON: on a Chinese turn it is dropped for its language first
    assert report["ungrounded"] + report["translated"] == adds - broken and report["ungrounded"] >= 10
    assert report["grounded"] == 1 and report["proposals"] == adds - broken + 1
    assert report["judge_calls"] >= 1 and report["judge_refused"] == report["judge_calls"]
    puppy = next(r for r in report["results"] if r["id"] == "en-puppy")
    # the rules (issue #12) now read this turn themselves: the model's grounded proposal may be their duplicate (NOOP)
    assert puppy["stored"] in ([], ["User's puppy is named Coco."])
    assert not any("Coco" in line for line in puppy["dropped"])
    assert any("Li Hua" in line and "not in the source" in line for line in puppy["dropped"])
    assert report["add_latency_ms"]["n"] == adds
    assert all("max_tokens" in r for r in requests_of(fake_llm, "extract") + requests_of(fake_llm, "judge"))
    assert "ungrounded: dropped" in done.output


def test_bench_llm_reports_an_unreachable_server(tmp_path: Path):
    from engram.cli.bench import bench_app

    done = CliRunner().invoke(bench_app, ["llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                                          "--timeout", "1", "--out", str(tmp_path)])
    assert done.exit_code == 0
    report = json.loads((tmp_path / "llm-check.json").read_text())
    assert report["no_answer"] == report["extract_calls"] > 0 and report["grounded"] == 0
