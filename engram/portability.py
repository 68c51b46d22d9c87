"""Export and import: engram's own JSON format, and OptMem's JSON memory file.

engram format (lossless; ``engram export --user U [--history] FILE``)::

    {
      "format": "engram",
      "version": 1,
      "exported_at": "2026-11-29T20:27:00Z",
      "scope": {"user_id": "alice", "agent_id": null},
      "memories": [ {every field of MemoryItem, as MemoryItem.model_dump(mode="json")} ],
      "history": [ {"memory_id", "user_id", "action", "old_content", "new_content",
                    "reason", "created_at", "related_id"} ],       # only with --history
      "graph": {"version": 1, "entities": [...], "aliases": [...], "mentions": [...],
                "edges": [...], "history": [...]}                 # the entity graph
    }

Memories come oldest first, in every status (active, superseded, disputed,
archived), with their ids and links (supersedes, superseded_by, sources,
``metadata.disputes`` / ``merged_into``). Vectors are not exported: import
embeds the text again with the configured embedder (``embedding_model``
records which). History rows keep their order and time; their integer row
ids are not part of the format. Everything exported passes the privacy
filter on the way out, and everything imported passes it again on the way in.

The ``graph`` section (engram.graph.portable documents it; absent from files written before
it, and from stores that keep no graph) holds the user's entity graph as stored: entities,
aliases, the memories that mention them, relations with their reasons, and the trace of
merges and splits. Import restores it for the memories it stores, in the same transaction;
a file without it (or with an empty one, and mem0 and OptMem files) has its graph rebuilt
from the memories instead.

OptMem file (the format of OptMem's ``memory_storage.json``)::

    [ {"id", "content", "category", "source_session", "created_at", "access_count",
       "embedding": null} ]

``category`` is one of OptMem's preference / fact / task_context / identity;
engram writes its other kinds (decision, event, summary, turn) by name and
reads unknown categories as facts. Only live (active and disputed) memories
are written; OptMem has no status. A file holding a list, ``{"memories": [...]}``
or ``{id: item}`` is accepted.

Import keeps ids. An id already in the database is skipped (``on_conflict=
"skip"``, the default), replaced (``"replace"``: only a memory of the same
user) or given a new id (``"new_id"``: links inside the file follow). A file
can never touch another user's memory: a clash with one always gets a new id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from engram import validate as check
from engram.graph import build as graph
from engram.graph import portable
from engram.errors import InvalidInput
from engram.models import Filters, Kind, MemoryItem, Source, Status, new_id, utcnow
from engram.privacy import apply as apply_privacy
from engram.privacy import redact
from engram.records import embed_records, make_record
from engram.sanitize import redact_identifier
from engram.store.base import HistoryEvent, Record, Scope, Store
from engram.text import detect_language
from engram.user_state import is_paused

if TYPE_CHECKING:  # pragma: no cover
    from engram.privacy import PrivacyPolicy
    from engram.services import Services

__all__ = ["FORMAT", "VERSION", "ImportReport", "export_data", "import_data", "load"]

FORMAT = "engram"
VERSION = 1
_TO_OPTMEM = {Kind.TASK: "task_context"}
_FROM_OPTMEM = {"task_context": Kind.TASK, "task": Kind.TASK, "preference": Kind.PREFERENCE,
                "fact": Kind.FACT, "identity": Kind.IDENTITY, "decision": Kind.DECISION,
                "event": Kind.EVENT, "summary": Kind.SUMMARY, "turn": Kind.TURN}
_OPTMEM_IMPORTANCE = {Kind.IDENTITY: 0.85, Kind.PREFERENCE: 0.7, Kind.FACT: 0.7, Kind.TASK: 0.75}
_HISTORY_FIELDS = ("memory_id", "user_id", "action", "old_content", "new_content", "reason", "created_at", "related_id")
_BATCH = 500


class ImportReport(BaseModel):
    format: str
    added: int = 0
    replaced: int = 0
    renamed: int = 0  # imported under a new id
    skipped: int = 0  # id already there (on_conflict="skip")
    dropped: int = 0  # refused by the privacy policy
    paused: int = 0  # not stored: the user paused memory
    history: int = 0  # history rows written
    entities: int = 0  # graph entities restored from the file's graph section


# --------------------------------------------------------------------------- export
def _clean(privacy: PrivacyPolicy, value: Any) -> Any:
    """Redact every string inside a JSON-like value."""
    if isinstance(value, str):
        return redact(value, privacy)
    if isinstance(value, list):
        return [_clean(privacy, v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(privacy, v) for k, v in value.items()}
    return value


# fields that can hold what a person wrote (the rest are ids, times and enums: never secrets)
_TEXT_FIELDS = ("content", "value", "key", "metadata", "entities", "tags", "user_id", "agent_id", "session_id")


def _clean_item(privacy: PrivacyPolicy, dumped: dict[str, Any], seen: dict[str, str]) -> dict[str, Any]:
    """A dumped memory redacted for export: only its text fields are scanned, each distinct
    string once per export (half of a 30k export was re-scanning ids and timestamps)."""
    for name in _TEXT_FIELDS:
        value = dumped.get(name)
        if isinstance(value, str):
            if value not in seen:
                seen[value] = redact(value, privacy)
            dumped[name] = seen[value]
        elif value:
            dumped[name] = _clean(privacy, value)
    return dumped


def export_data(
    store: Store, privacy: PrivacyPolicy, scope: Scope, *, format: str = FORMAT, history: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    items = store.list(scope, Filters(status=[]), newest_first=False)
    if format == "optmem":
        return [
            {
                "id": i.id,
                "content": redact(i.content, privacy),
                "category": _TO_OPTMEM.get(i.kind, i.kind.value),
                "source_session": _clean(privacy, i.session_id),  # rows stored before ids were redacted
                "created_at": i.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
                "access_count": i.access_count,
                "embedding": None,
            }
            for i in items
            if i.status in (Status.ACTIVE, Status.DISPUTED)
        ]
    if format != FORMAT:
        raise InvalidInput(f"unknown export format {format!r}; expected 'engram' or 'optmem'")
    seen: dict[str, str] = {}  # one scan per distinct string (user ids, repeated values)
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": utcnow().isoformat().replace("+00:00", "Z"),
        "scope": {"user_id": scope.user_id, "agent_id": scope.agent_id},
        "memories": [],
    }
    for done, item in enumerate(items, 1):
        data["memories"].append(_clean_item(privacy, item.model_dump(mode="json"), seen))
        if progress is not None and (done % _BATCH == 0 or done == len(items)):
            progress(done, len(items))
    if history:
        ids = {i.id for i in items}
        rows = store.user_history(scope.user_id)
        data["history"] = [
            _clean(privacy, {
                "memory_id": h.memory_id, "user_id": h.user_id, "action": h.action,
                "old_content": h.old_content, "new_content": h.new_content, "reason": h.reason,
                "created_at": h.created_at.isoformat().replace("+00:00", "Z"), "related_id": h.related_id,
            })
            for h in rows
            if h.memory_id in ids or scope.agent_id is None
        ]
    section = portable.export_graph(store, privacy, scope.user_id, {i.id for i in items})
    if section is not None:
        data["graph"] = section
    return data


# --------------------------------------------------------------------------- import
def load(source: str | Path | Mapping[str, Any] | Sequence[Any]) -> Any:
    """The JSON data of a file path, a JSON string, or data as is."""
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith(("{", "["))):
        try:
            path = Path(source).expanduser()
            found = path.is_file()
        except (OSError, ValueError):  # a name too long, a NUL in it
            raise InvalidInput(f"not a JSON text nor a readable file name: {str(source)[:80]!r}") from None
        if not found:
            raise InvalidInput(f"no such file: {path}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path} is not UTF-8 text (byte {exc.start})") from None
        except OSError as exc:
            raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    elif isinstance(source, str):
        text = source
    else:
        return source
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON: {exc}") from None
    except RecursionError:
        raise InvalidInput("not an export: JSON nested too deeply") from None


_KNOWN = "an engram export, a mem0 export or get_all result, or an OptMem memory file"


def detect_format(data: Any) -> str:
    """engram, mem0 (entries say ``memory``) or optmem (entries say ``content``); anything else
    is an `InvalidInput`, never "imported 0 memories"."""
    if isinstance(data, Mapping) and data.get("format") == FORMAT:
        return FORMAT
    if isinstance(data, Mapping) and "format" in data:
        raise InvalidInput(f"unknown format {data['format']!r}: expected {_KNOWN}")
    entries = _entries(data)
    if entries and all("memory" in e and "content" not in e for e in entries):
        return "mem0"
    if all("content" in e for e in entries) and (entries or data in ([], {})):
        return "optmem"
    raise InvalidInput(f"not a known format: expected {_KNOWN}")


def _entries(data: Any) -> list[Mapping[str, Any]]:
    """The memory objects of an OptMem or mem0 file: a list, ``{"memories"|"results": [...]}``
    or ``{id: item}``."""
    if isinstance(data, Mapping):
        for name in ("memories", "results"):
            if isinstance(data.get(name), list):
                data = data[name]
                break
        else:
            data = [{"id": k, **v} for k, v in data.items() if isinstance(v, Mapping)]
    if not isinstance(data, list) or not all(isinstance(x, Mapping) for x in data):
        raise InvalidInput(f"not a known format: expected {_KNOWN}")
    return data


def _from_mem0(entry: Mapping[str, Any], index: int, user_id: str | None, agent_id: str | None) -> MemoryItem:
    """A mem0 memory (``{"id", "memory", "metadata", "categories", "created_at", "user_id", …}``)."""
    owner = user_id or entry.get("user_id")
    if not isinstance(owner, str) or not owner:
        raise InvalidInput(f"memory {index} names no user: give user_id")
    categories = [str(c).lower() for c in entry.get("categories") or []]
    kind = Kind.PREFERENCE if any(c.startswith("preference") for c in categories) else Kind.FACT
    created = _time(entry.get("created_at"), f"memory {index}")
    meta = entry.get("metadata") if isinstance(entry.get("metadata"), Mapping) else {}
    item = _from_optmem(
        {"id": entry.get("id"), "content": entry.get("memory"), "category": kind.value,
         "created_at": created.isoformat(), "source_session": entry.get("run_id")},
        index, owner, agent_id or entry.get("agent_id"),
    )
    updated = _time(entry.get("updated_at") or created.isoformat(), f"memory {index}")
    return item.model_copy(update={"metadata": dict(meta), "updated_at": updated})


def _already_here(store: Store, items: Sequence[MemoryItem]) -> set[tuple[str, str | None, Status, str]]:
    """(user, agent, status, text) of what the importing scopes hold now."""
    scopes = {(i.user_id, i.agent_id) for i in items}
    return {
        (m.user_id, m.agent_id, m.status, m.content)
        for user, agent in scopes for m in store.list(Scope(user, agent), Filters(status=[]))
        if m.agent_id == agent
    }


def _time(value: Any, where: str) -> datetime:
    """A created_at of the file (`where`: "memory 3", "history 7"), in engram's range."""
    if value is None:
        return utcnow()
    try:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, int | float):
            parsed = datetime.fromtimestamp(value, UTC)
        else:
            parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return check.timestamp(parsed)
    except (ValueError, OverflowError, OSError):
        raise InvalidInput(f"{where}: unreadable created_at {value!r}") from None


