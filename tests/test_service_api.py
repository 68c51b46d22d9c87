"""The REST server over real HTTP (uvicorn on 127.0.0.1): tenancy through every endpoint, the one
error shape, bad and oversized input (4xx, never 500), health, docs, CORS, several workers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.service.app import create_app
from engram.service.keys import KeyStore
from service_server import LiveServer


@pytest.fixture(scope="module")
def server(tmp_path_factory, embedder):
    from engram import Memory

    with Memory(tmp_path_factory.mktemp("api") / "engram.db", embedder=embedder) as memory:
        keys = KeyStore(memory.store)
        secrets = {name: keys.create(name)[1] for name in ("alice", "bob")}
        secrets["admin"] = keys.create(None, admin=True)[1]
        with LiveServer(create_app(memory, max_body_bytes=64_000)) as url:
            yield memory, url, secrets


def client(url: str, secret: str | None) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"} if secret else {}, timeout=60)


def seed_bob(memory) -> dict[str, str]:
    """Bob's data: a fact, a dispute, a task, an open session."""
    memory.delete_all(user_id="bob")
    fact = memory.add("I live in Lisbon.", user_id="bob")[0].memory
    old = memory.add("I love coffee.", user_id="bob")[0].memory
    memory.add("I hate coffee.", user_id="bob")
    task = memory.add("I need to submit the report by Friday.", user_id="bob")[0].memory
    memory.session("bob", "s1").add("We talked about Lisbon trams.")
    return {"fact": fact.id, "disputed": old.id, "task": task.id}


def snapshot(memory) -> str:
    items = memory.get_all(user_id="bob", filters={"status": []}, limit=None)
    history = [memory.history(i.id) for i in items]
    return json.dumps([[i.model_dump(mode="json", exclude={"access_count", "last_accessed", "strength"})
                        for i in items], [[h.model_dump(mode="json") for h in hs] for hs in history],
                       memory.is_paused("bob")], sort_keys=True)


# every /v1 route, probed with alice's key aimed at bob: (method, path, json body or None, query)
def probes(ids: dict[str, str]) -> list[tuple[str, str, dict | None, dict | None, int]]:
    bob, q = {"user_id": "bob"}, {"user_id": "bob"}
    return [
        ("POST", "/v1/memories", {"messages": "I am Bob's enemy.", **bob}, None, 403),
        ("POST", "/v1/memories/batch", {"items": [{"messages": "x", **bob}]}, None, 403),
        ("POST", "/v1/memories/flush", {"timeout": 1}, None, 200),  # no user: waits for the queue, reads nothing
        ("POST", "/v1/memories/search", {"query": "Lisbon", **bob}, None, 403),
        ("GET", "/v1/memories", None, q, 403),
        ("POST", "/v1/memories/list", {"filters": {"status": []}, **bob}, None, 403),
        ("POST", "/v1/memories/count", bob, None, 403),
        ("DELETE", "/v1/memories", None, q, 403),
        ("DELETE", "/v1/memories/kind/fact", None, q, 403),
        ("GET", "/v1/memories/{memory_id}", None, None, 404),
        ("PATCH", "/v1/memories/{memory_id}", {"content": "hacked"}, None, 404),
        ("DELETE", "/v1/memories/{memory_id}", None, None, 404),
        ("GET", "/v1/memories/{memory_id}/history", None, None, 404),
        ("GET", "/v1/memories/{memory_id}/provenance", None, None, 404),
        ("POST", "/v1/memories/{disputed}/resolve", {"keep": "neither"}, None, 404),
        ("POST", "/v1/memories/{memory_id}/restore", None, None, 404),
        ("POST", "/v1/memories/{task}/complete", {}, None, 404),
        ("GET", "/v1/capsule", None, q, 403),
        ("GET", "/v1/graph", None, q, 403),
        ("POST", "/v1/context", {"query": "Lisbon", **bob}, None, 403),
        ("POST", "/v1/forget", {"about": "Lisbon", **bob}, None, 403),
        ("GET", "/v1/clarifications", None, q, 403),
        ("POST", "/v1/pause", bob, None, 403),
        ("POST", "/v1/resume", bob, None, 403),
        ("GET", "/v1/paused", None, q, 403),
        ("PUT", "/v1/timezone", {"tz": "Asia/Tokyo", **bob}, None, 403),
        ("GET", "/v1/timezone", None, q, 403),
        ("GET", "/v1/reminders", None, q, 403),
        ("POST", "/v1/export", bob, None, 403),
        ("POST", "/v1/import", {"data": {"format": "engram", "memories": []}, **bob}, None, 403),
        ("POST", "/v1/maintain", bob, None, 403),
        ("POST", "/v1/compress", bob, None, 403),
        ("POST", "/v1/sessions", {"session_id": "s1", **bob}, None, 403),
        ("GET", "/v1/sessions/s1/turns", None, q, 403),
        ("POST", "/v1/sessions/s1/end", bob, None, 403),
    ]


