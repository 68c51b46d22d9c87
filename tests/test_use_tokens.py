"""One-line queries read from USE's token vectors (engram.providers.use_tokens): close to what the
whole model gives, finding the same memories, and only where that holds (one line, a spaced
script); dialogues and Chinese still run the whole model."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from engram import Memory
from engram.providers import use_tokens

QUESTIONS = ["What pet do I have?", "What does my sister do for a living?", "What am I allergic to?",
             "Which instrument am I learning?", "Where are we going in April?"]
MEMORIES = [
    "I adopted a golden retriever puppy named Max last spring.",
    "My sister works as a nurse at a hospital in Toronto.",
    "I am allergic to peanuts, so I avoid Thai satay.",
    "I started learning to play the cello three months ago.",
    "We are planning a trip to Japan in April to see the cherry blossoms.",
]


@pytest.fixture(scope="module")
def use():
    from engram.providers.use import USEEmbedder

    embedder = USEEmbedder()
    embedder.embed(["load"])  # (tests below read its model)
    return embedder


def test_a_question_from_token_vectors_is_close_to_the_models_own(use):
    fast = np.array([use.embed_query(q) for q in QUESTIONS])
    full = use.embed(QUESTIONS)
    assert fast.shape == (len(QUESTIONS), 512) and fast.dtype == np.float32
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-4)
    cosines = (fast * full).sum(axis=1)
    assert cosines.min() > 0.5 and not np.allclose(fast, full, atol=1e-3)  # near, and not the model itself


def test_each_question_finds_its_memory_through_token_vectors(use):
    memories = use.embed(MEMORIES)
    for index, question in enumerate(QUESTIONS):
        assert int(np.argmax(memories @ use.embed_query(question))) == index, question


def test_dialogues_and_chinese_run_the_whole_model(use):
    dialogue = "Assistant: How was the weekend?\nUser: Great, we hiked up the mountain."
    for text in (dialogue, "我对什么东西过敏？", "Bart对什么东西过敏？", "猫の名前は何ですか", "제 고양이 이름이 뭐예요", "What does 𠮷 mean?"):
        assert np.allclose(use.embed_query(text), use.embed([text])[0], atol=1e-6), text


def test_fast_queries_off_runs_the_whole_model_for_every_query(monkeypatch):
    from engram.config import Settings
    from engram.providers.embedders import make_embedder

    monkeypatch.setenv("ENGRAM_FAST_QUERIES", "false")
    whole = make_embedder(Settings(embedder="use"))
    assert whole.fast_queries is False
    assert np.allclose(whole.embed_query(QUESTIONS[0]), whole.embed([QUESTIONS[0]])[0], atol=1e-6)


def test_a_full_row_cache_starts_over_and_gives_the_same_vectors(use, monkeypatch):
    expected = [use.embed_query(q) for q in QUESTIONS]
    small = use_tokens.TokenVectors(use._model)
    monkeypatch.setattr(use_tokens, "MAX_ROWS", 12)  # fewer than two questions' tokens
    for question, vector in zip(QUESTIONS, expected, strict=True):
        assert np.allclose(small.encode(question), vector, atol=1e-5)
        assert len(small._rows) <= 12


def test_threads_asking_at_once_get_what_one_thread_gets(use):
    fresh = use_tokens.TokenVectors(use._model)  # no rows yet: the threads make them together
    expected = {q: use.embed_query(q) for q in QUESTIONS}
    asked = [QUESTIONS[n % 5:] + QUESTIONS[: n % 5] for n in range(6)]
    with ThreadPoolExecutor(6) as pool:  # (an exception in a thread is raised by `map`)
        answers = list(pool.map(lambda questions: [fresh.encode(q) for q in questions], asked))
    for questions, vectors in zip(asked, answers, strict=True):
        assert all(np.allclose(v, expected[q], atol=1e-5) for q, v in zip(questions, vectors, strict=True))


def test_search_with_the_default_embedder_answers_an_english_question(tmp_path, use):
    with Memory(tmp_path / "x.db", embedder=use) as m:
        m.add_many([{"messages": text, "user_id": "u1", "infer": False} for text in MEMORIES])
        top = m.search("Which musical instrument am I studying?", user_id="u1", limit=1)
    assert top[0].memory.content == MEMORIES[3]


def test_the_words_of_what_is_stored_have_their_rows_made_ahead(use, monkeypatch):
    tokens = use_tokens.TokenVectors(use._model)
    tokens.learn(["We saw quokkas at Rottnest Island at dusk."])
    made: list[list[int]] = []
    make = tokens._make
    monkeypatch.setattr(tokens, "_make", lambda ids, evict=True: made.append(ids) or make(ids, evict))
    learned = tokens.encode("quokkas at Rottnest Island")
    assert made == []  # every row was there
    assert np.allclose(learned, use_tokens.TokenVectors(use._model).encode("quokkas at Rottnest Island"), atol=1e-5)
    tokens.encode("Which marsupials live on the island?")
    assert made  # a question's new words are made when asked


def test_learning_fills_the_room_left_and_never_evicts(use, monkeypatch):
    monkeypatch.setattr(use_tokens, "MAX_ROWS", 10)
    tokens = use_tokens.TokenVectors(use._model)
    tokens.encode("What pet do I have?")
    before = dict(tokens._rows)
    tokens.learn(["I adopted a golden retriever puppy named Max last spring in Toronto."])
    assert len(tokens._rows) == 10 and all(i in tokens._rows for i in before)


def test_what_is_stored_in_chinese_is_not_learned_from():
    from engram.providers.use import USEEmbedder

    embedder = USEEmbedder()
    embedder.embed(["load"])
    embedder._tokens = use_tokens.TokenVectors(embedder._model)  # a cache of its own, empty
    embedder.embed(["我女儿叫小雨，今年七岁。"])  # a Chinese question runs the whole model: no rows
    assert embedder._tokens._rows == {}
    embedder.embed(["My daughter is seven."])
    assert embedder._tokens._rows
