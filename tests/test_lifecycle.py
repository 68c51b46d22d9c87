"""Memory lifecycle: disputes that ask, temporal validity, decay and reinforcement,
maintenance (archive, capacity, merge, restore) on a simulated clock — EN and ZH."""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime, timedelta

import pytest

from engram.records import embed_records, make_record
from engram import Action, InvalidInput, Kind, Layer, MemoryItem, NotFound, Status
from engram.lifecycle import decayed_importance, half_life_days
from engram.models import utcnow
from engram.store.base import Scope, Transition

T0 = datetime(2025, 1, 1, 12, tzinfo=UTC)


def put(memory, user, content, *, kind=Kind.FACT, importance=0.5, when=T0, key=None,
        status=Status.ACTIVE, metadata=None, access_count=0, last_accessed=None, strength=1.0,
        language=None, agent_id=None):
    """Write a memory straight to the store (embedded, no extraction or reconciliation)."""
    item = MemoryItem(
        user_id=user, agent_id=agent_id, content=content, kind=kind, importance=importance,
        key=key, status=status, metadata=metadata or {}, access_count=access_count,
        last_accessed=last_accessed, strength=strength, created_at=when, updated_at=when,
        valid_from=when, language=language or ("zh" if any("\u4e00" <= c <= "\u9fff" for c in content) else "en"),
    )
    record = make_record(item)
    embed_records(memory.embedder, [record])
    memory.store.write(inserts=[record])
    return item


def statuses(memory, user):
    return {i.content: i.status for i in memory.get_all(user_id=user, filters={"status": []}, limit=None)}


# -- 1. conflicts that ask ---------------------------------------------------------------
@pytest.mark.parametrize(
    "first, second, question",
    [
        ("I love coffee.", "I hate coffee.",
         "You said earlier that you love coffee, and now that you dislike coffee — has that changed?"),
        ("我喜欢咖啡", "我讨厌咖啡", "我记得您之前说喜欢咖啡，但现在说讨厌咖啡，是偏好发生了变化吗？"),
    ],
)
def test_a_contradiction_is_kept_disputed_and_search_asks(memory, first, second, question):
    old = memory.add(first, user_id="u1")[0].memory
    event = memory.add(second, user_id="u1")[0]
    assert event.action is Action.DISPUTE
    results = memory.search("咖啡" if "咖啡" in first else "coffee", user_id="u1")
    assert {r.memory.status for r in results} == {Status.DISPUTED} and len(results) == 2
    clar = results[0].clarification
    assert clar is not None and clar.question == question
    assert clar.memory_ids == [old.id, event.memory.id]  # oldest first
    assert [c.question for c in memory.clarifications(user_id="u1")] == [question]
    # context() puts the question in front of the LLM
    assert question in memory.context(first, user_id="u1").text


def test_a_clear_replacement_still_supersedes_and_settles_a_dispute(memory):
    memory.add("I live in Berlin.", user_id="u1")
    assert [e.action for e in memory.add("I moved to Paris.", user_id="u1")] == [Action.SUPERSEDE]
    memory.add("I love coffee.", user_id="u1")
    memory.add("I hate coffee.", user_id="u1")
    [event] = memory.add("I don't like coffee anymore.", user_id="u1")  # a change word: settled
    assert event.action is Action.RESOLVE and event.memory.content == "User dislikes coffee."
    left = statuses(memory, "u1")
    assert left == {"User lives in Berlin.": Status.SUPERSEDED, "User moved to Paris.": Status.ACTIVE,
                    "User loves coffee.": Status.SUPERSEDED, "User dislikes coffee.": Status.ACTIVE}
    assert memory.clarifications(user_id="u1") == []
    # and an opposite statement with a change word supersedes both sides of a dispute
    memory.add("我喜欢咖啡", user_id="u2")
    memory.add("我讨厌咖啡", user_id="u2")
    [event] = memory.add("我现在不讨厌咖啡了，我现在喜欢咖啡", user_id="u2") or [None]
    if event is not None and event.action is Action.SUPERSEDE:
        assert memory.clarifications(user_id="u2") == []


