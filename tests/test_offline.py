"""The default path never touches the network: no model download, no telemetry."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_default_engine_runs_with_every_network_connection_refused(tmp_path):
    script = textwrap.dedent(
        f"""
        import socket, sys
        attempts = []
        def refuse(self, *args, **kwargs):
            attempts.append(args)
            raise OSError("network is off in this test")
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = lambda *a, **k: refuse(None, *a)

        from engram import Memory
        with Memory({str(tmp_path / "offline.db")!r}) as m:
            m.add("Please remember my favourite colour is blue.", user_id="u", session_id="s")
            m.add("我住在北京", user_id="u", session_id="s")
            m.end_session("u", "s")
            assert "blue" in m.search("favourite colour", user_id="u")[0].memory.content
            assert "blue" in m.context("what is my favourite colour?", user_id="u").text
            assert m.capsule("u").token_count > 0
        assert not attempts, attempts
        assert "openai" not in sys.modules  # no LLM client unless one is configured
        print("offline ok")
        """
    )
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "ENGRAM_CONFIG": str(tmp_path / "none.toml")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "offline ok" in done.stdout
