"""Extraction without an LLM: explicit commands and precision-first EN/ZH rules.

Rather miss than misremember: a sentence yields a candidate only when one
anchored pattern matches it cleanly. Questions, hypotheticals, hedges and
reported speech are dropped before any rule runs; objects that only make sense
in context ("I like it") are refused. Explicit commands ("remember that…",
"请记住…") always store something.

Every candidate is rewritten as a statement about the user in the user's
language ("User lives in Berlin." / "用户住在北京") and carries a `key` naming
its slot so that reconciliation can recognise updates:

    preference:<object>          I love coffee / I hate coffee (polarity +1/-1)
    preference:favourite_<x>     my favourite colour is blue
    preference:answer_language   always answer in Chinese (value "zh")
    preference:<instruction>     never use emojis (polarity -1)
    preference:nickname          call me Bob
    fact:name | fact:location | fact:hometown | fact:employer | fact:work_location
    fact:occupation | fact:school | fact:diet | fact:allergy_<x> | fact:has_<thing>
    fact:<attribute>             my birthday is … → fact:birthday
    fact:<relation>_<attribute>  my dog's name is Rex → fact:dog_name
    fact:age                     I'm 34 years old / 我今年34岁
    fact:learning_<x>            I started learning Japanese / 我在学日语
    habit:<activity>             I usually go running at 6am (a fact); I go to the gym every
                                 Monday (a task, so it is reminded; value: its schedule)
    task:<action>                I need to submit the report by Friday
    identity:role | identity:tone

A cessation ("I no longer live in Berlin", "I quit my job at Google", "我不再吃素了",
"我戒咖啡了") fills the slot of the statement it ends, with polarity -1: "User no
longer lives in Berlin." (fact:location = berlin); reconciliation ends the memory
holding that value and no other. A detail joined to a preference ("…, with charts
attached", "…，并附上数据图表") stays part of it.

This module only orchestrates; each step lives in its own module:

    keys          text normalisation, slot keys (`slugify`) and values
    phrases       trimming captured phrases; shared word lists
    rewrite       first person → "User …" / "用户…"
    candidate     the rule context (`Ctx`) and the `Candidate` constructor
    filters       greetings and fillers, questions, hedges, the here-and-now
    clauses       one sentence → clauses (and the details joined to one)
    dates         due dates, weekdays, times, recurrences
    explicit      "remember …", "请记住…", "remind me to …"
    instructions  role, tone, standing instructions, nickname
    names         the user's name
    preferences   likes, dislikes, favourites
    facts_en      facts, English
    facts_zh      facts, Chinese
    changes       cessations: what the user no longer is, has or does
    habits        routines: habit:<activity>
    tasks         tasks with a due date or a recurrence
    statements    the fallback: any other plain statement about the user or someone or something
                  of theirs, by grammar (subject, verb lexicon per kind), with no slot key

A clause no slot rule reads goes to `statements` ("I donated my old car to a shelter
yesterday" → "User donated their old car to a shelter.", an event dated yesterday;
"我女儿叫小雨，今年七岁" → "用户的女儿今年七岁"). A sentence hedged only by a plan or a past
habit ("我们打算…", "I used to…") and one hedged in a clause that is not its main one ("…, it'd
be great") reach `statements` too; a condition, a wish or hearsay anywhere keeps the whole
sentence out. What nothing reads yields nothing: the turn itself is kept as an episode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from engram.extract.candidate import Ctx
from engram.extract.changes import change
from engram.extract.asides import which_i_aside
from engram.extract.casual import formal
from engram.extract.clauses import ZH_WHICH_THING_RE, ended_detail, from_to_detail, joined_detail, split_clauses
from engram.extract.explicit import as_explicit, asked_to_keep, commands_apart, explicit_command, refers_back
from engram.extract.facts_en import en_fact, en_home_aside
from engram.extract.facts_zh import zh_fact
from engram.extract.dates import split_due
from engram.extract.filters import (
    conditional, hedged, is_question, soft_hedged, statement_before_question, strip_fillers, without_heading,
)
from engram.extract.habits import habit
from engram.extract.instructions import asked_instruction, identity, instruction, nickname
from engram.extract.keys import WS_RE, prepare_text
from engram.extract.names import intro_apart, user_name
from engram.extract.owned import as_owned, introduced, named_again
from engram.extract.phrases import strip_aside, strip_end
from engram.extract.preferences import favourite, preference, request_then_feeling
from engram.extract.rewrite import assistant_did, plain_forms
from engram.extract.statements import (
    ZH_COUNTDOWN_RE, about_other, main_part, name_beside_kin, note_place, note_referent, statement, tail_comment, unclefted, with_it_named,
)
from engram.extract.tasks import BARE_ROUTINE, its_day, task
from engram.models import Candidate, Kind, utcnow
from engram.text import detect_language, split_sentences

__all__ = ["extract_candidates"]

_MAX_CLAUSE = 200
_REPLY_CHARS = 4  # a Chinese clause this short that says nothing is a reply ("不太好", "还行"), not a subject
_MAX_SENTENCE = 600  # longer "sentences" (pasted text, runs of symbols) are not mined: rules stay cheap
_CLAUSE_RULES_EN = (change, user_name, favourite, preference, en_fact, task, habit)
_CLAUSE_RULES_ZH = (change, user_name, favourite, preference, zh_fact, task, habit)
_SENTENCE_RULES = (nickname, identity, instruction)  # on the whole sentence, before hedges and clauses


def _mine_clause(c: str, ctx: Ctx) -> list[Candidate]:
    """The first clause rule that matches; else a general statement (see `statements`)."""
    if len(c) > _MAX_CLAUSE:
        return []  # a rambling clause is not a clean statement
    c = unclefted(strip_aside(c, ctx.lang), ctx.lang)
    note_referent(c, ctx)
    note_place(c, ctx)
    if not ctx.soft:
        for rule in (_CLAUSE_RULES_ZH if ctx.lang == "zh" else _CLAUSE_RULES_EN):
            found = rule(c, ctx)
            if found is not None and (found or not about_other(c, ctx.lang)):
                if found and ctx.memo is not None and ctx.lang == "zh" and not about_other(c, "zh"):
                    ctx.memo["last"] = "用户"  # "我不喝咖啡，只喝茶": the next clause goes on about the user
                named = next((f.entities[0] for f in found if (f.key or "").endswith("_name") and f.entities), None)
                if named and ctx.memo is not None and ctx.memo.get("other"):  # "我女儿叫小雨，她…": 小雨
                    ctx.memo["named"] = {ctx.memo["other"]: named}
                return found  # a rule's refusal ([]) stands, unless the clause is about someone else
        if ctx.lang == "zh" and ctx.memo is not None and (ctx.memo.get("opens") or ctx.memo.get("last") == "用户") \
                and _ZH_WHERE_I_AM_RE.match(c):  # "（刚换了工作，）现在在字节跳动做产品经理": Chinese leaves out its 我
            found = zh_fact("我" + c, ctx)
            if found and all(f.key in _ZH_MY_PLACE_SLOTS for f in found):
                ctx.memo["last"] = "用户"
                return found
    return statement(c, ctx) or []


# a place alone after an event: where it is ("…婚礼，在成都")
_ZH_THERE_RE = re.compile(r"^我?(?P<at>在[\u4e00-\u9fffA-Za-z]{2,8})$")
# where the user stays on a trip just named ("下周五要去上海出差，住在外滩附近"): the trip's, not their home
_ZH_STAY_RE = re.compile(r"^我?(?:会|打算|准备|要)?(?P<at>住(?:在)?[\u4e00-\u9fffA-Za-z]{2,10})$")
# a clause with no subject that says where the speaker works, lives or studies
_ZH_WHERE_I_AM_RE = re.compile(r"^(?:现在|目前|如今|一直)?(?:在|住在)[\u4e00-\u9fffA-Za-z]")
_ZH_MY_PLACE_SLOTS = frozenset({"fact:employer", "fact:occupation", "fact:location", "fact:school"})


def _mine_sentence(sentence: str, ctx: Ctx, *, explicit: bool = False) -> list[Candidate]:
    """One sentence: an explicit command, else a sentence rule, else (unless hedged) its clauses."""
    s = WS_RE.sub(" ", sentence).strip() if "  " in sentence or "\n" in sentence or "\t" in sentence \
        else sentence.strip()
    s, greeted = strip_fillers(s, ctx.lang)
    if not s or len(s) > _MAX_SENTENCE:
        return []
    s = plain_forms(assistant_did(s))  # "the recipe you suggested": the assistant's; "I've got": "I have"
    ctx = Ctx(ctx.now, detect_language(s) if not explicit else ctx.lang, ctx.relaxed, greeted or ctx.greeted,
              ctx.memo)
    if ctx.memo is not None:
        ctx.memo.pop("last", None)  # a new sentence: a subjectless clause no longer goes on from the last one
        ctx.memo["prev_fact"] = ctx.memo.pop("last_fact", None)  # what "It was…" may comment on
    if not explicit:
        found = explicit_command(s, ctx, _mine_command)
        if found is not None:
            return found
    core = strip_end(s)
    if not core:
        return []
    if is_question(core, ctx.lang):
        asked = asked_instruction(s, ctx)  # "Can you keep answers short?": a standing instruction, asked
        if asked:
            return asked
        core = strip_end(statement_before_question(core, ctx.lang))  # "I got a puppy, isn't she cute?"
        if not core:
            return []
    if len(core) <= _MAX_CLAUSE:
        for rule in _SENTENCE_RULES:
            found = rule(core, ctx)
            if found is not None:
                return found
    per_clause = False  # hedged somewhere, not as a whole: each clause is judged on its own
    plain = ctx  # for a clause with no hedge of its own, in a sentence hedged elsewhere
    if hedged(core, ctx.lang):
        if not soft_hedged(core, ctx.lang) and conditional(core, ctx.lang):
            return []
        per_clause = not soft_hedged(core, ctx.lang)
        ctx = Ctx(ctx.now, ctx.lang, ctx.relaxed, ctx.greeted, ctx.memo, soft=True)
    out: list[Candidate] = []
    last: list[Candidate] = []
    opening = True  # no clause yet but a few words of reply ("不太好，上个月查出来高血压": the user's)
    for clause in split_clauses(core, ctx.lang):
        if ctx.memo is not None:
            ctx.memo["opens"] = opening  # the clause opens its sentence ("Also, got a puppy!": "I" left out)
        # (a clause with its own subject ends it: "我的车上周被撞了，还在修" is the car still being repaired)
        opening = opening and not out and ctx.lang == "zh" and len(strip_end(clause)) <= _REPLY_CHARS \
            and "我" not in clause
        main = main_part(strip_end(clause), ctx.lang)
        own_hedge = per_clause and hedged(main, ctx.lang)
        if own_hedge and not soft_hedged(main, ctx.lang):
            continue  # "…, we'd go …" is hedged; "I used to ride with my dad" beside it is not
        # "My mom's birthday is next Saturday and I have no idea what to get her": the first
        # clause is read by every rule, as if said alone
        if ctx.lang == "zh" and len(last) == 1 and last[0].kind in (Kind.TASK, Kind.EVENT) \
                and (where := _ZH_THERE_RE.match(strip_end(clause))) is not None:
            found = []  # "…参加我表妹的婚礼，在成都": where the event is, not where the user lives
            moved: str | None = "，" + where.group("at")
        elif ctx.lang == "zh" and len(last) == 1 and last[0].kind in (Kind.TASK, Kind.EVENT) and last[0].key != "fact:location" \
                and (stay := _ZH_STAY_RE.match(strip_end(clause))) is not None:
            found = []  # "…要去上海出差，住在外滩附近": where the user stays then, not where they live
            moved = "，" + stay.group("at")
        elif ctx.lang == "zh" and len(last) == 1 and ZH_WHICH_THING_RE.match(strip_end(clause)):
            found = []  # "…把他的旧车给我开了，是一辆白色的卡罗拉": what the thing is, no one's 是
            moved = "，" + strip_end(clause)
        elif ctx.lang == "zh" and len(last) == 1 and clause.startswith("还有") and not ZH_COUNTDOWN_RE.match(clause):
            # "我最喜欢滑梯，还有秋千": one more of what was just said, not "the user still has" (after
            # a 有, `split_clauses` gave it its 我: "我家有一只猫，还有一只狗")
            found = []
            moved = "，" + strip_end(clause)
        else:
            found = _mine_clause(strip_end(clause), plain if per_clause and not own_hedge else ctx)
            moved = from_to_detail(strip_end(clause), ctx.lang) if not found and len(last) == 1 else None
        detail = joined_detail(clause, ctx.lang) if not found and not moved and len(last) == 1 else None
        if detail and last[0].kind is Kind.PREFERENCE:
            last[0].content = last[0].content.rstrip(".") + detail  # "…写报告，并附上数据图表"
            continue
        if ctx.lang == "zh" and len(found) == 1 and len(last) == 1 and last[0].kind is Kind.EVENT \
                and found[0].kind is Kind.TASK and found[0].due_at is not None and found[0].recurrence is None \
                and not strip_end(clause).startswith("我"):
            # "我报了一个陶艺班，下周二开课": the day of what was just named, not of the user
            said, due = split_due(found[0].content)
            last[0].content = last[0].content.rstrip("。") + "，" + said.removeprefix("用户") + due
            last[0].kind, last[0].due_at, last[0].key = Kind.TASK, found[0].due_at, found[0].key
            continue
        if moved:  # "…下个月要搬家，从朝阳区搬到海淀区": where from and where to, with the move
            said, due = split_due(last[0].content.rstrip(".。"))
            last[0].content = said + moved + due + ("" if ctx.lang == "zh" else ".")
            continue
        ended = ended_detail(clause, ctx.lang, ctx.now) if not found and len(last) == 1 and _used_to(last[0]) else None
        if ended:  # "I used to drink soda every day but I quit last month": a habit given up
            last[0].content = last[0].content.rstrip(".。") + ended + ("" if ctx.lang == "zh" else ".")
            continue
        if len(found) == 1 and found[0].reason == BARE_ROUTINE and len(last) == 1:
            found[0].content = _routine_of(last[0].content, found[0].content, ctx.lang)
        if ctx.lang == "zh" and len(found) == 1 and len(last) == 1 and last[0].recurrence and found[0].kind is Kind.TASK \
                and found[0].recurrence is None and not _ZH_A_DAY_RE.search(clause):
            # "我每天晚上十一点睡觉，早上七点起床": the same routine goes on, not a task for this morning
            last[0].content = _routine_of(last[0].content, split_due(found[0].content)[0], ctx.lang)
            continue
        if len(found) == 1 and found[0].kind is Kind.PREFERENCE and not ctx.soft:
            said = tail_comment(strip_end(clause), ctx.lang)  # "I'm passionate about dancing and it brings me joy"
            if said:
                joint = " " if said.startswith("because") else ", "
                found[0].content = found[0].content.rstrip(".") + joint + said + "."
        out.extend(found)
        last = found
    return out




def _used_to(said: Candidate) -> bool:
    """A statement of what the user did once, as a habit ("User used to …", "用户以前…")."""
    return said.content.startswith(("User used to ", "用户以前", "用户过去", "用户之前"))


# a day named, not only a time of it: "明天早上七点起床" is a task for tomorrow, "早上七点起床" may go on a routine
_ZH_A_DAY_RE = re.compile(r"[今明后]天|今[晚早]|明[早晚]|周[一二三四五六日天末]|星期|礼拜|[0-9一二三四五六七八九十]+[号日]|[下这本]个?月|[下这本]周|月底|年底")


def _routine_of(before: str, routine: str, lang: str) -> str:
    """A routine that names no activity, said with the statement before it ("User started
    swimming lessons and goes every Tuesday.", "用户最近在学游泳，每周二和周四晚上去")."""
    if lang == "zh":
        return before.rstrip("。") + "，" + routine.removeprefix("用户")
    return before.rstrip(".") + " and " + routine.removeprefix("User ")


def _mine_command(clause: str, ctx: Ctx) -> list[Candidate]:
    """The clause of an explicit command: its language is already decided, no command inside."""
    return _mine_sentence(clause, ctx, explicit=True)


# "… I've been at it for six months": how long the user has been doing what they just said they do
_AT_IT_RE = re.compile(r"^User has been (?:at it|at this|doing (?:it|this|that))\b(.*)$")
_DOING_RE = re.compile(r"^User is (\w+ing\b[^,;]*?)\.?$")


def extract_candidates(
    text: str, *, role: str = "user", now: datetime | None = None, owned: Mapping[str, str] | None = None,
    referent: str | None = None,
) -> list[Candidate]:
    """Candidate memories in one message; only the user's own words are mined.

    `now` (default: current UTC time) anchors relative dates; an aware `now`
    resolves "Friday" in its own time zone, and `due_at` comes back in UTC.
    `owned`: the user's people and pets by name, with what the user calls them ("Anna":
    "sister"); a sentence that starts with one is about it (engram.graph.kin).
    `referent`: who the user's turn before was about ("mom"), for a "She loves jazz." that
    opens this one (`engram.extract.statements.last_referent`).
    """
    if role != "user" or not text or not text.strip():
        return []
    now = utcnow() if now is None else (now if now.tzinfo else now.replace(tzinfo=UTC))
    prepared = formal(prepare_text(text))  # "i'm john, 29" as "I'm John, 29" (engram.extract.casual)
    out: list[Candidate] = []
    seen: set[tuple[str | None, str | None, str]] = set()
    greeted = False
    memo: dict[str, Any] = {"other": referent, "before": referent} if referent else {}
    sentences = [without_heading(sentence) for sentence in split_sentences(prepared)]  # ("About me: I'm Tom, 34, …")
    if named_again(sentences):  # a name the message introduces is the user's own in its later sentences
        owned = {**dict(introduced(prepared)), **(owned or {})}
    if owned:
        sentences = [as_owned(sentence, owned) for sentence in sentences]
    for index, sentence in enumerate(
        part for whole in sentences for asked in request_then_feeling(whole)
        for named in with_it_named(name_beside_kin(asked))
        for piece in commands_apart(named) for part in intro_apart(piece)
    ):
        if out and refers_back(sentence):  # "I'm allergic to penicillin, please remember that."
            as_explicit(out, "remember")
            continue
        sentence = its_day(sentence, memo.get("said"))  # "…my wedding. It's on June 14th." → "My wedding is on …"
        memo["said"] = sentence
        memo["first"] = index == 0  # "I'm Tom." opening a message introduces the user
        ctx = Ctx(now, "en", greeted=greeted, memo=memo)
        rest, greeted = strip_fillers(sentence.strip(), "en")
        greeted = greeted and not strip_end(rest)  # "Hi!" alone: the next sentence may be a name
        sentence, keep = asked_to_keep(sentence)
        mined = _mine_sentence(sentence, ctx)
        if "my " in sentence.lower():
            mined += [c for c in en_home_aside(sentence, ctx) if not any(c.value == m.value for m in mined)]
        if ", which " in sentence and not any(" which " in c.content for c in mined):  # (unless the statement kept it)
            mined += [c for c in which_i_aside(sentence, ctx, _mine_sentence) if c.content not in {m.content for m in mined}]
        for c in as_explicit(mined, "记住") if keep else mined:
            if (at := _AT_IT_RE.match(c.content)) is not None:  # "I've been at it for six months"
                doing = next((d.group(1) for o in reversed(out) if (d := _DOING_RE.match(o.content))), None)
                if doing is None:
                    continue  # what "it" is was not said: the turn stays an episode
                c.content = f"User has been {doing}{at.group(1)}"
            sig = (c.key, c.value, c.content)
            if sig not in seen:
                seen.add(sig)
                out.append(c)
    return out
