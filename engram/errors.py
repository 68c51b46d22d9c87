"""Errors engram raises: one base class so callers can catch everything of ours."""


class EngramError(Exception):
    """Base class of every error engram raises on purpose."""


class InvalidInput(EngramError, ValueError):
    """The caller passed something engram cannot accept; nothing was changed."""


class NotFound(EngramError, KeyError):
    """No memory with that id (or it was deleted)."""

    def __str__(self) -> str:  # KeyError quotes its message; we don't want that
        return str(self.args[0]) if self.args else "not found"
