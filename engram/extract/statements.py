"""General first-person statements: the clause rules' fallback, by grammar rather than by sentence.

A clause no slot rule reads is still a fact when it is a plain statement about the user
or about someone or something of theirs: "I donated my old car to a shelter yesterday" →
"User donated their old car to a shelter." (an event, `valid_from` = yesterday);
"We're planning a trip to Japan in April" → "User is planning a trip to Japan in April."
(a plan); "My daughter Emma just turned seven" → "User's daughter Emma just turned seven.";
"我女儿叫小雨，今年七岁" → "用户的女儿叫小雨", "用户的女儿今年七岁".

How a clause is read:

- subject: I / we / my X and I → the user; my X, our X, 我(的)X, 我们家的X → the user's X
  (never the user); he / she / it / her name… → the X just mentioned in the turn
  ("I just got a puppy! Her name's Coco." → "User's puppy's name is Coco.").
- verb: a lexicon of what says nothing about the user (I know, I guess, I hope, I agree,
  我觉得, 我知道…) is refused; the verb's form gives the kind: past (went, donated, 了) an
  event, going to / planning / will / 打算 / 要 a plan, likes and firm opinions a
  preference, the rest (habits, possessions, work, health) a fact.
- scope: a clause addressed to the other speaker ("you"), one whose object only makes sense
  in context ("I did it"), a rambling one, or one this cannot rewrite gives nothing: it stays
  an episode, never a fragment. Questions, hypotheticals and hedges never get here.
- concision: the clause is cut before a reason, an aside or a comment ("- it was really
  rewarding", "because …", "which …"); a relative time word is dropped once `valid_from`
  holds it.
"""

from __future__ import annotations

import re

from engram.animals import PETS_EN
from engram.extract.casual import formal
from engram.extract.candidate import Ctx, candidate
from engram.extract.dates import absolute_when, zh_said_time
from engram.extract.filters import EN_TRANSIENT_RE, ZH_TRANSIENT_RE, ZH_WANT_VERBS
from engram.extract.habits import en_routine, zh_routine
from engram.extract.keys import EMOJI
from engram.extract.names import valid_zh_name
from engram.extract.opinions import opinion
from engram.extract.phrases import (
    CONTEXT_WORDS, PRONOUN_START, ZH_BARE_VERB, ZH_OWNED_RE, ZH_PEOPLE, ZH_PET_BREEDS, ZH_PETS, trim_fillers, zh_object,
)
from engram.extract.rewrite import (
    EN_IRREGULAR_PAST, EN_PLURAL_OWNED, as_sentence, en_objects_named, en_rest, gerund, pronoun_fits, third_verb,
    unnamed_object, we_rest, zh_objects_named, zh_pronouns_named, zh_third,
)
from engram.models import Candidate, Kind
from engram.relatives import COUPLE_EN, COUPLE_ZH, KIN_EN, KIN_ZH
from engram.text import content_words
from engram.when import find_range

__all__ = ["last_referent", "opens_with_pronoun", "statement"]

_MAX_EN_WORDS = 22
_MAX_ZH_CHARS = 32

# --------------------------------------------------------------------------- English lexicons

_EN_PEOPLE = frozenset(
    """wife husband partner spouse son sons daughter daughters kid kids child children baby babies brother
    brothers sister sisters mom mum mother dad father parents parent girlfriend boyfriend fiance fiancee
    boss manager coworker coworkers co-worker colleague colleagues friend friends bestie roommate roommates
    neighbor neighbour neighbors neighbours grandma grandmother grandpa grandfather grandparents uncle aunt
    cousin cousins nephew niece family fam team teammates teacher doctor therapist classmate classmates
    in-laws mentor students teammate co-founder co-founders cofounder cofounders coach tutor landlord landlady
    client clients physio physiotherapist trainer dentist vet nanny babysitter buddy pal surgeon
    psychiatrist nutritionist dietitian""".split()
) | frozenset(k for k in KIN_EN if " " not in k)  # ("brother-in-law", "stepdad": engram.relatives)
# a child of theirs is no "we" of the next clause ("Leo is allergic to peanuts, so we're careful": the parents)
_EN_CHILDREN = frozenset("son sons daughter daughters kid kids child children baby babies twins".split())
# "my team lead", "my band's drummer": a person named by their role in the user's group
_EN_GROUPS = frozenset("team band class squad crew club group project company department".split())
_EN_GROUP_ROLES = frozenset("lead leader manager captain coach owner founder drummer singer teacher".split())
_EN_PETS = frozenset(PETS_EN)
# who "they" may be: "I took my kids to a park. They had fun exploring." → "User's kids had fun exploring."
_EN_OWNED = _EN_PEOPLE | _EN_PETS | frozenset(
    """car house apartment garden business company shop store studio band book blog channel podcast
    project plant plants""".split()
)
# what "I <verb>" says nothing about the user with: talk about the talk, mental asides
_EN_CHATTER = frozenset(
    """know knew think thought guess mean meant agree hope hoped wish bet see understand appreciate wonder
    wondered suppose imagine remember forgot forget feel believe believed say said tell told ask asked
    reckon figure figured hear heard gotta gonna promise swear admit must should could would might
    can't cannot hate love like adore enjoy prefer dislike doubt assume care cared wanna mind trust need needs
    totally just really also still""".split()
)
# what "I need to / have to …" says of the conversation or the moment, not of a task
_EN_NEED_CHATTER = frozenset("""go run leave head dash bounce sleep rest relax eat chill pee think figure know see check
    ask tell talk say vent admit confess mention""".split())
# "I hope to see you soon": the exchange, not a goal
_EN_HOPE_CHATTER = frozenset("see hear meet talk chat catch speak get be have do help".split())
# "I'm <adjective>" that is about the exchange, not the user
_EN_CHATTER_ADJ = frozenset(
    """glad happy sorry sure unsure certain right wrong fine good ok okay here there back curious aware
    kidding serious honored honoured grateful thankful thrilled excited delighted pleased impressed
    amazed jealous confused so just also always really all totally up down
    done game interested touched moved inspired speechless tired exhausted busy hungry bored sleepy stressed
    stuck lost late early free available online offline home outside away""".split()
)
_EN_EMOTIONS = frozenset("""excited thrilled proud grateful thankful inspired worried nervous anxious scared afraid stressed
    upset sad angry frustrated bored lonely overwhelmed terrified annoyed""".split())
_EN_FIRM = re.compile(r"^i\s+(?:firmly|strongly|truly|really|deeply|honestly)\s+believe\s+(?:that\s+)?(?P<rest>.+)$", re.I)
# past verbs a speaker starts a sentence with, subject dropped ("Took a trip…", "Finished my thesis")
_EN_DROPPED_SUBJECT_VERBS = frozenset(
    """went ran made took came saw met grew began became bought brought built caught chose drew drove ate fell
    found flew forgot gave hurt lent paid quit rang rose sang sat slept sold sent showed spent spoke stood stole
    swam taught threw understood woke wore wrote broke rode
    started finished visited joined signed adopted moved bought volunteered attended tried painted baked cooked
    booked traveled travelled graduated opened launched posted created organized organised planted fixed switched
    picked""".split()
)
_EN_PLAN_RE = re.compile(
    r"^(?:am|is|are)\s+(?:(?:also|still|really|finally|actually|just|now)\s+)*"
    r"(?:going\s+to|gonna|planning\s+(?:to|on|a|an)|about\s+to|hoping\s+to|thinking\s+(?:of|about)"
    r"|looking\s+forward\s+to|heading|flying|traveling|travelling|moving|starting)\b",
    re.I,
)
_EN_LEAD_RE = re.compile(
    r"^(?:(?:and|but|so|then|also|plus|now|anyway|actually|recently|lately|finally|luckily|sadly|btw|oh"
    r"|well|yeah|yes|honestly|basically|after\s+that|afterwards|after\s+this)\s*,?\s+)+",
    re.I,
)
# "Glad my journey is inspiring others": the feeling leads in; the clause after it says the thing
_EN_GLAD_LEAD_RE = re.compile(
    r"^(?:so\s+|really\s+|just\s+)?(?:glad|happy|thankful|grateful|relieved|stoked)\s+(?:that\s+)?(?=(?:my|our)\s)", re.I)
_EN_LEAD_TIME_RE = re.compile(
    r"^(?P<t>(?:(?:about|around|roughly|almost|nearly|some)\s+)?"
    r"(?:last|this|next|on|in|over|during|earlier|yesterday|today|tonight"
    r"|(?:a\s+few|a\s+couple(?:\s+of)?|several|\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|an)"
    r"\s+(?=(?:years?|months?|weeks?|days?|decades?|weekends?)\b))"
    r"\b(?:(?!\b(?:is|was|are|were|am|has|have|had|will|would)\b)[^,]){0,25}?),?\s+(?=(?:i|we|my|our)\b)",
    re.I,
)
_EN_SUBJ_RE = re.compile(
    r"^(?:(?P<pair>(?:my\s+(?P<pw>[a-z-]+)(?:\s+(?P<pn>(?-i:[A-Z][a-z]+)))?|(?P<pw2>(?-i:[A-Z][a-z]+)))\s+and\s+i)(?=\s)"
    r"|(?P<i>i)(?P<ic>'m|'ve|'ll)?(?=[\s,])|(?P<we>we)(?P<wc>'re|'ve|'ll)?(?=[\s,])"
    r"|(?P<poss>my|our)\s+(?P<own>(?:(?:old|new|little|big|younger|older|best|oldest|youngest|eldest|"
    r"baby|step|late|two|three)\s+)*(?!(?:is|are|was|were|has|have|had|will|just|does|did)\b)[a-z-]+)(?P<own_s>'s)?(?=[\s,])"
    r"|(?P<pron>she|he|it|they|her|his|its|their)(?P<pc>'s|'re|'ll|'ve)?(?=[\s,]))",
    re.I,
)
_EN_CUT_RE = re.compile(  # branches start where a run of spaces starts: linear on long runs
    r"(?<!\s)(?:\s+[-–—]\s+|(?<=\w)[-–—]+\s+|\s*[(;]|\s*,\s*(?:which|who|where|but|so|and\s+(?:it|that|this|they)|though|as(?!\s+well\s+as\b)|because|since"
    r"|maybe|perhaps|probably|still"
    r"|'cause|cause|if|when|plus)\b|\s*,\s*(?=(?:things|everything|it|it's|that|this|they|life|he|she)\b)"
    r"|\s+and\s+(?=(?:it|that|this)\b)|\s+(?:because|'cause|cause|since|which|so\s+that"
    r"|so\s+(?:at\s+least\s+|now\s+)?(?:i|we|it|please|don't|do\s+not|never|make\s+sure)\b"
    r"|but|though|although|(?<!\ba\s)while|whereas|even\s+though|unless|if|until)\b)",
    re.I,
)
_EN_REASON_RE = re.compile(r"\b(?:because|'cause|cause)\b", re.I)
_EN_COMMENT_RE = re.compile(
    r"^(?:(?:it|that|this|which)(?:'s|\s+(?!you\b|i\b|me\b|he\b|she\b|they\b|we\b|would\b|might\b|could\b)[a-z]+)"
    r"|(?:a|an|the|such\s+a)\s+(?:[a-z]+\s+){0,2}(?:way|reminder|chance|experience|break|highlight)\s+(?:to|of|for))\b",
    re.I,
)
_EN_BAD_END = frozenset(
    """it a an the to of in on at for with from by and or but my our your their his her its is are was were
    be been being have has had do does did this that these those so very really just""".split()
)
_EN_TIME_REL = re.compile(
    r"\b(?:yesterday|today|tonight|last|ago|this|recently|earlier|just\s+now|the\s+other\s+day)\b", re.I
)
_EN_TAIL_TIME_RE = re.compile(
    r"\s+(?:(?:earlier|recently|lately)(?:\s+today)?|the\s+other\s+day|a\s+(?:few|couple(?:\s+of)?)\s+"
    r"(?:days|weeks|months)\s+ago|just\s+now)$",
    re.I,
)
_I_AM_RE = re.compile(r"\bI\s+am\b")
_YOU_RE = re.compile(r"\b(?:you|your|yours|yourself|u|ur|ya)\b", re.I)
_CONTEXT_ONLY = frozenset("it that this them those these there here one so".split())
_EN_ADVERBS = frozenset(
    """never always usually often sometimes rarely also still just recently finally only even already actually
    really mostly normally all both totally definitely seriously generally regularly occasionally literally
    officially currently now once twice""".split()
)
_EN_YOUNG = frozenset("""a young little small kid child teen teenager baby toddler one two three four five six seven
    eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen""".split())
