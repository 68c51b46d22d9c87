"""Facts about the user, in English: where they live and come from, work, diet, allergies,
what they have, and "my <attribute> is …".

fact:location | fact:hometown | fact:employer | fact:occupation | fact:school
fact:diet | fact:allergy_<x> | fact:has_<thing> | fact:<attribute> (my birthday is …)
fact:<relation>_<attribute> (my dog's name is Rex → fact:dog_name)
fact:age (I'm 34 years old) | fact:learning_<x> (I started learning Japanese)
"""

from __future__ import annotations

import re

from engram.animals import PETS_EN, PETS_EN_ONE
from engram.extract.candidate import Ctx, candidate, entities_of
from engram.extract.dates import EN_DATE_RE, calendar_day
from engram.extract.filters import EN_TRANSIENT_RE
from engram.extract.keys import ART_RE, WS_RE, slot_value, slugify
from engram.extract.names import valid_en_name
from engram.extract.phrases import CONTEXT_WORDS, EN_ADV, cut_clause, pronoun_led, trim_fillers, trim_time
from engram.extract.rewrite import article, as_sentence, en_rest, en_third
from engram.models import Candidate, Kind
from engram.when import en_number, find_range

_PLACE_BLACKLIST = frozenset((
    "the moment", "fear", "denial", "a bubble", "my head", "the past", "the present", "the future",
    "peace", "hope", "sin", "hell", "heaven", "a dream", "my dreams", "harmony", "here", "there",
))
_EN_LOC_RE = re.compile(
    rf"^i(?:\s+{EN_ADV}(?P<v1>live|reside)\s+(?:back\s+)?in"
    # (not "moved in": "I moved in last week", "moved in with my girlfriend" name no place)
    rf"|\s+{EN_ADV}(?P<v4>moved|relocated)\s+(?:from\s+(?-i:[A-Z])[\w .'-]{{0,30}}?\s+)?(?:back\s+)?to"
    rf"|(?:'m|\s+am)\s+{EN_ADV}(?P<v2>living|based|residing|located)\s+(?:in|out\s+of)"
    rf"|(?:'ve|\s+have)\s+{EN_ADV}(?P<v3>moved|relocated)\s+(?:from\s+(?-i:[A-Z])[\w .'-]{{0,30}}?\s+)?(?:back\s+)?to)"
    r"\s+(?P<place>.+)$",
    re.I,
)
_EN_WE_RE = re.compile(r"^(?:we|(?:my\s+[\w'-]+(?:\s+[A-Z][a-z]+)?|[A-Z][a-z]+)\s+and\s+i)(?=\s|'re\b)", re.I)
_WE_ARE_RE = re.compile(r"^(?:'re|\s+are)(?=\s)", re.I)  # "we're based" → "I'm based"
_EN_WE_HAVE_RE = re.compile(r"^\s+(?:have|'ve\s+got|have\s+got)\s+(?:a|an|one|two|three|four|\d)\s", re.I)
_EN_WE_LIVE_RE = re.compile(rf"^(?:'re|\s+are)?\s+{EN_ADV}(?:live|reside|living|based|residing|located)\s", re.I)
_EN_HOME_IN_RE = re.compile(r"^my\s+(?P<new>new\s+)?(?:apartment|flat|house|home|place)\s+is\s+in\s+(?P<place>.+)$", re.I)
_EN_FROM_RE = re.compile(
    r"^i(?:(?:'m|\s+am)\s+(?:originally\s+)?(?P<from>from)|\s+(?:grew\s+up|was\s+raised|was\s+born\s+and\s+raised)\s+in"
    r"|\s+was\s+born\s+in)\s+(?P<place>.+)$",
    re.I,
)
_EN_WORK_RE = re.compile(
    rf"^i(?:\s+{EN_ADV}(?:work|intern)|(?:'m|\s+am)\s+{EN_ADV}(?:working|interning|employed)"
    rf"|(?:'ve|\s+have)\s+(?:been\s+working|worked)|\s+{EN_ADV}(?:started|began)\s+(?:working|a\s+(?:new\s+)?job))"
    r"\s+(?P<prep>at|for)\s+(?P<org>.+?)"
    r"(?:\s+as\s+(?P<det>a|an)\s+(?P<job>.+))?$",
    re.I,
)
# a new job: the employer changes ("joined" only with a role: one joins clubs and apps too)
_EN_HIRED_RE = re.compile(
    rf"^i(?:(?:'ve|\s+have)?\s+{EN_ADV}(?:got|gotten|landed|accepted|took|taken|started)\s+a\s+"
    r"(?:new\s+|full-time\s+|part-time\s+)?(?:job|position|role)(?:\s+offer)?\s+(?:at|with|from)"
    rf"|(?:\s+was|'ve\s+been|\s+have\s+been|\s+got)\s+{EN_ADV}hired\s+(?:at|by)"
    rf"|(?:'ve|\s+have)?\s+{EN_ADV}joined(?P<joined>)|\s+{EN_ADV}started\s+at(?=\s+(?-i:[A-Z])))"
    r"\s+(?P<org>.+?)(?:\s+as\s+(?P<det>a|an)\s+(?P<job>.+))?$",
    re.I,
)
_ORG_BLACKLIST = frozenset(
    "home night nights night shift the moment myself a living fun free money my family weekends "
    "a while the weekend the weekends it that this".split(" ")
)
_JOB_HEADS = frozenset(
    """engineer developer programmer coder doctor physician surgeon nurse teacher student lawyer
    attorney designer manager chef cook baker barista artist writer author novelist poet
    scientist researcher analyst consultant accountant architect professor lecturer pilot
    dentist pharmacist freshman sophomore junior senior photographer journalist reporter editor musician
    singer dancer actor actress entrepreneur founder cofounder co-founder ceo cto cfo coo vp intern freelancer
    veterinarian vet hygienist midwife caregiver nanny receptionist therapist psychologist psychiatrist
    counselor counsellor firefighter
    officer soldier farmer mechanic electrician plumber carpenter waiter waitress cashier clerk
    librarian translator interpreter economist banker trader investor realtor homemaker
    athlete coach trainer tutor postdoc paramedic technician administrator sysadmin devops
    marketer salesperson recruiter secretary assistant director executive producer filmmaker
    animator illustrator copywriter blogger youtuber streamer podcaster retiree pensioner
    housewife househusband driver nanny caregiver pharmacologist biologist chemist physicist
    mathematician statistician historian linguist sociologist philosopher judge paralegal
    auditor strategist specialist consultant undergrad undergraduate graduate phd candidate
    surveyor geologist optometrist midwife tailor hairdresser stylist""".split()
)
_JOB_BAD_WORDS = frozenset("bit little lot fan mess kind sort tad huge total big fan".split())
_DIET_RE = re.compile(
    rf"^i(?:'m|\s+am)\s+{EN_ADV}(?:(?:a|an)\s+)?(?:strict\s+)?(?P<diet>vegetarian|vegan|pescatarian|pescetarian)$", re.I
)
_ALLERGY_RE = re.compile(
    rf"^i(?:'m|\s+am)\s+{EN_ADV}(?:(?:very|severely|highly|deathly|mildly|slightly|seriously)\s+)?allergic\s+to\s+(?P<obj>.+)$",
    re.I,
)
_EN_JOB_RE = re.compile(
    rf"^i(?:(?:'m|\s+am)\s+{EN_ADV}|\s+{EN_ADV}work\s+(?:(?:part|full)[- ]time\s+|remotely\s+|freelance\s+)?as\s+|(?:'ve|\s+have)?\s+{EN_ADV}(?:became|become)\s+"
    rf"|(?P<been>(?:'ve|\s+have)\s+{EN_ADV}been\s+(?:working\s+as\s+)?))"
    r"(?P<det>a|an)\s+(?P<job>[a-z][a-z' -]*?)"
    r"(?:\s+(?P<prep>at|for|in|with)\s+(?P<org>[^,]+))?(?:,\s+(?P<when>(?:[A-Z]\w+days?|weekends|nights|mornings)\b.*)"
    r"|,\s+[^,]{1,40})?$",
    re.I,
)
_PETS = {w: animal.replace(" ", "_") for w, animal in PETS_EN.items()}  # (as a key says it: "guinea_pig")
_RELATIONS = {
    **{w: _PETS[w] for w in PETS_EN_ONE}, "wife": "wife",
    "husband": "husband", "partner": "partner", "spouse": "spouse", "son": "son",
    "daughter": "daughter", "kid": "child", "child": "child", "baby": "baby", "brother": "brother",
    "sister": "sister", "mom": "mother", "mum": "mother", "mother": "mother", "dad": "father",
    "father": "father", "girlfriend": "girlfriend", "boyfriend": "boyfriend", "boss": "boss",
    "manager": "manager", "best friend": "best_friend", "grandma": "grandmother",
    "grandmother": "grandmother", "grandpa": "grandfather", "grandfather": "grandfather",
    "uncle": "uncle", "aunt": "aunt", "cousin": "cousin", "fiance": "fiance", "fiancé": "fiance",
    "fiancee": "fiancee", "fiancée": "fiancee", "roommate": "roommate", "cofounder": "cofounder",
    "co-founder": "cofounder", "car": "car",
}
_ATTRS = {
    "name": "name", "birthday": "birthday", "birth date": "birthday", "date of birth": "birthday",
    "bday": "birthday", "email": "email", "email address": "email", "e-mail": "email",
    "phone": "phone", "phone number": "phone", "cell": "phone", "mobile number": "phone",
    "address": "address", "home address": "address", "hometown": "hometown",
    "home town": "hometown", "home country": "home_country", "native country": "home_country",
    "birthplace": "birthplace", "age": "age", "job": "occupation", "occupation": "occupation",
    "profession": "occupation", "job title": "occupation", "major": "major",
    "nationality": "nationality", "timezone": "timezone", "time zone": "timezone",
    "native language": "native_language", "first language": "native_language",
    "mother tongue": "native_language", "pronouns": "pronouns", "blood type": "blood_type",
    "star sign": "zodiac_sign", "zodiac sign": "zodiac_sign", "username": "username",
    "github": "github", "github username": "github", "github handle": "github",
    "website": "website", "company": "employer", "employer": "employer", "school": "school",
    "university": "school", "college": "school", "alma mater": "school", "nickname": "nickname",
    "middle name": "middle_name", "last name": "last_name", "surname": "last_name",
    "family name": "last_name", "first name": "name", "full name": "name", "height": "height",
    "shoe size": "shoe_size", "anniversary": "anniversary", "wedding anniversary": "anniversary",
    "dietary restriction": "diet", "diet": "diet", "religion": "religion", "mbti": "mbti",
    "personality type": "mbti", "handle": "username",
}
_REL_RE = "|".join(sorted((re.escape(r) for r in _RELATIONS), key=len, reverse=True))
_ATTR_RE = "|".join(sorted((re.escape(a) for a in _ATTRS), key=len, reverse=True))
_EN_MY_REL_ATTR_RE = re.compile(rf"^(?P<rel>{_REL_RE})(?:'s|s'|')?\s+(?P<attr>{_ATTR_RE})$", re.I)
_EN_MY_RE = re.compile(r"^my\s+(?P<attr>[a-z][\w' -]{0,40}?)\s+(?P<verb>is|are)\s+(?P<val>.+)$", re.I)
_EN_MY_S_RE = re.compile(r"^my\s+(?P<attr>[a-z][\w-]{0,20})'s\s+(?P<val>(?!name\b)(?!birthday\b).+)$", re.I)
_HAS = {
    **_PETS, "kid": "children", "kids": "children", "child": "children",
    "children": "children", "son": "son", "sons": "son", "daughter": "daughter",
    "daughters": "daughter", "brother": "brother", "brothers": "brother", "sister": "sister",
    "sisters": "sister", "twin": "twin", "wife": "wife", "husband": "husband",
    "partner": "partner", "girlfriend": "girlfriend", "boyfriend": "boyfriend", "car": "car",
    "bike": "bike", "bicycle": "bike", "motorcycle": "motorcycle", "house": "house",
    "apartment": "apartment", "degree": "degree", "phd": "degree", "masters": "degree",
    "master's": "degree", "bachelor's": "degree",
}
_EN_HAVE_RE = re.compile(
    rf"^i(?:\s+{EN_ADV}(?:have|own)|'ve\s+got|\s+have\s+got)\s+"
    r"(?P<obj>(?:a|an|one|two|three|four|five|six|\d+)\s+.+)$",
    re.I,
)
_NAMED_RE = re.compile(r"\s+(?:named|called)\s+(?P<name>.+)$", re.I)
# what is had, then its names, set off by a comma or "named": cut_clause would stop at the comma or "and"
_NAMES_AFTER_RE = re.compile(
    r"^(?P<obj>(?:a|an|one|two|three|four|five|\d+)(?:\s+[a-z]+){1,3}?)(?:\s*[,:]\s*|\s+(?:named|called)\s+)"
    r"(?P<names>[A-Z][a-z]+(?:(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+)[A-Z][a-z]+)*)\s*[.!]*$"
)
_PLACE_CUT_RE = re.compile(r"\s+(?:with|for|since|because|to\s+be)\b", re.I)
_FOR_DURATION_RE = re.compile(  # how long: "for ten years", "for a decade", "since 2015"
    r"\s+(?:for\s+(?:\d|a\b|an\b|about|around|over|almost|nearly|the\s+past|the\s+last|years|months|decades|ages"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)|since\s+\S)", re.I
)
_ORG_GOES_ON_RE = re.compile(r"\s+(?:majoring|studying|working|where|doing)\b", re.I)
_STUDENT_YEARS = frozenset("student freshman sophomore junior senior undergrad undergraduate postgrad".split())
# "… majoring in biology", "I major in economics": what the user studies
_EN_MAJOR_RE = re.compile(
    r"\b(?:majoring|i\s+major|i'm\s+a\s+[\w-]+\s+major)\s+in\s+(?P<major>[a-z][a-z &-]{1,40}?)"
    r"(?=\s*(?:,|\.|$|\s+and\b|\s+at\b))", re.I)
