"""`engram proxy`: the official `openai` client pointed at a real proxy on 127.0.0.1, in front of
the scripted OpenAI-compatible server (tests/fake_llm.py). What reached the upstream is asserted
(the memory in the system message, whose key), and the recorded turn is searched afterwards."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator

import httpx
import openai
import pytest
from service_server import LiveServer

from engram.aio import AsyncMemory
from engram.service.access import Gate
from engram.service.proxy import Proxy, StreamedText, create_proxy_app, with_memory


def recorded(memory, text: str, user: str = "alice", timeout: float = 20.0) -> bool:
    """Whether `text` is among the user's memories once the background work is done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        memory.flush(timeout=5)
        if any(text in hit.memory.content for hit in memory.search(text, user_id=user, limit=20)):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def proxy_url(memory, fake_llm) -> Iterator[str]:
    """A proxy for one fixed user, alice (no keys)."""
    proxy = Proxy(AsyncMemory(memory=memory), fake_llm.base_url, Gate(user="alice"))
    with LiveServer(create_proxy_app(proxy)) as url:
        yield f"{url}/v1"


def client(base_url: str, api_key: str = "unused", **headers: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=30, default_headers=headers)


def test_non_streaming_memory_goes_into_the_existing_system_message_and_the_turn_is_recorded(
    memory, fake_llm, proxy_url
):
    memory.add("I prefer green tea over coffee", user_id="alice")
    fake_llm.reply("Green tea, as you like it.")
    reply = client(proxy_url).chat.completions.create(
        model="fake-model",
        messages=[{"role": "system", "content": "You are a barista."},
                  {"role": "user", "content": "What should I drink? My flight to Lisbon leaves on Friday."}],
    )
    assert reply.choices[0].message.content == "Green tea, as you like it."
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "green tea" in sent[0]["content"].lower() and sent[0]["content"].endswith("\n\nYou are a barista.")
    assert sent[1]["content"] == "What should I drink? My flight to Lisbon leaves on Friday."
    assert recorded(memory, "flight to Lisbon")


def test_streaming_is_passed_through_unchanged_a_system_message_is_inserted_and_the_turn_recorded(
    memory, fake_llm, proxy_url
):
    memory.add("我喜欢喝绿茶", user_id="alice")
    answer = "好的，给你泡一杯绿茶。The kettle is on."
    fake_llm.reply(answer)
    said = [{"role": "user", "content": "我周五要去杭州出差，喝点什么？"}]
    stream = client(proxy_url).chat.completions.create(model="fake-model", stream=True, messages=said)
    chunks = list(stream)
    assert len(chunks) > 3 and "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == answer
    sent = fake_llm.requests[-1]["messages"]
    assert sent[0]["role"] == "system" and "绿茶" in sent[0]["content"]
    assert sent[1] == {"role": "user", "content": "我周五要去杭州出差，喝点什么？"}
    assert recorded(memory, "杭州出差")

    # byte for byte what the upstream sent (but for its clock)
    body = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    fake_llm.reply(answer, times=2)
    with httpx.Client(timeout=30) as http:
        direct = http.post(f"{fake_llm.base_url}/chat/completions", json=body).content
        proxied = http.post(f"{proxy_url}/chat/completions", json=body)
    assert proxied.headers["content-type"].startswith("text/event-stream")
    clock = re.compile(rb'"created": \d+')
    assert clock.sub(b"", proxied.content) == clock.sub(b"", direct) and direct.endswith(b"data: [DONE]\n\n")


def test_models_are_passed_through(proxy_url, fake_llm):
    assert [m.id for m in client(proxy_url).models.list()] == ["fake-model"]


def test_upstream_errors_come_back_with_their_status_and_body(fake_llm, proxy_url):
    fake_llm.fail(429)
    with pytest.raises(openai.RateLimitError) as caught:
        client(proxy_url).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 429 and "scripted failure 429" in str(caught.value)
    fake_llm.fail(400, {"error": {"message": "model 'x' not found", "type": "invalid_request_error"}})
    with pytest.raises(openai.BadRequestError, match="model 'x' not found"):
        client(proxy_url).chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}],
                                                  stream=True)


