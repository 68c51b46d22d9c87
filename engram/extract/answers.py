"""A short answer read with the question it answers: "What's your dog's name?" / "Coco." says
"My dog's name is Coco."; "你喜欢喝什么茶？" / "龙井。" says "我喜欢喝龙井".

An agent asks, the user answers in a word. The episode keeps both (it is found by the question's
words), but the rules read first-person statements, and "Coco." is none: without this, the
capsule never learns the dog's name. Only common question shapes are read, and only a short
answer (a few words, no sentence of its own); what comes back is a statement in the user's own
words, for the rules to read like any other (`engram.extract.rules`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.extract.casual import formal
from engram.extract.dates import EN_DATE_RE, ZH_DATE_RE
from engram.extract.keys import CJK_RE
from engram.extract.rewrite import pronoun_fits
from engram.text import split_sentences

_MAX_EN_WORDS = 8
_MAX_ZH_CHARS = 16
_MAX_ANSWER_CHARS = 120
_MAX_QUESTION_CHARS = 400

_YES_EN = re.compile(r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|please|definitely|absolutely|of course|that would be great"
                     r"|sounds good)(?:[\s,!.]+(?:please|thanks|thank you|do it|that would be great))*[\s!.]*$", re.I)
_YES_ZH = re.compile(r"^(?:好的?|要|需要|可以|行|嗯|是的?|麻烦(?:你)?了|谢谢)(?:[，,！!。\s]*(?:谢谢|麻烦了|好的?|要))*[！!。\s]*$")
_LEAD_EN = re.compile(r"^(?:(?:oh|um+|uh+|well|hmm+|haha|lol|it's|its|that's|that would be|definitely|probably|currently"
                      r"|right now|at the moment|just|still|halfway through|almost done with|about to finish|mostly|mainly|usually"
                      r"|generally)[\s,]+)+",
                      re.I)
_TAIL_EN = re.compile(r"\s*,\s*(?:always|definitely|of course|for sure|obviously|haha|lol|I think|I guess)\b.*$|[\s!.~]+$", re.I)
_CLAUSE_WORDS = frozenset("""i i'm i've we you your he she it it's its they their her his him them me is are was
    were am be been has have had do does did don't doesn't didn't can can't will won't""".split())
_YOUR_RE = re.compile(r"\byour\b", re.I)
_NOT_AN_ANSWER = frozenset("yes yeah yep no nope well so ok okay actually anyway sure hmm right true".split())
_COUNT_RE = re.compile(r"^(?:about |around |maybe |roughly |over |under |nearly |almost )?(?:\d+|a few|a couple|two|three"
                       r"|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty|a hundred)\b", re.I)
_HOW_OFTEN_RE = re.compile(r"^(?:about |around |usually |mostly )?(?:every|once|twice|three times|\d+ times|\d+x|four times"
                           r"|five times|daily|weekly|monthly"
                           r"|most|on weekends|on weekdays|a few times)\b", re.I)
_DURATION_RE = re.compile(r"\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple(?: of)?|several)"
                          r"\s+(?:days?|nights?|weeks?|months?|years?|hours?)\b", re.I)
_PREP_EN = re.compile(r"^(?:in|at|on|from|near|for)\s+", re.I)
_ZH_BY_RE = re.compile(r"的(?:航班|飞机|火车|高铁|动车|车|船)$")  # "下周二早上的航班" → when it leaves
# "我在国贸" (where, not "我在家办公": what the user does there is a sentence the rules read)
_ZH_I_AM_AT_RE = re.compile(r"^我(?:现在)?(?:住)?(?=在(?![^，,。]*(?:办公|上班|工作|干活|上学|住))[\u4e00-\u9fffA-Za-z])")
_ZH_WHERE_RE = re.compile(r"在哪|住哪")
_AND_MORE_RE = re.compile(r"^[^,.!?]{1,60},\s+(?:(?:and|but|plus)\s+)?(?:my|i|i'm|i've|i'd|i'll)\b", re.I)
_EN_WITH_MORE_RE = re.compile(r"^\s*,\s*(?P<more>(?:for|with)\s+[^,.!?]{2,80})[.!]?$", re.I)
_ZH_SO_RE = re.compile(r"^(?:那么?|那你呢|所以|然后)[，,]?(?=你)")
_TAIL_ZH = re.compile(r"(?:[。！!~～\s]|吧|呀|啊|哈哈+|呢)+$")

Rule = tuple[re.Pattern[str], Callable[[re.Match[str], str], str | None]]


