"""Import is all or nothing: the whole file is checked first, then written in one transaction;
it never writes outside its user (issue 13, items 6-8)."""

from __future__ import annotations

import copy
import json

import pytest

from engram import InvalidInput, Memory


def exported(memory: Memory, user_id: str = "alice", count: int = 3) -> dict:
    for n in range(count):
        memory.add(f"Note number {n}: the blue folder is in drawer {n}.", user_id=user_id, infer=False)
    return memory.export(user_id=user_id, history=True)


def state(memory: Memory, user_id: str = "alice") -> list[tuple[str, str]]:
    return sorted((m.id, m.content) for m in memory.get_all(user_id=user_id, filters={"status": []}, limit=None))


def test_a_failed_replace_keeps_the_users_memories_and_names_the_bad_row(memory: Memory) -> None:
    data = exported(memory)
    before = state(memory)
    broken = copy.deepcopy(data)
    broken["history"][2]["created_at"] = "not a date"
    with pytest.raises(InvalidInput, match=r"^history 2: unreadable created_at"):
        memory.import_(broken, on_conflict="replace")
    assert state(memory) == before
    assert all(h.new_content for m in before for h in memory.history(m[0]))  # nothing rewritten


def test_a_duplicate_id_far_into_the_file_fails_before_anything_is_written(memory: Memory) -> None:
    data = exported(memory, "bob", 1)
    template = data["memories"][0]
    rows = []
    for n in range(701):
        row = dict(template, id=f"m{n:04d}", content=f"Imported note {n} about the garden.")
        rows.append(row)
    rows[700]["id"] = rows[0]["id"]
    with pytest.raises(InvalidInput, match=r"memory 700: id 'm0000' is also memory 0's"):
        memory.import_({**data, "memories": rows, "history": []}, user_id="carol")
    assert memory.get_all(user_id="carol") == []


def test_a_failure_in_the_middle_of_the_write_rolls_everything_back(memory: Memory, monkeypatch) -> None:
    data = exported(memory, "alice", 3)
    memory.delete_all(user_id="alice")
    store = memory.store
    calls = {"n": 0}
    original = store.write

    def failing_write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:  # the history rows, after the memories were inserted
            raise OSError("disk went away")
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "write", failing_write)
    with pytest.raises(OSError):
        memory.import_(data)
    monkeypatch.undo()
    assert memory.get_all(user_id="alice") == []
    assert memory.import_(data).added == 3  # the store works on afterwards


def test_history_rows_naming_another_user_are_refused(memory: Memory) -> None:
    data = exported(memory, "mallory", 1)
    memory.add("I live in Oslo.", user_id="victim")
    data["history"].append({**data["history"][0], "user_id": "victim", "memory_id": "forged"})
    memory.delete_all(user_id="mallory")
    with pytest.raises(InvalidInput, match=r"history 1: names user 'victim'"):
        memory.import_(data)
    assert memory.get_all(user_id="mallory") == []
    assert all(h.user_id == "victim" for h in memory.store.user_history("victim"))
    assert len(memory.store.user_history("victim")) == 1


@pytest.mark.parametrize("user_id", ["", "   ", " alice", "alice\n", "a\x00b"])
def test_blank_or_padded_user_ids_in_the_file_are_refused(memory: Memory, user_id: str) -> None:
    data = exported(memory, "alice", 2)
    memory.delete_all(user_id="alice")
    data["memories"][1]["user_id"] = user_id
    with pytest.raises(InvalidInput, match=r"^memory 1: user_id"):
        memory.import_(data)
    assert memory.get_all(user_id="alice") == []
    memory.maintain()  # nothing unreachable was left behind to break it


def test_unusable_files_are_refused_with_engram_errors(memory: Memory, tmp_path) -> None:
    latin = tmp_path / "latin1.json"
    latin.write_bytes('[{"content": "caf\xe9"}]'.encode("latin-1"))
    with pytest.raises(InvalidInput, match="not UTF-8"):
        memory.import_(latin, user_id="u1")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidInput, match="nested too deeply"):
        memory.import_(deep, user_id="u1")
    dup = [{"id": "x", "content": "I like tea."}, {"id": "x", "content": "I like rain."}]
    with pytest.raises(InvalidInput, match="memory 1: id 'x'"):
        memory.import_(json.dumps(dup), user_id="u1")
    poison = [{"id": "y", "content": "I like tea.", "created_at": "9999-12-31T23:59:59"}]
    with pytest.raises(InvalidInput, match="memory 0: unreadable created_at"):
        memory.import_(poison, user_id="u1")
    assert memory.get_all(user_id="u1") == []
