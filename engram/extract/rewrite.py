"""Rewriting what the user said as a statement about the user, in their language.

"I love my job" → "User loves their job."; "我住在北京" → "用户住在北京";
"you" (the assistant) becomes "the assistant" / "助手".
"""

from __future__ import annotations

import re

from engram.extract.keys import WS_RE
from engram.extract.phrases import ZH_OWNED_RE, ZH_PEOPLE, ZH_PET_BREEDS, ZH_PETS
from engram.relatives import KIN_EN, KIN_ZH


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def ucfirst(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def lcfirst(s: str) -> str:
    return s[:1].lower() + s[1:] if s else s


def as_sentence(s: str) -> str:
    """Ends with a full stop unless it already ends with "." or "!"."""
    s = s.strip()
    return s if s.endswith((".", "!")) else s + "."


_EN_MODALS = frozenset("can cannot can't will won't would should must may might could shall".split())
_EN_IRREGULAR = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "go": "goes",
                 "gotta": "has to", "'m": "is", "'ve": "has", "'d": "would", "'ll": "will"}
# past forms not made with -ed: events (engram.extract.statements), never conjugated ("hid" → "hids")
EN_IRREGULAR_PAST = frozenset(
    """went ran got made took came saw met grew began became bought brought built caught chose drew drove
    ate fell felt found flew forgot gave had heard held hurt kept knew left lent lost meant paid put quit
    read rode rang rose sang sat slept sold sent set shot showed shut spent spoke stood stole swam taught
    threw understood woke won wore wrote broke did hid bit dug fed fled fought hung led slid spun swung wept
    dealt bent bled clung crept drank froze knelt sank shook shone shrank sought sprang struck swore swept
    tore withdrew overcame undertook forgave learnt burnt dreamt spelt leapt smelt spilt spoilt dwelt""".split()
)
_EN_PAST_NOT_EVENTS = frozenset("was were said told thought".split())  # past, but no event of their own
_EN_PAST_AS_PRESENT = frozenset("read put set quit hurt shut".split())
_EN_HEAD_RE = re.compile(
    r"^i(?P<contr>'m|'ve|'d|'ll)?\b(?P<adv>(?:\s+(?:really|truly|totally|absolutely|just|also"
    r"|still|actually|genuinely|honestly|definitely|seriously|generally|usually|always|never"
    r"|normally|often|sometimes|currently|now|already|recently|even|only|finally))*)"
    r"(?:\s+(?P<verb>[a-z']+))?",
    re.I,
)
_EN_PRON_RE = re.compile(r"\b(?:(?P<i>I)(?P<c>'m|'ve|'ll|'d)?|(?P<w>myself|mine|my|me))\b(?!-)", re.I)  # not "me-time"
_PRON = {"myself": "themselves", "mine": "theirs", "my": "their", "me": "them", "": "they",
         "'m": "they are", "'ve": "they have", "'ll": "they will", "'d": "they would"}
_YOU = {"you're": "the assistant is", "you are": "the assistant is", "your": "the assistant's",
        "yours": "the assistant's", "you": "the assistant"}
_EN_YOU_RE = re.compile(rf"\b(?:{'|'.join(_YOU)})\b", re.I)

_ZH_YOU_RE = re.compile(r"[你您](?!们)")
# "the book you recommended", "那本你推荐的书": what the assistant gave the user, named as the assistant's
_EN_YOUR_DOING_RE = re.compile(
    r"\b(?P<np>(?:the|that|this|those|these)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:that\s+)?you\s+"
    r"(?P<v>recommended|suggested|mentioned|gave\s+me|sent\s+me|showed\s+me|told\s+me\s+about|picked|found|shared"
    r"|wrote|made|linked)\b", re.I)
_ZH_YOUR_DOING_RE = re.compile(r"[你您](?P<v>推荐|建议|介绍|发|给我|说)的")


# "I've got a stress fracture", "I've got to go": has, have to, said the plain way
_EN_HAVE_GOT_RE = re.compile(r"\b(?P<who>I|we|they)(?:'ve|\s+have)\s+got\s+", re.I)