_EN_RESOLVE_RE = re.compile(
    r"\b(?:won't|will\s+not|never)\s+(?:ever\s+)?(?:quit|give\s+up|stop|back\s+down)|\b(?:keep|keeps)\s+(?:going|pushing|"
    r"trying|at\s+it)\b|\b(?:try|do|doing|trying)\s+(?:my|their|our)\s+best\b|\bmake\s+it\s+work\b|\bhang(?:ing)?\s+in\s+there"
    r"|\bgot\s+this\b|\bon\s+it\b|\bgetting\s+there\b|\bfiguring\s+(?:out|it|things)\b|^can\s+(?:picture|imagine|see)\b"
    r"|\bhad\s+to\s+(?:take|snap|get)\s+a\s+(?:pic|picture|photo|shot)\b"
    r"|\bgive\s+(?:it|that|this)\s+a\s+(?:try|go|shot|whirl)\b|\b(?:think|thinking)\s+about\s+(?:it|that)\b"
    r"|^(?:(?:is|are)\s+going\s+to\s+|will\s+|'ll\s+|can\s+)?(?:keep\s+(?:on\s+)?(?:chasing|believing|pursuing|working"
    r"|doing|dreaming|fighting|hustling|shining|it\s+up)\b|make\s+(?:it|this|that|things)\s+(?:happen|count)\b"
    r"|make\s+(?:my|their|our)\s+dreams?\s+come\s+true\b)"
    r"|\b(?:not|never)\s+(?:going\s+to\s+)?give\s+up\b|\btry\s+(?:it|this|that)\s+out\b"
    r"|^is\s+going\s+to\s+be\s+(?:so\s+|really\s+|super\s+)?(?:awesome|great|amazing|fine|ok|okay|fun|epic|tough|hard"
    r"|worth\s+it|good|alright|cool|wild|interesting)\b"
)
_EN_NOT_OWNED = frozenset("""bad god gosh goodness pleasure turn guess point thoughts thought question fault heart mind
    day bet word words apologies condolences hope opinion advice answer""".split())
# what may follow "my <thing>" for it to be a subject: "my art is about …", "our loved ones give …"
# a body part that hurts: "My knee hurts when I run", "my back has been killing me"
_EN_BODY = frozenset("""knee knees back neck shoulder shoulders wrist wrists ankle ankles hip hips foot feet leg legs
    arm arms elbow elbows head stomach tummy tooth teeth eyes eye throat chest hand hands fingers toes""".split())
_EN_HURTS_RE = re.compile(r"(?:(?:still|really|always|sometimes|often|kind of|kinda)\s+)?(?:hurts?|aches?|is sore|are sore"
                          r"|(?:has|have) been (?:hurting|aching|sore|bothering me|killing me)|is killing me|is injured"
                          r"|is swollen|is acting up|gets? sore|is stiff|are stiff)\b", re.I)
_EN_SUBJECT_VERBS = frozenset("""is are was were has have had 's 've gives give gave helps help helped means meant keeps
    kept brings brought makes made reminds reminded became becomes got gets starts started""".split())
_EN_WE_DECIDE = frozenset("""goes go chooses choose decides decide picks pick takes take uses use needs need wants want can
    should could will must agrees agree gets get""".split())
_EN_LIKES = frozenset("love like enjoy adore".split())
_EN_FREQUENCY = frozenset("always usually often normally regularly sometimes never rarely every".split())
_EN_LIGHT_VERBS = frozenset("is are was were has have do does 's".split())
_EN_AUX_WORDS = frozenset("is are was were has have had will can can't cannot don't doesn't didn't won't".split())


_THEY_AGREE_RE = re.compile(r"\bthey\s+(?:(?P<was>was)|(?P<is>is)|(?P<has>has))\b")


def _they(s: str) -> str:
    """First person → "they", with the verb agreeing ("I was" → "they were")."""
    s = en_rest(_I_AM_RE.sub("they are", s))
    return _THEY_AGREE_RE.sub(lambda m: "they were" if m.group("was") else "they are" if m.group("is") else "they have", s)


_EN_FOR_IT_RE = re.compile(r"(?<!\bgo)(?<!\bgoing)(?<!\bwent)\s+for\s+(?:it|that|this)$", re.I)  # ("go for it" is said as said)


def _en_concise(rest: str, *, comment: bool = False) -> str:
    """The statement without its aside, reason or trailing fillers; with `comment`, a short
    comment on it is kept ("…; it's been a great way to express myself")."""
    cut = _EN_CUT_RE.search(rest)
    parts = [rest] if cut is None else [rest[: cut.start()], rest[cut.end():]]
    main = trim_fillers(_EN_TRAIL_VOCATIVE_RE.sub("", parts[0].strip(" ,"))).strip(" ,")
    shorter = _EN_FOR_IT_RE.sub("", main)  # "flying in from Denver for it": what "it" was is said before
    if shorter != main and len(content_words(shorter)) >= 2:  # ("so ready for it" says nothing without it)
        main = shorter
    if comment and cut is not None and _EN_REASON_RE.search(cut.group()):
        reason = _en_comment(parts[1].strip(" ,"))  # "…, 'cause nature brings such peace": the reason, when short
        if reason and not re.match(r"(?:i|i'm|i've|we|you)\b", parts[1].strip(), re.I):
            return main + " because " + reason
    if comment and len(parts) == 2 and cut is not None and cut.group().strip() in _DASHES:
        listed = _en_list(parts[1])  # "me-time each day - running, reading, or playing my violin"
        if listed:
            return f"{main}: {listed}"
    if comment and len(parts) == 2:
        tail = parts[1].strip(" ,")
        c = _EN_COMMENT_RE.match(tail)
        if c:
            said = _en_comment(tail)
            if said:
                return main + ", " + said
    return main


_DASHES = frozenset("-–—")
_EN_LIST_ITEM = r"[a-z][\w'’-]*(?:\s+[\w'’-]+){0,3}"  # up to four words an item
_EN_LIST_RE = re.compile(rf"^{_EN_LIST_ITEM}(?:\s*,\s*{_EN_LIST_ITEM}){{0,3}}\s*,?\s+(?:and|or)\s+{_EN_LIST_ITEM}$"
                         rf"|^{_EN_LIST_ITEM}(?:\s*,\s*{_EN_LIST_ITEM}){{2,4}}$", re.I)
_EN_LIST_END_RE = re.compile(r"\s*,?\s*(?:all\s+of\s+that|and\s+(?:so\s+on|stuff|more)|etc\.?)\s*$", re.I)
_EN_NOT_IN_A_LIST = frozenset("""i i'm i've you your you're we we're it it's they they're he she is are was were am
    be been has have had do does did will would can could should which that who""".split())


def _en_list(tail: str) -> str | None:
    """What a dash after a statement lists ("- running, reading, or playing my violin", "- classics,
    stories from different cultures, educational books, all of that"), said of the user; None
    when what follows the dash is not a short list of things (a clause, a comment, one item)."""
    tail = _EN_LIST_END_RE.sub("", _EN_CUT_RE.split(tail, maxsplit=1)[0].strip(" ,.!"))
    if not _EN_LIST_RE.match(tail) or not _EN_NOT_IN_A_LIST.isdisjoint(re.findall(r"[\w'’]+", tail.lower())):
        return None
    return _they(we_rest(tail))


def _en_comment(tail: str) -> str | None:
    """"it was inspiring and emotional" → "it was inspiring and emotional" (cut, ≤ 14 words), else None."""
    said = trim_fillers(_EN_CUT_RE.split(tail, maxsplit=1)[0].strip(" ,")).strip(" ,")
    if re.match(r"(?:that|this|it)(?:'s|\s+is)\s+(?:the|my|a|an)\s+\w+(?:$|,?\s+and\s+here)", said, re.I):
        return None  # "that's the dog", "That's the dog, and here's our cat": pointing at a photo, no comment
    words = said.split()
    if not 3 <= len(words) <= 18 or _YOU_RE.search(said) or words[-1].lower() in _EN_BAD_END:
        return None
    return _they(we_rest(said[:1].lower() + said[1:]))


_EN_ME_RE = re.compile(r"\b(?:me|my|myself|mine)\b", re.I)
_EN_NOT_A_SUBJECT = frozenset(
    """it it's its that that's this they they're there there's what who how when where why which he she
    tell help let give show send make remind please thanks thank just so anyway yes yeah no oh wow gonna wanna
    gotta need needs trying hoping going looking can't cant got been still also really
    for in on at with during after before since from to by about""".split()  # (a phrase, not a subject)
)


