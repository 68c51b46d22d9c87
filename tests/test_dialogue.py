"""Dialogue structure as a retrieval signal: order from the conversation, the turn a turn
answers, question-answer pairs, filler, speakers (engram.dialogue, engram.dialogue_rank)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from engram import Memory
from engram.dialogue import Conversations, TurnPlace, place_of, speaker_of, turn_number
from engram.dialogue_rank import is_filler
from engram.store.scope_index import ScopeIndex

LOCOMO = Path(__file__).parents[1].parent / "shared" / "data" / "locomo-dev" / "26.json"
DAY = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


def _add(memory, turns, *, session="s1", user="u1", order=None, extra=None):
    """Turns ("Name: text") with turn ids D1:1…; `order` adds them in that order of indexes."""
    entries = [
        {"messages": text, "user_id": user, "session_id": session, "infer": False,
         "timestamp": DAY + timedelta(seconds=i), "metadata": {"dia_id": f"D1:{i + 1}", **(extra or {}).get(i, {})}}
        for i, text in enumerate(turns)
    ]
    memory.add_many([entries[i] for i in (order or range(len(entries)))])


def _contents(memory, query, limit=5, user="u1"):
    return [h.memory.content for h in memory.search(query, user_id=user, limit=limit)]


# --- parsing ---------------------------------------------------------------------
def test_turn_ids_speakers_and_filler_are_read_from_the_turn():
    assert turn_number("D20:10") == (20, 10) and turn_number("20:10") == (20, 10)
    assert turn_number(7) == (0, 7) and turn_number("hello") is None and turn_number(True) is None
    assert speaker_of("Caroline: I went hiking.") == "caroline"
    assert speaker_of("I went hiking.", {"speaker": "Mel"}) == "mel"
    assert speaker_of("Note: the meeting moved", {"role": "user"}) == "note"  # a prefix is a prefix
    assert speaker_of("no prefix here", {"role": "user"}) == "user"
    assert is_filler("Nate: Bye!") and is_filler("Take care, Joanna!") and is_filler("Caroline: Thanks, Mel!")
    assert not is_filler("Nate: I adopted a third turtle.")


def test_links_do_not_depend_on_the_order_turns_are_placed_in():
    places = [
        TurnPlace("c", (1.0, float(i), 0.0), speaker="a" if i % 2 else "b", turn_id=f"D1:{i}") for i in range(1, 9)
    ]
    links = []
    for seed in (0, 1, 2):
        rows = list(range(len(places)))
        random.Random(seed).shuffle(rows)
        conversations = Conversations()
        for row in rows:
            conversations.place(row, places[row])
        links.append(dict(sorted(conversations.refresh().items())))
    assert links[0] == links[1] == links[2]
    assert links[0][0] == -1 and links[0][1] == 0 and links[0][7] == 6


def test_a_turn_answers_the_nearest_earlier_turn_by_another_speaker():
    conversations = Conversations()
    said = [("a", "What is your dog called?"), ("b", "Coco."), ("b", "She is two."), ("a", "Cute!")]
    for i, (speaker, _) in enumerate(said):
        conversations.place(i, TurnPlace("c", (0.0, float(i), 0.0), speaker=speaker))
    links = conversations.refresh()
    assert links[1] == 0 and links[2] == 0  # both of b's turns answer a's question
    assert links[3] == 2


def test_only_another_speakers_turn_or_the_one_named_is_a_question_put_to_a_turn():
    conversations = Conversations()
    said = [("a", "D1:1"), ("a", "D1:2"), ("b", "D1:3"), ("b", "D1:4")]
    for i, (speaker, turn_id) in enumerate(said):
        reply_to = "D1:2" if i == 3 else None
        conversations.place(i, TurnPlace("c", (1.0, float(i), 0.0), speaker=speaker, turn_id=turn_id, reply_to=reply_to))
    links = conversations.refresh()
    assert links[1] == 0 and not conversations.replies(1, 0)  # a's own previous turn
    assert links[2] == 1 and conversations.replies(2, 1)
    assert links[3] == 1 and conversations.replies(3, 1)  # named by reply_to
    alone = Conversations()
    for i in range(2):
        alone.place(i, TurnPlace("c", (1.0, float(i), 0.0)))
    assert alone.refresh()[1] == 0 and not alone.replies(1, 0)  # no speakers known


def test_a_turn_without_a_session_is_placed_in_the_days_conversation():
    assert place_of("fact", None, "s1", 0.0, {}, "x") is None
    assert place_of("turn", None, None, 0.0, {"dia_id": "D3:4"}, "x").conversation.endswith("#3")
    day = 19_500 * 86_400.0
    morning, evening, tomorrow = (place_of("turn", None, None, t, {}, "x") for t in (day + 3600, day + 80_000, day + 90_000))
    assert morning.conversation == evening.conversation != tomorrow.conversation
    assert place_of("turn", "bot", None, day, {}, "x").conversation != morning.conversation  # per agent


def test_in_a_conversation_inferred_from_time_a_long_pause_starts_afresh():
    conversations = Conversations()
    said = [("ann", 0.0), ("bo", 60.0), ("ann", 120.0), ("bo", 120.0 + 3 * 3600), ("ann", 200.0 + 3 * 3600)]
    for row, (speaker, at) in enumerate(said):
        conversations.place(row, place_of("turn", None, None, 19_500 * 86_400.0 + at, {"speaker": speaker}, "x"))
    links = conversations.refresh()
    assert [links[r] for r in range(5)] == [-1, 0, 1, -1, 3]  # bo's turn after three hours answers nothing
    notes = Conversations()  # one voice: memories stored verbatim one after another, not a dialogue
    for row in range(3):
        notes.place(row, place_of("turn", None, None, 19_500 * 86_400.0 + row, {"role": "user"}, "x"))
    assert notes.refresh() == {} and not notes.places  # nothing to link: nothing placed yet
    notes.place(3, place_of("turn", None, None, 19_500 * 86_400.0 + 3, {"role": "assistant"}, "x"))
    assert notes.refresh() == {0: -1, 1: -1, 2: -1, 3: 2}  # a second voice: a dialogue after all


def test_an_agent_that_passes_no_session_still_has_its_answers_read_with_the_questions(memory):
    turns = [
        "Joanna: How long do you hold that yoga pose?",
        "Nate: I typically hold it for 30-60 seconds.",
        "Joanna: I bought a new lamp for the studio.",
        "Nate: Lamps are nice.",
    ]
    memory.add_many(
        {"messages": text, "user_id": "u1", "infer": False, "timestamp": DAY + timedelta(seconds=i)}
        for i, text in enumerate(turns)
    )
    from engram.store.base import Scope

    ids = {m.content: m.id for m in memory.get_all(user_id="u1")}
    links = memory.store.turn_links(Scope("u1"), [ids[t] for t in turns])
    assert links[ids[turns[1]]] == (ids[turns[0]], ids[turns[2]])  # read with the question it answers
    assert "Nate: I typically hold it for 30-60 seconds." in _contents(memory, "How long does Nate hold the yoga pose?", limit=2)


def test_links_are_refreshed_where_turns_were_placed_and_match_a_full_reading():
    """Turns arriving in any order, some naming others by `reply_to` before those exist, one
    moved to a new row: the links kept from each refresh equal one reading of the whole."""
    rng = random.Random(5)
    conversations, links = Conversations(), {}
    for row in range(300):
        turn_id = f"D1:{rng.randrange(400)}"
        reply_to = f"D1:{rng.randrange(400)}" if rng.random() < 0.1 else None
        conversations.place(row, TurnPlace("c", (1.0, float(turn_id[3:]), 0.0), speaker=rng.choice("ab"), turn_id=turn_id, reply_to=reply_to))
        if row == 150:
            conversations.move(40, 1_000)
        if rng.random() < 0.2:
            links.update(conversations.refresh())
    links.update(conversations.refresh())
    fresh = Conversations()
    for row, place in conversations.places.items():
        fresh.place(row, place)
    for name, row in conversations.by_turn_id.items():  # the same turn wins a duplicate id
        fresh.by_turn_id[name] = row
    whole = {r: fresh.link(fresh.turns["c"], p) for p, (_, r) in enumerate(fresh.turns["c"])}
    assert {r: links[r] for r in conversations.places} == whole
    assert len(whole) == 300 and 40 not in whole


# --- retrieval -------------------------------------------------------------------
def test_an_answer_is_read_with_the_question_it_answers_even_when_added_first(memory):
    turns = [
        "Joanna: How long do you hold that yoga pose?",
        "Nate: I typically hold it for 30-60 seconds.",
        "Joanna: I bought a new lamp for the studio.",
        "Nate: Lamps are nice.",
    ]
    _add(memory, turns, order=[3, 1, 2, 0])  # the answer is stored before the question
    hits = _contents(memory, "How long does Nate hold the yoga pose?", limit=3)
    assert "Nate: I typically hold it for 30-60 seconds." in hits[:2]


def test_reply_to_names_the_answered_turn(db_path, embedder):
    with Memory(db_path, embedder=embedder, pair_factor=0.0, weight_dense=0.0) as m:
        turns = [
            "Ann: What was the name of the bakery you liked in Lisbon?",
            "Ann: Also, the weather here is awful.",
            "Ann: Rain all week.",
            "Bo: Manteigaria, best custard tarts.",
        ]
        _add(m, turns, extra={3: {"reply_to": "D1:1"}})
        hits = _contents(m, "bakery in Lisbon", limit=3)
        assert "Bo: Manteigaria, best custard tarts." in hits


def test_a_question_hit_brings_its_answer(db_path, embedder):
    turns = [
        "Caroline: That bowl is awesome, Mel! What gave you the idea for all the colors and patterns?",
        "Melanie: Thanks! I'm obsessed with those, so I made something to catch the eye.",
        "Caroline: I am going to a conference next week.",
    ]
    query = "the idea for the colors and patterns of the bowl"
    for pairs, expected in ((0.9, True), (0.0, False)):
        with Memory(db_path.with_name(f"p{pairs}.db"), embedder=embedder, weight_context=0.0, weight_dense=0.0,
                    pair_factor=pairs) as m:
            _add(m, turns)
            hits = _contents(m, query, limit=2)
            assert (turns[1] in hits) is expected


def test_shuffled_transcript_ranks_like_the_ordered_one(db_path, embedder):
    if not LOCOMO.exists():
        pytest.skip("shared LoCoMo data not found")
    from engram.bench.data import load_locomo
    from engram.bench.metrics import mean_recall, ranks_of

    [corpus] = load_locomo(LOCOMO, max_sessions=4)
    docs = corpus.docs
    shuffled = docs[:]
    random.Random(7).shuffle(shuffled)
    now = max(d.timestamp for d in docs)
    runs = []
    for name, order in (("ordered", docs), ("shuffled", shuffled)):
        with Memory(db_path.with_name(f"{name}.db"), embedder=embedder, reinforce=False) as m:
            m.add_many(
                {"messages": d.text, "user_id": "c", "infer": False, "timestamp": d.timestamp,
                 "session_id": d.session, "metadata": {"dia_id": d.id}}
                for d in order
            )
            runs.append([
                [h.memory.metadata["dia_id"] for h in m.search(q.text, user_id="c", limit=10, now=now)]
                for q in corpus.queries
            ])
    assert runs[0] == runs[1]
    recall = mean_recall([ranks_of(r, q.relevant) for r, q in zip(runs[1], corpus.queries, strict=True)], 10)
    assert recall > 0.5


def test_filler_never_outranks_content(db_path, embedder):
    turns = [
        "Joanna: What do you do on weekends?",
        "Nate: I play video games with my friends, it keeps me sane.",
        "Joanna: Cool, I have to go now.",
        "Nate: Bye Joanna, take care!",
        "Nate: Thanks Joanna!",
        "Nate: See you soon!",
    ]
    fillers = set(turns[3:])
    for factor, kept in ((0.3, True), (1.0, False)):
        with Memory(db_path.with_name(f"f{factor}.db"), embedder=embedder, filler_factor=factor) as m:
            _add(m, turns)
            hits = _contents(m, "What hobby does Nate have?", limit=6)
            first_filler = min(hits.index(f) for f in fillers if f in hits)
            assert (hits.index(turns[1]) < first_filler) is kept


def test_a_question_naming_a_speaker_favours_their_turns(db_path, embedder):
    turns = [
        "Melanie: Caroline, I love painting! Painting sunsets is what I love.",
        "Caroline: I love painting portraits of my friends.",
    ]
    for weight, first in ((0.3, turns[1]), (0.0, turns[0])):
        with Memory(db_path.with_name(f"s{weight}.db"), embedder=embedder, weight_speaker=weight, graph=False,
                    speaker_name_weight=1.0 if weight == 0 else 0.5, weight_dense=0.0) as m:
            _add(m, turns)
            assert _contents(m, "What does Caroline love painting?", limit=2)[0] == first


def _pairs_index(pairs: int, approximate_above: int | None = None, agents=None) -> tuple[ScopeIndex, np.ndarray]:
    """A conversation of `pairs` question-answer turns whose vectors are unrelated to each other."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(2 * pairs, 256)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    n = len(vectors)
    index = ScopeIndex(256, approximate_above=approximate_above, background=False)
    index.add(
        list(range(n)), [f"m{i}" for i in range(n)], list(vectors), [[]] * n, ["active"] * n,
        agents or [None] * n,
        places=[TurnPlace("c", (1.0, float(i), 0.0), speaker="ann" if i % 2 == 0 else "bo") for i in range(n)],
    )
    return index, vectors