def test_an_unreachable_upstream_is_a_502(memory):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with LiveServer(create_proxy_app(Proxy(AsyncMemory(memory=memory), dead, Gate(user="alice")))) as url:
        with pytest.raises(openai.APIStatusError) as caught:
            client(f"{url}/v1").chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502


def test_bad_requests_are_4xx_and_never_reach_the_upstream(fake_llm, proxy_url):
    with httpx.Client(timeout=30) as http:
        url = f"{proxy_url}/chat/completions"
        assert http.post(url, content=b"{not json").status_code == 400
        assert http.post(url, json=["a list"]).status_code == 400
        assert http.post(url, json={"model": "m", "messages": "hello"}).status_code == 400
        big = http.post(url, json={"model": "m", "messages": [{"role": "user", "content": "x" * 9_000_000}]})
        assert big.status_code == 413 and big.json()["error"]["type"] == "too_large"
    assert fake_llm.requests == []


def test_a_fixed_user_proxy_refuses_to_act_as_another_user(memory, fake_llm, proxy_url):
    memory.add("I prefer green tea over coffee", user_id="alice")
    with pytest.raises(openai.PermissionDeniedError):
        client(proxy_url).chat.completions.create(model="m", user="bob", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.PermissionDeniedError):
        client(proxy_url, **{"X-Engram-User": "bob"}).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "tea?"}])
    assert fake_llm.requests == []


def test_a_client_that_hangs_up_stops_the_upstream_and_nothing_is_recorded(memory, fake_llm, proxy_url):
    fake_llm.loop("la ")
    with httpx.Client(timeout=30) as http:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "sing about Zanzibar"}]}
        with http.stream("POST", f"{proxy_url}/chat/completions", json=body) as response:
            for _ in zip(range(3), response.iter_bytes(), strict=False):
                pass
    deadline = time.monotonic() + 10
    while fake_llm.aborted == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_llm.aborted == 1
    memory.flush(timeout=5)
    assert not any("Zanzibar" in i.content for i in memory.get_all(user_id="alice"))


def test_the_memory_block_goes_first_whatever_the_system_message_looks_like():
    parts = [{"type": "text", "text": "Be brief."}]
    assert with_memory([{"role": "developer", "content": parts}], "MEM") == [
        {"role": "developer", "content": [{"type": "text", "text": "MEM"}, *parts]}]
    assert with_memory([{"role": "system", "content": ""}], "MEM") == [{"role": "system", "content": "MEM"}]
    assert with_memory([], "MEM") == [{"role": "system", "content": "MEM"}]


def test_streamed_text_survives_events_split_anywhere():
    events = (b'data: {"choices":[{"index":0,"delta":{"content":"\xe4\xbd\xa0\xe5\xa5\xbd"}}]}\n\n'
              b': keep-alive\n\ndata: {"choices":[{"index":0,"delta":{"content":" there"}}]}\n\ndata: [DONE]\n\n')
    for cut in range(1, len(events)):
        text = StreamedText()
        text.feed(events[:cut])
        text.feed(events[cut:])
        assert text.text == "你好 there"
        assert text.complete  # [DONE] says the reply is whole, whether or not the client hangs up at once


def test_a_streamed_reply_is_whole_at_done_or_a_finish_reason_not_before():
    cut_off = StreamedText()
    cut_off.feed(b'data: {"choices":[{"index":0,"delta":{"content":"Half a"}}]}\n\n')
    assert not cut_off.complete
    finished = StreamedText()
    finished.feed(b'data: {"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}\n\n')
    assert not finished.complete  # another choice finishing says nothing about choice 0
    finished.feed(b'data: {"choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":"stop"}]}\n\n')
    assert finished.complete and finished.text == "Done."


