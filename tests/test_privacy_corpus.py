"""The privacy corpora (tests/data/privacy): every secret kind caught in several
formats, EN and ZH, and ordinary sentences with numbers left alone.

negatives.txt grows whenever a false positive is reported: add the sentence, keep 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.privacy import PrivacyPolicy, SecretKind, apply, placeholder, redact, scan

DATA = Path(__file__).parent / "data" / "privacy"
POSITIVES = [json.loads(line) for line in (DATA / "positives.jsonl").read_text("utf-8").splitlines() if line]
NEGATIVES = [
    line for line in (DATA / "negatives.txt").read_text("utf-8").splitlines() if line and not line.startswith("#")
]


def _spans(text: str) -> list[tuple[str, str]]:
    return [(f.kind.value, text[f.start : f.end]) for f in scan(text)]


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_corpora_cover_every_kind_in_both_languages() -> None:
    assert len(NEGATIVES) >= 150
    assert 0.3 < sum(map(_has_cjk, NEGATIVES)) / len(NEGATIVES) < 0.7
    kinds = {s["kind"] for c in POSITIVES for s in c["secrets"]}
    assert kinds == {k.value for k in SecretKind}
    for kind in ("card", "iban", "ssn", "passport", "api_key"):  # the new formats, EN and ZH
        texts = [c["text"] for c in POSITIVES if any(s["kind"] == kind for s in c["secrets"])]
        assert len(texts) >= 4 and any(map(_has_cjk, texts)) and not all(map(_has_cjk, texts)), kind


@pytest.mark.parametrize("case", POSITIVES, ids=lambda c: c["note"])
def test_every_positive_is_caught_with_its_kind(case: dict) -> None:
    found = _spans(case["text"])
    out = redact(case["text"])
    for secret in case["secrets"]:
        assert (secret["kind"], secret["value"]) in found, found
        assert secret["value"] not in out
        assert placeholder(SecretKind(secret["kind"])) in out


def test_no_false_positive_on_the_negative_corpus() -> None:
    flagged = {text: _spans(text) for text in NEGATIVES if scan(text)}
    assert flagged == {}


@pytest.mark.parametrize(
    "text",
    ["The video has 15912345678 views.", "There are 4111111111111111 grains of sand on this beach."],
)
def test_reported_false_positives_stay_as_said(text: str) -> None:
    assert apply(text).text == text


# --------------------------------------------------------------------------- context decides


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("call 15912345678 views later", "phone"),  # a phone word before beats a count word after
        ("电话15912345678个人用", "phone"),
        ("card 4111111111111111 grains", "card"),
        ("my visa 4111111111111111", "card"),
        ("信用卡4111111111111111", "card"),
    ],
)
def test_a_card_or_phone_word_before_wins_over_a_count_after(text: str, kind: str) -> None:
    assert [k for k, _ in _spans(text)] == [kind]


def test_iban_needs_its_checksum_and_country_length() -> None:
    assert _spans("IBAN DE89 3704 0044 0532 0130 00") == [("iban", "DE89 3704 0044 0532 0130 00")]
    assert scan("IBAN DE88 3704 0044 0532 0130 00") == []  # check digits wrong
    assert scan("IBAN DE89 3704 0044 0532 0130 0") == []  # one short for Germany
    assert scan("IBAN ZZ89370400440532013000") == []  # no such country
    # a group after it is not part of it
    assert _spans("GB29 NWBK 6016 1331 9268 19 ABCD ok") == [("iban", "GB29 NWBK 6016 1331 9268 19")]


@pytest.mark.parametrize("number", ["000-22-8143", "666-22-8143", "912-22-8143", "536-00-8143", "536-22-0000",
                                    "078-05-1120", "123-45-6789"])
def test_ssn_outside_the_issued_ranges_is_not_one(number: str) -> None:
    assert scan(f"My SSN is {number}.") == []


def test_ssn_without_dashes_needs_an_ssn_word() -> None:
    assert scan("ref 536 22 8143 and 536228143") == []
    assert _spans("SSN 536 22 8143") == [("ssn", "536 22 8143")]
    assert _spans("social security no. 536228143") == [("ssn", "536228143")]


def test_passport_numbers_only_near_a_passport_word() -> None:
    assert scan("Error code E12345678 and part 123456789.") == []
    assert _spans("passport E12345678") == [("passport", "E12345678")]
    assert _spans("E12345678 is my passport") == [("passport", "E12345678")]
    far = "passport" + " and then a long story about the trip to the mountains" + " E12345678"
    assert scan(far) == []


def test_stated_key_needs_a_long_random_or_hex_value() -> None:
    assert _spans("the api key is 9f86d081884c7d659a2feaa0c55ad015") == [
        ("api_key", "9f86d081884c7d659a2feaa0c55ad015")
    ]
    assert scan("the key is to practice 30 minutes a day") == []
    assert scan("the token is 9f86d081884c") == []  # short: a commit, not a key
    assert scan("the key is release-candidate-2024-build") == []  # words
    assert scan("the token 0x6B175474E89094C44Da98b954EedeAC495271d0F is DAI") == []  # a public address


def test_grouped_cards_need_groups_and_luhn() -> None:
    assert _spans("card 4111.1111.1111.1111") == [("card", "4111.1111.1111.1111")]
    assert scan("card 4111.1111.1111.1112") == []  # Luhn fails
    assert scan("pi is 3.141592653589793") == []
    assert scan("version 4111.1111111111111") == []  # not in groups
    assert scan("ref 1234  4111  1111  1111  1111 x") == []  # a card is not cut out of a longer run


def test_new_kinds_follow_the_policy() -> None:
    text = "IBAN DE89370400440532013000, SSN 536-22-8143, passport E12345678"
    assert apply(text, PrivacyPolicy(iban="drop")).dropped
    kept = apply(text, PrivacyPolicy(ssn="allow", passport="allow")).text
    assert kept == "IBAN [REDACTED:iban], SSN 536-22-8143, passport E12345678"


def test_a_placeholder_is_not_a_context_word() -> None:
    # "[REDACTED:card]" says "card": it must not make the count after it a phone
    text = "My card number is 4954255503491068. The video has 15912345678 views."
    once = redact(text)
    assert once == "My card number is [REDACTED:card]. The video has 15912345678 views."
    assert redact(once) == once
