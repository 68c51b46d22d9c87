"""What the user asks of the assistant: a role, a tone, standing instructions, a nickname.

"act as my editor" → identity:role; "talk to me like a pirate" → identity:tone;
"always answer in Chinese" / "以后都用中文回答" → preference:answer_language;
"never use emojis" → preference:<instruction> (polarity -1); "call me Bob" /
"叫我小王" → preference:nickname.
"""

from __future__ import annotations

import re

from engram.extract.candidate import Ctx, candidate, entities_of
from engram.extract.filters import en_hedged
from engram.extract.keys import WS_RE, slot_value, slugify
from engram.extract.names import valid_en_name, valid_zh_name
from engram.extract.phrases import PRONOUN_START, cut_clause, pronoun_led
from engram.extract.rewrite import article, lcfirst, third_verb, ucfirst, zh_third
from engram.models import Candidate, Kind

# "from now on", "by default"…: marks an instruction as standing, not a one-off
_EN_STANDING = (
    r"(?:from\s+now\s+on|going\s+forward|for\s+this\s+conversation|from\s+here\s+on"
    r"|in\s+(?:the\s+)?future|by\s+default)"
)
_WANT_YOU_TO = r"i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+would\s+like\s+you\s+to|i\s+need\s+you\s+to"
_EN_ID_RE = re.compile(
    rf"""^(?:please\s+)?(?:(?P<mark>{_EN_STANDING})\s*,?\s*)?(?:please\s+)?
    (?:(?P<want>{_WANT_YOU_TO})\s+)?
    (?:please\s+)?(?:always\s+)?
    (?P<verb>act\s+as|act\s+like|serve\s+as|play\s+the\s+role\s+of|take\s+on\s+the\s+role\s+of|pretend\s+to\s+be
      |pretend\s+you(?:'re|\s+are)|work\s+as|be|you\s+are\s+now|you're\s+now|you\s+are|you're
      |you\s+will\s+be|you'll\s+be|you\s+are\s+going\s+to\s+be|become)
    \s+(?P<det>my|a|an|the|our)\s+(?P<role>.+)$""",
    re.I | re.X,
)
_EN_TONE_RE = re.compile(
    r"^(?:please\s+)?(?:always\s+)?(?P<verb>talk|speak|write|respond|reply|answer|chat)\s+"
    r"(?P<to>to\s+me\s+|with\s+me\s+)?(?P<how>like|as\s+if\s+you\s+were|as\s+though\s+you\s+were|as)\s+"
    r"(?P<det>my\s+|a\s+|an\s+|the\s+)?(?P<role>.+)$",
    re.I,
)
_ROLE_HEADS = frozenset(
    """assistant editor tutor teacher coach expert translator reviewer consultant advisor adviser
    mentor writer critic coder programmer engineer developer analyst therapist proofreader
    interviewer examiner partner researcher planner secretary guide trainer instructor professor
    copywriter marketer designer architect lawyer doctor accountant counselor counsellor chef
    nutritionist strategist manager pm butler concierge sparring""".split()
)
_COMPLIMENTS = frozenset(
    """hero lifesaver savior saviour favorite favourite best genius angel champion star legend man
    guy buddy pal bro dude love darling sweetheart baby everything world friend idiot fool""".split()
)
_ROLE_TAIL_RE = re.compile(
    rf"(?:\s+(?:for\s+me|please|today|here|now|for\s+now|{_EN_STANDING}|for\s+the\s+rest\s+of\s+(?:this|our)\s+conversation))+$",
    re.I,
)
_ZH_ID_RE = re.compile(
    r"^(?:请|麻烦)?你?(?P<mark>以后|今后|从现在开始|从现在起|接下来|现在|之后)?[,，]?(?:请)?你?(?:就)?"
    r"(?P<verb>作为|当|做|扮演|担任|充当|成为)(?P<my>我的)?(?P<role>.+)$"
)
_ZH_YOU_ARE_RE = re.compile(
    r"^(?P<mark>(?:以后|今后|从现在开始|从现在起|接下来|现在)[,，]?)?你(?:就)?(?P<mark2>现在|以后|从现在开始)?(?:就)?是"
    r"(?P<my>我的)?(?P<role>.+)$"
)
_ZH_ROLE_CLEAN_RE = re.compile(r"^(?:一个|一名|一位|一|个|名|位)|(?:吧|好吗|了|就好|就行|可以吗)$")
_ZH_COMPLIMENTS = frozenset("好人 天才 最棒的 最好的 朋友 好朋友 最好的朋友 宝贝 救星 英雄 谁 骗子 笨蛋".split())


