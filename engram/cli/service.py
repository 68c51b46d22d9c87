"""`engram serve` (the REST server and web manager) and `engram keys` (its API keys)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from engram.cli.app import console, fail, notice, print_json, run
from engram.cli.options import check_db, settings
from engram.errors import EngramError

keys_app = typer.Typer(help="API keys of the REST server (stored hashed in the same database).",
                       no_args_is_help=True, rich_markup_mode=None)


def _keys(action):
    def with_keys(memory):
        from engram.service.keys import KeyStore

        return action(KeyStore(memory.store))

    return run(with_keys)


@keys_app.command("create")
def keys_create(
    user: Annotated[str | None, typer.Option("--user", "-u", help="the user this key reaches (only them)")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="reach every user")] = False,
    name: Annotated[str | None, typer.Option("--name", help="a label to tell keys apart")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print only JSON (to stdout)")] = False,
) -> None:
    """Make a key; its secret is printed once and never stored."""
    info, secret = _keys(lambda keys: keys.create(user, admin=admin, name=name))
    if as_json:
        print_json({**info.model_dump(mode="json"), "secret": secret})
        return
    typer.echo(secret)
    notice(f"key {info.id} for {'every user (admin)' if info.admin else info.user_id}: "
           "the secret above is shown only now")


@keys_app.command("list")
def keys_list(as_json: Annotated[bool, typer.Option("--json", help="print only JSON (to stdout)")] = False) -> None:
    """Every key (never a secret), revoked ones marked."""
    found = _keys(lambda keys: keys.list())
    if as_json:
        print_json(found)
        return
    from rich.table import Table

    table = Table("id", "user", "admin", "name", "created", "revoked")
    for k in found:
        table.add_row(k.id, k.user_id or "*", "yes" if k.admin else "", k.name or "",
                      k.created_at.strftime("%Y-%m-%d %H:%M"),
                      k.revoked_at.strftime("%Y-%m-%d %H:%M") if k.revoked_at else "")
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke a key at once (every worker of a running server refuses it from now on)."""
    if not _keys(lambda keys: keys.revoke(key_id)):
        fail(f"no live key with id {key_id!r}")
    notice(f"key {key_id} revoked")


def serve(
    host: Annotated[str, typer.Option("--host", help="address to bind (default loopback only)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port")] = 8420,
    workers: Annotated[int, typer.Option("--workers", min=1, help="worker processes on the one store")] = 1,
    cors_origin: Annotated[
        list[str] | None, typer.Option("--cors-origin", help="allow this browser origin (repeatable; default none)")
    ] = None,
    max_body: Annotated[int, typer.Option("--max-body-bytes", min=1024, help="largest request body")] = 1_048_576,
) -> None:
    """Serve the REST API under /v1, the web memory manager at / and OpenAPI at /docs."""
    try:
        check_db()
        path = settings().path
    except (EngramError, ValueError, OSError) as exc:
        fail(str(exc))
    from engram.service.app import ENV_CORS, ENV_MAX_BODY
    from engram.service.listen import serve as serve_app

    os.environ["ENGRAM_PATH"] = str(path)  # worker processes build their app from the environment
    os.environ[ENV_CORS] = ",".join(cors_origin or [])
    os.environ[ENV_MAX_BODY] = str(max_body)
    if host not in ("127.0.0.1", "localhost", "::1"):
        notice(f"serving on {host}: reachable from other machines; every call still needs an API key")
    notice(f"engram REST on http://{host}:{port}/v1 (docs /docs, web manager /) over {path}")
    serve_app("engram.service.app:app_from_env", factory=True, host=host, port=port, workers=workers)
