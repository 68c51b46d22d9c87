"""API keys: one per tenant (a user) or admin (every user), kept hashed in the engram store.

A secret reads ``egk_<key id>_<token>``: the id finds the row, the token (192 random bits)
is compared by its sha256 in constant time, so neither the file nor a timing leaks a key.
The secret is shown once, by `create`; the store never holds it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from engram import validate as check
from engram.errors import EngramError, InvalidInput
from engram.models import utcnow

_PREFIX = "egk_"
_ID_HEX = 16  # key id: 8 random bytes
_TOKEN_HEX = 48  # token: 24 random bytes


class KeyInfo(BaseModel):
    """What is known about a key (never its secret)."""

    id: str
    user_id: str | None = None
    admin: bool = False
    name: str | None = None
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class KeyStore:
    """The API keys of one engram store (same database file, `api_keys` table)."""

    def __init__(self, store: Any) -> None:
        if not hasattr(store, "api_key_insert"):
            raise EngramError(f"{type(store).__name__} does not hold API keys; serve from an SQLite store")
        self.store = store

    def create(self, user_id: str | None, *, admin: bool = False, name: str | None = None) -> tuple[KeyInfo, str]:
        """A new key and its secret (shown only now). A user key reaches `user_id` only;
        an admin key reaches every user (`user_id`, if given, is its default user)."""
        if user_id is None and not admin:
            raise InvalidInput("a user key needs a user_id (or make an admin key)")
        if user_id is not None:
            check.scope(user_id)
        if name is not None:
            check.optional_id("name", name)
        key_id = secrets.token_hex(_ID_HEX // 2)
        token = secrets.token_hex(_TOKEN_HEX // 2)
        info = KeyInfo(id=key_id, user_id=user_id, admin=admin, name=name, created_at=utcnow())
        self.store.api_key_insert({**info.model_dump(), "secret_hash": _digest(token)})
        return info, f"{_PREFIX}{key_id}_{token}"

    def verify(self, secret: str) -> KeyInfo | None:
        """The live key this secret belongs to, or None (unknown, malformed or revoked)."""
        parsed = _parse(secret)
        if parsed is None:
            return None
        key_id, token = parsed
        row = self.store.api_key_get(key_id)
        if row is None:
            hmac.compare_digest(_digest(token), _digest(""))  # same work either way
            return None
        if not hmac.compare_digest(row["secret_hash"], _digest(token)) or row["revoked_at"] is not None:
            return None
        return _info(row)

    def get(self, key_id: str) -> KeyInfo | None:
        row = self.store.api_key_get(key_id) if isinstance(key_id, str) else None
        return None if row is None else _info(row)

    def list(self) -> list[KeyInfo]:
        """Every key, revoked ones too, oldest first."""
        return [_info(row) for row in self.store.api_key_list()]

    def revoke(self, key_id: str) -> bool:
        """Revoke at once, for every worker process; False when no live key has that id."""
        if not isinstance(key_id, str):
            return False
        return self.store.api_key_revoke(key_id, utcnow())

    def secret(self, name: str) -> str:
        """A random value shared by every worker on this store (web session signing)."""
        return self.store.service_secret(name)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _parse(secret: Any) -> tuple[str, str] | None:
    if not isinstance(secret, str) or not secret.startswith(_PREFIX):
        return None
    parts = secret[len(_PREFIX):].split("_")
    if len(parts) != 2 or len(parts[0]) != _ID_HEX or len(parts[1]) != _TOKEN_HEX:
        return None
    if not all(c in "0123456789abcdef" for c in parts[0] + parts[1]):
        return None
    return parts[0], parts[1]


def _info(row: dict[str, Any]) -> KeyInfo:
    return KeyInfo(**{k: v for k, v in row.items() if k != "secret_hash"})