@pytest.mark.parametrize("keep", ["newer", "older", "this", "both", "neither", "id"])
def test_resolve_settles_a_dispute_with_history(memory, keep):
    old = memory.add("I love coffee.", user_id="u1")[0].memory
    new = memory.add("I hate coffee.", user_id="u1")[0].memory
    target = new.id if keep in ("this", "id") else old.id
    events = memory.resolve(target, keep=old.id if keep == "id" else keep)
    after = {i.id: i for i in memory.get_all(user_id="u1", filters={"status": []})}
    expected = {
        "newer": (Status.SUPERSEDED, Status.ACTIVE), "this": (Status.SUPERSEDED, Status.ACTIVE),
        "older": (Status.ACTIVE, Status.SUPERSEDED), "id": (Status.ACTIVE, Status.SUPERSEDED),
        "both": (Status.ACTIVE, Status.ACTIVE), "neither": (Status.SUPERSEDED, Status.SUPERSEDED),
    }[keep]
    assert (after[old.id].status, after[new.id].status) == expected
    assert all("disputes" not in i.metadata for i in after.values())
    assert {e.action for e in events} <= {Action.RESOLVE, Action.SUPERSEDE}
    if keep in ("newer", "this"):
        assert after[old.id].superseded_by == new.id and after[old.id].valid_to == new.valid_from
    if keep in ("older", "id"):  # the newer statement never held
        assert after[new.id].valid_to == new.valid_from
    actions = [h.action for h in memory.history(old.id)]
    assert actions[:2] == ["ADD", "DISPUTE"] and actions[-1] in ("RESOLVE", "SUPERSEDE")
    assert memory.clarifications(user_id="u1") == []
    with pytest.raises(InvalidInput):
        memory.resolve(old.id, keep="both")  # nothing left to resolve


def test_resolve_rejects_bad_input(memory):
    old = memory.add("I love coffee.", user_id="u1")[0].memory
    with pytest.raises(InvalidInput, match="not disputed"):
        memory.resolve(old.id, keep="newer")
    new = memory.add("I hate coffee.", user_id="u1")[0].memory
    with pytest.raises(InvalidInput, match="keep must be"):
        memory.resolve(new.id, keep="whatever")
    with pytest.raises(NotFound):
        memory.resolve("nope", keep="newer")


def test_deleting_one_side_of_a_dispute_frees_the_other(memory):
    old = memory.add("I love coffee.", user_id="u1")[0].memory
    new = memory.add("I hate coffee.", user_id="u1")[0].memory
    memory.delete(new.id)
    assert memory.get(old.id).status is Status.ACTIVE


# -- 2. temporal validity ------------------------------------------------------------------
@pytest.mark.parametrize(
    "before, after, old_needle, new_needle, query",
    [
        ("I live in Berlin.", "I moved to Paris.", "Berlin", "Paris", "do I live in Berlin or Paris"),
        ("我住在北京", "我搬到上海了", "北京", "上海", "我住在北京还是上海"),
    ],
)
def test_superseded_facts_get_valid_to_and_search_as_of(memory, before, after, old_needle, new_needle, query):
    t1, t2 = T0, T0 + timedelta(days=100)
    old = memory.add(before, user_id="u1", timestamp=t1)[0].memory
    new = memory.add(after, user_id="u1", timestamp=t2)[0].memory
    stored_old = memory.get(old.id)
    assert stored_old.valid_from == t1 and stored_old.valid_to == t2 and new.valid_to is None

    def top(**filters):
        return [r.memory.content for r in memory.search(query, user_id="u1", filters=filters or None)]

    assert any(old_needle in c for c in top(as_of=t1 + timedelta(days=50)))
    assert not any(new_needle in c for c in top(as_of=t1 + timedelta(days=50)))
    assert any(new_needle in c for c in top(as_of=t2 + timedelta(days=1)))
    assert not any(old_needle in c for c in top(as_of=t2 + timedelta(days=1)))
    assert top(as_of=t1 - timedelta(days=1)) == []
    assert not any(old_needle in c for c in top())  # default: what holds now
    as_of = memory.get_all(user_id="u1", filters={"as_of": t1 + timedelta(days=1)})
    assert [i.id for i in as_of] == [old.id]


# -- 3. reinforcement and decay --------------------------------------------------------------
def test_half_life_depends_on_kind_and_importance(memory):
    s = memory.settings
    assert math.isinf(half_life_days("identity", 0.5, 1.0, s))  # identity never decays
    assert math.isinf(half_life_days("fact", 0.95, 1.0, s))  # core memories never decay
    small_talk = half_life_days("turn", 0.3, 1.0, s)
    preference = half_life_days("preference", 0.7, 1.0, s)
    assert small_talk < 60 < 365 * 2 < preference
    assert half_life_days("fact", 0.8, 1.0, s) > half_life_days("fact", 0.2, 1.0, s)
    assert half_life_days("fact", 0.5, 3.0, s) > half_life_days("fact", 0.5, 1.0, s)  # reinforced


