"""Every user turn kept as an episode (issue #12): what a conversation said through `add()` leaves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import Action, Kind, Status
from engram.episodes import is_chatter
from helpers import is_episode

SESSION = [
    "I practice taekwondo.",
    "I just got a puppy! Her name's Coco.",
    "We're planning a trip to Japan in April.",
    "I can't eat gluten.",
    "Bye!",
]


def episodes(memory, user, **filters):
    return memory.get_all(user_id=user, filters={"kind": ["turn"], **filters}, limit=None)


def facts(memory, user):
    return [m for m in memory.get_all(user_id=user, limit=None) if m.kind not in (Kind.TURN, Kind.SUMMARY)]


def test_every_user_turn_is_kept_but_chatter_is_not(memory):
    for text in SESSION:
        memory.add(text, user_id="ana", session_id="s1")
    kept = sorted(e.content for e in episodes(memory, "ana"))
    assert kept == sorted(SESSION[:4])
    assert all(e.session_id == "s1" and e.status is Status.ACTIVE for e in episodes(memory, "ana"))
    hits = memory.search("what martial art do I do?", user_id="ana", limit=3)
    assert hits and "taekwondo" in hits[0].memory.content


def test_add_reports_the_episode_it_kept(memory):
    events = memory.add("I practice taekwondo.", user_id="ana")
    kept = [e for e in events if e.memory is not None and e.memory.kind is Kind.TURN]
    assert len(kept) == 1 and kept[0].action is Action.ADD
    assert memory.add("haha thanks!", user_id="ana") == []


def test_a_message_that_says_one_thing_twice_reports_it_once(memory):
    """"I have a cat named Biscuit" gives two statements of one fact: one ADD, no NOOP onto it."""
    events = memory.add("I have a cat named Biscuit.", user_id="u")
    assert [(e.action.value, e.memory.content) for e in events if not is_episode(e.memory)] == [
        ("ADD", "User has a cat named Biscuit.")]
    assert memory.get(events[0].memory.id).strength == 1.0  # not reinforced by its own restatement


def test_an_episode_carries_the_assistant_turn_it_answers(memory):
    memory.add(
        [{"role": "assistant", "content": "What's your dog's name?"}, {"role": "user", "content": "Coco."}],
        user_id="ana", session_id="s1",
    )
    (episode,) = episodes(memory, "ana")
    assert episode.content == "Coco."
    assert episode.metadata["reply_to"] == "What's your dog's name?"
    hits = memory.search("what is my dog's name?", user_id="ana", limit=3)
    # the fact read from the answer with its question stands for the episode (engram.extract.answers)
    assert [h.memory.content for h in hits][:1] == ["User's dog's name is Coco."]
    assert [e.content for e in memory.provenance(hits[0].memory.id)] == ["Coco."]


def test_the_turn_answered_may_come_from_the_previous_exchange(memory):
    memory.add([{"role": "user", "content": "I just got a puppy!"}, {"role": "assistant", "content": "What's her name?"}],
               user_id="ana", session_id="s1")
    memory.add([{"role": "user", "content": "Coco."}, {"role": "assistant", "content": "Cute!"}],
               user_id="ana", session_id="s1")
    coco = next(e for e in episodes(memory, "ana") if e.content == "Coco.")
    assert coco.metadata["reply_to"] == "What's her name?"


def test_search_says_each_thing_once(memory):
    memory.add("I live in Berlin.", user_id="ana")
    memory.add("I practice taekwondo in Berlin.", user_id="ana")
    hits = memory.search("Berlin", user_id="ana", limit=2)
    # a fact and the episode it was drawn from are one thing said: the second hit is the other turn
    said = [h.memory.id if h.memory.kind is Kind.TURN else h.memory.metadata["episode"] for h in hits]
    assert len(set(said)) == 2


def test_a_short_yes_to_a_question_is_kept(memory):
    memory.add(
        [{"role": "assistant", "content": "Shall I book the flight for Friday?"}, {"role": "user", "content": "ok"}],
        user_id="ana",
    )
    assert [e.content for e in episodes(memory, "ana")] == ["ok"]


def test_a_fact_points_back_to_its_episode_and_keeps_the_callers_metadata(memory):
    said = datetime(2024, 5, 8, 13, 56, tzinfo=UTC)
    memory.add("I live in Berlin.", user_id="ana", session_id="s9", timestamp=said, metadata={"dia_id": "D1:3"})
    (episode,) = episodes(memory, "ana")
    (fact,) = facts(memory, "ana")
    assert "Berlin" in fact.content and fact.content != episode.content
    assert fact.metadata["episode"] == episode.id
    assert fact.metadata["dia_id"] == episode.metadata["dia_id"] == "D1:3"
    assert episode.created_at == said and episode.session_id == "s9"
    assert [e.id for e in memory.provenance(fact.id)] == [episode.id]
    assert memory.provenance(episode.id) == []


def test_chinese_turns_are_episodes_too(memory):
    memory.add("我养了一只猫，叫咪咪。", user_id="xm")
    memory.add("哈哈", user_id="xm")
    memory.add("谢谢！", user_id="xm")
    assert [e.content for e in episodes(memory, "xm")] == ["我养了一只猫，叫咪咪。"]
    hits = memory.search("我的猫叫什么名字", user_id="xm", limit=3)
    assert any("咪咪" in h.memory.content for h in hits)


def test_secrets_never_reach_an_episode(memory, db_path):
    memory.add("my password is hunter2-Secret! and I live in Oslo", user_id="ana")
    assert all("hunter2" not in e.content for e in episodes(memory, "ana"))
    assert b"hunter2" not in db_path.read_bytes()


def test_forget_and_delete_reach_episodes(memory):
    memory.add("I can't eat gluten.", user_id="ana")
    memory.add("I practice taekwondo.", user_id="ana")
    memory.forget("gluten", user_id="ana")
    left = [m.content for m in memory.get_all(user_id="ana", filters={"status": []}, limit=None)]
    assert left and not any("gluten" in c for c in left)
    (episode,) = episodes(memory, "ana")
    memory.delete(episode.id)
    assert episodes(memory, "ana") == []


def test_deleting_an_episode_deletes_the_facts_drawn_from_it(memory):
    memory.add("I live in Berlin.", user_id="ana")
    (episode,) = episodes(memory, "ana")
    memory.delete(episode.id)
    assert memory.get_all(user_id="ana", filters={"status": []}, limit=None) == []


def test_pause_keeps_no_episode(memory):
    memory.pause("ana")
    memory.add("I practice taekwondo.", user_id="ana")
    memory.resume("ana")
    assert episodes(memory, "ana") == []


def test_the_capsule_holds_facts_not_episodes(memory):
    with memory.session("ana") as session:
        session.add("I live in Berlin.")
        session.add("I practice taekwondo on Tuesdays with my friends from work.")
    text = memory.capsule("ana").text
    assert "Berlin" in text
    assert "I practice taekwondo on Tuesdays" not in text


def test_context_may_cite_the_most_relevant_episode(memory):
    memory.add(
        [{"role": "assistant", "content": "What's your dog's name?"}, {"role": "user", "content": "Coco."}],
        user_id="ana",
    )
    context = memory.context("what is my dog called?", user_id="ana")
    assert "Coco" in context.text


def test_maintain_ages_episodes_but_keeps_their_facts(memory):
    long_ago = datetime.now(UTC) - timedelta(days=400)
    memory.add("I live in Berlin.", user_id="ana", timestamp=long_ago)
    memory.maintain(now=datetime.now(UTC))
    assert episodes(memory, "ana") == []  # archived: no longer live
    assert [e.status for e in episodes(memory, "ana", status=["archived"])] == [Status.ARCHIVED]
    assert any("Berlin" in f.content for f in facts(memory, "ana"))


def test_maintain_folds_an_old_session_into_its_delta(memory):
    said = datetime.now(UTC) - timedelta(days=45)
    for text in ("I live in Berlin.", "I practice taekwondo every Tuesday.", "Work was long today, the usual meetings."):
        memory.add(text, user_id="ana", session_id="old", timestamp=said)
    memory.add("I just got a puppy named Coco.", user_id="ana", session_id="new")
    delta = memory.end_session("ana", "old")
    report = memory.maintain(user_id="ana")
    assert report.folded == 3
    folded = episodes(memory, "ana", status=["archived"])
    assert {e.metadata["folded_into"] for e in folded} == {delta.summary.id}
    assert [e.session_id for e in episodes(memory, "ana")] == ["new"]  # an open session keeps its turns
    assert any("Berlin" in f.content for f in facts(memory, "ana"))  # the facts drawn from them stay


def test_verbatim_storage_is_unchanged(memory):
    events = memory.add(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello!"}], user_id="ana", infer=False
    )
    assert [e.memory.content for e in events] == ["hi", "hello!"]


def test_chatter_rules():
    assert is_chatter("Bye!") and is_chatter("Thanks, you too!") and is_chatter("😂😂")
    assert is_chatter("Hey Mel! Good to see you!") and is_chatter("好的") and is_chatter("哈哈哈")
    assert not is_chatter("Coco.") and not is_chatter("I practice taekwondo.")
    assert not is_chatter("yes", answers="Do you have kids?") and not is_chatter("要", answers="要不要加糖？")
    assert not is_chatter("我养了一只猫")


def test_llm_memories_point_back_to_their_episode(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [{"content": "User's puppy is named Coco.", "kind": "fact",
                                       "reason": "the user said so", "importance": 0.6}]})
    memory = llm_memory()
    memory.add(
        [{"role": "assistant", "content": "What's your puppy's name?"}, {"role": "user", "content": "Her name's Coco."}],
        user_id="ana", metadata={"dia_id": "D2:4"},
    )
    (episode,) = episodes(memory, "ana")
    (fact,) = [f for f in facts(memory, "ana") if f.source.value == "llm"]
    assert fact.metadata["episode"] == episode.id and fact.metadata["dia_id"] == "D2:4"
    assert [e.content for e in memory.provenance(fact.id)] == ["Her name's Coco."]


def test_an_episode_whose_fact_was_replaced_is_history_too(memory):
    memory.add("I live in Berlin.", user_id="ana")
    memory.add("I moved to Lisbon.", user_id="ana")
    hits = [h.memory.content for h in memory.search("where do I live?", user_id="ana", limit=5)]
    assert not any("Berlin" in h for h in hits) and any("Lisbon" in h for h in hits)
    (old,) = [e for e in episodes(memory, "ana", status=["superseded"])]
    assert old.content == "I live in Berlin." and old.superseded_by is not None
    memory.add("Forget what I just said.", user_id="ana")  # withdrawn: Berlin and what said it come back
    assert "I live in Berlin." in [e.content for e in episodes(memory, "ana")]


def test_an_episode_that_said_more_stays_when_one_fact_is_replaced(memory):
    memory.add("I live in Berlin and I have a cat named Tom.", user_id="ana")
    memory.add("I moved to Lisbon.", user_id="ana")
    assert "I live in Berlin and I have a cat named Tom." in [e.content for e in episodes(memory, "ana")]


@pytest.mark.parametrize(
    "said, question, current",
    [
        (["I live in Lisbon.", "I moved to Porto last month.", "I love sushi."], "where do I live?", "Porto"),
        (["I live in Lisbon.", "I moved to Porto.", "I relocated to Berlin."], "where do I live?", "Berlin"),
        (["我住在北京。", "我上个月搬到了上海。", "我喜欢吃寿司。"], "我住在哪里？", "上海"),
    ],
)
def test_what_an_old_version_matches_finds_the_current_one(memory, said, question, current):
    for text in said:
        memory.add(text, user_id="ana")
    top = memory.search(question, user_id="ana", limit=3)[0].memory
    assert current in top.content and top.status is Status.ACTIVE


def test_asking_for_old_versions_still_gets_them(memory):
    memory.add("I live in Lisbon.", user_id="ana")
    memory.add("I moved to Porto.", user_id="ana")
    old = memory.search("where do I live?", user_id="ana", filters={"status": ["superseded"]}, limit=5)
    assert old and all(h.memory.status is Status.SUPERSEDED for h in old)
    assert any("Lisbon" in h.memory.content for h in old)


def test_an_episode_is_not_shown_as_a_fact_that_lacks_what_matched(memory):
    memory.add("I'm vegetarian and I live in Lisbon. My wife Ana is a doctor.", user_id="ana")
    memory.add("I moved to Porto last month.", user_id="ana")
    shown = [h.memory.content for h in memory.search("where do I live", user_id="ana", limit=3)]
    assert "Porto" in shown[0]
    # the first turn matched on "live in Lisbon", which its vegetarian fact does not say
    assert "User is vegetarian." not in shown[:2]
    assert "I'm vegetarian and I live in Lisbon. My wife Ana is a doctor." in shown


def test_a_bare_answer_is_embedded_with_the_question_it_answers(db_path):
    """"Coco." means nothing alone: its vector is made with the last sentence of the turn it
    answers, so the meaning alone (no shared words) finds each answer first (2 of 6 before)."""
    from engram import Memory
    from engram.providers.use import USEEmbedder
    from engram.records import text_to_embed

    assert text_to_embed(Kind.TURN, "Coco.", {"reply_to": "Cute! What's her name?"}) == "What's her name?\nCoco."
    assert text_to_embed(Kind.TURN, "可可。", {"reply_to": "好可爱！它叫什么名字？"}) == "它叫什么名字？\n可可。"
    assert text_to_embed(Kind.FACT, "User has a dog.", {"reply_to": "What's her name?"}) == "User has a dog."
    asked = {
        "What's your dog's name?": ("Coco.", "what is my dog called"),
        "What's your favourite colour?": ("Blue, always.", "which colour do I like best"),
        "Which day is your piano lesson?": ("Tuesday.", "when is my piano lesson"),
        "Where did you grow up?": ("Lisbon, mostly.", "where was I raised"),
        "What do you do for work?": ("Nursing, night shifts.", "what is my job"),
        "What is your sister called?": ("Mia.", "what is my sister's name"),
    }
    with Memory(db_path, embedder=USEEmbedder(), weight_lexical=0.0) as memory:
        for question, (answer, _) in asked.items():
            memory.add([{"role": "assistant", "content": question}, {"role": "user", "content": answer}],
                       user_id="ana", session_id="s1")
        for answer, query in asked.values():
            # (a fact read from an answer stands for its episode: what it was drawn from counts)
            hits = [h.memory if h.memory.kind is Kind.TURN else memory.provenance(h.memory.id)[0]
                    for h in memory.search(query, user_id="ana", limit=5)]
            assert hits[0].content == answer, query


def test_a_fact_said_again_lists_every_turn_that_said_it(memory):
    memory.add("I practice taekwondo.", user_id="ana", session_id="s1", metadata={"dia_id": "D1:1"})
    memory.add("Yeah, I practice taekwondo!", user_id="ana", session_id="s2", metadata={"dia_id": "D2:5"})
    (fact,) = facts(memory, "ana")
    assert fact.strength == 2.0  # said twice: one fact, reinforced
    said = memory.provenance(fact.id)
    assert [e.metadata["dia_id"] for e in said] == ["D1:1", "D2:5"]  # oldest first
    assert [e.session_id for e in said] == ["s1", "s2"]


def test_deleting_all_of_a_kind_takes_every_turn_that_said_one(memory):
    memory.add("I practice taekwondo.", user_id="ana", session_id="s1")
    memory.add("I practice taekwondo.", user_id="ana", session_id="s2")
    memory.add("I love sushi.", user_id="ana", session_id="s2")
    (fact,) = [f for f in facts(memory, "ana") if "taekwondo" in f.content]
    assert fact.kind is Kind.FACT and len(memory.provenance(fact.id)) == 2
    memory.delete_by_kind(fact.kind, user_id="ana")
    assert [e.content for e in episodes(memory, "ana")] == ["I love sushi."]  # the preference's turn stays


def test_a_deleted_turn_drops_out_of_what_a_fact_was_said_in(memory):
    memory.add("I practice taekwondo.", user_id="ana", session_id="s1")
    memory.add("I practice taekwondo.", user_id="ana", session_id="s2")
    (fact,) = facts(memory, "ana")
    first, again = memory.provenance(fact.id)
    memory.delete(again.id)
    assert [e.id for e in memory.provenance(fact.id)] == [first.id]


NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)  # a Monday


def test_what_the_assistant_told_the_user_it_booked_is_kept_and_due(memory):
    memory.add([{"role": "user", "content": "Can you book me a table somewhere nice on Friday?"},
                {"role": "assistant", "content": "Done: I booked a table for two at Nopa on Friday at 7pm."}],
               user_id="ana", session_id="s1", timestamp=NOW)
    memory.add("Great, thanks!", user_id="ana", session_id="s1", timestamp=NOW)  # chatter: no episode of its own
    told = [e for e in episodes(memory, "ana") if e.metadata["role"] == "assistant"]
    assert [e.content for e in told] == ["Done: I booked a table for two at Nopa on Friday at 7pm."]
    assert told[0].metadata["reply_to"] == "Can you book me a table somewhere nice on Friday?"
    (task,) = [m for m in facts(memory, "ana") if m.kind is Kind.TASK]
    assert "Nopa" in task.content and task.due_at == datetime(2026, 12, 11, 19, 0, tzinfo=UTC)
    assert [e.id for e in memory.provenance(task.id)] == [told[0].id]
    hits = memory.search("where is my table on Friday?", user_id="ana", limit=3)
    assert any("Nopa" in h.memory.content for h in hits)


def test_a_reminder_the_assistant_promised_and_a_chinese_booking_are_the_users(memory):
    memory.add([{"role": "user", "content": "I keep forgetting to call my mom."},
                {"role": "assistant", "content": "I'll remind you to call your mom tomorrow at 8am."}],
               user_id="ana", timestamp=NOW)
    (task,) = [m for m in facts(memory, "ana") if m.kind is Kind.TASK]
    assert "their mom" in task.content and task.due_at == datetime(2026, 12, 8, 8, 0, tzinfo=UTC)
    memory.add([{"role": "user", "content": "我下周一要去北京出差。"},
                {"role": "assistant", "content": "好的，已经为你预订了周一上午九点的高铁票。"}], user_id="xm", timestamp=NOW)
    booked = [m for m in facts(memory, "xm") if "高铁票" in m.content]
    assert [m.due_at for m in booked] == [datetime(2026, 12, 14, 9, 0, tzinfo=UTC)]


@pytest.mark.parametrize("said", [
    "I booked a flight to Paris for next week!",  # the other one's own trip: nothing addressed to the user
    "You could book a table at Nopa on Friday.",  # advice, nothing done
    "I'm so glad you liked it.",
])
def test_an_assistant_turn_that_reports_nothing_done_for_the_user_is_not_kept(memory, said):
    memory.add([{"role": "assistant", "content": said}, {"role": "user", "content": "Nice!"}],
               user_id="ana", timestamp=NOW)
    assert memory.get_all(user_id="ana", limit=None) == []
