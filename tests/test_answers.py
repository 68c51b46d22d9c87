"""A short answer is read with the question it answers (engram.extract.answers): "What's your
dog's name?" / "Coco." keeps "User's dog's name is Coco.", in English and Chinese."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import Kind
from engram.extract.answers import answer_as_statement
from helpers import facts


SAID = datetime(2026, 12, 2, 10, tzinfo=UTC)  # a Wednesday: the days these answers name are read against it


def _answer(memory, question: str, answer: str, user_id: str = "u") -> list[str]:
    events = memory.add([{"role": "assistant", "content": question}, {"role": "user", "content": answer}],
                        user_id=user_id, timestamp=SAID)
    return [e.memory.content for e in events if e.memory is not None and e.memory.kind is not Kind.TURN]


@pytest.mark.parametrize(("question", "answer", "fact"), [
    ("Where are you based?", "Toronto, but I'd move to NYC for the right role.", "User is based in Toronto."),
    ("Where are you headed?", "Lisbon, for ten days in May with my girlfriend Chloe.",
     "User is going to Lisbon for ten days in May with their girlfriend Chloe."),  # (was "For ten days in May with …")
    ("What do you eat before a long run?", "Usually oatmeal with banana, and coffee.",
     "User eats oatmeal with banana before a long run."),
    ("What do you usually have for breakfast?", "Oatmeal.", "User usually has oatmeal for breakfast."),
    ("What do you listen to when you work?", "Lo-fi mostly.", "User listens to lo-fi mostly when they work."),
    ("What's your dog's name?", "Coco.", "User's dog's name is Coco."),
    ("Do you prefer aisle or window seats?", "Aisle, always.", "User prefers aisle seats."),
    ("Great! Where do you live?", "In Porto.", "User lives in Porto."),
    ("What do you do for a living?", "Nurse.", "User is a nurse."),
    ("How old are your kids?", "7 and 10.", "User's kids are 7 and 10."),
    ("Congratulations! How many guests are you expecting?", "About 80.", "User is expecting about 80 guests."),
    ("Do you have a budget in mind?", "Around 30k euros.", "User's budget is around 30k euros."),
    ("你喜欢喝什么茶？", "龙井。", "用户喜欢喝龙井"),
    ("What are your hobbies?", "Hiking and photography.", "User likes hiking and photography."),
    ("你平时有什么爱好吗？", "爬山和摄影。", "用户喜欢爬山和摄影"),
    ("你的猫叫什么名字？", "咪咪", "用户的猫叫咪咪"),
    ("你多大了？", "28", "用户28岁"),
    ("Nice. Which database are you using?", "Postgres, hosted on Render.", "User uses Postgres as their database."),
    ("What's your target weight?", "70 kg.", "User's target weight is 70 kg."),
    ("Are you hosting?", "Yeah, at my place. Around 15 people.", "User is hosting."),
    ("Are you vegetarian?", "Yep.", "User is vegetarian."),
    ("Do you prefer Nike or Asics?", "Asics.", "User prefers Asics."),  # the brand as written
    ("Any budget?", "Max 150 dollars.", "User's budget is max 150 dollars."),
    ("Sounds fun! Do you hike often?", "Every other weekend or so.", "User hikes every other weekend."),
    ("Nice! What are you working on these days?", "A fraud detection system. It has to be live by end of Q1.",
     "User is working on a fraud detection system."),  # the answer opens the message
    ("你好，我是你的健身助手。你的目标是什么？", "减脂，想在夏天前减掉十斤。", "用户的目标是减脂"),  # the answer comes first
    ("Hi! Where are you headed?", "Lisbon in May with my partner Alex.",
     "User is going to Lisbon in May with their partner Alex."),
    ("Fun! How long are you staying?", "Ten days.", "User is staying for ten days."),
    ("How long have you been learning Spanish?", "About two years.",
     "User has been learning Spanish for about two years."),
    ("Noted. What's your budget per night for hotels?", "Under 150 euros.",
     "User's budget is under 150 euros per night for hotels."),
    ("What kind of role are you after?", "Something in product management, ideally remote.",
     "User is looking for a role in product management."),
    ("What do you find hardest?", "The subjunctive, honestly. And rolling my Rs.", "User finds the subjunctive hardest."),
    ("Cool, what are you learning?", "Spanish.", "User is learning Spanish."),  # a name as written
    ("新家怎么样？那你自己在哪里上班？", "我在国贸，以后通勤要一个小时了。", "用户在国贸工作"),
    ("你现在住哪？", "我住在望京。", "用户住在望京"),
    ("你平时用什么编辑器？", "VS Code", "用户用的编辑器是VS Code"),  # (was "我的编辑器用的是…": read as nothing)
    ("你一般在哪里复习？", "图书馆，宿舍太吵了。", "用户一般在图书馆复习"),
    ("你的目标体重是多少？", "七十公斤，现在八十二。", "用户的目标体重是七十公斤"),
    ("你们用什么数据库？", "PostgreSQL，之前用MySQL，去年换的。", "用户用的数据库是PostgreSQL"),
    ("每天学习多久？", "大概十个小时吧。", "用户每天学习大概十个小时"),
    ("Got it. What Python version?", "3.12. And type hints everywhere please.", "User uses Python 3.12."),
    ("What are you reading these days?", "Currently halfway through Dune, loving it.", "User is reading Dune."),
    ("Great taste! How many books do you read a year?", "Around 40.", "User reads around 40 books a year."),
    ("Great. How often do you work out?", "3 times a week, mostly spin classes.", "User works out 3 times a week."),
    ("How often do you visit your parents?", "Every other weekend.", "User visits their parents every other weekend."),
    ("你好，我是你的健身教练，你的目标是什么？", "想增肌，现在太瘦了。", "用户的目标是增肌"),
    ("Would you prefer Italian or Thai for the team dinner?", "Thai, definitely.", "User prefers Thai for the team dinner."),
    ("Based on what you said, I'd recommend the Sony WH-1000XM5 headphones, they're $399. Want me to remember that?",
     "yes please", "The assistant recommended the Sony WH-1000XM5 headphones, they're $399."),
    ("Your flight is at 6am on Friday. Should I save that?", "Yes.", "User's flight is at 6am on Friday (2026-12-04 06:00)."),
    ("我推荐你用索尼WH-1000XM5耳机，2999元。要我帮你记下来吗？", "好的", "助手推荐了索尼WH-1000XM5耳机,2999元"),
    ("For your back pain, try the McKenzie stretches twice a day.", "ok I'll try that",
     "User decided to try the McKenzie stretches twice a day for their back pain."),  # what the user agreed to
    ("建议你每天做两次麦肯基拉伸。", "好的，我试试", "用户决定每天做两次麦肯基拉伸"),
    ("What kind of dog?", "a 60 lb pit mix named tank, hes a sweetheart", "User's dog is a 60 lb pit mix named Tank."),
    ("Nice! What kind of car is it?", "Honda Civic.", "User's car is a Honda Civic."),
    # how long the user has been something, not only doing something
    ("How long have you been married?", "Five years now.", "User has been married for five years."),
    ("How long have you been into art?", "Ten years or so.", "User has been into art for about ten years."),
])
def test_a_short_answer_keeps_the_fact_it_gives(memory, question, answer, fact):
    assert _answer(memory, question, answer) == [fact]


@pytest.mark.parametrize(("question", "answer", "task"), [
    ("When is your exam?", "December 23rd.", "User's exam is on December 23rd (2026-12-23)."),
    ("加油！考试是什么时候？", "十二月二十三号。", "用户的考试在十二月二十三号（2026-12-23）"),
    ("When's the wedding?", "June 14th!", "User's wedding is on June 14th (2027-06-14)."),
    ("好的，哪天出发？", "下周二早上的航班。", "用户下周二早上要出发（2026-12-08）"),
    ("你几号搬家？", "15号", "用户15号要搬家（2026-12-15）"),
])
def test_a_day_answering_when_is_a_task_due_that_day(memory, question, answer, task):
    events = memory.add([{"role": "assistant", "content": question}, {"role": "user", "content": answer}],
                        user_id="u", timestamp=SAID)
    (kept,) = [e.memory for e in events if e.memory is not None and e.memory.kind is not Kind.TURN]
    assert (kept.kind, kept.content) == (Kind.TASK, task)
    assert kept.due_at is not None and kept.due_at.date().isoformat() in task


def test_a_short_answer_that_opens_a_longer_message_is_read_with_the_rest(memory):
    kept = _answer(memory, "Got it. Do you prefer tabs or spaces?",
                   "Spaces, 4 of them. And please always use type hints in code you give me.")
    assert sorted(kept) == ["User prefers spaces.",
                            "User wants the assistant to always use type hints in code it gives them."]


def test_yes_to_a_reminder_offer_is_a_reminder(memory):
    (task,) = _answer(memory, "Would you like me to remind you about the vet appointment on Friday?", "Yes please.")
    assert task.startswith("User wants to be reminded about the vet appointment on Friday")
    (zh,) = _answer(memory, "要不要我提醒你明天交报告？", "好的，谢谢", user_id="v")
    assert zh.startswith("用户") and "交报告" in zh
    assert [m.kind for m in facts(memory.get_all(user_id="u"))] == [Kind.TASK]  # "Yes please." itself: chatter


@pytest.mark.parametrize(("question", "answer"), [
    ("Where do you live?", "Honestly, I live in Berlin."),
    ("That sounds rough.", "ok"),  # (no advice to agree to)
    ("I'm here for you. Want me to remember that?", "yes"),  # (the assistant of itself)  # (a word of manner, then the sentence: no "in Honestly")
    ("How are you?", "Good."),  # no question of a fact
    ("What's your dog's name?", "I don't have a dog."),  # a sentence of its own: the rules read it
    ("What's your dog's name?", "Why do you ask? It's a long story, really, you know how it is."),
    ("你的猫叫什么名字？", "我没有猫。"),
    ("Do you prefer aisle or window seats?", "Neither."),
    ("Would you like me to remind you to call Anna?", "No thanks."),
    ("What's your puppy's name?", "Her name's Coco."),  # a sentence: the rules read it as said
    ("What's your plan for today?", "Gym."),  # not something to keep about the user
    ("Do you have a budget in mind?", "Not really."),
    ("How many kids do you have?", "None."),
    ("What do you do for work?", "Nursing, night shifts."),  # an activity names no job
    ("When is your exam?", "Not sure yet."),  # no day
    ("What's your plan for today?", "Gym at 5."),  # a plan is no number of the user's
    ("Do you play any instruments?", "Yeah, the piano."),  # "any": the yes says which, the rules do not
    ("Are you sure?", "Yes."), ("Do you want me to book it?", "Yes please."),
    ("How long are you staying?", "Not sure."),  # no length of time
    ("考试是什么时候？", "还没定。"),
])
def test_anything_else_is_not_read_as_an_answer(question, answer):
    assert answer_as_statement(question, answer) is None


def test_the_fact_points_back_to_the_answer_and_is_found_by_the_question(memory):
    _answer(memory, "What's your dog's name?", "Coco.")
    memory.flush()
    (hit,) = memory.search("what's my dog's name?", user_id="u", limit=1)
    assert hit.memory.content == "User's dog's name is Coco."
    (episode,) = memory.provenance(hit.memory.id)
    assert episode.content == "Coco."


def test_a_long_message_or_a_long_turn_before_it_costs_nothing_to_read():
    assert answer_as_statement("Blah blah. " * 500 + "What's your dog's name?", "Coco.") == "My dog's name is Coco."
    assert answer_as_statement("What's your dog's name?", "Coco. " * 10_000) is None


def test_she_opening_a_turn_is_who_the_users_turn_before_named(memory):
    memory.add("My mom's birthday is next Saturday and I have no idea what to get her.", user_id="u", session_id="s")
    memory.add([{"role": "assistant", "content": "What does she like?"},
                {"role": "user", "content": "She loves gardening and jazz."}], user_id="u", session_id="s")
    kept = {m.content for m in facts(memory.get_all(user_id="u"))}
    assert "User's mom loves gardening and jazz." in kept
    # "she" is no brother: nothing is filed of the wrong person
    memory.add("My brother is visiting.", user_id="v", session_id="s")
    memory.add("She loves jazz.", user_id="v", session_id="s")
    assert not any("jazz" in m.content for m in facts(memory.get_all(user_id="v")))


def test_he_in_the_assistants_question_is_who_the_user_spoke_of(memory):
    memory.add("还行，就是有点累。我儿子今天发烧了，带他去了医院。", user_id="u", session_id="s")
    memory.add([{"role": "assistant", "content": "希望他早日康复。他多大了？"}, {"role": "user", "content": "五岁。"}],
               user_id="u", session_id="s")
    memory.add("他对青霉素过敏，医生开了别的药。", user_id="u", session_id="s")  # still the son
    kept = {m.content for m in facts(memory.get_all(user_id="u"))}
    assert {"用户的儿子五岁", "用户的儿子对青霉素过敏"} <= kept
    assert answer_as_statement("How old is she?", "Five.", referent="son") is None  # a she is no son


def test_yes_with_when_to_a_reminder_offer_is_a_reminder_at_those_times(memory):
    events = memory.add([{"role": "assistant", "content": "辛苦了！需要我提醒你给孩子吃药吗？"},
                         {"role": "user", "content": "要，每天早上八点和晚上八点。"}], user_id="u")
    (kept,) = [e.memory for e in events if e.memory is not None and e.memory.kind is Kind.TASK]
    assert "给孩子吃药" in kept.content and kept.recurrence == "daily"


def test_he_after_an_assistant_turn_that_named_someone_else_is_not_the_users_pet(memory):
    memory.add("And yup, I do- Oscar, my guinea pig. He's been great.", user_id="u", session_id="s")
    memory.add([{"role": "assistant", "content": "They're good, we got another cat named Bailey. Here's a pic of Oliver."},
                {"role": "user", "content": "He's so cute!"}], user_id="u", session_id="s")
    assert not any("cute" in m.content for m in facts(memory.get_all(user_id="u")))


@pytest.mark.parametrize(("before", "later", "fact"), [
    ("I just broke up with my boyfriend Jake.", "We were together for three years.",
     "User and their boyfriend were together for three years."),
    ("我养了一条柯基，叫豆包。", "它特别爱吃鸡胸肉。", "用户的柯基特别爱吃鸡胸肉"),
    ("我儿子今年上小学一年级，在实验小学。", "周末一般带他去公园踢球。", "用户周末一般带儿子去公园踢球"),
])
def test_a_pronoun_in_the_next_turn_is_who_the_turn_before_named(memory, before, later, fact):
    memory.add(before, user_id="u", session_id="s")
    memory.add(later, user_id="u", session_id="s")
    assert fact in {m.content for m in facts(memory.get_all(user_id="u"))}


def test_her_family_in_the_next_turn_is_the_partners_family(memory):
    memory.add("My partner's family is from Mexico.", user_id="u", session_id="s")
    memory.add("I'm going to Guadalajara in March to meet her family and talk to her grandma.", user_id="u", session_id="s")
    said = " ".join(m.content for m in facts(memory.get_all(user_id="u")))
    assert "their partner's family" in said and "their partner's grandma" in said
    assert "her " not in said


def test_her_in_the_next_turn_is_the_mom_the_user_spoke_of_never_a_brother(memory):
    memory.add("My mom lives in Pune.", user_id="u", session_id="s")
    memory.add("I call her every Sunday.", user_id="u", session_id="s")
    assert "User calls their mom every Sunday." in {m.content for m in facts(memory.get_all(user_id="u"))}
    memory.add("My brother lives in Pune.", user_id="v", session_id="s")
    memory.add("I call her every Sunday.", user_id="v", session_id="s")
    assert not any("brother every" in m.content for m in facts(memory.get_all(user_id="v")))


def test_allergies_answered_are_the_users_allergies(memory):
    said = _answer(memory, "Do you have any allergies?", "Peanuts and shellfish.")
    assert sorted(said) == ["User is allergic to peanuts.", "User is allergic to shellfish."]


def test_an_answer_then_a_clause_of_its_own_keeps_both(memory):
    said = _answer(memory, "Do you have any other conditions?", "High blood pressure, and my knee hurts when I run.")
    assert sorted(said) == ["User has high blood pressure.", "User's knee hurts when they run."]


def test_shes_typed_fast_is_the_girlfriend_the_turn_before_named(memory):
    memory.add("my gf thinks i should go for it", user_id="u", session_id="s")
    memory.add("shes a pastry chef lol", user_id="u", session_id="s")
    assert "User's girlfriend is a pastry chef." in {m.content for m in facts(memory.get_all(user_id="u"))}


def test_she_is_named_when_the_user_named_her_before(memory):
    memory.add("Pretty hectic. My daughter Maya started kindergarten on Monday.", user_id="u", session_id="s")
    memory.flush()  # (the graph learns her name behind the write, as the user types the next turn)
    memory.add("She just turned five.", user_id="u", session_id="s")
    found = [h.memory.content for h in memory.search("how old is Maya?", user_id="u", limit=2)]
    assert "User's daughter Maya just turned five." in found
    memory.add("我女儿叫朵朵，今年上小学。", user_id="z", session_id="s")
    memory.flush()
    memory.add("她特别喜欢画画。", user_id="z", session_id="s")
    assert "用户的女儿朵朵特别喜欢画画" in {m.content for m in facts(memory.get_all(user_id="z"))}


def test_how_old_it_is_answered_after_the_user_spoke_of_their_cat(memory):
    memory.add("我家猫最近不怎么吃东西，有点担心。", user_id="u", session_id="s")
    memory.add([{"role": "assistant", "content": "它多大了？"}, {"role": "user", "content": "快十岁了，是一只橘猫。"}],
               user_id="u", session_id="s")
    assert "用户的猫快十岁" in {m.content for m in facts(memory.get_all(user_id="u"))}


def test_what_she_is_into_after_the_user_spoke_of_their_daughter(memory):
    memory.add("I'm planning my daughter's 10th birthday party. It's on the 21st.", user_id="u", session_id="s")
    memory.add([{"role": "assistant", "content": "Fun! What's she into?"},
                {"role": "user", "content": "Unicorns and slime, lol. And she's obsessed with Taylor Swift."}],
               user_id="u", session_id="s")
    said = {m.content for m in facts(memory.get_all(user_id="u"))}
    assert "User's daughter is into Unicorns and slime." in said
    assert "User's daughter is obsessed with Taylor Swift." in said


def test_what_follows_a_short_chinese_answer_goes_on_from_it(memory):
    # "考研" answers the question; "目标是北大的中文系" after it is the user's goal (it was lost)
    assert _answer(memory, "你在准备什么考试？", "考研，目标是北大的中文系。") == ["用户在准备考研", "用户的目标是北大的中文系"]


def test_he_after_a_filler_is_the_one_he_fits_not_the_last_named(memory):
    # "他" is the boyfriend named four turns back, not the parents named just before (plural), after "对了，"
    for turn in ["我男朋友叫阿杰，在杭州做程序员。", "他特别喜欢打篮球。", "我们打算明年结婚。", "我爸妈还没见过他。"]:
        memory.add(turn, user_id="u", session_id="s")
        memory.flush()
    events = memory.add("对了，他对芒果过敏。", user_id="u", session_id="s")
    said = [e.memory.content for e in events if e.memory is not None and e.memory.kind is not Kind.TURN]
    assert len(said) == 1 and said[0].startswith("用户的男朋友") and said[0].endswith("对芒果过敏")
    memory.add("My brother is visiting.", user_id="v", session_id="s")
    events = memory.add("Oh, and she loves jazz.", user_id="v", session_id="s")  # a she is no brother
    assert not [e for e in events if e.memory is not None and e.memory.kind is not Kind.TURN]


def test_weight_answered_then_height_keeps_both(memory):
    assert sorted(_answer(memory, "你现在多重？", "75公斤，身高175。")) == ["用户的体重是75公斤", "用户的身高175"]