def test_decay_is_lazy_and_follows_the_half_life(memory):
    chat = put(memory, "u1", "nice weather today", kind=Kind.TURN, importance=0.3)
    pref = put(memory, "u1", "User prefers Markdown reports.", kind=Kind.PREFERENCE, importance=0.7)
    who = put(memory, "u1", "Act as a strict editor.", kind=Kind.IDENTITY, importance=0.85)
    s = memory.settings
    version = memory.store.user_version("u1")
    later = T0 + timedelta(days=365)
    life = half_life_days("turn", 0.3, 1.0, s)
    assert decayed_importance(chat, T0 + timedelta(days=life), s) == pytest.approx(0.15)
    assert decayed_importance(chat, later, s) < 0.01  # small talk fades fast
    assert decayed_importance(pref, later, s) > 0.5  # a preference barely moves in a year
    assert decayed_importance(who, later, s) == 0.85  # identity does not decay
    assert memory.store.user_version("u1") == version  # computing decay wrote nothing


def test_each_retrieval_reinforces(memory):
    used = put(memory, "u1", "User's locker code word is pineapple.", importance=0.4)
    unused = put(memory, "u1", "User's bike is red.", importance=0.4)
    for _ in range(5):
        memory.search("pineapple locker", user_id="u1", limit=1)
    used, unused = memory.get(used.id), memory.get(unused.id)
    assert used.access_count == 5 and unused.access_count == 0
    when = used.last_accessed + timedelta(days=200)
    assert decayed_importance(used, when, memory.settings) > decayed_importance(unused, when, memory.settings)


def test_saying_it_again_reinforces(memory):
    first = memory.add("I live in Berlin.", user_id="u1", timestamp=T0)[0].memory
    memory.add("I live in Berlin.", user_id="u1")
    again = memory.get(first.id)
    assert again.strength == 2.0 and again.last_accessed is not None


# -- 4. maintenance -------------------------------------------------------------------------
def test_maintain_archives_decayed_unused_memories_on_a_simulated_clock(memory):
    chat = put(memory, "u1", "lol the weather is wild", kind=Kind.TURN, importance=0.3)
    chat_zh = put(memory, "u1", "今天天气不错哈哈", kind=Kind.TURN, importance=0.3)
    pref = put(memory, "u1", "User prefers Markdown reports.", kind=Kind.PREFERENCE, importance=0.7)
    who = put(memory, "u1", "用户希望助手扮演严格的编辑", kind=Kind.IDENTITY, importance=0.85)
    pinned = put(memory, "u1", "pinned small talk", kind=Kind.TURN, importance=0.1, metadata={"pinned": True})
    task = put(memory, "u1", "User sends the weekly report every Friday.", kind=Kind.TASK, importance=0.2)
    memory.store.write(updates=[make_record(task.model_copy(update={"recurrence": "weekly:FRI"}))])
    # a month later nothing has decayed enough
    report = memory.maintain("u1", now=T0 + timedelta(days=30))
    assert report.archived == 0 and report.scanned == 6
    # half a year later small talk is gone, the rest stays
    report = memory.maintain("u1", now=T0 + timedelta(days=180))
    assert report.archived == 2
    after = statuses(memory, "u1")
    assert after[chat.content] is after[chat_zh.content] is Status.ARCHIVED
    assert {after[i.content] for i in (pref, who, pinned, task)} == {Status.ACTIVE}
    assert memory.history(chat.id)[-1].action == "ARCHIVE"
    assert memory.get(chat.id).metadata["archived_reason"] == "decayed"
    # archived memories are not retrieved by default, but can be asked for and restored
    found = [r.memory.id for r in memory.search("weather", user_id="u1", limit=10)]
    assert chat.id not in found and chat_zh.id not in found
    archived = memory.search("weather", user_id="u1", filters={"status": "archived"})
    assert chat.id in [r.memory.id for r in archived]
    [event] = memory.restore(chat.id)
    assert event.action is Action.RESTORE and memory.get(chat.id).status is Status.ACTIVE
    # running again changes only what must change (the restored one was just used)
    version = memory.store.user_version("u1")
    assert memory.maintain("u1", now=T0 + timedelta(days=181)).archived == 0
    assert memory.store.user_version("u1") == version


def test_recently_used_memories_are_not_archived(memory):
    old = put(memory, "u1", "User mentioned the printer jams.", importance=0.05)
    memory.store.record_access([old.id], T0 + timedelta(days=170))
    report = memory.maintain("u1", now=T0 + timedelta(days=180))
    assert report.archived == 0  # decayed, but used 10 days ago (archive_unused_days=60)


