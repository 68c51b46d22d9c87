"""The `engram` command line: mirrors the library (see `engram --help`)."""

from __future__ import annotations

import sys

from engram.cli.app import app
from engram.cli.mcp_cmd import mcp
from engram.cli.proxy_cmd import proxy
from engram.cli.service import keys_app, serve

app.add_typer(keys_app, name="keys")  # the REST server's commands (engram.cli.service)
app.command("serve")(serve)
app.command("mcp")(mcp)  # engram mcp --user U: Model Context Protocol server (engram.cli.mcp_cmd)
app.command("proxy")(proxy)  # engram proxy --upstream URL: OpenAI-compatible memory proxy (engram.cli.proxy_cmd)

__all__ = ["app", "hoist_db", "main"]


_FLAGS = {"-q", "--quiet", "-v", "-vv", "--verbose"}  # the group's flags, also after the command


def hoist_db(args: list[str]) -> list[str]:
    """Move ``--db PATH`` / ``--db=PATH`` and -q / -v from anywhere to the front, where the
    group options are parsed, so ``engram list -u a --db x.db -q`` works like
    ``engram --db x.db -q list -u a``. Nothing after ``--`` moves."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg == "--db" and i + 1 < len(args):
            front += args[i:i + 2]
            i += 2
            continue
        if arg.startswith("--db=") or arg in _FLAGS:
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


def main() -> None:
    """The `engram` console script."""
    app(args=hoist_db(sys.argv[1:]), prog_name="engram")
