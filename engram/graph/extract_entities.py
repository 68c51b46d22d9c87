"""Entities and relations in what someone said, by rules, in English and Chinese.

Precision first: a capitalised word is a name only mid-sentence and outside a stop list; a
type comes from the words around it ("works at X": an organisation, "a dog named X": a pet,
"去X" with a known place: a place) or from small lexicons (activities, instruments). Kin words
name people by their relation ("my sister", "Melanie's kids", "我妈妈"): the owner is whoever
says "my" — the speaker of a "Name: text" turn, else the user. Pronouns other than "I" are not
guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from engram.animals import BREEDS_EN, BREEDS_ZH, PETS_EN_ONE
from engram.graph.names import key
from engram.relatives import KIN_EN, KIN_ZH

SELF = "@self"  # the user (or a turn's speaker) as the owner of "my …"


@dataclass(slots=True)
class Ref:
    """One entity as said: a name, or an owner's relation ("my sister") with or without one."""

    name: str  # as said; for an unnamed relation, how to show it ("my sister")
    type: str  # person, pet, place, org, project, product, work, activity, instrument, name
    role: str = "mention"  # speaker, subject or mention (engram.store.graph.MentionRow)
    owner: int | None = None  # index of the ref whose relation this is (or SELF_REF)
    relation: str | None = None  # kin or pet relation to the owner
    named: bool = True  # False: only the relation is known ("my wife")
    known_only: bool = False  # a sentence's first word: an entity only if the user named it before


SELF_REF = -1  # `Ref.owner` for the user


@dataclass(slots=True)
class Rel:
    src: int  # ref index (SELF_REF for the user)
    rel: str
    dst: int
    reason: str


@dataclass(slots=True)
class Found:
    refs: list[Ref] = field(default_factory=list)
    rels: list[Rel] = field(default_factory=list)

    def add(self, ref: Ref) -> int:
        """Index of `ref`, the earlier one when the same entity was already found here."""
        k = key(ref.name)
        for i, old in enumerate(self.refs):
            if key(old.name) == k and old.owner == ref.owner:
                if old.type == "name" and ref.type != "name":
                    old.type = ref.type
                if ref.relation and not old.relation:
                    old.owner, old.relation = ref.owner, ref.relation
                return i
        self.refs.append(ref)
        return len(self.refs) - 1

    def relate(self, src: int, rel: str, dst: int, reason: str) -> None:
        if src != dst and not any(r.src == src and r.rel == rel and r.dst == dst for r in self.rels):
            self.rels.append(Rel(src, rel, dst, reason))