def _en_np(answer: str) -> str | None:
    """The noun phrase a short English answer is ("Coco.", "Aisle, always.", "In Porto."), or
    None: a sentence of its own ("Her name's Coco.") is read by the rules as it is."""
    np = re.split(r",|[.!?]\s", _TAIL_EN.sub("", _LEAD_EN.sub("", answer.strip())))[0].strip()
    words = np.split()
    if len(words) == 1 and (words[0].lower().endswith("ly") or words[0].lower() in _NOT_AN_ANSWER):
        return None  # "Honestly, I live in Berlin.": a word of manner, the answer is the sentence
    if not words or len(words) > _MAX_EN_WORDS or _CLAUSE_WORDS.intersection(w.lower() for w in words) \
            or "'s " in np or words[0].lower() in ("no", "not", "nope", "none", "neither", "nothing"):
        return None
    return np


def _lc(np: str) -> str:
    """A count or an amount inside a sentence: "About 80" → "about 80"."""
    return np[:1].lower() + np[1:]


def _prefer(m: re.Match[str], np: str) -> str | None:
    """"Do you prefer aisle or window seats?" / "Aisle." → "I prefer aisle seats."."""
    first = np.split()[0].lower()
    for option in (m.group("a"), m.group("b")):
        if option.lower().split()[0] == first:
            noun = m.group("noun")
            tail = _YOUR_RE.sub("my", m.group("tail") or "")  # "… for the team dinner"
            return f"I prefer {option}{' ' + noun if noun else ''}{tail}."  # as the question wrote it: "Asics", "aisle"
    return None


def _a(np: str) -> str:
    """A noun phrase after "is": "A 60 lb pit mix" → "a 60 lb pit mix", "Honda Civic" → "a Honda Civic"."""
    first = np.split()[0].lower()
    if first in _ARTICLES:
        return _lc(np)
    return f"{'an' if np[:1].lower() in 'aeiou' else 'a'} {np}"


def _lc_common(np: str) -> str:
    """An answer inside a sentence, lower case where it opens with an article or an activity
    ("The subjunctive", "Staying consistent"); a name ("Spanish", "Rust") as said."""
    first = np.split()[0].lower() if np.split() else ""
    return _lc(np) if first in _ARTICLES or first.endswith("ing") else np


_ARTICLES = frozenset("the a an some my any".split())


_SINCE_RE = re.compile(r"^(?:ever\s+)?since\s+(?P<when>[\w' -]{2,40}?)$", re.I)
_OR_SO_RE = re.compile(r"[ ,]+or (?:so|something)$")  # "Ten years or so.", "twice a week or something"


def _for_how_long(m: re.Match[str], np: str) -> str | None:
    """"How long have you been into art?" / "Since I was 17." → "I've been into art since I was 17.";
    / "Five years now." → "… for five years now." (an answer that says how long, else None)."""
    been = m.group("have").lower().startswith("have")
    rough = _OR_SO_RE.search(np)  # "Ten years or so." → "about ten years"
    np = np[: rough.start()] if rough else np
    np = "about " + _lc(np) if rough and not re.match(r"(?:about|around|roughly|almost|nearly|over) ", np, re.I) else np
    since = _SINCE_RE.match(np)
    if since and been:
        return f"I've been {m.group('v')} since {since.group('when')}."
    if not _DURATION_RE.search(np):
        return None
    return f"I've been {m.group('v')} for {_lc(np)}." if been else f"I'm {m.group('v')} for {_lc(np)}."


def _measure(m: re.Match[str], np: str) -> str | None:
    """"What's your target weight?" / "70 kg." → "My target weight is 70 kg.": any of the user's
    own numbers (a weight, a height, a shoe size), not a plan or an answer to "what's your take?"."""
    if not re.search(r"\d", np) or _NOT_A_MEASURE_RE.search(m.group("x")):
        return None
    return f"My {m.group('x').lower()} is {_lc(np)}."


_NOT_A_MEASURE_RE = re.compile(r"\b(?:plan|plans|idea|question|problem|point|take|guess|excuse|secret|reason|number)\b",
                               re.I)


def _zh_age_of(m: re.Match[str], a: str) -> str | None:
    """"你的猫多大了？" / "快十岁了" → "我的猫今年快十岁"."""
    a = a.rstrip("了啦")
    if a.endswith("岁"):
        return f"我的{m.group('x')}今年{a}"
    return f"我的{m.group('x')}今年{a}岁" if re.fullmatch(r"[0-9]{1,3}|[一二三四五六七八九十]{1,3}", a) else None


def _on(np: str) -> str:
    """A day as it follows "is": "December 23rd" → "on December 23rd"; "next Friday" as it is."""
    return np if re.match(r"^(?:on|in|at|next|this|tomorrow|today|tonight|the day)\b", np, re.I) else f"on {np}"


def _when(m: re.Match[str], np: str) -> str | None:
    """"When is your exam?" / "December 23rd." → "My exam is on December 23rd."; "When do you
    fly out?" / "Next Friday." → "I fly out next Friday." Only an answer that is a day."""
    if not EN_DATE_RE.search(np):
        return None
    if m.group("x"):
        return f"My {m.group('x')} is {_on(np)}."
    return f"I {m.group('v')} {_lc(np) if np.split()[0].lower() in _EN_RELATIVE_DAYS else _on(np)}."


