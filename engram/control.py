"""User control in plain words: commands recognised in a user's message (EN/ZH).

`Memory.add` looks at each sentence of a user message before extraction; a
sentence that is one of these commands is carried out and never stored:

=============  ===============================================  ==========================================
command        English                                          中文
=============  ===============================================  ==========================================
view           what do you remember about me? · show my         你记得我什么？· 查看我的记忆 · /查看记忆
               memories · /memories
forget X       forget what I said about X · forget about X ·    忘记我刚才说的关于X的事 · 忘掉关于X的事 ·
               forget that I … · /forget X                      /删除记忆 X · /忘记 X
forget_last    forget what I just said · scratch that           忘记我刚才说的话 · 刚才那句别记
delete_kind    forget all my preferences · delete my tasks      删除我所有的偏好 · 清空我的任务
delete_all     forget everything · delete all my memories       忘掉关于我的一切 · 清空我的记忆
pause          pause memory · stop remembering · /pause         暂停记忆 · 别再记了 · /暂停
resume         resume memory · start remembering again          恢复记忆 · 可以继续记了 · /恢复
=============  ===============================================  ==========================================

Deleting everything, or every memory of a kind, said in conversation is asked back first
("This would delete all 12 of your memories…"): it is carried out only when the user's next
message confirms (yes · confirm · go ahead · 是的 · 确认 · 确定删除), within ten minutes;
"no" / "取消", or any other message, cancels it (engram.commands).

Patterns are anchored on the whole sentence, so "I forgot my keys", "don't
forget to call mom" or "我忘记带钥匙了" are not commands.

"forget … about X" deletes exactly the memories that are about X: candidates
come from the retriever (lexical ∥ dense, every status: superseded and
archived versions say it too), and a memory matches when it contains at least
``forget_min_overlap`` of X's words (English stems; Chinese words as
substrings, so segmentation cannot hide a match), or fills the same slot
(key) as X read as a statement ("forget that I like coffee" →
``preference:coffee``). Working-memory turns that say it are scrubbed as well.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache


from engram.models import Action, Command, Event, Kind, MemoryItem
from engram.text import lexical_tokens, normalize, split_sentences

__all__ = [
    "KIND_WORDS",
    "parse_answer",
    "parse_command",
    "reply",
    "split_commands",
    "terms",
    "term_overlap",
]

_I = re.I

KIND_WORDS: dict[str, Kind] = {
    # English
    "preferences": Kind.PREFERENCE, "preference": Kind.PREFERENCE, "likes": Kind.PREFERENCE,
    "likes and dislikes": Kind.PREFERENCE, "facts": Kind.FACT, "personal facts": Kind.FACT,
    "personal details": Kind.FACT, "personal info": Kind.FACT, "personal information": Kind.FACT,
    "tasks": Kind.TASK, "todos": Kind.TASK, "to-dos": Kind.TASK, "to dos": Kind.TASK,
    "reminders": Kind.TASK, "deadlines": Kind.TASK, "decisions": Kind.DECISION,
    "events": Kind.EVENT, "identity settings": Kind.IDENTITY, "persona settings": Kind.IDENTITY,
    "identity": Kind.IDENTITY, "summaries": Kind.SUMMARY, "conversations": Kind.TURN,
    "messages": Kind.TURN, "chat history": Kind.TURN, "conversation history": Kind.TURN,
    # 中文
    "偏好": Kind.PREFERENCE, "喜好": Kind.PREFERENCE, "事实": Kind.FACT, "个人信息": Kind.FACT,
    "任务": Kind.TASK, "待办事项": Kind.TASK, "待办": Kind.TASK, "提醒": Kind.TASK,
    "决定": Kind.DECISION, "决策": Kind.DECISION, "事件": Kind.EVENT, "经历": Kind.EVENT,
    "身份设定": Kind.IDENTITY, "身份": Kind.IDENTITY, "摘要": Kind.SUMMARY, "总结": Kind.SUMMARY,
    "对话记录": Kind.TURN, "聊天记录": Kind.TURN,
}
_EN_KINDS = "|".join(sorted((re.escape(k) for k in KIND_WORDS if k.isascii()), key=len, reverse=True))
_ZH_KINDS = "|".join(sorted((re.escape(k) for k in KIND_WORDS if not k.isascii()), key=len, reverse=True))

_EN_POLITE = re.compile(
    r"^(?:(?:hey|hi|ok(?:ay)?|so|and|also|now|actually)[\s,]+)*"
    r"(?:(?:please|pls|kindly)\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|i\s+(?:want|need|would\s+like|'d\s+like)\s+you\s+to\s+)*",
    _I,
)
_ZH_POLITE = re.compile(r"^(?:好的|那|那么|嗯|对了)?[，,]?(?:请你?|麻烦你?|你能不能|你可以|能不能|帮我)*")
_END = re.compile(r"[\s.!?。！？~…]+$")
_ZH_END = re.compile(r"(?:[，,](?:删掉|删了|删除|去掉|清掉)吧?|[，,]谢谢|吗|呢|吧|啊|呀|好吗|可以吗|行吗)+$")

_MEM = r"(?:memory|memories|remembering(?:\s+things)?|memori[sz]ing|note[-\s]?taking)"
_EN_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("pause", re.compile(
        rf"^(?:/pause|(?:pause|stop|disable|turn\s+off|switch\s+off|suspend)\s+(?:the\s+|your\s+)?{_MEM}"
        r"(?:\s+(?:for\s+now|for\s+a\s+while|for\s+a\s+bit|until\s+i\s+say\s+so))?"
        r"|(?:don't|do\s+not)\s+(?:remember|memori[sz]e|store|save|record)\s+(?:anything|any\s+of\s+this"
        r"|this\s+conversation|what\s+i\s+say)(?:\s+(?:from\s+now\s+on|for\s+now|for\s+a\s+while|until\s+i\s+say\s+so))?"
        r"|(?:go\s+|let's\s+go\s+)?off\s+the\s+record)$", _I)),
    ("resume", re.compile(
        rf"^(?:/resume|(?:resume|restart|re-?enable|enable|turn\s+on|switch\s+on|unpause|reactivate)\s+"
        rf"(?:the\s+|your\s+)?{_MEM}|(?:start|begin)\s+remembering(?:\s+(?:things\s+)?again)?"
        r"|you\s+can\s+(?:start\s+)?remember(?:ing)?\s+(?:things\s+)?again|(?:back\s+)?on\s+the\s+record)$", _I)),
    ("view", re.compile(
        r"^(?:/memories|/memory|what\s+do\s+you\s+(?:remember|know)\s+about\s+me"
        r"|what\s+(?:have|did)\s+you\s+(?:remembered|remember|memori[sz]ed?|stored?|saved?|learned|learnt)"
        r"(?:\s+about\s+me)?|(?:show|list|display|view)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?(?:my|your|the)?\s*"
        r"memor(?:y|ies)(?:\s+(?:of|about)\s+me)?)$", _I)),
    ("view_topic", re.compile(r"^what\s+do\s+you\s+remember\s+about\s+(?P<t>.+)$", _I)),
    ("forget_last", re.compile(
        r"^(?:(?:forget|delete|erase|scratch|disregard|remove)\s+(?:what\s+i\s+(?:just\s+)?said|that"
        r"|the\s+last\s+thing\s+i\s+said|my\s+last\s+message)|(?:don't|do\s+not)\s+remember\s+that)$", _I)),
    ("delete_all", re.compile(
        r"^(?:/forget\s+all|/reset|(?:forget|delete|erase|wipe|clear|remove)\s+(?:everything|all)"
        r"(?:\s+(?:you\s+know|you\s+remember|you\s+have|you've\s+got|about\s+me|of\s+(?:my|your)\s+memor(?:y|ies)"
        r"|my\s+memor(?:y|ies)|your\s+memor(?:y|ies)|memories|my\s+data|my\s+information))*"
        r"|(?:wipe|clear|erase|reset|delete)\s+(?:all\s+)?(?:of\s+)?(?:my|your)\s+memor(?:y|ies))$", _I)),
    ("delete_kind", re.compile(
        rf"^(?:forget|delete|erase|clear|remove|wipe)\s+(?:all\s+)?(?:of\s+)?(?:my|the|your)\s+(?P<k>{_EN_KINDS})"
        r"(?:\s+(?:you\s+know|you\s+remember|about\s+me))?$", _I)),
    ("forget", re.compile(
        r"^(?:/forget\s+(?P<t0>.+)"
        r"|(?:forget|delete|erase|remove)\s+(?:everything|anything|all|what|whatever)\s+(?:that\s+)?i\s+"
        r"(?:just\s+|have\s+|'ve\s+|ever\s+)?(?:said|told\s+you|mentioned|say|wrote|shared)\s+"
        r"(?:about|regarding|on|concerning)\s+(?P<t1>.+)"
        r"|(?:forget|delete|erase|remove)\s+(?:all\s+|everything\s+|anything\s+)?about\s+(?P<t2>.+)"
        r"|(?:forget|delete|erase|remove)\s+the\s+(?:memory|memories|fact|facts)\s+(?:about|that)\s+(?P<t3>.+)"
        r"|forget\s+that\s+(?P<t4>i\b.+)"
        r"|(?:forget|delete|erase)\s+(?P<t5>my\s+.+)"
        r"|(?:please\s+)?(?:don't|do\s+not|stop)\s+(?:remember(?:ing)?|keep(?:ing)?|stor(?:e|ing))\s+"
        r"(?:what\s+i\s+said\s+)?(?:about|that)\s+(?P<t6>.+))$", _I)),
]

_ZH_MEM = r"(?:记忆功能|记忆|记录功能|记录)"
_ZH_FORGET = r"(?:忘记|忘掉|删除|删掉|清除|抹掉|去掉)(?:掉)?"
_ZH_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("pause", re.compile(
        rf"^(?:/暂停|(?:先|暂时|暂且)?(?:暂停|停止|关闭|关掉|停用)(?:一下)?(?:你的)?{_ZH_MEM}(?:一下)?"
        r"|(?:先|暂时)?(?:别|不要|不用)再?(?:记|记住|记录|保存)(?:任何东西|任何事情?|我说的话?|了)*"
        r"|接下来(?:的话|说的)?(?:都)?(?:别|不要)(?:记|记住|记录)了?)$")),
    ("resume", re.compile(
        rf"^(?:/恢复|(?:恢复|继续|重新开启|开启|打开|重新打开|启用|重新启用)(?:你的)?{_ZH_MEM}"
        r"|(?:你)?(?:可以)?(?:继续|重新开始|开始|重新)(?:记|记住|记录)(?:了|吧|东西|事情)*)$")),
    ("view", re.compile(
        r"^(?:/查看记忆|/记忆|(?:你)?(?:都|还)?(?:记得|记住了|记着|记下了)(?:我的?|关于我的?)?(?:哪些|什么|些什么)"
        r"(?:事情?|东西|信息|内容)?|(?:查看|显示|列出|看看|看一下)(?:一下)?(?:我的|你的|所有的?)?(?:所有)?记忆)$")),
    ("forget_last", re.compile(
        rf"^(?:{_ZH_FORGET}(?:我)?(?:刚才|刚刚)(?:说|讲)的(?:话|那句话?|内容)?"
        r"|(?:刚才|刚刚)(?:说的?)?(?:那句话?|的话)?(?:别|不要)记(?:了|住)?|(?:别|不要)记(?:住)?(?:这个|这句话?|刚才那句话?))$")),
    ("delete_all", re.compile(
        rf"^(?:{_ZH_FORGET}(?:关于我的|我的|你的|我)?(?:所有|全部|一切)(?:的)?(?:记忆|事情|事|内容|信息|东西)?"
        r"|(?:清空|清除|重置)(?:我的|你的|所有的?)?记忆)$")),
    ("delete_kind", re.compile(
        rf"^(?:{_ZH_FORGET}|清空)(?:我的|我)?(?:所有|全部)?(?:的)?(?P<k>{_ZH_KINDS})$")),
    ("forget", re.compile(
        r"^(?:/(?:删除记忆|忘记|删除)\s*(?P<t0>.+)"
        rf"|{_ZH_FORGET}(?:我)?(?:刚才|刚刚|之前|以前)?(?:说|提|讲|告诉你)(?:过)?的(?:关于|有关)(?P<t1>.+?)"
        r"(?:的(?:事情?|内容|话|记忆|信息|东西|部分))?"
        rf"|{_ZH_FORGET}(?:关于|有关)(?P<t2>.+?)的(?:事情?|内容|话|记忆|信息|东西|一切|所有)"
        r"|(?:忘记|忘掉)(?P<t3>我(?!刚).+?[^了])"
        r"|(?:别|不要)再?(?:记|记住|记着)(?:我)?(?:说的?)?(?:关于|有关)?(?P<t4>.+?)的(?:事情?|内容|话|这件事|那件事)了?"
        # "把关于阿杰的都忘了吧", "把阿杰的事都删掉"
        r"|把(?:我说的)?(?:关于|有关)(?P<t5>.+?)的(?:事情?|内容|话|记忆|信息|东西)?(?:都|全|全部)?(?:忘了|忘掉|忘记|删了|删掉|删除)"
        r"(?:吧|了)?"
        r"|把(?P<t6>.+?)的(?:事情?|内容|记忆)(?:都|全|全部)?(?:忘了|忘掉|忘记|删了|删掉|删除)(?:吧|了)?)$")),
]


# answers to "This would delete … — are you sure?" (only read while one is pending)
_CONFIRM = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|confirm(?:ed)?|go\s+ahead|do\s+it|i'm\s+sure|i\s+am\s+sure"
    r"|yes[\s,]+(?:please|do\s+it|go\s+ahead|i'm\s+sure|i\s+am\s+sure|delete\s+(?:it|them|everything|all(?:\s+of\s+them)?)))$"
    r"|^(?:是|是的|对|对的|确认|确定|好|好的|可以|没错|删吧|删除吧|确认删除|确定删除|全部删除)$", _I)
_CANCEL = re.compile(
    r"^(?:no|nope|nah|cancel|don't|do\s+not|never\s*mind|stop|keep\s+(?:them|it|everything)|no[\s,]+(?:thanks|don't|keep\s+them))$"
    r"|^(?:不|不是|不要|不用|取消|算了|别删|不删了?|不要删除?)$", _I)


def parse_answer(sentence: str) -> Command | None:
    """A confirming ("yes", "确认") or cancelling ("no", "取消") answer, or None."""
    if not isinstance(sentence, str) or len(sentence) > 60:
        return None
    zh = _has_cjk(sentence)
    text = _clean(sentence, zh)
    for name, rx in (("confirm", _CONFIRM), ("cancel", _CANCEL)):
        if rx.match(text):
            return Command(name=name, language="zh" if zh else "en")
    return None


def _clean(sentence: str, zh: bool) -> str:
    text = unicodedata.normalize("NFKC", sentence).replace("\u2019", "'").strip()
    text = _END.sub("", text)
    if zh:
        text = re.sub(r"\s+", "", text)
        text = _ZH_POLITE.sub("", text)
        text = _ZH_END.sub("", _END.sub("", text))
    else:
        text = re.sub(r"\s+", " ", text)
        text = _EN_POLITE.sub("", text)
    return text.strip(" ,，")


def _has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


_CJK_CHAR = re.compile("[\u4e00-\u9fff]")


def parse_command(sentence: str) -> Command | None:
    """The control command one sentence is, or None."""
    if not isinstance(sentence, str) or not sentence.strip() or len(sentence) > 300:
        return None
    zh = _has_cjk(sentence)
    text = _clean(sentence, zh)
    if not text:
        return None
    for name, rx in _ZH_RULES if zh else _EN_RULES:
        m = rx.match(text)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v}
        language = "zh" if zh else "en"
        if name == "delete_kind":
            word = groups["k"]
            kind = KIND_WORDS.get(word.lower() if word.isascii() else word)
            return Command(name=name, target=kind.value if kind else None, language=language)
        if name in ("forget", "view_topic"):
            target = next(iter(groups.values()), "").strip(" ,，“”\"'")
            if not target or target.lower() in _PRONOUNS:
                return None
            return Command(name="view" if name == "view_topic" else name, target=target, language=language)
        return Command(name=name, language=language)
    return None


_PRONOUNS = frozenset("it that this them those these me everything anything something".split())


def split_commands(text: str, *, awaiting: bool = False) -> tuple[list[Command], str]:
    """The commands among a message's sentences, and the rest of the message; `awaiting`:
    a deletion waits for confirmation, so "yes" / "取消" are answers to it."""
    if not text or len(text) > 2000:
        return [], text
    commands: list[Command] = []
    rest: list[str] = []
    sentences = split_sentences(text)
    for sentence in sentences:
        command = (awaiting and parse_answer(sentence)) or parse_command(sentence)
        if command is None:
            rest.append(sentence)
        else:
            commands.append(command)
    if not commands:
        return [], text
    joiner = "" if _has_cjk(text) else " "
    return commands, joiner.join(rest)


# --------------------------------------------------------------------------- matching
# words that say how the user feels or speaks, not what about
_TOPIC_STOP = frozenset(
    "like love enjoy hate dislik prefer want need said say told tell mention think realli thing "
    "stuff user".split()
) | frozenset("喜欢 讨厌 不喜欢 热爱 爱 说 说过 提到 事情 东西 用户 关于 有关 我们".split())
_CJK_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ZH_STOP_CHARS = frozenset("的地得了着过吗呢吧啊呀哦嗯是我你您他她它们在和与及也就都很又还而但这那个把被让给对从于为以之其或并说事")


@lru_cache(maxsize=4096)
def terms(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(English stems, Chinese words) that say what `text` is about."""
    stems = [t for t in lexical_tokens(_CJK_RUN.sub(" ", text)) if t not in _TOPIC_STOP]
    words: list[str] = []
    for run in _CJK_RUN.findall(unicodedata.normalize("NFKC", text)):
        import rjieba  # loaded on first use (start-up time)

        cut = [w for w in rjieba.cut_for_search(run) if w not in _TOPIC_STOP]
        long = [w for w in cut if len(w) > 1]
        words += long or [w for w in cut if w not in _ZH_STOP_CHARS]
    # drop words contained in longer ones ("周报" inside "交周报" is enough once)
    words = list(dict.fromkeys(words))
    words = [w for w in words if not any(w != o and w in o for o in words)] or words
    return tuple(dict.fromkeys(stems)), tuple(words)


