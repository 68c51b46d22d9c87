"""Language detection, normalisation, lexical tokens and sentence splitting.

These run on every `add` and every `search`, so everything here is a pure
function over precompiled regexes with small caches. Chinese is tokenised
with rjieba words *plus* character bigrams so that two texts segmented
differently ("北京大学" / "北京的大学") still share tokens; English is
lowercased, stopword-filtered and Snowball-stemmed.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

__all__ = [
    "cjk_ratio",
    "detect_language",
    "has_unspaced_script",
    "is_cjk",
    "lexical_tokens",
    "normalize",
    "split_sentences",
]

# CJK unified ideographs (+ extension A, compatibility, extensions B..).
_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f]+")

# Chinese function characters: their presence tells a Chinese sentence from an
# English one that merely names a Chinese place or person ("I love 北京烤鸭").
_ZH_FUNCTION_CHARS = frozenset("的了是我你他她在和也就都很吗呢吧啊不有要这那个们用会说给把被让对")


def is_cjk(ch: str) -> bool:
    """True for one CJK ideograph."""
    return _CJK_RE.match(ch) is not None


# scripts written without spaces between words (Chinese, Japanese kana, Thai) or in syllable
# blocks (Korean): a subword tokenizer reads them a character or syllable at a time
_UNSPACED_RE = re.compile(f"[{_CJK_CLASS}\u3040-\u30ff\uac00-\ud7af\u0e00-\u0e7f]")


def has_unspaced_script(text: str) -> bool:
    """True when `text` holds Chinese, Japanese, Korean or Thai."""
    return _UNSPACED_RE.search(text) is not None


def cjk_ratio(text: str) -> float:
    """Share of CJK ideographs among ideographs + Latin words (a word counts once).

    Counting a Latin word as one unit (not one per letter) keeps
    "我在Google工作" Chinese: one CJK character carries about as much as a word.
    """
    cjk = len(_CJK_RE.findall(text))
    if not cjk:
        return 0.0
    words = len(_LATIN_WORD_RE.findall(text))
    return cjk / (cjk + words)


def detect_language(text: str) -> str:
    """``"zh"`` when the text is mainly Chinese, else ``"en"``."""
    cjk_chars = _CJK_RE.findall(text)
    if not cjk_chars:
        return "en"
    words = len(_LATIN_WORD_RE.findall(text))
    if not words:
        return "zh"
    share = len(cjk_chars) / (len(cjk_chars) + words)
    if share >= 0.75:
        return "zh"
    if share >= 0.5 and any(c in _ZH_FUNCTION_CHARS for c in cjk_chars):
        return "zh"
    return "en"


# --------------------------------------------------------------------------- tokens

_EN_STOPWORDS = frozenset(
    """
    a an the and or but nor if then else so because as of at by for with about against between
    into through during to from up down in out on off over under again further once here there
    than too very only own same such both each few more most other some any all no not
    i me my myself mine we us our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves one ones
    this that these those who whom whose which what when where why how whatever whenever
    am is are was were be been being have has had having do does did doing done
    will would shall should can could may might must ought
    s t m re ve ll d st nd rd th n
    yeah yes yep yup yah ya nope nah oh ooh ah uh um umm hmm hm er erm well ok okay k hey hi hello
    really just also still even ever quite pretty actually basically literally totally kinda
    sorta maybe lol haha hahaha lmao omg wow cool like? please thanks thank let lets gonna
    wanna gotta got get gets u ur im ive dont doesnt didnt cant wont isnt arent wasnt
    anyway anyways btw tbh idk fyi though although yet already soon now then there's here's
    something anything everything nothing someone anyone everyone thing things stuff
    user
    """.replace("like?", "").split()
)

_ZH_STOP_CHARS = frozenset(
    "的地得了着过吗呢吧啊呀哦嗯哈啦嘛么是我你您他她它们在和与及也就都很又还而但这那个把被让给对从于为以之其或并"
)
_ZH_STOPWORDS = frozenset(
    """
    我们 你们 他们 她们 它们 咱们 自己 什么 怎么 怎么样 怎样 为什么 哪里 哪儿 哪个 这个 那个 这些 那些
    这样 那样 这里 那里 一个 一些 一下 一点 有点 就是 还是 但是 因为 所以 如果 虽然 然后 而且 或者
    可以 可能 已经 的话 非常 特别 真的 比较 其实 觉得 也是 都是 不是 就是 还有 只是 那么 这么 用户
    啊啊 哈哈 哈哈哈 嗯嗯 好的 是的 对的
    """.split()
)

_NUM = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:[.:][0-9]+)*"
_TOKEN_RE = re.compile(
    f"(?P<cjk>[{_CJK_CLASS}]+)|(?P<num>{_NUM})|(?P<word>[a-z]+(?:'[a-z]+)*)"
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\uff07": "'"})
_COMBINING_RE = re.compile(r"[\u0300-\u036f]")
_CONTRACTION_SUFFIXES = frozenset({"s", "m", "re", "ve", "ll", "d", "t"})

_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer.stemWord(word)


@lru_cache(maxsize=32768)
def _cut_for_search(run: str) -> tuple[str, ...]:
    import rjieba  # on first Chinese text: ~170 ms of start-up that English-only use never pays

    return tuple(rjieba.cut_for_search(run))


@lru_cache(maxsize=32768)
def cjk_words(run: str) -> tuple[str, ...]:
    """A run of Chinese cut into words, each once (jieba's default mode: "用户的老婆预产期是三月" →
    用户 / 的 / 老婆 / 预产期 / 是 / 三月), for comparing how two statements are worded."""
    import rjieba

    return tuple(rjieba.cut(run))


def _fold(text: str) -> str:
    """NFKC, casefold, unify apostrophes, strip Latin accents (café → cafe)."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    if not text.isascii():
        text = _COMBINING_RE.sub("", unicodedata.normalize("NFKD", text))
    return text