def _from_optmem(entry: Mapping[str, Any], index: int, user_id: str, agent_id: str | None) -> MemoryItem:
    content = entry.get("content")
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput(f"memory {index}: content must be a non-empty string")
    kind = _FROM_OPTMEM.get(str(entry.get("category", "fact")).lower(), Kind.FACT)
    created = _time(entry.get("created_at"), f"memory {index}")
    access = entry.get("access_count", 0)
    if not isinstance(access, int) or isinstance(access, bool) or not 0 <= access < 2**62:
        raise InvalidInput(f"memory {index}: access_count must be a non-negative integer")
    session = entry.get("source_session")
    return MemoryItem(
        id=_file_id(entry.get("id"), index), user_id=user_id, agent_id=agent_id,
        session_id=str(session) if session is not None else None, content=content.strip(), kind=kind,
        language=detect_language(content), importance=_OPTMEM_IMPORTANCE.get(kind, 0.5),
        access_count=access, created_at=created, updated_at=created, valid_from=created,
        source=Source.IMPORT,
    )


def _remap(item: MemoryItem, ids: Mapping[str, str]) -> MemoryItem:
    def m(value: str | None) -> str | None:
        return ids.get(value, value) if value else value

    meta = dict(item.metadata)
    for name in ("disputes", "merged_into"):
        if isinstance(meta.get(name), str):
            meta[name] = m(meta[name])
        elif isinstance(meta.get(name), list):
            meta[name] = [m(v) for v in meta[name]]
    return item.model_copy(update={
        "id": m(item.id), "supersedes": m(item.supersedes), "superseded_by": m(item.superseded_by),
        "sources": [m(s) for s in item.sources], "metadata": meta,
    })


