"""The web memory manager (placeholder until the templates land)."""

from __future__ import annotations

from fastapi import FastAPI


def install(app: FastAPI) -> None:
    """Mount the manager's pages at /."""