def _en_about_me(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"Painting helps me explore my identity" → "Painting helps User explore their identity.": a
    clause with its own subject that says something of the user (me, my), not an imperative."""
    s = _en_concise(s)
    if not _EN_ME_RE.search(s) or _EN_VAGUE_MY_RE.search(s) or _YOU_RE.search(s):
        return None
    words = s.split()
    first = words[0].lower().strip(",") if words else ""
    if len(words) > 1 and words[1].lower() in ("me", "us") and not first.endswith("ing"):
        return None  # "Makes me feel connected", "Reminds me …": a verb with its subject dropped, not read
    demonstrative = first in ("this", "that", "these", "those") and len(words) > 1 and words[1].isalpha() \
        and words[1].lower() not in _EN_LINK_VERBS | _EN_AUX_WORDS | {"sounds", "looks", "seems", "one", "was", "is"}
    short = len(words) == 3 and words[2].lower().rstrip(".!") in ("me", "us") and words[1].isalpha() \
        and words[1].islower()  # "Painting relaxes me.", "Dogs scare me."
    if (len(words) < 4 and not short) or (first in _EN_NOT_A_SUBJECT and not demonstrative) \
            or not words[0].lstrip("\"'“‘")[:1].isalpha():
        return None
    body = we_rest(_en_concise(s))
    if not _EN_ME_RE.search(body) or not _en_ok_predicate(body):
        return None
    verbs = [w for w in body.lower().split()[1:10]
             if w in _EN_LINK_VERBS or w in EN_IRREGULAR_PAST
             or (w.endswith(("s", "ed")) and "'" not in w and not w.endswith("ss"))
             or (w in _EN_PLURAL_LINK_VERBS and " and " in body.lower().split(w, 1)[0])]
    if not verbs:
        return None  # no finite verb near the start: a fragment or an imperative
    body = _EN_ME_RE.sub(lambda m: {"me": "User", "my": "User's", "myself": "User", "mine": "User's"}[m.group().lower()],
                         body, count=1)
    body = _they(body)
    return [candidate(ctx, Kind.FACT, as_sentence(body[:1].upper() + body[1:]), None, None, "about the user")]


_EN_I_HOLD_RE = re.compile(r"^i\s+(?:(?:really|truly|honestly|still|always|just|also)\s+)*(?:feel|think|believe|know|find)"
                           r"\s+(?:that\s+)?(?=\S)", re.I)
# past forms that are also adjectives or imperatives ("Lost in thought"): a verb only before
# its object ("Lost my job as a banker yesterday", "Won a prize")
_EN_DROPPED_SUBJECT_BEFORE_OBJECT = frozenset("had got lost won kept left held felt heard did knew".split())
_EN_GOT_WHAT = frozenset("back home married engaged promoted hired accepted into".split())  # "Got back from Hawaii"
# "we all" with a verb in the present says what is true of everyone, not what the user did
_EN_WE_ALL_NOW_RE = re.compile(
    r"^all\s+(?:have|need|know|deserve|make|are|can|could|should|must|get|go\s+through|struggle|want|feel)\b", re.I)
# "we're all …", "we've all been there" (not what they are doing: "we're all going to the beach")
_EN_WE_ALL_ARE_RE = re.compile(r"^all\s+(?!(?:\w+ing|gonna|set|packed|booked)\b)", re.I)
# what "we" are only to one another: it says nothing until the other one is named
_EN_WE_MUTUAL_RE = re.compile(
    r"^(?:(?:have\s+)?been|are|am|were|became|stayed)\s+(?:such\s+|so\s+|really\s+|close\s+|good\s+|great\s+|best\s+)*"
    r"(?:friends|buddies|pals|neighbou?rs|roommates|flatmates|classmates|colleagues|teammates|partners|together|close(?=\W*$))\b(?!\s+with\b)",
    re.I)
_EN_DROPPED_SUBJECT_PRESENT = frozenset("appreciate need miss love enjoy".split())  # "Appreciate our friendship!"
# not after such a verb: the listener or what was just shown ("Love the colors!": a reaction), or
# a noun's conjunction ("Love and acceptance should be everyone's right": "love" is the subject)
_EN_NOT_AFTER_DROPPED_PRESENT = CONTEXT_WORDS | {"the", "and", "or", "is", "was", "can", "should", "will", "makes"}
_EN_CLEFT_RE = re.compile(
    r"^(?P<x>[^,;:]{3,80}?)\s+(?:is|are|has\s+been|have\s+been)\s+(?:something|one\s+thing|a\s+thing)\s+(?:that\s+)?"
    r"(?P<i>I(?:'m|'ve|\s+am|\s+have)?)\s+(?P<rest>[^,;:]+?)[.!]*$", re.I)
_EN_CLEFT_ENDS = frozenset(  # the last word of "… something I …": a verb or a stranded preposition
    """enjoy love like adore appreciate value cherish treasure miss need want do practice practise study
    pursue learn prefer hate dislike avoid try play make see visit read watch eat cook
    on about with without for in to into at of""".split())
_EN_CLEFT_VAGUE = frozenset("this that it which what there you your these those".split())
_EN_DROPPED_LEAD = frozenset("just finally also recently already never still".split())  # "Just got a puppy!"
_EN_DROPPED_GOING = {  # a plan without its "I'm", by the word after the verb (not "Heading out", "Starting to feel …")
    **dict.fromkeys(("heading", "flying", "moving", "travelling", "traveling"), ("to",)),
    **dict.fromkeys(("starting", "visiting"), ("a", "an", "my", "our", "the")),
    "thinking": ("of", "about"), "planning": ("to", "on", "a", "an", "my", "our"),  # "Thinking of going back to school"
    "working": ("on",), "looking": ("for",),  # "Still working on opening a dance studio", "Looking for a new flat"
}
_EN_FINITE_RE = re.compile(  # a verb after an -ing phrase makes the phrase its subject
    r"\b(?:is|was|are|were|has|have|had|takes|took|makes|made|gives|gave|means|meant|helps|helped|feels|felt"
    r"|can|could|will|would|should|must|seems|seemed)\b", re.I)
_EN_BEEN_TO_RE = re.compile(r"(?:(?:only|just|never|also|once|twice)\s+)?to\s+(?!be\b|do\b|say\b)\w", re.I)
_EN_REMINDS_ME_RE = re.compile(r"^(?:it\s+|that\s+|this\s+|which\s+)?(?:always\s+|really\s+)?reminds?\s+me\s+"
                               r"(?:(?:that|how\s+much|of\s+how\s+much)\s+)?(?=(?:i|i'm|i've|it's|my|we)\b)", re.I)
_EN_REMINDS_HOW_RE = re.compile(r"^(?:it\s+|that\s+|this\s+)?(?:always\s+|really\s+)?(?:reminds?|made|makes)\s+me\s+"
                                r"(?:realize\s+|realise\s+|remember\s+)?(?:of\s+)?how\s+much\s+(?=i\s+(?:love|like|enjoy|adore|miss)\b)",
                                re.I)
_EN_VAGUE_MY_RE = re.compile(r"\b(?:my|me)\s+(?:thing|stuff|jam|way|bad|pleasure|day|mind|heart|god|gosh)\b|on\s+my\s+own"
                             r"|\b(?:it's|that's)\b|^(?:it|that)\b", re.I)
_EN_LINK_VERBS = frozenset("is are was were has have had brings helps makes gives keeps means reminds".split())
_EN_PLURAL_LINK_VERBS = frozenset("bring help make give keep mean remind".split())  # "X and Y keep me …"


# a verb with its particle that says a whole event ("My girlfriend and I broke up")
_EN_WHOLE_PREDICATES = frozenset(
    ("broke up", "split up", "passed away", "moved out", "moved in", "moved away", "got married", "got engaged",
     "got divorced", "got promoted", "got hired", "got fired", "got laid off")
)
_EN_NEG_RE = re.compile(r"\s+not\b|n't\b|\s+never\b|\s+no\s+longer\b", re.I)

def _negates_slot(s: str, ctx: Ctx) -> bool:
    """"I don't live in Berlin", "我不住在北京": a plain negation of what a slot rule reads is no
    memory (a stated change is read by `changes`); "I can't eat gluten" is a statement."""
    from engram.extract.facts_en import en_fact
    from engram.extract.facts_zh import zh_fact
    from engram.extract.habits import habit
    from engram.extract.tasks import task

    if ctx.lang == "zh":
        if "不" not in s and "没" not in s:
            return False
        return bool(zh_fact(re.sub(r"不是|不再|不|没有|没", lambda m: "是" if m.group() == "不是" else "", s, count=1), ctx))
    if not _EN_NEG_RE.search(s):
        return False
    pos = re.sub(r"\b(?:don't|doesn't|didn't|do\s+not|does\s+not)\s+", "", s, count=1, flags=re.I)
    pos = re.sub(r"(\b(?:'m|am|is|are))\s+not\b", r"\1", pos, count=1, flags=re.I).replace("'m not", "'m")
    return pos != s and any(rule(pos, ctx) for rule in (en_fact, habit, task))


_EN_MADE_ME_RE = re.compile(
    r"^(?:it|that|this|which)(?:'s|\s+has)?\s+(?:really\s+|also\s+|even\s+)?(?:made|makes|make)\s+me\s+(?:even\s+more\s+)?"
    r"(?P<verb>[a-z]+)\s+(?P<rest>.+)$",
    re.I,
)
_EN_VOCATIVE_RE = re.compile(r"^[A-Z][a-z]+,\s+(?=[a-z]|I\b|I'|My\b|We\b)")
# a noun a person or pet is named by: one word, but for the pets of two ("my guinea pig")
_EN_NOUN = "|".join([*(w.replace(" ", r"\s+") for w in sorted(PETS_EN, key=len, reverse=True) if " " in w), "[a-z]+"])
_EN_INTRODUCED_RE = re.compile(rf"\b(?:a|an|my|our|new|little|baby)\s+({_EN_NOUN})")
_EN_TRAIL_VOCATIVE_RE = re.compile(r"\s*,\s*(?:[A-Z][a-z]+|take\s+a\s+look|check\s+(?:it\s+)?out|look|see)\s*$")
_EN_PHOTO_RE = re.compile(
    r"^(?:here's|here\s+is|this\s+is|check\s+out|look\s+at)\s+(?:a|the|this|my|one)?\s*(?:photo|pic|picture|snap|shot)s?"
    r"\s+(?:of|from)\s+(?P<x>.+)$",
    re.I,
)
_EN_EMOJI_SPLIT_RE = re.compile(f"[{EMOJI}]+\\s+(?=(?:I|My|We)\\b)")
_EN_SINCE_RE = re.compile(r"^(?:ever\s+since|since|because|'cause|after|now\s+that|once)\s+(?=(?:i|we|my)\s)", re.I)
_EN_SINCE_TALK_RE = re.compile(r"^(?:ever\s+)?since\s+(?:we|i)\s+(?:last\s+)?(?:spoke|talked|chatted|caught\s+up|met|saw\s+"
                               r"each\s+other)\b(?:\s+last)?[^,]{0,30}(?:,\s*|$)", re.I)
_EN_SINCE_LAST_RE = re.compile(r"\s+since\s+(?:our\s+last\s+(?:chat|talk|conversation|call)|we\s+last\s+(?:spoke|talked|chatted))\b",
                               re.I)  # "Been running longer since our last chat": the talk is no part of the fact
_EN_ABOUT_RE = re.compile(r"\s+(?:about|around|roughly|almost|nearly|over|like|some|just)$", re.I)


# "started when I was young" with nothing started: what, the sentence before says
_EN_BEGAN_BARE_RE = re.compile(
    r"^(?P<v>started|began)\s+(?=(?:when|as\s+a|at\s+(?:age|\d)|in\s+(?:\d{4}|high|college|school|middle|grade)|back|around"
    r"|during|after|before|since|about|over|young|early|last|this|a\s+few|\w+\s+(?:years?|months?)\s+ago)\b)", re.I)
_EN_DOES_RE = re.compile(r"^User (?:also |still |now )?(?P<v>[a-z]+)(?: (?P<what>[^,;]+?))?\.?$")


def _what_began(ctx: Ctx) -> str | None:
    """What the sentence before said the user does, as begun: "User plays clarinet." → "playing clarinet"."""
    prev = ctx.memo.get("prev_fact") if ctx.memo is not None else None
    m = _EN_DOES_RE.match(prev.content) if prev is not None else None
    doing = gerund(m.group("v")) if m else None
    return " ".join(filter(None, (doing, m.group("what")))) if m and doing else None


# what an owned noun is for or of, before its verb: "my budget [for the trip] is …", "my goal [for this year] is …"
_EN_OWN_OF_RE = re.compile(
    r"^(?P<of>(?:for|of|at|in|on|with|to)\s+(?:(?:the|this|that|my|our|a|an|next)\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)"
    r"\s+(?=(?:is|are|was|were|will\s+be|has\s+been)\s)", re.I)
_EN_BEFORE_NOW_RE = re.compile(r"\b(?:ago|last)\b", re.I)  # ("this year": no year gone by)
# the year or month `en_valid_from` leaves in a statement ("… in 2023", "… from November 2026")
_EN_NAMED_YEAR_RE = re.compile(r"\s+(?:in|from|since|during|as\s+of|starting)\s+(?:[A-Z][a-z]+\s+)?\d{4}\b")
_EN_TIME_PREP_RE = re.compile(r"\s+(?:from|since|during|as\s+of|starting)$", re.I)


def en_valid_from(text: str, ctx: Ctx) -> tuple[str, object]:
    """`text` without a relative time phrase, and when it says the thing happened. A year or
    month stays in the words, as the one it names ("started transitioning three years ago" →
    "started transitioning in 2023", said in 2026): the date kept beside a memory is a day, and "three years
    ago" is no day; "yesterday" goes, the memory's date says it."""
    r = find_range(text, ctx.now)
    if r is None:
        return text, None
    if _EN_TIME_REL.search(r.text):
        a, b = r.span
        head = _EN_ABOUT_RE.sub("", text[:a].rstrip(" ,"))  # "about five years ago": "about" goes too
        named = absolute_when(r.text, "en", ctx.now) if _EN_BEFORE_NOW_RE.search(r.text) else r.text
        if named == r.text:
            head = _EN_TIME_PREP_RE.sub("", head)  # "a stress fracture from last year": "from" goes with it
            named = ""
        elif _EN_TIME_PREP_RE.search(head):
            named = named.replace(" in ", " ", 1)  # "a stress fracture from last year" → "… from 2025"
        rest = text[b:].lstrip()
        joint = ", " if rest.startswith(",") and rest.strip(" ,") else " "  # "…Paris last week, it was amazing"
        text = (head + named + joint + rest.lstrip(" ,")).strip()
    return text, r.start


def _en_kind(pred: str) -> tuple[Kind, str]:
    """The kind of statement a predicate (after the subject) makes, and why."""
    words = pred.lower().split()
    while len(words) > 1 and words[0] in _EN_ADVERBS:
        words = words[1:]  # "just got back": the verb decides
    first = words[0] if words else ""
    if _EN_PLAN_RE.match(pred) or first in ("will", "'ll", "plan", "plans") or pred.lower().startswith("want to"):
        return Kind.EVENT, "plan"
    if first in ("love", "loves", "like", "likes", "enjoy", "enjoys", "prefer", "prefers", "believe", "believes"):
        return Kind.PREFERENCE, "opinion"
    if first in EN_IRREGULAR_PAST or (first.endswith("ed") and not first.endswith("eed") and len(first) > 3):
        return Kind.EVENT, "event"
    if first in ("has", "have", "'ve") and len(words) > 1 and (
            words[1] in EN_IRREGULAR_PAST or words[1].endswith("ed") or words[1] == "just"):
        return Kind.EVENT, "event"
    return Kind.FACT, "statement"


# a predicate of one word that says it all: a state of anyone's ("is vegan", "my knee hurts"), and
# what befell someone or something of the user's ("my laptop broke"; the user's own "I won" is too little)
_EN_ONE_WORD_STATES = frozenset("vegan vegetarian pregnant married retired divorced engaged single sober hurts aches".split())
_EN_TRIED = frozenset("has have had tried really already honestly".split())
_EN_ONE_WORD_EVENTS = frozenset("broke died crashed arrived failed leaked flooded graduated won recovered".split())
# what a thing of the user's does on a date: "my lease ends in June", "my contract expires in May"
_EN_THING_DATES = frozenset("ends ended expires expired begins began renews renewed runs".split())


def _en_ok_predicate(pred: str, *, strict: bool = True) -> bool:
    """A predicate that states something on its own: not a mental aside, not a context-only object."""
    words = [w.strip(",.!") for w in pred.lower().split()]
    if set(re.split(r"[,;]", pred.lower(), maxsplit=1)[0].split()) <= _EN_TRIED:
        return False  # "I've tried, but it's still hard …": what was tried is not said
    if len(words) == 1 and not strict and words[0] in _EN_ONE_WORD_EVENTS:
        return True  # "My laptop broke.", "My sister graduated!": what befell someone or something of theirs
    if len(words) < 2 and not (words and words[0] in _EN_ONE_WORD_STATES):
        return False
    if words in (["hurts"], ["aches"]):
        return True  # "My knee hurts."
    if " ".join(words) in _EN_WHOLE_PREDICATES:
        return True  # "broke up", "passed away": a verb and its particle say it all
    if len(words) > _MAX_EN_WORDS or words[-1] in _EN_BAD_END:
        return False
    if _EN_RESOLVE_RE.search(" ".join(words)):
        return False  # "won't quit", "will keep going", "do my best", "make it work": encouragement, not a fact
    if 1 < len(words) <= 3 and words[1] in ("it", "this", "that", "them", "these", "those", "it,") \
            and words[0] not in _EN_LIGHT_VERBS:
        return False  # "painted it", "loved this": what it is was said before
    # "gave up", "go there": the verb alone says nothing; "has a headache", "is at home right now": too little
    words = [w for w in words if w not in _EN_ADVERBS and w not in _CONTEXT_ONLY]
    after = content_words(" ".join(words[1:]) or "x") - {"x"}
    light = not words or (words[0] in _EN_LIGHT_VERBS and not (len(words) > 1 and (
        words[1] in EN_IRREGULAR_PAST or words[1] in ("been", "never") or words[1].endswith("ed"))))
    return bool(after) and (len(words) < 3 or not light or not strict or len(after) >= 2)


def _en_predicate_after_i(rest: str, contr: str) -> str | None:
    """The predicate of "I …" in the third person ("'m" → "is", "go" → "goes"); None for chatter."""
    rest = rest.strip()
    words = rest.split()
    if not words:
        return None
    low = [w.lower().strip(",") for w in words]
    if low[0][:1].isdigit() or (low[0] in ("am", "was") and len(low) > 1 and (
            low[1][:1].isdigit() or low[1] in _EN_YOUNG)):
        return None  # "I'm 2", "I'm 100% sure", "I'm 5 minutes away": the age rule reads ages
    if contr.lower() == "'m" and len(words) == 1 and words[0][:1].isupper():
        return None  # "I'm Caroline": the name rule decides about names
    if contr:
        be = {"'m": "is", "'ve": "has", "'ll": "will"}[contr.lower()]
        if contr.lower() == "'m" and not _en_ok_adjective(low):
            return None
        return be + " " + rest
    n_adv = 0
    while n_adv < len(low) - 1 and low[n_adv] in _EN_ADVERBS:
        n_adv += 1
    adv, words, low = words[:n_adv], words[n_adv:], low[n_adv:]
    head = low[0]
    lead = " ".join(adv) + " " if adv else ""
    if head == "am":
        if not _en_ok_adjective(low[1:]):
            return None
        return lead + "is " + " ".join(words[1:])
    if head in ("need", "have") and len(low) > 2 and low[1] == "to" and (low[2] in _EN_NEED_CHATTER or len(low) < 4):
        return None  # "I have to go now, talk later!", "I need to think about it": the exchange, no task
    if head == "need" and low[1:2] == ["to"]:  # "I need to renew my passport": a task with no date yet
        if CONTEXT_WORDS.intersection(w.strip(",.!") for w in low[3:]):
            return None  # "I need to finish this by tomorrow": what "this" is was said before
        return lead + "needs " + " ".join(words[1:])
    if head in ("have", "do", "don't", "doesn't"):
        if head in ("do", "don't") and len(low) > 1 and low[1] in _EN_CHATTER - {"like", "love", "enjoy"}:
            return None
        return lead + third_verb(words[0]) + " " + " ".join(words[1:])
    if head in _EN_AUX_WORDS or head == "was":
        nxt = low[1] if len(low) > 1 else ""
        if nxt in _EN_CHATTER or (head in ("can't", "cannot") and nxt in ("wait", "believe", "imagine", "stop")):
            return None
        if head == "was" and nxt in _EN_CHATTER_ADJ | {"thinking", "wondering", "going", "gonna", "just"}:
            return None
        return lead + " ".join(words)
    if head in _EN_LIKES and len(low) > 2 and low[1] not in PRONOUN_START - {"being", "doing"} \
            and not CONTEXT_WORDS.intersection(low):
        return third_verb(words[0]) + " " + " ".join(words[1:])  # what the preference rule left: "love being around friends"
    if head in ("hope", "aim", "intend") and len(low) > 3 and low[1] == "to" and low[2] not in _EN_HOPE_CHATTER:
        return lead + third_verb(words[0]) + " " + " ".join(words[1:])  # "I hope to build my own family": a goal
    if head in _EN_CHATTER or head.endswith("ing") or not head.isalpha():
        return None  # "I know…", "I loving it", "I do- Oscar"
    past = head in EN_IRREGULAR_PAST and not (head in _EN_SAME_PAST and _en_habitual(low, adv))
    verb = words[0] if past else third_verb(words[0])
    return lead + verb + (" " + " ".join(words[1:]) if len(words) > 1 else "")


# verbs whose past is their present ("I read", "I put"): a habit when said like one
_EN_SAME_PAST = frozenset("read put cut hit let set cost hurt quit spread bet".split())
_EN_HABIT_MARKS = frozenset("mostly usually often always only sometimes never rarely generally every each daily nightly "
                            "weekly regularly".split())
_EN_PAST_MARKS = frozenset("yesterday last ago once when earlier already just".split())


def _en_habitual(low: list[str], adv: list[str]) -> bool:
    """"I (only) read on my Kindle", "I read mostly sci-fi": said as a habit, not as what happened."""
    said = {w.lower() for w in adv} | set(low)
    per = any(a in ("a", "per") and b.strip(".,!") in ("day", "week", "month", "year", "night")
              for a, b in zip(low, low[1:], strict=False))  # "40 books a year"
    return (per or bool(said & _EN_HABIT_MARKS)) and not (said & _EN_PAST_MARKS)


def _en_ok_adjective(low: list[str]) -> bool:
    """After "I'm": a state worth keeping, not "glad", "sure", "so happy for…"."""
    words = [w for w in low if w not in ("so", "really", "very", "super", "totally", "just", "also", "still",
                                          "pretty", "quite", "kinda", "a", "bit", "little", "too", "always", "not")]
    if not words:
        return False
    if words[0] == "thinking" and len(words) > 2 and words[1] in ("about", "of") and words[2].endswith("ing"):
        return True  # "We're thinking about going camping next month": a plan
    if words[0] in _EN_EMOTIONS:  # "I'm excited to mentor dancers", "proud of my kids"; not "I'm so excited!"
        return len(words) > 2 and words[1] in ("to", "about", "of", "for", "and", "with", "by", "seeing", "knowing")
    if words[0] in ("glad", "happy", "lucky", "blessed") and len(words) > 3 and words[1:3] == ["to", "have"]:
        return True  # "I'm so glad to have something that brings me joy"; not "I'm glad to hear that"
    return words[0] not in _EN_CHATTER_ADJ and words[0] not in ("thinking", "wondering", "feeling",
                                                                  "sorry", "saying", "talking", "kidding", "gonna")


def unclefted(s: str, lang: str) -> str:
    """A clause that fronts what it is about, said the plain way round: "Cooking is something I
    really enjoy" → "I really enjoy cooking", "Building a brand is something I'm always working on"
    → "I'm always working on building a brand" (then read by every rule). Not "That is something
    I …": a pronoun in front says nothing by itself."""
    if lang == "en" and (reminded := _EN_REMINDS_HOW_RE.match(s)) is not None:
        return s[reminded.end():]  # "Reminds me how much I love performing": "I love performing", for every rule
    cleft = _EN_CLEFT_RE.match(s) if lang == "en" else None
    if cleft is None or cleft.group("x").split()[0].lower() in _EN_CLEFT_VAGUE:
        return s
    if cleft.group("rest").split()[-1].lower() not in _EN_CLEFT_ENDS:
        return s  # the fronted words go where the verb left a gap, not after "since college"
    x = cleft.group("x")
    return f"{cleft.group('i')} {cleft.group('rest')} {x[0].lower()}{x[1:]}"


def name_beside_kin(sentence: str) -> str:
    """A name set beside "my wife" with commas, said the way the rules read it: "Anna, my wife,
    is a doctor" and "My wife, Anna, is a doctor" → "My wife Anna is a doctor" (the name was
    lost, or kept with a stray comma). Only a relative, friend or pet (`_EN_OWNED`)."""
    again = _EN_KIN_NAME_AGAIN_RE.match(sentence)
    if again and again.group("who").split()[-1].lower() in _EN_OWNED and again.group("name").lower() not in _EN_NOT_A_NAME:
        # "My neighbor Xiaohong, she also loves hide and seek": the "she" is the one just named
        rest = again.group("rest")
        if rest.startswith("'s"):  # ("he's so funny", "she's been promoted")
            rest = (" has" if re.match(r"'s\s+(?:been|got|gotten|had)\b", rest) else " is") + rest[2:]
        return f"{again.group('my').capitalize()} {again.group('who')} {again.group('name')}{rest}"
    alone = _EN_NAME_KIN_ALONE_RE.match(sentence) or _EN_KIN_NAME_ALONE_RE.match(sentence)
    if alone and alone.group("who").split()[-1].lower() in _EN_OWNED \
            and not {alone.group("name").lower(), alone.group("who").split()[0].lower()} & _EN_NOT_A_NAME:
        # "Oscar, my guinea pig." / "My hamster Oscar." (an answer): "Oscar is my guinea pig."
        return f"{alone.group('name')} is {alone.group('my').lower()} {alone.group('who')}."
    m = _EN_NAME_FIRST_RE.match(sentence) or _EN_KIN_FIRST_RE.match(sentence)
    if (
        m is None or m.group("who").split()[-1].lower() not in _EN_OWNED
        or any(n.lower() in _EN_NOT_A_NAME for n in re.split(r",? and |, ", m.group("name")))
        or m.group("rest").split()[0].lower() in _EN_NOT_A_NAME
    ):  # "Yes, my friend, I agree": a greeting to the friend, not the friend's name
        return sentence
    return f"{m.group('my').capitalize()} {m.group('who')} {m.group('name')} {m.group('rest')}"


_EN_NOT_A_NAME = frozenset(
    "yes no yeah yep nope well thanks thank ok okay sorry hey hi hello oh so and but please wow "
    "i i'm i've you you're we we're they it it's that that's this there what".split()
)
_EN_NAME_FIRST_RE = re.compile(
    r"^(?P<name>[A-Z][a-z]+), (?P<my>my|our) (?P<who>(?:[a-z]+ ){0,2}[a-z]+), (?P<rest>[^,].*)$", re.I)
_EN_NAME_KIN_ALONE_RE = re.compile(r"^(?-i:(?P<name>[A-Z][a-z]+)), (?P<my>my|our) (?P<who>(?:[a-z]+ ){0,2}[a-z]+)[.!]*$", re.I)
_EN_KIN_NAME_ALONE_RE = re.compile(r"^(?P<my>my|our) (?P<who>(?:[a-z]+ ){0,2}[a-z]+) (?-i:(?P<name>[A-Z][a-z]+))[.!]*$", re.I)
_EN_KIN_NAME_AGAIN_RE = re.compile(
    r"^(?:(?:oh|and|so|well|also|btw),?\s+)?(?P<my>my|our) (?P<who>(?:[a-z]+ ){0,2}[a-z]+) (?P<name>(?-i:[A-Z][a-z]+)),? "
    r"(?:she|he)(?P<rest>(?:'s|\s).+)$", re.I)
_EN_KIN_FIRST_RE = re.compile(  # (or several: "My twins, Mia and Leo, turn four")
    r"^(?P<my>my|our) (?P<who>(?:[a-z]+ ){0,2}[a-z]+), (?P<name>(?-i:[A-Z][a-z]+)(?:(?:, and |, | and )(?-i:[A-Z][a-z]+))*), "
    r"(?P<rest>[^,].*)$", re.I)


def with_it_named(sentence: str) -> list[str]:
    """A sentence that says what something is and then, after a comma or a dash, what "it" does
    for the speaker, as two sentences with the thing named in the second: "Clay is incredible,
    it brings me so much joy!" → "Clay is incredible." / "Clay brings me so much joy!" (each then
    read on its own). Only a plain noun phrase in front ("Pottery", "Contemporary dance"), not a
    pronoun or "my …"; any other sentence comes back as it was."""
    m = _EN_IT_AFTER_RE.match(" ".join(sentence.split())) if len(sentence) <= _IT_MAX_CHARS else None
    if m is None or m.group("np").split()[0].lower() in _EN_IT_NOT_NAMED:
        return [sentence]
    np_, verb = m.group("np"), m.group("verb").strip()
    if verb == "'s":  # "it's been …": has; "it's how …": is
        verb = "has" if m.group("rest").lstrip().startswith("been") else "is"
    return [f"{np_} {m.group('be')} {m.group('pred').strip()}.", f"{np_} {verb}{m.group('rest')}"]


_EN_IT_AFTER_RE = re.compile(  # on text with single spaces: no run for two parts to share
    r"^(?P<np>[A-Za-z][a-z]+(?: [a-z]+){0,2}?) (?P<be>is|was|has been) (?P<pred>[^ ;.!?][^;.!?]*?)"
    r"(?:,| [-–—]+) (?:(?:and|so) )?it(?P<verb>'s| (?:(?:really|always|just|also|truly) )?[a-z]+s)\b"
    r"(?P<rest>[^;]*)$",
    re.I,
)
_IT_MAX_CHARS = 600  # the rules mine no longer sentence
_EN_IT_NOT_NAMED = frozenset(
    "it this that there here he she they you i we my our your his her their what which who everything "
    "something nothing anything everyone someone life today tonight".split()
)


def _en_dropped_subject(s: str) -> str | None:
    """A chat sentence that leaves out its "I" (`s` opens it, after any "Also," or "Finally,"),
    with it put back; None when it does not read as one: "Took a trip to Rome", "Been running
    longer", "Just got some new shoes", "Been only to Rome once", "Heading to Paris tomorrow".
    After at most one adverb of time: a past form, one of a few present verbs that never start
    an imperative to someone ("Appreciate our friendship!"), or a plan's -ing before a named place
    or a determiner; "Got any tips" or "Keep it up!" stay unread."""
    words = s.split()
    if len(words) < 2:
        return None
    lead = words[0].lower() in _EN_DROPPED_LEAD and len(words) > 2
    if words[lead].isupper() and len(words[lead]) > 1:
        return None  # "SAT scores came out": a name in capitals, no verb
    verb, after = (w.lower().strip(",") for w in words[lead : lead + 2])
    if (
        verb in _EN_DROPPED_SUBJECT_VERBS
        or (verb in _EN_DROPPED_SUBJECT_BEFORE_OBJECT and after in ("a", "an", "my", "our", "some", "the", "that"))
        or (verb == "got" and after in _EN_GOT_WHAT)
        or (not lead and verb in _EN_DROPPED_SUBJECT_PRESENT and after not in _EN_NOT_AFTER_DROPPED_PRESENT)
    ):
        return "I " + s[0].lower() + s[1:]
    if verb == "been" and (after.endswith("ing") or _EN_BEEN_TO_RE.match(" ".join(words[lead + 1 :]))):
        return "I've " + s[0].lower() + s[1:]  # "Been only to Rome once", "Been reading a lot"
    if (
        after in _EN_DROPPED_GOING.get(verb, ())
        and (after != "to" or verb == "planning" or words[lead + 2 : lead + 3] and words[lead + 2][:1].isupper())
        and words[lead + 2 : lead + 3] and words[lead + 2].lower().strip(",.!") not in ("you", "your", "it", "that", "this")
        and not _EN_FINITE_RE.search(" ".join(words[lead + 1 :]))
    ):  # "Heading to Paris tomorrow" (a place named, not "to bed"); not "Starting a business takes courage"
        return "I'm " + s[0].lower() + s[1:]
    return None


def _commented_on(found: list[Candidate] | None, ctx: Ctx) -> list[Candidate] | None:
    """`found`, remembered as what the next sentence's "It's …" may comment on."""
    if found and len(found) == 1 and ctx.memo is not None:
        ctx.memo["last_fact"] = found[0]
    return found


# "my target weight is …", "my monthly rent was …": the owned noun is the second word
_EN_THEIR_VIEW_OF_ME_RE = re.compile(
    r"^(?:thinks|thought|believes|believed|says|said|feels|felt|wants|wanted|reckons)\s+(?:that\s+)?(?:i|me)\b", re.I)
_EN_TWO_WORD_OWN_RE = re.compile(r"^((?-i:[a-z])[a-z-]+)\s+(?=(?:is|are|was|were)\s+\S)", re.I)  # (not a name: "my uncle Tom is …")


_EN_BEST_PART_RE = re.compile(
    r"^the\s+(?P<part>highlight|best\s+part|worst\s+part|hardest\s+part|funniest\s+part|favou?rite\s+part|low\s+point)"
    r"(?:\s+(?:of|for)\s+(?P<of>(?:the|my|our)\s+[\w' -]{1,30}?))?\s+(?P<be>was|is|has\s+been)\s+(?P<what>.+)$",
    re.I,
)


def _en_statement(s: str, ctx: Ctx) -> list[Candidate] | None:
    # the clause opens its sentence (before "Also," was cut): a subject left out can only be "I"
    opens = s.strip()[:1].isupper() or bool(ctx.memo and ctx.memo.get("opens"))
    s = _EN_VOCATIVE_RE.sub("", _EN_LEAD_RE.sub("", s.strip()).strip())  # "Gina, thanks for …" → "thanks for …"
    s = _EN_GLAD_LEAD_RE.sub("", s)
    if not s:
        return None
    firm = _EN_FIRM.match(s)
    if firm:
        rest = _en_concise(firm.group("rest"))
        if not _en_ok_predicate("x " + rest):
            return None
        link = " " if rest.lower().startswith("in ") else " that "
        return [candidate(ctx, Kind.PREFERENCE, as_sentence("User firmly believes" + link + en_rest(rest)),
                          None, None, "firm opinion")]
    s = _EN_EMOJI_SPLIT_RE.split(s)[-1]  # "Inspiring 💪 I emailed some wholesalers": the statement after the emoji
    s = _EN_SINCE_RE.sub("", _EN_SINCE_TALK_RE.sub("", _EN_SINCE_LAST_RE.sub("", s)))  # "Since I lost my job, …"; not "Since we last spoke, …"
    if not s:
        return None
    best = _EN_BEST_PART_RE.match(s)
    if best:  # "The highlight was a tea ceremony in Kyoto": what stood out for the user
        what = _they(we_rest(_en_concise(best.group("what"))))
        if _YOU_RE.search(what) or not content_words(what) or CONTEXT_WORDS.intersection(what.lower().split()[:1]):
            return None
        part = best.group("part").lower() + (f" of {en_rest(best.group('of'))}" if best.group("of") else "")
        return [candidate(ctx, Kind.EVENT if best.group("be").lower() == "was" else Kind.FACT,
                          as_sentence(f"For User, the {part} {best.group('be').lower()} {what}"), None, None,
                          "what stood out for the user")]
    photo = _EN_PHOTO_RE.match(s)
    if photo:  # "Here's a photo of my horse painting I did recently"
        what = _they(we_rest(_en_concise(photo.group("x"))))
        if _YOU_RE.search(what) or len(what.split()) > 14 or not content_words(what):
            return None
        return [candidate(ctx, Kind.EVENT, as_sentence("User shared a photo of " + what), None, None, "shared photo")]
    made = _EN_MADE_ME_RE.match(s)
    if made:  # "It's made me appreciate how lucky I am to have my friends" → "User appreciates how lucky …"
        verb = made.group("verb").lower()
        if verb in _EN_CHATTER - {"appreciate", "realize", "realise"} or verb in ("feel", "smile", "laugh", "cry", "think", "want", "wanna"):
            return None
        what = _they(we_rest(_en_concise(made.group("rest"))))
        if _YOU_RE.search(what) or not _en_ok_predicate(verb + " " + what):
            return None
        return [candidate(ctx, Kind.FACT, as_sentence(f"User {third_verb(verb)} {what}"), None, None, "what moved the user")]
    reminded = _EN_REMINDS_ME_RE.match(s)
    if reminded and reminded.end() < len(s):  # "Reminds me how much I love performing" → "I love performing"
        return statement(s[reminded.end():], ctx)
    held = _EN_I_HOLD_RE.match(s)  # "I feel it's important to help …", "I think taking risks is key": the view itself
    view = opinion(s[held.end():] if held else s, ctx)
    if view:  # "Guidance and support can help dancers shine": the user's view
        return _commented_on(view, ctx)
    prev = ctx.memo.get("prev_fact") if ctx.memo is not None else None
    if prev is not None and _EN_COMMENT_RE.match(s) and not s.lower().startswith("which"):
        said = _en_comment(s)  # "I went to a council meeting. It was inspiring and emotional."
        if said and len(prev.content.split()) + len(said.split()) <= 32:
            prev.content = prev.content.rstrip(".!") + "; " + said + "."
            ctx.memo.pop("prev_fact", None)
            return []
    lead = _EN_LEAD_TIME_RE.match(s)
    if lead:  # "Last weekend I went camping" → "I went camping last weekend"
        t = lead.group("t")
        rest = s[lead.end():]
        comma = rest.find(", ")  # it goes with the first clause: "…with my cousin last time, it was thrilling"
        at = comma if comma > 0 else len(rest)
        s = rest[:at] + " " + t[0].lower() + t[1:] + rest[at:]  # (not "… to Berlin In May")
    m = _EN_SUBJ_RE.match(s)
    if m is None:
        said = _en_dropped_subject(s) if opens else None
        if said is None:
            return _commented_on(_en_about_me(s, ctx), ctx)
        from engram.extract.facts_en import en_fact  # (facts_en reads statements: imported here, as above)

        keyed = en_fact(said, ctx)  # "Just moved to Vancouver for work": where the user lives now
        if keyed:
            return keyed
        s = said
        m = _EN_SUBJ_RE.match(s)
    rest = s[m.end():].strip()
    memo = ctx.memo if ctx.memo is not None else {}
    other = None
    we_habit = False
    if m.group("pair"):
        who = (m.group("pw") or "").lower()
        named = f" {m.group('pn')}" if m.group("pn") else ""  # "My husband Raj and I …"
        subject = f"User and their {who}{named}" if who else f"User and {m.group('pw2')}"
        if (m.group("pw2") is None and who not in _EN_PEOPLE) or (m.group("pw2") and m.group("pw2") in _EN_NO_PLACE):
            return None  # ("Sunday and I …" names no one)
        pred = rest
    elif m.group("i") or m.group("we"):
        subject = "User"
        contr = m.group("ic") or ""
        if m.group("we"):
            if _EN_WE_ALL_NOW_RE.match(rest) or (m.group("wc") and _EN_WE_ALL_ARE_RE.match(rest)):
                return None  # "We all have unique paths", "We're all wonderfully imperfect": everyone
            rest = re.sub(r"^(?:all|both)\s+", "", rest, flags=re.I)  # "we all went …", "we both helped …"
            contr = {"'re": "'m"}.get((m.group("wc") or "").lower(), m.group("wc") or "")
            if rest.lower().startswith("are "):
                rest = "am " + rest[4:]
        pred = None
        if m.group("we") and not contr:
            first_words = rest.lower().split()[:2]
            if first_words and first_words[0] in ("love", "like", "enjoy", "adore", "prefer"):
                pred = third_verb(rest.split()[0]) + rest[len(rest.split()[0]):]  # "We love painting together"
            elif first_words and first_words[0] in _EN_FREQUENCY:
                we_habit = True
        if pred is None:
            pred = _en_predicate_after_i(rest, contr)
        if pred is None:
            return None
        with_whom = memo.get("other") if m.group("we") else None
        # "…my boyfriend Jake. We were together for three years." (a pet is no "we"; nor is the
        # person "we" do something to: "We're throwing him a party")
        if with_whom in _EN_PEOPLE and with_whom not in _EN_CHILDREN and not re.search(r"\b(?:him|her|them)\b", rest, re.I) \
                and (with_whom != memo.get("before") or with_whom in COUPLE_EN):  # (a couple: the next turn's "we")
            subject = f"User and their {with_whom}"
            pred = {"'re": "are ", "'ve": "have ", "'ll": "will "}.get((m.group("wc") or "").lower(), "") + rest
        elif m.group("we") and _EN_WE_MUTUAL_RE.match(
                {"'re": "are ", "'ve": "have "}.get((m.group("wc") or "").lower(), "") + rest):
            return None  # "We've been best friends since college": with whom, unsaid
        elif m.group("we") and pred.lower().startswith("were "):
            pred = "was " + pred[5:]  # (no one named: "User was …", not "User were …")
    elif m.group("poss"):
        own = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in m.group("own").split())  # ("MCAT")
        head = own.split()[-1].lower()
        if head not in _EN_OWNED:
            more = s[m.start("own"):].split()[:4]  # "my online clothes store is open": the owned noun comes later
            at = next((i for i, w in enumerate(more) if w.lower().strip(",.!") in _EN_OWNED), None)
            if at is not None and at > 0 and not m.group("own_s"):
                own = " ".join(more[: at + 1]).lower().strip(",.!")
                head = own.split()[-1]
                rest = s[m.start("own"):].split(None, at + 1)[-1] if len(more) > at + 1 else ""
            elif (two := _EN_TWO_WORD_OWN_RE.match(rest)) is not None and head not in _EN_NOT_OWNED \
                    and not m.group("own_s"):
                own, head = f"{own} {two.group(1).lower()}", two.group(1).lower()  # "my target weight is 70 kg"
                rest = rest[two.end():]
            elif head in _EN_BODY and rest and _EN_HURTS_RE.match(rest):
                pass  # "My knee hurts when I run": the user's knee
            elif (of := _EN_OWN_OF_RE.match(rest)) is not None and head not in _EN_NOT_OWNED and not m.group("own_s"):
                own, rest = f"{own} {of.group('of').lower()}", rest[of.end():]  # "my budget for the trip is …"
            elif head in _EN_NOT_OWNED or not rest or rest.split()[0].lower() not in _EN_SUBJECT_VERBS | _EN_ONE_WORD_EVENTS | _EN_THING_DATES:
                return None  # "my bad", "my god"; "my art is about …" goes on ("my laptop broke": what befell it)
        role = _EN_TWO_WORD_OWN_RE.match(rest) if head in _EN_GROUPS and not m.group("own_s") else None
        if role is not None and role.group(1).lower() in _EN_GROUP_ROLES:  # "my team lead is Marcus"
            own, head = f"{own} {role.group(1).lower()}", role.group(1).lower()
            rest = rest[role.end():]
        other = own
        subject = f"User's {own}" + ("'s" if m.group("own_s") else "")
        pred = rest
        if _EN_THEIR_VIEW_OF_ME_RE.match(pred):
            return None  # "My friend thinks I should quit": their view of the user, no fact of either
        if head in _EN_OWNED or head in _EN_GROUP_ROLES:
            memo["other"] = own  # ("team lead" over the "team" `note_referent` saw first)
            if (named := _EN_NAME_AFTER_KIN_RE.match(rest)) is not None:  # "My sister Emma lives in Denver, she's …"
                memo["named"] = {own: named.group(1)}
    else:
        prior = memo.get("other")
        if not prior:
            return None
        pron, pc = m.group("pron").lower(), (m.group("pc") or "").lower()
        both = _EN_KIN_AND_REST_RE.match(rest)  # "best friend Mia is allergic …": the kin word, then the rest
        kin = [both.group("k"), both.group("rest")] if both else rest.split(None, 1)
        if pron in ("her", "his", "their") and len(kin) == 2 and kin[0].lower().split()[-1] in _EN_PEOPLE | _EN_PETS \
                and (pron == "their") == (prior in EN_PLURAL_OWNED) \
                and pronoun_fits({"her": "she", "his": "he"}.get(pron, pron), prior):
            subject, rest = f"User's {prior}'s {kin[0].lower()}", kin[1]  # "His mom is being difficult …"
        elif pron in ("her", "his", "its", "their"):
            if not rest.lower().startswith(("name", "birthday")):
                return None
            subject = f"User's {prior}'s"
            rest = re.sub(r"^(name|birthday)'s\b", r"\1 is", rest, flags=re.I)
            if pc == "'s":
                rest = "is " + rest if rest.lower().startswith(("name ", "birthday ")) else rest
        else:
            head = prior.split()[-1]  # ("best friend", "team lead": who they are is the last word)
            alive = head in _EN_PEOPLE or head in _EN_PETS or head in _EN_GROUP_ROLES
            many = alive and head in EN_PLURAL_OWNED
            if (pron == "they" and not many) or pron == "it" or (pron in ("he", "she") and (not alive or many)) \
                    or not pronoun_fits(pron, prior):
                return None  # "it" is no person; "he"/"she" is no car; "she" is no brother
            name = (memo.get("named") or {}).get(prior)
            subject = f"User's {prior} {name}" if name else f"User's {prior}"  # "User's sister Emma is a vet."
            if pc == "'ll":  # "she'll study law"
                rest = "will " + rest
            elif pc == "'ve":
                rest = ("have " if many else "has ") + rest
            elif pc:
                has = re.match(r"(?:been|got|gotten|had)\b", rest, re.I)
                rest = ("has " if has else "is ") + rest if pc == "'s" and pron != "they" else "are " + rest
        other = prior
        pred = rest
    if other is None:
        for w in _EN_INTRODUCED_RE.findall(pred.lower()):
            if w in _EN_PETS or w in _EN_PEOPLE and w not in ("family", "fam", "team", "friends", "kids", "students"):
                memo["other"] = w  # "I just got a puppy!" → the next "her" is the puppy
        if ctx.memo is not None and "other" in memo:
            ctx.memo["other"] = memo["other"]
    pred = we_rest(_en_concise(pred, comment=True))
    pred = _they(pred)
    if other is None and memo.get("other"):  # "My mom lives in Pune and I call her every Sunday"
        pred = en_objects_named(pred, memo["other"])
    if other is None and not memo.get("other") and unnamed_object(pred):
        return None  # "I don't want to think about him": who he is was not said
    if ctx.memo and ctx.memo.get("place") and re.search(r"\bthere\b", pred):  # "…to Tokyo, I'll be there …"
        place = ctx.memo["place"]
        pred = _EN_THERE_RE.sub(lambda m: f"{m.group('to')} to {place}" if m.group("to") else f"in {place}", pred, count=1)
    if _YOU_RE.search(pred) and (then := _EN_AND_THEN_RE.search(pred)) is not None \
            and not _YOU_RE.search(pred[then.end():]):
        pred = pred[then.end():]  # "started doing what you said and posted my dance videos": what was done
    if _YOU_RE.search(pred) or not _en_ok_predicate(pred, strict=other is None):
        return None
    if other is None and _negates_slot(_en_concise(s), ctx):
        return None
    if subject == "User" and (began := _EN_BEGAN_BARE_RE.match(pred)):
        doing = _what_began(ctx)  # "Yeah, I play clarinet! Started when I was young": playing clarinet
        if doing is None:
            return None  # ("Started when I was 17": what, unsaid)
        pred = f"{began.group('v')} {doing} {pred[began.end():]}"
    kind, why = _en_kind(pred)
    words = pred.split()
    if m.group("we") and kind is Kind.FACT and not we_habit and (words or [""])[0].lower() in _EN_WE_DECIDE \
            and not (words[0].lower() in ("use", "uses") and len(words) > 1 and words[1][:1].isupper()):
        return None  # "we go with plan B": a group's decision, not the user's fact ("we use Python": a fact)
    if kind is not Kind.EVENT and EN_TRANSIENT_RE.search(pred):
        if not _EN_STANDING_NOW_RE.match(pred):
            return None  # "I'm so tired today": a mood of the moment
        pred = _EN_RIGHT_NOW_RE.sub("", pred)  # "pays 2100 right now for a 1br": what holds now, said as such
    pred, valid_from = en_valid_from(pred, ctx)
    pred = _EN_TAIL_TIME_RE.sub("", pred).strip(" ,")
    pred = _EN_DANGLING_RE.sub("", pred)  # "…diabetes, diagnosed [two years ago]": when is `valid_from`
    if not _en_ok_predicate(_EN_NAMED_YEAR_RE.sub("", pred), strict=other is None):
        return None  # ("quit in November 2026" says no more than "quit")
    if kind is Kind.EVENT and why == "plan":
        valid_from = None  # a plan's time is when it will happen, not when it was true
    content = as_sentence(f"{subject} {pred}")
    key, value = en_routine(pred) if other is None and kind is Kind.FACT and subject == "User" else (None, None)
    if ctx.relaxed:
        kind = Kind.FACT  # inside "remember …": a fact, as the user asked
    found = candidate(ctx, kind, content, key, value, why if other is None else f"{why} about the user's {other}",
                      valid_from=valid_from)
    if ctx.memo is not None:
        ctx.memo["last_fact"] = found  # type: ignore[assignment]
    return [found]


