"""User control: chat commands in `add` (EN/ZH), view/edit/delete, delete by kind, delete
everything, pause/resume, "forget what I said about X" — and deletion that is real."""

from __future__ import annotations

import pytest
from raw_db import index_terms

from engram import Action, InvalidInput, Kind
from engram.control import parse_command, split_commands
from engram.text import lexical_tokens
from helpers import episodes, facts, is_episode


def raw_bytes(db_path) -> bytes:
    return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))




def assert_gone(db_path, texts, kept=()):
    """No trace of `texts` in the database file, its WAL, or the index (stems, bigrams),
    except tokens that memories still stored (`kept`) legitimately have."""
    raw = raw_bytes(db_path)
    terms = index_terms(db_path)
    allowed = {t for k in kept for t in lexical_tokens(k)} | {"user", "用户"}
    for text in texts:
        assert text.encode() not in raw, text
        for token in set(lexical_tokens(text)) - allowed:
            assert token not in terms, (text, token)


# -- recognition ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, name, target",
    [
        ("Forget what I said about coffee.", "forget", "coffee"),
        ("Can you forget what I told you about the weekly report?", "forget", "the weekly report"),
        ("forget about my job", "forget", "my job"),
        ("forget that I like coffee", "forget", "I like coffee"),
        ("/forget coffee", "forget", "coffee"),
        ("please forget what I just said", "forget_last", None),
        ("forget all my preferences", "delete_kind", "preference"),
        ("delete my tasks", "delete_kind", "task"),
        ("Forget everything.", "delete_all", None),
        ("Delete all my memories", "delete_all", None),
        ("Pause memory", "pause", None),
        ("Stop remembering things.", "pause", None),
        ("resume memory", "resume", None),
        ("Start remembering again", "resume", None),
        ("What do you remember about me?", "view", None),
        ("show my memories", "view", None),
        ("忘记我刚才说的关于咖啡的事", "forget", "咖啡"),
        ("忘掉关于周报的事情", "forget", "周报"),
        ("把关于阿杰的都忘了吧。", "forget", "阿杰"),
        ("把阿杰的事都删掉", "forget", "阿杰"),
        ("/删除记忆 我喜欢蓝色", "forget", "我喜欢蓝色"),
        ("忘记我刚才说的话", "forget_last", None),
        ("删除我所有的偏好", "delete_kind", "preference"),
        ("清空我的任务", "delete_kind", "task"),
        ("忘掉关于我的一切", "delete_all", None),
        ("暂停记忆", "pause", None),
        ("别再记了", "pause", None),
        ("恢复记忆", "resume", None),
        ("你记得我什么？", "view", None),
        ("查看我的记忆", "view", None),
    ],
)
def test_commands_are_recognised_in_english_and_chinese(text, name, target):
    command = parse_command(text)
    assert command is not None and (command.name, command.target) == (name, target)
    assert command.language == ("zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en")


@pytest.mark.parametrize(
    "text",
    ["I forgot my keys.", "Don't forget to call mom.", "Forget it.", "我把钥匙忘了", "把这个忘了吧", "What do you know about physics?",
     "Remember that I like tea.", "I paused the movie.", "我忘记带钥匙了", "别忘了明天开会", "请记住我喜欢咖啡",
     "我暂停了健身"],
)
def test_ordinary_sentences_are_not_commands(text):
    assert parse_command(text) is None


def test_a_message_can_mix_a_command_and_something_to_remember():
    commands, rest = split_commands("Forget what I said about coffee. I live in Berlin.")
    assert [c.name for c in commands] == ["forget"] and rest == "I live in Berlin."


