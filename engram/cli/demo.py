"""`engram demo`: a two-session story in English and Chinese, told to a real database.

Session 1 states preferences and facts and ends with a goodbye (its delta is
printed); the process "restarts" (the engine is closed and reopened on the
same file); session 2 changes one fact and is ended explicitly; after another
restart the questions are answered from what was remembered, and the seed's
verification flow is shown: the capsule, and the context a new session gets
for "what is my favourite colour?" (it contains blue / 蓝色).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

import engram.cli.render as render
from engram.cli.render import console
from engram.config import Settings
from engram.memory import Memory

STORIES = {
    "en": {
        "user": "alice",
        "session_1": [
            "Please remember my favourite colour is blue.",
            "I prefer reports in Markdown with charts.",
            "I live in Berlin.",
            "I'm a data engineer and I work at Acme.",
            "I hate long meetings.",
            "What's the weather like today?",
            "Thanks, bye!",
        ],
        "session_2": ["I moved to Lisbon last month."],
        "questions": ["Where do I live?", "What is my favourite colour?", "How should reports look?"],
        "verify": "What is my favourite colour?",
    },
    "zh": {
        "user": "xiaoming",
        "session_1": [
            "请记住我最喜欢的颜色是蓝色",
            "我更喜欢用Markdown写报告，并附上数据图表",
            "我住在北京",
            "我是软件工程师",
            "我讨厌开长会",
            "今天天气怎么样？",
            "好的，再见",
        ],
        "session_2": ["我搬到上海了"],
        "questions": ["我住在哪里？", "我最喜欢什么颜色？", "报告应该用什么格式？"],
        "verify": "我最喜欢的颜色是什么？",
    },
}


def _session(settings: Settings, user: str, session: str, lines: list[str]) -> None:
    with Memory(settings=settings) as memory:
        for line in lines:
            console.print(f"[bold]{user}[/] › {line}")
            events = memory.add(line, user_id=user, session_id=session)
            if events:
                console.print(render.events_table(events))
            else:
                console.print("  [dim](nothing to remember)[/]")
        delta = memory.end_session(user, session)  # idempotent: after a goodbye it returns that delta
        how = f"ended by {delta.end_reason}" if delta.end_reason else "ended"
        console.print(Panel(Text(delta.text or "(nothing new)"), title=f"session {session} {how}: delta", expand=False))


def run_demo(db: Path | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="engram-demo-") as tmp:
        path = db or Path(tmp) / "demo.db"
        settings = Settings(path=path)
        console.print(Panel.fit(f"engram demo — offline, embedded default\ndatabase: {path}"))
        for language, story in STORIES.items():
            user = story["user"]
            console.print(Rule(f"[bold]{language}: session 1[/]"))
            _session(settings, user, f"{language}-1", story["session_1"])
            console.print(Rule(f"[bold]{language}: restart, session 2[/]"))
            _session(settings, user, f"{language}-2", story["session_2"])
            console.print(Rule(f"[bold]{language}: restart, ask[/]"))
            with Memory(settings=settings) as memory:
                for question in story["questions"]:
                    results = memory.search(question, user_id=user, limit=3)
                    console.print(render.results_table(results, title=question))
                console.print(render.memories_table(memory.get_all(user_id=user), title="active memories"))
                superseded = memory.get_all(user_id=user, filters={"status": "superseded"})
                console.print(render.memories_table(superseded, title="superseded (kept as history)"))
                for item in superseded:
                    console.print(render.history_table(memory.history(item.id), title=f"history: {item.content}"))
            console.print(Rule(f"[bold]{language}: restart, new session: the capsule and the context[/]"))
            with Memory(settings=settings) as memory:
                capsule = memory.capsule(user)
                console.print(Panel(Text(capsule.text), title=f"capsule: {capsule.token_count}/{capsule.budget} tokens", expand=False))
                session = memory.session(user, f"{language}-3")
                context = session.context(story["verify"])
                console.print(f"[bold]{user}[/] › {story['verify']}")
                console.print(Panel(Text(context.text), title=f"context injected: {context.token_count}/{context.budget} tokens", expand=False))
