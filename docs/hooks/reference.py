"""The site's reference pages, generated at build time so they cannot go stale (a mkdocs hook).

``reference/config.md``: every config group of the stage table (``situate.config.stages.GROUPS``) and
every option of it (one YAML file of ``conf/<group>/``), with each key's default and the comment
the file gives it. ``reference/commands.md``: every verb of the verb table
(``situate.commands.VERBS``), as ``situate --help`` prints it. ``reference/stages.md``: the
protocol each stage's options are read through, from its docstrings (mkdocstrings).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"
if str(ROOT / "src") not in sys.path:  # document this checkout's code, installed or not
    sys.path.insert(0, str(ROOT / "src"))

GENERATED = ("reference/config.md", "reference/commands.md", "reference/stages.md")
KIND_TITLES = {
    "pipeline": "Stages",
    "setting": "Run settings",
    "command": "Settings of other verbs",
    "preset": "Presets",
    "hydra": "Hydra's own groups",
}
_KEY = re.compile(r"^(\s*)([A-Za-z_$][\w.$@/-]*):(?:\s+(.*?))?\s*$")


@dataclass
class Key:
    path: str  # dotted, from the file's top
    value: str  # the default as written ("" for a mapping)
    comment: str  # the comment lines above it and on its line


@dataclass
class Option:
    group: str
    name: str  # the file's path under conf/<group>/ without .yaml (nested options: a/b)
    package: str | None
    header: str  # the file's leading comment
    keys: list[Key] = field(default_factory=list)


def _split_comment(text: str) -> tuple[str, str]:
    """``value  # comment`` -> (value, comment); a ``#`` inside quotes is the value's."""
    quote = None
    for i, ch in enumerate(text):
        if ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip(), text[i + 1 :].strip()
    return text.rstrip(), ""


def read_option(group: str, path: Path) -> Option:
    """One option file: its header comment, ``@package`` and every key with its comment."""
    lines = path.read_text(encoding="utf-8").splitlines()
    package, header, i = None, [], 0
    while i < len(lines) and lines[i].lstrip().startswith("#"):
        text = lines[i].lstrip()[1:].strip()
        if text.startswith("@package"):
            package = text.split(None, 1)[1] if " " in text else ""
        else:
            header.append(text)
        i += 1
    option = Option(
        group, path.relative_to(CONF / group).with_suffix("").as_posix(), package, " ".join(header)
    )
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    in_defaults = False
    for line in lines[i:]:
        stripped = line.strip()
        if not stripped:
            pending = []
            continue
        if stripped.startswith("#"):
            pending.append(stripped[1:].strip())
            continue
        match = _KEY.match(line)
        if stripped.startswith("-") or not match:  # a list item or a continued value
            pending = []
            continue
        indent, name, rest = len(match.group(1)), match.group(2), match.group(3) or ""
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if indent == 0:
            in_defaults = name == "defaults"
        value, inline = _split_comment(rest)
        stack.append((indent, name))
        if not in_defaults:
            comment = " ".join([*pending, inline]).strip()
            option.keys.append(Key(".".join(n for _, n in stack), value, comment))
        pending = []
    return option


def options(group: str) -> list[Option]:
    """Every option of a group: the YAML files under ``conf/<group>/`` (nested folders too)."""
    folder = CONF / group
    return (
        [read_option(group, p) for p in sorted(folder.rglob("*.yaml"))] if folder.is_dir() else []
    )