_EN_RELATIVE_DAYS = frozenset("next this tomorrow today tonight in".split())


def _looking_for(m: re.Match[str], np: str) -> str:
    """"What kind of role are you after?" / "Something in product management." → "I'm looking for
    a role in product management."; "Remote ones." as said."""
    x = m.group("x").lower()
    lead = re.match(r"^(?:something|anything|one|ones)\b\s*", np, re.I)
    if lead:
        np = f"{'an' if x[:1] in 'aeiou' else 'a'} {x} {np[lead.end():]}".rstrip()
    return f"I'm looking for {_lc_common(np)}."


def _job(m: re.Match[str], np: str) -> str | None:
    """"What do you do?" / "Nurse." → "I'm a nurse."; an activity ("Nursing.") names no job."""
    if np.lower().endswith("ing"):
        return None
    article = "an" if np[:1].lower() in "aeiou" else "a"
    return f"I'm {np}." if np.lower().startswith(("a ", "an ", "the ")) else f"I'm {article} {np.lower()}."


_EN_HOW_OFTEN_LEAD_RE = re.compile(r"^(?P<adv>usually|normally|typically|mostly|always|often|generally)\s+", re.I)


def _what_i_do(m: re.Match[str], np: str) -> str:
    """"What do you eat before a long run?" / "Usually oatmeal with banana." → "I usually eat
    oatmeal with banana before a long run."."""
    lead = _EN_HOW_OFTEN_LEAD_RE.match(np)
    adv = (m.group("adv") or (lead.group("adv") if lead else "") or "").strip().lower()
    what = np[lead.end():] if lead else np
    rest = _YOU_AS_I_RE.sub(lambda w: _YOU_AS_I[w.group().lower()], m.group("rest") or "")  # ("when you work")
    return f"I {adv + ' ' if adv else ''}{m.group('v').lower()} {_lc(what)}{rest}."