def term_overlap(topic: tuple[tuple[str, ...], tuple[str, ...]], content: str) -> float:
    """Share of the topic's terms that `content` contains (0..1)."""
    stems, words = topic
    total = len(stems) + len(words)
    if not total:
        return 0.0
    have = set(lexical_tokens(content)) if stems else set()
    flat = normalize(content).replace(" ", "") if words else ""
    hits = sum(1 for s in stems if s in have) + sum(1 for w in words if w in flat)
    return hits / total


def matching(
    items: Iterable[MemoryItem], topic: str, threshold: float, keys: Sequence[str] = ()
) -> list[MemoryItem]:
    """The items about `topic` (see the module docstring)."""
    wanted = terms(topic)
    keyset = set(keys)
    return [
        i for i in items
        if (i.key is not None and i.key in keyset) or term_overlap(wanted, i.content) >= threshold
    ]


def turns_matching(
    rows: Sequence[tuple[int, str, str]], topics: Iterable[str], threshold: float
) -> list[int]:
    """Ids of working-memory turns that say one of `topics` (memory contents or a topic)."""
    wanted = [t for t in (terms(x) for x in topics) if t[0] or t[1]]
    if not wanted:
        return []
    return [
        turn_id for turn_id, _session, content in rows
        if any(term_overlap(t, content) >= threshold for t in wanted)
    ]


