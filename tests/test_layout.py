"""Tests mirror src/: a package's tests sit in ``tests/<package>/``, a top-level module's at the
top of tests/ (named ``test_<module>.py`` or ``test_<module>_<aspect>.py``), a test that runs
across packages end to end in ``tests/e2e/`` (and the fault-injection harness in
``tests/reliability/``). The checks of the repository itself (the import graph, the layer
table, the stage reads, the documented commands, this file) sit at the top too."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "situate"

ACROSS_PACKAGES = {"e2e", "reliability"}
REPOSITORY_CHECKS = {"imports", "stage_reads", "docs_commands", "layout", "sizes"}


def imported_packages(path: Path, seen: frozenset[Path] = frozenset()) -> set[str]:
    """The ``situate.<x>`` each import statement of ``path`` names (first level only), and those
    of the test modules beside it that it imports its helpers from (``from test_llm_context
    import context``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        sibling = path.with_name(f"{getattr(node, 'module', None)}.py")
        if isinstance(node, ast.ImportFrom) and sibling.is_file() and sibling not in seen:
            found |= imported_packages(sibling, seen | {path})
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        for name in names:
            parts = name.split(".")
            if parts[0] == "situate" and len(parts) > 1:
                found.add(parts[1])
            if parts[0] == "situate" and isinstance(node, ast.ImportFrom) and len(parts) == 1:
                found.update(a.name for a in node.names)  # `from situate import money`
    return found


def misplaced(tests: Path, src: Path) -> list[str]:
    """Each test file outside the folder that mirrors what it tests, and why."""
    packages = {p.name for p in src.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in src.glob("*.py") if p.stem != "__init__"}
    found = []
    seen: dict[str, Path] = {}
    for path in sorted(tests.rglob("test_*.py")):
        where = path.relative_to(tests)
        if path.name in seen:  # no __init__.py: pytest imports each test file by its name
            found.append(f"{where}: same name as {seen[path.name].relative_to(tests)}")
        seen[path.name] = path
        stem = path.stem.removeprefix("test_")
        if len(where.parts) == 1:
            if stem not in REPOSITORY_CHECKS and not any(
                stem == m or stem.startswith(f"{m}_") for m in modules
            ):
                owners = sorted(imported_packages(path) & packages)
                found.append(
                    f"{where}: no top-level module src/situate/{stem}.py; a package's test goes "
                    f"in tests/<package>/ (it imports {', '.join(owners) or 'no package'}), "
                    "an end-to-end one in tests/e2e/"
                )
        elif len(where.parts) > 2:
            found.append(f"{where}: one folder deep at most (tests/<package>/test_*.py)")
        elif where.parts[0] in ACROSS_PACKAGES:
            continue
        elif where.parts[0] not in packages:
            found.append(f"{where}: no package src/situate/{where.parts[0]}/ to mirror")
        elif where.parts[0] not in imported_packages(path):
            found.append(f"{where}: imports nothing of situate.{where.parts[0]}")
    return found


def test_every_test_file_sits_in_the_folder_that_mirrors_what_it_tests():
    found = misplaced(TESTS, SRC)
    assert found == [], "\n".join(found)


def test_the_scan_finds_a_package_test_at_the_top_and_one_in_the_wrong_folder(tmp_path: Path):
    src, tests = tmp_path / "src" / "situate", tmp_path / "tests"
    for folder in (src / "money", src / "report", tests / "report", tests / "e2e", tests / "notes"):
        folder.mkdir(parents=True)
    for path in (
        src / "__init__.py",
        src / "money" / "__init__.py",
        src / "report" / "__init__.py",
    ):
        path.write_text("")
    (src / "pipeline.py").write_text("")
    (tests / "test_pipeline_seconds.py").write_text(
        "from situate.running.pipeline import Pipeline\n"
    )
    (tests / "test_estimate.py").write_text("from situate.money.estimate import estimate\n")
    (tests / "report" / "test_view.py").write_text("from situate.report.view import view\n")
    (tests / "report" / "test_costs.py").write_text("from situate.money import costs\n")
    (tests / "report" / "test_page.py").write_text("from test_view import view\n")
    (tests / "e2e" / "test_sweep.py").write_text("from situate.report.view import view\n")
    (tests / "notes" / "test_notes.py").write_text("")
    assert misplaced(tests, src) == [
        "notes/test_notes.py: no package src/situate/notes/ to mirror",
        "report/test_costs.py: imports nothing of situate.report",
        "test_estimate.py: no top-level module src/situate/estimate.py; a package's test goes "
        "in tests/<package>/ (it imports money), an end-to-end one in tests/e2e/",
    ]
