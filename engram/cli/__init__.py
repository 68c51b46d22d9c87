"""The `engram` command line: mirrors the library (see `engram --help`)."""

from engram.cli.app import app

__all__ = ["app"]
