"""`import engram` stays cheap (issue #14): nothing heavy loads until it is used. Not timed:
the modules a fresh interpreter has loaded are checked (benchmarks/startup.py measures time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "wordllama", "rjieba", "jieba", "bpe_openai", "openai", "httpx", "rich", "pydantic_settings",
         "engram.memory", "engram.providers.embedders", "engram.store.sqlite")


def loaded_after(code: str) -> set[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_engram_loads_nothing_heavy():
    loaded = loaded_after("import engram")
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY) == []


def test_the_public_names_still_resolve():
    loaded = loaded_after("from engram import Memory, Kind, SearchResult, __version__; assert Memory.search")
    assert "engram.memory" in loaded


def test_every_public_name_is_listed_and_resolves():
    import engram

    assert sorted(engram.__all__) == sorted(engram._EXPORTS)
    assert all(getattr(engram, name) is not None for name in engram.__all__)


def test_the_package_ships_its_type_marker_and_store_is_a_regular_package():
    assert (ROOT / "engram" / "py.typed").is_file()
    assert (ROOT / "engram" / "store" / "__init__.py").is_file()


def test_counting_tokens_does_not_load_every_bpe_table():
    loaded = loaded_after("from engram.tokens import count_tokens\nassert count_tokens('我喜欢喝绿茶 and tea') > 3")
    assert "bpe_openai" not in loaded  # the package's __init__ parses every table in Python (~0.8 s)


def test_the_fast_counter_counts_like_the_package():
    import bpe_openai

    from engram.tokens import TokenCounter

    for name in ("cl100k_base", "o200k_base"):
        fast, package = TokenCounter(name), bpe_openai.get_encoding(name)
        for text in ("hello world", "我喜欢喝绿茶，也喜欢咖啡。", "emoji 😀👍🏽", "<|endoftext|> x", "a" * 3000):
            assert fast.count(text) == len(package.encode_ordinary(text))
        cut = fast.truncate("我喜欢喝绿茶，也喜欢咖啡。" * 20, 10)
        assert cut.endswith("…") and fast.count(cut) <= 10
