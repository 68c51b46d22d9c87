"""The collaborators every feature module is handed: store, embedder, settings, privacy policy
and the outbound redaction. A holder, not a helper: it has no logic of its own.

`Memory` builds one and passes it down; nothing below the facade ever sees `Memory` itself.
It is mutable on purpose: ``memory.settings = …`` swaps the settings for every part holding it.
"""

from __future__ import annotations

from dataclasses import dataclass

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