# -- forget what I said about X ----------------------------------------------------------------
@pytest.mark.parametrize(
    "said, keep, command, deleted_needles",
    [
        (["I love coffee.", "I hate coffee.", "I like tea.", "I live in Berlin."],
         ["tea", "Berlin"], "Forget what I said about coffee.", ["coffee", "coffee"]),
        (["我喜欢咖啡", "我讨厌咖啡", "我喜欢喝茶", "我住在北京"],
         ["茶", "北京"], "忘记我刚才说的关于咖啡的事", ["咖啡", "咖啡"]),
    ],
)
def test_forget_deletes_exactly_the_matching_memories_and_reports_them(
    memory, db_path, said, keep, command, deleted_needles
):
    for text in said:
        memory.add(text, user_id="u1", session_id="s1")
    memory.add("I love coffee." if said[0].isascii() else "我喜欢咖啡", user_id="u2")  # another user
    delta = memory.end_session("u1", "s1")  # a session delta now quotes every memory
    assert delta.summary is not None and "coffee" in delta.text or "咖啡" in delta.text
    events = memory.add(command, user_id="u1", session_id="s2")
    # the facts, the episodes (what the user said about it, verbatim) and the delta; the delta
    # comes back without them, so the rest of the session stays in the capsule
    assert [e.action for e in events] == [Action.DELETE] * (2 * len(deleted_needles) + 1) + [Action.ADD]
    assert events[-2].memory.kind is Kind.SUMMARY  # the delta that quoted them went
    rewritten = events[-1].memory
    assert rewritten.kind is Kind.SUMMARY and not any(n in rewritten.content for n in deleted_needles)
    assert all(k in rewritten.content for k in keep)
    assert all(k in memory.capsule(user_id="u1").text for k in keep)
    events = events[:-2]
    assert [e.memory.content for e in episodes(events)] == [t for t in said if deleted_needles[0] in t]
    deleted = [e.memory.content for e in events]
    fact_texts = [e.memory.content for e in facts(events)]
    assert all(n in c for n, c in zip(deleted_needles, fact_texts, strict=True))
    assert events[0].command.name == "forget" and all(c in events[0].command.message for c in deleted)
    assert not any(k in events[0].command.message for k in keep)  # the deltas that quoted it are not listed
    left = [i.content for i in memory.get_all(user_id="u1", filters={"status": []}) if i.kind is not Kind.SUMMARY]
    left = [c for c in left if "User" in c or "用户" in c]  # the facts
    assert len(left) == len(keep) and all(any(k in c for c in left) for k in keep)
    assert len(facts(memory.get_all(user_id="u2"))) == 1  # scoped
    assert len(episodes(memory.get_all(user_id="u2"))) == 1
    memory.delete_all(user_id="u2")
    # the command itself, and the turns that said it, are not kept in working memory
    turns = [t.content for t in memory.session("u1", "s1").turns()]
    assert not any("coffee" in t or "咖啡" in t for t in turns)
    # every history row of the deleted ones is contentless
    for event in events:
        assert all(h.old_content is None and h.new_content is None for h in memory.history(event.memory.id))
    memory.close()
    assert_gone(db_path, deleted, kept=left)


def test_forget_includes_superseded_and_archived_versions(memory, db_path):
    memory.add("My favourite colour is blue.", user_id="u1")
    memory.add("My favourite colour is green.", user_id="u1")
    memory.add("I live in Berlin.", user_id="u1")
    events = memory.forget("my favourite colour", user_id="u1")
    assert sorted(e.memory.content for e in facts(events)) == [
        "User's favourite colour is blue.", "User's favourite colour is green."]
    assert sorted(e.memory.content for e in episodes(events)) == [
        "My favourite colour is blue.", "My favourite colour is green."]
    left = memory.get_all(user_id="u1", filters={"status": []})
    assert [i.content for i in facts(left)] == ["User lives in Berlin."]
    assert [i.content for i in episodes(left)] == ["I live in Berlin."]
    memory.close()
    assert_gone(db_path, ["User's favourite colour is blue.", "User's favourite colour is green.",
                          "My favourite colour is blue.", "My favourite colour is green."])


def test_forget_that_matches_the_same_slot(memory):
    memory.add("I love coffee.", user_id="u1")
    memory.add("I love tea.", user_id="u1")
    events = memory.add("Forget that I like coffee.", user_id="u1")
    [event] = facts(events)
    assert event.action is Action.DELETE and event.memory.content == "User loves coffee."
    assert [(e.action, e.memory.content) for e in episodes(events)] == [(Action.DELETE, "I love coffee.")]


