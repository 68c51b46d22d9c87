"""The web memory manager in headless Chromium (Playwright) against a real server on 127.0.0.1:
sign in, browse by layer and kind, search, edit, delete (one, a kind, all), pause, resolve a
dispute, the capsule, Chinese text; screenshots go to tests/artifacts/web/. Tenancy, CSRF and
cookie tampering are probed over plain HTTP."""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from engram.service.app import create_app
from engram.service.keys import KeyStore
from engram.service.web_session import COOKIE
from service_server import LiveServer

ARTIFACTS = Path(__file__).parent / "artifacts" / "web"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def site(tmp_path_factory, embedder):
    from engram import Memory

    with Memory(tmp_path_factory.mktemp("web") / "engram.db", embedder=embedder) as memory:
        keys = KeyStore(memory.store)
        secrets = {u: keys.create(u)[1] for u in ("alice", "bob", "chen")}
        secrets["admin"] = keys.create(None, admin=True)[1]
        for said in ("I live in Berlin.", "I love coffee.", "I hate coffee.", "I prefer short answers."):
            memory.add(said, user_id="alice")
        memory.add("My passport number is in the blue folder.", user_id="bob")
        memory.add("我住在北京", user_id="chen")
        memory.add("我喜欢喝绿茶", user_id="chen")
        with LiveServer(create_app(memory)) as url:
            yield memory, url, secrets


