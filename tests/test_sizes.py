"""Files of one idea: no source file over 600 lines and no class over 250, unless it says in one
line why it must be (a module docstring line, or a class docstring line, that starts "Over 600
lines:" or "Over 250 lines:")."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "situate"
FILE_LINES = 600
CLASS_LINES = 250


def said_why(docstring: str | None, limit: int) -> bool:
    return any(
        line.strip().startswith(f"Over {limit} lines:") for line in (docstring or "").splitlines()
    )


def oversized(root: Path) -> list[str]:
    """Each file and class of ``root`` over its limit that does not say why."""
    found = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        where = path.relative_to(root)
        lines = len(source.splitlines())
        if lines > FILE_LINES and not said_why(ast.get_docstring(tree), FILE_LINES):
            found.append(f"{where}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > CLASS_LINES and not said_why(ast.get_docstring(node), CLASS_LINES):
                    found.append(f"{where}: class {node.name}, {size} lines")
    return found


def test_the_scan_finds_a_long_file_and_a_long_class_that_say_nothing(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(250))
    (tmp_path / "long_class.py").write_text(f"class Long:\n{body}")
    (tmp_path / "said.py").write_text(f'class Said:\n    """Over 250 lines: a reason."""\n{body}')
    (tmp_path / "long_file.py").write_text("".join(f"y{i} = {i}\n" for i in range(601)))
    (tmp_path / "short.py").write_text("".join(f"z{i} = {i}\n" for i in range(600)))
    assert oversized(tmp_path) == [
        "long_class.py: class Long, 251 lines",
        "long_file.py: 601 lines",
    ]


def test_no_file_or_class_of_situate_is_over_its_limit_without_a_reason() -> None:
    found = oversized(SRC)
    assert found == [], "\n".join(found)