_NAME = r"[A-Z][a-zA-Z'’\-]{1,30}"  # bounded: every pattern stays linear in the text's length
_NAMES = rf"{_NAME}(?:\s+(?:of\s+)?{_NAME}){{0,3}}"
_SPEAKER = re.compile(rf"^\s*({_NAME}(?: {_NAME})?):\s+")
_STOP = set("""
I I'm I've I'd I'll Im Ive Id Hey Hi Hello Yeah Yes No Oh Wow Thanks Thank Sure Okay OK Ok Well So And But Or
Also Just Really That This These Those It It's Its What When Where Why How Who Which Whoa Woah Yay Aww Haha Lol
Good Great Nice Cool Awesome Congrats Congratulations Sorry Please Let Let's Me My Mine We We're Our You You're
Your He She They Their His Her Them Mom Dad Mum Today Tomorrow Yesterday Tonight Monday Tuesday Wednesday
Thursday Friday Saturday Sunday January February March April May June July August September October November
December Christmas Easter Halloween Thanksgiving Bye Goodbye Here There Then Now Not Do Does Did Can Could Would
Should Will Have Has Had Is Are Was Were Be Been Being Any Some All Every Each Both Maybe Definitely Absolutely
Totally Glad Happy Love Lots Plus Btw BTW Anyway Anyways Besides Luckily Unfortunately Hopefully Honestly
Actually Seriously Right Exactly Agreed Same Totally Keep Take Check Look See Go Got Get Talk Catch Stay Have
Hope Hmm Ah Ahh Ooh Uh Um Dear LGBTQ LGBTQ+ LGBT AI TV DIY Mr Mrs Ms Dr The A An Last Next Woohoo Whoo Yup Yep
Nope Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Here's There's
That's It's What's Wanna Gonna Gotta Sounds Looks Omg OMG Aw Awww Bravo Cheers Welcome Happy Merry Guess Imagine
""".split())
_KIN = "|".join(sorted((re.escape(k) for k in KIN_EN), key=len, reverse=True))
_OWNED_KIN = re.compile(
    rf"\b((?i:my|our)|(?P<owner>{_NAME})['’]s)\s+(?:(?:little|older|younger|big|baby|oldest|youngest|eldest|twin|step)\s+)?"
    rf"(?P<kin>{_KIN})\b(?:,?\s+(?P<name>{_NAME})\b)?"
)
_KIN_NAMED = re.compile(
    rf"\b(?P<name>{_NAME}) is (?i:my) (?:(?:little|older|younger|big|baby)\s+)?(?P<kin>{_KIN})\b"
    rf"|\b(?i:my) (?P<kin2>{_KIN})['’]s name is (?P<name2>{_NAME})|\b(?i:my) (?P<kin3>{_KIN}) is (?:named|called) (?P<name3>{_NAME})"
    # "We have a son named Leo", "I have a five-year-old daughter called Mia"
    rf"|\b(?i:I|we)(?:\s+(?i:also|now))?\s+(?i:have|'ve\s+got)\s+(?i:a|an|one)\s+(?:[a-z-]+\s+){{0,2}}?"
    rf"(?P<kin4>{_KIN})\s*,?\s+(?:(?i:named|called)\s+)?(?P<name4>{_NAME})\b"
)
_THE_KIDS = re.compile(r"\b(?i:the|our)\s+(kids|children)\b")
_ANIMALS = "|".join(sorted((*PETS_EN_ONE, *BREEDS_EN), key=len, reverse=True))
_PET_NAMED = re.compile(
    rf"\b(?P<det>a|an|my|our|another|new|the)\s+(?:[a-z]+\s+){{0,2}}?(?P<animal>{_ANIMALS})\s*,?\s+"
    rf"(?:(?:named|called)\s+)?(?P<name>{_NAME})\b"
)
# "Max is my dog": the name first, then whose it is
_PET_IS_MINE = re.compile(
    rf"\b(?P<name>{_NAME}) is (?i:my|our) (?:(?:little|old|new|baby|sweet)\s+)?(?P<animal>{_ANIMALS})\b(?!['’])"
)
# several at once: "two cats, Luna and Milo", "two kids named Leo and Mia"
def _one_of(kin: str) -> str:
    """Each of "two kids, Emma and Noah" / "两个孩子" is a child."""
    return "child" if kin == "children" else kin


