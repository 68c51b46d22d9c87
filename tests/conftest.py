"""Shared pytest fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

os.environ["TZ"] = "UTC"  # users default to the system's zone (issue #14): the suite pins it

try:  # tests/ is a rootdir without __init__.py: pytest puts it on sys.path
    from fake_llm import FakeLLM
except ImportError:  # pragma: no cover - if tests/ becomes a package
    from tests.fake_llm import FakeLLM


# --- fake OpenAI-compatible server (tests/fake_llm.py) ----------------------
@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A started scripted OpenAI-compatible server on 127.0.0.1, stopped after the test."""
    with FakeLLM() as server:
        yield server


# --- engram engine over a real SQLite file in tmp_path ----------------------
@pytest.fixture(scope="session")
def embedder():
    """wordllama loads once per test run (it is immutable and thread-safe to share)."""
    from engram.providers.embedders import WordLlamaEmbedder

    return WordLlamaEmbedder()


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "engram.db"


@pytest.fixture
def memory(db_path, embedder):
    from engram import Memory

    with Memory(db_path, embedder=embedder) as m:
        yield m


@pytest.fixture
def reopen(db_path, embedder):
    """Open the same database again, as a restarted process would."""
    from engram import Memory

    opened = []

    def _open(**overrides):
        m = Memory(db_path, embedder=embedder, **overrides)
        opened.append(m)
        return m

    yield _open
    for m in opened:
        m.close()


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """No test reads the developer's ~/.engram or ENGRAM_* environment."""
    import os

    for name in list(os.environ):
        if name.startswith("ENGRAM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ENGRAM_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # the suite runs on wordllama (~0.1 ms a text, like the `embedder` fixture), child processes
    # too; the multilingual default is tested where it matters (test_embedder_use, test_crosslang)
    monkeypatch.setenv("ENGRAM_EMBEDDER", "wordllama")


# --- engram with the scripted LLM server -------------------------------------
@pytest.fixture
def llm_overrides() -> dict:
    """Settings a test module adds to every `llm_memory` (override this fixture there)."""
    return {}


@pytest.fixture
def llm_memory(db_path, embedder, fake_llm, llm_overrides):
    """`make(**settings)` opens a Memory that talks to the scripted server; all closed after."""
    from engram import Memory

    made: list = []

    def make(**overrides):
        settings = {"llm_base_url": fake_llm.base_url, "llm_model": "m", "llm_timeout": 2.0,
                    "llm_max_retries": 0, **llm_overrides, **overrides}
        memory = Memory(db_path, embedder=embedder, **settings)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()