_EVALUATIVE = frozenset(
    """boring great fine good bad ok okay terrible awesome amazing hard difficult easy stressful fun
    important private secret complicated long weird strange simple tough changing unknown today
    tomorrow yesterday tonight soon""".split()
)


def _place_ok(place: str) -> bool:
    words = place.split()
    return bool(words) and len(words) <= 6 and place.lower() not in _PLACE_BLACKLIST \
        and not pronoun_led(place) and not place.isdigit()


def _en_place(raw: str) -> str:
    place = trim_time(_PLACE_CUT_RE.split(cut_clause(raw), maxsplit=1)[0]).strip()
    return trim_fillers(place).strip()


# what a move was for, after its place: "… for a new job at a fintech startup", "… for my master's"
_EN_MOVED_FOR_RE = re.compile(
    r"^,?\s+for\s+(?P<why>(?:a|an|my|the|our|his|her)\s+(?:new\s+)?(?:job|work|role|position|school|college|university"
    r"|degree|master'?s|phd|studies|internship|residency|fellowship|postdoc|husband|wife|partner|girlfriend|boyfriend|family)"
    r"\b(?:\s+(?:at|with|in)\s+(?:a|an|the)?\s*[\w' -]{1,40}?)?|work|school|college|grad\s+school|love)"
    r"(?=\s*(?:$|,|\.|\b(?:last|this|in|two|three|a\s+few|and)\b))", re.I)