def test_capacity_evicts_the_least_valuable_lru_by_score(db_path, embedder, reopen):
    memory = reopen(capacity_per_user=3)
    keep_core = put(memory, "u1", "Act as a strict editor.", kind=Kind.IDENTITY, importance=0.85)
    keep_used = put(memory, "u1", "User has a cat named Tom.", importance=0.5, access_count=4,
                    last_accessed=T0 + timedelta(days=29))
    keep_new = put(memory, "u1", "User moved to Oslo.", importance=0.5, when=T0 + timedelta(days=28))
    lose_old = put(memory, "u1", "User had pasta.", importance=0.5)
    lose_low = put(memory, "u1", "User saw a bird.", importance=0.1, when=T0 + timedelta(days=29))
    put(memory, "u2", "Someone else's memory.", importance=0.1)
    report = memory.maintain(now=T0 + timedelta(days=30))
    assert report.evicted == 2 and report.users == 2
    after = statuses(memory, "u1")
    assert [c for c, s in after.items() if s is Status.ARCHIVED] == [lose_old.content, lose_low.content] or \
        {c for c, s in after.items() if s is Status.ARCHIVED} == {lose_old.content, lose_low.content}
    assert all(after[i.content] is Status.ACTIVE for i in (keep_core, keep_used, keep_new))
    assert memory.get(lose_low.id).metadata["archived_reason"] == "capacity"
    assert statuses(memory, "u2") == {"Someone else's memory.": Status.ACTIVE}  # per user


@pytest.mark.parametrize(
    "a, b, kind",
    [
        ("User enjoys hiking in the Alps.", "User enjoys hiking in the Alps every summer.", Kind.PREFERENCE),
        ("用户喜欢在周末去爬山", "用户周末喜欢去爬山", Kind.PREFERENCE),
    ],
)
def test_near_duplicates_merge_into_a_summary_that_links_them_and_restore_undoes_it(memory, a, b, kind):
    one = put(memory, "u1", a, kind=kind, importance=0.6)
    two = put(memory, "u1", b, kind=kind, importance=0.7, access_count=2)
    other = put(memory, "u1", "User works at Acme.", importance=0.6)
    report = memory.maintain("u1", now=T0 + timedelta(days=1))
    assert (report.merged_groups, report.merged_sources) == (1, 2)
    [summary] = memory.get_all(user_id="u1", filters={"kind": "summary"})
    assert set(summary.sources) == {one.id, two.id}
    assert a.rstrip("。.") in summary.content and b.rstrip("。.") in summary.content
    assert summary.importance == 0.7 and summary.access_count == 2
    assert summary.metadata["merged_kind"] == kind.value
    for source in (one, two):
        stored = memory.get(source.id)
        assert stored.status is Status.ARCHIVED and stored.metadata["merged_into"] == summary.id
        assert memory.history(source.id)[-1].action == "MERGE"
    assert memory.get(other.id).status is Status.ACTIVE
    # the summary is what search finds now
    query = "hiking" if a.isascii() else "爬山"
    assert [r.memory.id for r in memory.search(query, user_id="u1", limit=1)] == [summary.id]
    # restoring a source (or the summary) undoes the merge
    events = memory.restore(one.id)
    assert {e.action for e in events} == {Action.RESTORE, Action.DELETE}
    assert memory.get(one.id).status is memory.get(two.id).status is Status.ACTIVE
    with pytest.raises(NotFound):
        memory.get(summary.id)
    assert memory.maintain("u1", now=T0 + timedelta(days=2)).merged_groups == 0  # not merged again


def test_merge_never_joins_different_slots_scopes_or_opposite_feelings(memory):
    put(memory, "u1", "User likes coffee.", kind=Kind.PREFERENCE, key="preference:coffee")
    put(memory, "u1", "User likes coffee a lot.", kind=Kind.PREFERENCE, key="preference:coffee_lot")
    put(memory, "u1", "User enjoys hiking in the Alps.", agent_id="a1")
    put(memory, "u1", "User enjoys hiking in the Alps every summer.", agent_id="a2")
    put(memory, "u1", "User loves jazz.", metadata={"polarity": 1})
    put(memory, "u1", "User loves jazz, really.", metadata={"polarity": -1})
    assert memory.maintain("u1", now=T0).merged_groups == 0


