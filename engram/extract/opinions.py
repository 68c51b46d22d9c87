"""Opinions a speaker states as general truths: "Guidance and support can help dancers shine."

Said by the user, a general evaluative claim ("taking risks is key for success", "talking about
acceptance is crucial", "dance has the power to bring us together", "it's empowering to make a
difference") is the user's view, and people are remembered by their views. It is kept as
"User believes …" only when the predicate evaluates (key, important, crucial, helps, has the power
to, matters …): a plain general statement ("the museum opens at nine") is no view of the user's,
and a remark to the other speaker ("you're so strong") is about them, not the user.

English only: Chinese views come with their own verb (我觉得/我认为), which the statement rules refuse
as asides, and a bare "X很重要" is rare enough in chat that guessing would cost more than it keeps.
"""

from __future__ import annotations

import re

from engram.extract.candidate import Ctx, candidate
from engram.extract.rewrite import as_sentence, en_rest, we_rest
from engram.models import Candidate, Kind
from engram.text import content_words

__all__ = ["opinion"]

_MAX_WORDS = 20
_INTENSIFIERS = r"(?:(?:so|really|very|super|just|truly|absolutely|definitely|always|all|also|such)\s+)*"
_EVALUATIVE_ADJ = (
    r"(?:key|important|crucial|essential|vital|necessary|invaluable|priceless|everything|underrated|overrated"
    r"|rewarding|fulfilling|empowering|healing|therapeutic|liberating|freeing|calming|relaxing|life-changing"
    r"|worth\s+it|the\s+key|the\s+best\s+(?:way|thing|medicine|part|feeling)|a\s+(?:great|good|big)\s+way"
    r"|(?:a\s+)?must|what\s+matters|no\s+joke)"
)
# a subject (a noun phrase or a gerund clause, 1-8 words) and an evaluative predicate
_GENERIC_RE = re.compile(
    r"^(?P<subj>[A-Za-z][\w'&-]*(?:\s+[\w'&-]+){0,7}?)\s*"
    r"(?P<pred>(?:(?:'s|is|are)\s+" + _INTENSIFIERS + _EVALUATIVE_ADJ + r"\b"
    r"|(?:'s|is|are)\s+" + _INTENSIFIERS + r"(?:awesome|great|good|amazing|perfect)\s+for\s+\w+ing\b"
    r"|(?:can\s+|really\s+|truly\s+|always\s+)*(?:helps?|help)\s+(?!me\b|you\b)\w+"
    r"|(?:can\s+)?do(?:es)?\s+wonders\b|(?:has|have)\s+the\s+power\s+to\b|matters?\s+(?:more|most|a\s+lot)\b"
    r"|(?:can\s+)?(?:bring|brings)\s+(?:people|us|everyone)\s+together\b"
    r"|(?:can\s+|really\s+|always\s+)*(?:bring|brings|give|gives)\s+(?:(?:us|people|me)\s+)?(?:so\s+much\s+|such\s+|a\s+lot\s+of\s+)?"
    r"(?:joy|peace|comfort|happiness|hope|strength|purpose|meaning)\b"
    r"|(?:can\s+|really\s+)*(?:make|makes)\s+life\s+\w+).*)$",
    re.I,
)
# "It's empowering to make a positive difference": the user finds doing it so
_IT_IS_RE = re.compile(
    r"^(?:it's|it\s+is|it\s+was|it's\s+been)\s+" + _INTENSIFIERS
    + r"(?P<adj>" + _EVALUATIVE_ADJ + r"|awesome|amazing|inspiring|powerful|special|meaningful|helpful|motivating"
    r"|comforting|tough|hard|scary)\s+(?:to\s+(?P<what>\w+.*)|(?P<doing>\w+ing\s+\w+.*))$",
    re.I,
)
_DREAM_RE = re.compile(r"^(?:it's|it\s+is|it\s+has)\s+(?:(?:always|long)\s+)?(?:been\s+)?(?:(?:always|long)\s+)?(?:a|my)\s+"
                       r"(?:(?:big|long-held|lifelong|huge)\s+)?dream\s+(?:of\s+mine\s+)?to\s+(?P<what>\w+.*)$", re.I)
