"""Typed entities and relations from the LLM extraction (scripted server), into the graph:
grounded in what the user said, or dropped and counted."""

from __future__ import annotations


def relations(memory, user="u"):
    g = memory.graph(user)
    name = {e.id: e.name for e in g.entities}
    return {(name[r.source], r.relation, name[r.target]) for r in g.relations}, {e.name: e for e in g.entities}


def test_the_llms_typed_entities_and_relations_join_the_graph(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [{
        "content": "User's contact at Initech for project Falcon is Priya.", "kind": "fact", "reason": "stated",
        "entities": [{"name": "Priya", "type": "person"}, {"name": "Initech", "type": "company"},
                     {"name": "Falcon", "type": "project"}, {"name": "Bob", "type": "person"}],
        "relations": [{"source": "Priya", "relation": "contact of", "target": "Initech", "reason": "she is the contact"},
                      {"source": "Initech", "relation": "runs", "target": "Falcon", "reason": "their project"},
                      {"source": "Bob", "relation": "boss_of", "target": "user", "reason": "made up"}],
    }]})
    memory = llm_memory()
    memory.add("for falcon our contact over at initech is priya", user_id="u")
    rels, entities = relations(memory)
    assert {("Priya", "contact_of", "Initech"), ("Initech", "runs", "Falcon")} <= rels
    assert entities["Initech"].type == "org" and entities["Falcon"].type == "project"
    assert "Bob" not in entities  # not something the user said: dropped
    assert memory.llm_usage()["tasks"]["extract_links_ungrounded"] == 2  # Bob, and the relation to him


def test_a_traditional_name_from_the_llm_is_the_simplified_one_the_user_wrote(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [{
        "content": "用户的联系人是张三", "kind": "fact", "reason": "用户陈述",
        "entities": [{"name": "張三", "type": "人物"}], "relations": [{"source": "張三", "relation": "contact_of",
                                                                   "target": "user", "reason": "联系人"}],
    }]})
    memory = llm_memory()
    memory.add("我的联系人是张三", user_id="u")
    rels, entities = relations(memory)
    assert entities["张三"].type == "person" and "張三" not in entities  # one entity, the user's writing
    assert ("张三", "contact_of", "user") in rels