# a present that holds for a while ("pays 2100 right now", "rents a room at the moment"), unlike a
# state of the moment ("is so tired right now"): "right now" goes, the statement stays
_EN_STANDING_NOW_RE = re.compile(
    r"^(?:pays|rents|owns|drives|earns|makes|lives|works|uses|shares|studies|takes|commutes|runs)\b"
    r"(?!.*\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b)", re.I)
_EN_RIGHT_NOW_RE = re.compile(r"\s*,?\s+(?:right now|at the moment)\b")
_EN_KIN_AND_REST_RE = re.compile(r"^(?P<k>(?:best|older|younger|little|big|new|old|baby)\s+[a-z-]+)\s+(?P<rest>.+)$", re.I)
_EN_NAME_AFTER_KIN_RE = re.compile(r"^((?-i:[A-Z][a-z]+))\s+(?!and\b)[a-z]")
_EN_DANGLING_RE = re.compile(r",\s+(?:first\s+)?[a-z]+ed$")


# --------------------------------------------------------------------------- Chinese

# "我女儿小雨今年七岁": a name of up to three characters, before a word that goes on; none before
# anything else ("我老婆怀孕了" is no name "怀孕了")
_ZH_OTHER_RE = re.compile(rf"^我(?:们家|家|们)?(?:的)?(?P<own>(?:两个|两只|一个|大|小)?(?:{ZH_OWNED_RE}))"
                          rf"(?P<name>(?!今天|昨天|明天|最近|刚刚|已经|现在|说|让|告诉|觉得|主要|一般|平时|经常|总是|一直|还)[^\s，,的我你他她它]{{1,3}}?"
                          rf"(?=[是叫在每今去不也都很特最总刚已上下昨明前后会要得对有没喜说做当和跟从开包一两0-9])|)")