@pytest.fixture
def keyed(memory, fake_llm):
    """A proxy behind API keys: (base URL, {name: secret}, make a proxy with other options)."""
    from engram.service.keys import KeyStore

    keys = KeyStore(memory.store)
    secrets = {"alice": keys.create("alice")[1], "bob": keys.create("bob")[1],
               "admin": keys.create(None, admin=True)[1]}
    memory.add("I prefer green tea over coffee", user_id="alice")
    memory.add("I drink my coffee black", user_id="bob")
    proxy = Proxy(AsyncMemory(memory=memory), fake_llm.base_url, Gate(keys=keys))
    with LiveServer(create_proxy_app(proxy)) as url:
        yield f"{url}/v1", secrets, keys


def ask(base_url: str, key: str, text: str = "What do I like to drink?", **kwargs) -> str:
    reply = client(base_url, key, **kwargs.pop("headers", {})).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": text}], **kwargs)
    return reply.choices[0].message.content


def test_a_user_key_reaches_its_own_memory_only(memory, fake_llm, keyed):
    url, secrets, _ = keyed
    ask(url, secrets["alice"])
    block = fake_llm.requests[-1]["messages"][0]["content"]
    assert "green tea" in block and "black" not in block
    ask(url, secrets["bob"], "Remind me: my dentist is Dr Okafor")
    block = fake_llm.requests[-1]["messages"][0]["content"]
    assert "black" in block and "green tea" not in block
    assert recorded(memory, "Dr Okafor", user="bob") and not recorded(memory, "Dr Okafor", user="alice", timeout=0.5)
    sent = len(fake_llm.requests)
    with pytest.raises(openai.PermissionDeniedError):
        ask(url, secrets["alice"], user="bob")
    with pytest.raises(openai.PermissionDeniedError):
        ask(url, secrets["alice"], headers={"X-Engram-User": "bob"})
    altered = secrets["alice"][:-1] + ("1" if secrets["alice"].endswith("0") else "0")
    for bad in ("egk_nope", "sk-openai-key", altered):
        with pytest.raises(openai.AuthenticationError):
            ask(url, bad)
    with pytest.raises(openai.AuthenticationError):
        client(url, "wrong").models.list()
    with httpx.Client(timeout=30) as http:  # no key at all
        answer = http.post(f"{url}/chat/completions", json={"model": "m", "messages": []})
    assert answer.status_code == 401 and answer.json()["error"]["type"] == "unauthorized"
    assert len(fake_llm.requests) == sent  # nothing refused reached the model


def test_an_admin_key_acts_as_the_user_it_names(fake_llm, keyed):
    url, secrets, _ = keyed
    ask(url, secrets["admin"], user="bob")
    assert "black" in fake_llm.requests[-1]["messages"][0]["content"]
    ask(url, secrets["admin"], headers={"X-Engram-User": "alice"})
    assert "green tea" in fake_llm.requests[-1]["messages"][0]["content"]
    with pytest.raises(openai.UnprocessableEntityError):  # an admin must say which user
        ask(url, secrets["admin"])
    assert [m.id for m in client(url, secrets["admin"]).models.list()] == ["fake-model"]


