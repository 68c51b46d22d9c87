"""The web memory manager at /: sign in with a key, see what is remembered (by layer and
kind), search, edit, delete (one, a kind, everything: each confirmed), pause and resume,
a memory's history and supersede chain, disputes to resolve, and the capsule.

Server-rendered (Jinja2) plain HTML forms that work without JavaScript; the vendored htmx
(static/htmx.min.js, no CDN) boosts links and forms into partial page swaps. Every page acts
for one user: the key's own, or the one an admin key chose at sign-in. A thin layer: each
action is one `Memory` call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from engram.errors import EngramError, NotFound
from engram.kinds import Kind, Layer, Status
from engram.memory import Memory
from engram.models import MemoryItem
from engram.service.keys import KeyStore
from engram.service.web_session import COOKIE, MAX_AGE, WebSession, csrf_ok, make_cookie, read_cookie
from engram.service.web_text import TEXT, language_of

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
router = APIRouter(include_in_schema=False)

HEADERS = {  # the pages load nothing from elsewhere and cannot be framed
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
NOTES = {"saved", "resolved", "bad_csrf", "paused", "active"}  # ?note= values a page may show
CHAIN_MOST = 20
PAGE_MOST = 1000  # memories listed on one page (newest first); search reaches the rest


class Leave(Exception):
    """Stop handling a page and answer with `response` (sign in first, a bad token, a missing memory)."""

    def __init__(self, response: Response) -> None:
        self.response = response


def install(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(router)

    @app.exception_handler(Leave)
    async def _leave(request: Request, exc: Leave) -> Response:
        return exc.response


# -- plumbing ---------------------------------------------------------------------------
def _keys(request: Request) -> KeyStore:
    return request.app.state.keys


def _memory(request: Request) -> Memory:
    return request.app.state.memory


def _session(request: Request) -> WebSession | None:
    return read_cookie(_keys(request), request.cookies.get(COOKIE))


def _text(request: Request) -> tuple[str, dict[str, str]]:
    lang = language_of(request.headers.get("accept-language"))
    return lang, TEXT[lang]


def _page(request: Request, name: str, session: WebSession | None, status: int = 200, **context: Any) -> Response:
    lang, text = _text(request)
    note = request.query_params.get("note")
    deleted = request.query_params.get("deleted")
    flash = text[note] if note in NOTES else text["deleted"].format(n=int(deleted)) if (deleted or "").isdigit() else ""
    values = {"t": text, "lang": lang, "session": session, "flash": flash,
              "csrf": session.csrf(_keys(request)) if session else "",
              "paused": _memory(request).is_paused(session.user_id) if session else False, **context}
    return templates.TemplateResponse(request, name, values, status_code=status, headers=HEADERS)


def _go(path: str, **query: Any) -> RedirectResponse:
    """After a POST: see the result with a GET (reloading does not repeat the action)."""
    return RedirectResponse(path + (f"?{urlencode(query)}" if query else ""), status_code=303)


def _signed_in(request: Request) -> WebSession:
    session = _session(request)
    if session is None:
        raise Leave(_go("/signin"))
    return session


def _posted(request: Request, csrf: str) -> WebSession:
    """A form post: signed in, with this session's CSRF token (SameSite=Strict is the first guard)."""
    session = _signed_in(request)
    if not csrf_ok(_keys(request), session, csrf):
        raise Leave(_go("/memories", note="bad_csrf"))
    return session


def _owned(request: Request, session: WebSession, memory_id: str) -> MemoryItem:
    """The session user's memory, else a 404 page."""
    item = _item(request, session, memory_id)
    if item is None:
        raise Leave(_page(request, "message.html", session, status=404, message=_text(request)[1]["not_found"]))
    return item


def _attempt(request: Request, session: WebSession, action: Callable[[], Any]) -> None:
    """Run a change; engram refusing it (bad input) shows its message on a page of its own."""
    try:
        action()
    except EngramError as exc:
        raise Leave(_page(request, "message.html", session, status=422, message=str(exc))) from None


def _item(request: Request, session: WebSession, memory_id: str) -> MemoryItem | None:
    """The memory, if it is the session user's (anyone else's reads as missing)."""
    try:
        item = _memory(request).get(memory_id)
    except (NotFound, EngramError):
        return None
    return item if item.user_id == session.user_id else None


# -- sign in / out ----------------------------------------------------------------------
@router.get("/")
def home(request: Request) -> Response:
    return _go("/memories" if _session(request) else "/signin")


@router.get("/signin")
def signin_form(request: Request) -> Response:
    return _page(request, "signin.html", None)