@pytest.mark.parametrize("path", ["exact", "gathered", "ivf"])
def test_dense_search_reads_an_answer_with_its_question(path):
    """Asked what the question turn m40 says, its answer m41 (a vector unrelated to the query) comes
    second with the turn it answers counted, and nowhere near without: on each way the index ranks."""
    pairs = 600 if path != "exact" else 100
    agents = ["a" if i < 60 else "b" for i in range(2 * pairs)] if path == "gathered" else None
    index, vectors = _pairs_index(pairs, approximate_above=1_000 if path != "exact" else None, agents=agents)
    agent = "a" if path == "gathered" else None
    read = index.dense(vectors[40], ["active"], agent, 5, context_weight=0.6)
    alone = index.dense(vectors[40], ["active"], agent, 5)
    assert [i for i, _ in read[:2]] == ["m40", "m41"]
    assert read[0][1] > 1.0  # its answer's cosine counts too
    assert "m41" not in [i for i, _ in alone]
    assert alone[0] == ("m40", pytest.approx(1.0, abs=1e-4))  # (the index holds vectors at half precision)


def test_dense_search_does_not_read_a_turn_with_the_same_speakers_last():
    vectors = np.eye(4, 256, dtype=np.float32)
    index = ScopeIndex(256)
    index.add([0, 1], ["m0", "m1"], list(vectors[:2]), [[], []], ["active"] * 2, [None] * 2,
              places=[TurnPlace("c", (1.0, float(i), 0.0), speaker="ann") for i in range(2)])
    assert dict(index.dense(vectors[0], ["active"], None, 2, context_weight=0.6)) == {"m0": 1.0, "m1": 0.0}


