"""Loaders for the retrieval benchmarks, into one shape: corpora of documents and queries.

A `Corpus` is one scope (one LoCoMo conversation, one MADial user): the
documents to ingest and the queries whose relevant documents are known.

- LoCoMo (`load_locomo`): any file in the format of snap-research/locomo —
  the original ``locomo10.json`` (a list of samples ``{sample_id, conversation,
  qa}``) or one conversation per file (the conversation's keys at the top level
  next to ``qa``, as in ``shared/data/locomo-dev``). Every turn is a document
  ``"{speaker}: {text}"`` (plus `` [shares a photo: …]`` when it has a caption)
  dated by its session; questions of categories 1-4 are queries. Evidence ids
  are parsed leniently (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``).
- MADial-Bench (`load_madial`): a folder with ``memory.jsonl`` and
  ``dialogue.jsonl`` (or a folder holding ``zh/`` and ``en/`` such folders).
  Each memory event is a document; each dialogue is a query made of the lines
  before its (first) test turn, relevant to its ``relevant-id`` memories.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
}


class Doc(BaseModel):
    """One thing to remember (a LoCoMo turn, a MADial memory event)."""

    id: str
    text: str
    timestamp: datetime | None = None
    speaker: str | None = None
    session: str | None = None


class Query(BaseModel):
    """One question with the ids of the documents that answer it."""

    id: str
    text: str
    relevant: list[str]
    category: int | None = None
    answer: str | None = None


class Corpus(BaseModel):
    """One scope: its documents and its queries."""

    id: str
    source: str = ""
    language: str | None = None
    docs: list[Doc]
    queries: list[Query]
    skipped: dict[str, int] = Field(
        default_factory=dict, description="what the loader left out, and why (counts)"
    )


# --- dates -----------------------------------------------------------------------
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for name in names
}
_CLOCK = re.compile(r"(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?\s*([ap])?\.?\s*m?\.?\b", re.I)
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]{3,9})\.?,?\s+(\d{4})", re.I)
_MONTH_DAY_YEAR = re.compile(r"([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", re.I)
_ISO_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_CJK_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]?")


def parse_datetime(value: Any) -> datetime | None:
    """A timezone-aware UTC datetime from the dates these datasets use, or None.

    Accepts ``"1:56 pm on 8 May, 2023"``, ``"8 May 2023"``, ``"May 8, 2023 13:56"``,
    ``"2023-05-08"``, ISO timestamps and ``"2023年5月8日"``; a date without a time is midnight.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except ValueError:
        pass
    date: tuple[int, int, int] | None = None
    if (m := _ISO_DATE.search(text)) or (m := _CJK_DATE.search(text)):
        date = (int(m[1]), int(m[2]), int(m[3]))
    elif (m := _DAY_MONTH_YEAR.search(text)) and m[2].lower() in _MONTHS:
        date = (int(m[3]), _MONTHS[m[2].lower()], int(m[1]))
    elif (m := _MONTH_DAY_YEAR.search(text)) and m[1].lower() in _MONTHS:
        date = (int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
    if date is None:
        return None
    rest = text[: m.start()] + " " + text[m.end() :]
    hour = minute = second = 0
    if c := _CLOCK.search(rest):
        hour, minute, second = int(c[1]), int(c[2]), int(c[3] or 0)
        half = (c[4] or "").lower()
        if half == "p" and hour < 12:
            hour += 12
        elif half == "a" and hour == 12:
            hour = 0
    try:
        return datetime(date[0], date[1], date[2], hour % 24, minute % 60, second % 60, tzinfo=UTC)
    except ValueError:
        return None


# --- LoCoMo ----------------------------------------------------------------------
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.I)
_SESSION = re.compile(r"^session_(\d+)$")


def parse_evidence(evidence: Any) -> list[str]:
    """Normalised dialogue ids from a LoCoMo evidence field, leniently.

    ``["D8:6; D9:17"]`` → ``["D8:6", "D9:17"]``; ``"D:11:26"`` → ``["D11:26"]``;
    ``"D30:05"`` → ``["D30:5"]``. Duplicates are dropped, order kept.
    """
    if evidence is None:
        return []
    items = [evidence] if isinstance(evidence, str) else list(evidence)
    found: list[str] = []
    for item in items:
        for session, turn in _EVIDENCE.findall(str(item)):
            found.append(f"D{int(session)}:{int(turn)}")
    return list(dict.fromkeys(found))


def normalise_dia_id(dia_id: Any) -> str:
    ids = parse_evidence(dia_id)
    return ids[0] if ids else str(dia_id)


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn.get('speaker', '')}: {str(turn.get('text', '')).strip()}".strip()
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares a photo: {str(caption).strip()}]"
    return text


