"""Language detection, lexical tokens, normalisation and sentence splitting."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.text import cjk_ratio, detect_language, lexical_tokens, normalize, split_sentences

# --------------------------------------------------------------------------- detect_language


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("I live in Berlin", "en"),
        ("我住在北京", "zh"),
        ("我在Google工作", "zh"),
        ("我用Python和JavaScript写代码", "zh"),
        ("Google是我工作的地方", "zh"),
        ("I love 北京烤鸭", "en"),
        ("My name is 王小明", "en"),
        ("I moved to 上海 last year", "en"),
        ("", "en"),
        ("12345 !!!", "en"),
        ("好", "zh"),
        ("你好！", "zh"),
    ],
)
def test_detect_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


def test_cjk_ratio_counts_words_not_letters() -> None:
    assert cjk_ratio("hello world") == 0.0
    assert cjk_ratio("我喜欢咖啡") == 1.0
    assert cjk_ratio("我在Google工作") == pytest.approx(4 / 5)


# --------------------------------------------------------------------------- lexical_tokens

_SAFE = re.compile(r"^(?:[a-z0-9_.:]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]+)$")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did Caroline do yesterday?", ["carolin", "yesterday"]),
        ("Caroline's dog", ["carolin", "dog"]),
        ("I don't like running", ["like", "run"]),
        ("Yeah, oh, I really just like coffee", ["like", "coffe"]),
        ("The meeting is at 10:30 on 2023-10-30", ["meet", "10:30", "2023", "10", "30"]),
        ("It costs 3.5 dollars, or 1,000 yen", ["cost", "3.5", "dollar", "1000", "yen"]),
        ("Café résumé", ["cafe", "resum"]),
        ("ＧＯＯＧＬＥ １２３", ["googl", "123"]),
        ("", []),
        ("?!... ,,,", []),
    ],
)
def test_english_tokens(text: str, expected: list[str]) -> None:
    assert lexical_tokens(text) == expected


def test_english_stopwords_and_stems() -> None:
    tokens = lexical_tokens("How did you and I get there when we were running to the meetings?")
    assert tokens == ["run", "meet"]


def test_inflections_share_a_stem() -> None:
    assert set(lexical_tokens("meetings")) == set(lexical_tokens("meeting"))
    assert set(lexical_tokens("She runs")) <= set(lexical_tokens("running"))


def test_hyphenated_compounds_match_their_closed_form() -> None:
    # "what does she do to destress?" finds "running farther to de-stress", and the reverse
    assert "destress" in lexical_tokens("running farther to de-stress")
    assert set(lexical_tokens("my coworker")) <= set(lexical_tokens("my co-worker"))
    assert set(lexical_tokens("send an email")) - {"send"} <= set(lexical_tokens("sent an e-mail"))
    assert lexical_tokens("--") == [] and lexical_tokens("a - b") == ["b"]


def test_hyphenated_word_found_by_its_closed_form(tmp_path, embedder) -> None:
    from engram import Memory

    with Memory(tmp_path / "m.db", embedder=embedder, weight_dense=0.0) as m:
        m.add("I've been running farther to de-stress.", user_id="u", infer=False)
        m.add("I went to the shop for bread.", user_id="u", infer=False)
        top = m.search("what do I do to destress?", user_id="u", limit=1)
    assert "de-stress" in top[0].memory.content


def test_chinese_words_and_bigrams() -> None:
    tokens = lexical_tokens("我住在北京")
    assert "北京" in tokens
    for stop in ("我", "在", "住在", "我住"):
        assert stop not in tokens


def test_chinese_segmentation_mismatch_still_shares_tokens() -> None:
    query = set(lexical_tokens("北京大学"))
    doc = set(lexical_tokens("北京的大学"))
    assert {"北京", "大学"} <= query & doc
    assert "北京大学" in query


def test_no_single_cjk_characters_except_one_character_runs() -> None:
    tokens = lexical_tokens("我喜欢喝咖啡，猫")
    assert "咖啡" in tokens and "喜欢" in tokens
    assert "喝" not in tokens
    assert "猫" in tokens  # a run of one character is kept
    assert "的" not in lexical_tokens("的")  # ...unless it is a stopword


def test_chinese_particles_dropped() -> None:
    tokens = lexical_tokens("你喜欢咖啡吗？我也是的了呢")
    assert tokens.count("咖啡") >= 1
    for particle in ("吗", "的", "了", "呢", "也是", "我"):
        assert particle not in tokens


def test_mixed_language_text() -> None:
    tokens = lexical_tokens("我在Google工作, since 2021")
    assert "googl" in tokens and "工作" in tokens and "2021" in tokens


def test_term_frequency_is_kept() -> None:
    assert lexical_tokens("coffee coffee coffee").count("coffe") == 3
    assert lexical_tokens("咖啡，咖啡").count("咖啡") >= 2


def test_query_and_document_forms_meet() -> None:
    assert set(lexical_tokens("What does Caroline like?")) & set(lexical_tokens("Caroline likes hiking"))
    assert "北京" in set(lexical_tokens("北京")) & set(lexical_tokens("用户住在北京"))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_tokens_are_fts5_safe(text: str) -> None:
    for tok in lexical_tokens(text):
        assert tok and _SAFE.match(tok), tok


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="我你他的了是在北京大学喜欢咖啡工作 abcdefgIé'’0123456789.:,!?", max_size=60))
def test_tokens_safe_on_mixed_alphabet(text: str) -> None:
    for tok in lexical_tokens(text):
        assert " " not in tok and '"' not in tok and _SAFE.match(tok)


def test_tokens_are_fast() -> None:
    texts = ["I moved to Berlin last year and I really love the coffee here.",
             "我上个月搬到了上海，我非常喜欢那里的咖啡。"]
    lexical_tokens(texts[1])  # dictionary warm-up
    start = time.perf_counter()
    for _ in range(500):
        for t in texts:
            lexical_tokens(t)
    assert (time.perf_counter() - start) / 1000 < 0.001  # well under a millisecond per message


# --------------------------------------------------------------------------- normalize


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I like coffee.", "i like coffee"),
        ("I  like   coffee!!!", "I like coffee"),
        ("Don't stop", "dont stop"),
        ("我喜欢咖啡。", "我喜欢咖啡"),
        ("我喜欢咖啡啊！", "我喜欢咖啡"),
        ("我 喜欢 咖啡", "我喜欢咖啡"),
        ("我搬到上海了", "我搬到上海"),
        ("ＡＢＣ，", "abc"),
        ("“Hello”, world…", "hello world"),
    ],
)
def test_normalize_equal(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I like coffee", "I like tea"),
        ("我喜欢咖啡", "我不喜欢咖啡"),
        ("我喜欢咖啡吗", "我喜欢咖啡"),  # a question stays a question
    ],
)
def test_normalize_different(a: str, b: str) -> None:
    assert normalize(a) != normalize(b)


def test_normalize_output() -> None:
    assert normalize("  Hello,   World! ") == "hello world"
    assert normalize("我喜欢咖啡。") == "我喜欢咖啡"


# --------------------------------------------------------------------------- split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Berlin. I love coffee!", ["I live in Berlin.", "I love coffee!"]),
        ("Really? Yes; fine", ["Really?", "Yes;", "fine"]),
        ("我喜欢咖啡。我住在北京！你呢？", ["我喜欢咖啡。", "我住在北京！", "你呢？"]),
        ("Dr. Smith said 3.5 is fine.", ["Dr. Smith said 3.5 is fine."]),
        ("Visit example.com today. Then rest", ["Visit example.com today.", "Then rest"]),
        ("line one\nline two", ["line one", "line two"]),
        ("e.g. this one. And that", ["e.g. this one.", "And that"]),
        ("Meet at 10 a.m. Then go.", ["Meet at 10 a.m.", "Then go."]),
        ('He said "stop." Then left', ['He said "stop."', "Then left"]),
        ("Wait... what?!", ["Wait...", "what?!"]),
        ("单句没有标点", ["单句没有标点"]),
        ("", []),
        ("  ...  ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(("third", "ing"), [
    ("plays", "playing"), ("dances", "dancing"), ("runs", "running"), ("studies", "studying"), ("swims", "swimming"),
    ("visits", "visiting"), ("watches", "watching"), ("ties", "tying"), ("reads", "reading"), ("does", "doing"),
    ("has", None), ("is", None), ("cat", None),
])
def test_gerund_of_a_verb_in_the_third_person(third, ing):
    from engram.extract.rewrite import gerund

    assert gerund(third) == ing


def test_a_split_is_the_callers_own_list_though_splits_are_remembered():
    text = "I live in Porto. I work at a bakery."
    first = split_sentences(text)
    first.append("changed")  # (a caller that edits its list must not change the next split)
    assert split_sentences(text) == ["I live in Porto.", "I work at a bakery."]
    long = "One. " * 1000  # a long text is split as well, not remembered
    assert len(split_sentences(long)) == 1000
