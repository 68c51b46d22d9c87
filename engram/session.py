"""Sessions: working memory (recent turns, token-bounded) and how a conversation ends.

A session ends explicitly (`Memory.end_session`), when the user says goodbye
("bye", "see you", "再见", "拜拜", "下次聊"), or when it has been idle for
`idle_timeout_s`. Ending compresses the session's memories into a delta (see
`engram.capsule`). State lives in the database, so a restarted process finds
its open sessions, their last activity and their recent turns; ending is
claimed atomically in the database, so two threads or two processes ending
the same session produce one delta, and ending twice returns the same delta.

The clock is injectable (`SessionManager.clock`) so timeouts can be tested.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from engram.capsule import Context, Delta
from engram.errors import InvalidInput, NotFound
from engram.models import Event, Filters, Message, new_id, utcnow
from engram.privacy import apply as apply_privacy
from engram.store.base import Scope, SessionRecord, Store, TurnRecord

if TYPE_CHECKING:  # pragma: no cover
    from engram.capsule import CapsuleEngine
    from engram.services import Services

log = logging.getLogger("engram.session")

__all__ = ["Session", "SessionManager", "is_goodbye"]

# --------------------------------------------------------------------------- goodbye
_EN_LEAD = r"(?:(?:ok(?:ay)?|thanks?(?:\s+(?:a\s+lot|so\s+much))?|thank\s+you(?:\s+(?:so\s+much|very\s+much))?|thx|great|cool|alright|all\s+right|right|well|so|anyway|good|perfect|nice|awesome|then)\s+)*"
_EN_BYE = (
    r"(?:good\s*-?\s*bye|bye(?:\s*-?\s*bye)?(?:\s+now)?|see\s+(?:you|ya|u)(?:\s+(?:later|soon|tomorrow|next\s+time|around|then))?"
    r"|talk\s+(?:to\s+(?:you|ya)\s+)?(?:later|soon|tomorrow)|ttyl|cya|catch\s+you\s+later|good\s*night|farewell"
    r"|that'?s\s+all\s+for\s+(?:now|today)|signing\s+off|gotta\s+go|i\s+have\s+to\s+go|i\s+must\s+go)"
)
_EN_GOODBYE_RE = re.compile(rf"^{_EN_LEAD}{_EN_BYE}(?:\s+(?:for\s+now|then|everyone|all|guys|friend|buddy|\w+))?$", re.IGNORECASE)
_ZH_GOODBYE_RE = re.compile(
    r"^(?:好的|好吧|好|那|那就|嗯|谢谢你?|多谢|感谢)*"
    r"(?:再见|拜拜|拜|下次聊|下次再聊|回头聊|回头见|改天聊|改天见|明天见|下次见|晚安|先这样|就这样|先聊到这)"
    r"(?:了|啦|吧|呀|哦|啊|喽|咯)*$"
)
_CLAUSE_SPLIT_RE = re.compile(r"[,.!?;:，。！？；：~…\n]+")
_MAX_WORDS = 15
_MAX_ZH_CHARS = 30


def is_goodbye(text: str) -> bool:
    """True when a (short) message takes leave: one of its clauses is a goodbye and nothing more.

    "Thanks, bye!" / "See you tomorrow" / "好的，再见" / "下次聊吧" end a session;
    "I said goodbye to my old car" / "我跟他说了再见" do not.
    """
    if not isinstance(text, str):
        return False
    stripped = text.strip()
    if not stripped or len(stripped.split()) > _MAX_WORDS or len(stripped) > 120:
        return False
    for clause in _CLAUSE_SPLIT_RE.split(stripped.lower().replace("\u2019", "'")):
        clause = re.sub(r"\s+", " ", clause).strip()
        if not clause:
            continue
        if _EN_GOODBYE_RE.match(clause):
            return True
        compact = clause.replace(" ", "")
        if len(stripped) <= _MAX_ZH_CHARS and _ZH_GOODBYE_RE.match(compact):
            return True
    return False


# --------------------------------------------------------------------------- handle
class Session:
    """A handle on one conversation of one user; cheap to create, its state is in the database.

    >>> with memory.session("alice") as s:
    ...     s.add("I prefer short answers")
    ...     prompt = s.context("what should you keep in mind?").text
    """

    def __init__(self, manager: SessionManager, scope: Scope, session_id: str) -> None:
        self._manager = manager
        self.scope = scope
        self.session_id = session_id

    def __repr__(self) -> str:
        return f"Session(user_id={self.user_id!r}, session_id={self.session_id!r})"

    @property
    def user_id(self) -> str:
        return self.scope.user_id

    @property
    def agent_id(self) -> str | None:
        return self.scope.agent_id

    @property
    def record(self) -> SessionRecord | None:
        """The session's bookkeeping as stored now."""
        return self._manager.store.session_get(self.scope, self.session_id)

    @property
    def ended(self) -> bool:
        """Ended explicitly, by a goodbye, or (checked now) by idling past the timeout."""
        record = self.record
        if record is None:
            return False
        if record.ended_at is None and self._manager.is_idle(record):
            self._manager.end(self.scope, self.session_id, reason="idle")
            return True
        return record.ended_at is not None

    def add(self, messages: Any, **kwargs: Any) -> list[Event]:
        """`Memory.add` in this session (turns go to working memory; a goodbye ends it)."""
        return self._manager.add(
            messages, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id, **kwargs
        )

    def context(self, query: str, **kwargs: Any) -> Context:
        """`Memory.context` for this session (``turns=True`` adds the recent turns)."""
        return self._manager.context(
            query, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id, **kwargs
        )

    def turns(self) -> list[Message]:
        """Working memory: the recent turns that fit `working_memory_tokens`, oldest first."""
        return self._manager.turns(self.scope, self.session_id)

    def end(self, reason: str = "explicit") -> Delta:
        return self._manager.end(self.scope, self.session_id, reason=reason)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