def test_the_engram_key_never_goes_upstream(memory, fake_llm, keyed):
    url, secrets, keys = keyed
    ask(url, secrets["alice"])  # the key in Authorization: nothing of it goes on
    assert "authorization" not in fake_llm.headers[-1]
    with httpx.Client(timeout=30) as http:  # the key in X-API-Key: the client's Authorization is the upstream's
        http.post(f"{url}/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                  headers={"X-API-Key": secrets["alice"], "Authorization": "Bearer sk-client"}).raise_for_status()
    assert fake_llm.headers[-1]["authorization"] == "Bearer sk-client"
    proxy = Proxy(AsyncMemory(memory=memory), fake_llm.base_url, Gate(keys=keys), upstream_key="sk-upstream")
    with LiveServer(create_proxy_app(proxy)) as other:
        ask(f"{other}/v1", secrets["alice"])
    assert fake_llm.headers[-1]["authorization"] == "Bearer sk-upstream"
    assert not any(secrets["alice"] in value for sent in fake_llm.headers for value in sent.values())


def test_the_engram_proxy_command_serves_with_the_stores_keys(tmp_path, fake_llm, embedder):
    from service_commands import command_serving, free_port

    from engram import Memory
    from engram.service.keys import KeyStore

    db = tmp_path / "engram.db"
    with Memory(db, embedder=embedder) as memory:
        memory.add("I prefer green tea over coffee", user_id="alice")
        secret = KeyStore(memory.store).create("alice")[1]
    port = free_port()
    args = ["--db", str(db), "proxy", "--upstream", fake_llm.base_url, "--port", str(port)]
    with command_serving(args, port, tmp_path) as url:
        fake_llm.reply("Tea it is.")
        assert ask(f"{url}/v1", secret, "A flight to Osaka on Monday, what should I drink?") == "Tea it is."
        assert "green tea" in fake_llm.requests[-1]["messages"][0]["content"]
        with pytest.raises(openai.AuthenticationError):
            ask(f"{url}/v1", "egk_wrong")
    with Memory(db, embedder=embedder) as memory:
        assert recorded(memory, "flight to Osaka")  # queued durably by the proxy, done by this process


@pytest.mark.parametrize("args, says", [
    (["proxy", "--upstream", "ftp://example.org"], "expected an http"),
    (["proxy", "--upstream", "http://127.0.0.1:9/v1", "--user", "a", "--host", "0.0.0.0"], "loopback"),
    (["mcp", "--transport", "http", "--user", "a", "--host", "0.0.0.0"], "loopback"),
])
def test_unsafe_or_wrong_options_are_refused(tmp_path, args, says):
    from typer.testing import CliRunner

    from engram.cli import app

    result = CliRunner().invoke(app, ["--db", str(tmp_path / "e.db"), *args])
    assert result.exit_code == 1 and says in result.output


def test_connections_the_servers_accept_send_small_writes_at_once():
    """asyncio skips TCP_NODELAY for a listening socket of proto 0 (what uvicorn binds): each
    response then stalls on the client's delayed ACK. engram's servers bind their own."""
    import asyncio

    from engram.service.listen import listening_socket

    async def accepted_nodelay(sock: socket.socket) -> int:
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                seen.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        try:
            return await asyncio.wait_for(seen, 10)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(accepted_nodelay(listening_socket("127.0.0.1", 0))) != 0
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # the kind uvicorn binds by itself
    plain.bind(("127.0.0.1", 0))
    assert asyncio.run(accepted_nodelay(plain)) == 0


def test_a_session_header_records_the_turn_in_that_session(memory, fake_llm, proxy_url):
    fake_llm.reply("Have a good trip to Rome!")
    ask(proxy_url, "unused", "My flight to Rome is on Friday", headers={"X-Engram-Session": "trip-1"})
    deadline = time.monotonic() + 20
    while not memory.session("alice", "trip-1").turns() and time.monotonic() < deadline:
        memory.flush(timeout=5)
    assert [(t.role, t.content) for t in memory.session("alice", "trip-1").turns()] == [
        ("user", "My flight to Rome is on Friday"), ("assistant", "Have a good trip to Rome!")]


def test_a_broken_upstream_answer_is_passed_back_as_it_came_and_not_recorded(memory, fake_llm, proxy_url):
    fake_llm.malformed()
    with httpx.Client(timeout=30) as http:
        answer = http.post(f"{proxy_url}/chat/completions",
                           json={"model": "m", "messages": [{"role": "user", "content": "about Timbuktu"}]})
    assert answer.status_code == 200 and answer.content.startswith(b'{"id": "chatcmpl-broken", "choices": [ this')
    memory.flush(timeout=5)
    assert not any("Timbuktu" in i.content for i in memory.get_all(user_id="alice"))


def test_a_long_message_still_gets_memory(memory, fake_llm, proxy_url):
    memory.add("I prefer green tea over coffee", user_id="alice")
    long = "What should I drink while I read this? " + "Lorem ipsum dolor sit amet. " * 400  # ~11k characters
    ask(proxy_url, "unused", long)
    sent = fake_llm.requests[-1]["messages"]
    assert "green tea" in sent[0]["content"] and sent[1]["content"] == long
