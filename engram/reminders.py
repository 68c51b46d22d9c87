"""Proactive reminders from `task` memories: due dates and recurrences.

The rules extractor turns "every Friday I send the weekly report" / "每周五要交周报"
into a task with ``recurrence="weekly:FRI"`` (and ``due_at`` = the next Friday,
end of day), and "submit the report by Friday" into a task with ``due_at``.
Recurrence rules understood here:

    daily                       every day
    weekly                      every week, on the weekday of due_at (else created_at)
    weekly:MON,WED,FRI          on those weekdays
    monthly / monthly:15        every month on due_at's day / on the 15th (clamped)
    yearly / yearly:03-15       every year on due_at's date / on 15 March

An occurrence is at due_at's time of day (23:59 when the task has no due_at:
"some time that day"). `due(...)` lists, at `now`:

- one-off tasks whose due_at is before ``now + horizon`` and not done
  (``overdue`` when already past);
- recurring tasks with an occurrence between the start of today and
  ``now + horizon`` that is not done yet.

`complete` marks a task done: a one-off task is archived (``archived_reason``
"done"); a recurring one records ``metadata["done_through"]`` so that
occurrence is not reported again. Days are computed in `tz` (default UTC).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING

from pydantic import BaseModel

from engram.errors import InvalidInput, NotFound
from engram.models import Action, Event, Filters, Kind, MemoryItem, Status, as_utc, as_zone, utcnow
from engram.store.base import Scope, Transition
from engram.user_state import zone as user_zone

if TYPE_CHECKING:  # pragma: no cover
    from engram.services import Services

__all__ = ["Reminder", "complete", "due", "due_for", "next_occurrence", "parse_recurrence"]

_DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_END_OF_DAY = time(23, 59)


class Reminder(BaseModel):
    """A task that is due (or overdue), with a line to show the user."""

    memory: MemoryItem
    due_at: datetime  # this occurrence, UTC
    overdue: bool
    recurring: bool
    text: str  # "Due today: …" / "今天到期：…"


def parse_recurrence(rule: str) -> tuple[str, tuple[int, ...] | int | tuple[int, int] | None]:
    """("weekly", (4,)) for "weekly:FRI"; raises InvalidInput for what it cannot read."""
    if not isinstance(rule, str) or not rule.strip():
        raise InvalidInput("empty recurrence")
    unit, _, arg = rule.strip().lower().partition(":")
    arg = arg.strip()
    try:
        if unit == "daily" and not arg:
            return unit, None
        if unit == "weekly":
            if not arg:
                return unit, None
            days = tuple(sorted({_DAYS.index(d.strip().upper()[:3]) for d in arg.split(",") if d.strip()}))
            if not days:
                raise ValueError
            return unit, days
        if unit == "monthly":
            if not arg:
                return unit, None
            day = int(arg)
            if not 1 <= day <= 31:
                raise ValueError
            return unit, day
        if unit == "yearly":
            if not arg:
                return unit, None
            month, day = (int(x) for x in arg.split("-"))
            date(2000, month, day)  # validates (2000 is a leap year)
            return unit, (month, day)
    except (ValueError, TypeError):
        pass
    raise InvalidInput(f"unknown recurrence {rule!r}")


def _clamp(year: int, month: int, day: int) -> date:
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def _matches(unit: str, arg: object, anchor: date, day: date) -> bool:
    if day < anchor:
        return False
    if unit == "daily":
        return True
    if unit == "weekly":
        days = arg if isinstance(arg, tuple) else (anchor.weekday(),)
        return day.weekday() in days
    if unit == "monthly":
        want = arg if isinstance(arg, int) else anchor.day
        return day == _clamp(day.year, day.month, want)
    if unit == "yearly":
        month, dom = arg if isinstance(arg, tuple) else (anchor.month, anchor.day)
        return day == _clamp(day.year, month, dom)
    return False


def _anchor(item: MemoryItem, zone: tzinfo) -> tuple[date, time]:
    if item.due_at is not None:
        local = item.due_at.astimezone(zone)
        return local.date(), local.time().replace(second=0, microsecond=0)
    return item.created_at.astimezone(zone).date(), _END_OF_DAY


def next_occurrence(item: MemoryItem, after: datetime, tz: tzinfo | str | None = None) -> datetime | None:
    """The first occurrence of a recurring task at or after `after` (UTC), or None."""
    if not item.recurrence:
        return None
    unit, arg = parse_recurrence(item.recurrence)
    zone = as_zone(tz)
    start_day, at = _anchor(item, zone)
    local_after = as_utc(after).astimezone(zone)
    day = max(local_after.date(), start_day)
    for _ in range(0, 366 * 4 + 1):  # a yearly 29 Feb is at most four years away
        if _matches(unit, arg, start_day, day):
            moment = datetime.combine(day, at, tzinfo=zone)
            if moment >= local_after:
                return as_utc(moment)
        day += timedelta(days=1)
    return None


def _done_through(item: MemoryItem) -> datetime | None:
    value = item.metadata.get("done_through")
    if not isinstance(value, str):
        return None
    try:
        return as_utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def _label(when: datetime, now: datetime, zone: tzinfo, language: str, overdue: bool) -> str:
    local, today = when.astimezone(zone), now.astimezone(zone).date()
    clock = "" if local.time().replace(second=0, microsecond=0) == _END_OF_DAY else local.strftime("%H:%M")
    stamp = local.strftime("%Y-%m-%d") + (f" {clock}" if clock else "")
    if language == "zh":
        if overdue:
            return f"已逾期（截止 {stamp}）"
        if local.date() == today:
            return f"今天{clock}到期" if clock else "今天到期"
        if local.date() == today + timedelta(days=1):
            return f"明天{clock}到期" if clock else "明天到期"
        return f"{stamp} 到期"
    if overdue:
        return f"Overdue (due {stamp})"
    if local.date() == today:
        return f"Due today at {clock}" if clock else "Due today"
    if local.date() == today + timedelta(days=1):
        return f"Due tomorrow at {clock}" if clock else "Due tomorrow"
    return f"Due {stamp}"


def due(
    items: Iterable[MemoryItem],
    now: datetime | None = None,
    *,
    horizon: timedelta = timedelta(hours=24),
    tz: tzinfo | str | None = None,
) -> list[Reminder]:
    """The reminders among `items` at `now`, soonest first (see the module docstring)."""
    now = utcnow() if now is None else as_utc(now)
    zone = as_zone(tz)
    until = now + horizon
    day_start = as_utc(datetime.combine(now.astimezone(zone).date(), time(0, 0), tzinfo=zone))
    out: list[Reminder] = []
    for item in items:
        if item.kind is not Kind.TASK or item.status not in (Status.ACTIVE, Status.DISPUTED):
            continue
        when: datetime | None
        if item.recurrence:
            try:
                parse_recurrence(item.recurrence)
            except InvalidInput:
                continue
            done = _done_through(item)
            start = day_start if done is None else max(day_start, done + timedelta(seconds=1))
            when = next_occurrence(item, start, zone)
        else:
            when = item.due_at if not item.metadata.get("done_at") else None
        if when is None or when > until:
            continue
        overdue = when < now
        label = _label(when, now, zone, item.language, overdue)
        sep = "：" if item.language == "zh" else ": "
        out.append(Reminder(
            memory=item, due_at=when, overdue=overdue, recurring=bool(item.recurrence),
            text=f"{label}{sep}{item.content}",
        ))
    out.sort(key=lambda r: r.due_at)
    return out


def due_for(
    services: Services, scope: Scope, *, now: datetime | None = None,
    horizon: timedelta | None = None, tz: tzinfo | str | None = None,
) -> list[Reminder]:
    """A scope's reminders as they may be shown: its live tasks, in the user's zone unless
    `tz` says otherwise, within `horizon` (default ``reminder_horizon_hours``), redacted."""
    if horizon is None:
        horizon = timedelta(hours=services.settings.reminder_horizon_hours)
    tasks = services.store.list(scope, Filters(status=[Status.ACTIVE, Status.DISPUTED], kind=[Kind.TASK]))
    zone = user_zone(services.store, services.settings, scope.user_id) if tz is None else tz
    found = due(tasks, now, horizon=horizon, tz=zone)
    for r in found:
        r.memory = services.display.item(r.memory)
        r.text = services.display.text(r.text)
    return found


def complete(
    services: Services, memory_id: str, *, now: datetime | None = None, tz: tzinfo | str | None = None
) -> Event:
    """Mark a task done (this occurrence of a recurring one; `tz`: default the user's zone)."""
    now = utcnow() if now is None else as_utc(now)
    item = services.store.get(memory_id) if isinstance(memory_id, str) and memory_id else None
    if item is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    if item.kind is not Kind.TASK:
        raise InvalidInput(f"memory {memory_id!r} is a {item.kind.value}, not a task")
    if tz is None:  # the user's own days
        tz = user_zone(services.store, services.settings, item.user_id)
    live = (Status.ACTIVE.value, Status.DISPUTED.value)
    if item.recurrence:
        zone = as_zone(tz)
        done = _done_through(item)
        day_start = as_utc(datetime.combine(now.astimezone(zone).date(), time(0, 0), tzinfo=zone))
        start = day_start if done is None else max(day_start, done + timedelta(seconds=1))
        occurrence = next_occurrence(item, start, zone) or now
        transition = Transition(
            memory_id=item.id, status=item.status.value, action="DONE",
            reason=f"done for {occurrence.isoformat()}", at=now, from_status=live,
            metadata={"done_through": occurrence.isoformat()},
        )
    else:
        transition = Transition(
            memory_id=item.id, status=Status.ARCHIVED.value, action="DONE", reason="task done",
            at=now, from_status=live,
            metadata={"done_at": now.isoformat(), "archived_reason": "done", "archived_at": now.isoformat()},
        )
    if not services.store.transition([transition]):
        raise InvalidInput(f"task {memory_id!r} is {item.status.value}: nothing to complete")
    updated = services.store.get(item.id)
    assert updated is not None
    return Event(action=Action.UPDATE, memory=services.display.item(updated), previous=item, reason=transition.reason)