def _file_id(value: Any, index: int) -> str:
    if value is None or value == "":
        return new_id()
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise InvalidInput(f"memory {index}: id must be a string")
    return check.memory_id(str(value), f"memory {index}: id")


def _parse(
    data: Any, fmt: str, user_id: str | None, agent_id: str | None
) -> tuple[list[MemoryItem], list[Any], set[str]]:
    """The file's memories, validated one by one; its history rows (checked later); and the
    users it is about (its scope, its memories' owners, before any `user_id` override)."""
    if fmt == "mem0":
        items = [_from_mem0(e, i, user_id, agent_id) for i, e in enumerate(_entries(data))]
        return items, [], {i.user_id for i in items}
    if fmt != FORMAT:
        if user_id is None:
            raise InvalidInput("an OptMem file names no user: give user_id")
        return [_from_optmem(e, i, user_id, agent_id) for i, e in enumerate(_entries(data))], [], {user_id}
    if data.get("version") != VERSION:
        raise InvalidInput(f"engram export version {data.get('version')!r} is not supported (expected {VERSION})")
    raw = data.get("memories")
    if not isinstance(raw, list):
        raise InvalidInput("an engram export needs a 'memories' list")
    owners: set[str] = set()
    scope = data.get("scope")
    if isinstance(scope, Mapping) and isinstance(scope.get("user_id"), str):
        owners.add(scope["user_id"])
    items = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise InvalidInput(f"memory {index}: not an object")
        entry = dict(entry)
        if isinstance(entry.get("user_id"), str):
            owners.add(entry["user_id"])
        if user_id is not None:
            entry["user_id"] = user_id
        if agent_id is not None:
            entry["agent_id"] = agent_id
        try:
            item = MemoryItem.model_validate(entry)
            check.scope(item.user_id, item.agent_id)
            check.stored_item(item)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise InvalidInput(
                f"memory {index}: {'.'.join(map(str, error['loc']))}: {error['msg']}"
            ) from None
        except InvalidInput as exc:
            raise InvalidInput(f"memory {index}: {exc}") from None
        items.append(item)
    history_rows = data.get("history") or []
    if not isinstance(history_rows, list):
        raise InvalidInput("'history' must be a list")
    return items, history_rows, owners