def identity(s: str, ctx: Ctx) -> list[Candidate] | None:
    """A role ("act as my editor", "你现在是我的英语老师") or a tone ("talk like a pirate")."""
    if ctx.lang == "zh":
        return _zh_identity(s, ctx)
    m = _EN_ID_RE.match(s)
    if m:
        verb = WS_RE.sub(" ", m.group("verb").lower())
        det = m.group("det").lower()
        role = _ROLE_TAIL_RE.sub("", cut_clause(m.group("role"))).strip()
        words = role.lower().split()
        if not words or len(words) > 6 or en_hedged(role) or words[0] in PRONOUN_START:
            return None
        head = re.sub(r"[^a-z]", "", words[-1])
        if head in _COMPLIMENTS:
            return None
        weak = verb in ("be", "you are", "you're", "you will be", "you'll be", "you are going to be",
                        "become", "you are now", "you're now")
        if weak and det != "my" and not (m.group("mark") or m.group("want")) and head not in _ROLE_HEADS:
            return None
        phrase = ("the " if det == "the" else article(role) + " ") + role
        content = f"User wants the assistant to act as {phrase}."
        return [candidate(ctx, Kind.IDENTITY, content, "identity:role", slot_value(role),
                          f"identity instruction ({verb} …)", entities=entities_of(role))]
    m = _EN_TONE_RE.match(s)
    if m:
        role = _ROLE_TAIL_RE.sub("", cut_clause(m.group("role"))).strip()
        det = (m.group("det") or "").strip().lower()
        how = WS_RE.sub(" ", m.group("how").lower())
        if not role or (not det and how != "like") or len(role.split()) > 6:
            return None
        if not det and not role[:1].isupper():
            return None  # "answer like this": a one-off, not a persona
        if pronoun_led(role):
            return None
        verb = m.group("verb").lower()
        to = " to them" if m.group("to") and "to" in m.group("to").lower() else (" with them" if m.group("to") else "")
        det_out = "" if not det else ("a" if det == "my" else det) + " "
        if det in ("a", "an", "my"):
            det_out = article(role) + " "
        content = f"User wants the assistant to {verb}{to} {how} {det_out}{role}."
        return [candidate(ctx, Kind.IDENTITY, content, "identity:tone", slot_value(role),
                          f"identity instruction ({verb} {how} …)", entities=entities_of(role))]
    return None


