"""`engram chat --user U`: an interactive terminal chat with memory (engram.agent.MemoryAgent).

Lines starting with a slash are commands, in English or Chinese:

    /memory  /查看记忆          what is remembered about you
    /forget TEXT  /删除记忆 TEXT  delete the memories about TEXT, for real
    /capsule  /胶囊             the memory capsule injected into every turn
    /usage                     LLM calls and tokens so far
    /end  /结束                 end the session (compress it) and start a new one
    /quit  /exit  /退出          end the session and leave (also Ctrl-D)
    /help  /帮助

Everything else goes to the configured LLM with your memory in its system
prompt; each turn is recorded and mined for memories in the background.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

import engram.cli.render as render
from engram.cli.render import console

_COMMANDS = {
    "/memory": "memory", "/memories": "memory", "/查看记忆": "memory", "/我的记忆": "memory",
    "/forget": "forget", "/删除记忆": "forget", "/忘记": "forget",
    "/capsule": "capsule", "/胶囊": "capsule", "/记忆胶囊": "capsule",
    "/usage": "usage", "/用量": "usage",
    "/end": "end", "/结束": "end", "/结束会话": "end",
    "/quit": "quit", "/exit": "quit", "/q": "quit", "/退出": "quit",
    "/help": "help", "/?": "help", "/帮助": "help",
}
_BY_LENGTH = sorted(_COMMANDS, key=len, reverse=True)

HELP = """commands:
  /memory, /查看记忆            what I remember about you
  /forget TEXT, /删除记忆 TEXT  forget what you said about TEXT
  /capsule, /胶囊               the memory capsule put into every turn
  /usage                        LLM calls and tokens so far
  /end, /结束                   end this session (it is compressed) and start a new one
  /quit, /退出                  end the session and leave (Ctrl-D too)"""


def parse_command(line: str) -> tuple[str, str] | None:
    """(command, argument) for a slash command; ("unknown", line) for an unknown one; None for chat.

    "/删除记忆 我喜欢蓝色" and "/删除记忆我喜欢蓝色" are the same command.
    """
    text = line.strip()
    if not text.startswith("/"):
        return None
    lowered = text.lower()
    for name in _BY_LENGTH:
        if lowered.startswith(name):
            rest = text[len(name):]
            if rest and name.isascii() and rest[0].isalnum() and rest[0].isascii():
                continue  # "/endless" is not "/end"
            return _COMMANDS[name], rest.strip().lstrip(":：").strip()
    return "unknown", text


def chat(
    user: Annotated[str, typer.Option("--user", "-u", help="whose memory (required)")],
    agent: Annotated[str | None, typer.Option("--agent", help="narrow to one agent")] = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="resume this session")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (else ENGRAM_LLM_BASE_URL)")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="chat model (else ENGRAM_LLM_MODEL)")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="seconds per LLM call (else ENGRAM_LLM_TIMEOUT)")] = None,
    system: Annotated[str | None, typer.Option("--system", help="the assistant's persona (system prompt)")] = None,
    foreground: Annotated[bool, typer.Option("--foreground", help="extract memories before each reply is shown")] = False,
) -> None:
    """Chat in the terminal with memory, using the configured LLM (/help lists the slash commands)."""
    from engram.cli.options import settings as base_settings
    from engram.errors import EngramError
    from engram.memory import Memory

    overrides: dict[str, Any] = {"llm_base_url": base_url, "llm_model": model, "llm_timeout": timeout}
    settings = base_settings()
    settings = settings.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    if not settings.llm_enabled:
        console.print("[red]No LLM configured.[/] engram chat needs an OpenAI-compatible chat endpoint:")
        console.print(
            "  export ENGRAM_LLM_BASE_URL=http://127.0.0.1:11434/v1   # Ollama, vLLM, llama.cpp, DeepSeek, Qwen…\n"
            "  export ENGRAM_LLM_MODEL=qwen2.5                       # and ENGRAM_LLM_API_KEY if it needs one\n"
            "or pass --base-url/--model, or set [llm] base_url/model in ~/.engram/config.toml.\n"
            "Without an LLM engram still remembers (rules): try `engram add` and `engram search`.",
            markup=False, soft_wrap=True,
        )
        raise typer.Exit(2)
    for noisy in ("httpx", "httpx2", "openai"):  # a line per HTTP request is no chat output
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        memory = Memory(settings=settings)
    except (EngramError, ValueError) as exc:
        render.errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    try:
        _repl(memory, user, agent, session, system, background=not foreground)
    except EngramError as exc:  # e.g. an endpoint with no model that cannot list its models
        render.errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        memory.close()


def _repl(memory: Any, user: str, agent_id: str | None, session: str | None, system: str | None,
          *, background: bool) -> None:
    from engram.agent import MemoryAgent
    from engram.errors import EngramError

    bot = MemoryAgent(memory, user_id=user, agent_id=agent_id, session_id=session,
                      system_prompt=system, background=background)
    console.print(Text(f"engram chat — {user}, session {bot.session_id}, model {bot.llm.model}. /help for commands.",
                       style="dim"))
    while True:
        try:
            line = console.input("[bold green]you>[/] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            line = "/quit"
        if not line.strip():
            continue
        command = parse_command(line)
        try:
            if command is None:
                line = _control(memory, bot, line)  # "暂停记忆", "Delete all my memories.", "yes"
                if not line:
                    continue
                reply = bot.chat(line)
                console.print(Text("assistant> ", style="bold cyan") + Text(reply))
                continue
            name, arg = command
            if name == "quit":
                _end(memory, bot, leaving=True)
                return
            _slash(memory, bot, name, arg)
        except EngramError as exc:  # LLMError included: the message was kept, the chat goes on
            render.errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)


def _control(memory: Any, bot: Any, line: str) -> str:
    """Commands said in plain words run now, in the foreground, and their confirmation is shown
    ("记忆已暂停…", "This would permanently delete…"); returns what is left for the LLM."""
    from engram.control import split_commands
    from engram.user_state import pending

    awaiting = pending(memory.store, bot.user_id) is not None
    commands, rest = split_commands(line, awaiting=awaiting)
    if not commands:
        return line
    memory.flush(timeout=max(5.0, memory.settings.llm_timeout * 2))  # what was just said counts too
    events = memory.add(line, user_id=bot.user_id, agent_id=bot.agent_id, session_id=bot.session_id)
    for message in dict.fromkeys(e.command.message for e in events if e.command is not None):
        console.print(Text("memory> ", style="bold magenta") + Text(message))
    return rest.strip()


def _slash(memory: Any, bot: Any, name: str, arg: str) -> None:
    user, agent_id = bot.user_id, bot.agent_id
    if name == "help":
        console.print(HELP, markup=False)
    elif name == "unknown":
        console.print(f"unknown command {arg!r}", markup=False)
        console.print(HELP, markup=False)
    elif name == "memory":
        if not memory.flush(timeout=max(5.0, memory.settings.llm_timeout * 2)):
            console.print("[dim](still extracting from the last turns)[/]")
        render.print_grouped(memory.view(user_id=user, agent_id=agent_id), user)
    elif name == "forget":
        if not arg:
            console.print("usage: /forget TEXT  (/删除记忆 内容)", markup=False)
            return
        memory.flush(timeout=max(5.0, memory.settings.llm_timeout * 2))  # forget what was just said too
        events = memory.forget(arg, user_id=user, agent_id=agent_id)
        if events:
            console.print(render.events_table(events, title=f"forgotten ({len(events)})"))
        else:
            console.print(f"nothing remembered about {arg!r}; nothing deleted", markup=False)
    elif name == "capsule":
        built = memory.capsule(user, agent_id=agent_id)
        render.injected_text(built.text, built.token_count, built.budget, built.encoding, "capsule")
    elif name == "usage":
        usage = memory.llm_usage()
        total = usage.get("total", {})
        console.print(
            f"LLM calls {total.get('calls', 0)} (failed {total.get('failures', 0)}), "
            f"tokens {total.get('prompt_tokens', 0)} prompt + {total.get('completion_tokens', 0)} completion, "
            f"cost {total.get('cost', 0.0):.4f}", markup=False,
        )
        tasks = usage.get("tasks", {})
        console.print(
            f"memories the LLM proposed: {tasks.get('extract_grounded', 0)} kept, "
            f"{tasks.get('extract_ungrounded', 0)} dropped as not said by you; "
            f"judgements refused: {tasks.get('judge_refused', 0)}", markup=False,
        )
    elif name == "end":
        _end(memory, bot, leaving=False)


def _end(memory: Any, bot: Any, *, leaving: bool) -> None:
    console.print("[dim]saving this session…[/]")
    old = bot.session_id
    delta = bot.end(timeout=max(10.0, memory.settings.llm_timeout * 3), restart=not leaving)
    if delta.text:
        console.print(Text(delta.text))
    console.print(f"[dim]session {old} ended ({len(delta.lines)} lines remembered).[/]")
    if not leaving:
        console.print(f"[dim]new session {bot.session_id}.[/]")
