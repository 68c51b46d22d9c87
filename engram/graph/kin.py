"""The people and pets the user named as theirs ("my sister Anna", "我女儿小雨", "a dog named
Max"), read from the user's graph for the rules (`engram.extract.owned`): a later sentence that
starts with the name is about them.

Only the names snapshot is read (cached by the store until the names change): "my sister"
resolved to Anna is an alias of Anna's entity, keyed ``sister@<the user's entity>``
(`engram.graph.names.kin_key`); a second sister named is keyed ``sister@<the user's entity>/<hers>``."""

from __future__ import annotations

import re
from functools import lru_cache

from engram.animals import ANIMALS_ZH, BREEDS_EN, BREEDS_ZH, PETS_EN
from engram.extract.keys import CJK_RE
from engram.graph.extract_entities import SELF, SELF_REF, extract
from engram.relatives import KIN_EN, KIN_ZH, KIN_ZH_LABEL
from engram.store.base import Store

# one person each: "my kids Anna" or "我家人小雨" would say it wrong
_GROUPS = frozenset({"parents", "children", "family", "kids"})
# the kin and pet words every introduction of someone of the user's says (a quick test before the
# entity rules read a turn; one regex of them all took ~0.1 ms a turn)
_WHOSE_EN = frozenset(w for said in (*KIN_EN, *PETS_EN, *BREEDS_EN) for w in said.split())
_WHOSE_ZH = tuple({*KIN_ZH, *ANIMALS_ZH.values(), *BREEDS_ZH})
_WORD_RE = re.compile(r"[a-zé-]+")  # ("sister's": "sister")


def _says_whose(text: str) -> bool:
    """Does `text` say a kin or pet word (in either language)?"""
    if CJK_RE.search(text) and any(word in text for word in _WHOSE_ZH):
        return True
    return not _WHOSE_EN.isdisjoint(_WORD_RE.findall(text.lower()))


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
        if kin is None or kin in _GROUPS or "@" in alias.key or entity is None or entity.type not in ("person", "pet"):
            continue
        if (called := _called(said, kin)) is not None:
            found[said] = called
    return found


@lru_cache(maxsize=1024)
def introduced(text: str) -> tuple[tuple[str, str], ...]:
    """The user's people and pets `text` itself names as theirs ("My partner's name is Sam", "I
    have a dog named Rex", "我女儿叫小雨"), as (name, what the user calls them) like
    `owned_names`. Why: "Sam is a chef." in the same message is about the partner too, and the
    graph links the message only after it is written. Cached: a retried or repeated message."""
    if not _says_whose(text):
        return ()
    return tuple(
        (ref.name, called) for ref in extract(text).refs
        if ref.owner == SELF_REF and ref.named and ref.relation and ref.relation not in _GROUPS
        and ref.type in ("person", "pet") and (called := _called(ref.name, ref.relation)) is not None
    )


def _called(said: str, kin: str) -> str | None:
    """What the user calls the one named `said` in the language of the name ("小雨" is "女儿"),
    None for a Latin name the user gave in Chinese ("我的狗叫Max"): said in Chinese only."""
    if CJK_RE.search(said) and not CJK_RE.search(kin):
        return KIN_ZH_LABEL.get(kin) or ANIMALS_ZH.get(kin, kin)
    if not CJK_RE.search(said) and CJK_RE.search(kin):
        return None
    return kin
