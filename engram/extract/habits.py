"""Routines: what the user usually does, in one slot per activity (habit:<activity>).

"I usually go running at 6am" / "我平时早上六点跑步" → a fact keyed habit:go_running /
habit:跑步, its value the schedule as said ("usually at 6am"). A routine with a
recurrence ("I go to the gym every Monday", "我每天早上六点跑步") is a task instead,
so that reminders keep working (see tasks), in the same habit:<activity> slot; so
"I stopped going to the gym" / "我不再去健身房了" (see changes) ends it either way.

Only activities count: "I always forget my keys" or "我总是很忙" are not routines.
"""

from __future__ import annotations

import re

from engram.extract.candidate import Ctx, candidate
from engram.extract.dates import ZH_TIME_RE
from engram.extract.filters import EN_TRANSIENT_RE, ZH_TRANSIENT_RE
from engram.extract.keys import WS_RE, slot_value, slugify
from engram.extract.phrases import CONTEXT_WORDS, ZH_OBJ_BAD_RE, cut_clause, trim_fillers
from engram.extract.rewrite import as_sentence, en_rest, third_verb, zh_third
from engram.models import Candidate, Kind

# verbs of things one does (and can stop doing): "I usually <verb> …", "I stopped <verb>ing …"
EN_ACTIVITY_VERBS = frozenset(
    """go run jog swim cycle bike ride drive walk hike climb skate ski surf dance sing play practice
    practise train exercise meditate pray read write paint draw cook bake eat drink smoke vape take use
    watch listen work study teach volunteer attend visit call commute sleep nap shower fast garden
    knit sew fish shop wear do game""".split()
)
_EN_PHRASAL = {"get": "up", "wake": "up", "work": "out"}  # "get up", "wake up", "work out"
_EN_ING_IRREGULAR = {"going": "go", "doing": "do", "being": "be", "having": "have", "lying": "lie",
                     "dying": "die", "skiing": "ski", "seeing": "see", "using": "use", "commuting": "commute",
                     "meditating": "meditate", "exercising": "exercise", "practicing": "practice",
                     "practising": "practise", "cycling": "cycle", "writing": "write", "biking": "bike"}
_VOWELS = "aeiou"
_EN_WHEN_RE = re.compile(
    r"\s*,?\s*\b(?:(?:at|around|before|by)\s+(?:\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)?|noon|midnight|night"
    r"|dawn|dusk|lunch(?:time)?|the\s+weekends?)"
    r"|(?:in|during)\s+the\s+(?:morning|afternoon|evening|night)s?"
    r"|(?:on|at|over)\s+(?:the\s+)?weekends?|on\s+weekdays"
    r"|(?:after|before)\s+(?:work|school|class|dinner|lunch|breakfast|bed|bedtime)"
    r"|first\s+thing(?:\s+in\s+the\s+morning)?|(?:every|each)\s+\w+|daily|nightly|weekly|monthly"
    r"|on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b",
    re.I,
)
_EN_HABIT_RE = re.compile(
    r"^i\s+(?P<freq>usually|normally|often|regularly|typically|generally|always|frequently|mostly|tend\s+to)\s+"
    r"(?:(?:also|still|just)\s+)?(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.I,
)
_EN_NEG_RE = re.compile(r"n't\b|\b(?:not|never)\b", re.I)

_ZH_HABIT_RE = re.compile(r"^我(?P<freq>平时|平常|通常|一般|经常|常常|往往|总是|老是)(?P<rest>.+)$")
_ZH_WHEN_RE = re.compile(
    r"(?:每天|每晚|周末|工作日|晚饭后|午饭后|饭后|睡前|下班后|放学后|上班前|上午|早上|早晨|中午|下午|傍晚|晚上)+"
)
_ZH_LEAD_RE = re.compile(r"^(?:都|会|也|还|就)+")
_ZH_ACT_BAD_RE = re.compile(r"^(?:[不没很太挺好是要想能可得觉喜爱讨的了着过被让给]|比较|非常)")


def base_verb(word: str) -> str:
    """"running" → "run", "smoking" → "smoke", "drinking" → "drink"; other words as they are."""
    w = word.lower()
    if w in _EN_ING_IRREGULAR:
        return _EN_ING_IRREGULAR[w]
    if not w.endswith("ing") or len(w) < 5:
        return w
    stem = w[:-3]
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] in "bdgmnprt":
        return stem[:-1]  # running, swimming, shopping
    if stem.endswith("c") or (len(stem) > 2 and stem[-1] == "l" and stem[-2] not in _VOWELS + "l"):
        return stem + "e"  # dancing, juggling
    if 3 <= len(stem) <= 4 and stem[-1] not in _VOWELS + "wxy" and stem[-2] in _VOWELS \
            and stem[-3] not in _VOWELS:
        return stem + "e"  # smoking, baking, hiking, driving
    return stem


def en_activity(phrase: str) -> str:
    """The activity of a phrase, without its times: "going running at 6am" → "go running"."""
    words = phrase.strip().split(None, 1)
    if not words:
        return ""
    act = base_verb(words[0]) + (" " + words[1] if len(words) > 1 else "")
    return WS_RE.sub(" ", _EN_WHEN_RE.sub(" ", act)).strip(" ,")


def zh_activity(phrase: str) -> str:
    """"早上六点跑步" → "跑步", "跑步半小时左右" → "跑步"."""
    act = _ZH_HOW_LONG_RE.sub("", _ZH_LEAD_RE.sub("", _ZH_WHEN_RE.sub("", ZH_TIME_RE.sub("", phrase)))).strip(" ，,")
    return _ZH_HOW_MUCH_RE.sub(r"\1", act)  # "喝一杯咖啡" → "喝咖啡": the habit is coffee, however many cups