def test_forget_with_no_match_says_so_and_deletes_nothing(memory):
    memory.add("I live in Berlin.", user_id="u1")
    [event] = memory.add("Forget what I said about my cat.", user_id="u1")
    assert event.action is Action.NOOP and event.memory is None
    assert "nothing was deleted" in event.command.message
    [event] = memory.add("忘记我刚才说的关于猫的事", user_id="u1")
    assert "没有找到" in event.command.message
    assert len(facts(memory.get_all(user_id="u1"))) == 1
    assert len(memory.get_all(user_id="u1")) == 2  # and its episode
    with pytest.raises(InvalidInput):
        memory.forget("  ", user_id="u1")


def test_forget_what_i_just_said_withdraws_the_last_statement(memory):
    memory.add("I live in Berlin.", user_id="u1", session_id="s1")
    memory.add("I moved to Paris.", user_id="u1", session_id="s1")
    events = memory.add("Forget what I just said.", user_id="u1", session_id="s1")
    [event] = facts(events)
    assert event.action is Action.DELETE and "Paris" in event.memory.content
    assert [e.memory.content for e in episodes(events)] == ["I moved to Paris."]  # what was said goes too
    [current] = facts(memory.get_all(user_id="u1"))
    assert "Berlin" in current.content and current.valid_to is None  # the earlier version is back
    events = memory.add("忘记我刚才说的话", user_id="u1", session_id="s1")
    [event] = facts(events)
    assert "Berlin" in event.memory.content
    assert [e.memory.content for e in episodes(events)] == ["I live in Berlin."]


# -- view, edit, delete by kind, delete everything ---------------------------------------------------
def test_view_groups_what_is_remembered_by_kind(memory):
    memory.add("I live in Berlin.", user_id="u1")
    memory.add("I prefer short answers.", user_id="u1")
    memory.add("我喜欢咖啡", user_id="u1")
    memory.add("I need to submit the report by Friday.", user_id="u1")
    grouped = memory.view(user_id="u1")
    assert [k for k in grouped] == [Kind.PREFERENCE, Kind.FACT, Kind.TASK, Kind.TURN]
    assert len(grouped[Kind.PREFERENCE]) == 2
    assert len(grouped[Kind.TURN]) == 4 and all(is_episode(i) for i in grouped[Kind.TURN])  # what was said
    events = memory.add("What do you remember about me?", user_id="u1")
    assert {e.action for e in events} == {Action.VIEW} and len(events) == 4
    assert events[0].command.message.startswith("Here is what I remember (4)")
    zh = memory.add("你记得我什么？", user_id="u1")
    assert zh[0].command.message.startswith("我记得这些（4 条）")
    assert len(memory.get_all(user_id="u1")) == 8  # viewing stores nothing (4 facts, 4 episodes)
    assert len(facts(memory.get_all(user_id="u1"))) == 4


def test_edit_one_memory(memory):
    item = memory.add("I live in Berlin.", user_id="u1")[0].memory
    memory.update(item.id, content="User lives in Potsdam.")
    assert memory.get(item.id).content == "User lives in Potsdam."


@pytest.mark.parametrize("command, yes", [("Forget all my preferences.", "Yes."), ("删除我所有的偏好", "确认")])
def test_delete_by_kind(memory, db_path, command, yes):
    memory.add("I love coffee.", user_id="u1")
    memory.add("我讨厌开长会", user_id="u1")
    memory.add("I live in Berlin.", user_id="u1")
    asked = memory.add(command, user_id="u1")  # said in conversation: asked back first
    assert {e.action for e in asked} == {Action.NOOP} and len(memory.get_all(user_id="u1")) == 6
    events = memory.add(yes, user_id="u1")
    assert {e.action for e in events} == {Action.DELETE}
    assert {e.memory.kind for e in facts(events)} == {Kind.PREFERENCE} and len(facts(events)) == 2
    # the episodes the preferences were drawn from go too; "I live in Berlin." stays with its fact
    assert sorted(e.memory.content for e in episodes(events)) == sorted(["I love coffee.", "我讨厌开长会"])
    left = memory.get_all(user_id="u1", filters={"status": []})
    assert sorted(i.content for i in left) == ["I live in Berlin.", "User lives in Berlin."]
    assert memory.delete_by_kind("task", user_id="u1") == []
    with pytest.raises(InvalidInput):
        memory.delete_by_kind("nonsense", user_id="u1")
    memory.close()
    assert_gone(db_path, ["User loves coffee.", "用户讨厌开长会", "I love coffee.", "我讨厌开长会"])