@router.post("/signin")
def signin(request: Request, key: str = Form(""), user: str = Form("")) -> Response:
    info = _keys(request).verify(key.strip())
    text = _text(request)[1]
    if info is None:
        return _page(request, "signin.html", None, status=401, error=text["bad_key"])
    user_id = (user.strip() or info.user_id) if info.admin else info.user_id
    if not user_id:
        return _page(request, "signin.html", None, status=422, error=text["need_user"])
    response = _go("/memories")
    response.set_cookie(COOKIE, make_cookie(_keys(request), info.id, user_id), max_age=MAX_AGE, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https", path="/")
    return response


@router.post("/signout")
def signout(request: Request, csrf: str = Form("")) -> Response:
    _posted(request, csrf)
    response = _go("/signin")
    response.delete_cookie(COOKIE, path="/")
    return response


# -- memories -----------------------------------------------------------------------------
@router.get("/memories")
def memories(request: Request, q: str = "") -> Response:
    session = _signed_in(request)
    memory = _memory(request)
    results, error = None, ""
    if q.strip():
        try:
            results = memory.search(q, user_id=session.user_id, limit=20)
        except EngramError as exc:
            error = str(exc)
    items = memory.get_all(user_id=session.user_id, limit=PAGE_MOST)
    groups = {layer: {kind: [i for i in items if i.layer is layer and i.kind is kind] for kind in Kind}
              for layer in (Layer.LONG_TERM, Layer.EPISODIC)}
    groups = {layer: {k: v for k, v in kinds.items() if v} for layer, kinds in groups.items()}
    total = len(items) if len(items) < PAGE_MOST else memory.count(user_id=session.user_id)
    return _page(request, "memories.html", session, q=q, results=results, error=error, groups=groups,
                 count=total, shown=len(items))


@router.get("/memories/{memory_id}")
def memory_page(request: Request, memory_id: str) -> Response:
    session = _signed_in(request)
    item = _owned(request, session, memory_id)
    memory = _memory(request)
    clarification = None
    if item.status is Status.DISPUTED:
        found = [c for c in memory.clarifications(user_id=session.user_id) if item.id in c.memory_ids]
        clarification = found[0] if found else None
    return _page(request, "memory.html", session, item=item, history=memory.history(item.id),
                 chain=_chain(request, session, item), provenance=memory.provenance(item.id),
                 clarification=clarification, members=_members(request, session, clarification))


def _chain(request: Request, session: WebSession, item: MemoryItem) -> list[MemoryItem]:
    """The versions this memory replaced and was replaced by, oldest first."""
    seen = {item.id}
    older = _follow(request, session, item, "supersedes", seen)
    return [*reversed(older), item, *_follow(request, session, item, "superseded_by", seen)]


def _follow(request: Request, session: WebSession, item: MemoryItem, link: str, seen: set[str]) -> list[MemoryItem]:
    found: list[MemoryItem] = []
    while getattr(item, link) and len(found) < CHAIN_MOST:
        step = _item(request, session, getattr(item, link))
        if step is None or step.id in seen:
            break
        found.append(step)
        seen.add(step.id)
        item = step
    return found


def _members(request: Request, session: WebSession, clarification: Any) -> list[MemoryItem]:
    if clarification is None:
        return []
    found = (_item(request, session, i) for i in clarification.memory_ids)
    return [m for m in found if m is not None]


@router.post("/memories/{memory_id}/edit")
def edit(request: Request, memory_id: str, content: str = Form(""), csrf: str = Form("")) -> Response:
    session = _posted(request, csrf)
    _owned(request, session, memory_id)
    _attempt(request, session, lambda: _memory(request).update(memory_id, content))
    return _go(f"/memories/{memory_id}", note="saved")


@router.post("/memories/{memory_id}/delete")
def delete_one(request: Request, memory_id: str, csrf: str = Form(""), confirm: str = Form("")) -> Response:
    session = _posted(request, csrf)
    item = _owned(request, session, memory_id)
    if confirm != "yes":
        return _confirm(request, session, "confirm_one", item.content, f"/memories/{memory_id}/delete")
    _memory(request).delete(memory_id)
    return _go("/memories", deleted=1)


@router.post("/kinds/{kind}/delete")
def delete_kind(request: Request, kind: str, csrf: str = Form(""), confirm: str = Form("")) -> Response:
    session = _posted(request, csrf)
    if kind not in {k.value for k in Kind}:
        raise Leave(_go("/memories"))
    if confirm != "yes":
        return _confirm(request, session, "confirm_kind", kind, f"/kinds/{kind}/delete")
    events = _memory(request).delete_by_kind(kind, user_id=session.user_id)
    return _go("/memories", deleted=len(events))


@router.post("/everything/delete")
def delete_everything(request: Request, csrf: str = Form(""), confirm: str = Form("")) -> Response:
    session = _posted(request, csrf)
    if confirm != "yes":
        return _confirm(request, session, "confirm_all", session.user_id, "/everything/delete")
    return _go("/memories", deleted=_memory(request).delete_all(user_id=session.user_id))


def _confirm(request: Request, session: WebSession, message: str, what: str, action: str) -> Response:
    text = _text(request)[1]
    return _page(request, "confirm.html", session, message=text[message].format(what=what), action=action)


@router.post("/pause")
def pause(request: Request, csrf: str = Form("")) -> Response:
    session = _posted(request, csrf)
    _memory(request).pause(session.user_id)
    return _go("/memories", note="paused")


@router.post("/resume")
def resume(request: Request, csrf: str = Form("")) -> Response:
    session = _posted(request, csrf)
    _memory(request).resume(session.user_id)
    return _go("/memories", note="active")


# -- disputes and the capsule -------------------------------------------------------------
@router.get("/disputes")
def disputes(request: Request) -> Response:
    session = _signed_in(request)
    found = _memory(request).clarifications(user_id=session.user_id)
    return _page(request, "disputes.html", session,
                 disputes=[(c, _members(request, session, c)) for c in found])


@router.post("/memories/{memory_id}/resolve")
def resolve(request: Request, memory_id: str, keep: str = Form("this"), csrf: str = Form("")) -> Response:
    session = _posted(request, csrf)
    _owned(request, session, memory_id)
    _attempt(request, session, lambda: _memory(request).resolve(memory_id, keep))
    return _go("/disputes", note="resolved")


@router.get("/capsule")
def capsule(request: Request) -> Response:
    session = _signed_in(request)
    return _page(request, "capsule.html", session, capsule=_memory(request).capsule(session.user_id))
