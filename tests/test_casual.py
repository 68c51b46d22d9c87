"""Chat as people type it (engram.extract.casual): lower case, no apostrophes, "gf", "tho" — the
rules read it as they read the same said properly, and an introduction in one breath gives each
of its facts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.extract import extract_candidates
from engram.extract.casual import formal

NOW = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)


def kept(text: str) -> list[tuple[str | None, str]]:
    return [(c.key, c.content) for c in extract_candidates(text, now=NOW)]


@pytest.mark.parametrize(("typed", "written"), [
    ("i'm john, 29, software dev from toronto", "I'm John, 29, software developer from toronto"),
    ("gf is sarah, shes a nurse", "My girlfriend is Sarah, she's a nurse"),
    ("we have a cat called pixel", "We have a cat called Pixel"),
    ("lol i just adopted a kitten named mochi 😍", "Lol I just adopted a kitten named Mochi 😍"),  # an emoji after it
    ("my dog is named max :)", "My dog is named Max :)"),
    ("im so tired", "I'm so tired"),  # "tired" is no name
    ("I feel ill", "I feel ill"),  # "ill" is a word, not "I'll"
    ("I don't think so, dont worry", "I don't think so, dont worry"),  # apostrophes elsewhere: "dont" left as typed
    ("我喜欢u盘", "我喜欢u盘"),  # Chinese is left alone
    ("I moved to the U.S. last year", "I moved to the U.S. last year"),  # not "you.S.", not "Last"
    ("Dev is my brother", "Dev is my brother"),  # a name, not "developer"
])
def test_chat_shorthand_is_written_out_and_nothing_else(typed, written):
    assert formal(typed) == written


@pytest.mark.parametrize(("text", "facts"), [
    ("i'm john, 29, software dev from toronto", [
        ("fact:name", "User's name is John."), ("fact:age", "User is 29 years old."),
        ("fact:occupation", "User is a software developer."), ("fact:hometown", "User is from Toronto."),
    ]),
    ("Hi, I'm Priya, 34, a nurse from Leeds.", [
        ("fact:name", "User's name is Priya."), ("fact:age", "User is 34 years old."),
        ("fact:occupation", "User is a nurse."), ("fact:hometown", "User is from Leeds."),
    ]),
    ("gf is sarah, shes a nurse", [(None, "User's girlfriend is Sarah."), (None, "User's girlfriend is a nurse.")]),
    ("allergic to shellfish btw", [("fact:allergy_shellfish", "User is allergic to shellfish.")]),
    ("im vegan", [("fact:diet", "User is vegan.")]),
    ("just moved to vancouver for work tho", [("fact:location", "User moved to vancouver.")]),
    ("Retired teacher here.", []),  # an adjective before a noun says no state on its own
    ("我叫小明，25岁，程序员，北京人。", [
        ("fact:name", "用户叫小明"), ("fact:age", "用户25岁"), ("fact:occupation", "用户是程序员"),
        ("fact:hometown", "用户是北京人"),
    ]),
    ("我叫小明，今天好累。", [("fact:name", "用户叫小明")]),  # a mood of the day is no part of who one is
])
def test_what_is_typed_fast_is_read_like_what_is_said_properly(text, facts):
    assert kept(text) == facts
