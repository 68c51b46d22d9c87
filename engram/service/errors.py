"""One error shape for every failure: ``{"error": {"type": ..., "message": ...}}``.

engram's own errors map to status codes here (InvalidInput 422, NotFound 404, a read-only or
busy store 503); anything unexpected is a 500 whose message says nothing of the internals.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engram.errors import EngramError, InvalidInput, NotFound
from engram.store.base import NotADatabase, StoreError, StoreFull, StoreReadOnly

log = logging.getLogger("engram.service")


class ApiError(Exception):
    """An HTTP error with engram's shape: raise it anywhere in a route or dependency."""

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status, self.type, self.message = status, type_, message


def unauthorized(message: str = "a valid API key is required (Authorization: Bearer <key> or X-API-Key)") -> ApiError:
    return ApiError(401, "unauthorized", message)


def forbidden(message: str = "this key cannot reach that user") -> ApiError:
    return ApiError(403, "forbidden", message)


def body(type_: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type_, "message": message}}


def response(status: int, type_: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body(type_, message), status_code=status, headers=headers)


_STATUS = {  # most specific first
    InvalidInput: (422, "invalid_input"),
    NotFound: (404, "not_found"),
    StoreReadOnly: (503, "read_only"),
    StoreFull: (507, "store_full"),
    NotADatabase: (500, "store_broken"),
    StoreError: (503, "store_error"),
}

_HTTP_TYPES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 413: "too_large", 415: "unsupported_media_type", 422: "invalid_input"}


def status_of(exc: EngramError) -> tuple[int, str]:
    for cls, mapped in _STATUS.items():
        if isinstance(exc, cls):
            return mapped
    return 422, "invalid_input"  # an EngramError raised on purpose is about the request


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    """Every error path of `app` answers in the one shape."""

    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return response(exc.status, exc.type, exc.message, headers)

    @app.exception_handler(EngramError)
    async def _engram(request: Request, exc: EngramError) -> JSONResponse:
        status, type_ = status_of(exc)
        return response(status, type_, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return response(422, "invalid_input", _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return response(exc.status_code, _HTTP_TYPES.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error serving %s %s", request.method, request.url.path)
        return response(500, "internal", "the server failed; the error is in its log")
