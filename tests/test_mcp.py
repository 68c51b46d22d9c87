"""`engram mcp`: the tools through the MCP SDK's own client, over stdio (the real command in a
subprocess) and over streamable HTTP (a real server on 127.0.0.1), including isolation between
users and bad input."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from service_server import LiveServer

from engram.aio import AsyncMemory
from engram.service.access import Gate
from engram.service.mcp_http import http_app
from engram.service.mcp_server import build_server

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"remember", "recall", "context", "forget", "list_memories", "delete_memory", "end_session"}


def readme_configs() -> list[dict[str, Any]]:
    """The JSON client configurations of the README's "MCP server" section, in order."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## MCP server\n", 1)[1].split("\n## ", 1)[0]
    return [json.loads(block)["mcpServers"]["engram"] for block in re.findall(r"```json\n(.*?)```", section, re.S)]


def stdio(db: Path, user: str) -> Client:
    """The README's Claude Desktop configuration, for `user`, started by the SDK's client as a
    subprocess (`engram` is this checkout's: ``python -m engram``)."""
    config = readme_configs()[0]
    assert config["command"] == "engram" and config["args"][0] == "mcp"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") or k == "ENGRAM_EMBEDDER"}
    env.update(config["env"], ENGRAM_PATH=str(db), ENGRAM_CONFIG=str(db.parent / "none.toml"), HOME=str(db.parent))
    args = ["-m", "engram", *(user if arg == "alice" else arg for arg in config["args"])]
    return Client(StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env),
                  read_timeout_seconds=60)


@asynccontextmanager
async def http_client(url: str, key: str | None = None, user: str | None = None):
    headers = {**({"Authorization": f"Bearer {key}"} if key else {}), **({"X-Engram-User": user} if user else {})}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            yield client


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


def error(result: Any) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


async def remember_and_recall(client: Client) -> str:
    """The path an agent takes; returns the id of the remembered preference."""
    assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
    events = data(await client.call_tool("remember", {"text": "I prefer green tea over coffee"}))["events"]
    pref = next(e for e in events if e["kind"] == "preference")
    hits = data(await client.call_tool("recall", {"query": "what does the user like to drink?"}))
    assert hits[0]["id"] == pref["id"] and "green tea" in hits[0]["content"]
    context = data(await client.call_tool("context", {"message": "Shall I make you a drink?"}))
    assert "green tea" in context
    listed = data(await client.call_tool("list_memories", {"kind": "preference"}))
    assert [m["id"] for m in listed] == [pref["id"]]
    capsule = await client.read_resource("engram://capsule")
    assert "green tea" in capsule.contents[0].text
    return pref["id"]


async def bad_input_is_a_tool_error(client: Client) -> None:
    assert "at least 1 character" in error(await client.call_tool("remember", {"text": ""}))
    assert error(await client.call_tool("recall", {"query": "tea", "limit": 0}))
    assert error(await client.call_tool("recall", {"query": "tea", "limit": "many"}))
    assert error(await client.call_tool("list_memories", {"kind": "gossip"}))
    assert "no memory" in error(await client.call_tool("delete_memory", {"memory_id": "nope"}))
    assert error(await client.call_tool("remember", {"text": "x" * 200_000}))  # over max_message_chars
    assert error(await client.call_tool("remember", {}))  # missing argument
    # the server is still there and still works
    assert data(await client.call_tool("recall", {"query": "tea"}))


def test_stdio_tools_through_the_sdk_client_and_isolation_between_users(tmp_path):
    db = tmp_path / "engram.db"

    async def as_alice() -> str:
        async with stdio(db, "alice") as client:
            memory_id = await remember_and_recall(client)
            await bad_input_is_a_tool_error(client)
            said = {"text": "We decided to ship the beta on Friday", "session_id": "s1"}
            assert data(await client.call_tool("remember", said))["events"]
            delta = data(await client.call_tool("end_session", {"session_id": "s1"}))
            assert "beta" in delta["summary"] and not delta["already_ended"]
            assert "no session" in error(await client.call_tool("end_session", {"session_id": "never"}))
            return memory_id

    async def as_bob(alice_id: str) -> None:
        async with stdio(db, "bob") as client:
            assert data(await client.call_tool("list_memories", {})) == []
            assert data(await client.call_tool("recall", {"query": "green tea"})) == []
            assert "green tea" not in data(await client.call_tool("context", {"message": "green tea?"}))
            assert "no memory" in error(await client.call_tool("delete_memory", {"memory_id": alice_id}))
            assert data(await client.call_tool("forget", {"about": "green tea"}))["deleted"] == 0

    alice_id = anyio.run(as_alice)
    anyio.run(as_bob, alice_id)
    from engram import Memory

    with Memory(db) as memory:  # bob's calls changed nothing of alice's
        assert memory.get(alice_id).user_id == "alice"

    async def alice_deletes() -> None:
        async with stdio(db, "alice") as client:
            assert data(await client.call_tool("delete_memory", {"memory_id": alice_id}))["action"] == "DELETE"
            hits = data(await client.call_tool("recall", {"query": "green tea", "limit": 10}))
            assert alice_id not in [hit["id"] for hit in hits]

    anyio.run(alice_deletes)


