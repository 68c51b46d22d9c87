"""The write path, top to bottom: one message on its way into memory.

    parse (the facade validated it) ─► commands ("forget …", "暂停记忆": run, never stored)
      ─► extract (rules now; the LLM per turn or in batches when configured)
      ─► privacy (engram.sanitize: a candidate with a secret is redacted or refused)
      ─► reconcile (engram.reconcile.decide: ADD · NOOP · UPDATE · SUPERSEDE · DISPUTE)
      ─► store (one transaction: record + vector + tokens + history, promotion included)

`Writer.add` is that path; `add_candidate` is its last three steps for one candidate (the
queue's batched LLM extraction enters there too). Verbatim turns (``infer=False``, bulk
ingest) and edits skip extraction and reconciliation. Nothing here knows `Memory`: commands
run through the `run_command` callable the facade hands in.
"""

from __future__ import annotations

import re

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from engram import disputes
from engram.capsule import promotion
from engram.control import split_commands
from engram.embed_behind import EmbedBehind
from engram.episodes import is_chatter, reply_context
from engram.errors import InvalidInput, NotFound
from engram.extract import extract_candidates
from engram.extract.answers import answer_as_statement, asks_of_pronoun
from engram.extract.keys import CJK_RE
from engram.extract.corrections import CORRECTS_WITHIN, LOOK_BACK, corrected, correction, says, switch
from engram.extract.endings import ending, ends
from engram.extract.owned import introduced
from engram.extract.statements import last_referent, opens_with_pronoun
from engram.extract.told import told_user
from engram.graph import build as graph
from engram.graph import kin
from engram.graph.extract_entities import may_be_name
from engram.kinds import EPISODE_KEY, REPLY_KEY, RESTATED_KEEP, RESTATED_KEY
from engram.models import Action, Candidate, Command, Event, Filters, Kind, MemoryItem, Message, Source, Status, utcnow
from engram.privacy import apply as apply_privacy
from engram.privacy import redact
from engram.reconcile import Decision, decide, same_statement, signals_change
from engram.records import embed_records, make_record, stamp
from engram.relatives import relation_of
from engram.sanitize import redact_json, safe_candidate
from engram.store.base import HistoryEvent, Record, Scope
from engram.store.scope_index import RESTATEMENT_SHORTLIST
from engram.text import content_words, detect_language
from engram.user_state import local_time, pending, set_pending
from engram.whose import about_someone_else

if TYPE_CHECKING:  # pragma: no cover
    from engram.llm import LLMTasks
    from engram.queue import JobQueue
    from engram.services import Services

log = logging.getLogger("engram")

LIVE = Filters(status=[Status.ACTIVE, Status.DISPUTED])  # what a new statement is reconciled against
NEIGHBOURS = 3  # close memories a candidate is reconciled against
EPISODE_MARGIN = 5  # hits read beyond them, since episodes are not reconciled against

# carries out a control command said in a message: (scope, command, session_id) -> events
RunCommand = Callable[[Scope, Command, "str | None"], list[Event]]


@dataclass(slots=True)
class Said:
    """Where a message's memories come from: who, in which session, when, with what metadata."""

    scope: Scope
    session_id: str | None
    metadata: dict[str, Any]
    said_at: datetime
    idempotency_key: str | None = None
    # an episode not written yet: it goes into the same transaction as the first memory drawn
    # from it (one commit for both), or alone at the end of the message (`Writer.flush_episodes`)
    unwritten: list[Record] = field(default_factory=list)


@dataclass(slots=True)
class AddOutcome:
    """What one inferred `add` did: command events, the messages kept for working memory,
    and the memory events; `nothing` when memory was paused and nothing happened."""

    commanded: list[Event] = field(default_factory=list)
    kept: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    nothing: bool = False


# a sentence that may start with a name ("Max passed away"), not with "I", "My", "The", …
_NAME_FIRST_RE = re.compile(
    r"(?:^|[.!?]\s+)(?:[A-Za-z]+,?\s+(?:what,?\s+)?)?(?!(?:I|My|The|We|It|This|That|There|Our|Your|You|He|She|They|A|An|And|But|So)\b)"
    r"(?P<name>[A-Z][a-z]+)(?:['’]s)? [a-z]"  # ("Sadly Max passed away", "Guess what, Anna got promoted")
)


# what a Chinese clause that names no one opens with ("我…", "今天…", "最近…", "也…"); a name ("小雨", "李明",
# "豆豆") opens with none of these
_ZH_CLAUSES_RE = re.compile(r"[，,。！!？?；;\s]+")
_ZH_NO_NAME_FIRST_RE = re.compile(
    r"[我你您他她它这那是在有不没也还都就很太真好今明昨前后周每上下去来要想会能可对和跟给把被让从到为因所但而如虽只又再刚已正"
    r"嗯啊哦哈呀哇唉嗨喂谢最叫]|[^\u4e00-\u9fffA-Z]"  # (nor a bracket, a digit or a word in lower case; "Max…" may be a name)
)
_OBJECT_PRONOUN_RE = re.compile(r"\b(?:him|her|his)\b|(?<=[带陪给跟和让叫])[他她它]", re.IGNORECASE)  # "带他去公园"
_SPEAKS_OF_RE = re.compile(r"\b(?:he|she|him|her|his)\b|[他她]", re.IGNORECASE)
SWITCH_LOOK_BACK = 200  # the user's latest memories a switch ("no more poetry") may reach
_SWITCHABLE = frozenset({Kind.FACT, Kind.PREFERENCE, Kind.TASK, Kind.DECISION})  # (not what happened, nor a summary)
# where the user lives is the location rules' ("I moved from Chicago to Denver" supersedes it by its slot)
_PLACE_SLOTS = frozenset({"fact:location", "fact:hometown", "fact:work_location"})

