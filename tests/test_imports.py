"""No import cycle between situate modules: every import statement (at module level, in a
function, under TYPE_CHECKING) is an edge, and the graph of src/situate has no cycle."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str, modules: set[str]) -> set[str]:
    """The situate modules ``path`` imports: each one named and the packages above it (importing
    ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too), but for the packages ``path`` is
    in: Python has imported those before it (and so the root's notebook API, which it imports
    only on first attribute access, is no edge either)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            named.add(base)
            named.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    found = set()
    for target in named:
        parts = target.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    inside = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return {m for m in found if m in modules and m != name and m not in inside}


def import_graph(root: Path = SRC / "situate") -> dict[str, set[str]]:
    paths = {module_name(p): p for p in root.rglob("*.py")}
    return {name: imports_of(path, name, set(paths)) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle through each module that lies on any (found by BFS back to itself)."""
    found: list[list[str]] = []
    on_a_cycle: set[str] = set()
    for start in sorted(graph):
        if start in on_a_cycle:
            continue
        came_from = {start: None}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if start in graph[node]:
                path = [node]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                cycle = [*reversed(path), start]
                on_a_cycle.update(cycle)
                found.append(cycle)
                break
            for nxt in sorted(graph[node] - came_from.keys()):
                came_from[nxt] = node
                queue.append(nxt)
    return found


def test_the_cycle_finder_finds_a_function_level_import(tmp_path: Path):
    pkg = tmp_path / "situate"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from situate.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import situate.a\n")
    (pkg / "d.py").write_text("from situate import c\n")  # imports into the cycle, not on it
    global SRC
    SRC, saved = tmp_path, SRC
    try:
        graph = import_graph(pkg)
    finally:
        SRC = saved
    assert graph["situate.a"] == {"situate.sub", "situate.sub.b"}
    assert graph["situate.sub.b"] == {"situate.c"}
    assert cycles(graph) == [["situate.a", "situate.sub.b", "situate.c", "situate.a"]]


def test_no_import_cycle_between_situate_modules():
    found = cycles(import_graph())
    assert found == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_only_the_entry_point_imports_the_cli():
    importers = [m for m, targets in import_graph().items() if "situate.cli" in targets]
    assert importers == []


def situate_names(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` of each ``from situate... import name`` in ``path``."""
    return [
        (node.module, alias.name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "situate"
        for alias in node.names
    ]


def test_the_benchmarks_and_docs_scripts_import_what_situate_has():
    """No test runs ``make bench``: a name moved out of a module (``compose`` left
    ``situate.cli`` for ``situate.config``) must not break a benchmark unseen."""
    import importlib.util

    scripts = sorted((SRC.parent / "benchmarks").glob("*.py")) + sorted(
        (SRC.parent / "docs").glob("*.py")
    )
    missing = []
    for script in scripts:
        for module, name in situate_names(script):
            found = importlib.import_module(module)
            if not hasattr(found, name) and importlib.util.find_spec(f"{module}.{name}") is None:
                missing.append(f"{script.name}: from {module} import {name}")
    assert len(scripts) > 10 and missing == []


def package_graph() -> dict[str, set[str]]:
    """Each folder (or top-level module) of src/situate -> the others its modules import."""
    graph: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        home = name.split(".")[1] if "." in name else name
        found = {t.split(".")[1] for t in targets if "." in t}
        graph.setdefault(home, set()).update(found - {home})
    return graph


def test_the_paid_layer_sits_between_the_stages_that_pay_and_the_vendors():
    """Stages -> paid/ (retry, rate limits, budget, schedule, paid calls, the API adapter base)
    -> providers/ (one module per vendor); nothing below imports what is above it."""
    graph = package_graph()
    paying = {"contexts", "judging", "questions", "embedding", "reranking", "llm"}
    assert graph["providers"] & (paying | {"paid"}) == set()
    assert graph["paid"] & paying == set()
    within = {
        p: graph[p] & (paying | {"paid", "providers"}) for p in paying | {"paid", "providers"}
    }
    assert cycles(within) == []