_ZH_PRONOUNS = "她他它"
# a clause that names its own subject: another person, a pronoun, the weather
_ZH_OWN_SUBJECT_RE = re.compile(
    rf"^(?:今天|昨天|明天|后来|现在|那天)?(?:他们|她们|它们|他|她|它|大家|别人|对方|人家|有人|{ZH_OWNED_RE}"
    rf"|下了?.{{0,3}}[雨雪]|刮.{{0,2}}风)")
# what a clause without a subject may go on to say of the person or pet named before it
_ZH_SAID_OF_RE = re.compile(r"^(?:今年|现在|已经|叫|名字叫|是|也|都|特别|很|每|在|刚|考|学|读|喜欢|爱|住|对(?![方面手])|经常|常常|总是|一直|平时|[一二两三四五六七八九十\d]+岁"
                             r"|(?:下个?月|下周|下星期|明天|后天|明年|这周|这个月)(?=.{0,4}(?:生日|结婚|考试|毕业|回来|出差|搬家|手术|面试)))")  # ("他下个月生日")
# … or what they want to do: a person named before ("我儿子今年高考，想考清华"); not a pet, nor a
# wish about them ("我养了一只猫，想给它起个名字" is the user's wish)
_ZH_THEIR_WISH_RE = re.compile(r"^(?:想|打算|准备)(?!.*[他她它])")
_ZH_PET_OBJ_RE = re.compile(rf"(?:{'|'.join(sorted(ZH_PETS + ZH_PET_BREEDS, key=len, reverse=True))})")
_ZH_HAS_WHO_RE = re.compile(rf"有(?:一|两|几)?[个位]?({ZH_OWNED_RE})$")
_ZH_SUBJ_RE = re.compile(r"^(?P<pre>[^我，,]{0,8}?)(?P<subj>我们|我)(?!的|们的|家的)")
_ZH_PRE_OK_RE = re.compile(
    r"(?:上周末|下周末|周末|最近|平时|现在|目前|这几天|那天|明年|今年|下个月|下周|明天|后天|以后|将来|比起.{1,6}|跟.{1,4}比"
    # a weekday or a part of the day: "周三晚上我们一起吃饭", "明天早上我去跑步"
    r"|(?:这|下|上|本)?个?(?:周|星期|礼拜)[一二三四五六日天](?:早上|上午|中午|下午|傍晚|晚上)?"
    r"|(?:今天|明天|后天|每天)?(?:早上|上午|中午|下午|傍晚|晚上))"
)
# a body part that hurts, the subject left out: the user's ("膝盖受伤了", "腰一直疼")
_ZH_BODY_RE = re.compile(
    r"^(?:膝盖|腰|腿|脚踝|脚|手腕|手指|手|胳膊|肩膀|背|脖子|颈椎|头|胃|肚子|牙|眼睛|嗓子|喉咙)"
    r"(?:又|也|还|一直|有点|有些|最近|经常|老是)*(?:受伤|疼|痛|骨折|扭伤|扭了|肿|不舒服|发炎)"
)
# what a clause without a subject says of the user's own plans and particulars ("…，目标是浙江大学",
# "…，专业是计算机"): the noun is one only a person has
_ZH_ATTRIBUTE_RE = re.compile(
    r"^(?:(?:目标|梦想|理想|专业|职业|工作|爱好|计划|预算|生日|星座|血型|身高|体重|学校|母校|公司|老家|家乡|英文名|网名|小名)"
    r"(?:是|在|定在|改成了?|换成了?)(?!什么|哪)|(?:身高|体重)(?:才|有|大概|差不多|只有)?[0-9一二三四五六七八九十百])"
)
# a part of the day or week, then how the user goes on ("…，晚上不吃主食", "…，周末也加班")
_ZH_WHEN_GO_ON_RE = re.compile(r"^(?:早上|上午|中午|下午|傍晚|晚上|平时|周末|每天|白天|工作日)"
                               r"(?=[不没也还都就只常很经总老]|做|学|看|练|背|写|读|跑|去|上)")  # ("…，晚上做真题")