@pytest.mark.parametrize("command, yes", [("Forget everything.", "yes, delete everything"), ("忘掉关于我的一切", "是的")])
def test_delete_everything_of_a_user(memory, db_path, command, yes):
    memory.add("I live in Berlin.", user_id="u1", session_id="s1")
    memory.add("我住在北京", user_id="u1", session_id="s1")
    memory.add("I live in Oslo.", user_id="u2")
    memory.add(command, user_id="u1")
    events = memory.add(yes, user_id="u1")
    assert len(facts(events)) == 2 and {e.action for e in events} == {Action.DELETE}
    assert sorted(e.memory.content for e in episodes(events)) == sorted(["I live in Berlin.", "我住在北京"])
    assert memory.get_all(user_id="u1", filters={"status": []}) == []
    [kept] = facts(memory.get_all(user_id="u2"))
    [kept_said] = episodes(memory.get_all(user_id="u2"))
    memory.close()
    assert_gone(db_path, ["User lives in Berlin.", "用户住在北京", "I live in Berlin.", "我住在北京"],
                kept=[kept.content, kept_said.content])


def test_deleting_a_superseding_memory_scrubs_the_history_that_quotes_it(memory, db_path):
    old = memory.add("My favourite colour is blue.", user_id="u1")[0].memory
    new = memory.add("My favourite colour is Vermilionish.", user_id="u1")[0].memory
    assert any(h.new_content == new.content for h in memory.history(old.id))
    memory.delete(new.id)
    memory.delete(new.metadata["episode"])  # and what the user said
    assert all("Vermilionish" not in (h.new_content or "") + (h.reason or "") for h in memory.history(old.id))
    memory.close()
    assert b"ermilionish" not in raw_bytes(db_path)


# -- pause / resume ------------------------------------------------------------------------------------
def test_pause_stores_nothing_persists_and_retrieval_still_works(memory, reopen, db_path):
    memory.add("I live in Berlin.", user_id="u1")
    [event] = memory.add("Pause memory.", user_id="u1", session_id="s1")
    assert event.action is Action.PAUSE and "paused" in event.command.message.lower()
    assert memory.is_paused("u1") and not memory.is_paused("u2")
    assert memory.add("My PIN is almost 9876 and I love Quokkaburgers.", user_id="u1", session_id="s1") == []
    assert memory.add("I love Quokkaburgers.", user_id="u1", infer=False) == []
    assert memory.session("u1", "s1").turns() == []
    assert facts(memory.search("Berlin", user_id="u1"))[0].memory.content == "User lives in Berlin."
    assert memory.get(memory.search("Berlin", user_id="u1")[0].memory.id).access_count == 0  # no writes
    assert "paused" in memory.context("where do I live", user_id="u1").text
    assert b"Quokkaburger" not in raw_bytes(db_path)
    other = reopen()
    assert other.is_paused("u1")  # the switch is in the database
    [event] = other.add("Resume memory.", user_id="u1")
    assert event.action is Action.RESUME and not memory.is_paused("u1")
    assert other.add("I love Quokkaburgers.", user_id="u1")[0].action is Action.ADD


def test_pause_and_resume_in_chinese_and_through_the_api(memory):
    assert memory.add("暂停记忆", user_id="u1")[0].command.message.startswith("记忆已暂停")
    assert memory.add("我住在北京", user_id="u1") == []
    assert facts(memory.add("恢复记忆。我住在上海", user_id="u1"))[-1].action is Action.ADD
    memory.pause("u1")
    assert memory.add("我喜欢咖啡", user_id="u1") == []
    memory.resume("u1")
    assert [i.content for i in facts(memory.get_all(user_id="u1"))] == ["用户住在上海"]
    assert [i.content for i in episodes(memory.get_all(user_id="u1"))] == ["我住在上海"]  # nothing said while paused
    assert memory.add("我喜欢咖啡", user_id="u1")[0].action is Action.ADD


def test_forget_works_while_paused(memory):
    memory.add("I love coffee.", user_id="u1")
    memory.pause("u1")
    events = memory.add("Forget what I said about coffee.", user_id="u1")
    [event] = facts(events)
    assert event.action is Action.DELETE
    assert [e.memory.content for e in episodes(events)] == ["I love coffee."]
    assert memory.get_all(user_id="u1") == []


