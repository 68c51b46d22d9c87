"""`engram bench …`: retrieval recall on LoCoMo and MADial-Bench, latency and throughput at scale.

The runners live in `engram.bench`; this module parses options and renders tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from engram.cli.render import console

bench_app = typer.Typer(
    name="bench",
    help="Benchmarks: LoCoMo / MADial retrieval recall against baselines, latency at scale.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no <bool> metavars
)

OutOpt = Annotated[Path, typer.Option("--out", "-o", help="folder for the JSON results and the PNG chart")]
KsOpt = Annotated[str, typer.Option("-k", "--ks", help="comma-separated cut-offs")]
SystemsOpt = Annotated[
    str,
    typer.Option(
        "--systems", "-s",
        help="comma-separated: engram, engram-bm25, engram-dense, bm25, dense, rrf",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="engram setting for the engram systems, KEY=VALUE (repeatable)"),
]
BatchOpt = Annotated[
    int, typer.Option("--batch", min=1, help="turns per Memory.add_many call when ingesting (1: per-turn latency)")
]
ALL_SYSTEMS = "engram,engram-bm25,engram-dense,bm25,dense,rrf"


def _fail(message: str) -> None:
    from engram.cli.render import errors

    errors.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(1)


def _hint(message: str) -> None:
    from engram.cli.render import errors

    errors.print(message, markup=False, style="yellow", soft_wrap=True)


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        _fail(f"{what} must be comma-separated integers, not {text!r}")
    if not values or min(values) < 1:
        _fail(f"{what} must be positive integers")
    return values


def _existing(files: list[Path]) -> None:
    """One line and exit 1 for the first path that is not a file."""
    for path in files:
        if not path.is_file():
            _fail(f"{path}: no such file")


def _names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _settings(pairs: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            _fail(f"--set takes KEY=VALUE, not {pair!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


@contextmanager
def _progress(title: str) -> Iterator[Callable[[str], None]]:
    with console.status(title) as status:
        yield lambda message: status.update(f"{title} {message}")


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _all_k(ks: list[int]) -> int:
    return max([k for k in ks if k <= 10] or ks[:1])


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)


def _scores_table(report: Any, title: str, pick: Callable[[Any], Any]) -> Table:
    ak = _all_k(report.ks)
    table = _table(title)
    table.add_column("system", no_wrap=True)
    for k in report.ks:
        table.add_column(f"R@{k}", justify="right", no_wrap=True)
    table.add_column(f"All@{ak}", justify="right", no_wrap=True)
    table.add_column("MRR", justify="right", no_wrap=True)
    best = {
        k: max((pick(s).recall[k] for s in report.systems if pick(s) is not None), default=None)
        for k in report.ks
    }
    for system in report.systems:
        scores = pick(system)
        if scores is None:
            continue
        cells = [system.system]
        for k in report.ks:
            value = scores.recall[k]
            cells.append(f"[bold]{value:.3f}[/]" if value == best[k] else f"{value:.3f}")
        cells += [f"{scores.all_at[ak]:.3f}", f"{scores.mrr:.3f}"]
        table.add_row(*cells)
    return table


def _latency_table(report: Any) -> Table:
    k = max(report.ks)
    table = _table(f"latency, ms (ingest: per document; search: top {k}, then top 5 again)")
    for column in ("system", "ingest p50 / p95", f"top {k} p50 / p95", "top 5 p50 / p95"):
        table.add_column(column, justify="left" if column == "system" else "right", no_wrap=True)
    for system in report.systems:
        i, q, d = system.ingest_ms, system.search_ms, system.search_default_ms
        table.add_row(
            system.system, f"{_ms(i.p50)} / {_ms(i.p95)}", f"{_ms(q.p50)} / {_ms(q.p95)}",
            f"{_ms(d.p50)} / {_ms(d.p95)}" if d else "-",
        )
    return table


def render_retrieval(report: Any) -> None:
    skipped: dict[str, int] = {}
    for corpus in report.corpora:
        for reason, n in corpus.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + n
    console.print(
        f"[bold]{report.benchmark}[/]: {len(report.corpora)} corpora, {report.n_docs:,} documents, "
        f"{report.n_queries:,} queries; {report.wall_s:.1f} s"
        + (f"\n[dim]left out: {', '.join(f'{n} {r}' for r, n in skipped.items())}[/]" if skipped else "")
    )
    if report.embedder:
        cost = report.embed_ms
        console.print(
            f"embedder: {report.embedder} (ms: {cost.get('short', 0):.2f} a short text, "
            f"{cost.get('long', 0):.2f} a long one, {cost.get('batched', 0):.2f} a text in a batch of 64, "
            f"{cost.get('query', 0):.2f} a one-line question)",
            markup=False,
        )
    console.print(_scores_table(report, f"overall (n={report.n_queries})", lambda s: s.overall))
    for category, n in report.queries_by_category.items():
        if n:
            console.print(
                _scores_table(report, f"{category} (n={n})", lambda s, c=category: s.by_category.get(c))
            )
    console.print(_latency_table(report))
    short = [s for s in report.systems if s.stored < report.n_docs]
    for system in short:
        console.print(f"[yellow]{system.system} stored {system.stored:,} of {report.n_docs:,} documents[/]")
    if report.json_path:
        console.print(f"results: {report.json_path}", markup=False)
        if report.png_path:
            console.print(f"chart:   {report.png_path}", markup=False)
        else:
            _hint("no chart: matplotlib is not installed (pip install 'engramdb[bench]')")


@bench_app.command("locomo")
def locomo(
    files: Annotated[list[Path], typer.Argument(help="LoCoMo files (locomo10.json or one conversation per file)")],
    out: OutOpt = Path("bench-results"),
    ks: KsOpt = "1,3,5,10,20",
    systems: SystemsOpt = ALL_SYSTEMS,
    max_sessions: Annotated[
        int | None, typer.Option("--max-sessions", min=1, help="only the first N sessions (smoke runs)")
    ] = None,
    batch: BatchOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Turn-level retrieval recall on LoCoMo (categories 1-4), engram against BM25, dense and RRF."""
    from engram.bench.retrieval import run_locomo

    _existing(files)
    try:
        with _progress("LoCoMo") as progress:
            report = run_locomo(
                files, _names(systems), _ints(ks, "-k"), out_dir=out, max_sessions=max_sessions,
                ingest_batch=batch, engram_settings=_settings(set_), progress=progress,
            )
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    render_retrieval(report)


