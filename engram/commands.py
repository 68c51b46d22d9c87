"""Carrying out the control commands said in a message (engram.control recognises them).

"forget …", "scratch that", "暂停记忆" act at once. Deleting everything, or every memory of a
kind, said in conversation does not: it returns a confirmation request (`control.reply` "ask")
and is kept as the user's pending command (engram.user_state); the next message confirms it
("yes", "确认") or cancels it ("no", "取消", or anything else). `delete_all` and
`delete_by_kind` called directly, and `engram delete --all --yes`, are not asked back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engram import control, deletion, user_state
from engram.errors import InvalidInput
from engram.models import Action, Command, Event, Filters, Kind, MemoryItem, Status, utcnow
from engram.store.base import Scope

if TYPE_CHECKING:  # pragma: no cover
    from engram.services import Services

_ASKED_FIRST = ("delete_all", "delete_kind")


class Commands:
    """Runs one command for a scope; the facade hands in what it already does (forget, delete by
    kind, list) so each is implemented once."""

    def __init__(
        self, services: Services, *, forget: Callable[..., list[Event]],
        delete_by_kind: Callable[..., list[Event]], get_all: Callable[..., list[MemoryItem]],
    ) -> None:
        self.services = services
        self.forget = forget
        self.delete_by_kind = delete_by_kind
        self.get_all = get_all

    def run(self, scope: Scope, command: Command, session_id: str | None) -> list[Event]:
        """Carry out `command` (engram.write calls it); each event carries the reply to relay."""
        store = self.services.store
        if command.name in ("confirm", "cancel"):
            waiting = user_state.pending(store, scope.user_id)
            user_state.set_pending(store, scope.user_id, None)
            if waiting is not None and command.name == "confirm":
                asked, agent_id = waiting
                return self._act(Scope(scope.user_id, agent_id), asked, session_id)
            return self._reply(command, [Event(action=Action.NOOP, memory=None, reason="nothing deleted")])
        if command.name in _ASKED_FIRST:
            doomed = self._doomed(scope, command)
            if not doomed:
                return self._reply(command, [Event(action=Action.NOOP, memory=None, reason="nothing matched")])
            user_state.set_pending(store, scope.user_id, command, scope.agent_id)
            ask = command.model_copy(update={"name": "ask"})
            shown = [Event(action=Action.NOOP, memory=self.services.display.item(i), reason="awaiting confirmation")
                     for i in doomed]
            return self._reply(ask, shown)
        return self._act(scope, command, session_id)

    def _doomed(self, scope: Scope, command: Command) -> list[MemoryItem]:
        kinds = [Kind(command.target)] if command.name == "delete_kind" and command.target else None
        return self.services.store.list(scope, Filters(status=[], kind=kinds) if kinds else Filters(status=[]))

    def _act(self, scope: Scope, command: Command, session_id: str | None) -> list[Event]:
        name, services = command.name, self.services
        store, show = services.store, services.display.item
        events: list[Event]
        if name in ("pause", "resume"):
            user_state.set_paused(store, scope.user_id, name == "pause")
            action = Action.PAUSE if name == "pause" else Action.RESUME
            events = [Event(action=action, memory=None, reason=f"memory {name}d")]
        elif name == "view":
            items = [i for i in self.get_all(user_id=scope.user_id, agent_id=scope.agent_id, limit=None)
                     if i.kind is not Kind.TURN]
            if command.target:
                items = control.matching(items, command.target, services.settings.forget_min_overlap)
            events = [Event(action=Action.VIEW, memory=i, reason="remembered") for i in items]
        elif name == "forget":
            events = self.forget(command.target, user_id=scope.user_id, agent_id=scope.agent_id)
        elif name == "forget_last":
            live = store.list(scope, Filters(status=[Status.ACTIVE, Status.DISPUTED], session_id=session_id), limit=50)
            events = deletion.delete_items(
                services, scope, control.latest([i for i in live if i.kind is not Kind.SUMMARY]),
                reason="withdrawn on request", cascade=False, undo=True,
            )
        elif name == "delete_kind":
            events = self.delete_by_kind(command.target, user_id=scope.user_id, agent_id=scope.agent_id)
        elif name == "delete_all":
            items = store.list(scope, Filters(status=[]))
            store.delete_scope(scope, utcnow())
            events = [Event(action=Action.DELETE, memory=show(i), reason="deleted: everything") for i in items]
        else:  # pragma: no cover - control only makes the names above
            raise InvalidInput(f"unknown command {name!r}")
        return self._reply(command, events or [Event(action=Action.NOOP, memory=None, reason="nothing matched")])

    @staticmethod
    def _reply(command: Command, events: list[Event]) -> list[Event]:
        said = command.model_copy(update={"message": control.reply(command, events)})
        return [e.model_copy(update={"command": said}) for e in events]