# -- the CLI ---------------------------------------------------------------------------------------------
def test_cli_control_commands(memory, db_path):
    from typer.testing import CliRunner

    from engram.cli.app import app

    memory.add("I love coffee.", user_id="u1")
    memory.add("I need to submit the report by Friday.", user_id="u1")
    cli = CliRunner()

    def run(*args):
        result = cli.invoke(app, ["--db", str(db_path), *args])
        assert result.exit_code == 0, result.output
        return result.output

    assert "preference (1)" in run("list", "--user", "u1", "--by-kind")
    assert "paused" in run("pause", "--user", "u1")
    assert memory.is_paused("u1")
    assert "resumed" in run("resume", "--user", "u1")
    out = run("forget", "coffee", "--user", "u1", "--json")
    assert "User loves coffee." in out and '"DELETE"' in out
    assert "nothing remembered" in run("forget", "coffee", "--user", "u1")
    assert "task" in run("delete", "--kind", "task", "--user", "u1", "--yes")
    assert memory.get_all(user_id="u1") == []
    memory.add("I love tea.", user_id="u1")
    assert "Forgotten (2)" in run("add", "forget what I said about tea", "--user", "u1")  # the fact and what was said


def test_forget_also_drops_pending_work_that_would_say_it_again(memory, db_path):
    """A turn waiting for batched LLM extraction (or a queued background add) that says X
    would bring X back after "forget X": it is dropped too."""
    import json

    from engram.store.base import Scope

    memory.add("I love coffee.", user_id="u1")
    payload = {"messages": [{"role": "user", "content": "I really love Kopiluwak coffee."}], "said_at": "x"}
    memory.store.jobs_add("turn", Scope("u1"), None, json.dumps(payload), state="waiting", at=memory_now())
    other = {"messages": [{"role": "user", "content": "I live in Oslo."}], "said_at": "x"}
    memory.store.jobs_add("turn", Scope("u1"), None, json.dumps(other), state="waiting", at=memory_now())
    memory.add("Forget what I said about coffee.", user_id="u1")
    left = [json.loads(j.payload)["messages"][0]["content"] for j in memory.store.jobs_list(["waiting"], user_id="u1")]
    assert left == ["I live in Oslo."]
    memory.close()
    assert b"Kopiluwak" not in raw_bytes(db_path)


def memory_now():
    from engram.models import utcnow

    return utcnow()


@pytest.mark.parametrize("command, ask, no", [
    ("Delete all my memories.", "Reply “yes” to confirm", "No."),
    ("删除我所有的记忆", "回复“确认”继续", "取消"),
])
def test_a_broad_deletion_said_in_conversation_asks_first_and_only_a_yes_acts(memory, command, ask, no):
    memory.add("I live in Berlin.", user_id="u1")
    memory.add("I prefer dark mode.", user_id="u1")
    asked = memory.add(command, user_id="u1")
    assert ask in asked[0].command.message and len(facts(memory.get_all(user_id="u1"))) == 2
    cancelled = memory.add(no, user_id="u1")
    assert cancelled[0].command.name == "cancel" and len(facts(memory.get_all(user_id="u1"))) == 2
    memory.add(command, user_id="u1")
    memory.add("I work as a nurse.", user_id="u1")  # anything else: the request lapses
    assert memory.add("yes", user_id="u1") == [] and len(facts(memory.get_all(user_id="u1"))) == 3
    memory.add(command, user_id="u1")
    done = memory.add("yes", user_id="u1")
    assert {e.action for e in done} == {Action.DELETE} and memory.get_all(user_id="u1") == []


@pytest.mark.parametrize(("said", "target"), [
    ("别记我对猫毛过敏的事了，删掉吧。", "对猫毛过敏"),
    ("不要再记关于我前任的事了", "我前任"),
    ("Don't remember that I'm allergic to cats.", "I'm allergic to cats"),
    ("Please stop remembering what I said about my ex.", "my ex"),
])
def test_asking_not_to_remember_something_forgets_it(said, target):
    command = parse_command(said)
    assert (command.name, command.target) == ("forget", target)