def test_stdio_refuses_to_start_without_a_user(tmp_path):
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") or k == "ENGRAM_EMBEDDER"}
    out = subprocess.run([sys.executable, "-m", "engram", "--db", str(tmp_path / "e.db"), "mcp"], cwd=ROOT,
                         env={**env, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "--user" in out.stderr and out.stdout == ""


@pytest.fixture
def amemory(memory) -> Iterator[AsyncMemory]:
    yield AsyncMemory(memory=memory)


def test_http_with_one_fixed_user(amemory):
    app = http_app(build_server(amemory), Gate(user="alice"))

    async def check(url: str) -> None:
        async with http_client(url) as client:
            await remember_and_recall(client)
            await bad_input_is_a_tool_error(client)
        with pytest.raises(Exception, match="unhandled errors"):  # another user: refused before any tool runs
            async with http_client(url, user="bob") as client:
                await client.list_tools()
        async with httpx2.AsyncClient() as http:
            refused = await http.post(f"{url}/mcp", json={}, headers={"X-Engram-User": "bob"})
            mcp_headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
            huge = await http.post(f"{url}/mcp", content=b'{"x": "' + b"a" * 5_000_000 + b'"}', headers=mcp_headers)
            garbled = await http.post(f"{url}/mcp", content=b"{not json", headers=mcp_headers)
        assert refused.status_code == 403 and refused.json()["error"]["type"] == "forbidden"
        assert huge.status_code == 413 and 400 <= garbled.status_code < 500

    with LiveServer(app) as url:
        anyio.run(check, url)
    assert amemory.sync.count(user_id="alice") > 0 and amemory.sync.count(user_id="bob") == 0


def test_http_the_key_decides_whose_memory_every_tool_reaches(memory, amemory):
    from engram.service.keys import KeyStore

    keys = KeyStore(memory.store)
    alice, bob, admin = (keys.create("alice")[1], keys.create("bob")[1], keys.create(None, admin=True)[1])
    revoked_info, revoked = keys.create("alice")
    keys.revoke(revoked_info.id)
    memory.add("My locker code is in the blue notebook", user_id="bob")
    app = http_app(build_server(amemory), Gate(keys=keys))

    async def check(url: str) -> None:
        async with http_client(url, alice) as client:
            alice_id = await remember_and_recall(client)
        async with http_client(url, bob) as client:  # bob sees, counts and deletes nothing of alice's
            listed = data(await client.call_tool("list_memories", {}))
            assert listed and all("green tea" not in m["content"] for m in listed)
            assert all(h["id"] != alice_id for h in data(await client.call_tool("recall", {"query": "green tea"})))
            assert "green tea" not in data(await client.call_tool("context", {"message": "green tea?"}))
            assert "green tea" not in (await client.read_resource("engram://capsule")).contents[0].text
            assert "no memory" in error(await client.call_tool("delete_memory", {"memory_id": alice_id}))
            assert data(await client.call_tool("forget", {"about": "green tea"}))["deleted"] == 0
        async with http_client(url, admin, user="bob") as client:  # an admin names the user
            assert any("blue notebook" in m["content"] for m in data(await client.call_tool("list_memories", {})))
        async with httpx2.AsyncClient() as http:
            asked = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            for headers, status in (({}, 401), ({"Authorization": "Bearer egk_nope"}, 401),
                                    ({"Authorization": f"Bearer {revoked}"}, 401),
                                    ({"X-API-Key": alice, "X-Engram-User": "bob"}, 403),
                                    ({"Authorization": f"Bearer {admin}"}, 422)):
                answer = await http.post(f"{url}/mcp", json=asked, headers=headers)
                assert answer.status_code == status, (headers, answer.text)
                assert set(answer.json()["error"]) == {"type", "message"}

    with LiveServer(app) as url:
        anyio.run(check, url)
    assert memory.count(user_id="alice", filters={"kind": ["preference"]}) == 1  # bob's calls deleted nothing


def test_the_engram_mcp_http_command_serves_with_the_stores_keys(tmp_path, embedder):
    from service_commands import command_serving, free_port

    from engram import Memory
    from engram.service.keys import KeyStore

    db = tmp_path / "engram.db"
    with Memory(db, embedder=embedder) as memory:
        memory.add("我每天早上跑步五公里", user_id="alice")
        secret = KeyStore(memory.store).create("alice")[1]
    port = free_port()

    async def check(url: str) -> None:
        async with http_client(url, secret) as client:
            hits = data(await client.call_tool("recall", {"query": "跑步"}))
            assert any("跑步" in h["content"] for h in hits)
        async with httpx2.AsyncClient() as http:
            assert (await http.post(f"{url}/mcp", json={})).status_code == 401

    with command_serving(["--db", str(db), "mcp", "--transport", "http", "--port", str(port)], port, tmp_path) as url:
        anyio.run(check, url)
    import inspect

    from engram.cli.mcp_cmd import mcp

    cursor = readme_configs()[1]  # the README's HTTP configuration: the command's default port and path
    default_port = inspect.signature(mcp).parameters["port"].default
    assert cursor["url"] == f"http://127.0.0.1:{default_port}/mcp"
    assert cursor["headers"]["Authorization"].startswith("Bearer egk_")