_NOT_A_SUBJECT = frozenset(
    """i i'm i've we we're my our you your he she they it it's that that's this there there's here what who
    how when where why which if so and but or then yeah yes no oh wow thanks thank please let just one
    everything nothing something anything life""".split()
)
_CLAUSE_END_RE = re.compile(r",\s*(?:and|but|so)\s+|\s+[-–—]+\s+|;|!")
_TRAILING_RE = re.compile(r"(?:,?\s+(?:too|though|as\s+well|also|for\s+sure|honestly))+$", re.I)
_OUR_START_RE = re.compile(r"^our\s+(?=(?:loved\s+ones|friends|families|kids|children|pets|communities)\b)", re.I)
_FIRST_PERSON_RE = re.compile(r"\b(?:I|I'm|I've|I'd|my|me)\b")
# "Yeah, I totally agree - taking risks is key": the lead-in to a view, no statement of its own
_I_SAY_RE = re.compile(r"\bI\s+(?:(?:totally|really|completely|fully|just|so|also|do)\s+)*(?:agree|think|feel|believe|know"
                       r"|mean|guess|bet|see|understand|get\s+it|hear\s+you)\b")
_YOU_RE = re.compile(r"\b(?:you|your|yours|yourself|u|ur|ya)\b", re.I)
_GENERIC_WE = {"us": "people", "we": "people", "ourselves": "oneself", "our": "one's"}
_WE_RE = re.compile(r"\b(?:us|we|ourselves|our)\b", re.I)


def opinion(s: str, ctx: Ctx) -> list[Candidate] | None:
    """The user's view in a general evaluative clause, or None."""
    if ctx.lang != "en" or "?" in s:
        return None
    for part in _CLAUSE_END_RE.split(s.strip())[:3]:  # "X is crucial, and you're so brave"; "Researching … — it's a dream to …"
        view = _view(_TRAILING_RE.sub("", part.rstrip(".!").strip()), ctx)
        if view:
            return view
        if _FIRST_PERSON_RE.search(part) and not _I_SAY_RE.search(part):
            return None  # "I joined a mentorship program - it's rewarding to help": the statement leads
    return None


def _view(s: str, ctx: Ctx) -> list[Candidate] | None:
    if not s or _YOU_RE.search(s):
        return None
    s = _OUR_START_RE.sub("", s)  # "Our loved ones give us strength": loved ones, in general
    words = s.split()
    if not 3 <= len(words) <= _MAX_WORDS:
        return None
    dream = _DREAM_RE.match(s)
    if dream and content_words(dream.group("what")):  # "It's been a dream to adopt …"
        view = f"User's dream is to {en_rest(we_rest(dream.group('what')))}"
        return [candidate(ctx, Kind.FACT, as_sentence(view), None, None, "opinion")]
    it = _IT_IS_RE.match(s)
    if it:
        what = it.group("what") or it.group("doing")
        if len(content_words(what)) < 2 or re.match(r"(?:see|hear|know|say|meet|talk|chat)\b", what, re.I):
            return None  # "it's great to see …", "it was nice to meet …": the exchange, not a view
        link = "" if it.group("doing") else "to "
        view = f"User finds it {it.group('adj').lower()} {link}{en_rest(we_rest(what))}"
        return [candidate(ctx, Kind.FACT, as_sentence(view), None, None, "opinion")]
    m = _GENERIC_RE.match(s)
    if m is None or words[0].lower().strip(",") in _NOT_A_SUBJECT:
        return None
    if re.search(r"\b(?:i|me|my|mine)\b", m.group("subj"), re.I) or len(content_words(m.group("subj"))) < 1:
        return None  # "my art helps …" is a statement about the user's, read by the statement rules
    if len(content_words(s)) < 3:
        return None
    first, rest = words[0], s[len(words[0]):]
    if not (first.isupper() or any(c.isupper() for c in first[1:])):
        first = first.lower()  # "Dance has the power…" → "dance has…"; "LGBTQ events…" stays
    view = "User believes " + _generic(first + rest)
    return [candidate(ctx, Kind.FACT, as_sentence(view), None, None, "opinion")]


def _generic(text: str) -> str:
    """"bring us together" → "bring people together": "we" in a general claim means people."""
    return _WE_RE.sub(lambda m: _GENERIC_WE[m.group().lower()], text)