_EN_RULES: list[Rule] = [
    (re.compile(r"^what do you (?P<adv>usually |normally |typically )?(?P<v>eat|drink|have|take|listen to|read|watch"
                r"|play|wear|bring|cook|order)(?P<rest> (?:for|before|after|at|in|on|during|when) [\w' -]{2,40})?\?$", re.I),
     _what_i_do),
    (re.compile(r"^what(?:'s| is) your (?P<x>favou?rite [\w -]{1,30}?|(?:[\w-]+'s )?(?:name|birthday|job|occupation"
                r"|profession|major|hometown|nickname))\?$", re.I),
     lambda m, np: f"My {m.group('x')} is {np}."),
    (re.compile(r"^what are your (?P<x>[\w' -]{1,30}?)(?:'s)? names\?$", re.I),
     lambda m, np: f"My {m.group('x')}'s names are {np}."),
    (re.compile(r"^where do you (?P<v>live|work|study)(?: now| these days)?\?$", re.I),
     lambda m, np: f"I {m.group('v').lower()} {'in' if m.group('v').lower() == 'live' else 'at'} {_PREP_EN.sub('', np)}."),
    (re.compile(r"^where are you (?:from|originally from)\?$", re.I), lambda m, np: f"I'm from {_PREP_EN.sub('', np)}."),
    (re.compile(r"^where are you (?:based|located|living)(?: now| these days)?\?$", re.I),
     lambda m, np: f"I'm based in {_PREP_EN.sub('', np)}."),
    (re.compile(r"^how old are you\?$", re.I), lambda m, np: f"I'm {np}." if re.match(r"^\d{1,3}\b", np) else None),
    (re.compile(r"^how old (?:is your (?P<x>[\w-]+)|are your (?P<xs>[\w-]+))\?$", re.I),
     lambda m, np: f"My {m.group('x')} is {_lc(np)}." if m.group("x") else f"My {m.group('xs')} are {_lc(np)}."),
    (re.compile(r"^how many (?P<x>[a-z -]{2,30}?) (?:are you expecting|do you expect)\?$", re.I),
     lambda m, np: f"I'm expecting {_lc(np)} {m.group('x')}." if _COUNT_RE.match(np) else None),
    (re.compile(r"^how many (?P<x>[a-z -]{2,30}?) do you have\?$", re.I),
     lambda m, np: f"I have {_lc(np)} {m.group('x')}." if _COUNT_RE.match(np) else None),
    # "How many books do you read a year?" / "Around 40." → "I read around 40 books a year."
    (re.compile(r"^how many (?P<x>[a-z -]{2,30}?) do you (?P<v>read|run|drink|watch|write|eat|smoke|walk|swim|cook|bake"
                r"|make|sell|teach|see|ride|play)(?P<per> (?:a|per|each|every) (?:year|month|week|day|night))?\?$", re.I),
     lambda m, np: f"I {m.group('v')} {_lc(np)} {m.group('x')}{m.group('per') or ''}." if _COUNT_RE.match(np) else None),
    (re.compile(r"^(?:any|do you have a|what(?:'s| is) your) budget(?P<per> per [a-z]+)?(?P<for> for [\w -]{1,30}?)?"
                r"(?: in mind)?\?$", re.I),
     lambda m, np: f"My budget is {_lc(np)}{m.group('per') or ''}{m.group('for') or ''}." if re.search(r"\d", np) else None),
    (re.compile(r"^where are you (?:headed|heading|going|off to|travell?ing|flying)(?: to)?(?: next| this time)?\?$", re.I),
     lambda m, np: f"I'm going to {_PREP_EN.sub('', np)}."),
    # ("… into art?" / "Since I was 17 or so.", "… married?" / "Five years now.")
    (re.compile(r"^how long (?P<have>have you been|are you|will you be) (?P<v>[a-z]+ing(?: [a-z ]{1,20}?)?"
                r"|(?:into|in|at|with|a|an) [a-z ]{1,25}?|married|together|engaged|vegan|vegetarian|sober|retired)\?$", re.I),
     lambda m, np: _for_how_long(m, np)),
    (re.compile(r"^how often do you (?P<v>[a-z]+(?: [a-z]+){0,3}?)\?$", re.I),
     lambda m, np: f"I {_YOUR_RE.sub('my', m.group('v'))} {_lc(_OR_SO_RE.sub('', np))}."
     if _HOW_OFTEN_RE.match(np) else None),
    (re.compile(r"^do you (?P<v>[a-z]+(?: [a-z]+){0,3}?) (?:often|a lot|regularly|much|every day)\?$", re.I),
     lambda m, np: f"I {m.group('v')} {_lc(_OR_SO_RE.sub('', np))}."
     if _HOW_OFTEN_RE.match(np) else None),
    (re.compile(r"^what(?:'s| is| are) your (?P<x>[\w -]{2,30}?) (?:into|obsessed with)(?: these days| right now| lately)?\?$",
                re.I), lambda m, np: f"My {m.group('x').lower()} is into {_lc_common(np)}."),
    (re.compile(r"^what(?:'s| is) your (?P<x>[a-z][\w -]{1,30}?)\?$", re.I), _measure),  # last: any other number
    (re.compile(r"^(?:do|would) you (?:prefer|like|want) (?P<a>[\w-]+) or (?P<b>[\w-]+)(?: (?P<noun>(?!for\b)[\w-]+))?"
                r"(?P<tail> for [\w' -]{2,30})?\?$", re.I), _prefer),
    (re.compile(r"^what (?:kind|type|sort) of (?P<x>[\w -]+?) do you (?P<v>like|prefer|love|enjoy)\?$", re.I),
     lambda m, np: f"I {m.group('v').lower()} {np}."),
    (re.compile(r"^what do you do(?: for (?:a living|work))?\?$", re.I), _job),
    (re.compile(r"^what are you into(?: these days| right now| lately)?\?$", re.I),
     lambda m, np: f"I'm into {_lc_common(np)}."),
    (re.compile(r"^what are you working on(?: these days| now| right now| lately| at the moment)?\?$", re.I),
     lambda m, np: f"I'm working on {_lc(np)}."),
    # "Do you have any other conditions?" / "High blood pressure." → "I have high blood pressure."
    (re.compile(r"^(?:do you have|are there) any (?:other )?(?:(?:health|medical|chronic) )?(?P<x>conditions|health issues"
                r"|health problems|injuries|illnesses|pets|allergies|food allergies)(?: I should know about)?\?$", re.I),
     lambda m, np: f"I'm allergic to {_lc(np)}." if m.group("x").lower().endswith("allergies") else f"I have {_lc(np)}."),
    # "What Python version?" / "3.12." → "I use Python 3.12."
    (re.compile(r"^(?:got it[.!]?\s*)?(?:what|which) (?:(?P<x>[\w.+#-]+) version|version of (?P<x2>[\w.+#-]+))"
                r"(?: are you (?:on|using|running)| do you use)?\?$", re.I),
     lambda m, np: f"I use {m.group('x') or m.group('x2')} {np}." if re.match(r"^v?\d", np) else None),
    # "What kind of dog?" / "A 60 lb pit mix named Tank." → "My dog is a 60 lb pit mix named Tank."
    (re.compile(r"^(?:and )?what (?:kind|type|breed|sort|model|make) of (?P<x>(?![\w -]*\b(?:are|do|did|would|you)\b)"
                r"[\w -]+?)(?: is (?:it|he|she|that))?\?$",
                re.I), lambda m, np: f"My {m.group('x').lower()} is {_a(np)}."),
    (re.compile(r"^what (?:kind|type|sort) of (?P<x>[\w -]+?) are you (?:looking for|after|hoping for|hoping to find"
                r"|interested in)\?$", re.I), _looking_for),
    (re.compile(r"^what (?:part )?do you find (?P<how>(?:the )?(?:hardest|most difficult|most challenging|easiest"
                r"|most fun|most interesting|(?:most )?(?:hard|difficult|tricky|challenging|easy|fun))(?: about it)?)\?$",
                re.I), lambda m, np: f"I find {_lc_common(np)} {m.group('how').lower().removesuffix(' about it')}."),
    (re.compile(r"^what are you (?P<v>studying|learning|reading|watching|training for|saving for|saving up for"
                r"|looking for)(?: these days| now| right now| at the moment)?\?$", re.I),
     lambda m, np: f"I'm {m.group('v').lower()} {_lc_common(np)}."),
    (re.compile(r"^(?:which|what) (?P<x>[a-z][\w -]{1,30}?) (?:are you using|do you use|are you on)(?: now| these days)?\?$",
                re.I), lambda m, np: f"I use {np} as my {m.group('x').lower()}."),
    (re.compile(r"^when(?:'s| is) (?:your|the) (?P<x>[a-z][\w -]{1,30}?)\?$|^when do you (?P<v>[a-z][\w -]{1,30}?)\?$",
                re.I), _when),
    (re.compile(r"^(?:what are your hobbies|do you have any hobbies|what do you do for fun|what do you like to do"
                r"(?: in your free time| for fun)?)\?$", re.I),
     lambda m, np: f"I like {_lc(np)}." if not np.lower().startswith(("nothing", "not ")) else None),
]
_EN_YES_RULES: list[Rule] = [
    (re.compile(r"^(?:would you like|do you want|shall i|should i|want) (?:me to )?remind you (?P<rest>(?:to|about) .+?)\?$",
                re.I), lambda m, _: f"Remind me {m.group('rest')}."),
    # "Are you hosting?" / "Yeah, at my place." → "I'm hosting."; "Do you cook?" / "Yes." → "I cook."
    (re.compile(r"^are you (?!sure|ok|okay|there|still|kidding|serious|joking|ready|free|around|available)"
                r"(?P<x>(?![\w' -]*\b(?:any|ever|anything|anyone)\b)[a-z][\w' -]{2,40}?)\?$", re.I), lambda m, _: f"I'm {m.group('x')}."),
    (re.compile(r"^do you (?!want|need|mind|think|know|agree|remember|see|mean|like it|understand)"
                r"(?P<x>(?![\w' -]*\b(?:any|ever|anything|anyone)\b)[a-z][\w' -]{2,40}?)\?$", re.I),
     lambda m, _: f"I {m.group('x')}."),
]
_YES_LEAD_EN = re.compile(r"^(?:yes|yeah|yep|yup|definitely|absolutely|of course)\b\s*[,!.]", re.I)
_ZH_RULES: list[Rule] = [
    (re.compile(r"^你叫什么(?:名字)?[？?]$"), lambda m, a: f"我叫{a}"),
    (re.compile(r"^你(?:的|家的?)?(?P<x>[\u4e00-\u9fff]{1,4}?)叫什么(?:名字)?[？?]$"), lambda m, a: f"我的{m.group('x')}叫{a}"),
    (re.compile(r"^你(?:最)?喜欢(?P<v>喝|吃|看|听|玩|读)?(?:什么|哪种|哪个)(?P<x>[\u4e00-\u9fff]{0,4})[？?]$"),
     lambda m, a: f"我喜欢{m.group('v') or ''}{a}"),
    (re.compile(r"^你(?:现在)?住(?:在)?哪(?:里|儿)?[？?]$"), lambda m, a: f"我住在{a.removeprefix('在')}"),
    (re.compile(r"^你(?:现在)?在哪(?:里|儿)?(?:工作|上班)[？?]$"), lambda m, a: f"我在{a.removeprefix('在')}工作"),
    # "你一般在哪里复习？" / "图书馆。" → "我一般在图书馆复习"
    (re.compile(r"^你(?P<adv>一般|平时|通常|经常|现在)?在哪(?:里|儿)?(?P<v>复习|学习|上课|看书|写作业|锻炼|健身|跑步|吃饭|买菜)[？?]$"),
     lambda m, a: f"我{m.group('adv') or ''}在{a.removeprefix('在')}{m.group('v')}"),
    # "你在准备什么考试？" / "考研。" → "我在准备考研"
    (re.compile(r"^你(?:现在)?(?:在|正在)?(?:准备|备考|复习)(?:什么|哪个|哪一个)(?:考试|证书|资格证)?(?:呢)?[？?]$"),
     lambda m, a: f"我在准备{a}"),
    (re.compile(r"^你(?:今年)?(?:多大|几岁)(?:了)?[？?]$"),
     lambda m, a: f"我{a}" if a.endswith("岁") else f"我{a}岁" if re.fullmatch(r"[0-9]{1,3}|[一二三四五六七八九十]{1,3}", a) else None),
    (re.compile(r"^你(?:的|家的?)(?P<x>[\u4e00-\u9fff]{1,4}?)(?:今年)?(?:多大|几岁)(?:了)?[？?]$"), _zh_age_of),
    (re.compile(r"^你是做什么(?:工作)?的[？?]$|^你做什么工作[？?]$|^你的工作是什么[？?]$"),
     lambda m, a: f"我是{a.removeprefix('我是')}"),
    (re.compile(r"^(?:你的?)?(?P<x>[\u4e00-\u9fff]{1,6}?)(?:是|在)?(?:什么时候|哪天|哪一天|几号)[？?]$"),
     lambda m, a: f"我的{m.group('x')}在{a}" if ZH_DATE_RE.search(a) else None),
    (re.compile(r"^你?(?:打算|准备|计划)?(?:哪天|什么时候|几号|几点)(?P<v>[\u4e00-\u9fff]{1,4}?)(?:呢|啊)?[？?]$"),
     lambda m, a: f"我{_ZH_BY_RE.sub('', a)}要{m.group('v')}" if ZH_DATE_RE.search(a) else None),
    (re.compile(r"^你(?:们)?(?:现在)?(?:平时|一般|主要)?用(?:的是)?(?:什么|哪个|哪款|哪种)(?P<x>[\u4e00-\u9fff]{1,6}?)[？?]$"),
     lambda m, a: f"我用的{m.group('x')}是{a}"),  # (read as "用户用的编辑器是VS Code")
    (re.compile(r"^你?(?P<when>每天|平时|一般|每周|每次)(?P<v>[\u4e00-\u9fff]{1,4}?)(?:多久|多长时间|几个小时)(?:呢|啊)?[？?]$"),
     lambda m, a: f"我{m.group('when')}{m.group('v')}{a}" if re.search(r"小时|分钟|钟头|天|[0-9一二两三四五六七八九十半]", a) else None),
    (re.compile(r"^你(?:现在)?(?:多重|体重多少)[？?]$"),
     lambda m, a: f"我的体重是{a}" if re.search(r"\d|[一二三四五六七八九十百]", a) else None),
    (re.compile(r"^你的(?P<x>目标体重|理想体重|目标|梦想|专业|爱好|预算|计划|职业|星座|血型|身高|体重)(?:是什么|是多少|是啥)[？?]$"),
     lambda m, a: f"我的{m.group('x')}是{re.sub(r'^(?:想要|想|要|希望)(?=..)', '', a)}"),  # ("想增肌": 增肌)
    (re.compile(r"^你是哪里人[？?]$"), lambda m, a: f"我是{a}" if a.endswith("人") else f"我是{a}人"),
    (re.compile(r"^你(?:平时|平常|业余)?(?:有什么|有哪些|的)爱好(?:吗|是什么)?[？?]$|^你(?:平时|平常)?喜欢做什么[？?]$"),
     lambda m, a: None if a.startswith(("没", "不")) else f"我喜欢{a}"),
]
# what the rest of a short answer goes on to say of the user: "…，目标是北大的中文系"
_ZH_GOES_ON_RE = re.compile(r"^(?:目标|梦想|专业|打算|想|准备|计划|希望)")
_YES_LEAD_ZH = re.compile(r"^(?:好的?|要|需要|可以|行|嗯|是的?)[，,]\s*(?P<rest>[^，,。？?！!]{2,20})[。！!]?$")
_ZH_YES_RULES: list[Rule] = [
    (re.compile(r"^(?:要不要|需不需要|需要|要)我(?:到时候)?提醒你(?P<rest>.+?)(?:吗)?[？?]$"),
     lambda m, when: f"提醒我{when}{m.group('rest')}"),
]