# a name with its age said beside it: "Emma who is 8", "Noah (5)"
_AGED = r"(?:\s+(?i:who\s+is|who's|aged)\s+\d{1,2}(?:\s+(?i:years\s+old))?|\s*\(\d{1,2}\))?"
_AGED_TAIL_RE = re.compile(_AGED.removesuffix("?") + "$")
_MANY_NAMED = re.compile(  # (or "my twins, Mia and Leo": a plural of theirs, then its names)
    rf"\b(?:(?i:two|three|four|2|3|4)\s+(?:[a-z-]+\s+)?|(?i:my|our)\s+(?:[a-z-]+\s+)?"
    r"(?=(?i:kids|children|twins|sons|daughters|sisters|brothers|grandkids|grandchildren|cats|dogs)\b))"
    rf"(?:(?P<animal>{_ANIMALS})|(?P<kin>{_KIN}))s?\s*,?\s+"
    rf"(?:(?i:named|called)\s+)?(?P<names>{_NAME}{_AGED}(?:\s*,\s*{_NAME}{_AGED})*\s*,?\s+and\s+{_NAME}{_AGED})"
    r"(?![\w'])"
)
_NAMES_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_PET = re.compile(rf"\b(?i:my|our|a|an|new)\s+(?:[a-z]+\s+)?(?P<animal>{_ANIMALS})s?\b")
_PET_NAME_LATER = re.compile(rf"\b(?i:(?:her|his|its) name(?:'s| is)|named (?:her|him|it)|called (?:her|him|it))\s+(?P<name>{_NAME})")
_WORKS = re.compile(
    rf"\b(?P<who>I|{_NAME}(?:\s+{_NAME}){{0,2}})\s+(?:(?:am|'m|is|was|have been|just)\s+)?(?:work|works|worked|working|intern|interning|"
    rf"interned|volunteer|volunteers|volunteered|volunteering)\s+(?:as\s+an?\s+[a-z]+(?:\s+[a-z]+)?\s+)?(?:at|for|with)\s+"
    rf"(?:the\s+)?(?P<org>{_NAMES})"
)
_JOINED = re.compile(rf"\b(?P<who>I|{_NAME})\s+(?:just\s+)?(?:joined|started at|got a job at|got hired at|lost my job at)\s+(?:the\s+)?(?P<org>{_NAMES})")
_PLACE = re.compile(
    rf"\b(?P<how>moved to|moved from|move to|live in|lives in|living in|lived in|grew up in|from|visited|visiting|visit|"
    rf"trip to|travel(?:l?ed)? to|went to|going to|flew to|in|to|at|near)\s+(?:the\s+)?(?P<place>{_NAMES})"
)
_PROJECT = re.compile(rf"\b[Pp]roject\s+(?P<a>{_NAME}|[A-Z0-9][\w-]{{0,30}})|\b(?P<b>{_NAMES})\s+project\b")
_TITLE = re.compile(r"[\"“](?P<title>[A-Z][^\"“”]{1,60}?)[\"”]")
_PRODUCT = re.compile(r"\b(?:bought|buy|got|use|using|ordered|my new|new)\s+(?:an?\s+|the\s+|my\s+)?(?P<p>(?:[A-Z][a-zA-Z0-9]{0,30}|i[A-Z][a-z]{1,30})(?:\s+[A-Z0-9]\w{0,30})?)")
_CAPS = re.compile(rf"(?<![\w'’])({_NAMES})")
_ORG_WORDS = re.compile(r"\b(?:Inc|Corp|Company|Ltd|LLC|University|College|School|Hospital|Bank|Foundation|Institute|Center|Centre|Club|Studio|Agency|Group|Society)\b")

_ACTIVITY_FORMS = {
    "pottery": "pottery", "painting": "painting", "paint": "painting", "painted": "painting", "paints": "painting",
    "camping": "camping", "camp": "camping", "camped": "camping", "hiking": "hiking", "hike": "hiking",
    "hiked": "hiking", "hikes": "hiking", "swimming": "swimming", "swim": "swimming", "swam": "swimming",
    "running": "running", "run": "running", "ran": "running", "jogging": "running", "reading": "reading",
    "dancing": "dancing", "dance": "dancing", "danced": "dancing", "yoga": "yoga", "cooking": "cooking",
    "cook": "cooking", "cooked": "cooking", "baking": "baking", "bake": "baking", "baked": "baking",
    "gardening": "gardening", "fishing": "fishing", "surfing": "surfing", "skiing": "skiing", "cycling": "cycling",
    "biking": "cycling", "climbing": "climbing", "photography": "photography", "writing": "writing",
    "knitting": "knitting", "drawing": "drawing", "singing": "singing", "meditation": "meditation",
    "meditating": "meditation", "volunteering": "volunteering", "traveling": "travel", "travelling": "travel",
    "skating": "skating", "chess": "chess", "gaming": "gaming", "tennis": "tennis", "soccer": "soccer",
    "basketball": "basketball", "golf": "golf", "taekwondo": "taekwondo", "karate": "karate", "boxing": "boxing",
    "pilates": "pilates", "kayaking": "kayaking", "sculpting": "sculpting", "woodworking": "woodworking",
    "horseback riding": "horseback riding", "rock climbing": "climbing", "martial arts": "martial arts",
    "road trip": "road trip", "roadtrip": "road trip", "museum": "museum visits", "concert": "concerts",
    "marathon": "running", "workout": "exercise", "gym": "exercise",
}
_INSTRUMENTS = (
    "piano|guitar|violin|clarinet|drums|drum|flute|saxophone|sax|cello|ukulele|trumpet|harp|bass|keyboard|banjo|"
    "harmonica|accordion|oboe|trombone"
)
_INSTRUMENT_WORDS = frozenset(_INSTRUMENTS.split("|"))
_LOWER_WORD = re.compile(r"[a-z]+")