def test_deleting_a_merged_source_deletes_the_summary_that_quotes_it(memory, db_path):
    one = put(memory, "u1", "User enjoys hiking in the Alps.", importance=0.6)
    two = put(memory, "u1", "User enjoys hiking in the Alps every summer.", importance=0.6)
    memory.maintain("u1", now=T0)
    [summary] = memory.get_all(user_id="u1", filters={"kind": "summary"})
    memory.delete(two.id)
    with pytest.raises(NotFound):
        memory.get(summary.id)
    assert memory.get(one.id).status is Status.ACTIVE  # the other source is back
    raw = b"".join(p.read_bytes() for p in db_path.parent.glob("engram.db*"))
    assert b"every summer" not in raw


def test_deleting_a_summary_by_id_deletes_its_sources(memory):
    one = put(memory, "u1", "用户喜欢在周末去爬山", importance=0.6)
    two = put(memory, "u1", "用户周末喜欢去爬山", importance=0.6)
    memory.maintain("u1", now=T0)
    [summary] = memory.get_all(user_id="u1", filters={"kind": "summary"})
    memory.delete(summary.id)
    assert memory.get_all(user_id="u1", filters={"status": []}) == []
    assert [h.action for h in memory.history(one.id)][-1] == "DELETE"
    assert all(h.new_content is None and h.old_content is None for h in memory.history(two.id))


def test_guarded_transitions_leave_concurrent_changes_alone(memory):
    item = put(memory, "u1", "User had pasta.", importance=0.01)
    seen = memory.store.lifecycle_rows(Scope("u1"), ["active"])[0]
    memory.store.record_access([item.id], utcnow())  # used after maintenance read it
    t = Transition(memory_id=item.id, status="archived", action="ARCHIVE", reason="x", at=utcnow(),
                   guard=True, seen_updated_at=seen.updated_at, seen_last_accessed=seen.last_accessed)
    assert memory.store.transition([t]) == []
    assert memory.get(item.id).status is Status.ACTIVE


def test_maintain_is_safe_while_the_engine_is_in_use(memory):
    for i in range(300):
        put(memory, "u1", f"small talk number {i} about the weather", kind=Kind.TURN, importance=0.2)
    errors: list[BaseException] = []
    stop = threading.Event()

    def use():
        try:
            n = 0
            while not stop.is_set():
                memory.add(f"I live in city number {n}.", user_id="u1")
                memory.search("weather", user_id="u1")
                n += 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    worker = threading.Thread(target=use)
    worker.start()
    try:
        report = memory.maintain(now=utcnow() + timedelta(days=400))
    finally:
        stop.set()
        worker.join()
    assert not errors
    assert report.archived + report.skipped >= 290
    assert memory.get_all(user_id="u1", filters={"kind": "fact"})  # the concurrent writes are there


def test_maintain_reports_progress_and_the_cli_shows_it(memory, db_path):
    from typer.testing import CliRunner

    from engram.cli.app import app

    put(memory, "u1", "old chatter", kind=Kind.TURN, importance=0.2)
    calls = []
    memory.maintain(progress=lambda done, total, what: calls.append((done, total)))
    assert calls[0] == (0, 1) and calls[-1] == (1, 1)
    result = CliRunner().invoke(app, ["--db", str(db_path), "maintain", "--user", "u1"])
    assert result.exit_code == 0, result.output
    assert "memories scanned" in result.output


def test_layer_and_summary_kinds_decay_like_their_sources(memory):
    s = memory.settings
    summary = MemoryItem(user_id="u1", content="x", kind=Kind.SUMMARY, importance=0.3, layer=Layer.LONG_TERM,
                         metadata={"merge": True, "merged_kind": "turn"}, created_at=T0)
    turn = MemoryItem(user_id="u1", content="x", kind=Kind.TURN, importance=0.3, created_at=T0)
    later = T0 + timedelta(days=90)
    assert decayed_importance(summary, later, s) == pytest.approx(decayed_importance(turn, later, s))


def test_forget_reaches_into_merges_and_restores_what_it_does_not_match(memory, db_path):
    put(memory, "u1", "User enjoys hiking in the Alps.", importance=0.6)
    put(memory, "u1", "User enjoys hiking in the Alps every summer.", importance=0.6)
    assert memory.maintain("u1", now=T0).merged_groups == 1
    events = memory.forget("summer", user_id="u1")
    assert sorted(e.memory.kind.value for e in events) == ["fact", "summary"]
    assert "User enjoys hiking in the Alps every summer." in [e.memory.content for e in events]
    [left] = memory.get_all(user_id="u1", filters={"status": []})
    assert left.content == "User enjoys hiking in the Alps." and left.status is Status.ACTIVE
    memory.close()
    raw = b"".join(p.read_bytes() for p in db_path.parent.glob("engram.db*"))
    assert b"summer" not in raw