def _en_location(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_LOC_RE.match(s)
    if m is None:
        return None
    place = _en_place(m.group("place"))
    if not _place_ok(place):
        return []
    verb = (m.group("v1") or m.group("v2") or m.group("v3") or m.group("v4")).lower()
    content = {
        "live": f"User lives in {place}.", "reside": f"User lives in {place}.",
        "living": f"User lives in {place}.", "residing": f"User lives in {place}.",
        "based": f"User is based in {place}.", "located": f"User is based in {place}.",
        "moved": f"User moved to {place}.", "relocated": f"User relocated to {place}.",
    }[verb]
    moved = verb in ("moved", "relocated")
    why = _EN_MOVED_FOR_RE.match(m.group("place")[len(place):]) if moved else None
    if why is not None:  # "I moved to Chicago for a new job at a fintech startup": why, kept with it
        content = f"{content[:-1]} for {en_rest(why.group('why'))}."
    since = find_range(s, ctx.now)  # "I moved to Porto in 2019": since then
    return [candidate(ctx, Kind.FACT, content, "fact:location", slot_value(place), f"where the user lives ({verb})",
                      entities=entities_of(place), valid_from=since.start if since else ctx.now if moved else None)]


def _en_from(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_FROM_RE.match(s)
    if m is None:
        return None
    place = _en_place(m.group("place"))
    if not _place_ok(place) or re.search(r"\d", place):
        return []
    content = as_sentence(en_third(s[: m.start("place")] + place))
    return [candidate(ctx, Kind.FACT, content, "fact:hometown", slot_value(place), "where the user is from",
                      entities=entities_of(place))]


def _en_work(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_WORK_RE.match(s) or _EN_HIRED_RE.match(s)
    if m is None:
        return None
    job = m.group("job") and cut_clause(m.group("job"))
    if "joined" in m.groupdict() and m.group("joined") is not None and not (job and _job_ok(job)):
        return None  # "I joined a book club", "I joined Reddit": no employer without a role
    org = trim_time(cut_clause(m.group("org"))).strip()
    org = _FOR_DURATION_RE.split(org, maxsplit=1)[0]
    day = EN_DATE_RE.search(org)
    org = org[: day.start()].strip() if day and day.start() > 0 else org  # "Figma on Monday": Figma
    if not org or org.lower() in _ORG_BLACKLIST or len(org.split()) > 6 or pronoun_led(org):
        return []
    prep = m.group("prep").lower() if "prep" in m.groupdict() else "at"
    out = [candidate(ctx, Kind.FACT, f"User works {prep} {org}.", "fact:employer", slot_value(org), "user's employer",
                     entities=entities_of(org))]
    if job:
        if _job_ok(job):
            out.append(candidate(ctx, Kind.FACT, f"User works as {article(job)} {job}.", "fact:occupation",
                                 slot_value(job), "user's occupation", entities=[]))
    return out


def _job_ok(job: str) -> bool:
    words = job.lower().split()
    if not words or len(words) > 4 or any(w in _JOB_BAD_WORDS for w in words):
        return False
    return words[-1] in _JOB_HEADS


def _en_job(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_JOB_RE.match(s)
    if m is None:
        return _en_promoted(s, ctx) or _en_teach(s, ctx)
    job = trim_fillers(m.group("job")).strip()
    if not _job_ok(job):
        return None
    det = m.group("det").lower()
    prep, org = (m.group("prep") or "").lower(), m.group("org")
    lasting = ""  # "I've been a nurse for ten years": how long, said with the job
    if m.group("been"):
        whole = " ".join(x for x in (prep, org) if x)
        since = _FOR_DURATION_RE.search(" " + whole)
        if since is None:
            return None  # ("I've been a fan of …" and the like are said as said)
        lasting = " " + whole[since.start():].strip().rstrip(".!")
        head = whole[: since.start()].strip()
        prep, _, org = head.partition(" ")
        prep, org = prep.lower(), org or None
    worked = re.search(r"\bwork\s+(?P<how>(?:(?:part|full)[- ]time|remotely|freelance)\s+)?as\b", s[: m.start("det")], re.I)
    verb_is = f"works {worked.group('how') or ''}as" if worked else "is"  # "works part-time as"
    when = f", {m.group('when').rstrip('.!')}" if m.group("when") else ""  # ", Tuesdays and Thursdays"
    said = f"User has been {det} {job}{lasting}." if lasting else f"User {verb_is} {det} {job}{when}."
    student = job.lower().split()[-1] in _STUDENT_YEARS
    out = [candidate(ctx, Kind.FACT, said, "fact:occupation", slot_value(job), "user's occupation")]
    major = _EN_MAJOR_RE.search(s)
    if major and student:  # "I'm a junior at UCLA majoring in biology"
        out.append(candidate(ctx, Kind.FACT, f"User is majoring in {major.group('major')}.", "fact:major",
                             slot_value(major.group("major")), "user's major"))
    if org and prep in ("at", "for"):
        org = trim_time(cut_clause(_ORG_GOES_ON_RE.split(org, 1)[0])).strip()  # "UCLA majoring in biology": UCLA
        if org and org.lower() not in _ORG_BLACKLIST and len(org.split()) <= 6:
            if job.lower().split()[-1] in _STUDENT_YEARS:
                out.append(candidate(ctx, Kind.FACT, f"User studies at {org}.", "fact:school", slot_value(org),
                                     "user's school", entities=entities_of(org)))
            else:
                out.append(candidate(ctx, Kind.FACT, f"User works {prep} {org}.", "fact:employer", slot_value(org),
                                     "user's employer", entities=entities_of(org)))
    return out


# "I finally got promoted to senior engineer": the new title is the job
_EN_PROMOTED_RE = re.compile(
    r"^I\s+(?:just\s+|finally\s+|recently\s+)*(?:got\s+|was\s+|have\s+been\s+|'ve\s+been\s+)?promoted\s+to\s+"
    r"(?:(?:a|an|the)\s+)?(?P<job>[a-z][a-z -]{2,40}?)(?:\s+(?:at|in)\s+.+)?$",
    re.I,
)


def _en_promoted(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_PROMOTED_RE.match(s)
    if m is None or not _job_ok(m.group("job")):
        return None
    return [candidate(ctx, Kind.FACT, as_sentence(en_third(s)), "fact:occupation", slot_value(m.group("job")),
                      "user's occupation (promoted)", valid_from=ctx.now)]


# "I teach high school chemistry in Munich": a teacher, said by what is taught
_EN_TEACH_RE = re.compile(r"^I\s+(?:currently\s+|still\s+)?teach\s+(?P<what>[a-z][\w -]{2,40}?)"
                          r"(?:\s+(?:at|in)\s+(?P<where>[A-Z][\w .'-]{1,40}?))?$")


def _en_teach(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_TEACH_RE.match(s)
    if m is None or pronoun_led(m.group("what")) or m.group("what").split()[0].lower() in ("myself", "my", "them", "him", "her"):
        return None  # ("I teach my kids to swim": not a job)
    return [candidate(ctx, Kind.FACT, as_sentence(en_third(s)), "fact:occupation", "teacher", "user's occupation",
                      entities=entities_of(m.group("where")) if m.group("where") else [])]


def _en_diet(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _DIET_RE.match(s)
    if m is None:
        return None
    diet = m.group("diet").lower().replace("pescetarian", "pescatarian")
    return [candidate(ctx, Kind.FACT, f"User is {diet}.", "fact:diet", diet, "user's diet")]


def _en_allergy(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ALLERGY_RE.match(s)
    if m is None:
        return _en_intolerant(s, ctx)
    out = []
    for obj in _conjuncts(m.group("obj")) or [trim_fillers(cut_clause(m.group("obj"))).strip()]:
        slug = slugify(obj)  # "peanuts and shellfish": one allergy each
        if not slug or pronoun_led(obj):
            return []
        out.append(candidate(ctx, Kind.FACT, f"User is allergic to {obj}.", "fact:allergy_" + slug, slot_value(obj),
                             "user's allergy", entities=entities_of(obj)))
    return out


_INTOLERANT_RE = re.compile(rf"^i(?:'m|\s+am)\s+{EN_ADV}(?P<obj>gluten|lactose|dairy|fructose|histamine|soy|egg)[ -]intolerant$",
                            re.I)


def _en_intolerant(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"I'm gluten intolerant": what the user cannot eat, filed beside allergies (health, diet)."""
    m = _INTOLERANT_RE.match(s)
    if m is None:
        return None
    obj = m.group("obj").lower()
    return [candidate(ctx, Kind.FACT, f"User is {obj} intolerant.", "fact:allergy_" + obj, obj, "user's intolerance",
                      entities=[])]


def _en_have(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_HAVE_RE.match(s)
    if m is None:
        return None
    each = _conjuncts(m.group("obj"), counted=True)
    if each:  # "a cat named Luna and a dog named Rex", "a son and two daughters": one fact each
        found = [_en_have(f"I have {obj}", ctx) for obj in each]
        return [c for cs in found if cs for c in cs] or None
    named = _NAMES_AFTER_RE.match(m.group("obj"))  # "two cats, Luna and Max", "two cats named Luna and Max"
    if named:
        obj, name = named.group("obj").strip(), named.group("names")
    else:
        obj = trim_fillers(cut_clause(m.group("obj"))).strip()
        name = None
        nm = _NAMED_RE.search(obj)
        if nm:
            name, obj = nm.group("name").strip(), obj[: nm.start()].strip()
    words = [w.lower() for w in obj.split()]
    canon = next((c for i in range(1, min(5, len(words))) if (c := _HAS.get(" ".join(words[i:i + 2])) or _HAS.get(words[i]))),
                 None)  # (a pet of two words first: "a guinea pig")
    if canon is None or EN_TRANSIENT_RE.search(s):
        return None
    thing = " ".join(obj.split()[1:])
    out = [candidate(ctx, Kind.FACT, f"User has {obj}" + (f" named {name}." if name else "."), "fact:has_" + canon,
                     slot_value(obj if words[0] not in ("a", "an") else thing), f"the user has {thing}",
                     entities=entities_of(thing))]
    if name and valid_en_name(name) and words[0] in ("a", "an", "one"):
        out.append(candidate(ctx, Kind.FACT, f"User's {thing} is named {name}.", f"fact:{canon}_name", slot_value(name),
                             f"name of the user's {thing}", entities=[name]))
    return out


def _conjuncts(phrase: str, *, counted: bool = False) -> list[str]:
    """The items of a list of short noun phrases ("peanuts, tree nuts and shellfish"; with `counted`,
    each led by a/an/a number: "a cat named Luna and a dog"), or [] when `phrase` is not one."""
    phrase = phrase.strip().rstrip(".!")
    if len(phrase) > 120 or not _LIST_SPLIT_RE.search(phrase):
        return []
    items = [i.strip() for i in _LIST_SPLIT_RE.split(phrase) if i.strip()]
    if len(items) < 2 or any(len(i.split()) > (5 if counted else 3) for i in items):
        return []
    if counted and not all(_COUNTED_RE.match(i) for i in items):
        return []
    if not counted and any(_NOT_A_NOUN_RE.search(i) for i in items):
        return []
    return items


_LIST_SPLIT_RE = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_COUNTED_RE = re.compile(r"^(?:a|an|one|two|three|four|five|\d+)\s+[a-z]", re.I)
_NOT_A_NOUN_RE = re.compile(r"\b(?:i|i'm|my|it|is|are|was|be|been|have|has|so|but|because|when|if|which|that|too)\b", re.I)


def _en_my(s: str, ctx: Ctx) -> list[Candidate] | None:
    home = _EN_HOME_IN_RE.match(s)  # "My new apartment is in Brooklyn": where the user lives
    if home is not None:
        place = _en_place(home.group("place"))
        if not _place_ok(place) or place[:1].islower():
            return None
        return [candidate(ctx, Kind.FACT, as_sentence("User's " + s[3: home.start("place")] + place), "fact:location",
                          slot_value(place), "where the user lives (home)", entities=entities_of(place),
                          valid_from=ctx.now if home.group("new") else None)]
    m = _EN_MY_RE.match(s)
    if m is None:
        m = _EN_MY_S_RE.match(s)
        if m is None:
            return None
    attr = WS_RE.sub(" ", m.group("attr").lower().strip())
    shown = trim_fillers(cut_clause(m.group("val"))).strip()
    val = shown
    if not val or len(val.split()) > 8 or pronoun_led(val):
        return None
    key = None
    named = re.match(r"^(?:called|named)\s+(?P<n>.+)$", val, re.I)
    ra = _EN_MY_REL_ATTR_RE.match(attr)
    if ra:
        key = f"fact:{_RELATIONS[ra.group('rel').lower()]}_{_ATTRS[ra.group('attr').lower()]}"
    elif attr in _RELATIONS and named:
        val = named.group("n").strip()
        key = f"fact:{_RELATIONS[attr]}_name"
        if not valid_en_name(val):
            return None
    elif attr in _ATTRS:
        key = "fact:" + _ATTRS[attr]
        if key == "fact:name" and not valid_en_name(val):
            return None
        if key == "fact:occupation" and not _job_ok(ART_RE.sub("", val)):
            return None  # "my job is boring"
    if key is None or val.lower() in _EVALUATIVE:
        return None
    if key.endswith(("birthday", "anniversary")):
        val = re.sub(r"^on\s+", "", val, flags=re.I)
        day = calendar_day(val, ctx.now, "en")  # "the 15th of next month" → "January 15"
        if day is not None:
            shown, val = shown[: shown.rfind(val)] + day, day
    content = en_third(s[: m.start("val")] + shown)
    return [candidate(ctx, Kind.FACT, content, key, slot_value(val), f"user's {attr}",
                      entities=entities_of(val) if key.endswith("name") else [])]


_EN_AGE_RE = re.compile(
    r"^i(?:(?:'m|\s+am)\s+(?:now\s+|already\s+|just\s+|only\s+)?(?P<n>\d{1,3}|[a-z]+(?:[- ][a-z]+)?)"
    r"(?P<old>\s+(?:years?|yrs?)(?:\s+old|\s+of\s+age))?(?:\s+now)?"
    r"|\s+(?:just\s+|recently\s+|finally\s+)?turned\s+(?P<n2>\d{1,3}|[a-z]+(?:[- ][a-z]+)?))$",
    re.I,
)
_EN_LEARN_RE = re.compile(
    rf"^i(?:(?:'m|\s+am)\s+{EN_ADV}(?:learning|studying|teaching\s+myself)"
    rf"|(?:'ve|\s+have)\s+{EN_ADV}(?:been\s+(?:learning|studying|teaching\s+myself)"
    r"|started\s+(?:learning|studying|to\s+learn|to\s+study))"
    rf"|\s+{EN_ADV}(?:started|began)\s+(?:learning|studying|to\s+learn|to\s+study|teaching\s+myself))\s+(?P<obj>.+)$"
    rf"|^i(?:'m|\s+am|'ve|\s+have|\s+{EN_ADV}(?:started|began))\s+{EN_ADV}(?:been\s+)?taking\s+"
    r"(?P<lesson>[a-z][a-z ]{1,30}?)\s+(?:lessons|classes|courses)$",
    re.I,
)
_LEARN_BAD_FIRST = frozenset(
    """for at in on with from about by under hard abroad a an so lots lot more things stuff everything something
    new online remotely together alone right now full part late""".split()
)
_HOW_RE = re.compile(r"^how\s+(?=to\s)", re.I)


def _en_age(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"I'm 34 years old", "I am 34", "I just turned 34" → fact:age."""
    m = _EN_AGE_RE.match(trim_time(s))
    if m is None:
        return None
    n = en_number(m.group("n") or m.group("n2"))
    bare = m.group("n") and not m.group("old")
    if n is None or not (10 if bare else 1) <= n <= 119:
        return None
    return [candidate(ctx, Kind.FACT, f"User is {n} years old.", "fact:age", str(n), "user's age",
                      valid_from=ctx.now)]


_FOR_A_WHILE_RE = re.compile(
    r"\s+(?:for|since)\s+(?:about\s+|around\s+|almost\s+|nearly\s+|over\s+)?(?:\d+|a|an|one|two|three|four|five|six"
    r"|seven|eight|nine|ten|a\s+few|a\s+couple\s+of|several)\s+(?:days?|weeks?|months?|years?)"
    r"(?:\s+(?:straight|in\s+a\s+row))?(?:\s+(?:now|already|so\s+far))?$",  # ("for 200 days straight now")
    re.I,
)


_LEARN_HOW_RE = re.compile(r"\s+(?:on|with|through|via|using|at|from)\s+.+$", re.I)  # where or how, not what


def _en_learning(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"I started learning Japanese", "I'm learning to play the piano" → fact:learning_<x>."""
    m = _EN_LEARN_RE.match(s)
    if m is None:
        return None
    if m.group("lesson"):
        obj, start = m.group("lesson").strip(), m.start("lesson")
    else:
        obj, start = _HOW_RE.sub("", trim_time(trim_fillers(cut_clause(m.group("obj")))).strip()), m.start("obj")
    lasting = _FOR_A_WHILE_RE.search(obj)  # "Spanish for about two years": Spanish, for about two years
    if lasting:
        obj = obj[: lasting.start()]
    words = obj.lower().split()
    if len(words) > 2 and words[0] == "for" and words[1] in ("the", "my", "a", "an", "our") \
            and words[-1] not in ("while", "bit") and not m.group("lesson"):
        return None  # "studying for the bar exam": what for, said as said (engram.extract.statements)
    if not words or len(words) > 5 or words[0] in _LEARN_BAD_FIRST or pronoun_led(obj) \
            or CONTEXT_WORDS.intersection(words):
        return []
    slug = slugify(_LEARN_HOW_RE.sub("", obj), consume=True, limit=4)  # ("Spanish on Duolingo": learning Spanish)
    if not slug:
        return []
    content = en_third(s[:start] + obj + (lasting.group() if lasting else "")
                       + (s[m.end("lesson"):] if m.group("lesson") else ""))
    return [candidate(ctx, Kind.FACT, content, "fact:learning_" + slug, slug.replace("_", " "),
                      "what the user is learning", entities=entities_of(obj) if obj[:1].isupper() else [])]


# "I'm 5'6 and 160 lbs", "I'm 180 cm tall", "I weigh 72 kg": the user's height and weight
_HEIGHT = r"\d'\s?\d{1,2}(?:\"|''|”)?|\d\s?(?:ft|foot|feet)(?:\s?\d{1,2}(?:\s?(?:in|inches))?)?|1[.,]\d{1,2}\s?m|1\d{2}\s?cm"
_WEIGHT = r"\d{2,3}(?:[.,]\d)?\s?(?:lbs?|pounds|kg|kgs|kilos)"
_EN_BODY_RE = re.compile(
    rf"^i(?:(?:'m|\s+am)\s+(?:(?P<h>{_HEIGHT})(?:\s+tall)?(?:\s*(?:,|and)\s*(?:weigh\s+)?(?P<w>{_WEIGHT}))?"
    rf"|(?P<w2>{_WEIGHT}))|\s+(?:currently\s+|now\s+)?weigh\s+(?:about\s+|around\s+)?(?P<w3>{_WEIGHT}))"
    r"(?:\s+(?:right\s+now|now|at\s+the\s+moment|currently))?$",
    re.I,
)


def _en_body(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"I'm 5'6 and 160 lbs right now" → fact:height and fact:weight (as of when it was said)."""
    m = _EN_BODY_RE.match(s)
    if m is None:
        return None
    out = []
    if m.group("h"):
        out.append(candidate(ctx, Kind.FACT, f"User is {m.group('h')} tall.", "fact:height", slot_value(m.group("h")),
                             "user's height"))
    weight = m.group("w") or m.group("w2") or m.group("w3")
    if weight:
        out.append(candidate(ctx, Kind.FACT, f"User weighs {weight}.", "fact:weight", slot_value(weight),
                             "user's weight", valid_from=ctx.now))
    return out


# a place of the user's set beside its name, inside a sentence about something else: "a gift from my
# grandma in my home country, Sweden"; "I visited my hometown, Boston, last week"
_EN_HOME_ASIDE_RE = re.compile(
    r"\bmy\s+(?P<attr>home\s+country|hometown|home\s+town|native\s+country|birthplace),?\s+"
    r"(?-i:(?P<x>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\b", re.I)


def en_home_aside(s: str, ctx: Ctx) -> list[Candidate]:
    """The user's home named in passing ("…in my home country, Sweden"), as if said on its own."""
    m = _EN_HOME_ASIDE_RE.search(s)
    if m is None:
        return []
    return _en_my(f"My {' '.join(m.group('attr').lower().split())} is {m.group('x')}", ctx) or []


def en_fact(s: str, ctx: Ctx) -> list[Candidate] | None:
    """The first fact rule that matches an English clause starting with "I" or "my"."""
    low = s[:2].lower()
    together = _EN_WE_RE.match(s)
    if together is not None:  # "We live in Austin", "My husband and I live in Austin": the user lives there too
        rest = s[together.end():]  # (not "we moved to …": a family's move may be long ago, "when I was five")
        said = "I" + _WE_ARE_RE.sub(lambda m: "'m" if m.group().startswith("'") else " am", rest, count=1)
        if _EN_WE_HAVE_RE.match(rest):  # "We have a dog": the user has one too
            return _en_have(said, ctx)
        return (_en_location(said, ctx) or None) if _EN_WE_LIVE_RE.match(rest) else None
    if low.startswith("my"):
        return _en_my(s, ctx)
    if not low.startswith("i"):
        return None
    for fn in (_en_location, _en_from, _en_work, _en_diet, _en_allergy, _en_job, _en_have, _en_body, _en_age,
               _en_learning):
        found = fn(s, ctx)
        if found is not None:
            return found
    return None
