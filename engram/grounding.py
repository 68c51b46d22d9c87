"""Is what an LLM proposes supported by what the user said? Pure checks, no I/O.

Small local models copy the prompt's example, answer in the first person, add
commentary ("This information is consistent with…") or turn a statement into
a question. Whatever they propose is therefore checked against its source
before it is stored:

- `proposal_problem`: an extracted memory must be about the user in the third
  person, no question, and grounded: most of its content words, and every
  number and name in it, appear in what the user said (or confirmed) in the
  window the model was given (or, failing the words, it names a name or number the
  user said: "Acme and I parted ways" grounds "User no longer works at Acme").
  An assistant's sentence is context, never a memory.
- `judgement_problem`: a reconcile UPDATE's merged text must be a statement
  "User …"/"用户…", grounded in the new message, the candidate or the old
  memory, and no longer than the candidate and the old memory together.

Each returns None when the text may be stored, else the reason it may not
(the caller logs it and drops the proposal).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import rjieba

from engram.models import Message
from engram.text import content_words, normalize, split_sentences

__all__ = ["judgement_problem", "proposal_problem", "source_of", "support"]

GROUNDED_SHARE = 0.5  # share of a proposal's content words that must occur in the source

# words any third-person memory adds that the user never says ("User prefers…")
_FRAME = frozenset({"user", "用户", "prefer", "name", "call", "state", "mention", "said", "say"})
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_EN_NUMBERS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"once": "1", "twice": "2", "dozen": "12", "half": "0.5"}
_ZH_NUMBERS = {ch: str(n) for n, ch in enumerate("零一二三四五六七八九十")} | {"两": "2", "俩": "2"}
_ZH_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})  # people, places, organisations, other names
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,30}>")
_POSSESSIVE = re.compile(r"['’]s?$")
# not "us": "User moved to the US"
_FIRST_PERSON_EN = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours)\b", re.IGNORECASE)
_SECOND_PERSON_EN = re.compile(r"\b(you|you're|you've|your|yours|yourself)\b", re.IGNORECASE)
_FIRST_PERSON_ZH = re.compile(r"我|咱")
_SECOND_PERSON_ZH = re.compile(r"你|您")
_QUESTION = re.compile(
    r"[?？]\s*$|\b(asks?|asked|asking|wonders?|wondered)\b.{0,40}\b(if|whether)\b|询问|问.{0,8}是否|想知道",
    re.IGNORECASE,
)
_COMMENTARY = re.compile(
    r"\b(this|that|the|new|existing|previous|old) (information|memory|memories|statement|entry)\b"
    r"|\b(consistent|inconsistent) with\b|\bno (new|additional) information\b|\bupdated to reflect\b"
    r"|这条(信息|记忆)|已有记忆|新记忆|(信息|记忆)一致|与.{0,10}一致",
    re.IGNORECASE,
)
_USER_SUBJECT = re.compile(r"^\s*(?:the\s+)?user\b|^\s*用户", re.IGNORECASE)
_CONFIRM = re.compile(
    r"^\s*(yes|yeah|yep|yup|right|correct|exactly|true|that's right|indeed|sure)\b"
    r"|^\s*(对|是的|是啊|没错|对的|嗯|对啊|正是|确实)",
    re.IGNORECASE,
)


def source_of(messages: Sequence[Message]) -> tuple[str, list[str]]:
    """What a window supports, and the assistant's sentences in it.

    The source is what the user said, plus an assistant message the user then
    confirmed ("yes", "对"); other assistant text is context only.
    """
    parts: list[str] = []
    assistant: list[str] = []
    for i, message in enumerate(messages):
        if message.role == "user":
            parts.append(message.content)
        elif message.role == "assistant":
            assistant += split_sentences(message.content)
            reply = next((m for m in messages[i + 1:] if m.role == "user"), None)
            if reply is not None and _CONFIRM.search(reply.content):
                parts.append(message.content)
    return "\n".join(parts), assistant


def _numbers(text: str) -> set[str]:
    """The numbers in `text` (ISO dates aside: the prompt asks for those, computed from "Friday")."""
    return {n.replace(",", "") for n in _NUMBER.findall(_ISO_DATE.sub(" ", text))}


def _spoken_numbers(text: str) -> set[str]:
    """The numbers `text` says, in digits or in words ("three years", "两岁")."""
    found = _numbers(text)
    found.update(_EN_NUMBERS[w] for w in re.findall(r"[a-z]+", text.casefold()) if w in _EN_NUMBERS)
    found.update(_ZH_NUMBERS[ch] for ch in text if ch in _ZH_NUMBERS)
    return found


def _names(text: str) -> set[str]:
    """Names in `text`: capitalised Latin words after the first word (people, places,
    companies); in Chinese text its Latin words and the words jieba tags as names."""
    words = _LATIN_WORD.findall(text)
    if _CJK.search(text):
        tagged = {w for w, tag in rjieba.tag(text) if tag in _ZH_NAME_TAGS and len(w) > 1 and _CJK.match(w)}
        return {w.casefold() for w in words} | tagged
    return {
        _POSSESSIVE.sub("", w).casefold() for w in words[1:]
        if w[0].isupper() and w.casefold() not in ("user", "user's", "i")
    }


def support(content: str, source: str) -> tuple[float, list[str]]:
    """Share of `content`'s content words found in `source`, and the words that were not.

    Chinese words are looked up as substrings of the source, so two different
    segmentations of the same words ("不喜欢吃香菜" / "喜欢吃") still match.
    """
    said = content_words(source)
    folded = source.casefold()
    words = {  # numbers are checked on their own; "User prefers…" is how a memory is written
        w for w in content_words(_ISO_DATE.sub(" ", content))
        if not w[0].isdigit() and (w in said or w not in _FRAME)
    }
    if not words:
        return 0.0, []
    missing = [w for w in sorted(words) if w not in said and not (_CJK.match(w) and w in folded)]
    return 1.0 - len(missing) / len(words), missing


def _unsupported(content: str, source: str) -> str | None:
    """Why `content` is not grounded in `source`, or None."""
    numbers = _numbers(content) - _spoken_numbers(source)
    if numbers:
        return f"number(s) not in the source: {', '.join(sorted(numbers))}"
    folded = source.casefold()
    named = _names(content)
    names = [n for n in sorted(named) if not re.search(rf"(?<![a-z]){re.escape(n)}(?![a-z])", folded)]
    if names:
        return f"name(s) not in the source: {', '.join(names)}"
    share, missing = support(content, source)
    if share < GROUNDED_SHARE and not (named or _numbers(content)):  # its names and numbers are the user's
        what = ", ".join(missing[:6]) if missing else "no content words"
        return f"not supported by what the user said ({share:.0%} of its words; missing: {what})"
    return None


def _person(content: str) -> str | None:
    """Why `content` is not a third-person statement (first person, second person, a question)."""
    if _QUESTION.search(content):
        return "a question, not a statement"
    if _FIRST_PERSON_EN.search(content) or _FIRST_PERSON_ZH.search(content.replace("自我", "")):
        return "first person"
    if _SECOND_PERSON_EN.search(content) or _SECOND_PERSON_ZH.search(content):
        return "second person"
    return None


def proposal_problem(content: str, source: str, assistant: Sequence[str] = ()) -> str | None:
    """Why an extracted memory must not be stored, or None (see the module docstring)."""
    if _PLACEHOLDER.search(content):
        return "a template placeholder copied from the prompt"
    text = normalize(content)
    if any(text == normalize(sentence) for sentence in assistant):
        return "the assistant's sentence, not something the user said"
    if _COMMENTARY.search(content):
        return "commentary about memory, not a statement about the user"
    return _person(content) or _unsupported(content, source)


def judgement_problem(content: str, *, candidate: str, said: str, old: str) -> str | None:
    """Why a judge's merged statement must not replace `old`, or None (see the module docstring)."""
    if not _USER_SUBJECT.search(content):
        return "not a statement about the user (must start with 'User'/'用户')"
    if _COMMENTARY.search(content):
        return "commentary about memory, not a statement about the user"
    problem = _person(content)
    if problem:
        return problem
    if len(content.strip()) > len(candidate.strip()) + len(old.strip()):
        return "longer than the new and the old memory together"
    return _unsupported(content, "\n".join((said, candidate, old)))
