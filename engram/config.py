"""Effective configuration: arguments > ``ENGRAM_*`` environment > TOML file > defaults.

The TOML file is ``$ENGRAM_CONFIG`` or ``~/.engram/config.toml``. Keys are the
field names below; a table flattens into its prefix, so ``[llm] base_url = …``
is the same as ``llm_base_url = …`` (and as ``ENGRAM_LLM_BASE_URL``).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from engram.models import as_zone

DEFAULT_HOME = Path("~/.engram")


def config_file_path() -> Path:
    return Path(os.environ.get("ENGRAM_CONFIG", DEFAULT_HOME / "config.toml")).expanduser()


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name not in _DICT_FIELDS:
            flat.update(_flatten(value, f"{name}_"))
        else:
            flat[name] = value
    return flat


_DICT_FIELDS = {"privacy", "decay_half_life_days"}


class _TomlSource(PydanticBaseSettingsSource):
    """Reads the optional TOML file; a missing file is simply no settings."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = config_file_path()
        if not path.is_file():
            return {}
        with path.open("rb") as handle:
            data = tomllib.load(handle)
        table = data.get("engram", data)
        known = set(self.settings_cls.model_fields)
        flat = _flatten(table)
        unknown = sorted(set(flat) - known)
        if unknown:
            raise ValueError(f"{path}: unknown setting(s) {', '.join(unknown)}")
        return flat


def store_backend(target: str | Path) -> str:
    """"sqlite", "postgres" or "qdrant": which backend a store path or URL names
    (engram.store.open opens it); ValueError for a scheme engram has no backend for."""
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        return "postgres"
    if text.startswith("qdrant://"):
        return "qdrant"
    if "://" in text and not text.startswith("sqlite://"):
        raise ValueError(
            f"unknown store URL scheme {text.split('://', 1)[0]!r}: use a path, sqlite:///…, postgresql://… or qdrant://…"
        )
    return "sqlite"