_ZH_ADVISED_RE = re.compile(
    r"^(?:我的)?(?P<who>医生|大夫|牙医|营养师|心理医生|咨询师|教练|老师|导师)(?P<how>让|叫|建议|嘱咐|要求|说让|劝)我(?P<what>.+)$"
)
# "我们项目", "我们公司": what 我们 owns is the user's
_ZH_OUR_THINGS = "项目|公司|团队|部门|学校|小组|班|组|老板|领导|经理"
_ZH_OUR_THING_RE = re.compile(f"^(?:{_ZH_OUR_THINGS})")
_ZH_OUR_RE = re.compile(f"我们(?={_ZH_OUR_THINGS})")
_ZH_BUT_RE = re.compile(r"^(?:不过|但是|但|可是|而且|所以|然后)")
# how the speaker is, said without 我: "最近压力很大", "这段时间睡眠不太好"
_ZH_STATE_RE = re.compile(
    r"^(?:(?:最近|这几天|这段时间|这阵子|这些天|近来|一直)(?:工作|学习|生活)?|(?:新)?工作|学习|生活)(?:压力|心情|身体|睡眠|胃口|精神|状态|情绪)"
    r"(?:一直|也|都)?(?:有点|有些|很|特别|挺|比较|非常|不太|不是很|太|超级?|越来越)?"
    r"(?:大|好|差|不好|不错|糟|糟糕|低落|紧张|焦虑|一般|不稳定)"
)
# "数学是我的弱项", "北京是我的家乡": what the user's Y is
# ("小雨是我女儿": a kin word needs no 的)
_ZH_IS_MY_RE = re.compile(r"^(?P<x>[^，,。我你您他她它]{1,8}?)(?:就|也|一直)?是我(?P<lead>的|最大的|最喜欢的|最爱的|最好的)?"
                          r"(?P<y>[^的，,。！!？?\s了过着]{1,5})$")  # (a noun: not "…是我的朋友走了")
