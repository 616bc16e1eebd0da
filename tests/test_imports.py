"""No import cycle between situate modules: every import statement (at module level, in a
function, under TYPE_CHECKING) is an edge, and the graph of src/situate has no cycle."""

from __future__ import annotations

import ast
import re
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
    ``situate.cli`` for ``situate.config.compose``) must not break a benchmark unseen."""
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


def test_no_cycle_between_packages():
    """Folder level: ``situate.money``, ``situate.paid``, ... and each top-level module a node of
    its own; an import of any module of one by any module of another is an arrow."""
    found = cycles(package_graph())
    assert found == [], "cycles between packages:\n" + "\n".join(" -> ".join(c) for c in found)


ARCHITECTURE = SRC.parent / "docs" / "architecture.md"
ROW = re.compile(r"^\| (\d+) ([a-z]+) \| (.*) \| ([0-9-]+) \|$")


def layer_table(text: str) -> list[tuple[str, set[str], str]]:
    """The rows of the layer table under ``## Layers``: (number and name, the packages and
    top-level modules of the row as ``package_graph`` names them, what it may import)."""
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if match := ROW.match(line):
            names = re.findall(r"`([^`]+)`", match[3])
            nodes = {
                "situate" if n == "__init__.py" else n.removesuffix("/").removesuffix(".py")
                for n in names
            }
            rows.append((f"{match[1]} {match[2]}", nodes, match[4]))
    return rows


def layer_problems(graph: dict[str, set[str]], rows: list[tuple[str, set[str], str]]) -> list[str]:
    """Each import from a layer to one above it, each package or module in no row or in two,
    each row naming one that does not exist, and each 'may import' that is not 'itself and
    below'."""
    problems = []
    layer_of: dict[str, int] = {}
    for i, (layer, nodes, may) in enumerate(rows):
        below = f"{i + 1}-{len(rows)}" if i + 1 < len(rows) else f"{len(rows)}"
        if may != below:
            problems.append(f"layer {layer} may import {may}: itself and below is {below}")
        if not layer.startswith(f"{i + 1} "):
            problems.append(f"layer {layer} is row {i + 1}")
        for node in sorted(nodes):
            if node in layer_of:
                problems.append(f"{node} is in layer {rows[layer_of[node]][0]} and {layer}")
            elif node not in graph:
                problems.append(f"layer {layer} names {node}, which src/situate does not have")
            layer_of.setdefault(node, i)
    problems += [f"{node} is in no layer" for node in sorted(graph.keys() - layer_of.keys())]
    for node, targets in sorted(graph.items()):
        for target in sorted(targets):
            if node in layer_of and target in layer_of and layer_of[target] < layer_of[node]:
                problems.append(
                    f"{node} (layer {rows[layer_of[node]][0]}) imports {target} "
                    f"(layer {rows[layer_of[target]][0]}, above it)"
                )
    return problems


def test_every_import_between_layers_points_down_as_the_architecture_table_says():
    rows = layer_table(ARCHITECTURE.read_text(encoding="utf-8"))
    problems = layer_problems(package_graph(), rows)
    assert len(rows) >= 5 and problems == [], "\n".join(problems)


def test_the_layer_check_finds_an_upward_import_a_missing_and_an_unknown_package():
    text = (
        "# x\n\n## Layers\n\n| layer | names | may import layers |\n|---|---|---|\n"
        "| 1 top | `cli.py`, `report/` | 1-3 |\n| 2 middle | `study/`, `gone/` | 2-3 |\n"
        "| 3 bottom | `money/`, `__init__.py` | 3 |\n\n## Next\n\n| 4 extra | `x/` | 4 |\n"
    )
    rows = layer_table(text)
    assert rows == [
        ("1 top", {"cli", "report"}, "1-3"),
        ("2 middle", {"study", "gone"}, "2-3"),
        ("3 bottom", {"money", "situate"}, "3"),
    ]
    graph = {
        "cli": {"report", "money"},
        "report": {"study"},
        "study": {"money"},
        "money": {"report"},  # upward
        "situate": set(),
        "paid": set(),  # in no layer
    }
    assert layer_problems(graph, rows) == [
        "layer 2 middle names gone, which src/situate does not have",
        "paid is in no layer",
        "money (layer 3 bottom) imports report (layer 1 top, above it)",
    ]
