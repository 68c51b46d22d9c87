"""Explicit commands: "remember that …", "请记住…", "remind me to …", "提醒我…".

An explicit command always stores something: the rules run on its clause (with
tasks needing no modal verb), and a clause no rule understands is kept as said,
rewritten about the user. Its candidates are marked EXPLICIT, with confidence 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.extract.candidate import Ctx, candidate, entities_of
from engram.extract.dates import EN_DATE_RE, date_suffix, due_datetime, resolve_en
from engram.extract.filters import is_question
from engram.extract.keys import CJK_RE, slugify
from engram.extract.phrases import strip_end
from engram.extract.rewrite import as_sentence, en_objects_named, en_rest, third_person, zh_objects_named, zh_third
from engram.extract.tasks import task
from engram.models import Candidate, Kind, Source
from engram.text import detect_language

Miner = Callable[[str, Ctx], list[Candidate]]

_EXPLICIT_IMPORTANCE = 0.9
_EN_EXPLICIT_RE = re.compile(
    r"""^(?P<polite>(?:can|could|would|will)\s+you\s+(?:please\s+)?)?
    (?:please\s+|pls\s+|plz\s+|kindly\s+)?
    (?:(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\s+you\s+to\s+)?
    (?:always\s+)?
    (?P<verb>remember|memori[sz]e|keep\s+in\s+mind|bear\s+in\s+mind|don't\s+forget|do\s+not\s+forget
      |never\s+forget|make\s+a\s+note|take\s+(?:a\s+)?note|note|save\s+this|store\s+this)
    (?:\s+(?:this|that|it|the\ following)(?=\s*:))?(?:\s+(?:for\s+me|for\s+later|down))?
    (?P<sep>\s*[:\-\u2013\u2014]\s*|\s*,\s*|\s+that\s+|\s+of\s+|\s+)(?P<clause>.+)$""",
    re.I | re.X,
)
_ZH_EXPLICIT_RE = re.compile(
    r"^(?P<polite>你?(?:能不能|可不可以|能|可以|帮忙)(?:帮我)?)?(?:请你?|麻烦你?|你要|你得|一定要|务必|帮我)?(?:帮我)?"
    r"(?P<verb>记住|记下来|记下|记一下|记好|记着|牢记|记得|千万别忘了|别忘了|别忘记|不要忘了|不要忘记|备注一下|记录一下|记录下来)"
    r"(?:了)?[:\s,，]*(?:这个|这件事|这一点|一件事|一下)?[:\s,，]*(?:就是)?(?P<clause>.+)$"
)
_EN_REMIND_RE = re.compile(
    r"^(?P<polite>(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:don't\s+forget\s+to\s+)?"
    r"(?:remind\s+me|(?:don't|do\s+not)\s+let\s+me\s+forget)\s+(?:to\s+|(?P<about>about\s+|of\s+)|(?P<that>that\s+))?"
    r"(?P<clause>.+)$",
    re.I,
)
_ZH_REMIND_RE = re.compile(
    # a time may lead ("明天提醒我…"): it belongs to the task
    r"^(?P<when>(?:明天|后天|今天|今晚|明早|明晚|(?:下个?)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|\d{1,2}月\d{1,2}[日号])(?:早上|上午|中午|下午|晚上)?)?[,，]?"
    r"(?:请|麻烦)?你?(?:记得|到时候?|能不能|可以)?(?:提醒(?:一下)?我(?:一下)?|别让我忘(?:了|记)?|不要让我忘(?:了|记)?)"
    r"[:\s,，]*(?P<clause>.+)$"
)
# "remind me tomorrow to call mom": the time goes after the act ("call mom tomorrow")
_EN_WHEN_FIRST_RE = re.compile(
    r"^(?P<when>(?:tomorrow|today|tonight|(?:on|next|this)\s+[a-z]+|at\s+\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?"
    r"|in\s+(?:a|an|\d+|two|three|four|five|ten)\s+(?:minutes?|hours?|days?|weeks?))"
    r"(?:\s+(?:morning|afternoon|evening|night))?)\s+(?:to|about)\s+(?P<act>.+)$",
    re.I,
)
_NOTE_SEP_RE = re.compile(r"\s*[:\-\u2013\u2014]\s*|\s+that\s+", re.I)
_EN_REJECT_CLAUSE_RE = re.compile(r"^(?:when|how|what|who|where|why|whether|if|the\s+time|me\b|us\b)", re.I)
_POLITE_TAIL_RE = re.compile(r"(?:\s*[?？]|吗|好吗|可以吗|行吗)+$")
_EN_TO_RE = re.compile(r"^to\s+\S", re.I)
_EN_CONTEXT_ONLY_RE = re.compile(r"(?:it|that|this|them|those|these)[.!]?", re.I)
_ZH_PRONOUN_LEAD_RE = re.compile(r"^[我你他她它这那]")
_ZH_IMPERATIVE_VERBS = ("记得", "别忘了", "千万别忘了", "别忘记", "不要忘了", "不要忘记")  # "remember to …"


# a command after a comma starts a sentence of its own: "My mom's birthday is next week, remind
# me to buy her a gift" is a fact, then a reminder
_INNER_COMMAND_RE = re.compile(
    r"[,，;；]\s*(?:and\s+|so\s+|also\s+|那|所以|也)?(?=(?:please\s+|pls\s+)?(?:remind\s+me\s+(?:to|about)"
    r"|(?:don't|do\s+not)\s+let\s+me\s+forget\s+(?:to|about)|remember\s+(?:to|that))\b"
    r"|请?(?:记得|到时候?)?(?:提醒(?:一下)?我(?:一下)?|别让我忘了?|请记住)[^。！!？?\s]{2})",
    re.IGNORECASE,
)


def commands_apart(sentence: str) -> list[str]:
    """`sentence`, with a command said after a comma split off as a sentence of its own."""
    parts = _INNER_COMMAND_RE.split(sentence)
    return [p for p in parts if p.strip()] if len(parts) > 1 else [sentence]


_EN_YOU_WORD_RE = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)
_EN_CALLED_RE = re.compile(r"^(?-i:[A-Z][a-z]+),\s+")
_EN_IMPERATIVE_RE = re.compile(
    r"^(?:just\s+|always\s+|never\s+)?(?:do|be|believe|keep|stay|take|try|go|trust|stop|don't|never|enjoy|have|make|let"
    r"|get|give|hang|push|focus|follow|love)\b", re.I)


def _addressed(sep: str, clause: str) -> bool:
    """"Remember, …" or "Don't forget to …" as encouragement to the listener ("Remember, just do
    it!", "Don't forget, believe in yourself", "don't forget to take breaks when you need to"):
    an order or a "you" after a comma or "to", not "remember that …" (which keeps what follows)."""
    if sep.strip().lower() in (":", "-", "–", "—", "that", "of"):
        return False
    to = clause.lower().startswith("to ")
    return bool(_EN_YOU_WORD_RE.search(clause)) or (sep.strip() == "," and not to and _EN_IMPERATIVE_RE.match(clause) is not None)


def explicit_command(s: str, ctx: Ctx, mine: Miner) -> list[Candidate] | None:
    """"remember …", "请记住…", "remind me to …": None when the sentence is no command.

    `mine` runs the rules on the command's clause (the orchestrator's sentence miner).
    """
    zh = ctx.lang == "zh"
    m = (_ZH_EXPLICIT_RE if zh else _EN_EXPLICIT_RE).match(s)
    remind = False
    if m is None:
        m = (_ZH_REMIND_RE if zh else _EN_REMIND_RE).match(s)
        # "remind me that I parked on level 3" asks to remember a fact, not for a task
        remind = m is not None and not m.groupdict().get("that")
    if m is None:
        return None
    clause = strip_end(m.group("clause"))
    if remind and zh and m.group("when"):
        clause = m.group("when") + clause
    elif remind and (lead := _EN_WHEN_FIRST_RE.match(clause)):
        clause = f"{lead.group('act')} {lead.group('when')}"
    polite = m.groupdict().get("polite")
    if polite:
        clause = _POLITE_TAIL_RE.sub("", clause).strip()
        clause = strip_end(clause)
    if not clause or _EN_REJECT_CLAUSE_RE.match(clause) or _EN_CONTEXT_ONLY_RE.fullmatch(clause):
        return []  # ("remember that.": what "that" is, only what was said before says)
    sep = m.groupdict().get("sep")
    called = _EN_CALLED_RE.match(clause) if sep is not None and not sep.strip() else None
    if not zh and not remind and sep is not None and (
            _addressed(sep, clause) or (called is not None and _addressed(",", clause[called.end():]))):
        return None  # "Remember, just do it!", "Remember Jon, just do it!", "Don't forget to take breaks …": said to them

    if not zh and not remind and m.groupdict().get("verb", "").lower() == "note" and not _NOTE_SEP_RE.fullmatch(m.group("sep")):
        return None  # "note the date" is not a memory command
    if is_question(clause, ctx.lang) and not polite:
        return []
    inner = Ctx(ctx.now, detect_language(clause), relaxed=True)
    other = ctx.memo.get("other") if remind and ctx.memo else None
    if other:  # "My mom's birthday is next week, remind me to buy her a gift"
        clause = zh_objects_named(clause, other) if zh else en_objects_named(clause, other, "my")
    if remind and not zh and _EN_CONTEXT_ONLY_RE.fullmatch(clause):
        return []  # "remind me about it": of what, only the conversation knows
    if remind and m.groupdict().get("about"):  # "remind me about the meeting on Friday": a thing, not an act
        found = _task_from_command(clause, inner, reminder=True, about=True)
    elif remind:
        found = _task_from_command(clause, inner, reminder=True)
    else:
        found = mine(clause, inner)
        if not found:
            found = _fallback(clause, inner, imperative=m.groupdict().get("verb") in _ZH_IMPERATIVE_VERBS)
    return as_explicit(found, m.groupdict().get("verb") or "remind me")


def as_explicit(found: list[Candidate], verb: str) -> list[Candidate]:
    """What the user asked to be remembered: kept as asked (`Source.EXPLICIT`), at full confidence."""
    for c in found:
        if c.source is Source.EXPLICIT:
            continue
        c.source = Source.EXPLICIT
        c.importance = max(c.importance, _EXPLICIT_IMPORTANCE)
        c.confidence = 1.0
        c.reason = f"explicit request ({verb!s}); {c.reason}" if c.reason else f"explicit request ({verb})"
    return found


# "…, please remember that.", "记住这个": what to remember was said before it
_EN_BACK_RE = re.compile(
    r"^(?:(?:please|pls|and|so)\s+)*(?:remember|note|keep\s+in\s+mind|don't\s+forget)\s+(?:that|this|it)"
    r"(?:\s+(?:please|for\s+me|for\s+next\s+time|ok|okay))*[\s.!~]*$",
    re.I,
)
_ZH_KEEP_IT = r"(?:请|麻烦你?|你)?(?:帮我)?(?:记住|记下|记一下|记好|记得)(?:这个|这点|这一点|这件事|了|哦|啊|吧|一下)*[。！!~～\s]*$"
_ZH_BACK_RE = re.compile("^" + _ZH_KEEP_IT)
_ZH_BACK_TAIL_RE = re.compile(r"[，,]\s*" + _ZH_KEEP_IT)  # "我对青霉素过敏，请记住。"


def asked_to_keep(sentence: str) -> tuple[str, bool]:
    """`sentence` without a trailing "，请记住" and whether it had one ("我对青霉素过敏，请记住。")."""
    m = _ZH_BACK_TAIL_RE.search(sentence)
    return (sentence[: m.start()], True) if m and m.start() > 0 else (sentence, False)


def refers_back(sentence: str) -> bool:
    """A sentence that asks to remember what the user just said ("please remember that")."""
    said = sentence.strip()
    return bool(_ZH_BACK_RE.match(said) if CJK_RE.search(said) else _EN_BACK_RE.match(said))


def _fallback(clause: str, ctx: Ctx, *, imperative: bool = False) -> list[Candidate]:
    """An explicit clause no rule understood: keep it, rewritten about the user."""
    if ctx.lang == "en" and _EN_TO_RE.match(clause):
        return _task_from_command(clause[3:].strip(), ctx)
    if ctx.lang == "zh" and imperative and not _ZH_PRONOUN_LEAD_RE.match(clause):
        return _task_from_command(clause, ctx)
    content = third_person(clause, ctx.lang)
    return [candidate(ctx, Kind.FACT, content, None, None, "no rule matched; stored as said")]


def _task_from_command(clause: str, ctx: Ctx, *, reminder: bool = False, about: bool = False) -> list[Candidate]:
    """"remember to call mom tomorrow" / "提醒我明天交报告": a task with an optional date
    (`about`: the clause names a thing, "the meeting on Friday", not an act)."""
    zh = ctx.lang == "zh"
    if about:
        dm = EN_DATE_RE.search(clause)
        when = resolve_en(dm, ctx.now.date()) if dm else (None, None)
        due = due_datetime(*when, ctx.now, dm) if dm else None
        content = as_sentence("User wants to be reminded about " + en_rest(strip_end(clause)) + date_suffix(due, when[1], False))
        return [candidate(ctx, Kind.TASK, content, "task:" + slugify(clause, consume=True), None, "reminder requested",
                          entities=entities_of(clause), due_at=due)]
    found = task(("我要" + clause) if zh and not clause.startswith("我") else
                 clause if zh else "I need to " + clause, ctx)
    if found:
        if reminder:
            for c in found:
                c.reason = "reminder requested; " + c.reason
        return found
    act = strip_end(clause)
    if not act:
        return []
    if zh:
        content = zh_third(act if act.startswith("我") else "需要" + act, subject=True)
    else:
        content = as_sentence(("User wants to be reminded to " if reminder else "User needs to ") + en_rest(act))
    return [candidate(ctx, Kind.TASK, content, "task:" + slugify(act, consume=True), None,
                      "reminder requested" if reminder else "task stated in a command",
                      entities=entities_of(act))]