@pytest.fixture(scope="module")
def browser():
    missing = pytest.fail if os.environ.get("ENGRAM_REQUIRE_BROWSER") else pytest.skip  # CI: a failure
    try:
        import playwright.sync_api as playwright
    except ImportError:
        missing("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium fonts-wqy-microhei)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page, url: str, secret: str, user: str = "") -> None:
    page.goto(f"{url}/signin")
    page.get_by_label("API key", exact=False).fill(secret) if page.locator("html[lang=en]").count() else \
        page.get_by_label("API 密钥").fill(secret)
    if user:
        page.locator("#user").fill(user)
    page.locator("#key").press("Enter")  # the keyboard submits the form
    page.wait_for_url(re.compile(r"/memories"))


def test_manage_memories_in_the_browser(site, browser):
    memory, url, secrets = site
    page = browser.new_page(extra_http_headers={"Accept-Language": "en-US,en;q=0.9"})
    page.goto(f"{url}/signin")
    assert page.evaluate("document.activeElement.id") == "key"  # ready to type
    page.get_by_label("API key").fill("egk_wrong")
    page.get_by_role("button", name="Sign in").click()
    assert page.get_by_role("alert").inner_text() == "That key is unknown or revoked."
    sign_in(page, url, secrets["alice"])
    page.goto(f"{url}/memories")
    page.keyboard.press("Tab")  # the first stop is the skip link, then the navigation
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Memories"
    shot(page, "01-memories")
    assert page.get_by_test_id("user").inner_text() == "alice"
    assert page.get_by_role("heading", name="Episodic").is_visible()  # new memories start episodic
    assert page.get_by_role("heading", name=re.compile(r"^fact")).is_visible()
    assert page.get_by_role("heading", name=re.compile(r"^preference")).is_visible()
    assert "User lives in Berlin." in page.content() and "passport" not in page.content()  # never bob's

    page.get_by_label("Search memories").fill("where do I live")
    page.get_by_role("button", name="Search").click()
    page.get_by_role("heading", name="Results").wait_for()
    shot(page, "02-search")
    page.get_by_role("list").filter(has_text="User lives in Berlin.").first.get_by_role(
        "link", name="User lives in Berlin.").click()
    page.get_by_role("heading", name="User lives in Berlin.").wait_for()

    page.get_by_label("Text").fill("User lives in Potsdam.")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for()
    assert page.get_by_role("heading", name="User lives in Potsdam.").is_visible()
    assert "UPDATE" in page.locator("table").inner_text() and "User lives in Berlin." in page.locator("table").inner_text()
    shot(page, "03-edited-with-history")

    page.get_by_role("button", name="Delete", exact=True).click()
    page.get_by_role("heading", name="Are you sure?").wait_for()
    shot(page, "04-confirm-delete")
    page.get_by_role("button", name="Yes, delete").click()
    page.get_by_role("status").filter(has_text="Deleted 1.").wait_for()
    assert not any("Potsdam" in m.content for m in memory.get_all(user_id="alice"))

    page.get_by_role("button", name="Pause memory").click()
    page.get_by_test_id("paused-state").filter(has_text="paused").wait_for()
    assert memory.is_paused("alice")
    shot(page, "05-paused")
    page.get_by_role("button", name="Resume memory").click()
    page.get_by_test_id("paused-state").filter(has_text="Memory is on.").wait_for()
    assert not memory.is_paused("alice")

    page.get_by_role("link", name="Disputes").click()
    question = page.locator(".question").first
    question.wait_for()
    assert "coffee" in question.inner_text()
    shot(page, "06-dispute")
    page.get_by_role("button", name="Keep this one: User dislikes coffee.").click()
    page.get_by_text("No open disputes.").wait_for()
    assert memory.clarifications(user_id="alice") == []
    assert [m.content for m in memory.get_all(user_id="alice") if "coffee" in m.content and m.kind != "turn"] == \
        ["User dislikes coffee."]

    page.get_by_role("link", name="Capsule").click()
    tokens = page.get_by_test_id("tokens")
    tokens.wait_for()
    assert re.fullmatch(r"\d+ tokens of \d+", tokens.inner_text()) and int(tokens.inner_text().split()[0]) > 0
    shot(page, "07-capsule")

    page.get_by_role("link", name="Memories").click()
    page.get_by_role("button", name="Delete all of this kind: turn").click()
    page.get_by_role("button", name="Yes, delete").click()
    page.get_by_role("status").filter(has_text="Deleted").wait_for()
    assert memory.count(user_id="alice", filters={"kind": "turn", "status": []}) == 0
    page.get_by_role("button", name="Delete everything").click()
    page.get_by_role("button", name="Yes, delete").click()
    page.get_by_text("Nothing is remembered yet.").wait_for()
    shot(page, "08-all-deleted")
    assert memory.count(user_id="alice") == 0 and memory.count(user_id="bob") > 0
    page.close()


def test_chinese_interface_and_text(site, browser):
    _, url, secrets = site
    page = browser.new_page(locale="zh-CN", extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"})
    page.goto(f"{url}/signin")
    page.get_by_label("API 密钥").fill(secrets["chen"])
    page.get_by_role("button", name="登录").click()
    page.get_by_role("heading", name=re.compile("^记忆")).wait_for()
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert "北京" in page.content() and page.get_by_role("button", name="暂停记忆").is_visible()
    assert page.get_by_role("heading", name=re.compile("^事实")).is_visible()
    # a CJK font is installed: the characters render with real glyphs, as wide as they are tall
    box = page.get_by_role("link", name=re.compile("北京")).first.bounding_box()
    assert box and box["width"] > 2 * box["height"]
    shot(page, "09-chinese")
    page.get_by_role("link", name="记忆胶囊").click()
    page.get_by_test_id("tokens").filter(has_text="词元").wait_for()
    shot(page, "10-chinese-capsule")
    page.close()


def test_an_admin_key_manages_the_user_it_chose(site, browser):
    _, url, secrets = site
    page = browser.new_page()
    sign_in(page, url, secrets["admin"], user="bob")
    assert page.get_by_test_id("user").inner_text() == "bob" and "passport" in page.content()
    page.close()


@contextmanager
def _signed_in_client(url: str, secret: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as web:
        assert web.post("/signin", data={"key": secret}).status_code == 303
        yield web


def _csrf(web: httpx.Client, path: str = "/memories") -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', web.get(path).text).group(1)


def test_the_web_never_reaches_another_users_memories(site):
    memory, url, secrets = site
    bobs = memory.get_all(user_id="bob", limit=None)
    before = [(m.id, m.content, m.status) for m in bobs]
    with _signed_in_client(url, secrets["chen"]) as web:
        token = _csrf(web)
        for m in bobs:
            assert web.get(f"/memories/{m.id}").status_code == 404
            for action, data in (("edit", {"content": "x"}), ("delete", {"confirm": "yes"}),
                                 ("resolve", {"keep": "both"})):
                reply = web.post(f"/memories/{m.id}/{action}", data={"csrf": token, **data})
                assert reply.status_code == 404 and "passport" not in reply.text
        assert "blue folder" not in web.get("/memories", params={"q": "passport number"}).text
        for page in ("/memories", "/disputes", "/capsule"):
            assert "blue folder" not in web.get(page).text
        # a cookie edited to name bob is refused (the signature no longer matches)
        cookie = web.cookies[COOKIE]
        payload, mac = cookie.rsplit(".", 1)
        data = json.loads(base64.urlsafe_b64decode(payload))
        forged = base64.urlsafe_b64encode(json.dumps({**data, "u": "bob"}).encode()).decode()
        web.cookies.set(COOKIE, f"{forged}.{mac}")
        assert web.get("/memories").headers["location"] == "/signin"
    with _signed_in_client(url, secrets["chen"]) as web:  # bulk deletes act on chen alone
        token = _csrf(web)
        web.post("/kinds/fact/delete", data={"csrf": token, "confirm": "yes"})
        web.post("/everything/delete", data={"csrf": token, "confirm": "yes"})
        web.post("/pause", data={"csrf": token})
    assert [(m.id, m.content, m.status) for m in memory.get_all(user_id="bob", limit=None)] == before
    assert not memory.is_paused("bob") and memory.count(user_id="chen") == 0
    memory.resume("chen")


def test_forms_need_the_csrf_token_and_a_live_key(site):
    memory, url, secrets = site
    _, secret = KeyStore(memory.store).create("dora")
    memory.add("I live in Madrid.", user_id="dora")
    with _signed_in_client(url, secret) as web:
        cookie = web.cookies[COOKIE]
        for data in ({}, {"csrf": "0" * 32}):
            web.post("/everything/delete", data={**data, "confirm": "yes"})
            web.post("/pause", data=data)
        assert memory.count(user_id="dora") > 0 and not memory.is_paused("dora")
        assert 'SameSite=strict' in web.post("/signin", data={"key": secret}).headers["set-cookie"]
        assert "httponly" in web.post("/signin", data={"key": secret}).headers["set-cookie"].lower()
        keys = KeyStore(memory.store)
        keys.revoke(keys.verify(secret).id)
        web.cookies.set(COOKIE, cookie)
        assert web.get("/memories").headers["location"] == "/signin"  # the revoked key's cookie is dead


def test_a_memory_page_shows_its_supersede_chain(site):
    memory, url, _ = site
    _, secret = KeyStore(memory.store).create("erin")
    memory.add("I live in Berlin.", user_id="erin")
    [moved] = [e for e in memory.add("I moved to Paris.", user_id="erin") if e.action == "SUPERSEDE"]
    with _signed_in_client(url, secret) as web:
        page = web.get(f"/memories/{moved.memory.id}").text
    chain = page[page.index("Supersede chain"):page.index("History")]
    assert chain.index("User lives in Berlin.") < chain.index("User moved to Paris.")
    assert "superseded" in chain
