"""Export / import: engram JSON (lossless round trip, history optional) and OptMem files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from engram import InvalidInput, Kind, Memory, Status

T0 = datetime(2025, 3, 1, 9, tzinfo=UTC)


def fill(memory, user="u1"):
    """Memories in every status, both languages, with links between them."""
    memory.add("I live in Berlin.", user_id=user, session_id="s1", timestamp=T0)
    memory.add("I moved to Paris.", user_id=user, session_id="s1", timestamp=T0 + timedelta(days=1))  # supersede
    memory.add("I love coffee.", user_id=user, timestamp=T0 + timedelta(days=2))
    memory.add("I hate coffee.", user_id=user, timestamp=T0 + timedelta(days=3))  # dispute
    memory.add("我喜欢吃火锅", user_id=user, timestamp=T0 + timedelta(days=4))
    memory.add("每周五要交周报", user_id=user, timestamp=T0 + timedelta(days=5))  # recurring task
    memory.add("We talked about the weather, it was nice.", user_id=user, infer=False,
               timestamp=T0 + timedelta(days=6), metadata={"dia_id": "D1:3"})
    old = memory.add("Just some small talk.", user_id=user, infer=False, timestamp=T0)[0].memory
    memory.maintain(user, now=T0 + timedelta(days=400))  # archives the old small talk
    assert memory.get(old.id).status is Status.ARCHIVED
    memory.search("coffee", user_id=user)  # access counts


def without_time_of_export(data):
    return {k: v for k, v in data.items() if k != "exported_at"}


@pytest.mark.parametrize("history", [False, True])
def test_engram_export_import_round_trip_is_lossless(memory, tmp_path, embedder, history):
    fill(memory)
    path = tmp_path / "export.json"
    first = memory.export(user_id="u1", history=history, path=path)
    assert first["format"] == "engram" and first["version"] == 1
    assert {m["status"] for m in first["memories"]} == {"active", "superseded", "disputed", "archived"}
    assert ("history" in first) is history
    assert json.loads(path.read_text(encoding="utf-8"))["memories"] == first["memories"]
    with Memory(tmp_path / "other.db", embedder=embedder) as other:
        report = other.import_(path)
        assert report.added == len(first["memories"]) and report.skipped == report.dropped == 0
        second = other.export(user_id="u1", history=history)
        assert without_time_of_export(second) == without_time_of_export(first)
        # what was imported works: search, disputes, reminders
        assert other.search("Paris", user_id="u1")[0].memory.content == "User moved to Paris."
        assert len(other.clarifications(user_id="u1")) == 1
        assert other.import_(path).skipped == len(first["memories"])  # a second import adds nothing


def test_import_into_another_user_renames_clashing_ids_and_keeps_links(memory, tmp_path):
    fill(memory)
    data = memory.export(user_id="u1", history=True)
    report = memory.import_(data, user_id="u2")
    assert report.renamed == len(data["memories"])
    u1 = {m.id for m in memory.get_all(user_id="u1", filters={"status": []}, limit=None)}
    u2 = memory.get_all(user_id="u2", filters={"status": []}, limit=None)
    assert not u1 & {m.id for m in u2} and len(u2) == len(u1)
    ids = {m.id for m in u2}
    for m in u2:  # every link points inside u2
        for link in (m.supersedes, m.superseded_by, m.metadata.get("disputes")):
            assert link is None or link in ids
    assert len(memory.clarifications(user_id="u2")) == 1


def test_import_replace_and_bad_files(memory, tmp_path):
    item = memory.add("I live in Berlin.", user_id="u1")[0].memory
    data = memory.export(user_id="u1")
    assert len(data["memories"]) == 2  # the fact and its episode
    next(m for m in data["memories"] if m["id"] == item.id)["content"] = "User lives in Potsdam."
    assert memory.import_(data, on_conflict="replace").replaced == 2
    assert memory.get(item.id).content == "User lives in Potsdam."
    for bad in ({"format": "engram", "version": 99, "memories": []}, {"format": "nope"},
                {"format": "engram", "version": 1, "memories": [{"content": "x", "kind": "nonsense"}]}, "[1, 2]",
                str(tmp_path / "missing.json"), "{not json"):
        with pytest.raises(InvalidInput):
            memory.import_(bad, user_id="u1")
    with pytest.raises(InvalidInput):
        memory.import_(data, on_conflict="merge")


def test_import_passes_the_privacy_filter(memory):
    data = {
        "format": "engram", "version": 1,
        "memories": [{"user_id": "u1", "content": "User's card is 4954255503491068.", "kind": "fact"}],
    }
    memory.import_(data)
    [item] = memory.get_all(user_id="u1")
    assert item.content == "User's card is [REDACTED:card]."
    dropping = Memory(memory.settings.path, embedder=memory.embedder, privacy={"card": "drop"})
    try:
        assert dropping.import_({**data, "memories": [{**data["memories"][0], "id": "x1"}]}).dropped == 1
    finally:
        dropping.close()


def test_optmem_export_has_the_optmem_fields(memory):
    fill(memory)
    items = memory.export(user_id="u1", format="optmem")
    assert all(set(i) == {"id", "content", "category", "source_session", "created_at", "access_count", "embedding"}
               for i in items)
    by_content = {i["content"]: i for i in items}
    assert by_content["User moved to Paris."]["source_session"] == "s1"
    assert by_content["用户每周五要交周报"]["category"] == "task_context"
    assert by_content["用户喜欢吃火锅"]["category"] == "preference"
    assert "User lives in Berlin." not in by_content  # superseded: OptMem has no status
    assert all(i["created_at"].endswith("Z") for i in items)


def test_optmem_round_trip(memory, tmp_path, embedder):
    fill(memory)
    path = tmp_path / "memory_storage.json"
    first = memory.export(user_id="u1", format="optmem", path=path)
    with Memory(tmp_path / "other.db", embedder=embedder) as other:
        with pytest.raises(InvalidInput, match="user"):
            other.import_(path)
        report = other.import_(path, user_id="u1")
        assert report.format == "optmem" and report.added == len(first)
        assert other.export(user_id="u1", format="optmem") == first


def test_an_optmem_file_from_optmem_imports(memory, tmp_path):
    path = tmp_path / "memory_storage.json"
    path.write_text(json.dumps({"memories": [
        {"id": "1698316200", "content": "用户喜欢用Markdown格式", "category": "preference",
         "source_session": "session_id_123", "created_at": "2023-10-26T10:30:00Z", "access_count": 5,
         "embedding": None},
        {"id": "1698316201", "content": "Working on the Q3 report, outline done", "category": "task_context",
         "source_session": "session_id_123", "created_at": 1698316201, "access_count": 0},
        {"content": "Act as my strict editor", "category": "identity"},
    ]}, ensure_ascii=False), encoding="utf-8")
    report = memory.import_(path, user_id="u1")
    assert report.added == 3
    items = {i.content: i for i in memory.get_all(user_id="u1")}
    pref = items["用户喜欢用Markdown格式"]
    assert (pref.kind, pref.language, pref.session_id, pref.access_count) == (Kind.PREFERENCE, "zh", "session_id_123", 5)
    assert pref.created_at == datetime(2023, 10, 26, 10, 30, tzinfo=UTC) and pref.id == "1698316200"
    assert items["Working on the Q3 report, outline done"].kind is Kind.TASK
    assert items["Act as my strict editor"].kind is Kind.IDENTITY
    assert memory.search("Markdown", user_id="u1")[0].memory.id == "1698316200"


def test_cli_export_import(memory, db_path, tmp_path):
    from typer.testing import CliRunner

    from engram.cli.app import app

    fill(memory)
    cli = CliRunner()
    out = tmp_path / "u1.json"
    result = cli.invoke(app, ["--db", str(db_path), "export", str(out), "--user", "u1", "--history"])
    assert result.exit_code == 0, result.output
    assert "history" in json.loads(out.read_text(encoding="utf-8"))
    other = tmp_path / "other.db"
    result = cli.invoke(app, ["--db", str(other), "import", str(out)])
    assert result.exit_code == 0, result.output
    assert "imported 14 memories" in result.output  # 8, and the 6 episodes (what the user said)
    result = cli.invoke(app, ["--db", str(other), "export", str(tmp_path / "o.json"), "--user", "u1",
                              "--format", "optmem"])
    assert result.exit_code == 0 and "optmem" in result.output