# Chinese
_HAN = r"[\u4e00-\u9fff]"
_ZH_KIN = "|".join(sorted(map(re.escape, KIN_ZH), key=len, reverse=True))
# common surnames, for a name set right after a relative ("我和老公李明"): a family name or 小/阿
# must start it, or "我妈妈做饭" would name her 做饭
_ZH_SURNAMES = (
    "李王张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟"
    "谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤小阿"
)
# words a family name or 小/阿 also starts ("我老公马上…", "我妈妈小时候，…")
_ZH_NOT_NAMES = "马上|周末|高兴|许多|方便|何时|向来|于是|白天|金钱|严重|程度|小时|小心|小区|小学|小说|小孩|小吃|阿姨|黄昏|毛病|武汉"
_ZH_OWNED_KIN = re.compile(
    rf"我(?:的|和|跟|与)?(?P<kin>{_ZH_KIN})(?:(?:名字)?(?:叫做|叫|名叫)(?P<name>{_HAN}{{2,3}}|[A-Z][a-z]+)"
    # after 是 only a name that is one ("我的老师是王芳"), not what they are ("我女儿是个医生", "是老师")
    rf"|是(?P<name_is>[{_ZH_SURNAMES}]{_HAN}{{1,2}}|[A-Z][a-z]+)(?=[，,。！!？?、\s]|$)"
    rf"|(?!{_ZH_NOT_NAMES})(?P<beside>[{_ZH_SURNAMES}]{_HAN}{{1,2}}|[A-Z][a-z]+)"
    r"(?=[，,。！!？?、\s]|$|是|和|跟|与|打算|准备|计划|今天|昨天|明天|刚|也|都|说))?"
)
# "我们有一个五岁的儿子叫乐乐", "我有个女儿叫小美"
# "小雨是我女儿", "王芳是我的同事": a clause that opens with the name (not a pronoun), then whose
# they are (not "小雨是我女儿的同学")
_ZH_KIN_IS_MINE = re.compile(
    rf"(?:^|(?<=[，,。！!？?；;\s]))(?!他|她|它|这|那|谁)(?P<name>{_HAN}{{2,3}}|[A-Z][a-z]+)是我的?(?P<kin>{_ZH_KIN})(?!{_HAN})"
)
_ZH_HAS_KIN = re.compile(
    rf"我(?:们家|们|家)?(?:也|还)?有(?:一|两|三)?(?:个|位)?(?:{_HAN}{{1,4}}的)?(?P<kin>{_ZH_KIN})[，,]?"
    rf"(?:名字|她|他)?(?:叫做|叫|名叫)(?P<name>{_HAN}{{2,3}}|[A-Z][a-z]+)"
)
# "我家有两个孩子，大的叫朵朵，8岁，小的叫豆豆": each one named after the count
_ZH_HAS_MANY_KIN = re.compile(rf"我(?:们家|们|家)?(?:也|还)?有(?:两|三|四|2|3|4)个(?P<kin>{_ZH_KIN})")
_ZH_EACH_NAMED = re.compile(
    rf"(?:大的|小的|老大|老二|老三|一个|另一个|大{_HAN}{{1,2}}|小{_HAN}{{1,2}})(?:叫做|叫|名叫)(?P<name>{_HAN}{{2,3}}|[A-Z][a-z]+)"
)
_ZH_ANIMALS = "|".join(["小猫", "小狗", "猫咪", "猫", "狗狗", "狗", "兔子", "鹦鹉", "仓鼠", "金鱼", "乌龟", "小鸟", "马",
                        *BREEDS_ZH])
