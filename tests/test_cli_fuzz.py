"""Fuzzing the CLI (issue 13, item 9): hostile arguments end in one line and exit 0 or 1,
never a traceback."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engram.cli import app

words = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12),
    st.sampled_from(["u1", " u1", "", "-1", "0", "10000000000000000000000000", "nan", "zh", "xx", "I love tea.",
                     "--json", "--user", "--limit", "--budget", "--kind", "task", "--yes", "/tmp", "Mars/Base"]),
)
commands = st.sampled_from([
    "add", "search", "list", "get", "edit", "delete", "history", "capsule", "context", "maintain", "pause", "resume",
    "timezone", "forget", "resolve", "restore", "reminders", "done", "export", "import",
])


def test_cli_arguments_never_end_in_a_traceback(tmp_path: Path, embedder, monkeypatch) -> None:
    db = tmp_path / "cli.db"
    monkeypatch.setenv("ENGRAM_PATH", str(db))
    monkeypatch.chdir(tmp_path)  # export/import paths land here
    runner = CliRunner()
    assert runner.invoke(app, ["--db", str(db), "add", "I love coffee.", "--user", "u1"]).exit_code == 0
    seen = {"calls": 0}

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(command=commands, args=st.lists(words, max_size=5))
    def run(command: str, args: list[str]) -> None:
        seen["calls"] += 1
        result = runner.invoke(app, ["--db", str(db), command, *args])
        assert result.exit_code in (0, 1, 2), (command, args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            command, args, repr(result.exception))
        assert "Traceback" not in result.output

    run()
    assert seen["calls"] >= 60