def _word_base(word: str) -> str:
    """Drop English clitics: "caroline's" → "caroline", "don't" → "do"."""
    head, _, tail = word.rpartition("'")
    if tail == "t" and head.endswith("n"):
        head = head[:-1]
        return {"ca": "can", "wo": "will", "sha": "shall"}.get(head, head)
    if tail in _CONTRACTION_SUFFIXES:
        return head.replace("'", "")
    return word.replace("'", "")


def _cjk_tokens(run: str, out: list[str]) -> None:
    if len(run) == 1:
        if run not in _ZH_STOP_CHARS:
            out.append(run)
        return
    stop = _ZH_STOP_CHARS
    for w in _cut_for_search(run):
        # one-character words are kept when they carry meaning (住, 吃, 猫)
        if (w not in _ZH_STOPWORDS and w not in stop) and _CJK_RE.match(w):
            out.append(w)
    for i in range(len(run) - 1):
        a, b = run[i], run[i + 1]
        if a not in stop and b not in stop and a + b not in _ZH_STOPWORDS:
            out.append(a + b)


def lexical_tokens(text: str) -> list[str]:
    """Tokens for BM25: stemmed English words, whole numbers, Chinese words + bigrams.

    Output tokens contain only ``[a-z0-9.:]`` or CJK ideographs, so they are
    safe in an FTS5 query once quoted. Duplicates are kept (term frequency).
    The same texts come back often (a search scores its hits' words, a message is
    indexed and then compared): they are tokenized once (a fresh list each call).
    """
    if not text:
        return []
    return list(_lexical_tokens(text))


_COMPOUND_RE = re.compile(r"(?<![a-z-])[a-z]+(?:-[a-z]+){1,2}(?![a-z-])")


@lru_cache(maxsize=8192)
def _lexical_tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    stop = _EN_STOPWORDS
    folded = _fold(text)
    for m in _TOKEN_RE.finditer(folded):
        kind = m.lastgroup
        tok = m.group()
        if kind == "word":
            if "'" in tok:
                tok = _word_base(tok)
            if tok and tok not in stop:
                out.append(_stem(tok))
        elif kind == "num":
            out.append(tok.replace(",", "") if "," in tok else tok)
        else:
            _cjk_tokens(tok, out)
    if "-" in folded:  # "de-stress" is also found by "destress", "co-worker" by "coworker"
        out += [_stem(m.group().replace("-", "")) for m in _COMPOUND_RE.finditer(folded)]
    return tuple(out)


# --------------------------------------------------------------------------- comparing statements

_CJK_RUN_RE = re.compile(f"[{_CJK_CLASS}]+")
_DIGITS = frozenset("0123456789")


@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """What two statements are compared on: English stems and Chinese words (jieba,
    no character bigrams, so "喜欢在周末爬山" and "周末喜欢爬山" read the same)."""
    words = set(lexical_tokens(_CJK_RUN_RE.sub(" ", text)))
    for run in _CJK_RUN_RE.findall(text):
        words.update(w for w in _cut_for_search(run) if len(w) > 1)
    return frozenset(words)


