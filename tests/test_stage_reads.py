"""The pipeline, its execution, ``running/app.py`` and the money code read a stage only through what its
protocol declares (``src/situate/<stage>/base.py``, ``run.execution.Execution``): no ``getattr`` or
``hasattr`` on a stage there, which ``tests/test_config.py``'s contract check could not see."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "situate"
READERS = [
    "running/pipeline.py",
    "running/execution.py",
    "running/app.py",
    "commands/estimate.py",
    "study/writing_cost.py",
    *sorted(p.relative_to(SRC).as_posix() for p in (SRC / "money").glob("*.py")),
]
# (module, object) of the reflective reads that read a plain record's own fields, not a stage
RECORD_READS = {("money/shapes.py", "self"), ("money/costs.py", "c.usage")}


def reflective_reads(source: str) -> list[tuple[int, str, str]]:
    """``(line, "getattr" or "hasattr", the object's source)`` of every such call in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
        ):
            found.append((node.lineno, node.func.id, ast.unparse(node.args[0])))
    return sorted(found)


def test_the_scan_finds_every_reflective_read():
    source = (
        "def f(llm, stage):\n"
        "    if hasattr(llm, 'count_tokens'):\n"
        "        return [getattr(stage, a, None) for a in ('calls', 'written')]\n"
    )
    assert reflective_reads(source) == [(2, "hasattr", "llm"), (3, "getattr", "stage")]


@pytest.mark.parametrize("module", READERS)
def test_stages_are_read_through_their_protocols(module: str):
    reads = [
        (line, call, obj)
        for line, call, obj in reflective_reads((SRC / module).read_text())
        if (module, obj) not in RECORD_READS
    ]
    assert reads == [], (
        f"src/situate/{module} reads a stage by {reads}: declare the member in the stage's "
        "protocol, give every option of the group a value, and read it plainly"
    )
