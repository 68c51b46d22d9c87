"""Likes, dislikes and favourites: preference:<object> and preference:favourite_<x>.

"I love coffee" / "我不喜欢香菜" → preference:coffee / preference:香菜 with
polarity +1/-1; "my favourite colour is blue" / "我最喜欢的颜色是蓝色" →
preference:favourite_colour.
"""

from __future__ import annotations

import re

from engram.extract.candidate import Ctx, candidate, entities_of
from engram.extract.clauses import joined_detail
from engram.extract.filters import EN_TRANSIENT_RE, ZH_TRANSIENT_RE
from engram.extract.keys import WS_RE, slot_value, slugify
from engram.extract.phrases import (
    CONTEXT_WORDS,
    EN_ADV,
    ZH_CUT_RE,
    ZH_OBJ_BAD_RE,
    pronoun_led,
    trim_fillers,
    zh_object,
)
from engram.extract.rewrite import en_rest, en_third, third_verb, zh_third
from engram.models import Candidate, Kind

_EN_FAV_RE = re.compile(
    r"^(?:(?:these\s+days|nowadays|now|lately|currently|at\s+the\s+moment)\s*,?\s+)?"  # "These days my favourite …"
    r"(?P<my>my)\s+(?:(?:all[- ]time|absolute|very|current|personal|new)\s+)?(?P<fav>favou?rite|fave|fav)\s+"
    r"(?P<x>[a-z][a-z -]{0,30}?)\s+(?:is|are|'s|has\s+to\s+be)\s+(?P<y>.+)$",
    re.I,
)
_FAV_CUT_RE = re.compile(  # (a dash that sets off a comment: "I love cooking - it relaxes me")
    r"\s*(?:[;:(]|(?<=\w)[-–—]+\s|\s[-–—]+\s|\s+(?:but|because|since|although|though|while|which|who|so(?!\s+(?:much|many|far)\b))\b)", re.I)
_EN_FAV2_RE = re.compile(
    r"^(?P<y>.+?)\s+(?:is|are)\s+my\s+(?:all[- ]time\s+)?(?:favou?rite|fave)\s+(?P<x>[a-z][a-z -]{0,30})$", re.I
)
_EN_PREF_RE = re.compile(
    rf"^i\s+(?P<neg>don't|do\s+not|dont)?\s*{EN_ADV}"
    r"(?P<verb>like|love|enjoy|adore|prefer|hate|dislike|detest|loathe|despise|can't\s+stand|cannot\s+stand"
    r"|can\s+not\s+stand|can't\s+bear|care\s+for)\s+(?P<obj>.+)$",
    re.I,
)
_EN_PREF2_RE = re.compile(
    r"^i(?:'m|\s+am)\s+(?P<neg>not\s+)?(?:(?:really|so|totally|also|even|that|very|quite|super|such)\s+)*"
    r"(?P<verb>(?:a\s+)?(?:(?:big|huge|massive|real|great)\s+)?fan\s+of|into|fond\s+of|obsessed\s+with"
    r"|crazy\s+about|passionate\s+about|keen\s+on)\s+(?P<obj>.+)$",
    re.I,
)
_EN_STRONG_RE = re.compile(r"passionate\s+about|obsessed\s+with|crazy\s+about|keen\s+on", re.I)
_EN_NEG_VERBS = frozenset(("hate", "dislike", "detest", "loathe", "despise", "can't stand", "cannot stand",
                           "can not stand", "can't bear"))
_EN_PREFER_SPLIT_RE = re.compile(r"\s+(?:over|rather\s+than|instead\s+of|more\s+than|to)\s+", re.I)
_FAV_CANON = {"color": "colour", "colors": "colour", "colours": "colour", "颜色": "colour",
              "食物": "food", "菜": "food", "电影": "movie", "书": "book", "歌": "song", "歌曲": "song",
              "运动": "sport", "动物": "animal", "城市": "city", "饮料": "drink", "水果": "fruit",
              "乐队": "band", "歌手": "singer", "季节": "season", "游戏": "game", "作家": "author",
              "演员": "actor", "花": "flower", "国家": "country", "编程语言": "programming_language",
              "语言": "language", "电视剧": "tv_show", "节目": "show", "咖啡": "coffee", "茶": "tea",
              "movies": "movie", "films": "movie", "film": "movie"}
