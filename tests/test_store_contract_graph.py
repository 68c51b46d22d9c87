"""The entity graph and the dialogue reads of the storage contract, on every backend
(tests/store_backends.py): the same graph writes, consistency on delete, isolation and
conversation places give the same answers whatever stores them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import Memory
from engram.store.base import Scope
from engram.store.graph import AliasRow, EdgeRow, EntityRow, GraphEvent, MentionRow
from store_backends import store_factory, store_target  # noqa: F401 - fixtures

AT = datetime(2026, 5, 1, 12, tzinfo=UTC)
DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


@pytest.fixture
def memory(store_target, embedder):
    with Memory(store=store_target, embedder=embedder) as m:
        yield m


def _entity(entity_id: str, name: str, kind: str = "person") -> EntityRow:
    return EntityRow(entity_id, "u", name, kind, AT)


def _graph(memory, user):
    g = memory.graph(user)
    by_id = {e.id: e.name for e in g.entities}
    return {e.name: e for e in g.entities}, {(by_id[r.source], r.relation, by_id[r.target]) for r in g.relations}


# -- the store's graph methods -----------------------------------------------------------
def test_graph_write_snapshot_merge_split_and_history(store_factory):
    store = store_factory()
    store.graph_write(
        "u", entities=[_entity("e1", "Anna"), _entity("e2", "Annie"), _entity("e3", "Google", "org")],
        aliases=[AliasRow("e1", "anna", "Anna"), AliasRow("e2", "annie", "Annie"), AliasRow("e3", "google", "Google")],
        mentions=[MentionRow("e1", "m1", "subject"), MentionRow("e2", "m2", "subject"), MentionRow("e3", "m1", "mention")],
        edges=[EdgeRow("e1", "works_at", "e3", "m1", "said so"), EdgeRow("e2", "works_at", "e3", "m2")],
        events=[GraphEvent("u", "CREATE", "e1", None, "Anna", AT), GraphEvent("u", "CREATE", "e2", None, "Annie", AT)],
    )
    snap = store_factory().graph_snapshot("u")  # another connection (process) reads the same
    assert set(snap.entities) == {"e1", "e2", "e3"} and snap.entities["e1"].created_at == AT
    assert snap.edges == [EdgeRow("e1", "works_at", "e3", "m1", "said so"), EdgeRow("e2", "works_at", "e3", "m2")]
    store.graph_merge("u", "e1", "e2", "the same person", AT)
    snap = store.graph_snapshot("u")  # the cache follows the write
    assert "e2" not in snap.entities and {a.key for a in snap.aliases if a.entity_id == "e1"} == {"anna", "annie"}
    assert {(m.entity_id, m.memory_id) for m in snap.mentions} == {("e1", "m1"), ("e1", "m2"), ("e3", "m1")}
    assert {(e.src, e.dst, e.memory_id) for e in snap.edges} == {("e1", "e3", "m1"), ("e1", "e3", "m2")}
    store.graph_split("u", "e1", _entity("e4", "Annie"), ["annie"], ["m2"], "two people after all", AT)
    snap = store_factory().graph_snapshot("u")
    assert {(m.entity_id, m.memory_id) for m in snap.mentions} == {("e1", "m1"), ("e4", "m2"), ("e3", "m1")}
    assert {(e.src, e.memory_id) for e in snap.edges} == {("e1", "m1"), ("e4", "m2")}
    assert [a.entity_id for a in snap.aliases if a.key == "annie"] == ["e4"]
    assert [(h.action, h.entity_id) for h in store.graph_history("u")] == [
        ("CREATE", "e1"), ("CREATE", "e1"), ("MERGE", "e1"), ("SPLIT", "e4"), ("SPLIT", "e1"),
    ]  # Annie's creation now reads as e1's (merged), and the trace keeps its time
    assert store.graph_history("u")[0].at == AT
    store.graph_write("u", mentions=[MentionRow("e3", "m2", "mention")], replace=["m1"])
    snap = store.graph_snapshot("u")  # m1 re-derived without Anna: Anna (only m1) is gone, with her trace
    assert set(snap.entities) == {"e3", "e4"} and all(e.memory_id != "m1" for e in snap.edges)
    assert all(h.entity_id != "e1" for h in store.graph_history("u"))
    assert store.graph_snapshot("v").entities == {} and store.graph_history("v") == []


def test_the_names_the_write_path_resolves_against_follow_every_change(store_factory):
    store = store_factory()
    store.graph_write("u", entities=[_entity("e1", "Anna")], aliases=[AliasRow("e1", "anna", "Anna")],
                      mentions=[MentionRow("e1", "m1", "subject")])
    assert set(store.graph_names("u").entities) == {"e1"}
    store.graph_write("u", mentions=[MentionRow("e1", "m2", "mention")])  # a known name mentioned again
    store.graph_write("u", entities=[_entity("e2", "Porto", "place")], aliases=[AliasRow("e2", "porto", "Porto")],
                      mentions=[MentionRow("e2", "m2", "mention")])
    names = store.graph_names("u")
    assert set(names.entities) == {"e1", "e2"} and {a.key for a in names.aliases} == {"anna", "porto"}
    with pytest.raises(RuntimeError), store.atomic():  # a write that never happened
        store.graph_write("u", entities=[_entity("e3", "Lily")], aliases=[AliasRow("e3", "lily", "Lily")],
                          mentions=[MentionRow("e3", "m3", "subject")])
        assert "e3" in store.graph_names("u").entities  # read inside the transaction
        assert "e3" in store.graph_snapshot("u").entities
        raise RuntimeError("the caller gave up")
    assert set(store.graph_names("u").entities) == {"e1", "e2"}
    assert set(store.graph_snapshot("u").entities) == {"e1", "e2"}


# -- the engine's graph on each backend ----------------------------------------------------
def test_deleting_memories_keeps_the_graph_consistent(memory):
    first = memory.add("I adopted a dog named Coco.", user_id="u", infer=False)[0].memory
    second = memory.add("Coco loves the beach.", user_id="u", infer=False)[0].memory
    memory.add("My sister Beth works at Initech.", user_id="u", infer=False)
    entities, rels = _graph(memory, "u")
    assert {"Coco", "Beth", "Initech"} <= set(entities) and ("Beth", "works_at", "Initech") in rels
    assert first.id in memory.store.graph_live("u")
    memory.delete(first.id)
    assert "Coco" in _graph(memory, "u")[0] and first.id not in memory.store.graph_live("u")
    memory.delete(second.id)
    assert "Coco" not in _graph(memory, "u")[0]
    assert not any("Coco" in h.detail for h in memory.store.graph_history("u"))  # the trace went with it
    memory.forget("Beth", user_id="u")
    entities, _ = _graph(memory, "u")
    assert "Beth" not in entities and "Initech" not in entities
    memory.add("I adopted a cat named Luna.", user_id="u", infer=False)
    memory.delete_all(user_id="u")
    snap = memory.store.graph_snapshot("u")
    assert snap.entities == {} and snap.aliases == snap.mentions == snap.edges == []
    assert memory.store.graph_history("u") == []


def test_users_never_share_a_graph(memory):
    memory.add("My sister Anna works at Google.", user_id="a", infer=False)
    memory.add("I adopted a dog named Coco.", user_id="b", infer=False)
    a, _ = _graph(memory, "a")
    b, _ = _graph(memory, "b")
    assert "Anna" in a and "Anna" not in b and "Coco" in b and "Coco" not in a
    assert memory.store.graph_live("b").isdisjoint(memory.store.graph_live("a"))
    assert all(r.memory.user_id == "b" for r in memory.search("Who is Anna's employer?", user_id="b"))


def test_a_relationship_question_reaches_a_memory_without_its_words(memory):
    memory.add_many([{"messages": m, "user_id": "w", "infer": False} for m in (
        "张三是甲公司的联系人。", "我们和甲公司合作项目Y。", "今天天气很好。", "我喜欢喝咖啡。", "项目Z进展顺利。",
        # other contacts share the question's words: without the graph they outrank 张三
        "李四是乙公司的联系人。", "王五是丙公司的联系人。", "赵六是丁公司的联系人。",
    )])
    found = [r.memory.content for r in memory.search("项目Y的联系人是谁？", user_id="w", limit=3)]
    assert "张三是甲公司的联系人。" in found  # 项目Y → 甲公司 → 张三


# -- dialogue: conversation places, speakers, named days ------------------------------------
TURNS = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool, Caroline! What happened that was so awesome?",
    "Caroline: The transgender stories were so inspiring! I was so happy.",
    "Melanie: I'm going to paint a sunrise last Saturday with my kids.",
]


def _add_dialogue(memory, user="u1", session="s1"):
    memory.add_many([
        {"messages": text, "user_id": user, "session_id": session, "infer": False,
         "timestamp": DAY + timedelta(seconds=i), "metadata": {"dia_id": f"D1:{i + 1}"}}
        for i, text in enumerate(TURNS)
    ])
    by_text = {m.content: m.id for m in memory.get_all(user_id=user, limit=None)}
    return [by_text[t] for t in TURNS]


def test_a_search_reads_only_the_part_of_the_graph_its_question_reaches(memory, monkeypatch):
    """The graph signal from the names, the named entities' edges and counts and the memories it
    follows is the one from the whole graph; a question naming no entity the user's graph knows
    reads nothing but the (cached) names."""
    from engram.graph.expand import expand, expand_in

    turns = [f"Melanie: I went hiking with friend number {i}." for i in range(40)]
    turns += [
        "Melanie: I play clarinet in a band.", "Melanie: My violin needs new strings.",
        "My sister Beth works at Initech.", "Beth adopted a cat named Coco.", "Our project Atlas ships in May.",
        "Beth and Tom lead project Atlas.", "张三是甲公司的联系人。", "我们和甲公司合作项目Y。",
    ]
    memory.add_many([{"messages": t, "user_id": "h", "infer": False} for t in turns])
    store = memory.store
    for question in (
        "What instruments does Melanie play?", "What did Melanie say?", "Who works at Initech?",
        "Which pets does my sister have?", "Who leads project Atlas?", "项目Y的联系人是谁？", "What does Beth do?",
    ):
        whole = expand(store.graph_snapshot("h"), question, fanout=8, budget=20)
        assert expand_in(store, "h", question, fanout=8, budget=20) == whole, question
    before = expand_in(store, "h", "Which pets does Beth have?", fanout=8, budget=20)
    memory.add_many([{"messages": "Beth adopted a dog named Rex.", "user_id": "h", "infer": False}])
    after = expand_in(store, "h", "Which pets does Beth have?", fanout=8, budget=20)
    assert before and len(after) > len(before)  # what is remembered is read afresh after a write
    assert after == expand(store.graph_snapshot("h"), "Which pets does Beth have?", fanout=8, budget=20)
    read = []
    for name in ("graph_snapshot", "graph_around", "graph_mentioned"):
        monkeypatch.setattr(store, name, lambda *args, name=name: read.append(name))
    assert expand_in(store, "h", "Which city did Zoe move to?", fanout=8, budget=20) == {}
    assert expand_in(store, "h", "Where is the hiking trail?", fanout=8, budget=20) == {}  # not a graph question
    assert read == []


def test_turn_links_speakers_and_named_spans(memory, store_target, embedder):
    ids = _add_dialogue(memory)
    scope = Scope("u1")
    for store in (memory.store, None):  # this process's index (patched by its writes), then a fresh load
        if store is None:
            fresh = Memory(store=store_target, embedder=embedder)
            store = fresh.store
        links = store.turn_links(scope, ids)
        assert links[ids[1]] == (ids[0], ids[2])  # Melanie answers Caroline's first turn; Caroline answers her
        assert links[ids[0]][0] is None
        speakers, said = store.turns_by(scope, ["melanie"])
        assert {"caroline", "melanie"} <= speakers and said == {ids[1], ids[3]}
        spans = store.named_spans(scope, ids)
        assert set(spans) == {ids[0], ids[3]}  # "yesterday", "last Saturday"
        start, end = spans[ids[3]]
        assert datetime.fromtimestamp(start, UTC).date() == datetime(2023, 5, 6).date() and end > start
        assert store.turn_links(Scope("nobody"), ids) == {} and store.turns_by(Scope("nobody"), ["melanie"])[1] == set()
        assert store.named_spans(Scope("nobody"), ids) == {}
    fresh.close()


def test_a_question_naming_a_speaker_favours_their_turns(store_target, embedder):
    turns = [
        "Melanie: Caroline, I love painting! Painting sunsets is what I love.",
        "Caroline: I love painting portraits of my friends.",
    ]
    with Memory(store=store_target, embedder=embedder, weight_speaker=0.3, graph=False,
                speaker_name_weight=0.5, weight_dense=0.0) as m:
        m.add_many([
            {"messages": text, "user_id": "u1", "session_id": "s1", "infer": False,
             "timestamp": DAY + timedelta(seconds=i), "metadata": {"dia_id": f"D1:{i + 1}"}}
            for i, text in enumerate(turns)
        ])
        hits = [h.memory.content for h in m.search("What does Caroline love painting?", user_id="u1", limit=2)]
        assert hits[0] == turns[1]


def test_a_postgres_store_of_schema_2_gains_the_graph(tmp_path, embedder):
    """An existing PostgreSQL store (before the graph) upgrades on open: its memories stay, the
    graph is built for what is said from then on, and deleting keeps it consistent."""
    import psycopg

    from store_backends import UNDO_POSTGRES_4, Unavailable, postgres_target

    try:
        url = postgres_target(tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    with Memory(store=url, embedder=embedder) as m:
        old = m.add("I adopted a dog named Coco.", user_id="u", infer=False)[0].memory
    with psycopg.connect(url, autocommit=True) as db:  # as a store written before migration 3
        for statement in UNDO_POSTGRES_4:
            db.execute(statement)
        for table in ("graph_entities", "graph_aliases", "graph_mentions", "graph_edges", "graph_history"):
            db.execute(f"DROP TABLE {table}")
        db.execute("DROP TRIGGER graph_memory_deleted ON memories")
        db.execute("DROP FUNCTION graph_memory_deleted, graph_entity_orphaned")
        db.execute("UPDATE engram_schema SET version = 2")
    with Memory(store=url, embedder=embedder) as m:
        assert m.store.schema_version >= 3 and m.get(old.id) is not None
        new = m.add("My sister Beth works at Initech.", user_id="u", infer=False)[0].memory
        assert {"Beth", "Initech"} <= {e.name for e in m.graph("u").entities}
        m.delete(new.id)
        assert m.store.graph_snapshot("u").entities == {}
