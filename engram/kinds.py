"""The names a memory is classified by: its kind, layer, status and source, the actions that
happen to it, and the metadata keys engram sets. Plain enums (no pydantic), so a command line
that only lists them (`engram --help`) does not build the models."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    TASK = "task"
    DECISION = "decision"
    IDENTITY = "identity"
    EVENT = "event"
    SUMMARY = "summary"
    TURN = "turn"


class Layer(StrEnum):
    EPISODIC = "episodic"
    LONG_TERM = "long_term"


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DISPUTED = "disputed"
    ARCHIVED = "archived"


class Action(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    SUPERSEDE = "SUPERSEDE"
    DISPUTE = "DISPUTE"
    NOOP = "NOOP"
    DELETE = "DELETE"
    # lifecycle and user control (engram.lifecycle, engram.disputes, engram.control)
    RESOLVE = "RESOLVE"  # a dispute settled by the user
    ARCHIVE = "ARCHIVE"
    RESTORE = "RESTORE"
    MERGE = "MERGE"
    VIEW = "VIEW"  # a memory listed in answer to "what do you remember about me?"
    PAUSE = "PAUSE"
    RESUME = "RESUME"


# metadata keys engram sets itself (engram.episodes)
EPISODE_KEY = "episode"  # a fact's: the id of the episode (the user's turn) it was drawn from
REPLY_KEY = "reply_to"  # an episode's: the assistant turn it answers
# a fact's: the later episodes that said it again, oldest first (at most RESTATED_KEEP of them)
RESTATED_KEY = "restated_in"
RESTATED_KEEP = 8


class Source(StrEnum):
    """Which extractor (or caller) produced a memory."""

    EXPLICIT = "explicit"
    RULE = "rule"
    LLM = "llm"
    IMPORT = "import"
    API = "api"
    EPISODE = "episode"  # a user turn kept verbatim by `add` (engram.episodes)