_ZH_HOW_MUCH_RE = re.compile(r"^([\u4e00-\u9fff])(?:[一两二三四五六七八九十几半]|[0-9]+)[杯碗瓶罐份个根支片粒勺口盒包]")


_ZH_HOW_LONG_RE = re.compile(r"(?:大概|大约|至少|差不多)?(?:[0-9]+|[一二两三四五六七八九十几半]+)个?半?(?:小时|钟头|分钟|公里)(?:左右|多)?$")


def habit_key(activity: str) -> str | None:
    """habit:<activity>: "go to the gym" → habit:go_gym, "drink coffee" → habit:coffee, "去健身房" → habit:健身房."""
    slug = slugify(activity, consume=True, limit=4)
    return "habit:" + slug if slug else None


# verbs of a routine said plainly ("plays guitar"); not those that say too little alone ("works
# from home" is where, "uses Linux" or "takes the bus" no pastime)
_EN_ROUTINE_VERBS = EN_ACTIVITY_VERBS - {"work", "use", "take", "wear", "do", "eat", "sleep", "visit", "call", "attend"}
# a routine said plainly, in Chinese: a verb of doing and its object, nothing more ("抽烟", "弹吉他")
_ZH_ROUTINE_RE = re.compile(r"^(?:抽|喝|弹|打|跑|游|练|玩|踢|骑|唱|跳|画|下|拉|吹)[^了过着要想在会能不没的，,]{0,4}$")


def en_routine(pred: str) -> tuple[str | None, str | None]:
    """A routine said plainly ("plays guitar", "drinks green tea"): its slot (habit:<activity>) and
    the words as its value, so "I quit playing guitar" ends it (engram.extract.changes) and saying
    more about it ("plays guitar in a band") replaces it. (None, None) for anything else."""
    words = pred.rstrip(".!").split()
    if not 2 <= len(words) <= 4:
        return None, None
    first = words[0].lower()
    verb = next((v for v in (first[:-1], first[:-2]) if first.endswith("s") and v in _EN_ROUTINE_VERBS), None)
    key = habit_key(en_activity(" ".join([verb, *words[1:]]))) if verb else None
    return (key, slot_value(" ".join(words))) if key else (None, None)


def zh_routine(body: str) -> tuple[str | None, str | None]:
    """`en_routine` in Chinese: "抽烟", "弹吉他" (then "我戒烟了", "我不弹吉他了" end them)."""
    if not _ZH_ROUTINE_RE.match(body):
        return None, None
    key = habit_key(zh_activity(body))
    return (key, slot_value(body)) if key else (None, None)


_EN_AND_ONE_MORE_RE = re.compile(
    r"^(.*?\S)\s+and\s+(?!(?:i|we|my|then|it|they|he|she|you|that|this|so|also)\b)([\w.+#-]+(?:\s+[\w.+#-]+)?)$", re.I)


def habit(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"I usually go running at 6am", "我平时早上六点跑步": a routine without a recurrence."""
    if ctx.lang == "zh":
        return _zh_habit(s, ctx)
    m = _EN_HABIT_RE.match(s)
    if m is None:
        return None
    verb, rest = m.group("verb").lower(), m.group("rest")
    if verb not in EN_ACTIVITY_VERBS and not (verb in _EN_PHRASAL and rest.lower().startswith(" " + _EN_PHRASAL[verb])):
        return None
    if _EN_NEG_RE.search(rest) or EN_TRANSIENT_RE.search(s):
        return None
    also = _EN_AND_ONE_MORE_RE.match(rest.strip())  # "use poetry and ruff": both said, the first keyed
    rest = trim_fillers(cut_clause(rest)).strip()
    rest = " " + rest if rest else ""
    said = m.group("verb") + rest
    act = en_activity(said)
    if also is not None and rest.strip() == also.group(1):
        more = also.group(2).split()
        rest += " and " + " ".join([third_verb(more[0]) if more[0].lower() in EN_ACTIVITY_VERBS else more[0], *more[1:]])
    words = act.lower().split()
    if not words or len(words) > 7 or CONTEXT_WORDS.intersection(words):
        return None
    key = habit_key(act)
    if key is None:
        return None
    freq = WS_RE.sub(" ", m.group("freq").lower())
    when = " ".join(w.group().strip(" ,") for w in _EN_WHEN_RE.finditer(said))
    head = "tends to " + m.group("verb") if freq == "tend to" else f"{freq} {third_verb(m.group('verb'))}"
    content = as_sentence(f"User {head}{en_rest(rest)}")
    return [candidate(ctx, Kind.FACT, content, key, slot_value(f"{freq} {when}"), f"routine ({freq})")]


def _zh_habit(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_HABIT_RE.match(s)
    if m is None:
        return None
    rest = m.group("rest")
    act = zh_activity(rest)
    if not 2 <= len(act) <= 10 or _ZH_ACT_BAD_RE.match(act) or ZH_OBJ_BAD_RE.match(act) or ZH_TRANSIENT_RE.search(s):
        return None
    key = habit_key(act)
    if key is None:
        return None
    times = [t.group() for t in ZH_TIME_RE.finditer(rest)]
    when = "".join(w.group() for w in _ZH_WHEN_RE.finditer(ZH_TIME_RE.sub(" ", rest))) + "".join(times)
    return [candidate(ctx, Kind.FACT, zh_third(s), key, slot_value(m.group("freq") + when), f"习惯（{m.group('freq')}）")]
