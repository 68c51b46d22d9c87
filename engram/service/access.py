"""Whose memory a request of the MCP server or the proxy reaches: the API key decides.

A user key reaches its own user only, whatever user the request names; an admin key reaches the
user the request names (or the key's default user). Started for one fixed user (loopback, no
keys), a server serves that user and refuses requests that name another.
"""

from __future__ import annotations

from typing import Any


class Denied(Exception):
    """The request may not act as any user: an HTTP status and an error type for the answer."""

    def __init__(self, status: int, message: str, kind: str = "permission_denied") -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


def bearer(authorization: str | None) -> str | None:
    """The secret of an ``Authorization: Bearer …`` header."""
    if not authorization:
        return None
    scheme, _, secret = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return secret.strip() or None


def user_for(key: Any, requested: str | None) -> str:
    """The user a verified `key` (`KeyInfo`: user_id, admin) may act as, given the user the request names."""
    requested = requested or None
    if key.admin:
        user = requested or key.user_id
        if not user:
            raise Denied(400, "an admin key must name the user (the `user` field or X-Engram-User)", "invalid_request")
        return user
    if requested is not None and requested != key.user_id:
        raise Denied(403, "this key may only act as its own user")
    return key.user_id


def key_resolver(verify: Any) -> Any:
    """(secret, requested user) -> user, checked against `verify` (`KeyStore.verify`)."""

    def resolve(secret: str | None, requested: str | None) -> str:
        key = verify(secret) if secret else None
        if key is None:
            raise Denied(401, "a valid engram API key is required (Authorization: Bearer egk_…)", "unauthorized")
        return user_for(key, requested)

    return resolve


def fixed_resolver(user: str) -> Any:
    """(secret, requested user) -> `user`: a server started for one user, without keys."""

    def resolve(secret: str | None, requested: str | None) -> str:
        if requested and requested != user:
            raise Denied(403, f"this server serves one user only ({user!r})")
        return user

    return resolve
