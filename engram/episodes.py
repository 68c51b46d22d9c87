"""Episodes: every user turn kept verbatim, with the turn it answers.

An episode is a memory of kind `turn`. It keeps what the user said after the privacy
filter, the assistant turn it answers (a bare "Coco." means nothing without "What's
your dog's name?"), its session and when it was said. Facts drawn from the same message
point back to it (``metadata["episode"]``), so "why do you think that?" has an answer.

Pure chatter ("haha", "thanks!", "Bye!", "好的") is not kept, unless it answers a
question or a proposal: "ok" after "Shall I book Friday?" is the user agreeing.
"""

from __future__ import annotations

import re

from engram.kinds import EPISODE_KEY, REPLY_KEY
from engram.text import content_words

# content words (stemmed, as `content_words` gives them) that carry no memory on their own
_SOCIAL_EN = frozenset(
    "hi hey hello hiya yo bye goodby goodnight night morn even afternoon later soon care take thank thx ty "
    "welcom pleasur ok okay okey k cool nice great awesom amaz wonder fantast excel perfect brilliant "
    "lol lmao haha hahaha hehe wow whoa oh ah aw aww ooh hmm mm yeah yep yup yes sure right alright fine "
    "good glad happi see talk chat meet catch fun sound love congrat congratul sorri hear agre total "
    "absolut definit inde exact true cheer bless xoxo".split()
)
# a whole Chinese message made of these is chatter
_CHATTER_ZH = re.compile(
    r"^(?:哈+|呵+|嘿+|嘻+|嗯+|哦+|噢+|喔+|啊+|呀+|哇+|嗨|你好|您好|早上好|晚上好|早安|晚安|早|"
    r"谢谢|多谢|感谢|谢啦|不客气|没事|再见|拜拜|拜|回头见|明天见|好的|好吧|好啊|好|行|可以|对|是的|是|嗯嗯|"
    r"没问题|收到|了解|明白|知道了|太好了|真棒|厉害|加油|辛苦了|你|您|了|啦|吧|呢|哈|呀|的|很|太|真)+$"
)
_MARKS = re.compile(r"[\W_]+", re.UNICODE)
# a short reply counts as consent or refusal when the turn it answers asks or proposes
_ASKS = re.compile(
    r"[?？]|\b(?:shall|should|want me to|would you like|do you want|let me|i can|i could|how about)\b|"
    r"吗|要不要|是否|好不好|可不可以|行不行",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
__all__ = ["EPISODE_KEY", "REPLY_KEY", "is_chatter", "reply_context"]

MAX_CHATTER_CHARS = 80
REPLY_CONTEXT_CHARS = 400  # how much of the answered turn an episode keeps


def is_chatter(text: str, answers: str | None = None) -> bool:
    """True for a message that is only greetings, thanks, laughter or acknowledgement, and
    does not answer a question or a proposal (then even "yes" is worth keeping)."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_CHATTER_CHARS:
        return not stripped
    if answers and _ASKS.search(answers):
        return False
    bare = _MARKS.sub("", stripped)
    if not bare:  # only punctuation or emoji
        return True
    if _CHATTER_ZH.match(bare):
        return True
    if not stripped.isascii():
        return False
    words = content_words(stripped)
    names = {n.lower() for n in _NAME.findall(stripped[1:])}  # "Hey Mel!": a name in a greeting
    rest = [w for w in words if w not in _SOCIAL_EN and w not in names]
    return not rest


def reply_context(answers: str | None) -> str | None:
    """The answered turn as an episode keeps it: trimmed to its last `REPLY_CONTEXT_CHARS`."""
    if not answers or not answers.strip():
        return None
    text = answers.strip()
    return text if len(text) <= REPLY_CONTEXT_CHARS else "…" + text[-REPLY_CONTEXT_CHARS:]