_ZH_PET = re.compile(
    rf"(?:养了|养着|有|领养了|收养了|买了|捡了)(?:一|两|几)?(?:只|条|匹|头)?(?P<animal>{_ZH_ANIMALS})"
    rf"[，,、\s]{{0,3}}(?:它|他|她)?(?:的名字|名字)?(?:叫做|叫|名叫)(?P<name>{_HAN}{{1,4}}|[A-Za-z]{{1,30}})"
)
_ZH_ORG_SUFFIX = "公司|集团|银行|大学|学院|学校|医院|研究所|研究院|工作室|实验室|基金会|事务所|中学|小学|工厂|协会"
_ZH_ORG = re.compile(rf"(?P<org>(?:[A-Za-z0-9]{{1,30}}|{_HAN}{{1,8}}?)(?:{_ZH_ORG_SUFFIX}))")
_ZH_WORK = re.compile(rf"(?P<who>我|{_HAN}{{2,3}})在(?P<org>[A-Za-z0-9]{{1,30}}|{_HAN}{{2,10}}?)(?:工作|上班|实习|任职|当)")
_ZH_CONTACT = re.compile(
    rf"(?P<who>{_HAN}{{2,3}}|[A-Z][a-z]{{1,30}})是(?P<org>[A-Za-z0-9]{{1,30}}|{_HAN}{{1,10}}?)的(?P<rel>联系人|负责人|老板|经理|创始人|客户|对接人|老师)"
)
_ZH_PROJECT_A = re.compile(rf"项目(?P<a>[A-Za-z0-9]{{1,30}}|[“\"「](?:{_HAN}|\w){{1,10}}[”\"」])")
_ZH_PROJECT_B = re.compile(rf"(?P<b>[A-Za-z0-9]{{1,30}}|{_HAN}{{2,6}})项目")
_ZH_WITH = re.compile(rf"(?P<org>\S{{1,12}}?(?:{_ZH_ORG_SUFFIX}))(?:合作|一起做|一起负责|负责)")
_ZH_PLACES = (
    "北京|上海|广州|深圳|杭州|南京|成都|重庆|武汉|西安|天津|苏州|厦门|青岛|大连|长沙|昆明|香港|澳门|台北|台湾|"
    "日本|东京|大阪|京都|韩国|首尔|美国|纽约|洛杉矶|旧金山|英国|伦敦|法国|巴黎|德国|柏林|意大利|罗马|西班牙|"
    "加拿大|澳大利亚|悉尼|新加坡|泰国|曼谷|越南|瑞典|中国|云南|海南|三亚|西藏|新疆|内蒙古|东北|江南"
)
_ZH_PLACE = re.compile(rf"(?P<how>住在|来自|搬到|搬去|去了|去过|去|到|在|回|从)?(?P<place>{_ZH_PLACES}|{_HAN}{{2,4}}(?:市|省|县))")
_ZH_NAMED = re.compile(rf"(?:叫做|名叫|叫)(?P<name>{_HAN}{{2,3}})(?:的|，|,|。|！|$)")
_ZH_ACTIVITIES = "陶艺|画画|绘画|露营|徒步|爬山|游泳|跑步|读书|阅读|跳舞|瑜伽|做饭|烘焙|园艺|钓鱼|冲浪|滑雪|骑行|攀岩|摄影|写作|编织|唱歌|冥想|旅行|下棋|打游戏|网球|足球|篮球|高尔夫|跆拳道|空手道|拳击|普拉提"
_ZH_ACTIVITY = re.compile(rf"({_ZH_ACTIVITIES})")
_ZH_INSTRUMENT = re.compile(r"(钢琴|吉他|小提琴|单簧管|架子鼓|鼓|长笛|萨克斯|大提琴|尤克里里|小号|古筝|二胡|琵琶)")

_WORK_REL = {"work": "works_at", "intern": "works_at", "volunteer": "volunteers_at"}
_PLACE_REL = {
    "moved to": "lives_in", "move to": "lives_in", "live in": "lives_in", "lives in": "lives_in",
    "living in": "lives_in", "lived in": "lived_in", "grew up in": "from", "from": "from", "moved from": "from",
    "visited": "visited", "visiting": "visited", "visit": "visited", "trip to": "visited", "went to": "visited",
    "flew to": "visited", "going to": "visited",
}
_ZH_PLACE_REL = {"住在": "lives_in", "搬到": "lives_in", "搬去": "lives_in", "来自": "from", "去了": "visited",
                 "去过": "visited", "去": "visited", "到": "visited", "回": "visited", "从": "from"}


MAX_CHARS = 4_000  # what is read of one memory (memories are short; a pasted document is not a list of names)


def may_be_name(word: str) -> bool:
    """Could a capitalised word that opens a sentence be someone's name ("Sam", not "Thanks")?"""
    return word not in _STOP and not word.endswith("ing")


def extract(text: str) -> Found:
    """Entities and relations in one memory's text ("Name: …" turns are said by Name)."""
    text = text[:MAX_CHARS]
    found = Found()
    owner = SELF_REF
    speaker = _SPEAKER.match(text)
    body = text
    if speaker:
        owner = found.add(Ref(speaker.group(1), "person", role="speaker"))
        body = text[speaker.end():]
    if re.search(_HAN, body):
        _chinese(body, found, owner)
    _english(body, found, owner)
    return found