_PRONOUN_EN_RE = re.compile(r"\b(?P<p>he|she)\b", re.I)
_PRONOUN_ZH_RE = re.compile(r"^(?P<p>他|她|它)(?!们)")


def _asked(question_turn: str) -> str | None:
    """The last question of the assistant's turn (the question is at its end)."""
    tail = question_turn[-_MAX_QUESTION_CHARS:]
    return next((s.strip() for s in reversed(split_sentences(tail)) if s.strip().endswith(("?", "？"))), None)


def asks_of_pronoun(question_turn: str) -> bool:
    """The assistant's last question asks about "he"/"她" ("希望他早日康复。他多大了？")."""
    asked = _asked(question_turn) if question_turn else None
    return asked is not None and bool(_PRONOUN_EN_RE.search(asked) or _PRONOUN_ZH_RE.match(re.split(r"[，,]", asked)[-1]))


def _named(asked: str, referent: str) -> str:
    """"他多大了？" → "你的儿子多大了？", "How old is he?" → "How old is your son?", when the
    pronoun can stand for the user's `referent` (engram.extract.rewrite.pronoun_fits)."""
    def zh(m: re.Match[str]) -> str:
        return f"你的{referent}" if pronoun_fits(m.group("p"), referent) else m.group()

    def en(m: re.Match[str]) -> str:
        return f"your {referent}" if pronoun_fits(m.group("p"), referent) else m.group()

    parts = re.split(r"([，,])", asked)
    parts[-1] = _PRONOUN_ZH_RE.sub(zh, parts[-1])
    return _PRONOUN_EN_RE.sub(en, "".join(parts))