_ZH_FAV_RE = re.compile(r"^我(?P<now>现在|目前|最近|如今|这些年)?(?:最喜欢|最爱|最喜爱|最中意)的(?P<x>.{1,8}?)(?:是|叫|为)(?P<y>.+)$")
_ZH_PREF_RE = re.compile(
    r"^我(?P<adv>(?:也|还|还是|一直|向来|从来|特别|非常|很|超级|超|最|比较|挺|蛮|真的|真|更|就|本来就|都|一点都|一点也|实在|确实|完全|根本)*)"
    r"(?P<verb>更喜欢|比较喜欢|喜欢|喜爱|热爱|爱好|爱|偏好|偏爱|钟爱|迷恋|讨厌|厌恶|反感|受不了|不喜欢|不爱|不太喜欢|不怎么喜欢"
    r"|恨|忍不了|不能接受|不吃|不喝|希望)(?P<obj>.+)$"
)
_ZH_NEG_VERBS = frozenset("讨厌 厌恶 反感 受不了 不喜欢 不爱 不太喜欢 不怎么喜欢 恨 忍不了 不能接受 不吃 不喝".split())
_ZH_PREFER_SPLIT_RE = re.compile(r"(?:而不是|胜过|多过|多于|超过|比起)")


def _cut_list(phrase: str) -> str:
    """Like `cut_clause`, but keeps short lists: "cats and dogs", "blue, green and red"."""
    phrase = _FAV_CUT_RE.split(phrase, maxsplit=1)[0].strip()
    if "," in phrase:
        parts = [p.strip() for p in phrase.split(",")]
        if not (" and " in parts[-1] or parts[-1].startswith(("and ", "or "))) or any(
            len(p.split()) > 3 for p in parts
        ):
            phrase = parts[0]
    low = phrase.lower()
    i = _first_and(low)
    if i is not None and len(phrase[i + 5:].split()) > 3:
        phrase = phrase[:i]
    return phrase.strip()


# pairs that name one thing: their "and" joins no list ("playing hide and seek with my friends")
_EN_BINOMIAL_RE = re.compile(
    r"\b(?:hide and seek|rock and roll|fish and chips|mac and cheese|salt and pepper|arts and crafts|"
    r"trial and error|pros and cons|bread and butter|peanut butter and jelly|dungeons and dragons|"
    r"truth or dare|cops and robbers|snakes and ladders|rhythm and blues|drum and bass|q and a)\b"
)


def _first_and(low: str) -> int | None:
    """Where the first " and " of `low` that joins a list starts (none inside "hide and seek")."""
    inside = [m.span() for m in _EN_BINOMIAL_RE.finditer(low)]
    return next((m.start() for m in re.finditer(r" and ", low)
                 if not any(a <= m.start() < b for a, b in inside)), None)


