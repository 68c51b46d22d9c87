"""Who is calling: the API key in ``Authorization: Bearer …`` or ``X-API-Key``, resolved to a
`Caller`, and the one rule of tenancy (`scoped_user`).

The app (or any other ASGI app reusing this, such as the MCP server) puts its `KeyStore`
at ``app.state.keys``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from engram.service.errors import ApiError, forbidden, unauthorized
from engram.service.keys import KeyStore

_bearer = HTTPBearer(auto_error=False, description="an engram API key (engram keys create)")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="an engram API key")


@dataclass(frozen=True, slots=True)
class Caller:
    """The owner of the key of a request: one user, or an admin (every user)."""

    user_id: str | None
    admin: bool = False
    key_id: str | None = None


def key_store(request: Request) -> KeyStore:
    return request.app.state.keys


def resolve(keys: KeyStore, secret: str | None) -> Caller:
    """The caller a secret stands for; 401 for none, unknown or revoked."""
    if not secret:
        raise unauthorized()
    info = keys.verify(secret)
    if info is None:
        raise unauthorized("the API key is unknown or revoked")
    return Caller(user_id=info.user_id, admin=info.admin, key_id=info.id)


def caller(
    request: Request,
    bearer: HTTPAuthorizationCredentials | None = Depends(_bearer),
    api_key: str | None = Depends(_header),
) -> Caller:
    """FastAPI dependency: the request's `Caller` (401 without a live key)."""
    secret = bearer.credentials if bearer is not None else api_key
    return resolve(key_store(request), secret)


def scoped_user(caller: Caller, requested_user_id: str | None) -> str:
    """The user a call acts for. A user key only ever reaches its own user (another one
    asked for: 403); an admin key reaches the one asked for, else its own default."""
    if caller.admin:
        user_id = requested_user_id if requested_user_id is not None else caller.user_id
        if user_id is None:
            raise ApiError(422, "invalid_input", "user_id is required with an admin key")
        return user_id
    if requested_user_id is not None and requested_user_id != caller.user_id:
        raise forbidden()
    if caller.user_id is None:  # cannot happen for keys KeyStore made
        raise forbidden()
    return caller.user_id
