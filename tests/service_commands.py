"""An `engram` command of this checkout serving on 127.0.0.1 in a subprocess (the MCP and proxy tests)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def command_serving(args: list[str], port: int, home: Any) -> Iterator[str]:
    """Run ``python -m engram ARGS`` (this checkout) until it accepts connections on `port`;
    yields its base URL and stops it after the block."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") or k == "ENGRAM_EMBEDDER"}
    env.update(HOME=str(home), ENGRAM_CONFIG=str(Path(home) / "none.toml"))
    process = subprocess.Popen([sys.executable, "-m", "engram", *args], cwd=root, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"engram {' '.join(args)} exited: {process.stderr.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the command's server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
