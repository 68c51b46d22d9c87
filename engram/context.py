"""The context of one turn: what an agent puts in front of its LLM.

    capsule (engram.capsule) + the memories most relevant to the message that the capsule
    does not already say (engram.retrieve) + clarifying questions about disputed ones
    (engram.disputes) + due reminders (engram.reminders) + the session's recent turns,
    packed into a token budget in that order and rendered by the ``context`` template.
"""

from __future__ import annotations

import logging

from engram import reminders as reminders_module
from engram.capsule import CapsuleEngine, Context, LeftOut, Line, line_cost, line_of, section_of
from engram.disputes import question
from engram.errors import InvalidInput
from engram.kinds import EPISODE_KEY
from engram.models import Filters, Kind, MemoryItem, Message, Source, Status, utcnow
from engram.store.base import Scope
from engram.templates import render
from engram.text import detect_language
from engram.user_state import is_paused

log = logging.getLogger("engram.capsule")


def build_context(
    engine: CapsuleEngine,
    scope: Scope,
    query: str,
    *,
    session_id: str | None = None,
    budget: int | None = None,
    limit: int | None = None,
    turns: bool = False,
    language: str | None = None,
) -> Context:
    """Capsule + the most relevant memories not in it (+ turns), packed into `budget`."""
    s, counter, services = engine.settings, engine.counter, engine.services
    budget = s.context_budget if budget is None else budget
    limit = s.context_memories if limit is None else limit
    for name, value in (("budget", budget), ("limit", limit)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidInput(f"{name} must be a non-negative integer, not {value!r}")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must be a non-empty string")
    now = utcnow()
    if language is None and detect_language(query) == "zh":
        language = "zh"

    paused = is_paused(services.store, scope.user_id)
    kept_rem: list[str] = []  # reminders packed below (engram.reminders)

    def render_context(capsule_text: str, relevant: list[Line], clar: list[str], recent: list[Message]) -> str:
        if not (capsule_text or relevant or clar or recent or kept_rem or paused):
            return ""
        return render(
            "context", lang, s.template_dir, capsule=capsule_text, relevant=relevant,
            clarifications=clar, turns=recent, reminders=kept_rem, paused=paused,
        )

    # the capsule gets what the bare template leaves, up to its own budget
    capsule = engine.capsule(scope, budget=min(s.capsule_budget, budget), language=language)
    lang = language or capsule.language
    bare = counter.count(
        render("context", lang, s.template_dir, capsule="", relevant=[], clarifications=[], turns=[])
    )
    if capsule.token_count > budget - bare:
        capsule = engine.capsule(scope, budget=max(0, min(s.capsule_budget, budget - bare)), language=lang)
    context = Context(
        user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id, query=query,
        language=lang, budget=budget, encoding=s.token_encoding, capsule=capsule, built_at=now,
    )
    in_capsule = set(capsule.memory_ids)

    # the memories most relevant to the query that the capsule does not already say
    relevant: list[Line] = []
    items: dict[str, MemoryItem] = {}
    clarifications: list[str] = []
    if limit > 0:
        depth = limit + len(in_capsule) + 5
        results = engine.retriever.search(
            scope, query, Filters(status=[Status.ACTIVE, Status.DISPUTED]), depth, now
        )
        # an episode is evidence for what it says: one at most, and none whose fact is shown
        facts = [r.memory for r in results if r.memory.kind is not Kind.TURN]
        shown = {m.metadata.get(EPISODE_KEY) for m in facts + services.store.get_many(list(in_capsule))}
        episodes_left = s.context_episodes
        for result in results:
            if result.relevance < s.context_min_relevance:
                continue  # "the capital of Peru?" brings nothing about a user in Lisbon
            item = services.display.item(result.memory)
            if item.kind is Kind.SUMMARY:
                continue
            if item.source is Source.EPISODE:
                if item.id in shown or episodes_left <= 0:
                    continue
                episodes_left -= 1
            if item.id in in_capsule:
                context.left_out.append(LeftOut(
                    memory_id=item.id, content=item.content,
                    section=section_of(item.kind, item.key), score=result.score, reason="in capsule",
                ))
                continue
            if item.status is Status.DISPUTED:
                other_id = item.metadata.get("disputes")
                other = services.store.get(other_id) if other_id else None
                if other is not None and other.status is Status.DISPUTED:
                    question = _clarify(item, services.display.item(other), lang)
                    if question not in clarifications:
                        clarifications.append(question)
                        items[item.id], items[other.id] = item, services.display.item(other)
                continue
            if len(relevant) >= limit:
                continue
            # a turn's day is when it was said; an event's, when it happened ("yesterday I went …"), as the capsule shows it
            said = item.created_at if item.kind is Kind.TURN else (item.valid_from or item.created_at)
            when = said.strftime("%Y-%m-%d") if item.kind in (Kind.TURN, Kind.EVENT) else None
            relevant.append(line_of(item, counter, s.line_tokens, score=result.score, when=when))
            items[item.id] = item

    recent: list[Message] = []
    if turns and session_id is not None:
        recent = [
            Message(role=t.role, content=t.content)
            for t in services.store.turns_list(scope, session_id)
        ]

    # pack: capsule first, then clarifications, relevant memories by rank, newest turns
    base = counter.count(render_context(capsule.text, [], [], []) or "") if capsule.text else bare
    room = budget - base
    kept_clar = []
    for question in clarifications:
        need = counter.count("- " + question + "\n") + (8 if not kept_clar else 0)
        if need <= room:
            room -= need
            kept_clar.append(question)
    for reminder in reminders_module.due_for(services, scope, now=now):
        need = counter.count("- " + reminder.text + "\n") + (8 if not kept_rem else 0)
        if need <= room:
            room -= need
            kept_rem.append(reminder.text)
    kept_rel: list[Line] = []
    for line in relevant:
        need = line_cost(line, counter, lang) + (12 if not kept_rel else 0)
        if need <= room:
            room -= need
            line.tokens = need
            kept_rel.append(line)
        else:
            context.left_out.append(_left(line, items, "budget"))
    kept_turns: list[Message] = []
    for turn in reversed(recent):
        need = counter.count(turn.content) + 4 + (8 if not kept_turns else 0)
        if need > room:
            break
        room -= need
        kept_turns.insert(0, turn)

    text = render_context(capsule.text, kept_rel, kept_clar, kept_turns)
    tokens = counter.count(text)
    while tokens > budget:  # estimates were short: drop the least useful part and re-check
        if kept_turns:
            kept_turns.pop(0)
        elif kept_rel:
            context.left_out.append(_left(kept_rel.pop(), items, "budget"))
        elif kept_rem:
            kept_rem.pop()
        elif kept_clar:
            kept_clar.pop()
        elif capsule.lines:
            capsule = engine.capsule(scope, budget=max(0, capsule.token_count - (tokens - budget)), language=lang)
            context.capsule = capsule
        else:
            text, tokens = "", 0
            break
        text = render_context(capsule.text, kept_rel, kept_clar, kept_turns)
        tokens = counter.count(text)

    used_ids = [ln.memory_id for ln in kept_rel if ln.memory_id]
    if s.reinforce and used_ids and not paused:
        services.store.record_access(used_ids, now)
    context.text, context.token_count = text, tokens
    context.reminders, context.paused = kept_rem, paused
    context.relevant, context.clarifications, context.turns = kept_rel, kept_clar, kept_turns
    clar_items = [i for i in items.values() if i.status is Status.DISPUTED and kept_clar]
    context.memories = list(capsule.memories) + [items[i] for i in used_ids] + clar_items
    log.debug(
        "injected context for %s (session %s): capsule %d lines, %d relevant, %d clarifications,"
        " %d turns, %d/%d tokens",
        scope.user_id, session_id, len(capsule.lines), len(kept_rel), len(kept_clar),
        len(kept_turns), tokens, budget,
    )
    return context


def _left(line: Line, items: dict[str, MemoryItem], reason: str) -> LeftOut:
    item = items.get(line.memory_id or "")
    return LeftOut(
        memory_id=line.memory_id or "", content=item.content if item else line.text,
        section=line.section, score=line.score, reason=reason, tokens=line.tokens,
    )


def _clarify(a: MemoryItem, b: MemoryItem, language: str) -> str:
    first, second = sorted((a, b), key=lambda i: i.created_at)
    return question(first, second, language)
