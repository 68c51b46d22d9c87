"""Time in turns and questions: relative dates resolved against when a turn was said and
indexed (engram.when, engram.when_said); a date a question names counts softly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import Memory
from engram.when import find_ranges
from engram.when_said import NEAR, closeness, named_span, spans

MONDAY = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


def _days(text: str, at: datetime = MONDAY) -> list[tuple[str, str]]:
    return [(str(r.start.date()), str(r.end.date())) for r in find_ranges(text, at)]


@pytest.mark.parametrize("text, days", [
    ("We went camping two weekends ago", [("2023-04-29", "2023-05-01")]),
    ("this past weekend was fun", [("2023-05-06", "2023-05-08")]),
    ("I saw her a few days ago", [("2023-05-02", "2023-05-07")]),
    ("a couple of days ago we met", [("2023-05-02", "2023-05-07")]),
    ("a few weeks ago", [("2023-04-10", "2023-05-01")]),
    ("前几天我们去爬山了", [("2023-05-02", "2023-05-07")]),
    ("几天前我买了一辆车", [("2023-05-02", "2023-05-07")]),
    ("last Saturday", [("2023-05-06", "2023-05-07")]),
    ("上周六我去了公园", [("2023-05-06", "2023-05-07")]),
])
def test_relative_dates_resolve_against_when_they_were_said(text, days):
    assert _days(text) == days


@pytest.mark.parametrize("text", ["我要休息几天", "这几天很忙", "I will stay a few days", "several days of rain"])
def test_durations_are_not_dates(text):
    assert _days(text) == []


def test_a_turn_is_indexed_with_the_days_it_talks_about():
    start, end = named_span("Melanie: I went camping last Saturday!", MONDAY)
    assert datetime.fromtimestamp(start, UTC).date().isoformat() == "2023-05-06"
    assert datetime.fromtimestamp(end, UTC).date().isoformat() == "2023-05-07"
    assert named_span("Melanie: I love camping.", MONDAY) is None
    zh = named_span("我上周六去了杭州", MONDAY)
    assert zh is not None and datetime.fromtimestamp(zh[0], UTC).day == 6


def test_a_named_date_tolerates_a_session_off_by_days():
    [may8] = find_ranges("on May 8, 2023", MONDAY + timedelta(days=30))
    said = (MONDAY + timedelta(days=2)).timestamp()  # the session is dated the 10th
    assert closeness(said, None, spans([may8]), 2.0) == NEAR  # counts, less than on the day
    assert closeness(said, None, spans([may8]), 0.0) == 0.0
    assert closeness(MONDAY.timestamp(), None, spans([may8]), 2.0) == 1.0
    about = (MONDAY.timestamp(), MONDAY.timestamp() + 86400)  # said later, about the 8th
    assert closeness(said + 86400 * 10, about, spans([may8]), 2.0) == 1.0


def _turn(m, text, at, session):
    m.add(text, user_id="u1", infer=False, timestamp=at, session_id=session)


def test_a_question_finds_the_turn_about_the_day_it_names(db_path, embedder):
    for resolve in (True, False):
        with Memory(db_path.with_name(f"r{resolve}.db"), embedder=embedder, resolve_dates=resolve) as m:
            # said on 20 May about the weekend of 6-7 May; the other camping turn is from June
            _turn(m, "Melanie: We went camping two weekends ago, the kids loved it.", MONDAY + timedelta(days=12), "s2")
            _turn(m, "Melanie: We went camping at the lake again, so much fun.", MONDAY + timedelta(days=33), "s3")
            hits = m.search("What did Melanie do camping on May 6, 2023?", user_id="u1", limit=2,
                            now=MONDAY + timedelta(days=40))
            about = next(h for h in hits if "two weekends" in h.memory.content)
            assert (about.parts.time == 1.0) is resolve
            assert (hits[0] is about) is resolve


def test_a_wrongly_named_day_does_not_pull_up_its_weak_matches(db_path, embedder):
    """The question names the day of session 1; the answer was said in session 2. Session 1's
    small talk gains the time boost only as far as it matches otherwise."""
    for by_relevance in (True, False):
        with Memory(db_path.with_name(f"t{by_relevance}.db"), embedder=embedder,
                    time_by_relevance=by_relevance) as m:
            for i, text in enumerate(["Caroline: My neighbour wants to adopt a puppy.", "Caroline: Nice weather today."]):
                _turn(m, text, MONDAY + timedelta(minutes=i), "s1")
            _turn(m, "Caroline: We adopted a puppy named Biscuit, a golden retriever puppy!", MONDAY + timedelta(days=12), "s2")
            hits = [h.memory.content for h in m.search(
                "When did Caroline adopt the puppy, on May 8, 2023?", user_id="u1", limit=3,
                now=MONDAY + timedelta(days=20),
            )]
            answer = next(i for i, c in enumerate(hits) if "Biscuit" in c)
            chatter = hits.index("Caroline: Nice weather today.")
            assert (answer < chatter) is by_relevance
