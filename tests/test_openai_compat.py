"""OpenAI-compatible client against a scripted local server: the real SDK runs end to end."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from pydantic import BaseModel

from engram.providers.openai_compat import (
    EmbeddingSettings,
    LLMBadOutput,
    LLMBudgetExceeded,
    LLMError,
    LLMSettings,
    LLMUnavailable,
    OpenAICompatEmbedder,
    OpenAICompatLLM,
    parse_json_text,
)

USER = [{"role": "user", "content": "hello"}]


class Pref(BaseModel):
    content: str
    importance: float


def make_llm(fake, **overrides) -> OpenAICompatLLM:
    settings = {"base_url": fake.base_url, "model": "test-model", "timeout": 5.0, "max_retries": 2, **overrides}
    return OpenAICompatLLM(LLMSettings(**settings))


# --- chat -------------------------------------------------------------------
def test_plain_chat_sends_model_messages_and_temperature(fake_llm):
    fake_llm.reply("Hi there")
    llm = make_llm(fake_llm)
    reply = llm.chat(USER)
    assert reply.text == "Hi there"
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.latency_s > 0
    sent = fake_llm.requests[-1]
    assert sent["model"] == "test-model"
    assert sent["messages"] == USER
    assert sent["temperature"] == 0
    assert "response_format" not in sent
    assert fake_llm.headers[-1]["authorization"] == "Bearer not-needed"


def test_configured_key_is_sent_and_not_shown(fake_llm):
    llm = make_llm(fake_llm, api_key="sk-secret-123")
    llm.chat(USER)
    assert fake_llm.headers[-1]["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in repr(llm.settings) + repr(llm)


def test_settings_enabled():
    assert not LLMSettings().enabled
    assert LLMSettings(model="qwen2.5").enabled
    assert LLMSettings(base_url="http://127.0.0.1:11434/v1").enabled
    assert EmbeddingSettings(model="bge-m3").enabled and not EmbeddingSettings().enabled


def test_model_discovered_from_server_when_not_configured(fake_llm):
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url))
    llm.chat(USER)
    assert fake_llm.requests[-1]["model"] == fake_llm.model


def test_json_mode_sends_response_format_and_mentions_json(fake_llm):
    fake_llm.reply_json({"content": "likes tea", "importance": 0.7})
    llm = make_llm(fake_llm)
    pref = llm.chat_json([{"role": "system", "content": "Extract."}, *USER], schema=Pref)
    assert pref == Pref(content="likes tea", importance=0.7)
    sent = fake_llm.requests[-1]
    assert sent["response_format"] == {"type": "json_object"}
    assert "json" in sent["messages"][0]["content"].lower()  # hint joined to the system message
    assert sent["messages"][1:] == USER


def test_json_mode_off_sends_no_response_format(fake_llm):
    fake_llm.reply('{"a": 1}')
    assert make_llm(fake_llm, json_mode=False).chat_json(USER) == {"a": 1}
    assert "response_format" not in fake_llm.requests[-1]


def test_fenced_json_with_trailing_comma_is_repaired(fake_llm):
    fake_llm.reply('Sure! Here it is:\n```json\n[{"content": "喜欢喝茶", "importance": 0.5,},]\n```\nMore?')
    items = make_llm(fake_llm).chat_json(USER, schema=list[Pref])
    assert items == [Pref(content="喜欢喝茶", importance=0.5)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": [1, 2,], }', {"a": [1, 2]}),
        ("{'a': 'it is', 'b': \"x, }\"}", {"a": "it is", "b": "x, }"}),
        ('<think>maybe {"no": 1</think>{"yes": true}', {"yes": True}),
        ('note {not json} then {"k": "v"} done', {"k": "v"}),
        ('{"keep": "a,]"}', {"keep": "a,]"}),
    ],
)
def test_parse_json_text(text, expected):
    assert parse_json_text(text) == expected


def test_parse_json_text_refuses_what_it_cannot_repair():
    with pytest.raises(ValueError):
        parse_json_text("{'a': 'it's'}")
    with pytest.raises(ValueError):
        parse_json_text("no json here")


def test_malformed_body_is_bad_output_and_counted_as_failure(fake_llm):
    fake_llm.malformed()
    llm = make_llm(fake_llm)
    with pytest.raises(LLMBadOutput):
        llm.chat(USER)
    total = llm.ledger.snapshot()["total"]
    assert total["calls"] == 1 and total["failures"] == 1
    assert len(fake_llm.requests) == 1  # a 200 is not retried


def test_reply_that_is_not_json_is_bad_output(fake_llm):
    fake_llm.reply("I think the user likes tea.")
    llm = make_llm(fake_llm)
    with pytest.raises(LLMBadOutput):
        llm.chat_json(USER)
    assert llm.ledger.snapshot()["total"]["failures"] == 1


def test_schema_mismatch_is_bad_output(fake_llm):
    fake_llm.reply_json({"content": "likes tea", "importance": "very"})
    llm = make_llm(fake_llm)
    with pytest.raises(LLMBadOutput, match="importance"):
        llm.chat_json(USER, schema=Pref, user_id="u1")
    assert llm.ledger.snapshot()["users"]["u1"]["failures"] == 1


def test_rate_limit_is_retried_honouring_retry_after(fake_llm):
    fake_llm.fail(429, retry_after=1.0)
    fake_llm.reply("after the wait")
    llm = make_llm(fake_llm)
    start = time.perf_counter()
    assert llm.chat(USER).text == "after the wait"
    # the header said 1 s; the SDK's own backoff would have waited 0.375-0.5 s (a lower bound:
    # a slow machine cannot make this pass wrongly)
    assert time.perf_counter() - start >= 1.0
    assert len(fake_llm.requests) == 2
    ledger = llm.ledger.snapshot()["total"]
    assert ledger["calls"] == 1 and ledger["failures"] == 0  # one logical call


def test_server_errors_exhaust_bounded_retries(fake_llm):
    fake_llm.fail(500, times=3, retry_after=0.01)
    fake_llm.reply("never reached")
    llm = make_llm(fake_llm, max_retries=2)
    with pytest.raises(LLMUnavailable, match="500"):
        llm.chat(USER)
    assert len(fake_llm.requests) == 3  # first try + 2 retries
    assert fake_llm.pending == 1
    assert llm.ledger.snapshot()["total"]["failures"] == 1


def test_client_error_is_not_retried(fake_llm):
    fake_llm.fail(401, {"error": {"message": "invalid api key"}})
    with pytest.raises(LLMUnavailable, match="invalid api key"):
        make_llm(fake_llm).chat(USER)
    assert len(fake_llm.requests) == 1


def test_slow_reply_times_out_quickly(fake_llm):
    fake_llm.delay(3.0, "too late")
    llm = make_llm(fake_llm, timeout=0.3, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(LLMUnavailable, match="timed out"):
        llm.chat(USER)
    assert time.perf_counter() - start < 1.5


def test_unreachable_server_is_unavailable():
    llm = OpenAICompatLLM(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout=1, max_retries=0))
    with pytest.raises(LLMUnavailable):
        llm.chat(USER)


def test_budget_exceeded_sends_nothing(fake_llm):
    llm = make_llm(fake_llm, call_budget=2)
    llm.chat(USER)
    llm.chat(USER)
    with pytest.raises(LLMBudgetExceeded):
        llm.chat(USER)
    assert len(fake_llm.requests) == 2
    assert isinstance(LLMBudgetExceeded("x"), LLMError)


def test_budget_is_per_user_when_a_user_is_given(fake_llm):
    llm = make_llm(fake_llm, call_budget=1)
    llm.chat(USER, user_id="alice")
    with pytest.raises(LLMBudgetExceeded, match="alice"):
        llm.chat(USER, user_id="alice")
    llm.chat(USER, user_id="bob")
    assert len(fake_llm.requests) == 2


def test_usage_and_cost_are_recorded_per_user_and_total(fake_llm):
    llm = make_llm(fake_llm, price_per_1k_prompt=1.0, price_per_1k_completion=2.0)
    a = llm.chat(USER, user_id="alice")
    b = llm.chat(USER, user_id="bob")
    assert a.cost == pytest.approx((a.prompt_tokens * 1.0 + a.completion_tokens * 2.0) / 1000)
    snap = llm.ledger.snapshot()
    assert snap["users"]["alice"]["prompt_tokens"] == a.prompt_tokens
    assert snap["total"]["calls"] == 2
    assert snap["total"]["completion_tokens"] == a.completion_tokens + b.completion_tokens
    assert snap["total"]["cost"] == pytest.approx(a.cost + b.cost)


def test_ledger_is_thread_safe(fake_llm):
    llm = make_llm(fake_llm)
    threads = [threading.Thread(target=lambda: [llm.chat(USER, user_id="u") for _ in range(5)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = llm.ledger.snapshot()
    assert snap["total"]["calls"] == snap["users"]["u"]["calls"] == 20
    assert len(fake_llm.requests) == 20


def test_chinese_round_trips_unchanged(fake_llm):
    text = "记住：我喜欢用Markdown写报告，并附数据图表。「引号」😀"
    fake_llm.responder = lambda request: request["messages"][-1]["content"]
    llm = make_llm(fake_llm)
    assert llm.chat([{"role": "user", "content": text}]).text == text
    assert fake_llm.requests[-1]["messages"][-1]["content"] == text
    fake_llm.reply_json({"content": text})
    assert llm.chat_json([{"role": "user", "content": "JSON please"}]) == {"content": text}


def test_rejected_response_format_falls_back_once_and_is_remembered(fake_llm):
    rejection = {"error": {"message": "Unrecognized request argument: response_format", "type": "invalid_request"}}
    fake_llm.fail(400, rejection)
    fake_llm.reply('{"a": 1}')
    fake_llm.reply('{"b": 2}')
    llm = make_llm(fake_llm)
    assert llm.chat_json(USER) == {"a": 1}
    assert llm.chat_json(USER) == {"b": 2}
    assert [("response_format" in r) for r in fake_llm.requests] == [True, False, False]
    total = llm.ledger.snapshot()["total"]
    assert (total["calls"], total["failures"]) == (2, 0)  # the fallback is part of one call


def test_other_bad_request_is_unavailable_without_fallback(fake_llm):
    fake_llm.fail(400, {"error": {"message": "context length exceeded"}})
    llm = make_llm(fake_llm)
    with pytest.raises(LLMUnavailable, match="context length"):
        llm.chat_json(USER)
    assert len(fake_llm.requests) == 1


def test_chat_completions_path_without_v1(fake_llm):
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url.removesuffix("/v1"), model="m"))
    assert llm.chat(USER).text == "ok"
    assert fake_llm.paths[-1] == "/chat/completions"


# --- embeddings ---------------------------------------------------------------
def make_embedder(fake, **overrides) -> OpenAICompatEmbedder:
    settings = {"base_url": fake.base_url, "model": "embed-model", "timeout": 5.0, "batch_size": 4, **overrides}
    return OpenAICompatEmbedder(EmbeddingSettings(**settings))


def test_embeddings_are_batched_normalised_and_deterministic(fake_llm):
    texts = [f"text {i}" for i in range(10)] + ["text 0", "今天天气很好"]
    emb = make_embedder(fake_llm)
    vectors = emb.embed(texts)
    assert vectors.shape == (12, 64) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert float(vectors[0] @ vectors[10]) == pytest.approx(1.0)
    assert abs(float(vectors[0] @ vectors[1])) < 0.9
    assert [len(r["input"]) for r in fake_llm.requests] == [4, 4, 4]
    assert all(r["encoding_format"] == "float" for r in fake_llm.requests)
    assert emb.dim == 64 and emb.name == "openai-compat:embed-model"


def test_embedder_discovers_dim_and_sends_configured_dimensions(fake_llm):
    emb = make_embedder(fake_llm)
    assert emb.dim == 64  # one probe request
    assert len(fake_llm.requests) == 1
    sized = make_embedder(fake_llm, dimensions=32)
    assert sized.embed(["a"]).shape == (1, 32)
    assert fake_llm.requests[-1]["dimensions"] == 32
    assert sized.embed([]).shape == (0, 32)


def test_embedder_failure_is_unavailable(fake_llm):
    fake_llm.fail(503, times=2, retry_after=0.01, endpoint="embeddings")
    emb = make_embedder(fake_llm, max_retries=1)
    with pytest.raises(LLMUnavailable, match="503"):
        emb.embed(["a"])
