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
from engram.kinds import EPISODE_KEY, RESTATED_KEY
from engram.models import Filters, MemoryItem, SearchResult, Source, Status, as_utc, utcnow
from engram.store.base import Scope
from engram.user_state import is_paused, local_time

if TYPE_CHECKING:  # pragma: no cover
    from engram.retrieve import Retriever
    from engram.services import Services

_LIVE_DEFAULT = Filters(status=[Status.ACTIVE, Status.DISPUTED])
REDUNDANT_MARGIN = 5  # results read past `limit`, for those that say what a better one says
# a fact stands for its episode unless the episode is this much more relevant (absolute relevance)
_FACT_SAYS_LESS = 0.25


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
    # retrieve and rescore; a fact and the episode it was drawn from say one thing: the fact
    # stands for both, so the top `limit` says `limit` things
    found = retriever.search(scope, query, live(filters), limit, at, reference, spare=min(limit, REDUNDANT_MARGIN))
    results = distinct(found)[:limit]
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


def distinct(results: list[SearchResult]) -> list[SearchResult]:
    """`results` with each turn said once: an episode and the facts drawn from it say the same,
    so the facts stand for it (concise, reconciled statements that carry their disputes; the
    episode stays reachable by `provenance`), the first of them at the group's best rank and score.
    Facts drawn from one turn say different things, and each is its own result ("I'm a data
    scientist at Spotify" found by "what is my job?": the job and the employer).

    Unless the episode matched on words its facts lack: "I'm vegetarian and I live in Lisbon"
    found by "where do I live?" is not shown as "User is vegetarian." (its Lisbon fact was
    superseded), but as said, and then it stands for its facts."""
    def turn(result: SearchResult) -> str | None:
        item = result.memory
        said = item.id if item.source is Source.EPISODE else item.metadata.get(EPISODE_KEY)
        return said if isinstance(said, str) else None

    best_fact: dict[str, SearchResult] = {}
    episodes: dict[str, SearchResult] = {}
    for result in results:
        said = turn(result)
        if said is None:
            continue
        if result.memory.source is Source.EPISODE:
            episodes.setdefault(said, result)
        else:
            best_fact.setdefault(said, result)
    verbatim = {  # the episodes shown as said
        said for said, episode in episodes.items()
        if said not in best_fact or best_fact[said].relevance < episode.relevance - _FACT_SAYS_LESS
    }
    out: list[SearchResult] = []
    seen: set[str] = set()
    for result in results:
        said = turn(result)
        if said is None:
            out.append(result)
            continue
        if said in verbatim:
            if said not in seen:
                seen.add(said)
                episode = episodes[said]
                episode.score = max(episode.score, result.score)
                out.append(episode)
            continue
        if said not in seen:  # the group's first: its best fact, at the group's best rank
            seen.add(said)
            lead = best_fact[said]
            lead.score = max(lead.score, result.score)
            out.append(lead)
        elif result.memory.source is not Source.EPISODE and result is not best_fact[said]:
            out.append(result)  # (an episode: its facts say it)
    return out


def provenance(services: Services, item: MemoryItem) -> list[MemoryItem]:
    """The episodes `item` was drawn from ("why do you think that?"), as shown: the turn that
    first said it, then those that said it again, oldest first; none for an episode itself,
    and none that was deleted."""
    said = [item.metadata.get(EPISODE_KEY), *item.metadata.get(RESTATED_KEY, ())]
    ids = list(dict.fromkeys(e for e in said if isinstance(e, str)))
    found = {e.id: e for e in services.store.get_many(ids)} if ids else {}
    return [services.display.item(found[e]) for e in ids if e in found]