def _zh_identity(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_ID_RE.match(s)
    kind = "verb"
    if m is None:
        m = _ZH_YOU_ARE_RE.match(s)
        kind = "you_are"
    if m is None:
        return None
    role = _ZH_ROLE_CLEAN_RE.sub("", _ZH_ROLE_CLEAN_RE.sub("", m.group("role").strip())).strip()
    my = bool(m.group("my"))
    if not role or len(role) > 16 or role in _ZH_COMPLIMENTS or re.match(r"^[我你他她它，,]", role):
        return None
    if kind == "verb":
        verb = m.group("verb")
        if verb not in ("扮演", "充当") and not my:
            return None
    elif not (my or m.group("mark") or m.group("mark2")):
        return None
    content = ("用户希望助手作为其" if my else "用户希望助手扮演") + role
    return [candidate(ctx, Kind.IDENTITY, content, "identity:role", slot_value(role), "身份指令",
                      entities=entities_of(role))]


_LANGS = {"chinese": "zh", "mandarin": "zh", "english": "en", "japanese": "ja", "korean": "ko",
          "french": "fr", "german": "de", "spanish": "es", "italian": "it", "portuguese": "pt",
          "russian": "ru", "中文": "zh", "汉语": "zh", "普通话": "zh", "英文": "en", "英语": "en",
          "日语": "ja", "日文": "ja", "韩语": "ko", "法语": "fr", "德语": "de", "西班牙语": "es"}
_YOUR_RE = re.compile(r"\byour\b", re.I)
_EN_LANG_RE = re.compile(
    r"^(?:(?:answer|reply|respond|write|speak|talk|communicate|chat)(?:\s+(?:to\s+|with\s+)?(?:me|them))?"
    rf"(?:\s+only)?\s+in|use)\s+(?P<lang>{'|'.join(k for k in _LANGS if k.isascii())})\b",
    re.I,
)
_ZH_LANG_RE = re.compile(
    rf"(?:用|使用|以)(?P<lang>{'|'.join(k for k in _LANGS if not k.isascii())})"
    r"(?:来)?(?:回答|回复|交流|沟通|写|说|聊|跟我|和我|对话)"
)
_EN_VERBS = frozenset(
    """answer reply respond write use speak talk keep be give format include avoid add show explain
    summarise summarize start end sign stop refer address translate provide list put make send
    ask check cite tell greet mention offer suggest number label return output structure break
    limit wrap quote spell double-check proofread correct point call respond remind""".split()
)
_EN_INSTR_RE = re.compile(
    rf"""^(?:please\s+)?(?:(?P<mark>{_EN_STANDING})\s*,?\s*)?(?:please\s+)?
    (?:(?:{_WANT_YOU_TO})\s+)?
    (?P<adv>always|never|don't\s+ever|do\s+not\s+ever|don't|do\s+not)?\s*(?P<body>.+?)
    (?:(?:\s*,\s*|\s*)(?P<mark2>{_EN_STANDING}|every\s+time|each\s+time|please))*$""",
    re.I | re.X,
)
_WHEN_YOU = r"when\s+you\s+(answer|reply|respond|write)"  # → "when it answers"
_WHEN_YOU_RE = re.compile(rf"\b{_WHEN_YOU}\b", re.I)
# "you" left inside the order ("type hints in code you give me"): the assistant, as "it"
_YOU_VERB_RE = re.compile(r"\byou\s+(?P<v>[a-z]+)\b", re.I)
_YOU_AUX = {"are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't", "can": "can", "could": "could",
            "will": "will", "would": "would", "should": "should", "might": "might", "must": "must"}
# an order about every answer, with no "from now on": "Don't use emojis in your answers"
_EN_ABOUT_ANSWERS_RE = re.compile(
    rf"\b(?:(?:in|keep)\s+(?:your\s+)?(?:answers|replies|responses|messages)|{_WHEN_YOU})\b", re.I
)
# a standing instruction asked as a question: "Can you keep answers short?", "你以后能用中文回答吗？"
_EN_ASKED_RE = re.compile(
    r"^(?:(?:hey|ok(?:ay)?|also|and),?\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(?P<rest>[a-z][^?]+?)"
    r"(?:,?\s+please)?\s*\?+$", re.I)
_ZH_ASKED_RE = re.compile(
    r"^(?:请问)?你?(?P<m1>以后|今后|从现在开始|从现在起|之后)?(?:能不能|能|可以|可不可以)(?P<m2>以后|今后|从现在开始|从现在起|之后)?"
    r"(?P<rest>[^？?]{2,30}?)[吗呢]?[？?]+$")
# "Never give up!", "Always keep going": encouragement, not how to answer
_EN_CHEER_RE = re.compile(
    r"^(?:give\s+up|stop\s+(?:believing|dreaming|trying|learning|growing|fighting|smiling|being\s+you)"
    r"|keep\s+(?:going|trying|pushing|smiling|dreaming|believing|shining|fighting|it\s+up|at\s+it)|be\s+(?:yourself|afraid|scared))\b",
    re.I)
_EN_STANDING_HINTS = ("always", "ever", "from now on", "going forward", "future", "by default", "every time",
                      "each time", "for this conversation", "from here on")
_ZH_INSTR_RE = re.compile(
    r"^(?:请|麻烦)?你?(?P<mark>以后|今后|从现在开始|从现在起|之后|往后|接下来|总是|始终|永远|一律|每次都|每次|别再|不要再)"
    r"[,，]?(?:请)?你?(?P<body>.+)$"
)
# what makes 以后/每次/总是 … an instruction: the assistant addressed, or what it does asked for
_ZH_ADDRESSED_RE = re.compile(
    r"你|您|请|麻烦|回答|回复|答复|说话|称呼|叫我|提醒|告诉|给我|帮我|总结|翻译|输出|列出|格式|简短|简洁|详细|解释|举例|代码"
    r"|表情|[Ee]moji|字数|篇幅|英文|中文"
    r"|用(?:简体|繁体|[Mm]arkdown|表格|列表|要点|.{0,4}?(?:回答|回复|语言|格式|写))")
_ZH_I_GOES_ON_RE = re.compile(r"[，,]\s*我")  # a clause of the user's own after the first
_ZH_NEG_RE = re.compile(r"^(?:都|也|一律|永远|再)*(?:不要|别|不用|不准|禁止|不许)")

_EN_NICK_RE = re.compile(
    r"^(?:please\s+)?(?:just\s+|you\s+can\s+(?:just\s+)?|feel\s+free\s+to\s+|always\s+)?"
    rf"call\s+me\s+(?P<name>.+?)(?:\s*,?\s*(?:please|{_EN_STANDING}|instead))*$",
    re.I,
)
_ZH_NICK_RE = re.compile(
    r"^(?:请|麻烦)?你?(?:可以|就|以后|今后|以后就|从现在开始)?(?:请)?(?:就|都)?叫我(?P<name>.+?)(?:就好|就行|就可以|吧)?$"
)


def nickname(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"call me Bob", "叫我小王就好": how the user wants to be addressed."""
    if ctx.lang == "zh":
        m = _ZH_NICK_RE.match(s)
        if m is None:
            return None
        name = m.group("name").strip()
        if not valid_zh_name(name):
            return None
        return [candidate(ctx, Kind.PREFERENCE, f"用户希望被称呼为{name}", "preference:nickname",
                          slot_value(name), "称呼偏好", polarity=1, entities=[name])]
    m = _EN_NICK_RE.match(s)
    if m is None:
        return None
    name = cut_clause(m.group("name"))
    if not valid_en_name(name):
        return None
    return [candidate(ctx, Kind.PREFERENCE, f"User wants to be called {name}.", "preference:nickname",
                      slot_value(name), "how to address the user", polarity=1, entities=[name])]


def asked_instruction(s: str, ctx: Ctx) -> list[Candidate] | None:
    """A standing instruction asked politely, as a question ("Can you keep answers short?",
    "Could you reply in Spanish from now on?", "你以后能用中文回答吗？"): read as the instruction;
    None for any other question (a one-off "Can you answer in Chinese?" asks for this answer)."""
    if ctx.lang == "zh":
        m = _ZH_ASKED_RE.match(s)
        mark = m and (m.group("m1") or m.group("m2"))
        return instruction(mark + m.group("rest"), ctx) if m and mark else None
    m = _EN_ASKED_RE.match(s)
    return instruction("Please " + m.group("rest"), ctx) if m else None


def instruction(s: str, ctx: Ctx) -> list[Candidate] | None:
    """Standing instructions ("always answer in Chinese", "以后都用中文回答") are preferences."""
    if ctx.lang == "zh":
        m = _ZH_INSTR_RE.match(s)
        if m is None:
            return None
        body = m.group("body").strip()
        if len(body) < 3 or re.match(r"^[我他她它]", body) or len(body) > 30:
            return None
        if not _ZH_ADDRESSED_RE.search(s) or _ZH_I_GOES_ON_RE.search(body):
            return None  # "每次考试都考砸", "总是下雨", "每次听课，我都好困": the user's life, not an order
        body = body.replace("请", "") if len(body) > 3 else body  # "以后回答请用英文"
        neg = bool(_ZH_NEG_RE.match(body)) or (m.group("mark") == "永远" and "不" in body[:3]) \
            or m.group("mark") in ("别再", "不要再")
        content = "用户希望助手" + m.group("mark") + zh_third(body).replace("用户", "其")
        lm = _ZH_LANG_RE.search(body)
        if lm:
            return [candidate(ctx, Kind.PREFERENCE, content, "preference:answer_language", _LANGS[lm.group("lang")],
                              "回答语言偏好", polarity=-1 if neg else 1)]
        core = _ZH_NEG_RE.sub("", body)
        core = re.sub(r"^(?:都|也|一律|再|请|要|用)+", "", core).rstrip("了啦吧呢") or body
        return [candidate(ctx, Kind.PREFERENCE, content, "preference:" + slugify(core), "never" if neg else "always",
                          "长期指令", polarity=-1 if neg else 1)]
    low = s.lower()
    about_answers = bool(_EN_ABOUT_ANSWERS_RE.search(s))
    if not about_answers and not any(w in low for w in _EN_STANDING_HINTS):
        return None
    m = _EN_INSTR_RE.match(s)
    if m is None:
        return None
    adv = WS_RE.sub(" ", (m.group("adv") or "").lower())
    marked = about_answers or bool(m.group("mark") or (m.group("mark2") and m.group("mark2").lower() != "please"))
    if not (marked or adv in ("always", "never", "don't ever", "do not ever")):
        return None
    body = m.group("body").strip()
    first = body.split(None, 1)[0].lower() if body else ""
    if first not in _EN_VERBS or en_hedged(body) or _EN_CHEER_RE.match(body):
        return None
    neg = adv.startswith(("never", "don't", "do not"))
    rest = _WHEN_YOU_RE.sub(lambda w: "when it " + third_verb(w.group(1)), _YOUR_RE.sub("its", lcfirst(body)))
    rest = _YOU_VERB_RE.sub(lambda w: "it " + _YOU_AUX.get(w.group("v").lower(), third_verb(w.group("v"))), rest)
    how = "" if rest.lower().startswith(("stop ", "quit ")) else ("never " if neg else "always ")  # ("to stop using emojis")
    content = f"User wants the assistant to {how}{rest}."
    lm = _EN_LANG_RE.match(body)
    if lm:
        return [candidate(ctx, Kind.PREFERENCE, content, "preference:answer_language",
                          _LANGS[lm.group("lang").lower()], "standing instruction: answer language",
                          polarity=-1 if neg else 1, entities=[ucfirst(lm.group("lang").lower())])]
    return [candidate(ctx, Kind.PREFERENCE, content, "preference:" + slugify(body), "never" if neg else "always",
                      "standing instruction", polarity=-1 if neg else 1)]
