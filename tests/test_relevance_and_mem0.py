"""Absolute relevance, `threshold`, context() that injects only what is relevant, and the mem0
migration surface (top_k, run_id, from_config, mem0 result shapes)."""

from __future__ import annotations

import pytest

from engram import InvalidInput, Memory
from engram.compat.mem0 import to_mem0


@pytest.fixture
def lisbon(memory):
    for said in ("I live in Lisbon.", "I prefer dark mode.", "I work as a nurse."):
        memory.add(said, user_id="u")
    return memory


@pytest.mark.parametrize("query", ["what's the capital of Peru?", "quantum chromodynamics lattice"])
def test_an_unrelated_query_has_low_relevance_and_a_threshold_drops_it(lisbon, query):
    results = lisbon.search(query, user_id="u")
    assert results and max(r.relevance for r in results) < 0.2  # ranked, but not relevant
    assert lisbon.search(query, user_id="u", threshold=0.3) == []


def test_a_related_query_is_relevant_on_the_same_scale(lisbon):
    best = lisbon.search("where do I live?", user_id="u", threshold=0.3)
    assert [r.memory.content for r in best] == ["User lives in Lisbon."]
    assert 0.0 <= best[0].relevance <= 1.0 and best[0].relevance >= 0.5


def test_context_injects_nothing_irrelevant(lisbon):
    built = lisbon.context("what's the capital of Peru?", user_id="u")
    assert built.relevant == []
    assert "Lisbon" in lisbon.context("where do I live?", user_id="u").text


def test_mem0_names_top_k_threshold_and_run_id(memory):
    memory.add("I live in Lisbon.", user_id="u", run_id="r1")
    assert memory.get_all(user_id="u")[0].session_id == "r1"
    assert len(memory.search("Lisbon", user_id="u", top_k=1)) == 1
    with pytest.raises(InvalidInput):
        memory.search("Lisbon", user_id="u", threshold=2)
    with pytest.raises(InvalidInput):
        memory.add("x", user_id="u", session_id="a", run_id="b")


def test_results_convert_to_mem0_shapes(memory):
    memory.add("I live in Lisbon.", user_id="u")
    shaped = to_mem0(memory.search("where do I live", user_id="u"))
    hit = shaped["results"][0]
    assert hit["memory"] == "User lives in Lisbon." and 0 < hit["score"] <= 1 and hit["user_id"] == "u"
    assert {"id", "metadata", "created_at"} <= set(hit)
    assert to_mem0(memory.get_all(user_id="u"))["results"][0]["id"] == hit["id"]


def test_from_config_takes_mem0s_nested_shape(tmp_path, embedder):
    config = {
        "vector_store": {"provider": "chroma", "config": {"path": str(tmp_path / "m.db")}},
        "llm": {"provider": "openai", "config": {"model": "qwen2.5", "temperature": 0.1}},
        "embedder": {"provider": "huggingface", "config": {"embedding_dims": 128}},
    }
    from engram.compat.mem0 import config_from_mem0
    from engram.config import Settings

    mapped = config_from_mem0(config, Settings.model_fields)
    assert mapped == {"path": str(tmp_path / "m.db"), "llm_model": "qwen2.5", "llm_temperature": 0.1,
                      "embedding_dim": 128}
    with pytest.raises(InvalidInput, match="pinecone"):
        Memory.from_config({"vector_store": {"provider": "pinecone", "config": {}}})
    with Memory.from_config({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "n.db")}}}) as m:
        assert m.settings.path == tmp_path / "n.db"