def locomo_samples(data: Any, stem: str) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(id, conversation, qa) for every sample in any of the LoCoMo layouts."""
    if isinstance(data, list):
        for index, sample in enumerate(data):
            if isinstance(sample, dict):
                yield from locomo_samples(sample, f"{stem}-{index}" if len(data) > 1 else stem)
        return
    if not isinstance(data, dict):
        raise ValueError("not a LoCoMo file: expected a JSON object or a list of objects")
    sample_id = str(data.get("sample_id") or stem)
    if isinstance(data.get("conversation"), dict):
        yield sample_id, data["conversation"], list(data.get("qa") or [])
    elif any(_SESSION.match(key) for key in data):
        yield sample_id, data, list(data.get("qa") or [])
    else:  # a mapping of sample id -> sample
        samples = [(k, v) for k, v in data.items() if isinstance(v, dict)]
        if not samples:
            raise ValueError("not a LoCoMo file: no sessions found")
        for key, sample in samples:
            for _, conversation, qa in locomo_samples(sample, str(key)):
                yield str(sample.get("sample_id") or key), conversation, qa


def session_turns(
    conversation: dict[str, Any], skip: Callable[[str], None] | None = None
) -> Iterator[tuple[str, datetime | None, list[dict[str, str]]]]:
    """(session name, when, turns) in session order; each turn ``{speaker, dia_id, text}``
    with a shared photo's caption in its text. Empty turns and repeated ids are left out."""
    skip = skip or (lambda reason: None)
    sessions = sorted(
        (int(m[1]), value)
        for key, value in conversation.items()
        if (m := _SESSION.match(key)) and isinstance(value, list)
    )
    seen: set[str] = set()
    previous: datetime | None = None
    for number, raw in sessions:
        when = parse_datetime(conversation.get(f"session_{number}_date_time"))
        if when is None:
            skip("sessions without a parseable date")
            when = previous
        previous = when or previous
        turns = []
        for index, turn in enumerate(raw):
            if not isinstance(turn, dict) or not str(turn.get("text", "")).strip():
                skip("empty turns")
                continue
            dia_id = normalise_dia_id(turn.get("dia_id", f"D{number}:{index + 1}"))
            if dia_id in seen:
                skip("duplicate turn ids")
                continue
            seen.add(dia_id)
            text = str(turn["text"]).strip()
            if turn.get("blip_caption"):
                text += f" [shares a photo: {str(turn['blip_caption']).strip()}]"
            turns.append({"speaker": str(turn.get("speaker", "")), "dia_id": dia_id, "text": text})
        yield f"session_{number}", when, turns


def locomo_corpus(
    sample_id: str,
    conversation: dict[str, Any],
    qa: Iterable[dict[str, Any]],
    *,
    categories: Iterable[int] = (1, 2, 3, 4),
    source: str = "",
) -> Corpus:
    """One LoCoMo conversation as a corpus of turns and category 1-4 questions."""
    wanted = set(categories)
    skipped: dict[str, int] = {}

    def skip(reason: str, n: int = 1) -> None:
        skipped[reason] = skipped.get(reason, 0) + n

    docs = [
        Doc(
            id=turn["dia_id"],
            text=f"{turn['speaker']}: {turn['text']}".strip(),
            # keep the order of turns within a session
            timestamp=None if when is None else when + timedelta(seconds=index),
            speaker=turn["speaker"] or None,
            session=session,
        )
        for session, when, turns in session_turns(conversation, skip)
        for index, turn in enumerate(turns)
    ]
    seen = {d.id for d in docs}
    queries: list[Query] = []
    for index, item in enumerate(qa):
        category = item.get("category")
        try:
            category = int(category)
        except (TypeError, ValueError):
            category = None
        if category not in wanted:
            skip(f"questions of category {category}")
            continue
        evidence = parse_evidence(item.get("evidence"))
        valid = [e for e in evidence if e in seen]
        if len(valid) < len(evidence):
            skip("evidence ids matching no turn", len(evidence) - len(valid))
        if not valid:
            skip("questions without valid evidence")
            continue
        question = str(item.get("question", "")).strip()
        if not question:
            skip("questions without text")
            continue
        answer = item.get("answer")
        queries.append(
            Query(
                id=f"{sample_id}/q{index}",
                text=question,
                relevant=valid,
                category=category,
                answer=None if answer is None else str(answer),
            )
        )
    return Corpus(id=sample_id, source=source, language="en", docs=docs, queries=queries, skipped=skipped)


