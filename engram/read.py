"""The read path, top to bottom: retrieve ─► rescore ─► reinforce ─► show.

Retrieval and rescoring are engram.retrieve's (lexical ∥ dense ∥ time → fuse → rescore by
importance, recency, use); this module adds what a search does around them: reinforce what was
returned (unless the user paused memory), attach a clarifying question to disputed memories,
and redact again on the way out (engram.display).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from engram import disputes, when
from engram.models import Filters, SearchResult, Status, as_utc, utcnow
from engram.store.base import Scope
from engram.user_state import is_paused, local_time

if TYPE_CHECKING:  # pragma: no cover
    from engram.retrieve import Retriever
    from engram.services import Services

_LIVE_DEFAULT = Filters(status=[Status.ACTIVE, Status.DISPUTED])


def live(filters: Filters) -> Filters:
    """Reads default to live memories: active and disputed (a disputed memory comes back
    with its clarifying question). "As of" a moment, superseded versions count too."""
    if not filters.model_fields_set:  # no filters at all: the shared default
        return _LIVE_DEFAULT
    if "status" in filters.model_fields_set:
        return filters
    statuses = [Status.ACTIVE, Status.DISPUTED]
    if filters.as_of is not None:
        statuses.append(Status.SUPERSEDED)
    return filters.model_copy(update={"status": statuses})


def search(
    services: Services, retriever: Retriever, scope: Scope, query: str, filters: Filters,
    limit: int, now: datetime | None, threshold: float | None = None,
) -> list[SearchResult]:
    """The `limit` memories most relevant to `query` (validated by the facade), as shown;
    with `threshold`, only those whose absolute `relevance` reaches it."""
    store, settings, display = services.store, services.settings, services.display
    at = utcnow()
    reference = at if now is None else as_utc(now)
    if when.mentions_time(query):  # its days are the user's ("yesterday" in Shanghai)
        reference = local_time(store, settings, scope.user_id, at if now is None else now)
    # retrieve and rescore
    results = retriever.search(scope, query, live(filters), limit, at, reference)
    if threshold is not None:
        results = [r for r in results if r.relevance >= threshold]
    # reinforce: a use, unless memory is paused
    if settings.reinforce and results and not is_paused(store, scope.user_id):
        store.record_access([r.memory.id for r in results], at)
    # show
    for result in results:
        if result.memory.status is Status.DISPUTED:
            result.clarification = display.clarification(disputes.clarification_for(store, result.memory))
        result.memory = display.item(result.memory)
    return results
