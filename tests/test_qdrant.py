"""The Qdrant backend end to end, in qdrant-client's local mode: `Memory(store="qdrant:///…")`
searches through Qdrant (points with the record in the payload), keeps users apart, mirrors
every write (deletions before `delete` returns) and catches up with writes it did not see.
The storage contract (tests/test_store_contract.py) runs on it too."""

from __future__ import annotations

import pytest

pytest.importorskip("qdrant_client")

from engram import Memory  # noqa: E402
from engram.models import Filters  # noqa: E402
from engram.store.base import Scope, StoreError  # noqa: E402
from engram.store.open import open_store  # noqa: E402
from engram.store.qdrant.target import parse  # noqa: E402
from engram.store.sqlite import SQLiteStore  # noqa: E402


@pytest.fixture
def url(tmp_path) -> str:
    return f"qdrant://{tmp_path / 'qdrant'}"


def points(memory: Memory) -> dict[str, dict]:
    """memory id -> payload of every point in the collection."""
    store = memory.store
    found, _ = store._client.scroll(store.collection, limit=10_000, with_payload=True)
    return {p.payload["id"]: p.payload for p in found}


def test_memory_on_qdrant_adds_searches_and_keeps_records_in_the_payload(url, embedder) -> None:
    with Memory(store=url, embedder=embedder) as memory:
        memory.add("I drink oolong tea every afternoon.", user_id="ana")
        memory.add("我喜欢在北京吃烤鸭。", user_id="ana")
        memory.add("I drink oolong tea as well.", user_id="ben")
        assert type(memory.store).__name__ == "QdrantStore"
        tea = memory.search("what tea do I drink?", user_id="ana", limit=3)
        assert tea and "oolong" in tea[0].memory.content
        assert {r.memory.user_id for r in tea} == {"ana"}
        duck = memory.search("烤鸭", user_id="ana", limit=1)
        assert "烤鸭" in duck[0].memory.content
        stored = points(memory)
        assert {p["user_id"] for p in stored.values()} == {"ana", "ben"}
        assert stored[duck[0].memory.id]["record"]["content"] == duck[0].memory.content
        # the same search answered by Qdrant alone: ids and cosine scores from the points
        hits = memory.store.dense_search(Scope("ana"), embedder.embed(["oolong tea"])[0], Filters(), 5)
        assert hits and all(stored[i]["user_id"] == "ana" for i, _ in hits)


def test_deletion_and_edits_reach_qdrant_before_the_call_returns(url, embedder) -> None:
    with Memory(store=url, embedder=embedder) as memory:
        secret = memory.add("My locker code word is quixotrombone.", user_id="ana", infer=False)[0].memory
        kept = memory.add("I cycle to work.", user_id="ana", infer=False)[0].memory
        memory.delete(secret.id)
        assert secret.id not in points(memory)
        assert "quixotrombone" not in str(points(memory))
        memory.update(kept.id, content="I walk to work now.")
        assert points(memory)[kept.id]["record"]["content"] == "I walk to work now."
        memory.delete_all(user_id="ana")
        assert points(memory) == {}


def test_writes_qdrant_did_not_see_are_caught_up_before_a_search(url, tmp_path, embedder) -> None:
    with Memory(store=url, embedder=embedder) as memory:
        memory.add("I live in Lisbon.", user_id="ana", infer=False)
    # a write straight into the side store, as a crash between commit and mirror leaves one
    with Memory(store=SQLiteStore(parse(url).side, dim=embedder.dim), embedder=embedder) as side:
        side.add("My sister Vera keeps a parrot called Mochi.", user_id="ana", infer=False)
    with Memory(store=url, embedder=embedder) as memory:
        found = memory.search("parrot", user_id="ana", limit=1)
        assert found and "Mochi" in found[0].memory.content


def test_filters_run_on_the_payload_and_the_side_store(url, embedder) -> None:
    with Memory(store=url, embedder=embedder) as memory:
        memory.add("I run on Sundays.", user_id="ana", agent_id="coach", infer=False)
        memory.add("I run a small bakery.", user_id="ana", agent_id="shop", infer=False,
                   metadata={"topic": "work"})
        coach = memory.search("run", user_id="ana", agent_id="coach")
        assert [r.memory.agent_id for r in coach] == ["coach"]
        work = memory.search("run", user_id="ana", filters={"metadata": {"topic": "work"}})
        assert [r.memory.content for r in work] == ["I run a small bakery."]


def test_urls_name_a_folder_or_a_server_with_a_side_store(tmp_path) -> None:
    local = parse(f"qdrant://{tmp_path}/q?collection=team")
    assert local.local_path == tmp_path / "q" and local.side == tmp_path / "q" / "engram.db"
    assert local.collection == "team"
    server = parse("qdrant://qdrant.internal:6334?side=/srv/engram/side.db")
    assert server.url == "http://qdrant.internal:6334" and str(server.side) == "/srv/engram/side.db"
    assert parse("qdrants://q.example.com?side=/s.db").url == "https://q.example.com:6333"
    with pytest.raises(StoreError, match="side store"):
        open_store("qdrant://qdrant.internal:6333", dim=8)
    with pytest.raises(StoreError, match="absolute folder"):
        parse("qdrant:relative/folder")
