"""A question that names a time retrieves what was said then (engram.when + retrieve)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import Memory

ASKED = datetime(2024, 2, 10, 12, 0, tzinfo=UTC)  # "last May" / "去年五月" = May 2023
MARCH = datetime(2023, 3, 14, 19, 0, tzinfo=UTC)
MAY = datetime(2023, 5, 20, 19, 0, tzinfo=UTC)
JULY = datetime(2023, 7, 2, 19, 0, tzinfo=UTC)

# By words alone the March turn answers best (it says "cook" twice and "dinner").
EN = [
    (MARCH, "I cooked dinner tonight: I cook a big pot of chili every time it snows."),
    (MAY, "I cooked risotto with asparagus tonight."),
    (JULY, "We went to the beach and swam all afternoon."),
]
ZH = [
    (MARCH, "我今天做了红烧肉这道菜，做菜做了一下午，这道菜真好吃。"),
    (MAY, "我今天做了番茄炒蛋这道菜。"),
    (JULY, "我们今天去海边游泳了。"),
]


def _say(memory: Memory, turns, user: str = "u1") -> None:
    for when, text in turns:
        memory.add(text, user_id=user, infer=False, timestamp=when)


def _first(memory: Memory, query: str, **kwargs) -> str:
    return memory.search(query, user_id="u1", **kwargs)[0].memory.content


@pytest.fixture
def engines(db_path, embedder):
    """`open(**settings)`: the same database again; searches leave no access counts, so
    two engines over it rank from the same state."""
    opened: list[Memory] = []

    def _open(**settings) -> Memory:
        m = Memory(db_path, embedder=embedder, reinforce=False, **settings)
        opened.append(m)
        return m

    yield _open
    for m in opened:
        m.close()


@pytest.fixture
def timed(engines):
    return engines()


@pytest.fixture
def plain(engines):
    """Without time understanding."""
    return engines(weight_time=0.0)


def test_last_may_retrieves_the_may_turn_first(timed, plain):
    _say(timed, EN)
    assert "risotto" in _first(timed, "what did I cook last May?", now=ASKED)
    # without reading the date the March turn wins: the assertion above can fail
    assert "chili" in _first(plain, "what did I cook last May?", now=ASKED)


def test_chinese_last_may_retrieves_the_may_turn_first(timed, plain):
    _say(timed, ZH)
    assert "番茄炒蛋" in _first(timed, "去年五月我做了什么菜？", now=ASKED)
    assert "红烧肉" in _first(plain, "去年五月我做了什么菜？", now=ASKED)


def test_relative_dates_are_read_against_now(timed):
    _say(timed, EN)
    # asked in July 2023, "two months ago" is May 2023
    assert "risotto" in _first(timed, "what did I cook two months ago?", now=datetime(2023, 7, 15, tzinfo=UTC))
    # asked in April 2023, "last May" is May 2022: nothing was said then, the words alone rank
    assert "chili" in _first(timed, "what did I cook last May?", now=datetime(2023, 4, 1, tzinfo=UTC))


def test_the_default_reference_is_the_search_time(memory):
    """Said yesterday, asked "yesterday" without `now`: the date beats the better words."""
    _say(memory, EN)
    yesterday = datetime.now(UTC) - timedelta(days=1)
    text = "Grandma came over; we cooked dumplings, then watched a long film together all evening."
    memory.add(text, user_id="u1", infer=False, timestamp=yesterday)
    assert "dumplings" in _first(memory, "what did I cook yesterday?")
    assert "dumplings" not in _first(memory, "what did I cook?")  # the words alone: chili


def test_memories_from_then_are_found_even_past_the_candidate_depth(db_path, embedder):
    """Many better word matches from other months fill every retriever's shortlist; the
    search within the range still brings the May turn in."""
    # the time signal alone: with 8 of 9 memories about cooking, the entity graph (under its hub
    # floor in so small a scope) would favour the cooking turns whatever the month
    with Memory(db_path, embedder=embedder, candidates=3, graph=False) as memory:
        _say(memory, [(MARCH.replace(day=d), f"I cook and cook pasta, cooking day {d}.") for d in range(1, 9)])
        _say(memory, [(MAY, "I cooked risotto with asparagus tonight.")])
        hits = [h.memory.content for h in memory.search("what did I cook last May?", user_id="u1", now=ASKED)]
        assert any("risotto" in h for h in hits[:3])
    with Memory(db_path, embedder=embedder, candidates=3, weight_time=0.0, graph=False) as memory:
        hits = [h.memory.content for h in memory.search("what did I cook last May?", user_id="u1", now=ASKED)]
        assert not any("risotto" in h for h in hits)


def test_a_range_combines_with_the_callers_own_time_filter(memory):
    _say(memory, EN)
    since_june = {"since": datetime(2023, 6, 1, tzinfo=UTC)}
    hits = memory.search("what did I cook last May?", user_id="u1", now=ASKED, filters=since_june)
    assert hits and all(h.memory.created_at >= since_june["since"] for h in hits)


@pytest.mark.parametrize(
    "query", ["what did I cook?", "beach swimming", "我做了什么菜？", "What did I say about chili"]
)
def test_a_query_without_time_words_ranks_exactly_as_before(timed, plain, query):
    _say(timed, EN + ZH)
    with_time = [(h.memory.id, h.score) for h in timed.search(query, user_id="u1", now=ASKED, limit=6)]
    without = [(h.memory.id, h.score) for h in plain.search(query, user_id="u1", now=ASKED, limit=6)]
    assert [i for i, _ in with_time] == [i for i, _ in without]
    assert [s for _, s in with_time] == pytest.approx([s for _, s in without])


def test_time_words_in_earlier_lines_of_a_dialogue_query_do_not_count(timed, plain):
    """A long query is the dialogue so far: "last May" two lines up is not the question."""
    _say(timed, EN)
    dialogue = "User: I moved house last May!\nAssistant: Congratulations!\nUser: what did I cook?"
    got = [h.memory.id for h in timed.search(dialogue, user_id="u1", now=ASKED)]
    assert got == [h.memory.id for h in plain.search(dialogue, user_id="u1", now=ASKED)]
    asked = dialogue.replace("what did I cook?", "what did I cook last May?")
    assert "risotto" in _first(timed, asked, now=ASKED)


def test_now_must_be_a_datetime(memory):
    from engram.errors import InvalidInput

    with pytest.raises(InvalidInput):
        memory.search("what did I cook last May?", user_id="u1", now="2024-02-10")


def test_the_time_boost_shows_in_the_score_parts(timed):
    _say(timed, EN)
    results = timed.search("what did I cook last May?", user_id="u1", now=ASKED, limit=5)
    by_dish = {("risotto" if "risotto" in r.memory.content else "other"): r for r in results}
    assert by_dish["risotto"].parts.time == 1.0
    assert all(r.parts.time == 0.0 for r in results if "risotto" not in r.memory.content
               and r.memory.created_at.month != 5)
    plain_results = timed.search("what did I cook?", user_id="u1", now=ASKED, limit=5)
    assert all(r.parts.time == 0.0 for r in plain_results)