def test_a_user_key_never_reaches_another_user_through_any_endpoint(server):
    memory, url, secrets = server
    ids = seed_bob(memory)
    table = probes(ids)
    paths = create_app(memory, web=False).openapi()["paths"]
    routes = {(m.upper(), p) for p, ops in paths.items() if p.startswith("/v1") for m in ops}
    assert routes == {(m, p.replace("{disputed}", "{memory_id}").replace("{task}", "{memory_id}")
                       .replace("/kind/fact", "/kind/{kind}").replace("/s1/", "/{session_id}/"))
                      for m, p, *_ in table}, "every /v1 route has a probe"
    before = snapshot(memory)
    with client(url, secrets["alice"]) as alice:
        for method, path, body, query, expected in table:
            target = path.format(memory_id=ids["fact"], disputed=ids["disputed"], task=ids["task"])
            reply = alice.request(method, target, json=body, params=query)
            assert reply.status_code == expected, (method, path, reply.text)
            assert "Lisbon" not in reply.text and (expected == 200 or set(reply.json()) == {"error"})
        # with no user named, alice's key acts on alice alone: bob's data is not counted, found or deleted
        assert alice.post("/v1/memories/count", json={}).json() == {"count": 0}
        assert alice.post("/v1/memories/search", json={"query": "Lisbon coffee"}).json() == []
        assert alice.post("/v1/forget", json={"about": "Lisbon"}).json() == []
        assert alice.delete("/v1/memories").json() == {"deleted": 0}
        assert alice.post("/v1/maintain", json={}).json()["users"] <= 1
        assert "Lisbon" not in alice.post("/v1/export", json={}).text
        assert alice.get("/v1/sessions/s1/turns").json() == []  # alice's own s1, not bob's
    assert snapshot(memory) == before
    with client(url, secrets["bob"]) as bob:  # bob's own key reaches all of it
        assert bob.get(f"/v1/memories/{ids['fact']}").json()["content"] == "User lives in Lisbon."
    with client(url, secrets["admin"]) as admin:  # and the admin key reaches every user
        assert admin.post("/v1/memories/count", json={"user_id": "bob"}).json()["count"] > 0
        assert admin.post("/v1/memories/count", json={}).status_code == 422  # but must name one


def test_requests_without_a_live_key_are_refused(server):
    memory, url, _ = server
    _, secret = KeyStore(memory.store).create("carol")
    for headers in ({}, {"Authorization": "Bearer egk_nope"}, {"Authorization": "Basic x"}, {"X-API-Key": "x"}):
        reply = httpx.post(f"{url}/v1/memories/count", json={}, headers=headers)
        assert reply.status_code == 401 and reply.json()["error"]["type"] == "unauthorized"
    assert httpx.post(f"{url}/v1/memories/count", json={}, headers={"X-API-Key": secret}).status_code == 200
    KeyStore(memory.store).revoke(KeyStore(memory.store).verify(secret).id)
    assert httpx.post(f"{url}/v1/memories/count", json={}, headers={"X-API-Key": secret}).status_code == 401


def test_errors_have_one_shape_and_status(server):
    _, url, secrets = server
    with client(url, secrets["alice"]) as alice:
        cases = [
            (alice.post("/v1/memories/search", json={"query": ""}), 422, "invalid_input"),
            (alice.post("/v1/memories/search", json={"query": "x", "limti": 3}), 422, "invalid_input"),
            (alice.post("/v1/memories", content=b"{not json", headers={"content-type": "application/json"}),
             422, "invalid_input"),
            (alice.get("/v1/memories/nope"), 404, "not_found"),
            (alice.get("/v1/nowhere"), 404, "not_found"),
            (alice.put("/v1/memories"), 405, "method_not_allowed"),
            (alice.post("/v1/memories", json={"messages": "x" * 70_000}), 413, "too_large"),
            (alice.post("/v1/memories/search", json={"query": "x", "limit": 10**30}), 422, "invalid_input"),
            (alice.put("/v1/timezone", json={"tz": "Mars/Olympus"}), 422, "invalid_input"),
            (alice.post("/v1/memories", content=b'{"messages": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
                        headers={"content-type": "application/json"}), 400, "bad_request"),  # too deep to parse
            (alice.post("/v1/memories", json={"messages": "a\u0000b"}), 422, "invalid_input"),
        ]
        for reply, status, type_ in cases:
            assert (reply.status_code, reply.json()["error"]["type"]) == (status, type_), reply.text
            assert set(reply.json()["error"]) == {"type", "message"}


