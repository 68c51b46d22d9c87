"""Entity graph memory: the people, pets, places, organisations, projects and things a user's
memories name, linked to those memories and to each other, for multi-hop recall.

- `extract_entities`: entities and relations in what was said (rules, EN + ZH);
- `resolve`: which stored entity a name or relation means (aliases, nicknames, merges);
- `build`: linking memories on the write path, in the write's transaction;
- `llm`: typed entities and relations from the LLM extraction, when one is configured;
- `expand`: graph-expanded retrieval, a signal the `Retriever` fuses;
- `view`: the user's graph as a pydantic model, a table and a self-contained HTML drawing.

Storage is the `Store` protocol's ``graph_*`` methods (contract: engram.store.graph).
"""