def redact_url(url: str) -> str:
    """A store URL as messages show it: without the password."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    authority = rest.split("/", 1)[0]
    if "@" in authority:
        credentials, host = rest.split("@", 1)
        rest = f"{credentials.split(':', 1)[0]}@{host}"
    return f"{scheme}://{rest}"


class Settings(BaseSettings):
    """Every knob engram has, with the defaults of the embedded, offline setup."""

    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_", extra="forbid", validate_default=True
    )

    # storage
    path: Path = Field(default=DEFAULT_HOME / "engram.db", description="SQLite database file")
    store: str = Field(
        default="sqlite",
        description="'sqlite' (the file at `path`) or a store URL: sqlite:///file, postgresql://… (libpq, "
        "?host=/socket/dir too), qdrant://host:6333 or qdrant:///folder",
    )
    index_cache_mb: float = Field(
        default=256, ge=0,
        description="memory for per-user search indexes in one process; the least recently used "
        "user's goes past it (reloaded from its pack on their next search)",
    )

    # embeddings
    embedder: Literal["use", "wordllama", "openai"] = Field(
        default="use",
        description="use: multilingual (reads Chinese, across languages); wordllama: English only, fastest",
    )
    embedding_dim: int = Field(default=256, description="wordllama truncation (64/128/256)")
    fast_queries: bool = Field(
        default=True,
        description="use: a one-line query's vector from the model's token vectors (~0.15 ms, not ~3 ms)",
    )
    embed_behind: bool = Field(
        default=True,
        description="add() commits first and embeds from a background thread (a search of the user waits for it)",
    )
    blas_one_thread: bool = Field(
        default=True,
        description="hold the process's BLAS (OpenBLAS, MKL) to one thread while this Memory is open: "
        "engram's products are small, and a BLAS pool's hand-offs cost more than they save "
        "(engram.blas); False leaves the process's BLAS threads as they are",
    )
    embedding_base_url: str | None = None
    embedding_model: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_timeout: float = 30.0

    # LLM (none unless a base URL or model is configured)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(
        default=30.0, gt=0,
        description="seconds per LLM call; on a local endpoint (127.0.0.1, localhost, a private host) the "
        "whole streamed call's budget, stopped (and the server with it) when spent, never retried. "
        "A small CPU model: 60-120",
    )
    llm_max_retries: int = Field(
        default=2, ge=0, description="retries of connection errors, 429 and 5xx (never of a local timeout)"
    )
    llm_stream: Literal["auto", "on", "off"] = Field(
        default="auto", description="stream answers (auto: on local endpoints, so a call can be stopped)"
    )
    llm_max_tokens_extract: int = Field(default=512, ge=16, description="max_tokens of an extraction call")
    llm_max_tokens_judge: int = Field(default=160, ge=16, description="max_tokens of a reconcile judgement")
    llm_max_tokens_compress: int | None = Field(
        default=None, ge=16, description="max_tokens of a compression call (None: 2 x llm_compress_tokens + 100)"
    )
    llm_max_tokens_reply: int = Field(default=600, ge=16, description="max_tokens of an agent's chat reply")
    llm_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    llm_json_mode: bool = Field(default=True, description="ask for response_format=json_object (dropped if refused)")
    llm_price_per_1k_prompt: float | None = Field(default=None, ge=0, description="cost per 1k prompt tokens")
    llm_price_per_1k_completion: float | None = Field(default=None, ge=0, description="cost per 1k completion tokens")
    llm_call_budget: int | None = Field(default=None, ge=0, description="most LLM calls (per process)…")
    llm_budget_scope: Literal["user", "global"] = Field(default="user", description="…per user, or all users together")
    llm_extraction: Literal["per_turn", "batch", "off"] = Field(
        default="per_turn", description="LLM extraction: one call per add(), one per batch of turns, or rules only"
    )
    llm_batch_turns: int = Field(default=8, ge=1, description="batch mode: turns per extraction call (and at session end)")
    llm_compress: bool = Field(default=True, description="session deltas through the compress prompt (falls back to rules)")
    llm_compress_tokens: int = Field(default=300, ge=16, description="largest delta the LLM may write")
    llm_reconcile: bool = Field(default=True, description="LLM decides candidates in the similarity grey zone")
    llm_grey_zone: float = Field(
        default=0.75, ge=0.0, le=1.0, description="cosine from which (up to duplicate_similarity) the LLM judges"
    )
    background_workers: int = Field(default=1, ge=1, le=16, description="threads for add(..., background=True)")
    background_poll_s: float = Field(default=1.0, gt=0, description="how often an idle worker looks for jobs")
    background_max_attempts: int = Field(default=3, ge=1, description="tries before a job is marked failed")
    background_lease_s: float = Field(
        default=300.0, gt=0, description="a running job older than this is retried (its worker died)"
    )

    read_only: bool = Field(default=False, description="open the store read-only: reads work, writes raise")

    # size limits (issue 13): above them a call raises InvalidInput and stores nothing
    max_message_chars: int = Field(
        default=32_000, ge=1, description="characters in one message of add/add_many (a 32k one adds in ~0.1 s)"
    )
    max_query_chars: int = Field(default=4_000, ge=1, description="characters in a search/context/forget query")
    max_metadata_bytes: int = Field(default=16_384, ge=2, description="a call's metadata, as UTF-8 JSON")

    # retrieval
    search_limit: int = 5
    # absolute relevance (SearchResult.relevance): the embedder's cosine mapped to [0, 1]
    relevance_cosine_floor: float = Field(
        default=0.15, ge=-1.0, le=1.0, description="cosine at or below which a memory is unrelated (wordllama: ~0.15)"
    )
    relevance_cosine_full: float = Field(
        default=0.6, ge=-1.0, le=1.0, description="cosine at which a memory is fully relevant"
    )
    context_min_relevance: float = Field(
        default=0.2, ge=0.0, le=1.0, description="context(): memories less relevant than this are not injected"
    )
    fusion: Literal["relative", "rrf"] = Field(
        default="relative",
        description="relative: BM25 share of the best hit + min-max cosine; rrf: reciprocal ranks",
    )
    rrf_k: int = 60
    weight_lexical: float = 1.0
    weight_dense: float = Field(
        default=0.2, description="dense weight for a one-line English query (BM25 reads those well; engram.fusion)"
    )
    weight_dense_wide: float = Field(
        default=0.6, description="dense weight for a query in Chinese or of several lines (the dialogue so far)"
    )
    weight_importance: float = 0.05
    weight_recency: float = 0.05
    weight_use: float = 0.05
    recency_half_life_days: float = 30.0
    weight_time: float = Field(
        default=0.5, ge=0.0,
        description="boost for a memory said within the time a query names ('last May', '去年'; "
        "engram.when); 0: dates in queries are ignored",
    )
    time_tolerance_days: float = Field(
        default=2.0, ge=0.0, description="a time a query names also covers this many days either side"
    )
    time_by_relevance: bool = Field(
        default=True, description="the time boost scales with how well a memory matches otherwise"
    )
    resolve_dates: bool = Field(
        default=True, description="turns count as about the days their time words name ('last Saturday')"
    )
    weight_context: float = Field(
        default=0.6, description="lexical weight of the turn a turn answers (and of its answers) in its conversation"
    )
    candidates: int = Field(default=30, description="candidates taken from each retriever")
    # dialogue structure (engram.dialogue_rank)
    weight_speaker: float = Field(
        default=0.3, ge=0.0, description="boost for the turns of a speaker the query names; 0: off"
    )
    speaker_name_weight: float = Field(
        default=0.5, ge=0.0, le=1.0, description="lexical weight of a named speaker's name (favoured by speaker instead)"
    )
    filler_factor: float = Field(
        default=0.3, ge=0.0, le=1.0, description="score share kept by filler turns ('Bye!', 'Take care!'); 1: off"
    )
    other_subject_factor: float = Field(
        default=0.4, ge=0.0, le=1.0,
        description="score share kept by a fact about one of the user's people or pets when the question asks "
        "about the user alone ('where do I live?' vs 'User's sister lives in Pune'); 1: off",
    )
    diversity_session: float = Field(
        default=0.0, ge=0.0, description="top k: score taken per turn already picked from the same session; 0: off"
    )
    diversity_copy: float = Field(
        default=0.2, ge=0.0, description="top k: score taken x word overlap with the most similar pick; 0: off"
    )
    pair_factor: float = Field(
        default=0.6, ge=0.0, le=1.0, description="a question turn in the result brings its answer at this share of its score; 0: off"
    )
    # the entity graph (engram.graph): built on writes, a retrieval signal for list, "both" and
    # relationship questions that name a known entity, within a fixed fan-out budget
    graph: bool = Field(default=True, description="build the entity graph on writes and use it in search")
    weight_graph: float = Field(default=0.25, description="weight of graph-expanded retrieval in the fusion")
    graph_fanout: int = Field(default=8, description="neighbours followed per query entity (one hop)")
    graph_memories: int = Field(default=200, description="memories the graph signal reads per query, at most")
    reinforce: bool = Field(default=True, description="retrieval bumps access counts")

    # reconciliation
    duplicate_similarity: float = Field(default=0.93, ge=0.0, le=1.0)

    # sessions, capsule and per-turn context (OptMem design)
    capsule_budget: int = Field(default=426, ge=0, description="capsule size in tokens (exact)")
    context_budget: int = Field(default=1024, ge=0, description="whole per-turn context in tokens")
    context_memories: int = Field(default=5, ge=0, description="query-relevant memories added to a context")
    context_episodes: int = Field(
        default=1, ge=0, description="episodes (what the user said, verbatim) a context may cite as evidence"
    )
    token_encoding: str = Field(
        default="cl100k_base",
        description="tokenizer for budgets: cl100k_base, o200k_base or an OpenAI model name; "
        "others are approximated (see engram.tokens)",
    )
    compression: Literal["session", "daily", "task"] = Field(
        default="session",
        description="when deltas are made: at each session end, once a day, or when `compress` is called (task done)",
    )
    idle_timeout_s: float = Field(default=1800.0, gt=0, description="a session idle this long has ended")
    working_memory_tokens: int = Field(default=1024, ge=0, description="recent turns kept per open session")
    line_tokens: int = Field(default=40, ge=4, description="longest line of a delta or capsule")
    template_dir: Path | None = Field(
        default=None, description="folder whose *.j2 files override the bundled prompt templates by name"
    )

    # privacy: category -> redact | drop | allow
    privacy: dict[str, str] = Field(default_factory=dict)

    # lifecycle: decay, reinforcement, maintenance (engram.lifecycle), reminders
    decay_half_life_days: dict[str, float] = Field(
        default_factory=lambda: {
            "identity": 0.0, "preference": 365.0, "fact": 365.0, "decision": 180.0,
            "task": 90.0, "event": 60.0, "summary": 180.0, "turn": 30.0,
        },
        description="base half-life of a memory's importance per kind, in days (0: never decays)",
    )
    decay_importance_gain: float = Field(
        default=3.0, ge=0.0,
        description="half-life x (1 + gain x importance^2): important memories fade slower",
    )
    decay_core_importance: float = Field(
        default=0.9, ge=0.0, le=1.0, description="memories this important never decay"
    )
    reinforce_strength: float = Field(
        default=0.2, ge=0.0,
        description="strength each retrieval adds (lazily: strength + this x access_count)",
    )
    archive_threshold: float = Field(
        default=0.05, ge=0.0, le=1.0, description="maintain archives below this decayed score…"
    )
    archive_unused_days: float = Field(
        default=60.0, ge=0.0, description="…when also unused (not said again or retrieved) this long"
    )
    episode_fold_days: float = Field(
        default=30.0, ge=0.0,
        description="maintain archives episodes older than this whose session ended with a delta (0: never)",
    )
    capacity_per_user: int = Field(
        default=0, ge=0, description="live memories per user kept by maintain (0: unlimited)"
    )
    merge_similarity: float = Field(
        default=0.85, ge=0.0, le=1.0, description="cosine for maintain to merge near-duplicates"
    )
    merge_overlap: float = Field(
        default=0.5, ge=0.0, le=1.0, description="and lexical token Jaccard overlap"
    )
    merge_kinds: list[str] = Field(
        default_factory=lambda: ["preference", "fact", "decision", "event"],
        description="kinds maintain may merge into a summary",
    )
    merge_max_group: int = Field(default=8, ge=2, description="at most this many sources per summary")
    maintain_batch: int = Field(default=500, ge=1, description="rows per maintenance transaction")
    reminder_horizon_hours: float = Field(
        default=24.0, ge=0.0, description="reminders() lists what falls due within this window"
    )
    timezone: str | None = Field(
        default=None,
        description="IANA time zone of users without their own (Memory.set_timezone): their days"
        " for 'yesterday', 'Friday' and reminders; None: the system's ($TZ, /etc/localtime), else UTC",
    )
    forget_min_overlap: float = Field(
        default=0.6, gt=0.0, le=1.0,
        description='"forget what I said about X": share of X\'s words a memory must contain',
    )

    @field_validator("path")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            as_zone(value)  # an unknown name is refused here, not at the first reminder
        return value

    @field_validator("store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if value != "sqlite":
            store_backend(value)  # an unknown scheme is refused here, not when the store opens
        return value

    @property
    def store_target(self) -> str | Path:
        """What `engram.store.open.open_store` opens: the `store` URL, or the SQLite file at `path`."""
        return self.path if self.store == "sqlite" else self.store

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url or self.llm_model)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))

    def public_dict(self) -> dict[str, Any]:
        """The effective settings with secrets masked, for `engram config`."""
        data = self.model_dump(mode="json")
        for name, value in data.items():
            if name.endswith("api_key") and value:
                data[name] = "**********"
        if data["store"] != "sqlite":
            data["store"] = redact_url(data["store"])
        return data