def test_an_answer_unlike_the_question_is_found_by_meaning_through_it(db_path, embedder):
    turns = [
        "Joanna: What is the name of your new puppy?",
        "Nate: Coco, after my grandmother.",
        "Joanna: I walked past the city park today.",
        "Nate: The weather was lovely for it.",
        "Joanna: My sister named her band The Owls.",
        "Nate: Names are hard to pick.",
        "Joanna: Puppies at the shelter need homes.",
        "Nate: The new neighbours have a puppy too.",
    ]
    for weight, found in ((0.6, True), (0.0, False)):  # dense alone: rank 4 of 8 against 6
        with Memory(db_path.with_name(f"d{weight}.db"), embedder=embedder, weight_lexical=0.0, pair_factor=0.0,
                    weight_context=weight, graph=False) as m:
            _add(m, turns)
            assert (turns[1] in _contents(m, "what is the name of the puppy", limit=4)) is found


def test_a_turn_is_read_with_the_thread_it_closes(db_path, embedder, monkeypatch):
    """The answer to a follow-up question is about what came before the question."""
    from engram.store import scope_index

    turns = [
        "Melanie: Last summer we saw the Perseid meteor shower while camping.",
        "Caroline: Wow! How did that make you feel?",
        "Melanie: Tiny, and in awe of the universe.",
        "Caroline: I feel great about the new job.",
        "Melanie: I feel the same about my pottery class.",
        "Caroline: The camping shop had a sale.",
    ]
    for hops, found in ((2, True), (1, False)):
        monkeypatch.setattr(scope_index, "THREAD_HOPS", hops)
        with Memory(db_path.with_name(f"t{hops}.db"), embedder=embedder, weight_dense=0.0, graph=False) as m:
            _add(m, turns)
            assert (turns[2] in _contents(m, "How did Melanie feel watching the meteor shower?", limit=2)) is found
