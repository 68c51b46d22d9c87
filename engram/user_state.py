"""Per-user switches kept in the store: paused memory, the user's time zone, and a deletion
said in conversation that waits for the user's confirmation."""

from __future__ import annotations

import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from datetime import UTC, datetime, timedelta, tzinfo

from engram.config import Settings
from engram.errors import InvalidInput
from engram.models import Command, as_utc, as_zone, utcnow
from engram.store.base import Store

log = logging.getLogger("engram")


def set_paused(store: Store, user_id: str, paused: bool) -> None:
    """Pause (persisted: `add` stores nothing) or resume remembering for this user."""
    now = utcnow()
    store.set_state(user_id, "paused", now.isoformat() if paused else None, now)
    log.debug("memory %s for a user", "paused" if paused else "resumed")


def is_paused(store: Store, user_id: str) -> bool:
    """Memory paused for this user ("暂停记忆", `Memory.pause`): nothing new is stored."""
    return store.get_state(user_id, "paused") is not None


def set_zone(store: Store, user_id: str, tz: str | None) -> None:
    """The user's own IANA zone, persisted; None: back to the `timezone` setting.
    An unknown name raises `InvalidInput` and stores nothing."""
    if tz is not None:
        if not isinstance(tz, str):
            raise InvalidInput(f"a time zone is an IANA name such as 'Asia/Shanghai', not {tz!r}")
        as_zone(tz)
    store.set_state(user_id, "timezone", tz, utcnow())


_UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/Universal", "Universal", "Zulu", "Etc/Zulu", "UCT", "Etc/UCT"})


def system_zone_name() -> str | None:
    """This machine's IANA zone: $TZ when it names one, else /etc/localtime's (or
    /etc/timezone's); None for UTC or where neither says."""
    name = _system_zone(os.environ.get("TZ", ""))
    return None if name in _UTC_NAMES else name


@lru_cache(maxsize=8)
def _system_zone(tz: str) -> str | None:
    """Read once per value of $TZ: every `add` asks (a realpath of /etc/localtime was ~60 µs)."""
    name = tz.lstrip(":")
    if name:
        try:
            as_zone(name)
            return name
        except InvalidInput:
            log.debug("TZ=%r is not an IANA zone; reading the system's", name)
    target = os.path.realpath("/etc/localtime")
    if "zoneinfo/" in target:
        return target.split("zoneinfo/", 1)[1]
    try:
        return Path("/etc/timezone").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def zone_name(store: Store, settings: Settings, user_id: str) -> str | None:
    """The user's own IANA zone, else the `timezone` setting, else the system's (TZ,
    /etc/localtime), else None (UTC)."""
    return store.get_state(user_id, "timezone") or settings.timezone or system_zone_name()


def zone(store: Store, settings: Settings, user_id: str) -> tzinfo:
    return as_zone(zone_name(store, settings, user_id))


def local_time(store: Store, settings: Settings, user_id: str, moment: datetime) -> datetime:
    """`moment` on the user's clock: in their zone when one is set (`set_timezone` or the
    setting), else in the zone `moment` came with (UTC when naive)."""
    name = zone_name(store, settings, user_id)
    if name is not None:
        return as_utc(moment).astimezone(as_zone(name))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


CONFIRM_WITHIN = timedelta(minutes=10)  # an unanswered "are you sure?" lapses


def set_pending(store: Store, user_id: str, command: Command | None, agent_id: str | None = None) -> None:
    """Remember (or drop, with None) the deletion that waits for this user's "yes"."""
    now = utcnow()
    value = None if command is None else json.dumps(
        {"command": command.model_dump(), "agent_id": agent_id, "at": now.isoformat()}
    )
    if value is not None or store.get_state(user_id, "pending_command") is not None:
        store.set_state(user_id, "pending_command", value, now)


def pending(store: Store, user_id: str) -> tuple[Command, str | None] | None:
    """The deletion waiting for confirmation (and its agent), unless it lapsed."""
    value = store.get_state(user_id, "pending_command")
    if value is None:
        return None
    data = json.loads(value)
    if utcnow() - datetime.fromisoformat(data["at"]) > CONFIRM_WITHIN:
        return None
    return Command(**data["command"]), data.get("agent_id")