# "My doctor said to avoid dairy": what someone whose advice the user follows told them to do
# (not "my mom said I should move to Berlin": a wish of hers)
_EN_SAID_TO_RE = re.compile(
    r"^(?P<who>(?:my|our)\s+(?:[\w-]+\s+)?(?:doctor|physio|physiotherapist|therapist|dentist|vet|trainer|coach|nutritionist"
    r"|dietitian|surgeon|psychiatrist|counsell?or|pharmacist|gp|boss|manager|teacher|tutor))\s+(?:said|says)\s+"
    r"(?:I\s+should|to)\s+(?=[a-z])", re.I)


# "Shellfish, I'm allergic.", "海鲜，我过敏。": what it is said first, then the allergy
_EN_FRONTED_ALLERGY_RE = re.compile(
    r"^(?P<x>(?!(?:yes|yeah|no|yep|nope|well|so|oh|also|and|actually)\b)[a-z][\w -]{1,30}?)\s*,\s*(?:and\s+)?"
    r"I(?:'m|\s+am)\s+(?P<how>(?:very|severely|mildly|deathly)\s+)?allergic(?:\s+to\s+(?:it|them|that))?\s*(?P<end>[.!]?)$", re.I)
_ZH_FRONTED_ALLERGY_RE = re.compile(r"^(?P<x>[\u4e00-\u9fff]{1,8}?)[，,]\s*我(?:对(?:它|这个))?(?P<how>有点|非常|严重)?过敏(?P<end>[。！!]?)$")


# "考试是十二月二十三号": the user's own exam, said without 我的 (as "MCAT is in April")
_ZH_BARE_EXAM_RE = re.compile(r"^(?=(?:考试|高考|考研|面试|答辩|期末考试|期中考试|婚礼|手术)(?:是|在|定在)[^你他她]{2,})")


def plain_forms(sentence: str) -> str:
    """A sentence in the plain form the rules read: "I've got a stress fracture" → "I have a
    stress fracture", "I've got to finish my thesis" → "I have to …" ("got" is no event there:
    "User has got to go." was kept); "My doctor said to avoid dairy" → "… told me to …";
    "Shellfish, I'm allergic." → "I'm allergic to shellfish." (and "海鲜，我过敏。");
    "考试是十二月二十三号" → "我的考试是十二月二十三号"."""
    if "got" in sentence:
        sentence = _EN_HAVE_GOT_RE.sub(lambda m: f"{m.group('who')} have ", sentence)
    if " said " in sentence or " says " in sentence:  # ("My doctor said to avoid dairy": told me to)
        sentence = _EN_SAID_TO_RE.sub(lambda m: f"{m.group('who')} told me to ", sentence)
    if "allergic" in sentence:  # ("Shellfish, I'm allergic.": to shellfish)
        sentence = _EN_FRONTED_ALLERGY_RE.sub(
            lambda m: f"I'm {m.group('how') or ''}allergic to {m.group('x')[0].lower()}{m.group('x')[1:]}{m.group('end')}", sentence)
    elif "过敏" in sentence:
        sentence = _ZH_FRONTED_ALLERGY_RE.sub(lambda m: f"我对{m.group('x')}{m.group('how') or ''}过敏{m.group('end')}", sentence)
    return _ZH_BARE_EXAM_RE.sub("我的", sentence, count=1)


def assistant_did(sentence: str) -> str:
    """`sentence` with what the assistant recommended or gave, said of the assistant: "I tried the
    recipe you suggested" → "I tried the recipe the assistant suggested", "我买了你推荐的耳机" →
    "我买了助手推荐的耳机" (a statement that says "you" is otherwise no fact of the user's)."""
    if _ZH_YOU_RE.search(sentence):
        return _ZH_YOUR_DOING_RE.sub(lambda m: f"助手{m.group('v')}的", sentence)
    return _EN_YOUR_DOING_RE.sub(lambda m: f"{m.group('np')} the assistant {m.group('v')}", sentence)


def _pron_sub(m: re.Match[str]) -> str:
    return _PRON[(m.group("w") or m.group("c") or "").lower()]


