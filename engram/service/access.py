"""Whose memory a request to the MCP server or the proxy reaches: the REST server's one rule
(engram.service.auth: `resolve` a key to a `Caller`, `scoped_user`) applied to raw headers.

The key travels in ``Authorization: Bearer egk_…`` or ``X-API-Key``; the user a request names
in ``X-Engram-User`` (or the proxy's `user` field). A server started for one fixed user (loopback,
no keys) acts as that user's key would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram.service.auth import Caller, resolve, scoped_user


def bearer(authorization: str | None) -> str | None:
    """The secret of an ``Authorization: Bearer …`` header."""
    if not authorization:
        return None
    scheme, _, secret = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return secret.strip() or None


class Gate:
    """Callers from request headers: API keys (`keys`, a KeyStore) or one fixed `user`.
    Refusals are `engram.service.errors.ApiError` (401, 403, 422)."""

    def __init__(self, *, keys: Any = None, user: str | None = None) -> None:
        if (keys is None) == (user is None):
            raise ValueError("give exactly one of keys (a KeyStore) or user (one fixed user)")
        self.keys, self.user = keys, user

    @staticmethod
    def secret(headers: Mapping[str, str]) -> str | None:
        """The engram key of a request (header names lower-case)."""
        return headers.get("x-api-key") or bearer(headers.get("authorization"))

    def caller(self, headers: Mapping[str, str]) -> Caller:
        """Who is calling (401 without a live key)."""
        if self.keys is None:
            return Caller(user_id=self.user)
        return resolve(self.keys, self.secret(headers))

    def user_for(self, headers: Mapping[str, str], named: str | None = None) -> str:
        """The user the request acts as: the one it names (X-Engram-User, else `named`) if its
        key may reach them (403 otherwise), else the key's own."""
        return scoped_user(self.caller(headers), headers.get("x-engram-user") or named or None)

    def key_in_authorization(self, headers: Mapping[str, str]) -> bool:
        """Whether the Authorization header carries the engram key (so it must not go upstream)."""
        return self.keys is not None and not headers.get("x-api-key") and bool(headers.get("authorization"))