def _unique_ids(items: Sequence[MemoryItem]) -> None:
    """Two memories of a file with one id: refused before anything is written."""
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        if item.id in first:
            raise InvalidInput(f"memory {index}: id {item.id!r} is also memory {first[item.id]}'s")
        first[item.id] = index


def import_data(
    services: Services,
    data: Any,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    on_conflict: str = "skip",
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """All or nothing: the whole file is checked first (memories, ids, history rows), then
    written in one transaction, so a bad row anywhere leaves the database as it was."""
    if on_conflict not in ("skip", "replace", "new_id"):
        raise InvalidInput(f"on_conflict must be skip, replace or new_id, not {on_conflict!r}")
    fmt = detect_format(data)
    report = ImportReport(format=fmt)
    items, history_rows, owners = _parse(data, fmt, user_id, agent_id)
    _unique_ids(items)
    file_graph = _file_graph(services, data, fmt, items, user_id)

    # conflicts: ids already stored
    store, privacy = services.store, services.privacy
    existing = {i.id: i for start in range(0, len(items), _BATCH)
                for i in store.get_many([x.id for x in items[start : start + _BATCH]])}
    ids: dict[str, str] = {}
    replace: list[str] = []
    kept: list[MemoryItem] = []
    paused = {u for u in {i.user_id for i in items} if is_paused(store, u)}  # their memory takes nothing new
    here = _already_here(store, items)
    for item in items:
        old = existing.get(item.id)
        if item.user_id in paused:
            report.paused += 1
        elif on_conflict != "replace" and (item.user_id, item.agent_id, item.status, item.content) in here:
            report.skipped += 1  # the same memory is there already: importing twice adds nothing
        elif old is None:
            kept.append(item)
        elif old.user_id != item.user_id or on_conflict == "new_id":
            ids[item.id] = new_id()
            report.renamed += 1
            kept.append(item)
        elif on_conflict == "replace":
            replace.append(item.id)
            report.replaced += 1
            kept.append(item)
        else:
            report.skipped += 1
    if ids:
        kept = [_remap(i, ids) for i in kept]

    # privacy on the way in
    clean: list[MemoryItem] = []
    for item in kept:
        filtered = apply_privacy(item.content, privacy)
        if filtered.dropped or not (filtered.text or "").strip():
            report.dropped += 1
            continue
        clean.append(item.model_copy(update={
            "content": filtered.text,
            "session_id": redact_identifier(item.session_id, privacy, item.user_id),
            "value": redact(item.value, privacy) if item.value else item.value,
            "metadata": _clean(privacy, item.metadata),
            "entities": _clean(privacy, item.entities),
            "tags": _clean(privacy, item.tags),
        }))

    events_in_order = _history_events(
        store, privacy, history_rows, items, owners, {i.id for i in clean}, ids, user_id
    )
    has_history = {e.memory_id for e in events_in_order}
    records: list[Record] = [make_record(i) for i in clean]
    for start in range(0, len(records), _BATCH):  # the slow part: embedding
        embed_records(services.embedder, records[start : start + _BATCH])
        if progress is not None:
            progress(min(start + _BATCH, len(records)), len(records))
    at = utcnow()
    with store.atomic():  # a failure anywhere below leaves the database as it was
        if replace:
            store.delete(replace, [HistoryEvent(i, existing[i].user_id, "DELETE", None, None, "replaced by import", at)
                                   for i in replace])
        for start in range(0, len(records), _BATCH):
            chunk = records[start : start + _BATCH]
            events = [
                HistoryEvent(r.item.id, r.item.user_id, "ADD", None, r.item.content, f"imported ({fmt})", at)
                for r in chunk
                if r.item.id not in has_history
            ]
            store.write(inserts=chunk, events=events)
            if services.settings.graph and file_graph is None:  # no graph in the file: derived again
                graph.link(store, [r.item for r in chunk])
            report.added += len(chunk)
            report.history += len(events)
        for start in range(0, len(events_in_order), _BATCH * 4):
            store.write(events=events_in_order[start : start + _BATCH * 4])
        if file_graph is not None:
            stored = {i.id for i in clean}
            written = {i.id: ids.get(i.id, i.id) for i in items if ids.get(i.id, i.id) in stored}
            report.entities = portable.restore(store, file_graph, written, replace=on_conflict == "replace")
    report.history += len(events_in_order)
    return report


def _file_graph(
    services: Services, data: Any, fmt: str, items: Sequence[MemoryItem], user_id: str | None,
) -> portable.FileGraph | None:
    """The file's graph section, checked whole before anything is written; None where the
    graph is to be rebuilt from the memories (no section, an empty one, another format) or not
    kept at all (the `graph` setting off, a store without a graph)."""
    section = data.get("graph") if fmt == FORMAT else None
    if section is None:
        return None
    scope = data.get("scope")
    owner = scope.get("user_id") if isinstance(scope, Mapping) and isinstance(scope.get("user_id"), str) else None
    parsed = portable.parse(
        section, owner=owner, target=user_id or owner or "", memories={i.id: i.user_id for i in items},
        when=_time, privacy=services.privacy,
    )
    if not parsed.entities or not services.settings.graph or not graph.supported(services.store):
        return None
    return parsed


def _history_events(
    store: Store, privacy: PrivacyPolicy, rows: Sequence[Any], items: Sequence[MemoryItem], owners: set[str],
    stored: set[str], ids: Mapping[str, str], user_id: str | None,
) -> list[HistoryEvent]:
    """The file's history rows as events, every row checked: its fields, its time, and its
    user (one of the file's own: a row can never land in another user's audit trail)."""
    in_file = {i.id for i in items}
    events: list[HistoryEvent] = []
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping) or not all(k in row for k in _HISTORY_FIELDS[:4]):
            raise InvalidInput(f"history {index}: needs {', '.join(_HISTORY_FIELDS)}")
        if row["user_id"] not in owners:
            raise InvalidInput(f"history {index}: names user {row['user_id']!r}, not the user this file is about")
        original, related = row["memory_id"], row.get("related_id")
        if not isinstance(original, str) or not original or not isinstance(related, str | None):
            raise InvalidInput(f"history {index}: memory_id and related_id must be strings")
        for name in ("action", "old_content", "new_content", "reason"):
            if not isinstance(row.get(name), str | None):
                raise InvalidInput(f"history {index}: {name} must be a string")
        at = _time(row.get("created_at"), f"history {index}")
        mid = ids.get(original, original)
        if original in in_file and mid not in stored:
            continue  # its memory was skipped or refused
        if original not in in_file and store.get(mid) is not None:
            continue  # belongs to a memory of this database the file does not hold
        events.append(HistoryEvent(
            memory_id=mid, user_id=user_id or str(row["user_id"]), action=str(row["action"]),
            old_content=_clean(privacy, row.get("old_content")), new_content=_clean(privacy, row.get("new_content")),
            reason=_clean(privacy, str(row.get("reason") or "")), at=at,
            related_id=ids.get(related, related) if related else None,
        ))
    return events