def answer_as_statement(question_turn: str, answer: str, *, lead_only: bool = False,
                        referent: str | None = None) -> str | None:
    """`answer` read with the last question of `question_turn` as the user's own statement, or
    None when it is no short answer to a question of a shape this knows. A short answer may
    open a longer message, as a sentence of its own ("A fraud detection system. It has to be
    live by Q1."); with `lead_only` (the rules found something in the message) only that is read."""
    if not question_turn or not answer or not answer.strip() or len(answer) > _MAX_ANSWER_CHARS:
        return None  # (a long message is no short answer: nothing to read, whatever its length)
    answer = formal(answer)  # ("a pit mix named tank" typed fast: named Tank)
    asked = _asked(question_turn)
    if asked is None:
        return _agreed(question_turn, answer.strip())  # "Try the McKenzie stretches." / "ok I'll try that"
    kept = _kept(question_turn, asked, answer.strip())
    if kept is not None:  # "… Want me to remember that?" / "yes please"
        return kept
    if referent:  # "他多大了？" after the user spoke of their son
        asked = _named(asked, referent)
    # (a Chinese answer is its first clause: "大概十个小时吧，早上七点到图书馆。"; and "High blood
    # pressure, and my knee hurts …" is the answer, then a clause of its own)
    first_clause = CJK_RE.search(asked) is not None or _AND_MORE_RE.search(answer) is not None
    whole = None if lead_only and not first_clause else _read(asked, answer.strip())
    if whole is not None:
        return whole
    sentences = [s for s in split_sentences(answer) if s.strip()]
    return _read(asked, sentences[0].strip()) if len(sentences) > 1 else None


