"""API keys (engram.service.keys): hashed in the store, verified in constant time, revocable,
and managed from the CLI (`engram keys create / list / revoke`)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from engram.cli import app
from engram.errors import InvalidInput
from engram.service.auth import Caller, scoped_user
from engram.service.errors import ApiError
from engram.service.keys import KeyStore


@pytest.fixture
def keys(memory):
    return KeyStore(memory.store)


def test_a_key_verifies_until_revoked_and_only_its_hash_is_stored(keys, db_path):
    info, secret = keys.create("alice", name="laptop")
    assert keys.verify(secret) == info and info.user_id == "alice" and not info.admin
    raw = sqlite3.connect(db_path).execute("SELECT * FROM api_keys").fetchall()
    token = secret.rsplit("_", 1)[1]
    assert len(raw) == 1 and not any(token in str(cell) for cell in raw[0])  # the secret is never stored
    assert keys.revoke(info.id) is True and keys.revoke(info.id) is False
    assert keys.verify(secret) is None
    assert [k.revoked for k in keys.list()] == [True]


def test_wrong_forged_and_malformed_secrets_are_refused(keys):
    info, secret = keys.create("alice")
    prefix, token = secret.rsplit("_", 1)
    flipped = token[:-1] + ("0" if token[-1] != "0" else "1")
    for bad in (f"{prefix}_{flipped}", secret + "0", secret.upper(), "", "egk_", "Bearer " + secret, None, 42):
        assert keys.verify(bad) is None
    _, other = keys.create("bob")
    assert keys.verify(f"{prefix}_{other.rsplit('_', 1)[1]}") is None  # bob's token under alice's id


def test_admin_keys_and_the_tenancy_rule(keys):
    with pytest.raises(InvalidInput):
        keys.create(None)  # a user key needs its user
    with pytest.raises(InvalidInput):
        keys.create(" alice")
    admin, secret = keys.create(None, admin=True)
    assert keys.verify(secret).admin and admin.user_id is None
    boss = Caller(user_id=None, admin=True)
    assert scoped_user(boss, "bob") == "bob"
    with pytest.raises(ApiError) as missing:
        scoped_user(boss, None)
    assert missing.value.status == 422
    alice = Caller(user_id="alice")
    assert scoped_user(alice, None) == "alice" == scoped_user(alice, "alice")
    with pytest.raises(ApiError) as denied:
        scoped_user(alice, "bob")
    assert denied.value.status == 403


def test_a_revocation_is_seen_by_another_process_on_the_same_file(keys, reopen):
    info, secret = keys.create("alice")
    other = KeyStore(reopen().store)  # a second worker process opens the same file
    assert other.verify(secret) == info
    keys.revoke(info.id)
    assert other.verify(secret) is None


def test_keys_cli_creates_lists_and_revokes(tmp_path):
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    made = runner.invoke(app, ["--db", db, "keys", "create", "--user", "alice", "--name", "ci", "--json"])
    assert made.exit_code == 0, made.output
    created = json.loads(made.output)
    assert created["secret"].startswith("egk_") and created["user_id"] == "alice"
    listed = runner.invoke(app, ["--db", db, "keys", "list", "--json"])
    assert [k["id"] for k in json.loads(listed.output)] == [created["id"]]
    assert created["secret"] not in listed.output
    assert runner.invoke(app, ["--db", db, "keys", "revoke", created["id"]]).exit_code == 0
    again = runner.invoke(app, ["--db", db, "keys", "revoke", created["id"]])
    assert again.exit_code == 1 and "no live key" in again.output
    admin = runner.invoke(app, ["--db", db, "keys", "create", "--admin"])
    assert admin.exit_code == 0 and admin.output.strip().startswith("egk_")
    assert runner.invoke(app, ["--db", db, "keys", "create"]).exit_code == 1  # neither a user nor --admin