_REFERENT_TURNS = 12  # working-memory turns looked back through for who "she" is (six exchanges)


class Writer:
    """Runs the write path against the services it is handed."""

    def __init__(
        self, services: Services, llm_tasks: LLMTasks, queue: JobQueue, run_command: RunCommand,
        behind: EmbedBehind | None = None,
    ) -> None:
        self.services = services
        self.llm_tasks = llm_tasks
        self.queue = queue
        self.run_command = run_command
        # vectors made after the commit (engram.embed_behind); None: with the row, as it is written
        self.behind = behind if behind is not None else EmbedBehind(services, enabled=False)

    def one_write(self) -> AbstractContextManager[Any]:
        """What one `add` writes (episodes, facts, the session's turns) as one transaction: all
        of it lands or none, and it commits once (a turn with two facts in a session was three
        commits). Deferred: the writers' lock is taken at the first write, so the extraction
        before it keeps no other writer waiting (8 writers on 2 cores: the lock was held the
        whole add). Not with an LLM configured (a model call must not hold the writers' lock),
        nor on a read-only store (an add that writes nothing still works there)."""
        store = self.services.store
        if self.llm_tasks.enabled or getattr(store, "read_only", False):
            return nullcontext()
        return store.atomic(deferred=True)

    # -- the inferred path ---------------------------------------------------------
    def add(
        self, said: Said, messages: Sequence[Message], *, paused: bool, clock_at: datetime
    ) -> AddOutcome:
        """Commands, then extraction, privacy, reconciliation and storage of each message.

        Control commands run first and are never stored; while paused nothing is extracted
        and working memory keeps nothing. `clock_at` is when it was said, read on the user's
        clock (their time zone) for "Friday" and "tomorrow"."""
        out = AddOutcome()
        rules: list[Candidate] = []
        kept_episodes: list[Event] = []
        written: set[str] = set()  # what this message added (a restatement of one is no event)
        scope = said.scope
        # the latest assistant turn: what the user's next turn answers (in an earlier call, the
        # session's working memory has it: add([user, assistant]) per exchange)
        answers = self._last_reply(said) if messages and messages[0].role == "user" else None
        local: datetime | None = None  # when it was said on the user's clock, read once needed
        asked: str | None = None  # the user's message in this call an assistant turn answers
        for message in messages:
            text = message.content
            if message.role == "user":
                awaiting = pending(self.services.store, scope.user_id) is not None  # "yes" answers it
                commands, text = split_commands(text, awaiting=awaiting)
                if awaiting and not any(c.name in ("confirm", "cancel") for c in commands):
                    set_pending(self.services.store, scope.user_id, None)  # anything else: not confirmed
                for command in commands:
                    out.commanded += self.run_command(scope, command, said.session_id)
                    if command.name in ("pause", "resume"):
                        paused = command.name == "pause"
            if paused or not text.strip():
                continue
            out.kept.append(message if text == message.content else Message(role=message.role, content=text))
            if local is None:
                s = self.services
                local = local_time(s.store, s.settings, scope.user_id, clock_at)
            source = said
            told: list[str] = []
            if message.role == "assistant":  # "Done: I booked you a table …": what the user was told
                told = told_user(text, asked)
            if message.role == "user" or told:  # the turn itself, and the facts drawn from it point back to it
                episode = self.keep_episode(said, text, answers if message.role == "user" else asked, message.role)
                if episode is not None:
                    kept_episodes.append(Event(action=Action.ADD, memory=episode.item, reason="kept as an episode"))
                    source = replace(said, metadata={**said.metadata, EPISODE_KEY: episode.item.id}, unwritten=[episode])
            if message.role == "user":
                asked = text
            else:
                answers = text
            fix = correction(text) if message.role == "user" else None
            fixed = self._correct(source, text, fix, local, written) if fix is not None else None
            if fixed is not None:  # "actually it's June, not May": the correction is all it says
                out.events.append(fixed)
                written.add(fixed.memory.id)
                found = []
            elif told:  # read as the user's own statement of it ("I have a reservation for …")
                found = [c for sentence in told for c in extract_candidates(sentence, now=local)]
            else:
                found = self._read(said, messages, message, text, answers, local)
                moved = switch(text) if fix is None and message.role == "user" else None
                switched = self._switch(source, text, moved, local, written) if moved is not None else None
                if switched is not None:  # "we switched to uv, no more poetry": what said poetry says uv
                    out.events.append(switched)
                    written.add(switched.memory.id)
            rules += found
            before = len(out.events)
            for candidate in found:
                event = self.add_candidate(source, candidate, text, written)
                if event is not None:
                    out.events.append(event)
                    if event.memory is not None and event.action is not Action.NOOP:
                        written.add(event.memory.id)
            who = ending(text) if message.role == "user" else None
            if who is not None:  # "Anna and I broke up": what said she is the user's girlfriend ends
                self._end(said.scope, out.events[before:], who)
            self.flush_episodes(source)
        if out.kept:  # the LLM (when configured): this turn now, or its batch when full
            last = kept_episodes[-1].memory.id if kept_episodes else None
            source = replace(said, metadata={**said.metadata, EPISODE_KEY: last}) if last else said
            out.events += self._llm_extract(source, out.kept, rules)
        out.events += kept_episodes
        if paused and not out.kept and not out.commanded:
            log.debug("memory paused for a user: %d messages not stored", len(messages))
            out.nothing = True
        return out

    def _owned(self, said: Said, text: str) -> dict[str, str] | None:
        """The user's people and pets that `text` names, with what the user calls them: from the
        graph's names (which the store keeps cached until they change), else as the session's
        recent turns introduced them (the graph links a turn only behind its add: "My partner's
        name is Sam." then "Sam is a chef."). Those the message itself introduces, the rules
        read (engram.extract.owned)."""
        starts = [m.group("name") for m in _NAME_FIRST_RE.finditer(text)] if text.isascii() else None
        if starts is not None and not starts:  # no sentence starts with a name
            return None
        if starts is None and all(_ZH_NO_NAME_FIRST_RE.match(c) for c in _ZH_CLAUSES_RE.split(text) if c.strip()):
            starts = []  # every Chinese clause opens with 我, a time or a common word: no name to look up
        store, scope = self.services.store, said.scope
        named: dict[str, str] = {}
        if self.services.settings.graph and hasattr(store, "graph_snapshot"):
            named = {name: called for name, called in kin.owned_names(store, scope.user_id).items() if name in text}
        unknown = starts is None or any(may_be_name(w) and w not in named for w in starts)
        if unknown and said.session_id is not None:
            for turn in store.turns_list(scope, said.session_id, last=_REFERENT_TURNS):
                if turn.role == "user":
                    named = {**{n: c for n, c in introduced(turn.content) if n in text}, **named}
        return named or None

    def _llm_extract(self, said: Said, kept: list[Message], rules: list[Candidate]) -> list[Event]:
        """LLM extraction of one turn (``llm_extraction``): per turn now, or batched (engram.queue)."""
        mode = self.llm_tasks.mode
        if mode == "batch" and not self.queue.supported:
            mode = "per_turn"  # a store without a jobs table cannot hold turns for a batch
        if mode == "per_turn":
            text = " ".join(m.content for m in kept if m.role == "user")
            found = self.llm_tasks.extract(said.scope, [kept], [said.said_at], rules)
            events = [self.add_candidate(said, candidate, text) for candidate, _ in found]
            return [e for e in events if e is not None]
        if mode == "batch" and self.queue.supported:
            self.queue.buffer_turn(said.scope, said.session_id, {
                "messages": self.queued(kept), "said_at": said.said_at.isoformat(), "metadata": said.metadata,
            })
            job_id = self.queue.gather(said.scope, said.session_id, self.services.settings.llm_batch_turns)
            return self.queue.run_now(job_id) if job_id is not None else []
        return []

    def queued(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Messages as a queued job keeps them: redacted, since the queue is in the database."""
        return [{"role": m.role, "content": redact(m.content, self.services.privacy)} for m in messages]

    def add_batched(
        self, scope: Scope, candidate: Candidate, said: str, session_id: str | None,
        metadata: dict[str, Any], said_at: datetime, idempotency_key: str | None,
    ) -> Event | None:
        """`add_candidate` for the queue's batched LLM extraction (engram.queue)."""
        return self.add_candidate(Said(scope, session_id, metadata, said_at, idempotency_key), candidate, said)

    # -- privacy -> reconcile -> store, for one candidate ----------------------------
    def _read(self, said: Said, messages: Sequence[Message], message: Message, text: str, answers: str | None,
              local: datetime) -> list[Candidate]:
        """What the rules read in one message: its own statements, and a short answer read with
        the assistant's question ("Coco." answering "What's your dog's name?")."""
        user = message.role == "user"
        owned = self._owned(said, text) if user else None
        referent = self._referent(said, messages, message, text, answers) if user else None
        found = extract_candidates(text, role=message.role, now=local, owned=owned, referent=referent)
        if referent and found:  # "She just turned five." → "User's daughter Maya just turned five."
            found = self._with_name(said.scope, referent, found)
        if answers and user:
            stated = answer_as_statement(answers, text, lead_only=bool(found), referent=referent)
            read = extract_candidates(stated, now=local, owned=owned) if stated else []
            # what the answer says in full stands for the rules' shorter reading of it ("用户在国贸"
            # is "用户在国贸工作" answering "你在哪里上班？")
            found = [c for c in found if not any(c.content.rstrip(".。") in r.content for r in read)] + read
        return found

    def _with_name(self, scope: Scope, referent: str, found: list[Candidate]) -> list[Candidate]:
        """Facts about the user's `referent` with the name the user gave them, when the graph knows
        exactly one ("User's daughter just turned five." is found by "how old is Maya?" too)."""
        store = self.services.store
        if not self.services.settings.graph or not hasattr(store, "graph_snapshot"):
            return found
        relation = relation_of(referent)
        names = [name for name, called in kin.owned_names(store, scope.user_id).items()
                 if relation_of(called) == relation]
        if len(names) != 1:
            return found
        name = names[0]
        whose = (f"用户的{referent}", f"用户的{referent}{name}") if CJK_RE.search(referent) else \
            (f"User's {referent} ", f"User's {referent} {name} ")
        for c in found:
            if c.content.startswith(whose[0]) and name not in c.content:
                c.content = whose[1] + c.content[len(whose[0]):]
        return found

    def _correct(self, said: Said, text: str, fix: tuple[str, str], now: datetime, written: set[str]) -> Event | None:
        """The user's latest memory that says the word a correction takes back, said right
        (it supersedes the old one; history keeps both); None when no recent memory says it."""
        new, old = fix
        with self.services.store.section(said.scope):  # (another writer cannot supersede it meanwhile)
            recent = self.services.store.list(said.scope, LIVE, limit=LOOK_BACK)
            since = said.said_at - CORRECTS_WITHIN  # (a month-old "May" is not what "not May" takes back)
            target = next((m for m in recent if m.kind is not Kind.TURN and m.created_at >= since
                           and says(m.content, old)), None)
            if target is None:
                return None
            return self.add_candidate(said, corrected(target, new, old, now), text, written, replaces=target)

    def _switch(self, said: Said, text: str, moved: tuple[str, str], now: datetime, written: set[str]) -> Event | None:
        """The user's latest standing memory that says what they switched away from, said with
        what they use now (it supersedes the old one; history keeps both). Whenever it was said:
        a switch ends a habit of years. What happened (an event) is history, and stays as it is."""
        new, old = moved
        with self.services.store.section(said.scope):  # (another writer cannot supersede it meanwhile)
            recent = self.services.store.list(said.scope, LIVE, limit=SWITCH_LOOK_BACK)
            # (the user's own statement, not their sister's; where they live is the location rules')
            target = next((m for m in recent if m.kind in _SWITCHABLE and says(m.content, old)
                           and not about_someone_else(m.content) and m.key not in _PLACE_SLOTS), None)
            if target is None:
                return None
            return self.add_candidate(said, corrected(target, new, old, now, "switched by the user"), text, written,
                                      replaces=target)

    def _end(self, scope: Scope, events: list[Event], who: str) -> None:
        """The user's standing memories of a relationship they say ended, superseded by the event
        that ended it (engram.extract.endings); history keeps both. Nothing without that event."""
        ended = next((e.memory for e in events if e.memory is not None and e.memory.kind is Kind.EVENT
                      and e.action in (Action.ADD, Action.SUPERSEDE)), None)
        if ended is None:
            return
        store, now = self.services.store, utcnow()
        with store.section(scope), store.atomic():
            targets = [m for m in store.list(scope, LIVE, limit=SWITCH_LOOK_BACK)
                       if m.kind in _SWITCHABLE and m.id != ended.id and ends(m.content, who)]
            old = [t.model_copy(update={"status": Status.SUPERSEDED, "superseded_by": ended.id,
                                        "valid_to": ended.valid_from, "updated_at": now}) for t in targets]
            said = self._outdated_episodes(scope.user_id, targets, ended, now)  # ("My girlfriend Anna and I …")
            store.write(updates=[make_record(o) for o in (*old, *said)], events=[
                HistoryEvent.of(o, "SUPERSEDE", ended.content, "the relationship ended", old_content=o.content,
                                related_id=ended.id) for o in (*old, *said)])

    def add_candidate(
        self, said: Said, candidate: Candidate, text: str, written: set[str] | None = None,
        replaces: MemoryItem | None = None,
    ) -> Event | None:
        """Filter `candidate` for secrets, reconcile it with what is stored, write the outcome.
        `written`: the memories this message already added; a candidate that restates one of
        them ("User has a cat named Biscuit." / "User's cat is named Biscuit.") is no event.
        `replaces`: the memory the user just corrected; the candidate supersedes it."""
        s = self.services
        safe = safe_candidate(candidate, text, s.privacy)  # engram.sanitize: no secret gets through
        if safe is None:
            return None
        candidate = safe
        text = redact(text, s.privacy)  # it only feeds the reason recorded in history
        now, scope = utcnow(), said.scope
        item = MemoryItem(
            user_id=scope.user_id, agent_id=scope.agent_id, session_id=said.session_id,
            content=candidate.content, kind=candidate.kind, language=candidate.language,
            key=candidate.key, value=candidate.value, importance=candidate.importance,
            confidence=candidate.confidence, source=candidate.source,
            metadata={**said.metadata, **({"polarity": candidate.polarity} if candidate.polarity else {})},
            entities=candidate.entities, due_at=candidate.due_at, recurrence=candidate.recurrence,
            created_at=said.said_at, updated_at=now, valid_from=candidate.valid_from or said.said_at,
            embedding_model=s.embedder.name,  # embedded by a duplicate check, or after the write
        )
        record = make_record(item, None, said.idempotency_key)

        judge = self.llm_tasks.judge(scope)

        def decided() -> Decision:
            if replaces is not None:
                return Decision(Action.SUPERSEDE, replaces, candidate.reason)
            # the rows sharing the most words, read once a decision (the near-duplicate check and
            # the new-value check both look at them), and read again by a decision made later
            close = cache(lambda: s.store.restatements(scope, None, record.tokens, LIVE, RESTATEMENT_SHORTLIST))
            return decide(
                candidate,
                said=text,
                # an episode (a turn, verbatim) is a record of what was said, not a statement to restate
                exact=[m for m in s.store.find_by_hash(scope, record.content_hash, LIVE) if m.kind is not Kind.TURN],
                same_key=lambda: s.store.find_by_key(scope, candidate.key, LIVE),
                similar=lambda: self._similar(scope, candidate, record, close),
                duplicate_similarity=s.settings.duplicate_similarity,
                judge=judge,
                grey_zone=s.settings.llm_grey_zone,
                overlap=s.settings.merge_overlap,
                worded=lambda: self._worded(close()),
            )

        # With an LLM judge, decided outside the writers' lock (a model call is the slow part) and
        # decided again inside it when another writer changed this user's memories meanwhile.
        # Without one, deciding is a few indexed reads: done once, inside the lock.
        seen = s.store.user_version(scope.user_id) if judge is not None else None
        decision = decided() if judge is not None else None
        with s.store.section(scope):
            if decision is None or s.store.user_version(scope.user_id) != seen:
                decision = decided()
            if decision.action is Action.NOOP and written and decision.target is not None \
                    and decision.target.id in written:
                return None  # said once, in this very message: nothing to reinforce
            if decision.action is not Action.NOOP:  # it is stored (a NOOP only reinforces the old one)
                self.behind.prepare([record])
            log.debug("reconcile %s: %s (%s)", candidate.kind, decision.action, decision.reason)
            with s.store.atomic():  # the episode it was drawn from, when not written yet, in one commit
                self.flush_episodes(said)
                event = self._apply(decision, record, candidate, now, said.session_id)
                noted = self._graph(event, candidate)
            if decision.action in (Action.ADD, Action.SUPERSEDE, Action.DISPUTE):
                # its vector, unless the duplicate check made it, and its links when noted
                self.behind.submit([record], linked=not noted)
        target = decision.target
        if (
            decision.action is Action.NOOP and target is not None and target.status is Status.DISPUTED
            and signals_change(text)
        ):  # "I don't like coffee anymore" restates one side of a dispute: the user settled it
            settled = disputes.resolve(s.store, s.display, target.id, keep=target.id)
            kept = next((e.memory for e in settled if e.action is Action.RESOLVE), event.memory)
            return Event(action=Action.RESOLVE, memory=kept, reason=f"dispute settled by a restatement: {decision.reason}")
        return event

    def _graph(self, event: Event, candidate: Candidate) -> bool:
        """The entity graph (engram.graph) of what was just written, in its transaction (or
        noted for the write-behind worker: True), with the typed entities and relations an LLM
        gave with the candidate."""
        if event.action not in (Action.ADD, Action.SUPERSEDE, Action.DISPUTE, Action.UPDATE):
            return False
        given = {event.memory.id: candidate} if candidate.typed_entities or candidate.relations else {}
        return self.behind.link([event.memory], replace=event.action is Action.UPDATE, given=given)

    def _worded(self, close: list[tuple[str, float]]) -> list[MemoryItem]:
        """The live memories that share the most words with what is being written (`close`, as
        `Store.restatements` ranks them), newest first."""
        return sorted(self.services.store.get_many([i for i, _ in close]), key=lambda m: m.created_at, reverse=True)

    def _similar(
        self, scope: Scope, candidate: Candidate, record: Record, restated: Callable[[], list[tuple[str, float]]],
    ) -> list[tuple[MemoryItem, float]]:
        """Close neighbours of a candidate: near-duplicates, and for the LLM judge (when one
        is configured) its grey zone. Only those are materialised. Episodes (what was said,
        verbatim) are never a candidate's neighbours: more hits are read and they are dropped."""
        store, settings, embedder = self.services.store, self.services.settings, self.services.embedder
        floor = settings.duplicate_similarity
        wanted = NEIGHBOURS + EPISODE_MARGIN
        if self.llm_tasks.client is not None and settings.llm_reconcile:
            # the judge also weighs close meanings in other words: every vector is read, the
            # user's pending ones made first (engram.embed_behind)
            floor = min(floor, settings.llm_grey_zone)
            if record.embedding is None:
                embed_records(embedder, [record])
            self.behind.settle(scope.user_id)
            hits = [h for h in store.dense_search(scope, record.embedding, LIVE, wanted) if h[1] >= floor]
            items = {m.id: m for m in store.get_many([h[0] for h in hits]) if m.kind is not Kind.TURN}
            return [(items[i], score) for i, score in hits if i in items][:NEIGHBOURS]
        # a near-duplicate restates the words too (engram.text.restates): lexical first, so
        # the rows sharing the most words are checked on (kind, content), and only when one
        # says the same thing are vectors made (the candidate's and theirs, one batch): most
        # statements are new, and an add then embeds nothing before its commit
        close = restated()
        words = content_words(candidate.content)
        texts = store.texts([i for i, _ in close]) if close else {}
        same = [
            i for i, _ in close
            if i in texts and same_statement(candidate, words, *texts[i], settings.merge_overlap)
        ]
        if not same:
            return []
        vectors = embedder.embed([record.item.content, *(texts[i][1] for i in same)])
        stamp(record, vectors[0], embedder.name)
        hits = sorted(
            ((i, float(vectors[0] @ v)) for i, v in zip(same, vectors[1:], strict=True)), key=lambda h: -h[1]
        )
        hits = [h for h in hits if h[1] >= floor][:NEIGHBOURS]
        items = {m.id: m for m in store.get_many([h[0] for h in hits])}
        return [(items[i], score) for i, score in hits if i in items]

    def _apply(
        self, decision: Decision, record: Record, candidate: Candidate, now: datetime, session_id: str | None
    ) -> Event:
        """Write what reconciliation decided, in one transaction."""
        store = self.services.store
        item, target = record.item, decision.target
        if decision.action is Action.ADD:
            item, promoting = _promoted(Action.ADD, item, None, session_id)
            record.item = item
            store.write(inserts=[record], events=[HistoryEvent.of(item, "ADD", None, decision.reason), *promoting])
            return Event(action=Action.ADD, memory=item, reason=decision.reason)
        assert target is not None
        if decision.action is Action.UPDATE:  # refines the target (the LLM judge): same id, new text
            return self._refine(decision, target, candidate, now, session_id)
        if decision.action is Action.NOOP:
            reinforced = target.model_copy(
                update={
                    "strength": target.strength + 1.0,
                    "importance": max(target.importance, candidate.importance),
                    "updated_at": now,
                    "last_accessed": now,  # said again: a use (engram.lifecycle decay)
                    "metadata": _restated(target.metadata, item.metadata.get(EPISODE_KEY)),
                }
            )
            reinforced, promoting = _promoted(Action.NOOP, reinforced, None, session_id)
            store.write(updates=[make_record(reinforced)], events=promoting)
            return Event(action=Action.NOOP, memory=reinforced, reason=decision.reason)
        if decision.action is Action.SUPERSEDE:
            old = target.model_copy(
                update={"status": Status.SUPERSEDED, "superseded_by": item.id, "valid_to": item.valid_from, "updated_at": now}
            )
            item.supersedes = target.id
            if target.kind is Kind.FACT and item.kind is Kind.EVENT:  # "预产期改到四月了": the fact's new value
                item = item.model_copy(update={"kind": Kind.FACT})
            item, promoting = _promoted(Action.SUPERSEDE, item, target, session_id)
            record.item = item
            # superseding one side of a dispute settles it: the other side goes too
            partners = [
                p.model_copy(update={
                    "status": Status.SUPERSEDED, "superseded_by": item.id, "valid_to": item.valid_from,
                    "updated_at": now, "metadata": {k: v for k, v in p.metadata.items() if k != "disputes"},
                })
                for p in (disputes.dispute_group(store, target) if target.status is Status.DISPUTED else [])
                if p.id != target.id
            ]
            if partners:
                old.metadata = {k: v for k, v in old.metadata.items() if k != "disputes"}
            outdated = self._outdated_episodes(target.user_id, [target, *partners], item, now)
            store.write(
                inserts=[record],
                updates=[make_record(old)] + [make_record(p) for p in (*partners, *outdated)],
                events=[
                    HistoryEvent.of(old, "SUPERSEDE", item.content, decision.reason, old_content=target.content,
                                    related_id=item.id),
                    HistoryEvent.of(item, "ADD", None, f"supersedes {target.id}: {decision.reason}",
                                    related_id=target.id),
                    *promoting,
                ] + [
                    HistoryEvent.of(p, "SUPERSEDE", None, "dispute settled by a later statement", related_id=item.id)
                    for p in partners
                ] + [
                    HistoryEvent.of(e, "SUPERSEDE", None, "what it said was replaced", related_id=item.id)
                    for e in outdated
                ],
            )
            return Event(action=Action.SUPERSEDE, memory=item, reason=decision.reason, previous=old)
        # DISPUTE: keep both, both marked until the user settles it
        old = target.model_copy(update={"status": Status.DISPUTED, "updated_at": now})
        item.status = Status.DISPUTED
        item.metadata = {**item.metadata, "disputes": target.id}
        old.metadata = {**old.metadata, "disputes": item.id}
        store.write(
            inserts=[record],
            updates=[make_record(old)],
            events=[
                HistoryEvent.of(old, "DISPUTE", item.content, decision.reason, old_content=target.content,
                                related_id=item.id),
                HistoryEvent.of(item, "DISPUTE", None, decision.reason, related_id=target.id),
            ],
        )
        return Event(action=Action.DISPUTE, memory=item, reason=decision.reason, previous=old)

    def _refine(
        self, decision: Decision, target: MemoryItem, candidate: Candidate, now: datetime, session_id: str | None
    ) -> Event:
        filtered = apply_privacy(decision.content or candidate.content, self.services.privacy)
        content = filtered.text if not filtered.dropped and filtered.text else target.content
        updated = target.model_copy(update={
            "content": content, "language": detect_language(content), "updated_at": now,
            "importance": max(target.importance, candidate.importance),
            "strength": target.strength + 1.0, "last_accessed": now,
        })
        updated, promoting = _promoted(Action.UPDATE, updated, target, session_id)
        record = make_record(updated)
        embed_records(self.services.embedder, [record])  # an update keeps the old vector until it has one
        self.services.store.write(
            updates=[record],
            events=[HistoryEvent.of(updated, "UPDATE", content, decision.reason, old_content=target.content),
                    *promoting],
        )
        return Event(action=Action.UPDATE, memory=updated, reason=decision.reason, previous=target)

    # -- episodes ----------------------------------------------------------------------
    def _outdated_episodes(
        self, user_id: str, replaced: Sequence[MemoryItem], by: MemoryItem, now: datetime
    ) -> list[MemoryItem]:
        """The episodes that said nothing but what `replaced` said, superseded with them: "where
        do I live?" no longer finds "I live in Berlin." once the user moved (history keeps it)."""
        store, gone, out = self.services.store, {m.id for m in replaced}, []
        for episode_id in {m.metadata.get(EPISODE_KEY) for m in replaced} - {None}:
            episode = store.get(episode_id) if isinstance(episode_id, str) else None
            if episode is None or episode.status is not Status.ACTIVE:
                continue
            drawn = store.list(Scope(user_id, episode.agent_id), Filters(status=LIVE.status, metadata={EPISODE_KEY: episode_id}))
            if all(m.id in gone for m in drawn):
                out.append(episode.model_copy(update={
                    "status": Status.SUPERSEDED, "superseded_by": by.id, "valid_to": by.valid_from, "updated_at": now,
                }))
        return out

    def _referent(self, said: Said, messages: Sequence[Message], message: Message, text: str,
                  answers: str | None) -> str | None:
        """Who "She loves jazz." (or the "他" of "他多大了？" it answers) is about: the last of the
        user's people the user's turns just before named ("My mom's birthday is next Saturday."
        → "mom"), in this call or, earlier in the session, in working memory. Looked up only
        when there is a pronoun to read."""
        if not (answers and asks_of_pronoun(answers)) and not (
            (opens_with_pronoun(text) or _OBJECT_PRONOUN_RE.search(text)) and (answers is None or _SPEAKS_OF_RE.search(answers))
        ):
            return None  # (an assistant turn between that speaks of no "her" may have named someone else)
        before = [m.content for m in messages[: messages.index(message)] if m.role == "user"]
        if not before and said.session_id is not None:
            recent = self.services.store.turns_list(said.scope, said.session_id, last=_REFERENT_TURNS)
            before = [t.content for t in recent if t.role == "user"]
        zh = CJK_RE.search(text + (answers or "")) is not None
        return next((r for turn in reversed(before) if (r := last_referent(turn, zh, text))), None)

    def _last_reply(self, said: Said) -> str | None:
        """The session's last turn when the assistant said it (working memory), else None."""
        if said.session_id is None:
            return None
        recent = self.services.store.turns_list(said.scope, said.session_id, last=1)
        return recent[0].content if recent and recent[0].role == "assistant" else None

    def keep_episode(self, said: Said, text: str, answers: str | None, role: str = "user") -> Record | None:
        """What the user said, verbatim after the privacy filter, with the assistant turn it
        answers, as the episode to write (`flush_episodes`); chatter is not kept. Facts drawn
        from it record its id (provenance). With `role="assistant"`: what the assistant told the
        user it did for them (`engram.extract.told`), with the user's request it answers."""
        if role == "user" and is_chatter(text, answers):
            return None
        privacy = self.services.privacy
        (item,) = self.turn_items(said, [Message(role=role, content=text.strip())]) or (None,)
        if item is None:
            return None
        item.source = Source.EPISODE
        context = reply_context(answers)
        if context is not None:
            filtered = apply_privacy(context, privacy)
            if not filtered.dropped and filtered.text.strip():
                item.metadata = {**item.metadata, REPLY_KEY: filtered.text}
        return make_record(item, None, said.idempotency_key)

    def flush_episodes(self, said: Said) -> None:
        """Write the episode `said` still holds (in the caller's transaction, when it has one)."""
        if said.unwritten:
            records, said.unwritten[:] = list(said.unwritten), []
            self.store_verbatim(records, "episode")

    # -- verbatim turns and edits ------------------------------------------------------
    def turn_items(self, said: Said, messages: Sequence[Message]) -> list[MemoryItem]:
        """Messages kept verbatim as `turn` memories (after the privacy filter)."""
        scope, items = said.scope, []
        for message in messages:
            filtered = apply_privacy(message.content, self.services.privacy)
            if filtered.dropped or not filtered.text.strip():
                continue
            items.append(
                MemoryItem(
                    user_id=scope.user_id, agent_id=scope.agent_id, session_id=said.session_id,
                    content=filtered.text, kind=Kind.TURN, language=detect_language(filtered.text),
                    importance=0.3, confidence=1.0, source=Source.API,
                    metadata={**said.metadata, "role": message.role}, created_at=said.said_at,
                    updated_at=utcnow(), valid_from=said.said_at,
                )
            )
        return items

    def store_verbatim(self, records: list[Record], reason: str, *, behind: bool = True) -> list[Event]:
        """Write `records` in one transaction, as ADDs; their vectors and graph links follow
        (engram.embed_behind), or with `behind=False` (bulk ingest) are made with them, in one batch."""
        if behind:
            self.behind.prepare(records)
        else:
            embed_records(self.services.embedder, records)
        with self.services.store.atomic():
            self.services.store.write(
                inserts=records, events=[HistoryEvent.of(r.item, "ADD", None, reason) for r in records]
            )
            noted = False  # a bulk ingest links its batch at once (one graph write per user)
            if behind:
                noted = self.behind.link([r.item for r in records])
            elif self.services.settings.graph:
                graph.link(self.services.store, [r.item for r in records])
        self.behind.submit(records, linked=not noted)
        return [Event(action=Action.ADD, memory=r.item, reason="stored verbatim") for r in records]

    def add_turns(self, said: Said, messages: Sequence[Message]) -> list[Event]:
        """``add(infer=False)``: every message stored verbatim as a turn."""
        records = [make_record(item, None, said.idempotency_key) for item in self.turn_items(said, messages)]
        return self.store_verbatim(records, "stored verbatim")

    def edit(self, memory_id: str, content: str | None, metadata: dict[str, Any]) -> Event:
        """A user's edit of a memory's text and/or metadata; history keeps the old text."""
        s = self.services
        meta = redact_json(metadata, s.privacy)
        current = s.store.get(memory_id) if isinstance(memory_id, str) else None
        if current is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        changes: dict[str, Any] = {"updated_at": utcnow()}
        if content is not None:
            filtered = apply_privacy(content, s.privacy)
            if filtered.dropped:
                raise InvalidInput("the new content holds a secret the privacy policy refuses to store")
            changes["content"] = filtered.text
            changes["language"] = detect_language(filtered.text)
            changes.update(_derived(current, filtered.text))
        if meta:
            changes["metadata"] = {**changes.get("metadata", current.metadata), **meta}
        updated = current.model_copy(update=changes)
        record = make_record(updated)
        if content is not None:
            embed_records(s.embedder, [record])
        with s.store.atomic():
            s.store.write(
                updates=[record],
                events=[HistoryEvent.of(updated, "UPDATE", updated.content, "edited", old_content=current.content)],
            )
            if content is not None:
                self.behind.link([updated], replace=True)
        return Event(action=Action.UPDATE, memory=updated, reason="edited", previous=current)


_THIRD_PERSON = re.compile(r"^(?:the\s+)?user(?:'s\b|\s+(\S+))", re.I)
_IRREGULAR = {"is": "am", "has": "have", "does": "do", "was": "was", "doesn't": "don't"}


def first_person(text: str) -> str:
    """A memory's third-person wording as the user would say it, for the rules (which read
    what users say): "User lives in Porto." → "I live in Porto."; "用户住在上海" → "我住在上海"."""
    if text.startswith("用户"):
        return "我" + text[2:]
    m = _THIRD_PERSON.match(text)
    if m is None:
        return text
    if m.group(1) is None:
        return "My" + text[m.end():]
    verb = m.group(1)
    low = verb.lower()
    if low in _IRREGULAR:
        said = _IRREGULAR[low]
    elif low.endswith("ies"):
        said = verb[:-3] + "y"
    elif low.endswith(("sses", "shes", "ches", "xes")):
        said = verb[:-2]
    elif low.endswith("s") and not low.endswith("ss"):
        said = verb[:-1]
    else:
        said = verb
    return f"I {said}{text[m.end():]}"


def _derived(current: MemoryItem, content: str) -> dict[str, Any]:
    """What derives from a memory's text, derived again for an edit: its slot (key, value),
    polarity and entities. When the rules find no slot in the new text the old one is dropped
    (an edit to "User lives in Porto." must not keep filling "Berlin")."""
    for text in dict.fromkeys((content, first_person(content))):
        found = [c for c in extract_candidates(text, role="user") if c.key]
        if found:
            c = found[0]
            polarity = {"polarity": c.polarity} if c.polarity else {}
            meta = {k: v for k, v in current.metadata.items() if k != "polarity"} | polarity
            return {"key": c.key, "value": c.value, "entities": c.entities, "metadata": meta}
    lowered = content.lower()
    meta = {k: v for k, v in current.metadata.items() if k != "polarity"}
    return {"key": None, "value": None, "entities": [e for e in current.entities if e.lower() in lowered],
            "metadata": meta}


def _promoted(
    action: Action, item: MemoryItem, previous: MemoryItem | None, session_id: str | None
) -> tuple[MemoryItem, list[HistoryEvent]]:
    """`item` as it is written: long-term when `engram.capsule.promotion` says so, with
    the PROMOTE history row to write in the same transaction."""
    found = promotion(action, item, previous, session_id)
    if found is None:
        return item, []
    promoted, reason = found
    log.debug("promoted %s to long_term: %s", promoted.id, reason)
    return promoted, [HistoryEvent.of(promoted, "PROMOTE", None, reason)]


def _restated(metadata: dict[str, Any], episode_id: object) -> dict[str, Any]:
    """A fact's metadata once the episode `episode_id` said it again: provenance lists every turn
    that said it ("why do you think that?"), the newest RESTATED_KEEP after the first."""
    if not isinstance(episode_id, str) or episode_id == metadata.get(EPISODE_KEY):
        return metadata
    before = [e for e in metadata.get(RESTATED_KEY, ()) if e != episode_id]
    return {**metadata, RESTATED_KEY: [*before, episode_id][-RESTATED_KEEP:]}
