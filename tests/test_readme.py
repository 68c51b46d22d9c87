"""The README's Python examples run as written (issue #14): every ```python block of README.md,
read at run time, in order, in one fresh process, against a temporary home and database, with
the scripted OpenAI-compatible server standing in for the LLM the agent example needs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from llm_scripts import router

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def python_blocks(markdown: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return [m.group(1) for m in _BLOCK.finditer(markdown)]


def test_the_block_finder_finds_python_blocks_only():
    text = "x\n```python\nprint(1)\n```\n```bash\nls\n```\n```python title\na = 2\n```\n"
    assert python_blocks(text) == ["print(1)\n", "a = 2\n"]


def test_the_readme_python_examples_run(tmp_path, fake_llm):
    fake_llm.responder = router(chat="Noted.")
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "README.md has no ```python examples"
    script = "\n\n".join(blocks)
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "ENGRAM_PATH": str(home / ".engram" / "engram.db"),
           "ENGRAM_LLM_BASE_URL": fake_llm.base_url, "ENGRAM_LLM_MODEL": "m", "ENGRAM_LLM_TIMEOUT": "5",
           "PYTHONPATH": str(ROOT), "TZ": "UTC"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
