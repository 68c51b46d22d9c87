"""Cross-language recall with the multilingual embedder (USE): a Chinese question finds the
English memory that answers it, and an English question the Chinese one."""

from __future__ import annotations

import pytest

from engram import Memory
from engram.fusion import reach, script_shares

ENGLISH = [
    "I adopted a golden retriever puppy named Max last spring.",
    "My sister works as a nurse at a hospital in Toronto.",
    "I am allergic to peanuts, so I avoid Thai satay.",
    "We are planning a trip to Japan in April to see the cherry blossoms.",
    "I started learning to play the cello three months ago.",
    "My favourite food is my grandmother's dumplings.",
]
CHINESE = [
    "我去年春天领养了一只叫Max的金毛小狗。",
    "我姐姐在多伦多的一家医院当护士。",
    "我对花生过敏，所以不吃沙爹。",
    "我们计划四月去日本看樱花。",
    "我三个月前开始学拉大提琴。",
    "我最喜欢吃奶奶包的饺子。",
]
# (question, index of the memory that answers it)
ZH_QUESTIONS = [("我养的是什么宠物？", 0), ("我姐姐是做什么工作的？", 1), ("我对什么东西过敏？", 2), ("我在学什么乐器？", 4)]
EN_QUESTIONS = [("What pet do I have?", 0), ("What does my sister do for a living?", 1),
                ("What am I allergic to?", 2), ("Which instrument am I learning?", 4)]


@pytest.fixture(scope="module")
def use():
    from engram.providers.use import USEEmbedder

    return USEEmbedder()


def ranked(db_path, embedder, memories: list[str], question: str) -> list[str]:
    with Memory(db_path, embedder=embedder) as m:
        m.add_many([{"messages": text, "user_id": "u1", "infer": False} for text in memories])
        return [r.memory.content for r in m.search(question, user_id="u1", limit=3)]


@pytest.mark.parametrize("question,answer", ZH_QUESTIONS)
def test_a_chinese_question_finds_the_english_memory(tmp_path, use, question, answer):
    assert ranked(tmp_path / "x.db", use, ENGLISH, question)[0] == ENGLISH[answer]


@pytest.mark.parametrize("question,answer", EN_QUESTIONS)
def test_an_english_question_finds_the_chinese_memory(tmp_path, use, question, answer):
    assert ranked(tmp_path / "x.db", use, CHINESE, question)[0] == CHINESE[answer]


def test_a_name_shared_across_languages_does_not_outrank_meaning(tmp_path, use):
    # every English memory names Bart; the Chinese question says his name and what it is about
    memories = [f"Bart {text[2:]}" for text in ENGLISH]
    top = ranked(tmp_path / "x.db", use, memories, "Bart对什么东西过敏？")
    assert top[0] == memories[2]


def test_lexical_hits_in_another_language_count_by_the_querys_words_in_its_script():
    shares = script_shares(["bart", "过敏", "东西"], [1.0, 1.0, 2.0])
    assert shares == {"zh": 0.75, "en": 0.25}
    assert reach("zh", shares, "zh") == 1.0
    assert reach("zh", shares, "en") == pytest.approx(1 / 3)
    assert reach("en", {"zh": 0.0, "en": 1.0}, "zh") == 0.0


def test_the_madial_bench_reads_the_parallel_data_across_languages(tmp_path):
    import json
    from pathlib import Path

    from engram.bench.retrieval import run_madial

    source = Path(__file__).resolve().parents[2] / "shared" / "data" / "madial-dev"
    if not (source / "zh" / "memory.jsonl").is_file():
        pytest.skip("MADial dev data not here")
    for lang, lines in (("zh", 8), ("en", 6)):  # English lacks some of the Chinese memories
        (tmp_path / lang).mkdir()
        for name in ("memory.jsonl", "dialogue.jsonl"):
            kept = (source / lang / name).read_text(encoding="utf-8").splitlines()[:lines]
            (tmp_path / lang / name).write_text("\n".join(kept) + "\n", encoding="utf-8")
    english = {next(iter(json.loads(line))) for line in (tmp_path / "en" / "memory.jsonl").read_text().splitlines()}
    report = run_madial(tmp_path, "zh", ["engram", "bm25"], [1, 5], memories="en", engram_settings={"embedder": "use"})
    assert report.benchmark == "madial-zh-to-en" and report.embedder == "use-multilingual-v3"
    assert report.embed_ms["short"] > 0 and report.embed_ms["query"] > 0
    assert report.n_docs == len(english)
    for query in report.system("engram").queries:
        assert query.relevant and set(query.relevant) <= english  # only memories English has
    # the multilingual embedder reads across; words alone (BM25) barely can
    assert report.system("engram").overall.recall[5] > report.system("bm25").overall.recall[5]
