"""The collaborators every feature module is handed: store, embedder, settings, privacy policy
and the outbound redaction. A holder, not a helper: it has no logic of its own.

`Memory` builds one and passes it down; nothing below the facade ever sees `Memory` itself.
It is mutable on purpose: ``memory.settings = …`` swaps the settings for every part holding it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engram.config import Settings
from engram.display import Display
from engram.privacy import PrivacyPolicy
from engram.providers.embedders import Embedder
from engram.store.base import Store


@dataclass(slots=True, eq=False)
class Services:
    store: Store
    embedder: Embedder
    settings: Settings
    privacy: PrivacyPolicy
    display: Display
    # makes a user's graph links still owed by write-behind now (engram.embed_behind): a deletion
    # reads the graph as the user's writes made it; set by `Memory`
    settle: Callable[[str], None] | None = None


T = TypeVar("T")


class Shared(Generic[T]):
    """An attribute of the facade that is the shared holder's: ``memory.store`` reads
    ``memory.services.store``, and assigning it replaces it for every part."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]
        return getattr(obj.services, self.name)

    def __set__(self, obj: Any, value: T) -> None:
        setattr(obj.services, self.name, value)