# what happened to a thing of the user's ("车上周被撞了", "钱包被偷了"): a short noun, then 被
_ZH_MY_THING_UNDERGOES_RE = re.compile(r"^[\u4e00-\u9fff]{1,4}?(?:昨天|今天|前天|上周|上个月|刚刚?|又|也)?被[\u4e00-\u9fff]{1,6}了")
_ZH_NOT_A_TOPIC_RE = re.compile(r"^(?:这|那|哪|谁|什么|怎么|为什么|它|其实|可能|应该|不|可是|但是|但|不过|所以|因为|而且)|[吗呢？?]")
# "还有不到三周": how long until something, no statement about the user
ZH_COUNTDOWN_RE = re.compile(r"^还(?:有|剩|差)(?:不到|差不多|大概|将近|就)?[0-9一二两三四五六七八九十几半]+个?(?:天|周|星期|礼拜|月|年|小时|分钟)")
_ZH_GO_ON_RE = re.compile(r"^(?:所以|还|也|并且|而且|然后|就|又|一直|都|再|后来|只|经常|常常|总是|老是|但是|但|不过|可是|改成|换成|改(?=[考学做去喝吃用读报])|不能|没法|不敢)")
_ZH_CHATTER_RE = re.compile(
    rf"^(?:也|还|都|就|真|真的|挺|很|太|特别|非常|超)*(?:知道|觉得|认为|想(?!{ZH_WANT_VERBS})|希望|相信|明白|同意|理解|猜|记得|以为|感觉|觉着|"
    r"是说|意思是|说|问|告诉|明白了|懂|懂了|看到了|听说|祝|谢谢|感谢|替你|为你|很高兴|高兴|开心|好开心|抱歉|对不起|"
    r"同意|也是|也一样|不知道|不确定|不清楚|服了|佩服|支持|在呢|在这|来了|回来了|没事|没关系|还好|挺好|很好|好|可以|行|"
    r"喜欢这|喜欢那|爱这|爱那|跟你|和你|试试|试一下|试试看|考虑一下|考虑考虑|想想|想一想)"
)
_ZH_PLAN_RE = re.compile(r"打算|计划|准备|要去|想去|将要|即将|(?<![主需重只想])要|下周|下个月|明年|明天|后天|下次|周[一二三四五六日末]|月底")
_ZH_USUALLY_RE = re.compile(r"一般|平时|平常|通常|经常|常常|总是|老是|每周|每天|每个周末|每逢")
_ZH_PAST_RE = re.compile(r"了|(?<![难不经超通度路错])过(?!敏|年|节|日子|来|去|得|分|度|滤)|去年|昨天|上周|上个月|前年|刚|已经|那年|小时候|以前"
                         r"|(?<![想要会能])(?:看|听|收|找|遇|碰|拿|见|意识)到(?!底)")  # ("看到一本书": seen)
_ZH_FIRM_RE = re.compile(r"^我(?:坚信|深信|始终相信|一直相信|坚决认为|坚持认为)(?P<rest>.+)$")
_ZH_CUT_RE = re.compile(r"因为|所以|但是|不过|可是|然后|而且|——|—|-|（|\(|：|:")
_ZH_TRAIL_RE = re.compile(r"[啊呀哦啦嘛哈呗哟噢喔嗯呢吧~]+$")
# says nothing lasting: "总是很忙", "在学校", "在学新东西", "快30岁了" (the age rule reads ages)
# "很累", "特别好": how the user feels now (said of their dog or mom, "很胖", "特别能吃" is a fact)
_ZH_MOOD_RE = re.compile(r"^(?:总是|一直|最近|现在|真的|有点|有些|也|还)*(?:很|太|好|挺|特别|非常|超|有点)[^，,]{1,2}$")
_ZH_EMPTY_RE = re.compile(
    r"^(?:最近|现在|正|还)*在(?:学校|学习|家|公司|路上|外面|上班|开会|忙)?$|东西|问题|(?:喜欢|爱|讨厌|想|见|找|帮|给|跟|和|对|是|了)[它他她这那]$"
    r"|算了$"  # "…，所以寿司就算了": something passed over, no statement
    # a verb with nothing after it: "我下次可以试试", "我试过", "我妈妈选的", "我们都很喜欢"
    rf"|^(?:和.{{1,12}}?)?{ZH_BARE_VERB}$"
)
# an age: the user's is the age rule's ("我快30岁了" is none); a child's or a pet's is a statement
_ZH_AGE_RE = re.compile(r"^[快都已经才满]*[0-9一二三四五六七八九十两]+岁")
_ZH_CONTEXT_ONLY = re.compile(r"^(?:[这那它他她]|这个|那个|这样|那样)(?:[了的]|$)")


_ZH_FIRST_TIME_RE = re.compile("第一次|第一天|头一回|头一次")  # a first: an event, though said without 了


def _zh_kind(body: str) -> tuple[Kind, str]:
    if _ZH_USUALLY_RE.search(body) and "了" not in body:
        return Kind.FACT, "habit"  # "周末一般会去游泳": what the user does, not a plan for one weekend
    if _ZH_PLAN_RE.search(body) and "了" not in body:
        return Kind.EVENT, "plan"
    if body.startswith(("喜欢", "爱", "讨厌", "坚信", "更喜欢", "特别喜欢", "很喜欢")):
        return Kind.PREFERENCE, "opinion"
    if _ZH_PAST_RE.search(body) or _ZH_FIRST_TIME_RE.search(body):
        return Kind.EVENT, "event"
    return Kind.FACT, "statement"


def _zh_concise(body: str) -> str:
    body = _ZH_CUT_RE.split(body, maxsplit=1)[0]
    return _ZH_TRAIL_RE.sub("", body.strip(" ，,。！!～~")).strip()


def _zh_statement(s: str, ctx: Ctx) -> list[Candidate] | None:
    s = s.strip()
    if not s or "你" in s or "您" in s:
        return None
    memo = ctx.memo if ctx.memo is not None else {}
    firm = _ZH_FIRM_RE.match(s)
    if firm:
        rest = _zh_concise(firm.group("rest"))
        if len(rest) < 3:
            return None
        return [candidate(ctx, Kind.PREFERENCE, "用户坚信" + rest, None, None, "坚定的看法")]
    advised = _ZH_ADVISED_RE.match(s)
    if advised:  # "医生让我少喝咖啡": advice the user was given ("my doctor told me to …")
        what = _zh_concise(advised.group("what"))
        if len(what) < 2:
            return None
        return [candidate(ctx, Kind.FACT, f"{advised.group('who')}{advised.group('how')}用户{what}", None, None,
                          f"给用户的建议（{advised.group('who')}）")]
    om = _ZH_OTHER_RE.match(s)
    if om:
        own = om.group("own")
        name = om.group("name") or ""
        memo["other"] = own
        if ctx.memo is not None:
            ctx.memo["other"] = own
        body = s[om.end():]
        if not name and 2 <= len(body) <= 3 and own in ZH_PEOPLE and valid_zh_name(body) \
                and not _ZH_SAID_OF_RE.match(body) and not _ZH_PAST_RE.search(body):  # (not "叫王强", "很吵")
            # "对了，我邻居小红，她也喜欢捉迷藏": who they are, named (not the statement "用户的邻居小红")
            memo["named"] = {own: body}
            return [candidate(ctx, Kind.FACT, f"用户的{own}叫{body}", None, None, f"名字（用户的{own}）")]
        subject = "用户的" + own + name
        return _zh_finish(subject, body, ctx, other=own)
    mine = _ZH_IS_MY_RE.match(s)
    if mine and not _ZH_NOT_A_TOPIC_RE.match(mine.group("x")) and (mine.group("lead") or mine.group("y") in KIN_ZH):
        # "数学是我的弱项" → "用户的弱项是数学", "小雨是我女儿" → "用户的女儿是小雨"
        lead = mine.group("lead") or "的"
        return [candidate(ctx, Kind.FACT, f"用户{lead}{mine.group('y')}是{mine.group('x')}", None, None, "用户的（X是我的Y）")]
    m = _ZH_SUBJ_RE.match(s)
    if s.startswith("我的") and (_ZH_ATTRIBUTE_RE.match(s[2:]) or _ZH_MY_THING_UNDERGOES_RE.match(s[2:])):
        return _zh_finish("用户的", s[2:], ctx, other=None)  # "我的目标是减脂", "我的车上周被撞了"
    if m is None and (memo.get("last") == "用户" or memo.get("opens")) and (_ZH_BODY_RE.match(s) or _ZH_ATTRIBUTE_RE.match(s)):
        return _zh_finish("用户的", s, ctx, other=None)  # "…，膝盖受伤了": the user's knee; "…，目标是浙大"
    if m is None and (memo.get("last") == "用户" or memo.get("opens")) and _ZH_STATE_RE.match(s):
        return _zh_finish("用户", s, ctx, other=None)  # "最近压力很大，晚上经常失眠": the speaker's own state
    if m is None and memo.get("last") == "用户" and (_ZH_GO_ON_RE.match(s) or _ZH_WHEN_GO_ON_RE.match(s)):
        body = re.sub(r"^(?:所以|并且|而且|然后|后来|但是|但|不过|可是)", "", s)  # "…，还做了一个碗": the user goes on
        if _ZH_CHATTER_RE.match(body) or _ZH_OWN_SUBJECT_RE.match(body) or ZH_COUNTDOWN_RE.match(body):
            return None  # "…，但他很少回", "…，但是今天下了好大的雨": someone (or something) else
        if len(body.rstrip("了过啦呢吧")) < 2:
            return None  # a verb alone, "我以前抽烟，后来戒了": what was given up was said before
        return _zh_finish("用户", body, ctx, other=None)
    if m is None:
        prior = memo.get("other")  # named in an earlier clause ("我养了一只猫，叫咪咪"), not in this one
        one = _ZH_ONE_OF_RE.match(s)  # "我有两只猫，一只叫咪咪，一只叫球球": each of them
        rest = s[one.end():] if one and prior else s
        if prior and (lead := _ZH_BUT_RE.match(rest)) and rest[lead.end():][:1] in _ZH_PRONOUNS:
            rest = rest[lead.end():]  # "…，不过他考的是电子信息"
        named_by_pronoun = False
        if prior and rest[:1] in _ZH_PRONOUNS and (rest[0] == "它") == (prior in ZH_PETS or prior in ZH_PET_BREEDS) \
                and pronoun_fits(rest[0], prior):
            rest, named_by_pronoun = rest[1:], True  # "我妹妹来看我了，她是护士", "我养了一只狗，它三岁了"
        # (after a pronoun that stands for them, whatever it says: "…带我奶奶去复查，她上个月做了白内障手术")
        wish = prior in ZH_PEOPLE and _ZH_THEIR_WISH_RE.match(rest) is not None
        if prior and prior not in rest and len(rest) <= 16 \
                and (_ZH_SAID_OF_RE.match(rest) or wish or (named_by_pronoun and _ZH_PAST_RE.search(rest))):
            name = (memo.get("named") or {}).get(prior, "")  # "我女儿叫小雨，今年七岁" → "用户的女儿小雨七岁"
            return _zh_finish("用户的" + prior + (name if name not in rest else ""), rest, ctx, other=prior)
        if memo.get("opens") and _zh_dropped_subject(s):  # "昨天去了海边": Chinese leaves out its 我
            named = prior in ZH_PEOPLE or prior in ZH_PETS or prior in ZH_PET_BREEDS
            return _zh_finish("用户", zh_objects_named(s, prior) if named else s, ctx, other=None)
        return None
    pre = m.group("pre")
    if pre and not find_range(pre, ctx.now) and not _ZH_PRE_OK_RE.fullmatch(pre):
        return None
    body = s[m.end():]
    if _ZH_CHATTER_RE.match(body):
        return None
    subject = "用户"
    if m.group("subj") == "我们" and _ZH_OUR_THING_RE.match(body):
        subject = "用户的"  # "我们项目下个月上线": the user's project
    elif m.group("subj") == "我们" and memo.get("other") in ZH_PEOPLE and (
            memo["other"] != memo.get("before") or memo["other"] in COUPLE_ZH):
        subject = "用户和" + memo["other"]  # "我女朋友也在成都，周三晚上我们一起吃饭"
    said = zh_pronouns_named(pre + body, memo.get("other"))
    if said is None:
        return None  # "我那么期待它": what 它 is, the turn before says; it stays an episode
    for w in _ZH_PET_OBJ_RE.findall(body)[-1:]:
        memo["other"] = w
        if ctx.memo is not None:
            ctx.memo["other"] = w
    return _zh_finish(subject, said, ctx, other=None)