def _animal(said: str) -> str:
    """The animal a pet word names: "retriever" → "dog" (so "my dog" finds Biscuit)."""
    word = said.lower()
    return BREEDS_EN.get(word, word)


def _who(found: Found, word: str, owner: int) -> int:
    return owner if word in ("I", "我") else found.add(Ref(word, "person"))


def _english(body: str, found: Found, owner: int) -> None:
    taken: list[tuple[int, int]] = []  # spans already read as something

    def free(start: int, end: int) -> bool:
        return not any(s < end and start < e for s, e in taken)

    def owner_of(m: re.Match[str]) -> int:
        named = m.group("owner")
        return found.add(Ref(named, "person")) if named and named not in _STOP else owner

    for m in _KIN_NAMED.finditer(body):
        kin = KIN_EN[(m.group("kin") or m.group("kin2") or m.group("kin3") or m.group("kin4")).lower()]
        name = m.group("name") or m.group("name2") or m.group("name3") or m.group("name4")
        if name in _STOP:
            continue
        i = found.add(Ref(name, "person", owner=owner, relation=kin))
        found.relate(owner, kin, i, m.group(0))
        taken.append(m.span())
    for m in _MANY_NAMED.finditer(body):  # (first: "my twins, Mia and Leo" are each a child)
        if not free(*m.span()):
            continue
        kin = m.group("kin") and KIN_EN[m.group("kin").lower()]
        for name in _NAMES_SPLIT.split(m.group("names")):
            name = _AGED_TAIL_RE.sub("", name)  # "Emma who is 8": Emma
            if name in _STOP:
                continue
            if m.group("animal"):
                i = found.add(Ref(name, "pet", owner=owner, relation=_animal(m.group("animal"))))
                found.relate(owner, "has_pet", i, m.group(0))
            else:
                relation = _one_of(kin)
                i = found.add(Ref(name, "person", owner=owner, relation=relation))
                found.relate(owner, relation, i, m.group(0))
        taken.append(m.span())
    for m in _OWNED_KIN.finditer(body):
        if not free(*m.span()):
            continue
        kin = KIN_EN[m.group("kin").lower()]
        who = owner_of(m) if m.group("owner") else owner
        name = m.group("name")
        if name and name not in _STOP and free(m.start("name"), m.end("name")):
            i = found.add(Ref(name, "person", owner=who, relation=kin))
        else:
            label = ("my " if who == owner and not m.group("owner") else f"{m.group('owner')}'s ") + m.group("kin").lower()
            i = found.add(Ref(label, "person", owner=who, relation=kin, named=False))
        found.relate(who, kin, i, m.group(0))
        taken.append(m.span())
    for m in _THE_KIDS.finditer(body):
        if owner != SELF_REF:  # a speaker's "the kids" are theirs
            i = found.add(Ref(f"my {m.group(1).lower()}", "person", owner=owner, relation="children", named=False))
            found.relate(owner, "children", i, m.group(0))
    for m in _PET_IS_MINE.finditer(body):
        if m.group("name") not in _STOP:
            i = found.add(Ref(m.group("name"), "pet", owner=owner, relation=_animal(m.group("animal"))))
            found.relate(owner, "has_pet", i, m.group(0))
            taken.append(m.span())
    for m in _PET_NAMED.finditer(body):
        name = m.group("name")
        if name in _STOP or (m.group("det") == "the" and " named " not in m.group(0) and " called " not in m.group(0)):
            continue
        i = found.add(Ref(name, "pet", owner=owner, relation=_animal(m.group("animal"))))
        found.relate(owner, "has_pet", i, m.group(0))
        taken.append(m.span())
    pets = list(_PET.finditer(body))
    later = _PET_NAME_LATER.search(body)
    if later and pets and later.group("name") not in _STOP:
        i = found.add(Ref(later.group("name"), "pet", owner=owner, relation=_animal(pets[-1].group("animal"))))
        found.relate(owner, "has_pet", i, f"{pets[-1].group(0)} … {later.group(0)}")
        taken.append(later.span())
    elif pets and not any(r.type == "pet" for r in found.refs):
        animal = _animal(pets[0].group("animal"))
        i = found.add(Ref(f"my {animal}", "pet", owner=owner, relation=animal, named=False))
        found.relate(owner, "has_pet", i, pets[0].group(0))
    for pattern in (_WORKS, _JOINED):
        for m in pattern.finditer(body):
            org = _trim(m.group("org"))
            if not org or org in _STOP:
                continue
            who = _who(found, m.group("who"), owner) if m.group("who") not in _STOP or m.group("who") == "I" else owner
            i = found.add(Ref(org, "org"))
            verb = m.group(0).split()[1 if m.group("who") else 0].lower()
            rel = next((r for w, r in _WORK_REL.items() if w in m.group(0).lower()), "member_of")
            found.relate(who, rel if verb else "works_at", i, m.group(0))
            taken.append(m.span("org"))
    for m in _PROJECT.finditer(body):
        name = m.group("a") or m.group("b")
        if name and name not in _STOP:
            found.add(Ref(name.strip(), "project"))
            taken.append(m.span())
    for m in _TITLE.finditer(body):
        found.add(Ref(m.group("title").strip(" ,.!?"), "work"))
        taken.append(m.span())
    for m in _PLACE.finditer(body):
        place = _trim(m.group("place"))
        if not place or place in _STOP or not free(m.start("place"), m.end("place")):
            continue
        how = m.group("how").lower()
        kind = "org" if _ORG_WORDS.search(place) else "place" if how not in ("at", "to") else "name"
        i = found.add(Ref(place, kind))
        rel = _PLACE_REL.get(how)
        if rel and kind == "place":
            found.relate(owner, rel, i, m.group(0))
        taken.append(m.span("place"))
    for m in _PRODUCT.finditer(body):
        product = m.group("p").strip()
        if product.split()[0] not in _STOP and free(m.start("p"), m.end("p")):
            found.add(Ref(product, "product"))
            taken.append(m.span("p"))
    for m in _CAPS.finditer(body):
        name = _trim(m.group(1))
        if not name or not free(m.start(1), m.end(1)) or name in _STOP:
            continue
        before = body[: m.start(1) + m.group(1).find(name)].rstrip()
        if not before or before[-1] in ".!?\"“:":  # a sentence's first word: maybe a known name
            if name.split()[0] in _STOP:
                continue
            if " " not in name:
                found.add(Ref(name, "name", known_only=True))
                continue
        found.add(Ref(name, "org" if _ORG_WORDS.search(name) else "name"))
        taken.append(m.span(1))
    words = _LOWER_WORD.findall(body.lower())  # the lexicons by lookup: one pass, not a regex per word list
    for first, second in pairwise([*words, ""]):  # each word with the next (the last with none)
        phrase = f"{first} {second}"
        if phrase in _ACTIVITY_FORMS:
            found.relate(owner, "does", found.add(Ref(_ACTIVITY_FORMS[phrase], "activity")), phrase)
        elif first in _ACTIVITY_FORMS:
            found.relate(owner, "does", found.add(Ref(_ACTIVITY_FORMS[first], "activity")), first)
        if first in _INSTRUMENT_WORDS:
            name = {"drum": "drums", "sax": "saxophone"}.get(first, first)
            found.relate(owner, "plays", found.add(Ref(name, "instrument")), first)


