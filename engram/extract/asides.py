"""What a sentence says in passing, beside its main statement (English).

"…take a break from pottery, which I use for self-expression and peace": the relative clause
says something of its own about the user ("User uses pottery for self-expression and peace"),
which the statement rules cut away as a subordinate clause. It is read as the sentence the
user would have said alone ("I use pottery for self-expression and peace.") and mined as such.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.extract.candidate import Candidate, Ctx
from engram.text import lexical_tokens

Miner = Callable[[str, Ctx], list[Candidate]]

# "<a noun>, which I <verb> …": the noun is the verb's object ("pottery, which I use for …")
_NOT_IN_NOUN = r"(?!(?:which|from|of|with|for|into|in|on|at|to|about|and|or|but|a|an|the|my|our)\b)"
_WHICH_I_RE = re.compile(
    r"\b(?P<det>my|our|the|this|that|these|a|an|from|of|with|for|into|in|on|at|to|about|playing)\s+"
    rf"(?P<np>(?:{_NOT_IN_NOUN}[\w'-]+\s+){{0,2}}{_NOT_IN_NOUN}[\w'-]+),\s+which\s+(?P<i>I|we)(?P<aux>'ve|'m|'d|'ll)?\s+"
    r"(?P<rest>[^,.;!?]+)", re.I)
# a name before it ("Abbey Road, which I listen to every day")
_WHICH_I_NAME_RE = re.compile(
    r"(?<!^)\b(?-i:(?P<np>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,3})),\s+which\s+(?P<i>I|we)(?P<aux>'ve|'m|'d|'ll)?\s+"
    r"(?P<rest>[^,.;!?]+)", re.I)
# what may stand between "I" and the verb ("which I've been using for years"); "have" only before
# a participle ("which I have used", not "which I had for ten years")
_AUX = frozenset("been am was will would do did just also really still always often usually now".split())
_HAVE = frozenset("have has had".split())
# a verb whose object is a clause, not the noun ("pottery, which I think is calming")
_NOT_ITS_OBJECT = frozenset(
    """think thought believe believed guess know knew hope feel felt mean said say told wish bet suppose reckon
    is was am are were can could should might may must do doing done""".split())
# a verb whose object comes after its preposition ("worked on my thesis", "listen to that album"),
# by the verb's stem as the lexical index has it (`engram.text.lexical_tokens`): "worked", "working" → "work"
_VERB_WITH_PREP = (
    "work on", "work at", "work with", "listen to", "rely on", "count on", "care about", "talk about", "talk to",
    "think about", "dream about", "look after", "look at", "look for", "live in", "grow up in", "go to", "deal with",
    "play with", "hang out at", "stay at", "stay in", "volunteer at", "shop at", "train at", "study at", "study with",
    "write about", "read about", "learn about", "agree with", "fall in love with",
)
# the past forms the stemmer leaves as they are ("went" is no "go")
_IRREGULAR = {"went": "go", "gone": "go", "goes": "go", "grew": "grow", "grown": "grow", "dealt": "deal", "fell": "fall",
              "fallen": "fall", "wrote": "write", "written": "write", "thought": "think"}


def _stem(verb: str) -> str:
    v = verb.lower()
    return next(iter(lexical_tokens(_IRREGULAR.get(v, v))), v)


_PARTICLES = frozenset((_stem(head), rest) for head, _, rest in (c.partition(" ") for c in _VERB_WITH_PREP))
_DETS = {"my": "my ", "our": "our ", "the": "the ", "a": "the ", "an": "the ", "this": "the ", "that": "the ", "these": "the "}


def which_i_aside(sentence: str, ctx: Ctx, mine: Miner) -> list[Candidate]:
    """The relative clause about the user after a noun, as a statement of its own, or []."""
    m = _WHICH_I_RE.search(sentence) or _WHICH_I_NAME_RE.search(sentence)
    if m is None or m.start() == 0:
        return []
    words = m.group("rest").split()
    at = next((i for i, w in enumerate(words) if w.lower() not in _AUX and not (
        w.lower() in _HAVE and i + 1 < len(words) and (words[i + 1].lower() == "been" or words[i + 1].endswith("ed")))), None)
    if at is None or words[at].lower() in _NOT_ITS_OBJECT or len(words) > 14:
        return []
    stem = _stem(words[at])
    particles = next((n for n in (3, 2, 1) if (stem, " ".join(words[at + 1 : at + 1 + n]).lower()) in _PARTICLES), 0)
    if particles:
        at += particles  # "which I worked on for two years", "which I grew up in": the noun follows "on", "in"
    elif at + 1 < len(words) and words[at + 1].lower() in ("to", "that", "it", "them", "this"):
        return []  # "which I want to try": the noun is no object of "want"; "which I got it from"
    noun = _DETS.get((m.groupdict().get("det") or "").lower(), "") + m.group("np")
    said = " ".join([m.group("i") + (m.group("aux") or ""), *words[: at + 1], noun, *words[at + 1:]]) + "."
    said = said[0].upper() + said[1:]
    if ctx.memo is None:
        return mine(said, ctx)
    saved = dict(ctx.memo)  # (the aside is no sentence of its own: a next "It was …" is not about it)
    found = mine(said, ctx)
    ctx.memo.clear()
    ctx.memo.update(saved)
    return found