def favourite(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"my favourite colour is blue", "blue is my favourite colour", "我最喜欢的颜色是蓝色"."""
    if ctx.lang == "zh":
        m = _ZH_FAV_RE.match(s)
        if m is None:
            return None
        x, y = m.group("x"), zh_object(m.group("y"))
        if not y or len(y) > 20 or ZH_OBJ_BAD_RE.match(y):
            return None
        key = "preference:favourite_" + (_FAV_CANON.get(x) or slugify(x))
        said = "我" + s[m.end("now"):] if m.group("now") else s  # "我现在最喜欢的…": now is when it was said
        return [candidate(ctx, Kind.PREFERENCE, zh_third(said), key, slot_value(y), "最喜欢的事物", polarity=1,
                          entities=entities_of(y))]
    m = _EN_FAV_RE.match(s)
    if m is None:
        m = _EN_FAV2_RE.match(s)
        if m is None:
            return None
        y = m.group("y").strip()
        content = f"User's favourite {m.group('x').strip()} is {y}."
    else:
        y = trim_fillers(_cut_list(m.group("y"))).strip()
        content = None
    x = m.group("x").strip().lower()
    if not y or pronoun_led(y) or len(y.split()) > 8:
        return None
    canon = _FAV_CANON.get(x) or slugify(x)
    if content is None:
        content = en_third(s[m.start("my") : m.start("y")] + y)  # (without "These days")
    return [candidate(ctx, Kind.PREFERENCE, content, "preference:favourite_" + canon, slot_value(y),
                      f"favourite {x}", polarity=1, entities=entities_of(y))]


def preference(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"I love coffee", "I'm not a fan of horror movies", "我讨厌香菜": a like or dislike."""
    if ctx.lang == "zh":
        return _zh_preference(s, ctx)
    none_then = _EN_NONE_THEN_RE.match(s)
    if none_then:  # "No meetings on Fridays please": what the user wants kept out of a time
        what, when = none_then.group("what").lower(), none_then.group("when")
        return [candidate(ctx, Kind.PREFERENCE, f"User wants no {what} {when}.", "preference:no_" + slugify(f"{what} {when}"),
                          "dislike", f"no {what} {when}", polarity=-1)]
    m = _EN_PREF_RE.match(s)
    if m:
        verb = WS_RE.sub(" ", m.group("verb").lower())
        neg_verb = verb in _EN_NEG_VERBS
        if m.group("neg"):
            if neg_verb or verb == "prefer":
                return None  # "I don't hate it": too subtle to file
            polarity = -1
        elif verb == "care for":
            return None
        else:
            polarity = -1 if neg_verb else 1
    else:
        m = _EN_PREF2_RE.match(s)
        if m is None:
            return None
        strong = _EN_STRONG_RE.search(m.group("verb"))  # "passionate about", "keen on": said as said
        verb = WS_RE.sub(" ", strong.group().lower()) if strong and not m.group("neg") else "like"
        polarity = -1 if m.group("neg") else 1
    when = _EN_WHEN_RE.match(m.group("obj"))
    if when is not None and verb in ("like", "love", "enjoy", "hate", "dislike", "can't stand") and not m.group("neg"):
        return _when_it_happens(when.group("what"), polarity, ctx)  # "I hate when people are late"
    obj = trim_fillers(_cut_list(m.group("obj"))).strip()
    words = obj.split()
    if not words or len(words) > 8 or pronoun_led(obj):
        return None
    lowered = obj.lower()
    if CONTEXT_WORDS.intersection(lowered.split()) or EN_TRANSIENT_RE.search(s):
        return None
    key_obj = obj
    if verb == "prefer" and not lowered.startswith("to "):
        key_obj = _EN_PREFER_SPLIT_RE.split(obj, 1)[0]
    slug = slugify(key_obj, consume=True)
    if not slug:
        return None
    head, comma, tail = m.group("obj").partition(",")
    detail = joined_detail(trim_fillers(tail), "en") if comma and trim_fillers(head).strip() == obj else None
    said = obj + (detail or "")  # "writing reports in Markdown, with charts attached"
    if polarity < 0:
        content = f"User dislikes {said}."
    elif verb in ("like", "love", "enjoy", "adore", "prefer"):
        content = f"User {third_verb(verb)} {said}."
    elif _EN_STRONG_RE.fullmatch(verb):
        content = f"User is {verb} {said}."
    else:
        content = f"User likes {said}."
    return [candidate(ctx, Kind.PREFERENCE, content, "preference:" + slug, "like" if polarity > 0 else "dislike",
                      f"{'likes' if polarity > 0 else 'dislikes'} {key_obj}", polarity=polarity,
                      entities=entities_of(key_obj))]


_EN_NONE_THEN_RE = re.compile(
    r"^no\s+(?P<what>meetings?|calls?|emails?|messages?|work|alcohol|caffeine|coffee|screens?|sugar|meat|phone\s+calls?)"
    r"\s+(?P<when>(?:on|before|after|during)\s+[\w: ]{2,20}?|at\s+night|in\s+the\s+(?:morning|evening)s?)"
    r"(?:\s*,?\s*(?:please|pls|thanks))?(?:\s*[,;]\s*(?:that's|it's|this is)\s.{1,60})?$",  # (", that's my deep work day")
    re.I,
)
_EN_WHEN_RE = re.compile(r"^(?:it\s+)?when\s+(?P<what>(?:people|someone|others|my\s+\w+|\w+)\s+.{3,60})$", re.I)


def _when_it_happens(what: str, polarity: int, ctx: Ctx) -> list[Candidate] | None:
    """"I hate when people are late" → "User hates it when people are late." (a pet peeve, or a
    joy), keyed by what happens."""
    what = trim_fillers(what).strip(" .!")
    if CONTEXT_WORDS.intersection(what.lower().split()) or len(what.split()) > 10:
        return None
    slug = slugify(what, limit=4)
    if not slug:
        return None
    said = en_rest(what)
    content = f"User {'hates' if polarity < 0 else 'loves'} it when {said}."
    return [candidate(ctx, Kind.PREFERENCE, content, "preference:when_" + slug, "like" if polarity > 0 else "dislike",
                      f"{'likes' if polarity > 0 else 'dislikes'} it when {what}", polarity=polarity)]


def _zh_preference(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_PREF_RE.match(s)
    if m is None:
        return None
    verb, adv = m.group("verb"), m.group("adv")
    obj = zh_object(ZH_CUT_RE.split(m.group("obj"), 1)[0])
    if not obj or len(obj) > 20 or ZH_OBJ_BAD_RE.match(obj) or ZH_TRANSIENT_RE.search(s):
        return None
    negative = verb in _ZH_NEG_VERBS
    if verb == "希望" and (re.match(r"^[你您]", obj) or len(obj) > 15):
        return None  # a request to the assistant, unless standing (handled as an instruction)
    if negative and "不" in adv:
        return None
    key_obj = _ZH_PREFER_SPLIT_RE.split(obj, 1)[0] or obj
    slug = slugify(key_obj, consume=True)
    if not slug:
        return None
    polarity = -1 if negative else 1
    content = zh_third("我" + adv + verb + obj)
    return [candidate(ctx, Kind.PREFERENCE, content, "preference:" + slug, "dislike" if negative else "like",
                      f"{verb}{key_obj}", polarity=polarity, entities=entities_of(key_obj))]


# "Please don't suggest black, I hate it.": what "it" is, the request before names
_EN_REQUEST_THEN_FEELING_RE = re.compile(
    r"^(?P<ask>(?:please\s+)?(?:(?:don't|do\s+not|never)\s+)?(?:suggest|recommend|use|add)\s+"
    r"(?P<np>(?!(?:it|that|this|them|me|anything|something|more|any)\b)[\w.+#-]+(?:\s+[\w.+#-]+){0,2}?))"
    r"\s*[,;]\s*(?:because\s+)?i\s+(?P<feel>(?:really\s+|absolutely\s+|just\s+)?(?:hate|love|like|dislike|adore|can't\s+stand))"
    r"\s+(?:it|them|that)\b(?P<rest>[^,;]*)$",
    re.I,
)


def request_then_feeling(sentence: str) -> list[str]:
    """"Please don't suggest black, I hate it." as "Please don't suggest black." / "I hate black.",
    for the rules to read the feeling about what the request names; any other sentence as it is."""
    m = _EN_REQUEST_THEN_FEELING_RE.match(sentence.strip())
    if m is None:
        return [sentence]
    return [m.group("ask") + ".", f"I {m.group('feel')} {m.group('np')}{m.group('rest')}"]
