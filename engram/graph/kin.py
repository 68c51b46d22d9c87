"""The people and pets the user named as theirs ("my sister Anna", "我女儿小雨", "a dog named
Max"), read from the user's graph for the rules (`engram.extract.owned`): a later sentence that
starts with the name is about them.

Only the names snapshot is read (cached by the store until the names change): "my sister"
resolved to Anna is an alias of Anna's entity, keyed ``sister@<the user's entity>``
(`engram.graph.names.kin_key`); a second sister named is keyed ``sister@<the user's entity>/<hers>``."""

from __future__ import annotations

from engram.extract.owned import GROUPS, called_as
from engram.graph.extract_entities import SELF
from engram.store.base import Store


def owned_names(store: Store, user_id: str) -> dict[str, str]:
    """Each name (and alias) of the user's own people and pets -> what the user calls them
    ("Anna": "sister", "Max": "dog", "小雨": "女儿", "咪咪": "猫")."""
    snapshot = getattr(store, "graph_names", store.graph_snapshot)(user_id)
    owner = next((a.entity_id for a in snapshot.aliases if a.key == SELF), None)
    if owner is None:
        return {}
    relation: dict[str, str] = {}
    for alias in snapshot.aliases:
        kin, _, whose = alias.key.partition("@")  # "son@<owner>", or "son@<owner>/<entity>" for a second son
        if whose == owner or whose.startswith(owner + "/"):
            relation.setdefault(alias.entity_id, kin)
    found: dict[str, str] = {}
    for alias in snapshot.aliases:
        said, kin = alias.alias, relation.get(alias.entity_id)
        entity = snapshot.entities.get(alias.entity_id)
        if kin is None or kin in GROUPS or "@" in alias.key or entity is None or entity.type not in ("person", "pet"):
            continue
        if (called := called_as(said, kin)) is not None:
            found[said] = called
    return found
