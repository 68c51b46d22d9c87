"""Nothing secret is stored anywhere: the secrets corpus pushed through `Memory.add`
(rules extraction and verbatim turns, in sessions that end and compress), then the raw
database file, its WAL and shared memory, the full-text index, the history, exports and
the logs are scanned for every secret value and every token of it."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from pathlib import Path

import pytest
from raw_db import index_terms

from engram import Memory
from engram.privacy import apply
from engram.text import lexical_tokens

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "secrets_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    if line
]
POSITIVES = [c for c in CORPUS if c["secrets"]]
NEGATIVES = [c for c in CORPUS if not c["secrets"]]
# what may legitimately be stored: every corpus text with its secrets redacted
LEGIT = [apply(c["text"]).text or "" for c in CORPUS]
_ALL_SECRETS = sorted({s["value"] for c in POSITIVES for s in c["secrets"]})
# a secret that is also a substring of legitimate text ("12345678" in the order number
# "13912345678") cannot be told apart in a raw scan; its tokens are still checked
SECRETS = [v for v in _ALL_SECRETS if not any(v in text for text in LEGIT)]


def variants(value: str) -> set[str]:
    """The value as written, and its digits/letters alone (cards and phones lose spaces)."""
    out = {value}
    compact = re.sub(r"[\s\-().]", "", value)
    if len(compact) >= 6 and not any(compact in text for text in LEGIT):
        out.add(compact)
    return out


def found(value: str, haystack: str) -> bool:
    """`value` in `haystack`; a short one only as a whole word (ids and hashes are hex)."""
    if len(value) >= 8:
        return value in haystack
    return re.search(r"(?<![0-9A-Za-z])" + re.escape(value) + r"(?![0-9A-Za-z])", haystack) is not None


def leaks_in(haystack: str) -> list[str]:
    return sorted({v for v in SECRETS for x in variants(v) if found(x, haystack)})


def forbidden_tokens() -> set[str]:
    """Tokens of secret values that no legitimately stored (redacted) text has."""
    legit: set[str] = set()
    for text in LEGIT:
        legit.update(lexical_tokens(text))
    out: set[str] = set()
    for value in _ALL_SECRETS:
        out.update(t for t in lexical_tokens(value) if len(t) >= 4)
    return out - legit


def raw_files(db_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in db_path.parent.glob(db_path.name + "*")}




def all_text_columns(db_path: Path) -> str:
    """Every text value of every table (memories, history, sessions, turns, user state…)."""
    db = sqlite3.connect(db_path)
    try:
        out = []
        tables = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                out += [v for v in row if isinstance(v, str)]
        return "\n".join(out)
    finally:
        db.close()


@pytest.fixture(scope="module")
def filled(tmp_path_factory, embedder):
    """One database with the whole corpus added both ways; scanned by the tests below."""
    db_path = tmp_path_factory.mktemp("secrets") / "engram.db"
    logger = logging.getLogger("engram")
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(self.format(record))

    handler = Keep(level=logging.DEBUG)
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    memory = Memory(db_path, embedder=embedder)
    try:
        for i, case in enumerate(CORPUS):
            text = case["text"]
            memory.add(text, user_id="rules", session_id=f"s{i % 7}", metadata={"note": text})
            memory.add(text, user_id="turns", session_id=f"t{i % 7}", infer=False)
            memory.add(f"Please remember this: {text}", user_id="explicit")
            memory.add([{"role": "user", "content": text}, {"role": "assistant", "content": f"Noted: {text}"}],
                       user_id="pair", session_id="p")
        for case in CORPUS[::3]:  # queued work (engram.queue) is in the database too
            memory.add(case["text"], user_id="queued", background=True)
        queued_files = raw_files(db_path)
        memory.flush()
        for i in range(7):
            memory.end_session("rules", f"s{i}")
        exported = json.dumps([memory.export(user_id=u, history=True) for u in ("rules", "turns", "explicit", "pair")]
                              + [memory.export(user_id="turns", format="optmem")], ensure_ascii=False)
        searched = json.dumps([r.model_dump(mode="json") for s in SECRETS[:40]
                               for r in memory.search(s, user_id="turns")], ensure_ascii=False)
        open_files = raw_files(db_path)  # while the engine runs: the WAL holds recent pages
    finally:
        memory.close()
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    return {
        "db_path": db_path, "open_files": open_files, "closed_files": raw_files(db_path),
        "queued_files": queued_files,
        "logs": "\n".join(records), "exported": exported, "searched": searched,
    }


def test_nearly_every_secret_is_checked_verbatim():
    assert len(SECRETS) >= len(_ALL_SECRETS) - 3


def test_the_corpus_was_stored(filled):
    db = sqlite3.connect(filled["db_path"])
    try:
        counts = dict(db.execute("SELECT user_id, count(*) FROM memories GROUP BY user_id").fetchall())
    finally:
        db.close()
    assert counts["turns"] >= len(CORPUS) - 5  # verbatim turns (a few are dropped when all secret)
    assert counts["rules"] > 10 and counts["explicit"] > len(CORPUS) // 2


@pytest.mark.parametrize("moment", ["queued_files", "open_files", "closed_files"])
def test_no_secret_value_in_the_database_file_wal_or_shm(filled, moment):
    files = filled[moment]
    assert any(name.endswith("-wal") for name in files) or moment == "closed_files"
    assert files
    leaks = [(name, leaks_in(data.decode("utf-8", errors="replace"))) for name, data in files.items()]
    assert [x for x in leaks if x[1]] == []


def test_no_token_of_a_secret_in_the_full_text_index_or_any_table(filled):
    forbidden = forbidden_tokens()
    assert len(forbidden) > 50  # the check has teeth
    assert sorted(forbidden & index_terms(filled["db_path"])) == []
    assert leaks_in(all_text_columns(filled["db_path"])) == []
    raw = b"".join(filled["closed_files"].values()).decode("utf-8", errors="replace")
    unique = {t for t in forbidden if len(t) >= 6 and not any(t in text for text in LEGIT)}
    assert sorted(t for t in unique if found(t, raw)) == []


def test_no_secret_in_exports_search_results_or_logs(filled):
    for where in ("exported", "searched", "logs"):
        assert leaks_in(filled[where]) == [], where
    assert "[REDACTED:" in filled["exported"]


def test_few_false_positives_negatives_are_stored_as_said(filled):
    db = sqlite3.connect(filled["db_path"])
    try:
        stored = {r[0] for r in db.execute("SELECT content FROM memories WHERE user_id = 'turns'")}
    finally:
        db.close()
    intact = [c["text"] for c in NEGATIVES if c["text"].strip() in stored]
    assert len(intact) >= 0.95 * len(NEGATIVES)