# "Want me to remember that?", "要我帮你记下来吗？": a yes keeps what the assistant just said
_KEEP_EN_RE = re.compile(r"^(?:want|do you want|would you like|shall|should|can) (?:me to |i )?(?:remember|save|note|keep|"
                         r"write down|make a note of) (?:that|this|it)(?: for you| for later)?\?$", re.I)
_KEEP_ZH_RE = re.compile(r"^(?:要|需要|要不要)?(?:我)?(?:帮你)?(?:记下来|记住|记一下|保存下来|保存)(?:吗)?[？?]$")
_EN_RECOMMENDED_RE = re.compile(r"^(?:.{0,60}?,\s*)?(?:I'd|I would|I)\s+(?:recommend|suggest|go with)\s+(?P<what>.+?)[.!]?$", re.I)
_ZH_RECOMMENDED_RE = re.compile(r"^(?:[^，,]{0,20}[，,])?我?(?:推荐|建议)(?:你)?(?:用|买|选|试试)?(?P<what>.+?)[。！!]?$")
# advice the user accepts: "For your back pain, try the McKenzie stretches twice a day." / "ok I'll try that"
_EN_ADVICE_RE = re.compile(
    r"^(?:(?P<pre>for [^,]{2,40}),\s*)?(?:(?:I'd|I would) (?:recommend|suggest) (?:that you )?|you (?:should|could|might want to) )?"
    r"(?P<act>(?:try|do|take|use|avoid|drink|eat|get|go|consider|start|stop|skip|add|switch to|cut back on|limit)\b[^?]{3,120}?)"
    r"[.!]?$", re.I)
_ZH_ADVICE_RE = re.compile(r"^(?:(?P<pre>[^，,]{1,12})[，,])?(?:我)?(?:建议你?|你可以|可以试试|试试|不妨|最好)(?P<act>[^？?]{2,40}?)[。！!]?$")
_AGREE_EN_RE = re.compile(r"^(?:ok(?:ay)?|sure|sounds good|will do|good idea|great idea|deal|got it|yes|yeah|yep)?[\s,!.]*"
                          r"(?:i'll (?:try|do) (?:that|it|this)|i will (?:try|do) (?:that|it)|will do|sounds good|"
                          r"good idea|great idea|ok(?:ay)?|sure)[\s,!.]*(?:thanks?(?: you)?)?[\s!.]*$", re.I)
_AGREE_ZH_RE = re.compile(r"^(?:好的?|行|可以|没问题|嗯)?[，,！!]?(?:我(?:会)?试试(?:看)?|听你的|好的?|行|可以|没问题)"
                          r"[，,！!。]*(?:谢谢)?[！!。]*$")


def _said_before(turn: str) -> str | None:
    """The assistant's last statement before its closing question (or its last one)."""
    said = [s.strip() for s in split_sentences(turn[-_MAX_QUESTION_CHARS:]) if s.strip()]
    statements = [s for s in said if not s.endswith(("?", "？"))]
    return statements[-1] if statements else None