def _zh_dropped_subject(s: str) -> bool:
    """A clause that opens its sentence without a subject and says what the speaker did or will
    do ("昨天去了海边", "刚养了一只小狗", "下周准备去日本"): after time words and adverbs (and a
    prepositional phrase: "从杭州搬到深圳", "跟朋友去了海边") comes a verb with something after it, and
    the clause is an event (了/过) or a plan. Anything else before the verb ("妈妈昨天去了…", "这家
    店…") is a subject of its own; a wish or thanks without an event ("希望…") is no fact."""
    ongoing = _ZH_ONGOING_RE.match(s) is not None  # "最近在减肥": what the user is doing these days
    if not (ongoing or _ZH_PAST_RE.search(s) or _ZH_PLAN_RE.search(s)) or len(s) > _MAX_ZH_CHARS or _ZH_CHATTER_RE.match(s):
        return False
    import rjieba  # (loaded already: Chinese text is segmented for the index)

    tagged = rjieba.tag(s)
    at = 0
    while at < len(tagged):
        word, tag = tagged[at]
        if tag in ("t", "d") or word in _ZH_LEAD_WORDS:
            at += 1  # 昨天, 早上, 刚, 终于, 已经, 最近, 也
            continue
        if word in ("这", "那") and tagged[at + 1 : at + 2] and tagged[at + 1][1] == "t":
            at += 2  # 这周末, 那天
            continue
        if tag in ("p", "c") and word in _ZH_PREPOSITIONS:  # 从杭州 / 跟朋友 / 和朋友 (a "c") … then the verb
            verb = next((i for i in range(at + 1, min(at + 5, len(tagged)))
                         if tagged[i][1] in _ZH_VERB_TAGS or tagged[i][0] in _ZH_ONE_CHAR_VERBS), None)
            if verb is None:
                return False
            at = verb
            continue
        # a verb with something after it ("收到了" alone is an acknowledgement); "打篮球", "弹钢琴" are
        # verb and object in one word (tagged a noun)
        verb = tag in _ZH_VERB_TAGS or (tag == "n" and len(word) >= 2 and word[0] in _ZH_VERB_OBJECT_HEADS) \
            or word in _ZH_ONE_CHAR_VERBS  # ("现在在学日语": 学 is tagged a noun)
        return verb and word not in _ZH_NOT_DEEDS and (ongoing or any(
            t not in ("ul", "uz", "ug", "y", "x", "e") for _, t in tagged[at + 1 :]))
    return False


_ZH_ONE_OF_RE = re.compile(r"^(?:另外|另)?一[只个条匹]|^(?:大的|小的|老大|老二|老三)")
_ZH_LEAD_WORDS = frozenset(
    "最近 刚刚 刚 终于 已经 也 还 又 今天 昨天 上周 上个月 去年 周末 上周末 在家 一般 平时 经常 通常 之前 以前 后来 当时".split())
_ZH_VERB_OBJECT_HEADS = frozenset("打踢玩弹骑练跳滑钓爬拉吹")
_ZH_ONE_CHAR_VERBS = frozenset("学练考教读写画")
# "(最近|现在|一直)在 V…", "正在 V…": doing it these days, with nothing after the verb needed ("最近在减肥")
_ZH_ONGOING_RE = re.compile(r"^(?:最近|这段时间|这阵子|这几天|现在|目前|一直|还)?(?:正在|在)(?![家这那])")
_ZH_PREPOSITIONS = frozenset("从 在 跟 和 给 把 对 为 替 陪 同".split())
_ZH_VERB_TAGS = ("v", "vq", "vd")
_ZH_NOT_DEEDS = frozenset("希望 祝 谢谢 感谢 觉得 认为 知道 听说 记得 忘了 看来 好像 似乎 是 笑死 笑 哭 累死 困死 饿死 气死 吓死 醉".split())


# a thing the user did something to, named and no more ("我上次画的小狗，老师也夸我了": what the teacher
# praised; "我上次买的那件红毛衣"): a noun after a short verb and 的, no statement
_ZH_ONLY_A_THING_RE = re.compile(
    r"^(?:上次|昨天|今天|刚才|刚刚|之前|以前|最近)?[\u4e00-\u9fff]{1,2}的(?:那|这)?[个件只本张条双台部辆位幅]?"
    r"(?:(?![是在有很了也都就还又要会])[\u4e00-\u9fff]){1,5}$"
)


def _zh_finish(subject: str, body: str, ctx: Ctx, *, other: str | None) -> list[Candidate] | None:
    if body.startswith("、"):
        return None  # "我、老婆和女儿": a list of people, no statement
    body = _zh_concise(body)
    if not 2 <= len(body) <= _MAX_ZH_CHARS or _ZH_CONTEXT_ONLY.match(body) or _ZH_ONLY_A_THING_RE.match(body):
        return None
    if _ZH_EMPTY_RE.search(body) or (other is None and (
            _ZH_MOOD_RE.match(body) or _ZH_AGE_RE.match(body) or _negates_slot("我" + body, ctx))):
        return None
    body = zh_third(_ZH_OUR_RE.sub("用户的", body).replace("我们", "用户"))  # "我们项目下个月上线": the user's project
    kind, why = _zh_kind(body)
    if ZH_TRANSIENT_RE.search(body) and (kind is not Kind.EVENT or re.search("[不没]", body)):
        return None  # "我今天好累": a mood of the moment
    body, valid_from = zh_said_time(body, ctx.now)
    if body.endswith("的") and "是" not in body[:-1]:  # "是做设计的" keeps the 的 its 是 frames
        body = zh_object(body)
    if len(body) < 2:
        return None
    if why == "plan":
        valid_from = None
    if ctx.memo is not None:
        ctx.memo["last"] = subject
    key, value = zh_routine(body) if other is None and kind is Kind.FACT and subject == "用户" else (None, None)
    if ctx.relaxed:
        kind = Kind.FACT  # inside "remember …": a fact, as the user asked
    return [candidate(ctx, kind, subject + body, key, value, why if other is None else f"{why}（用户的{other}）",
                      valid_from=valid_from)]


_EN_REFERENT_RE = re.compile(rf"^(?:my|our)\s+(?:(?:old|new|little|big|younger|older|best)\s+)?(?P<w>{_EN_NOUN})", re.I)
_EN_HAS_WHO_RE = re.compile(rf"^i\s+(?:also\s+)?(?:have|'ve\s+got)\s+(?:a|an|one)\s+(?:(?:older|younger|little|big|baby|best)\s+)?(?P<w>{_EN_NOUN})\b", re.I)
# (after a day put first: "下个月十五号是我妈妈的生日")
_ZH_REFERENT_RE = re.compile(rf"^(?:[^，,。我]{{1,12}}是)?我(?:们家|家)?(?:的|和|跟|与)?(?P<w>{ZH_OWNED_RE})")


def tail_comment(s: str, lang: str) -> str | None:
    """What a clause says after its statement, worth keeping with it ("… and it brings me so much joy",
    "…, 'cause nature brings such peace"), in the third person; None when nothing is."""
    if lang == "zh":
        return None
    whole = _en_concise(s, comment=True)
    main = _en_concise(s)
    if whole == main or not whole.startswith(main):
        return None
    return whole[len(main):].lstrip(" ,") or None


def main_part(s: str, lang: str) -> str:
    """A clause without the comment or aside `statement` would cut off (where a hedge does not count)."""
    return s if lang == "zh" else _en_concise(s)


def about_other(s: str, lang: str) -> bool:
    """The clause is about someone or something of the user's ("my sister …", "我朋友…")."""
    if lang == "zh":
        return _ZH_OTHER_RE.match(s) is not None
    m = _EN_REFERENT_RE.match(s)
    return m is not None and m.group("w").lower() in _EN_OWNED


_EN_MY_OWNED_RE = re.compile(rf"\bmy\s+(?:(?:old|new|little|big|younger|older|best)\s+)?({_EN_NOUN}|[a-z-]+)", re.I)
_ZH_MY_OWNED_RE = re.compile(rf"我(?:家|们家)?的?({ZH_OWNED_RE})")
_OPENS_WITH_PRONOUN_RE = re.compile(  # (after a word that only leads in: "Oh, and she …", "对了，他…")
    r"^\s*(?:(?:oh|and|also|btw|anyway|well|so|plus|actually)[,\s]+)*(?:对了|哦|嗯|还有|另外|而且|其实)?[，,\s]*"
    r"(?:(?:she|he|they|we|shes|hes|theyre|his|her)\b|[她他它]|我们)", re.I)


def opens_with_pronoun(said: str) -> bool:
    """"She loves jazz.", "他下个月结婚": who it is was said before."""
    return _OPENS_WITH_PRONOUN_RE.match(said) is not None


_PRONOUN_WORD_RE = re.compile(r"\b(?:she|he|her|his|him)\b|[她他它]", re.I)
_PRONOUN_AS = {"her": "she", "his": "he", "him": "he"}


def last_referent(previous: str, zh: bool, said: str = "") -> str | None:
    """Who a "she"/"他" in the user's next turn `said` (or in the question it answers) may stand
    for: the last of the user's people or animals that `previous` named that the pronoun fits,
    "my mom" → "mom", "我妹妹" → "妹妹" (not "我爸妈" for a "他")."""
    if zh:  # "我妹妹…", and a pet brought in anywhere ("我养了一条柯基")
        pets = [(m.start(), m.group()) for m in _ZH_PET_OBJ_RE.finditer(previous)]
        mine = [(m.start(1), m.group(1)) for m in _ZH_MY_OWNED_RE.finditer(previous)
                if m.group(1) not in ("公司", "团队", "部门", "学校", "小区")]
        named = [w for _, w in sorted(mine + pets)]
    else:  # ("my gf …" typed fast is "my girlfriend …")
        named = [w.lower() for w in _EN_MY_OWNED_RE.findall(formal(previous)) if w.lower() in _EN_PEOPLE | _EN_PETS]
    pronoun = _PRONOUN_WORD_RE.search(said) if said else None
    if pronoun is not None:
        word = pronoun.group().lower()
        named = [w for w in named if pronoun_fits(_PRONOUN_AS.get(word, word), w)]
    return named[-1] if named else None


def note_referent(s: str, ctx: Ctx) -> None:
    """Remember who a clause is about ("My cat …", "我养了一只猫"), for a later "she"/"叫咪咪"."""
    if ctx.memo is None:
        return
    if ctx.lang == "zh":
        m = _ZH_REFERENT_RE.match(s)
        found = [m.group("w")] if m else (_ZH_PET_OBJ_RE.findall(s) or _ZH_HAS_WHO_RE.findall(s.rstrip("。！!"))
                                          or _ZH_MY_OWNED_RE.findall(s))[-1:]  # "…带我奶奶去医院复查，她…"
    else:
        if _OPENS_WITH_PRONOUN_RE.match(s) and ctx.memo.get("other") is None:
            return  # "He has a cat.": the cat is his, and no "he" of its own
        m = _EN_REFERENT_RE.match(s) or _EN_HAS_WHO_RE.match(s)  # "My sister …", "I have a sister, she …"
        found = [m.group("w").lower()] if m and m.group("w").lower() in _EN_OWNED else [
            w for w in re.findall(_EN_NOUN, s.lower()[:80]) if w in _EN_PETS]
    if found:
        ctx.memo["other"] = found[-1]


# a second action of the same subject, in the past: "… and posted some of my dance videos"
_EN_AND_THEN_RE = re.compile(
    r"\band\s+(?:then\s+|also\s+|finally\s+)?(?=(?:[a-z]+ed|got|went|made|took|bought|found|ran|began|wrote|won|"
    r"sold|met|built|gave|saw|did)\b)"
)
_EN_PLACE_NAMED_RE = re.compile(r"\b(?:to|in|at|from|visit|visited|visiting)\s+(?P<p>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b")
_EN_NO_PLACE = frozenset((
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August "
    "September October November December Christmas Easter"
).split())


# "there" as a place: "to" after a verb of going, or a visit ("never been there"), else "in"
_EN_THERE_RE = re.compile(
    r"(?:\b(?P<to>go|goes|went|going|gone|come|came|coming|fly|flew|flying|travel|traveled|travelled|get|got|move"
    r"|moved|moving|head|headed|drive|drove|never been|ever been|already been|not been|n't been)\s+)?"
    r"\b(?:over\s+)?there\b"
)


def note_place(s: str, ctx: Ctx) -> None:
    """Remember the place a clause names ("My flight to Tokyo …"), for a later "there"."""
    if ctx.memo is None or ctx.lang == "zh":
        return
    found = [m.group("p") for m in _EN_PLACE_NAMED_RE.finditer(s) if m.group("p").split()[0] not in _EN_NO_PLACE]
    if found:
        ctx.memo["place"] = found[-1]


def statement(s: str, ctx: Ctx) -> list[Candidate] | None:
    """A plain first-person statement (or one about the user's X) as a fact, or None."""
    return _zh_statement(s, ctx) if ctx.lang == "zh" else _en_statement(s, ctx)