@bench_app.command("ablation")
def ablation(
    files: Annotated[list[Path], typer.Argument(help="LoCoMo files (locomo10.json or one conversation per file)")],
    out: OutOpt = Path("bench-results"),
    parts: Annotated[
        str | None, typer.Option("--parts", help="comma-separated parts to switch off (default: all)")
    ] = None,
    shuffle: Annotated[bool, typer.Option("--shuffle/--no-shuffle", help="add a run with the turns shuffled")] = True,
    max_sessions: Annotated[
        int | None, typer.Option("--max-sessions", min=1, help="only the first N sessions (smoke runs)")
    ] = None,
    set_: SetOpt = None,
) -> None:
    """LoCoMo R@10 per category with each part of retrieval switched off in turn."""
    from engram.bench.ablation import PARTS, markdown, run_ablation

    _existing(files)
    chosen = None
    if parts:
        names = _names(parts)
        unknown = [n for n in names if n not in PARTS]
        if unknown:
            _fail(f"unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
        chosen = {n: PARTS[n] for n in names}
    try:
        with _progress("LoCoMo ablation") as progress:
            report = run_ablation(
                files, chosen, base_settings=_settings(set_), shuffle_seed=13 if shuffle else None,
                max_sessions=max_sessions, out_dir=out, progress=progress,
            )
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    console.print(f"LoCoMo ablation, {report.n_queries} queries", markup=False)
    console.print(markdown(report), markup=False, soft_wrap=True)


@bench_app.command("zh-simple")
def zh_simple(
    out: OutOpt = Path("bench-results"),
    ks: KsOpt = "1,3,5,10",
    systems: SystemsOpt = ALL_SYSTEMS,
    file: Annotated[Path | None, typer.Option("--file", help="a set of the same shape (default: the bundled one)")] = None,
    set_: SetOpt = None,
) -> None:
    """Chinese simple questions about one user's messages (MemDaily-style), engram against BM25+dense."""
    from engram.bench.retrieval import write_outputs
    from engram.bench.zh_simple import run_zh_simple

    if file is not None:
        _existing([file])
    try:
        with _progress("zh-simple") as progress:
            report = run_zh_simple(
                _names(systems), _ints(ks, "-k"), path=file, engram_settings=_settings(set_), progress=progress
            )
        write_outputs(report, out, "zh-simple")
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    render_retrieval(report)


@bench_app.command("madial")
def madial(
    folder: Annotated[
        Path, typer.Argument(help="MADial folder: memory.jsonl + dialogue.jsonl, or zh/ and en/ of them")
    ],
    lang: Annotated[str | None, typer.Option("--lang", help="zh or en (default: each found)")] = None,
    out: OutOpt = Path("bench-results"),
    ks: KsOpt = "1,3,5,10,20",
    systems: SystemsOpt = ALL_SYSTEMS,
    scene: Annotated[bool, typer.Option("--scene/--no-scene", help="append the event's scene to its text")] = True,
    all_turns: Annotated[
        bool, typer.Option("--all-test-turns", help="one query per test turn (default: the first)")
    ] = False,
    cross: Annotated[
        bool, typer.Option("--cross/--no-cross", help="also Chinese dialogues over English memories and the reverse")
    ] = True,
    batch: BatchOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Memory recall on MADial-Bench: query with the dialogue before the test turn; with both
    languages, also across them (zh-to-en, en-to-zh: the parallel data's memory ids match)."""
    from engram.bench.retrieval import run_madial

    if not folder.is_dir():
        _fail(f"{folder}: no such folder")
    found = [code for code in ("zh", "en") if (folder / code / "memory.jsonl").is_file()]
    langs: list[str | None] = [lang] if lang else found or [None]
    for one in langs:
        try:
            with _progress(f"MADial {one or ''}") as progress:
                report = run_madial(
                    folder, one, _names(systems), _ints(ks, "-k"), out_dir=out, with_scene=scene,
                    all_test_turns=all_turns, ingest_batch=batch, engram_settings=_settings(set_),
                    progress=progress,
                )
        except (ValueError, OSError) as exc:
            _fail(str(exc))
        render_retrieval(report)
    if cross and not lang and found == ["zh", "en"]:
        for asked, held in (("zh", "en"), ("en", "zh")):
            try:
                with _progress(f"MADial {asked}->{held}") as progress:
                    report = run_madial(
                        folder, asked, _names(systems), _ints(ks, "-k"), memories=held, out_dir=out,
                        with_scene=scene, all_test_turns=all_turns, ingest_batch=batch, engram_settings=_settings(set_),
                        progress=progress,
                    )
            except (ValueError, OSError) as exc:
                _fail(str(exc))
            render_retrieval(report)


@bench_app.command("scale")
def scale(
    sizes: Annotated[str, typer.Option("--sizes", help="memories in one scope, comma-separated")] = "10000",
    users_total: Annotated[
        int, typer.Option("--users-total", min=0, help="memories spread over --users users (0: skip)")
    ] = 0,
    users: Annotated[int, typer.Option("--users", min=1)] = 1000,
    adds: Annotated[int, typer.Option("--adds", min=1, help="single adds timed per scope size")] = 200,
    searches: Annotated[int, typer.Option("--searches", min=1, help="searches timed per phase")] = 300,
    batch: Annotated[int, typer.Option("--batch", min=1, help="memories per add_many call")] = 5000,
    store: Annotated[str, typer.Option(
        "--store", help="comma-separated: sqlite, postgres (embedded server), postgresql://URL, qdrant (local mode)"
    )] = "sqlite",
    writers: Annotated[int, typer.Option("--writers", min=0, help="processes adding at once (0: skip)")] = 0,
    writer_adds: Annotated[int, typer.Option("--writer-adds", min=1, help="adds per writing process")] = 200,
    quick: Annotated[bool, typer.Option("--quick", help="small sizes for a smoke run")] = False,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="where the temporary databases go")] = None,
    out: OutOpt = Path("bench-results"),
) -> None:
    """Add and search latency, ingest throughput, memory and disk at 10k-1M memories (synthetic),
    on SQLite, PostgreSQL or Qdrant, and several processes writing at once."""
    from engram.bench.scale import QUICK, run_scale

    if workdir is not None and not workdir.is_dir():
        _fail(f"--workdir {workdir}: no such folder")

    options: dict[str, Any] = {
        "sizes": _ints(sizes, "--sizes"), "users_total": users_total, "users": users,
        "adds": adds, "searches": searches, "stores": [s.strip() for s in store.split(",") if s.strip()],
        "writers": writers, "writer_adds": writer_adds,
    }
    if quick:
        options.update(QUICK)
    with _progress("scale") as progress:
        try:
            report = run_scale(**options, batch=batch, workdir=workdir, out_dir=out, progress=progress)
        except ValueError as exc:
            _fail(str(exc))
    sizes_table = _table(f"scale ({report.wall_s:.0f} s)")
    for column in ("phase", "store", "memories", "users", "ingest/s", "peak RSS MB", "RSS MB", "disk MB", "cross-user"):
        sizes_table.add_column(column, justify="left" if column == "phase" else "right", no_wrap=True)
    times = _table(
        "latency, ms p50/p95 (infer: add with infer=True; cold: a user's first search; restart: "
        "the first after reopening)"
    )
    for column in ("phase", "store", "add", "infer", "search", "cold", "warm", "restart"):
        times.add_column(column, justify="left" if column == "phase" else "right", no_wrap=True)

    def pair(latency: Any) -> str:
        return "" if latency is None else f"{_ms(latency.p50)}/{_ms(latency.p95)}"

    for phase in report.phases:
        sizes_table.add_row(
            phase.name, phase.store, f"{phase.memories:,}", f"{phase.users:,}", f"{phase.ingest_per_s:,.0f}",
            f"{phase.peak_rss_mb:,.0f}", f"{phase.rss_mb:,.0f}", f"{phase.db_mb:,.0f}",
            "" if phase.cross_user_hits is None else str(phase.cross_user_hits),
        )
        times.add_row(
            phase.name, phase.store, pair(phase.add_ms), pair(phase.add_infer_ms), pair(phase.search_ms),
            pair(phase.search_cold_ms), pair(phase.search_warm_ms), pair(phase.search_restart_ms),
        )
    console.print(sizes_table)
    console.print(times)
    for phase in report.phases:
        if phase.add_infer_by_outcome_ms:
            outcomes = ", ".join(
                f"{t.n} {name} {pair(t)}" for name, t in phase.add_infer_by_outcome_ms.items()
            )
            console.print(f"[dim]{phase.name}: infer=True adds by outcome, n p50/p95 → {outcomes}[/]")
    console.print(f"results: {report.json_path}")


@bench_app.command("conversation")
def conversation(
    files: Annotated[list[Path], typer.Argument(help="LoCoMo files (locomo10.json or one conversation per file)")],
    out: OutOpt = Path("bench-results"),
    ks: KsOpt = "1,5,10,20",
    modes: Annotated[str, typer.Option("--modes", help="comma-separated: conversation, raw")] = "conversation,raw",
    labelled: Annotated[
        list[Path] | None,
        typer.Option("--labelled", help="labelled sentences (JSONL) to score the rules on; default: the bundled EN and ZH sets"),
    ] = None,
    set_: SetOpt = None,
) -> None:
    """Each LoCoMo turn said through add() by its speaker: recall@k, turns kept, facts, coverage, latency."""
    from engram.bench.conversation import LABELLED_SETS, run_conversation

    _existing(files)
    try:
        with _progress("conversation") as progress:
            report = run_conversation(
                files, ks=_ints(ks, "-k"), modes=_names(modes), out_dir=out,
                engram_settings=_settings(set_), labelled=labelled or list(LABELLED_SETS), progress=progress,
            )
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    console.print(
        f"[bold]conversation[/]: {', '.join(report.conversations)}; {report.questions} questions; {report.wall_s:.1f} s"
    )
    recall = _table("recall@k (evidence turns among the top k memories)")
    recall.add_column("mode / category", no_wrap=True)
    for k in report.ks:
        recall.add_column(f"R@{k}", justify="right")
    for mode in report.modes:
        recall.add_row(f"[bold]{mode.mode}[/]", *(f"{mode.recall[k]:.3f}" for k in report.ks))
        for name, values in mode.by_category.items():
            recall.add_row(f"  {name} (n={report.questions_by_category.get(name, 0)})",
                           *(f"{values[k]:.3f}" for k in report.ks))
    console.print(recall)
    kept = _table("what add() kept")
    kept.add_column("", no_wrap=True)
    for mode in report.modes:
        kept.add_column(mode.mode, justify="right", no_wrap=True)

    def row(name: str, cell: Callable[[Any], str]) -> None:
        kept.add_row(name, *(cell(mode) for mode in report.modes))

    row("turns said", lambda m: f"{m.turns:,}")
    row("turns kept (any memory)", lambda m: f"{m.turns_kept:.3f}")
    row("episodes", lambda m: f"{m.episodes:,}")
    row("facts (per turn)", lambda m: f"{m.facts:,} ({m.facts_per_turn:.2f})")
    row("observation coverage", lambda m: "-" if m.coverage is None else f"{m.coverage:.3f}")
    row("fact support", lambda m: "-" if m.support is None else f"{m.support:.3f}")
    row("add p50 / p95 ms", lambda m: f"{_ms(m.add_ms.p50)} / {_ms(m.add_ms.p95)}")
    row("search p50 / p95 ms", lambda m: f"{_ms(m.search_ms.p50)} / {_ms(m.search_ms.p95)}")
    console.print(kept)
    if report.labelled:
        rules = _table("rules on labelled sentences")
        for column in ("set", "facts labelled", "produced", "precision", "recall", "subject errors"):
            rules.add_column(column, justify="left" if column == "set" else "right")
        for name, scores in report.labelled.items():
            rules.add_row(
                name, str(scores["labelled"]), str(scores["produced"]), f"{scores['precision']:.3f}",
                f"{scores['recall']:.3f}", str(scores["subject_errors"]),
            )
        console.print(rules)


@bench_app.command("llm")
def llm(
    base_url: Annotated[
        str, typer.Option("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    ],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="model name (default: the server's first)")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", envvar="ENGRAM_LLM_API_KEY", help="when the server wants one")
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="seconds per LLM call (a CPU model: 60-120)")
    ] = 120.0,
    grey_zone: Annotated[
        float, typer.Option("--grey-zone", min=0.0, max=1.0, help="cosine from which the judge is asked")
    ] = 0.5,
    cases: Annotated[
        Path | None, typer.Option("--cases", help="another set, same JSON format as the bundled one")
    ] = None,
    out: OutOpt = Path("bench-results"),
) -> None:
    """A fixed EN/ZH set through a chat model: grounded/ungrounded proposals, JSON validity, judge refusals, latency."""
    from engram.bench.llm_check import run_llm_check
    from engram.errors import EngramError

    try:
        with _progress("LLM check") as progress:
            report = run_llm_check(
                base_url, model, api_key=api_key, timeout=timeout, grey_zone=grey_zone,
                cases_path=cases, out_dir=out, progress=progress,
            )
    except (EngramError, ValueError, OSError) as exc:
        _fail(str(exc))
    table = _table(
        f"{report.model} at {report.base_url}: {report.cases} cases, {report.adds} adds, {report.wall_s:.0f} s"
    )
    table.add_column("what", no_wrap=True)
    table.add_column("count", justify="right", no_wrap=True)
    rows = [
        ("proposals (memories the model proposed)", report.proposals),
        ("  grounded: kept", report.grounded),
        ("  ungrounded: dropped", report.ungrounded),
        ("  invalid items / other language", f"{report.invalid_items} / {report.translated}"),
        ("extraction calls", report.extract_calls),
        ("  valid JSON / invalid JSON / no answer",
         f"{report.json_valid} / {report.json_invalid} / {report.no_answer}"),
        ("judge calls", report.judge_calls),
        ("  refused / invalid / failed", f"{report.judge_refused} / {report.judge_invalid} / {report.judge_failed}"),
    ]
    for what, count in rows:
        table.add_row(what, str(count))
    lat = report.add_latency_ms
    table.add_row("latency per add, ms p50 / p95 / p99", f"{_ms(lat.p50)} / {_ms(lat.p95)} / {_ms(lat.p99)}")
    console.print(table)
    for case in report.results:
        for line in case.stored:
            console.print(f"{case.id} stored: {line}", markup=False, highlight=False)
        for line in case.dropped:
            console.print(f"{case.id} {line}", markup=False, highlight=False)
    console.print(f"results: {report.json_path}")