def _kept(turn: str, asked: str, answer: str) -> str | None:
    """A yes to "Want me to remember that?": what the assistant said, for the user to keep
    ("Remember that you recommended the Sony WH-1000XM5 headphones, they're $399.")."""
    zh = CJK_RE.search(asked) is not None
    if not (_KEEP_ZH_RE if zh else _KEEP_EN_RE).match(asked) or not (_YES_ZH if zh else _YES_EN).match(answer):
        return None
    said = _said_before(turn)
    if said is None:
        return None
    if zh:
        rec = _ZH_RECOMMENDED_RE.match(said)
        return f"记住，你推荐了{rec.group('what')}" if rec else f"记住，{said.replace('你', '我')}"
    rec = _EN_RECOMMENDED_RE.match(said)
    if rec:
        return f"Remember that you recommended {rec.group('what')}."
    if re.search(r"\b(?:I|I'm|I'd|I'll|me|my)\b", said):
        return None  # the assistant speaking of itself: not the user's to keep as said
    return "Remember that " + _YOU_AS_I_RE.sub(lambda m: _YOU_AS_I[m.group().lower()], said)


_YOU_AS_I = {"you": "I", "your": "my", "you're": "I'm", "yours": "mine", "you've": "I've", "you'll": "I'll"}
_YOU_AS_I_RE = re.compile(r"\b(?:you're|you've|you'll|yours|your|you)\b", re.I)


def _agreed(turn: str, answer: str) -> str | None:
    """"ok I'll try that" after the assistant's advice: what the user decided ("I decided to try
    the McKenzie stretches twice a day for my back pain.")."""
    zh = CJK_RE.search(turn) is not None
    if not (_AGREE_ZH_RE if zh else _AGREE_EN_RE).match(answer):
        return None
    said = _said_before(turn)
    m = (_ZH_ADVICE_RE if zh else _EN_ADVICE_RE).match(said) if said else None
    if m is None:
        return None
    if zh:
        return f"我决定{m.group('act')}"
    act = _YOU_AS_I_RE.sub(lambda w: _YOU_AS_I[w.group().lower()], m.group("act"))
    pre = _YOU_AS_I_RE.sub(lambda w: _YOU_AS_I[w.group().lower()], m.group("pre")) if m.group("pre") else ""
    return f"I decided to {act[:1].lower() + act[1:]}{' ' + pre.lower() if pre else ''}."


def _read(asked: str, said: str) -> str | None:
    """`said` as the answer to `asked`, in the user's own words, or None."""
    if CJK_RE.search(asked):
        asked = _ZH_SO_RE.sub("", asked.replace("你自己", "你"))  # "那你自己在哪里上班？"
        pure = _YES_ZH.match(said) is not None
        lead = None if pure else _YES_LEAD_ZH.match(said)  # "要，每天早上八点和晚上八点。": yes, and when
        if pure or lead:
            return _first(_ZH_YES_RULES, asked, _TAIL_ZH.sub("", lead.group("rest")) if lead else "")
        short = _TAIL_ZH.sub("", said)
        rest = ""
        if re.search(r"[，,]", short) and not re.search(r"[。？?！!]", short):
            short, rest = re.split(r"[，,]", short, maxsplit=1)  # "减脂，想在夏天前减掉十斤": the answer comes first
            short = _TAIL_ZH.sub("", short)
        if (at := _ZH_I_AM_AT_RE.match(short)) and _ZH_WHERE_RE.search(asked):
            short = short[at.end():]  # "你在哪里上班？" / "我在国贸。": where, said as a sentence
        if not short or len(short) > _MAX_ZH_CHARS or short.startswith("我") or re.search(r"[，,。？?！!]", short):
            return None
        stated = _first(_ZH_RULES, asked, short)
        # what follows goes on from it ("考研，目标是北大的中文系": the user's goal too)
        return f"{stated}，{rest.strip()}" if stated and _ZH_GOES_ON_RE.match(rest.strip()) else stated
    if _YES_EN.match(said) or _YES_LEAD_EN.match(said):  # "Yes.", "Yeah, at my place."
        return _first(_EN_YES_RULES, asked, said)
    np = _en_np(said)
    stated = _first(_EN_RULES, asked, np) if np else None
    more = _EN_WITH_MORE_RE.match(said[len(np):]) if stated and np and said.startswith(np) else None
    if more:  # "Lisbon, for ten days in May with my girlfriend Chloe": where, and for how long, with whom
        return stated.rstrip(".") + " " + more.group("more").rstrip(".!") + "."
    return stated


def _first(rules: list[Rule], asked: str, said: str) -> str | None:
    """The first rule whose question shape `asked` is, or its last clause ("好的，哪天出发？")."""
    last = re.split(r"[，,]\s*", asked)[-1]
    for question in (asked, last) if last != asked else (asked,):
        for pattern, read in rules:
            m = pattern.match(question)
            if m is not None:
                return read(m, said)
    return None