def _trim(name: str) -> str:
    """A name without stop words at its ends ("Paris Yesterday" → "Paris") or a possessive
    ("Ed Sheeran's" → "Ed Sheeran")."""
    words = re.sub(r"(?:['’]s|['’])$", "", name).split()
    while words and words[-1] in _STOP:
        words.pop()
    while words and words[0] in _STOP:
        words.pop(0)
    if words and words[-1] == "of":
        words.pop()
    return " ".join(words)


_ZH_CUT = re.compile(r"(?:我们|他们|你们|和|与|跟|在|去|是|的|了|到|从|为|给|对|向|做|合作|一起)")


def _zh_tail(name: str) -> str:
    """The name at the end of a run of Chinese ("张三是甲公司" → "甲公司"): Chinese has no spaces,
    so a name starts after the last function word."""
    return _ZH_CUT.split(name)[-1]


def _zh_who(found: Found, who: str, owner: int) -> int:
    """我, 我妈妈 (the owner's relation) or a name."""
    if who == "我":
        return owner
    if who.startswith("我") and who[1:] in KIN_ZH:
        return found.add(Ref(who, "person", owner=owner, relation=KIN_ZH[who[1:]], named=False))
    return found.add(Ref(who, "person"))


def _chinese(body: str, found: Found, owner: int) -> None:
    named_first = {m.start("kin") - (2 if body[m.start("kin") - 1] == "的" else 1): m
                   for m in _ZH_KIN_IS_MINE.finditer(body)}  # "小雨是我女儿": where its "我" is
    for m in _ZH_OWNED_KIN.finditer(body):
        if m.start() in named_first:  # (not an unnamed "我女儿" beside 小雨)
            continue
        kin = KIN_ZH[m.group("kin")]
        name = m.group("name") or m.group("name_is") or m.group("beside")
        if name and not any(name.startswith(k) for k in KIN_ZH) and name not in ("老师", "医生"):
            i = found.add(Ref(name, "person", owner=owner, relation=kin))
        else:
            i = found.add(Ref(f"我{m.group('kin')}", "person", owner=owner, relation=kin, named=False))
        found.relate(owner, kin, i, m.group(0))
    for m in (*_ZH_HAS_KIN.finditer(body), *named_first.values()):
        i = found.add(Ref(m.group("name"), "person", owner=owner, relation=KIN_ZH[m.group("kin")]))
        found.relate(owner, KIN_ZH[m.group("kin")], i, m.group(0))
    for many in _ZH_HAS_MANY_KIN.finditer(body):
        relation = _one_of(KIN_ZH[many.group("kin")])
        for m in _ZH_EACH_NAMED.finditer(body, many.end()):
            i = found.add(Ref(m.group("name"), "person", owner=owner, relation=relation))
            found.relate(owner, relation, i, m.group(0))
    for m in _ZH_PET.finditer(body):
        i = found.add(Ref(m.group("name"), "pet", owner=owner, relation=m.group("animal")))
        found.relate(owner, "has_pet", i, m.group(0))
    for m in _ZH_CONTACT.finditer(body):
        person = _zh_who(found, _zh_tail(m.group("who")), owner)
        org_name = _zh_tail(m.group("org"))
        org = found.add(Ref(org_name, "project" if "项目" in org_name else "org"))
        rel = {"联系人": "contact_of", "对接人": "contact_of", "负责人": "leads", "创始人": "founded",
               "客户": "client_of", "老师": "teaches_at"}.get(m.group("rel"), "works_at")
        found.relate(person, rel, org, m.group(0))
    for m in _ZH_WORK.finditer(body):
        who = _zh_who(found, m.group("who"), owner)
        place = re.fullmatch(_ZH_PLACES, m.group("org")) is not None
        org = found.add(Ref(m.group("org"), "place" if place else "org"))
        found.relate(who, "works_in" if place else "works_at", org, m.group(0))
    for m in _ZH_ORG.finditer(body):
        name = _zh_tail(m.group("org"))
        if len(name) >= 2:
            found.add(Ref(name, "org"))
    projects = []
    for m in _ZH_PROJECT_A.finditer(body):
        projects.append(found.add(Ref("项目" + m.group("a").strip("“”\"「」"), "project")))
    for m in _ZH_PROJECT_B.finditer(body):
        name = _zh_tail(m.group("b"))
        if name and not projects:
            projects.append(found.add(Ref(f"{name}项目", "project")))
    for m in _ZH_WITH.finditer(body):
        o = found.add(Ref(_zh_tail(m.group("org")), "org"))
        for p in projects:
            found.relate(p, "involves", o, m.group(0))
    for m in _ZH_PLACE.finditer(body):
        i = found.add(Ref(m.group("place"), "place"))
        rel = _ZH_PLACE_REL.get(m.group("how") or "")
        if rel:
            found.relate(owner, rel, i, m.group(0))
    for m in _ZH_NAMED.finditer(body):
        if not any(r.name == m.group("name") for r in found.refs):
            found.add(Ref(m.group("name"), "name"))
    for m in _ZH_ACTIVITY.finditer(body):
        found.relate(owner, "does", found.add(Ref(m.group(1), "activity")), m.group(0))
    for m in _ZH_INSTRUMENT.finditer(body):
        found.relate(owner, "plays", found.add(Ref(m.group(1), "instrument")), m.group(0))