def load_locomo(
    path: str | Path, *, categories: Iterable[int] = (1, 2, 3, 4), max_sessions: int | None = None
) -> list[Corpus]:
    """Every conversation of a LoCoMo file (either layout), one corpus each.

    `max_sessions` keeps only the first sessions (for smoke tests); questions
    whose evidence falls outside them are then skipped like any invalid evidence.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        data = json.load(handle)
    corpora = []
    for sample_id, conversation, qa in locomo_samples(data, path.stem):
        if max_sessions is not None:
            conversation = {
                k: v
                for k, v in conversation.items()
                if not ((m := re.match(r"^session_(\d+)", k)) and int(m[1]) > max_sessions)
            }
        corpora.append(locomo_corpus(sample_id, conversation, qa, categories=categories, source=str(path)))
    return corpora


# --- MADial-Bench ----------------------------------------------------------------
_MARKERS = re.compile(r"<(?:BOD|EOD)>")


def _read_json_records(path: Path) -> list[Any]:
    """JSON Lines, or one JSON document (a list, or an object) as a fallback."""
    text = path.read_text(encoding="utf-8")
    records: list[Any] = []
    try:
        for line in text.splitlines():
            if line.strip():
                records.append(json.loads(line))
        return records
    except json.JSONDecodeError:
        data = json.loads(text)
        return data if isinstance(data, list) else [data]


def _memory_events(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, event) from ``{"<id>": {...}}`` lines, ``{"id": …, …}`` lines or one big mapping."""
    for record in _read_json_records(path):
        if not isinstance(record, dict):
            continue
        if "event" in record:
            yield str(record.get("id")), record
            continue
        for key, value in record.items():
            if isinstance(value, dict):
                yield str(value.get("id", key)), value


def _memory_text(event: dict[str, Any], with_scene: bool) -> str:
    text = str(event.get("event", "")).strip()
    scene = str(event.get("scene") or "").strip()
    if with_scene and scene:
        text = f"{text} ({scene})"
    return text


def _dialogue_query(lines: list[Any], test_turn: int) -> str:
    kept = []
    for line in lines[:test_turn]:
        line = _MARKERS.sub("", str(line)).strip()
        if line:
            kept.append(line)
    return "\n".join(kept)


def madial_dir(path: str | Path, lang: str | None = None) -> Path:
    """The folder holding memory.jsonl and dialogue.jsonl for `lang` under `path`."""
    path = Path(path)
    if lang and (path / lang / "memory.jsonl").is_file():
        return path / lang
    if (path / "memory.jsonl").is_file():
        return path
    raise FileNotFoundError(
        f"{path}: no memory.jsonl" + (f" (nor {lang}/memory.jsonl)" if lang else "")
    )


def load_madial(
    path: str | Path, lang: str | None = None, *, with_scene: bool = True, all_test_turns: bool = False
) -> list[Corpus]:
    """MADial-Bench memories and dialogues, one corpus per user.

    Documents are the memory events (the event text, plus its scene when
    `with_scene`), dated by their ``time``. A dialogue's query is its lines
    before the first test turn (every test turn when `all_test_turns`).
    Memories without a ``user-id`` are shared by every user.
    """
    folder = madial_dir(path, lang)
    lang = lang or (folder.name if folder.name in ("zh", "en") else None)
    by_user: dict[str, list[Doc]] = {}
    shared: list[Doc] = []
    for memory_id, event in _memory_events(folder / "memory.jsonl"):
        text = _memory_text(event, with_scene)
        if not text:
            continue
        doc = Doc(id=memory_id, text=text, timestamp=parse_datetime(event.get("time")))
        user = event.get("user-id", event.get("user_id"))
        (shared if user is None else by_user.setdefault(str(user), [])).append(doc)
    if not by_user:
        by_user["all"] = []
    queries: dict[str, list[Query]] = {user: [] for user in by_user}
    skipped: dict[str, dict[str, int]] = {user: {} for user in by_user}

    def skip(user: str, reason: str, n: int = 1) -> None:
        skipped[user][reason] = skipped[user].get(reason, 0) + n

    for index, record in enumerate(_read_json_records(folder / "dialogue.jsonl")):
        if not isinstance(record, dict):
            continue
        user = str(record.get("user-id", record.get("user_id", "")))
        if user not in by_user:
            user = next(iter(by_user)) if len(by_user) == 1 else user
        if user not in by_user:
            continue
        known = {d.id for d in by_user[user]} | {d.id for d in shared}
        relevant = [str(r) for r in record.get("relevant-id", record.get("relevant_id", [])) or []]
        valid = [r for r in dict.fromkeys(relevant) if r in known]
        if len(valid) < len(relevant):
            skip(user, "relevant ids matching no memory", len(relevant) - len(valid))
        if not valid:
            skip(user, "dialogues without valid relevant ids")
            continue
        turns = record.get("test-turn", record.get("test_turn"))
        turns = [turns] if isinstance(turns, int) else sorted(int(t) for t in turns or [])
        if not turns:
            skip(user, "dialogues without a test turn")
            continue
        lines = list(record.get("dialogue") or [])
        for turn in turns if all_test_turns else turns[:1]:
            text = _dialogue_query(lines, turn)
            if not text:
                skip(user, "dialogues with nothing before the test turn")
                continue
            queries[user].append(
                Query(id=f"{record.get('id', index)}@{turn}", text=text, relevant=valid)
            )
    return [
        Corpus(
            id=f"madial-{lang or folder.name}" + ("" if user == "all" else f"-u{user}"),
            source=str(folder),
            language=lang,
            docs=by_user[user] + shared,
            queries=queries[user],
            skipped=skipped[user],
        )
        for user in by_user
    ]
