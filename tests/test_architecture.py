"""The layering of docs/architecture.md, checked on the source: dependencies point one way.

Every import statement counts (module level, inside functions, under TYPE_CHECKING), as in
../shared/tools/import_cycles.py; the graph logic is repeated here so the test needs nothing
outside the repository.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "engram"


def _interface(module: str) -> bool:
    """The interface layer (and the package's own exports): the only importers of engram.memory."""
    return module in ("engram", "engram.agent", "engram.aio", "engram.__main__") or module.split(".")[:2] in (
        ["engram", "cli"], ["engram", "bench"], ["engram", "service"],
    )


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the engram modules it imports (resolved to the longest module that exists)."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target != "engram":
                    edges[name].add(target)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "engram"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from engram.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import engram.a\n")
    (pkg / "d.py").write_text("import engram.a\n")
    assert _cycles(_imports(_modules(pkg))) == [["engram.a", "engram.c", "engram.sub.b"]]


def test_engram_has_no_import_cycles():
    assert _cycles(_imports(_modules())) == []


def test_only_interfaces_import_the_memory_facade():
    edges = _imports(_modules())
    assert sorted(m for m, targets in edges.items() if "engram.memory" in targets and not _interface(m)) == []


def test_no_private_name_is_imported_across_modules():
    taken = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engram"):
                taken += [f"{name} takes {a.name}" for a in node.names if a.name.startswith("_")
                          and not a.name.startswith("__")]
    assert taken == []


def test_the_facade_stays_small():
    lines = (PACKAGE / "memory.py").read_text(encoding="utf-8").count("\n")
    assert lines < 500, f"engram/memory.py has {lines} lines: move the work into the module that owns it"


# docs/architecture.md's layers, lowest first; a module imports only its own layer and those below
LAYERS = {
    "models": ("engram.errors", "engram.kinds", "engram.models", "engram.config"),
    "services": (
        "engram.store", "engram.providers", "engram.privacy", "engram.sanitize", "engram.text",
        "engram.tokens", "engram.when", "engram.templates", "engram.records", "engram.display",
        "engram.services", "engram.user_state", "engram.validate", "engram.llm_calls", "engram.compat",
        "engram.dialogue", "engram.when_said", "engram.blas", "engram.at_exit", "engram.animals",
        "engram.relatives", "engram.slots", "engram.whose",
    ),
    "features": (
        "engram.extract", "engram.reconcile", "engram.retrieve", "engram.lifecycle", "engram.capsule", "engram.context",
        "engram.compress_llm", "engram.llm", "engram.disputes", "engram.reminders", "engram.portability",
        "engram.queue", "engram.session", "engram.control", "engram.write", "engram.read", "engram.deletion",
        "engram.episodes", "engram.grounding", "engram.commands", "engram.reembed", "engram.migrate", "engram.graph",
        "engram.dialogue_rank", "engram.diversity", "engram.fusion", "engram.embed_behind",
    ),
    "facade": ("engram.memory", "engram.aio"),
    "interfaces": ("engram.cli", "engram.agent", "engram.bench", "engram.__main__", "engram.service", "engram.client"),
}


def _layer(module: str) -> int:
    if module == "engram":
        return len(LAYERS) - 1  # the package's exports sit with the interfaces
    for rank, prefixes in enumerate(LAYERS.values()):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")


def test_layers_point_one_way():
    edges = _imports(_modules())
    upward = sorted(f"{m} -> {t}" for m, targets in edges.items() for t in targets if _layer(t) > _layer(m))
    assert upward == []


def test_the_code_passes_its_linter():
    """ruff with the rules of pyproject.toml (pyflakes, pyupgrade, bugbear): an unused import,
    an undefined name or a zip of unequal lengths fails here, not in review."""
    import subprocess
    import sys

    root = PACKAGE.parent
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "engram", "tests", "benchmarks", "scripts"],
        capture_output=True, text=True, cwd=root,
    )
    assert run.returncode == 0, run.stdout + run.stderr