def option_override(group: str, name: str) -> str:
    """How a command line chooses the option: ``group=name``; nested, ``group/sub=name``."""
    sub, _, leaf = name.rpartition("/")
    return f"{group}/{sub}={leaf}" if sub else f"{group}={name}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def config_reference() -> str:
    """Markdown: every group of the stage table, every option of it, every key of each option."""
    from situate.config.stages import GROUPS

    out = [
        "# Config groups and options",
        "",
        "Generated from `conf/` and the stage table (`src/situate/config/stages.py`) each time the site "
        "is built. Choose an option with `group=option`, set a key with `group.key=value`; "
        "`situate run --cfg job` prints the composed config.",
        "",
    ]
    for kind, title in KIND_TITLES.items():
        groups = [g for g in GROUPS if g.kind == kind]
        if not groups:
            continue
        out += [f"## {title}", ""]
        for g in groups:
            opts = options(g.name)
            out += [f"### `{g.name}`", ""]
            facts = []
            if g.nested:
                facts.append("composed inside `dataset=folder` as `dataset.parsers.<format>`")
            if g.protocol:
                facts.append(f"protocol `{g.protocol}` ([stage protocols](stages.md))")
            if g.cached:
                facts.append(f"cached in the {g.cached}")
            if g.tagged:
                facts.append(
                    "tags each run" + (" (with `context=llm`)" if g.tagged == "with_llm" else "")
                )
            if facts:
                text = "; ".join(facts)
                out += [text[0].upper() + text[1:] + ".", ""]
            if not opts:
                out += [
                    f"No option ships in `conf/{g.name}/`"
                    + (
                        " (your own `conf/local/default.yaml`, git-ignored, overrides everything "
                        "for your machine)."
                        if g.name == "local"
                        else "."
                    ),
                    "",
                ]
                continue
            out += ["Options: " + ", ".join(f"`{o.name}`" for o in opts) + ".", ""]
            for o in opts:
                out += [f"#### `{option_override(g.name, o.name)}`", ""]
                if o.package is not None:
                    out += [f"Package `{o.package}` (sets keys outside its group).", ""]
                if o.header:  # a comment that opens like a list item is text, not a list
                    out += [re.sub(r"^([+*-] |\d+\. )", r"\\\1", o.header), ""]
                if o.keys:
                    out += ["| key | default | what it is |", "|---|---|---|"]
                    out += [
                        f"| `{_cell(k.path)}` | {_cell(_code(k.value))} | {_cell(k.comment)} |"
                        for k in o.keys
                    ]
                    out.append("")
    return "\n".join(out)


def commands_reference() -> str:
    """Markdown: every verb of the verb table, its usage, help and examples."""
    from situate.commands import VERBS

    out = [
        "# Commands",
        "",
        "Generated from the verb table (`src/situate/commands/__init__.py`), which also prints "
        "`situate --help`. Every verb takes `group=option` and `key=value` overrides composed "
        "like a run's; a config error is one line and exit code 2, `--debug` shows the trace.",
        "",
    ]
    for name, verb in VERBS.items():
        rows = [(name, verb)] + [(f"{name} {sub}", v) for sub, v in verb.subverbs.items()]
        for full, v in rows:
            out += [
                f"## `situate {full}`",
                "",
                "```",
                f"situate {full} {v.usage}".rstrip(),
                "```",
                "",
                v.help[0].upper() + v.help[1:] + ".",
                "",
            ]
            if v.examples:
                out += ["```bash", *v.examples, "```", ""]
            out += [f"Module: `{v.module}`.", ""]
    return "\n".join(out)


def stages_reference() -> str:
    """Markdown: the protocol of each config group that has one, rendered by mkdocstrings."""
    from situate.config.stages import GROUPS

    out = [
        "# Stage protocols",
        "",
        "What the pipeline reads of each stage: the protocol every option of the group is built "
        "to (from the stage table, `src/situate/config/stages.py`; the tests check every option against "
        "it). Generated from the docstrings.",
        "",
    ]
    for g in GROUPS:
        if g.protocol:
            module, _, name = g.protocol.partition(":")
            out += [
                f"## `{g.name}`: `{name}`",
                "",
                f"::: {module}.{name}",
                "    options:",
                "      heading_level: 3",
                "      show_root_heading: false",
                "",
            ]
    return "\n".join(out)


PAGES = {
    "reference/config.md": config_reference,
    "reference/commands.md": commands_reference,
    "reference/stages.md": stages_reference,
}


def on_files(files, config):  # mkdocs hook: the generated pages join the site's files
    from mkdocs.structure.files import File

    for uri, make in PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files