# --------------------------------------------------------------------------- replies
_KIND_NAMES = {
    "en": {k: k.value + ("s" if k is not Kind.IDENTITY else "") for k in Kind} | {Kind.SUMMARY: "summaries"},
    "zh": {Kind.PREFERENCE: "偏好", Kind.FACT: "事实", Kind.TASK: "任务", Kind.DECISION: "决定",
           Kind.IDENTITY: "身份设定", Kind.EVENT: "事件", Kind.SUMMARY: "摘要", Kind.TURN: "对话记录"},
}


def kind_name(kind: Kind | str, language: str) -> str:
    return _KIND_NAMES["zh" if language == "zh" else "en"][Kind(kind)]


def reply(command: Command, events: Sequence[Event]) -> str:
    """A short confirmation the agent can relay, in the user's language."""
    zh = command.language == "zh"
    shown = [e.memory for e in events if e.memory is not None]
    if command.name in ("forget", "delete_kind") and command.target != Kind.SUMMARY.value:
        # what the user's words said, not the deltas that quoted them (one of them, written again
        # without what went, is even an ADD)
        shown = [e.memory for e in events if e.memory is not None and e.action is Action.DELETE
                 and e.memory.kind is not Kind.SUMMARY]
    quoted = ("；" if zh else "; ").join(f"“{m.content}”" for m in shown[:10])
    more = len(shown) - 10
    if more > 0:
        quoted += f"（另有 {more} 条）" if zh else f" (and {more} more)"
    name = command.name
    if name == "ask":  # a broad deletion said in conversation: confirm first
        what = (f"全部{kind_name(command.target, 'zh')}" if zh else f"all your {kind_name(command.target, 'en')}") \
            if command.target else ("全部记忆" if zh else "everything I remember about you")
        return (f"这将永久删除您的{what}（{len(shown)} 条）。回复“确认”继续，回复“取消”保留。" if zh else
                f"This would permanently delete {what} ({len(shown)} memories). "
                "Reply “yes” to confirm, or “no” to keep them.")
    if name == "cancel":
        return "好的，没有删除任何内容。" if zh else "OK, nothing was deleted."
    if name == "confirm":
        return "没有等待确认的操作。" if zh else "There was nothing waiting for confirmation."
    if name == "pause":
        return ("记忆已暂停：在您说“恢复记忆”之前，我不会记住任何新内容。" if zh else
                "Memory paused: I won't remember anything new until you say “resume memory”.")
    if name == "resume":
        return "记忆已恢复。" if zh else "Memory resumed: I'll remember what matters again."
    if name == "view":
        if not shown:
            return "我还没有记住关于您的任何事。" if zh else "I don't remember anything about you yet."
        return (f"我记得这些（{len(shown)} 条）：{quoted}" if zh else
                f"Here is what I remember ({len(shown)}): {quoted}")
    if not shown:
        if name == "forget" and command.target:
            return (f"没有找到关于“{command.target}”的记忆，没有删除任何内容。" if zh else
                    f"I had nothing remembered about “{command.target}”; nothing was deleted.")
        return "没有需要删除的记忆。" if zh else "There was nothing to delete."
    if name == "delete_kind" and command.target:
        kind = kind_name(command.target, command.language)
        return (f"已删除您的所有{kind}（{len(shown)} 条）：{quoted}" if zh else
                f"Deleted all your {kind} ({len(shown)}): {quoted}")
    if name == "delete_all":
        return (f"已删除我记得的关于您的一切（{len(shown)} 条）。" if zh else
                f"Deleted everything I remembered about you ({len(shown)} memories).")
    return (f"已删除 {len(shown)} 条记忆：{quoted}" if zh else f"Forgotten ({len(shown)}): {quoted}")


def latest(items: Sequence[MemoryItem]) -> list[MemoryItem]:
    """The memories of the most recent `add` (they share its timestamp)."""
    if not items:
        return []
    newest = max(i.created_at for i in items)
    return [i for i in items if i.created_at == newest]
