"""The web manager's sign-in: a signed cookie naming the key (never the secret) and, for an
admin key, the user being managed; a CSRF token bound to that cookie.

The cookie is HttpOnly and SameSite=Strict; its HMAC key is a random secret kept in the store
(`KeyStore.secret`), so every worker process accepts every other's cookies. A revoked key's
cookie stops working at once: the key is looked up on every request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

from engram.service.auth import Caller
from engram.service.keys import KeyStore

COOKIE = "engram_session"
MAX_AGE = 12 * 3600


@dataclass(frozen=True, slots=True)
class WebSession:
    caller: Caller
    user_id: str  # whose memories the pages show
    cookie: str

    def csrf(self, keys: KeyStore) -> str:
        return _mac(keys, "csrf|" + self.cookie)[:32]


def _mac(keys: KeyStore, text: str) -> str:
    return hmac.new(keys.secret("web-session").encode(), text.encode(), hashlib.sha256).hexdigest()


def make_cookie(keys: KeyStore, key_id: str, user_id: str) -> str:
    payload = base64.urlsafe_b64encode(json.dumps({"k": key_id, "u": user_id, "t": int(time.time())}).encode()).decode()
    return f"{payload}.{_mac(keys, payload)}"


def read_cookie(keys: KeyStore, cookie: str | None) -> WebSession | None:
    """The session a cookie stands for; None when absent, forged, or its key was revoked."""
    if not cookie or "." not in cookie:
        return None
    payload, mac = cookie.rsplit(".", 1)
    if not hmac.compare_digest(mac, _mac(keys, payload)):
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(payload.encode()))
        key_id, user_id, issued = data["k"], data["u"], float(data["t"])
    except (ValueError, KeyError, TypeError):
        return None
    if not 0 <= time.time() - issued <= MAX_AGE:
        return None
    info = keys.get(key_id)
    if info is None or info.revoked or not isinstance(user_id, str):
        return None
    if not info.admin and user_id != info.user_id:
        return None
    return WebSession(Caller(user_id=info.user_id, admin=info.admin, key_id=info.id), user_id, cookie)


def csrf_ok(keys: KeyStore, session: WebSession, token: object) -> bool:
    return isinstance(token, str) and hmac.compare_digest(token, session.csrf(keys))
