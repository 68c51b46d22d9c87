"""The REST server's app factory: /v1 (API keys), / (web manager), /docs, /healthz, /readyz.

`create_app(memory)` serves a `Memory` you built (tests, embedding in another app);
`app_from_env()` is what `engram serve` starts in each worker process: its own `Memory`
over the store named by the environment (``ENGRAM_PATH`` and the other settings).
Several workers on one SQLite file are safe: the store locks across processes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from engram import __version__
from engram.memory import Memory
from engram.service import errors
from engram.service.keys import KeyStore
from engram.service.limits import BodyLimit
from engram.service.routes import memories, sessions, users
from engram.service.schemas import Health

ENV_CORS = "ENGRAM_SERVE_CORS"  # comma-separated browser origins allowed (default: none)
ENV_MAX_BODY = "ENGRAM_SERVE_MAX_BODY"  # bytes
DEFAULT_MAX_BODY = 1_048_576


def create_app(
    memory: Memory | None = None, *, cors_origins: Sequence[str] = (), max_body_bytes: int = DEFAULT_MAX_BODY,
    web: bool = True, **settings: Any,
) -> FastAPI:
    """The server over `memory` (left open on shutdown: the caller owns it), or over a
    `Memory(**settings)` it opens at start-up and closes at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = memory is None
        engine = Memory(**settings) if own else memory
        app.state.memory, app.state.keys = engine, KeyStore(engine.store)
        try:
            yield
        finally:
            if own:
                engine.close()

    app = FastAPI(
        title="engram", version=__version__, lifespan=lifespan, docs_url=None,  # /docs: `_docs`, offline
        description="Long-term memory for AI agents. Every call needs an API key (`engram keys create`): "
                    "a user key reaches only its user; an admin key reaches every user.",
    )
    app.router.redirect_slashes = False  # an API answers the path it was asked (404 in the one shape), never 307
    if memory is not None:  # usable before start-up too (tests with a TestClient without lifespan)
        app.state.memory, app.state.keys = memory, KeyStore(memory.store)
    errors.install(app)
    for router in (memories.router, users.router, sessions.router):
        app.include_router(router)
    _health(app)
    _docs(app)
    if web:
        from engram.service.web import install as install_web

        install_web(app)
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["*"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type"])
    app.add_middleware(BodyLimit, limit=max_body_bytes)
    return app


def _docs(app: FastAPI) -> None:
    """OpenAPI's page at /docs with Swagger UI's files served from the `swagger-ui-bundle`
    package: FastAPI's default page loads them from a CDN, blank on a machine offline."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> Any:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json", title="engram API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js", swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon-32x32.png",
        )


def _health(app: FastAPI) -> None:
    @app.get("/healthz", tags=["health"], summary="The process is up")
    def healthz() -> Health:
        return Health()

    @app.get("/readyz", tags=["health"], summary="The store answers", response_model=Health)
    def readyz(request: Request) -> Any:
        try:
            request.app.state.memory.store.schema_version  # noqa: B018 - a read of the file
        except Exception as exc:  # any failure: not ready, and say why
            return JSONResponse(Health(status="unavailable", detail=str(exc)).model_dump(), status_code=503)
        return Health()


def app_from_env() -> FastAPI:
    """`engram serve`'s worker: settings from the environment (``ENGRAM_*``)."""
    origins = [o for o in os.environ.get(ENV_CORS, "").split(",") if o.strip()]
    limit = int(os.environ.get(ENV_MAX_BODY) or DEFAULT_MAX_BODY)
    return create_app(cors_origins=origins, max_body_bytes=limit)