def _you_sub(m: re.Match[str]) -> str:
    return _YOU[WS_RE.sub(" ", m.group().lower())]


def gerund(third: str) -> str | None:
    """The -ing form of a verb said in the third person: "plays" → "playing", "dances" →
    "dancing", "runs" → "running", "studies" → "studying"; None for what is no such verb."""
    v = third.lower()
    if not v.isalpha() or not v.endswith("s") or v in ("is", "has", "was"):
        return None
    if v == "does":
        return "doing"
    if v.endswith("ies"):
        base = v[:-3] + "y"
    elif v.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        base = v[:-2]
    else:
        base = v[:-1]
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and not base.endswith(("ee", "ye", "oe")):
        return base[:-1] + "ing"
    if _ONE_SHORT_SYLLABLE_RE.fullmatch(base):
        return base + base[-1] + "ing"  # "run" → "running", "swim" → "swimming" (not "visit", "play", "read")
    return base + "ing"


_ONE_SHORT_SYLLABLE_RE = re.compile(r"[^aeiou]+[aeiou][^aeiouwxy]")


def third_verb(verb: str) -> str:
    """Third person singular: "love" → "loves", "have" → "has", "can" → "can"."""
    lv = verb.lower()
    if lv in _EN_IRREGULAR:
        return _EN_IRREGULAR[lv]
    if lv in _EN_MODALS or (lv in EN_IRREGULAR_PAST and lv not in _EN_PAST_AS_PRESENT) or lv in _EN_PAST_NOT_EVENTS \
            or lv.endswith("n't") \
            or not lv.isalpha() \
            or (lv.endswith("ed") and not lv.endswith("eed")):
        return verb
    if lv.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lv) > 1 and lv.endswith("y") and lv[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def en_third(clause: str) -> str:
    """Rewrite a first-person English clause as a statement about "User"."""
    s = clause.strip()
    head = ""
    m = _EN_HEAD_RE.match(s)
    if m and (m.group("contr") or m.group("verb")):
        contr, adv, verb = m.group("contr"), m.group("adv") or "", m.group("verb")
        if contr:
            head = "User " + _EN_IRREGULAR[contr.lower()] + adv + (" " + verb if verb else "")
        else:
            head = "User" + adv + " " + third_verb(verb)
        s = s[m.end():]
    elif s[:2].lower() in ("my", "me") and not s[2:3].isalnum():
        head, s = ("User's" if s[1] in "yY" else "User"), s[2:]
    s = en_rest(s)
    if not head:
        s = _EN_YOU_RE.sub(_you_sub, s)
        return as_sentence(ucfirst(s))
    return as_sentence(head + s)


EN_PLURAL_OWNED = frozenset("""sons daughters kids children babies brothers sisters parents coworkers colleagues
    friends roommates neighbors neighbours grandparents cousins teammates classmates students dogs puppies cats
    kittens pets birds""".split())
# the gender "her"/"him" (她/他) may stand for, by the relation a kin word names (engram.relatives)
_FEMALE = frozenset("""mother sister wife girlfriend daughter grandmother aunt niece mother-in-law sister-in-law
    daughter-in-law stepmother stepsister stepdaughter granddaughter godmother ex-wife ex-girlfriend""".split())
_MALE = frozenset("""father brother husband boyfriend son grandfather uncle nephew father-in-law brother-in-law
    son-in-law stepfather stepbrother stepson grandson godfather ex-husband ex-boyfriend""".split())
_EN_FEMALE = frozenset({w for w, relation in KIN_EN.items() if relation in _FEMALE} | {"fiancee"})
_EN_MALE = frozenset({w for w, relation in KIN_EN.items() if relation in _MALE} | {"fiance"})
# "her"/"him"/"them" as an object (no noun phrase of theirs follows: "I call her every Sunday")
_EN_OBJECT_PRONOUN_RE = re.compile(
    r"\b(?P<p>her|him|them)\b(?=\s*(?:[,.!?;]|$)|\s+(?:a|an|the|some|that|this|every|each|on|at|in|to|for|with|"
    r"about|from|after|before|when|once|twice|again|back|often|daily|weekly|sometimes|yesterday|today|tonight|"
    r"tomorrow|last|next|because|so|and|but|or|up|out|over|(?!(?:family|ally|belly|bully|jelly|lily|rally|holly|"
    r"reply|supply|assembly|italy)\b)\w+ly)\b)",
    re.IGNORECASE,
)
# "her"/"his" before what a person has ("to meet her family", "talk to her grandma"): whose it is
_EN_THEIRS = frozenset(KIN_EN) | frozenset(
    "family friends friend place house home apartment garden birthday name car job work office school boss business "
    "company shop store studio band dog cat".split())
_EN_BE_BEFORE_RE = re.compile(r"\b(?:am|'m|is|was|be|became|become)\s+$", re.I)
_EN_POSSESSIVE_RE = re.compile(
    r"\b(?P<p>her|his)\s+(?P<adj>(?:main|primary|only|new|old|best|favou?rite|late|little|big|younger|older)\s+)?"
    r"(?P<n>[a-z-]+)\b", re.IGNORECASE)


def en_objects_named(said: str, prior: str, owner: str = "their") -> str:
    """"call her every Sunday" → "call their mom every Sunday", "meet her family" → "meet their
    partner's family" (`owner`: "my" in the user's own words), once a clause before named the
    user's mom (`prior`); a pronoun of the other gender or number is left as said."""
    plural = prior in EN_PLURAL_OWNED

    def named(m: re.Match[str]) -> str:
        pronoun = m.group("p").lower()
        fits = plural if pronoun == "them" else not plural and prior not in (
            _EN_MALE if pronoun == "her" else _EN_FEMALE)
        return f"{owner} {prior}" if fits else m.group()

    def whose(m: re.Match[str]) -> str:
        pronoun = m.group("p").lower()
        fits = not plural and prior not in (_EN_MALE if pronoun == "her" else _EN_FEMALE)
        # ("their" is left alone: the user's own "my" is written "their"; "his" is always whose;
        # "her" may be whom, but not after "I'm": "I'm her maid of honor")
        noun = m.group("n").lower() in _EN_THEIRS or pronoun == "his" or _EN_BE_BEFORE_RE.search(m.string, 0, m.start())
        return f"{owner} {prior}'s {m.group('adj') or ''}{m.group('n')}" if fits and noun else m.group()

    return _EN_POSSESSIVE_RE.sub(whose, _EN_OBJECT_PRONOUN_RE.sub(named, said))


_ZH_FEMALE = frozenset({w for w, relation in KIN_ZH.items() if relation in _FEMALE} | {"闺蜜"})
_ZH_MALE = frozenset(w for w, relation in KIN_ZH.items() if relation in _MALE)
_ZH_PRONOUN_RE = re.compile(r"(?<![其])(?P<p>[他她它])(?![们])")
_ZH_ANIMALS = frozenset(ZH_PETS) | frozenset(ZH_PET_BREEDS)


def unnamed_object(said: str) -> bool:
    """A "him" or "her" as an object in the user's own words ("I don't want to think about him"):
    who it is, only a clause before could say. ("them" is left alone: it is as often the kids or
    the paintings just named in the sentence.)"""
    return any(m.group("p").lower() in ("him", "her") for m in _EN_OBJECT_PRONOUN_RE.finditer(said))


def zh_pronouns_named(said: str, prior: str | None) -> str | None:
    """`said` (the user's own words) with its 他, 她 or 它 named as the user's `prior`, the one a
    clause before named ("我朋友家养了一只金毛，我每次去他家都很开心": 朋友家); None when one stays
    unnamed ("我那么期待它": what 它 is, only the turn before says). 他们 is left alone, as "them"
    is; 其他 and 他人 are no pronoun."""
    if _ZH_UNNAMED_RE.search(said) is None:
        return said
    if prior in _ZH_PEOPLE or prior in _ZH_ANIMALS:
        said = zh_objects_named(said, prior)
    return None if _ZH_UNNAMED_RE.search(said) else said


_ZH_UNNAMED_RE = re.compile(r"(?<![其吉])[他她它](?![们人])")  # (吉他 is a guitar)
_ZH_PEOPLE = frozenset(ZH_PEOPLE)
_ZH_PLURAL_OWNED = frozenset("爸妈 父母 孩子们 家人 朋友们 同学们 同事们 室友们 兄弟姐妹".split())


def pronoun_fits(pronoun: str, prior: str) -> bool:
    """Whether "she"/"he" (她/他) can stand for the user's `prior` ("mom", "妈妈"): not the
    other gender's kin word, nor several people ("他" is not 爸妈); a word of no gender
    ("friend", "朋友") fits either."""
    if pronoun == "它":
        return prior in _ZH_ANIMALS
    if pronoun.lower() in ("she", "he", "她", "他") and (prior.lower() in EN_PLURAL_OWNED or prior in _ZH_PLURAL_OWNED):
        return False
    wrong = {"she": _EN_MALE, "he": _EN_FEMALE, "她": _ZH_MALE, "他": _ZH_FEMALE}.get(pronoun.lower(), frozenset())
    return prior.lower() not in wrong


def zh_objects_named(said: str, prior: str) -> str:
    """"给她买礼物" → "给妈妈买礼物", once a clause before named the user's 妈妈 (`prior`); a
    pronoun of the other gender is left as said."""
    def named(m: re.Match[str]) -> str:
        if m.group("p") == "它":  # ("它" is an animal's: "带它去看了兽医")
            return prior if prior in _ZH_ANIMALS else m.group()
        wrong = _ZH_MALE if m.group("p") == "她" else _ZH_FEMALE
        return m.group() if prior in wrong else prior

    return _ZH_PRONOUN_RE.sub(named, said)


def en_rest(s: str) -> str:
    """First person → "they" in the rest of a clause ("… before I leave" → "… before they leave")."""
    return _EN_PRON_RE.sub(_pron_sub, s)


_WE_REST_RE = re.compile(r"\b(?:(?P<we>we)(?P<c>'re|'ve|'ll)?|(?P<w>ourselves|ours|our|us))\b", re.I)
_WE = {"ourselves": "themselves", "ours": "theirs", "our": "their", "us": "them", "": "they",
       "'re": "they are", "'ve": "they have", "'ll": "they will"}


def we_rest(s: str) -> str:
    """First person plural → "they" ("our kids" → "their kids"): the user and theirs."""
    return _WE_REST_RE.sub(lambda m: _WE[(m.group("w") or m.group("c") or "").lower()], s)


# 我 before a relative or a pet, inside a clause ("跟我妹妹"); "我女儿叫小美", "我女儿的生日" read well as they are
_ZH_MY_KIN_RE = re.compile(rf"(?<=.)我(?=(?:{ZH_OWNED_RE})(?!的))")


# a clause whose subject 我 comes after a short lead of time or manner ("明天", "每天晚上十点以后",
# "周末"): the lead names no one, holds no 的 and does not end in a preposition ("跟我", "给我")
_ZH_SUBJECT_AFTER_RE = re.compile(r"([^的，,。用]{1,12}?)(?<![跟和给对与让被把为帮同向替叫找陪带])用户(?!的)")


def zh_third(clause: str, *, subject: bool = False) -> str:
    """Rewrite a first-person Chinese clause about "用户"; `subject` adds one when missing."""
    s = _ZH_MY_KIN_RE.sub("用户的", clause)  # "跟我妹妹" → "跟用户的妹妹", not "跟用户妹妹"
    s = s.replace("我们", "\0").replace("我", "用户").replace("\0", "我们")
    if "你" in s or "您" in s:
        s = _ZH_YOU_RE.sub("助手", s)
    if subject and not s.startswith("用户"):
        lead = _ZH_SUBJECT_AFTER_RE.match(s)  # "明天我要去北京" → "用户明天要去北京", not "用户明天用户要去…"
        s = "用户" + (lead.group(1) + s[lead.end():] if lead else s)
    return s


def third_person(clause: str, lang: str, *, subject: bool = False) -> str:
    """`en_third` or `zh_third` by language."""
    return zh_third(clause, subject=subject) if lang == "zh" else en_third(clause)