def restates(a: frozenset[str], b: frozenset[str], overlap: float) -> bool:
    """Near-duplicate wording: Jaccard ≥ `overlap`, every word of the shorter inside the
    longer ("hiking event" and "cycling event" are different facts), the same numbers
    ("tea number 1" is not "tea number 2", however close their vectors are)."""
    shared = len(a & b)
    if not shared or shared / (len(a) + len(b) - shared) < overlap or shared < min(len(a), len(b)):
        return False
    return {w for w in a if w[0] in _DIGITS} == {w for w in b if w[0] in _DIGITS}


# --------------------------------------------------------------------------- normalize

_PUNCT_RE = re.compile(r"[^\w\s]|_")
_WS_RE = re.compile(r"\s+")
_WS_NEAR_CJK_RE = re.compile(f"(?<=[{_CJK_CLASS}])\\s+|\\s+(?=[{_CJK_CLASS}])")
_ZH_TRAILING_PARTICLES_RE = re.compile(r"(?:\s*[啊呀吧啦哦嘛哈了噢喔哟咯呗嗯])+$")


@lru_cache(maxsize=4096)  # (an add hashes the same texts several times: candidate, episode, restatements)
def normalize(text: str) -> str:
    """Canonical form for duplicate detection (punctuation, case, spacing, particles)."""
    t = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    t = t.replace("'", "")
    t = _PUNCT_RE.sub(" ", t)
    t = _WS_NEAR_CJK_RE.sub("", t)
    t = _WS_RE.sub(" ", t).strip()
    return _ZH_TRAILING_PARTICLES_RE.sub("", t)


# --------------------------------------------------------------------------- sentences

_SENT_END_RE = re.compile(r"\n+|[.．…]+|[!?;！？；。]+[.!?;！？；。…]*")
_ANY_END_RE = re.compile(r"[\n.．…!?;！？；。]")
_CLOSERS = "\"'”’）)」』】]"
_PREV_WORD_RE = re.compile(r"([A-Za-z][A-Za-z.]*)\s*$")
# Titles never end a sentence; other abbreviations do when a capital follows.
_TITLE_ABBREV = frozenset(
    "mr mrs ms dr prof sr jr st vs no fig e.g i.e cf approx mt rev gen col lt sgt capt gov".split()
)
_OTHER_ABBREV = frozenset(
    "etc inc ltd co corp a.m p.m jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k".split()
)


def _is_boundary(text: str, start: int, end: int) -> bool:
    """Decide whether a run of dots at [start, end) ends a sentence."""
    nxt = text[end] if end < len(text) else ""
    if nxt and not (nxt.isspace() or nxt in _CLOSERS or _CJK_RE.match(nxt)):
        return False  # 3.5, example.com, e.g
    if end - start > 1 or text[start] == "…":
        return True  # ellipsis followed by space or end
    m = _PREV_WORD_RE.search(text, max(0, start - 24), start)  # a window: whole-text scans are quadratic
    if m is None:
        return True
    word = m.group(1).lower()
    if word in _TITLE_ABBREV or (len(word) == 1 and m.group(1).isupper()):
        return False
    if word in _OTHER_ABBREV:
        rest = text[end:].lstrip()
        return not rest or rest[0].isupper()
    return True


def split_sentences(text: str) -> list[str]:
    """Split on . ! ? ; 。！？； and newlines; terminators stay with their sentence."""
    # an add splits the same turn several times (commands, rules, what it answers, its vector's text)
    return list(_cached_sentences(text) if len(text) <= _CACHED_CHARS else _sentences(text))


_CACHED_CHARS = 2_000  # (a pasted document is split once, not kept)


@lru_cache(maxsize=2048)
def _cached_sentences(text: str) -> tuple[str, ...]:
    return tuple(_sentences(text))


def _sentences(text: str) -> list[str]:
    stripped = text.strip()
    if not stripped:
        return []
    if _ANY_END_RE.search(stripped, 0, len(stripped) - 1) is None:  # one sentence: the common case
        return [stripped] if any(ch.isalnum() for ch in stripped) else []
    out: list[str] = []
    start = 0
    n = len(text)
    for m in _SENT_END_RE.finditer(text):
        s, e = m.span()
        tok = m.group()
        if tok[0] == "\n":
            piece = text[start:s]
        else:
            if tok[0] in ".．…" and not _is_boundary(text, s, e):
                continue
            while e < n and text[e] in _CLOSERS:
                e += 1
            piece = text[start:e]
        piece = piece.strip()
        if piece and any(ch.isalnum() for ch in piece):
            out.append(piece)
        start = e
    tail = text[start:].strip()
    if tail and any(ch.isalnum() for ch in tail):
        out.append(tail)
    return out
