"""Configuration: arguments > ENGRAM_* > TOML file > defaults; `engram config` shows the result."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from engram.cli import app
from engram.config import Settings


def test_defaults_are_offline_and_embedded(tmp_path, monkeypatch):
    monkeypatch.delenv("ENGRAM_EMBEDDER")  # the suite runs on wordllama (conftest)
    s = Settings()
    assert s.path == tmp_path / "home" / ".engram" / "engram.db"
    assert s.embedder == "use" and not s.llm_enabled


def test_toml_env_and_arguments_in_order(tmp_path, monkeypatch):
    config = tmp_path / "engram.toml"
    config.write_text('search_limit = 7\n[llm]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "toml-model"\n')
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    s = Settings()
    assert s.search_limit == 7 and s.llm_model == "toml-model" and s.llm_enabled
    monkeypatch.setenv("ENGRAM_LLM_MODEL", "env-model")
    assert Settings().llm_model == "env-model"
    assert Settings(llm_model="arg-model").llm_model == "arg-model"


def test_unknown_toml_setting_is_a_clear_error(tmp_path, monkeypatch):
    config = tmp_path / "engram.toml"
    config.write_text("serch_limit = 7\n")
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    with pytest.raises(ValueError, match="serch_limit"):
        Settings()


def test_engram_config_prints_effective_values_and_masks_keys(monkeypatch, tmp_path):
    monkeypatch.setenv("ENGRAM_PATH", str(tmp_path / "x.db"))
    monkeypatch.setenv("ENGRAM_LLM_API_KEY", "sk-supersecretvalue")
    result = CliRunner().invoke(app, ["config", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["path"] == str(tmp_path / "x.db")
    assert data["llm_api_key"] == "**********"
    assert "supersecret" not in result.output