def test_a_streamed_body_over_the_limit_is_refused_while_read(server):
    _, url, secrets = server

    def chunks():
        for _ in range(100):
            yield b" " * 1_000

    reply = httpx.post(f"{url}/v1/memories", content=chunks(), headers={
        "Authorization": f"Bearer {secrets['alice']}", "content-type": "application/json"})
    assert reply.status_code == 413


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["messages", "query", "user_id", "agent_id", "limit", "filters", "metadata", "timestamp", "threshold",
          "session_id", "budget", "language", "about", "keep", "content", "infer", "background", "data", "tz"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(["/v1/memories", "/v1/memories/search", "/v1/memories/list", "/v1/context",
                             "/v1/forget", "/v1/memories/count", "/v1/import", "/v1/pause", "/v1/export"]),
       body=st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=5) | json_values)
def test_any_json_body_gets_an_answer_never_a_500(server, path, body):
    _, url, secrets = server
    reply = httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {secrets['alice']}"}, timeout=60)
    assert reply.status_code < 500, reply.text
    if reply.status_code >= 400:
        assert set(reply.json()["error"]) == {"type", "message"}


def test_health_docs_and_no_cors_by_default(server):
    _, url, _ = server
    assert httpx.get(f"{url}/healthz").json()["status"] == "ok"
    assert httpx.get(f"{url}/readyz").status_code == 200
    assert "/v1/memories/search" in httpx.get(f"{url}/openapi.json").json()["paths"]
    docs = httpx.get(f"{url}/docs")
    assert docs.status_code == 200 and "cdn" not in docs.text  # Swagger UI from this server: works offline
    assert "/docs-assets/swagger-ui-bundle.js" in docs.text
    assert httpx.get(f"{url}/docs-assets/swagger-ui-bundle.js").status_code == 200
    preflight = httpx.options(f"{url}/v1/memories", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_engram_serve_runs_several_workers_on_one_store(tmp_path):
    db = tmp_path / "served.db"
    cli = [sys.executable, "-c", "from engram.cli import main; main()", "--db", str(db)]
    secret = subprocess.run([*cli, "keys", "create", "--user", "w"], capture_output=True, text=True,
                            check=True).stdout.strip()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") or k == "ENGRAM_EMBEDDER"}
    proc = subprocess.Popen([*cli, "serve", "--port", str(port), "--workers", "2"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.poll() else ""
            time.sleep(0.3)
        with client(url, secret) as c, ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(lambda i: c.post("/v1/memories", json={"messages": f"note {i}", "infer": False}),
                                    range(40)))
            assert {r.status_code for r in replies} == {200}
            assert c.post("/v1/memories/count", json={}).json() == {"count": 40}
    finally:
        proc.terminate()
        proc.wait(30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(["/v1/memories", "/v1/capsule", "/v1/clarifications", "/v1/reminders", "/v1/paused",
                             "/v1/sessions/{x}/turns", "/v1/memories/{x}", "/v1/memories/{x}/history"]),
       params=st.dictionaries(st.sampled_from(["user_id", "agent_id", "limit", "offset", "budget", "language", "now",
                                               "horizon_hours", "tz"]),
                              st.text(max_size=12) | st.integers().map(str) | st.floats().map(str), max_size=4),
       segment=st.text(min_size=1, max_size=20))
def test_any_query_or_id_gets_an_answer_never_a_500(server, path, params, segment):
    _, url, secrets = server
    from urllib.parse import quote

    reply = httpx.get(url + path.replace("{x}", quote(segment, safe="")), params=params,
                      headers={"Authorization": f"Bearer {secrets['alice']}"}, timeout=60)
    assert reply.status_code < 500, (reply.status_code, reply.text)
    assert reply.status_code == 200 or set(reply.json()["error"]) == {"type", "message"}
