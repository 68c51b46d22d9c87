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

Every phase records ingest throughput, peak RSS of the process so far
(`resource.getrusage`, so it only grows from phase to phase) and the size of
the database files. The memories are varied English sentences with ~20%
Chinese, generated from templates with random names, places and numbers.
"""

from __future__ import annotations

import json
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
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
    peak_rss_mb: float
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


def db_size_mb(path: Path) -> float:
    total = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    return total / (1024 * 1024)


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = call()
    return (time.perf_counter() - began) * 1000.0, result


def _open(path: Path, embedder: Any) -> Any:
    from engram.config import Settings
    from engram.memory import Memory

    return Memory(settings=Settings(path=path, reinforce=False), embedder=embedder)


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
    workdir: Path, progress: Progress | None = None,
) -> ScalePhase:
    rng = random.Random(seed)
    path = workdir / f"single-{size}.db"
    memory = _open(path, embedder)
    user = "scale-user"
    try:
        ingest_s = _bulk(memory, rng, size, [user], batch, progress, f"single scope {size:,}")
        if progress:
            progress(f"single scope {size:,}: {adds} single adds (infer=False, then infer=True)")
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
            progress(f"single scope {size:,}: {searches} searches")
        found = [_timed(lambda q=q: memory.search(q, user_id=user, limit=10))[0] for q in queries(searches, rng)]
    finally:
        memory.close()
    phase = ScalePhase(
        name=f"single-scope-{size}", memories=size, users=1, batch=batch, ingest_s=ingest_s,
        ingest_per_s=size / ingest_s if ingest_s else 0.0, add_ms=latency(raw),
        add_infer_ms=latency(inferred), add_infer_extracted_ms=latency(extracted),
        add_infer_actions=dict(actions), search_ms=latency(found),
        add_infer_by_outcome_ms={k: latency(v) for k, v in sorted(by_outcome.items())},
        peak_rss_mb=peak_rss_mb(), db_mb=db_size_mb(path),
    )
    path.unlink(missing_ok=True)
    return phase


def multi_user(
    total: int, users: int, *, searches: int, batch: int, seed: int, embedder: Any,
    workdir: Path, progress: Progress | None = None,
) -> ScalePhase:
    rng = random.Random(seed + 1)
    path = workdir / f"multi-{total}.db"
    memory = _open(path, embedder)
    names = [f"user-{i:05d}" for i in range(users)]
    try:
        ingest_s = _bulk(memory, rng, total, names, batch, progress, f"{total:,} over {users:,} users")
        if progress:
            progress(f"{total:,} over {users:,} users: {searches} searches of random users")
        picked = rng.sample(names, min(searches, users))
        texts = queries(2 * len(picked), rng)
        cold, warm = [], []
        for i, user in enumerate(picked):
            first, second = texts[2 * i], texts[2 * i + 1]
            cold.append(_timed(lambda q=first, u=user: memory.search(q, user_id=u, limit=10))[0])
            warm.append(_timed(lambda q=second, u=user: memory.search(q, user_id=u, limit=10))[0])
    finally:
        memory.close()
    phase = ScalePhase(
        name=f"multi-user-{total}", memories=total, users=users, batch=batch, ingest_s=ingest_s,
        ingest_per_s=total / ingest_s if ingest_s else 0.0, search_ms=latency(cold + warm),
        search_cold_ms=latency(cold), search_warm_ms=latency(warm),
        peak_rss_mb=peak_rss_mb(), db_mb=db_size_mb(path),
    )
    path.unlink(missing_ok=True)
    return phase


QUICK = {"sizes": (2_000,), "users_total": 10_000, "users": 20, "adds": 50, "searches": 50}


def run_scale(
    sizes: Sequence[int] = (10_000,),
    users_total: int = 0,
    users: int = 1_000,
    *,
    adds: int = 200,
    searches: int = 300,
    batch: int = 5_000,
    seed: int = 0,
    workdir: str | Path | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> ScaleReport:
    """Single-scope phases for each of `sizes`, then a multi-user phase when `users_total` > 0.

    Databases go to a temporary folder under `workdir` (default: the system's)
    and are deleted after each phase. With `out_dir`, writes ``scale.json``.
    """
    from engram.providers.embedders import WordLlamaEmbedder

    embedder = WordLlamaEmbedder()
    embedder.embed(["warm up"])
    report = ScaleReport(started_at=datetime.now(UTC), python=sys.version.split()[0])
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="engram-scale-", dir=workdir) as tmp:
        for size in sizes:
            report.phases.append(
                single_scope(size, adds=adds, searches=searches, batch=batch, seed=seed,
                             embedder=embedder, workdir=Path(tmp), progress=progress)
            )
        if users_total > 0:
            report.phases.append(
                multi_user(users_total, users, searches=searches, batch=batch, seed=seed,
                           embedder=embedder, workdir=Path(tmp), progress=progress)
            )
    report.wall_s = time.perf_counter() - began
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "scale.json"
        report.json_path = str(path)
        path.write_text(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=1), encoding="utf-8")
    return report