# --------------------------------------------------------------------------- manager
class SessionManager:
    """Session state, working memory and endings for one `Memory`.

    `add` and `context` are the facade's operations a `Session` handle runs in its session;
    `flush_group` extracts the turns a session left waiting for batched LLM extraction."""

    def __init__(
        self,
        services: Services,
        capsules: CapsuleEngine,
        *,
        add: Callable[..., list[Event]],
        context: Callable[..., Context],
        flush_group: Callable[[Scope, str], Any] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.services = services
        self.capsules = capsules
        self.add = add
        self.context = context
        self.flush_group = flush_group
        self.clock = clock
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @property
    def store(self) -> Store:
        return self.services.store

    def _lock(self, scope: Scope, session_id: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault((scope.user_id, session_id), threading.Lock())

    @property
    def timeout(self) -> timedelta:
        return timedelta(seconds=self.services.settings.idle_timeout_s)

    def is_idle(self, record: SessionRecord) -> bool:
        return record.ended_at is None and self.clock() - record.last_active > self.timeout

    # -- opening ---------------------------------------------------------------------
    def open(self, scope: Scope, session_id: str | None = None) -> Session:
        """Resume `session_id` (reopening it if it ended), the scope's open session, or a new one."""
        if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
            raise InvalidInput("session_id must be a non-empty string when given")
        self.expire_idle(scope)
        if session_id is None:
            open_now = self.store.session_list(scope, open_only=True)
            session_id = open_now[0].session_id if open_now else new_id()
        record = self.store.session_touch(scope, session_id, self.clock())
        log.debug("session %s of %s open (since %s)", session_id, scope.user_id, record.started_at)
        return Session(self, scope, session_id)

    def expire_idle(self, scope: Scope, *, reading: bool = False) -> list[Delta]:
        """End every open session of the scope that has been idle past the timeout. `reading`
        (a capsule or context for a reply): no LLM call is made on the way, see `end`."""
        idle = self.store.session_list(scope, open_only=True, idle_before=self.clock() - self.timeout)
        return [self.end(scope, r.session_id, reason="idle", reading=reading) for r in idle]

    # -- the hooks of Memory.add -----------------------------------------------------
    def activity(self, scope: Scope, session_id: str) -> None:
        """The session is in use now (a context was asked for): end it first if it idled out."""
        self.before_add(scope, session_id)
        self.store.session_touch(scope, session_id, self.clock())

    def before_add(self, scope: Scope, session_id: str | None) -> None:
        """A session idle past the timeout ends before new words are added to it."""
        if session_id is None:
            return
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInput("session_id must be a non-empty string when given")
        record = self.store.session_get(scope, session_id)
        if record is not None and self.is_idle(record):
            self.end(scope, session_id, reason="idle")

    def after_add(
        self, scope: Scope, messages: Sequence[Message], session_id: str | None, events: list[Event]
    ) -> None:
        """Record the turns in working memory (in the add's transaction, `Writer.one_write`)."""
        if session_id is None:
            return
        self.record_turns(scope, session_id, messages)  # and touches the session
        marked = [e for e in events if e.memory is not None]  # (a command's event has none)
        if marked:
            log.debug(
                "marked %d memories in session %s of %s: %s", len(marked), session_id, scope.user_id,
                ", ".join(f"{e.action.value} {e.memory.kind.value}" for e in marked),
            )

    def after_commit(self, scope: Scope, messages: Sequence[Message], session_id: str | None) -> None:
        """End the session on a goodbye, once the add committed: ending takes the session's lock,
        and a thread ending it holds that lock while it waits for the writers' lock."""
        if session_id is not None and any(m.role == "user" and is_goodbye(m.content) for m in messages):
            log.debug("goodbye in session %s of %s", session_id, scope.user_id)
            self.end(scope, session_id, reason="goodbye")

    def record_turns(self, scope: Scope, session_id: str, messages: Sequence[Message]) -> None:
        """Keep the messages in working memory (token-bounded) and touch the session, in one write."""
        limit = self.services.settings.working_memory_tokens
        counter = self.capsules.counter
        now = self.clock()
        turns = []
        for message in messages:
            if message.role not in ("user", "assistant") or not message.content.strip():
                continue
            filtered = apply_privacy(message.content, self.services.privacy)
            if filtered.dropped or not filtered.text:
                continue
            text = filtered.text.strip()
            tokens = counter.count(text)  # (counted once: most turns fit)
            if tokens > limit:
                text = counter.truncate(text, limit)
                tokens = counter.count(text)
            if text:
                turns.append(TurnRecord(message.role, text, tokens, now))
        if turns:
            self.store.turns_append(scope, session_id, turns, limit, touched_at=now)
        else:
            self.store.session_touch(scope, session_id, now)

    def turns(self, scope: Scope, session_id: str) -> list[Message]:
        return [
            Message(role=t.role, content=t.content)
            for t in self.store.turns_list(scope, session_id)
        ]

    # -- ending ----------------------------------------------------------------------
    def end(self, scope: Scope, session_id: str, *, reason: str = "explicit", reading: bool = False) -> Delta:
        """End a session and compress it; idempotent (a second call returns the same delta).

        `reading`: the session ends on the way to a reply, which must not wait for an LLM: its
        turns waiting for batched extraction go to the background worker, and the delta is the
        rules' (OptMem's deterministic compression) rather than the LLM's."""
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInput("session_id must be a non-empty string")
        store = self.store
        with self._lock(scope, session_id):
            record = store.session_get(scope, session_id)
            if record is None:
                if not store.count(Scope(scope.user_id), Filters(session_id=session_id, status=[])):
                    raise NotFound(f"no session {session_id!r} for user {scope.user_id!r}")
                record = store.session_touch(scope, session_id, self.clock())  # memories, no row yet
            if record.ended_at is not None or not store.session_end(scope, session_id, self.clock(), reason):
                return self._ended(scope, session_id)
            # turns waiting for batched LLM extraction are extracted before the delta is made
            if self.flush_group is not None:
                self.flush_group(scope, session_id, not reading)
            engine = self.capsules
            mode = self.services.settings.compression
            delta: Delta | None = None
            if mode == "session":
                delta = engine.compress_session(scope, session_id, record.compressed_at, reason, llm=not reading)
            elif mode == "daily":
                engine.maybe_compress_daily(scope, utcnow())
            if delta is None:
                delta = Delta(user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id, end_reason=reason)
            store.session_finish(
                scope, session_id, summary_id=delta.summary.id if delta.summary else None,
                compressed_at=utcnow(),
            )
            log.debug(
                "session %s of %s ended (%s): %d delta lines", session_id, scope.user_id, reason, len(delta.lines)
            )
            return delta

    def _ended(self, scope: Scope, session_id: str) -> Delta:
        record = self.store.session_get(scope, session_id)
        summary = self.store.get(record.summary_id) if record and record.summary_id else None
        reason = record.end_reason if record else None
        if summary is not None:
            return self.capsules.delta_from_summary(summary, end_reason=reason, already_ended=True)
        return Delta(
            user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id,
            end_reason=reason, already_ended=True,
        )
