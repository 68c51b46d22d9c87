"""Per-user switches kept in the store: paused memory and the user's time zone."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from engram.config import Settings
from engram.models import as_utc, as_zone
from engram.store.base import Store


def is_paused(store: Store, user_id: str) -> bool:
    """Memory paused for this user ("暂停记忆", `Memory.pause`): nothing new is stored."""
    return store.get_state(user_id, "paused") is not None


def zone_name(store: Store, settings: Settings, user_id: str) -> str | None:
    """The user's own IANA zone, else the `timezone` setting, else None (UTC)."""
    return store.get_state(user_id, "timezone") or settings.timezone


def zone(store: Store, settings: Settings, user_id: str) -> tzinfo:
    return as_zone(zone_name(store, settings, user_id))


def local_time(store: Store, settings: Settings, user_id: str, moment: datetime) -> datetime:
    """`moment` on the user's clock: in their zone when one is set (`set_timezone` or the
    setting), else in the zone `moment` came with (UTC when naive)."""
    name = zone_name(store, settings, user_id)
    if name is not None:
        return as_utc(moment).astimezone(as_zone(name))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
