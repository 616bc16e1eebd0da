"""Every command of the documentation works: the site's pages (``docs/``, the generated reference
pages included) and the README.

Each shell block (```bash, ```sh, ```console) is read line by line (a ``\\`` continues a line,
``$ `` prompts and ``#`` comments are dropped, ``&&``, ``|``, ``;`` and ``&`` separate
commands). Every ``situate`` command names a verb of the verb table and only flags its module
reads, and its overrides compose and type-check as the verb itself would compose them (for
``situate run``: ``situate.commands.run.precheck``, the check a run makes before any work), so a
documented command that names a missing option, a wrong key or a wrong type fails here; a few
cheap offline ones run for real on small data (``RUN``). ``make`` commands name a target of the
Makefile, ``python`` commands a script of the repository and flags it reads. Any other program
must be listed in ``SKIPPED`` with the reason.

Also: the site builds with ``mkdocs build --strict`` (a broken link or a missing page fails),
every page is in the navigation, and the reference pages list every option of every config group.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_cli

DOCS = REPO / "docs"
CONF = REPO / "conf"

# programs of the docs that are not situate's: not run, not composed, each with the reason
SKIPPED = {
    "export": "sets an environment variable (a key or a DSN of your own)",
    "pip": "installs packages",
    "cd": "changes folder",
    "printf": "writes a file of the reader's own",
}
# placeholders the docs use for the reader's own folders, replaced by a small folder of the test's
FOLDER_PLACEHOLDERS = ("~/kb", "notes/", "data/financebench")
# Hydra's own flags of `situate run` (app.main is a Hydra main)
HYDRA_RUN_FLAGS = {"-m", "--multirun", "--cfg", "--info", "--help", "-h", "--resolve", "-p"}

# Offline commands that are cheap run for real, mapped to their small-data form: the documented
# command (placeholders replaced) with these overrides appended, every run writing under the test's
# output_dir. The rest are composed and type-checked only: they need a key, a server, a network or
# minutes of work.
RUN: dict[str, tuple[str, ...]] = {
    "situate run --cfg job": (),
    "situate contexts show --limit 5": (),
    "situate estimate estimate=seed_shape llm=claude_haiku_5_5": (),
    "situate chunks dataset=folder dataset.path=~/kb chunker=markdown": (),
}
# The README's path for one's own folder, run in order on the small folder (one test); MiniLM as
# int8 ONNX (no torch to import: 3 s instead of 30 for the generation on a busy machine)
OWN_FOLDER: dict[str, tuple[str, ...]] = {
    "situate questions generate dataset=folder dataset.path=~/kb question_generator=extractive": (
        "questions.target=8", "questions.passage_words=30", "embedder=minilm_onnx",
    ),
    "situate run experiment=own_documents dataset.path=~/kb "
    "dataset.qa=outputs/questions/folder/questions.jsonl": (
        # three small files, two questions: too few documents to split into dev and test
        "eval.ks=[1,3]", "eval.latency_sample=1", "embedder=minilm_onnx", "eval.split=none",
    ),
    "situate report experiment=own_documents": (),
}  # fmt: skip

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>bash|sh|console)[ \t]*\n(?P<body>.*?)^(?P=indent)```",
    re.M | re.S,
)
_SEPARATORS = {"&&", "||", "|", ";", "&"}
_REDIRECTS = {">", ">>", "<", "2>", "2>&1"}


@dataclass(frozen=True)
class Command:
    page: str
    line: str  # the command as documented (a continued line joined, the comment dropped)
    argv: tuple[str, ...]  # its words, environment assignments and redirections left out

    def __str__(self) -> str:
        return f"{self.page}: {self.line}"

    @property
    def key(self) -> str:
        return " ".join(self.argv)


def hook():
    """The mkdocs hook that generates the reference pages (``docs/hooks/reference.py``)."""
    name = "situate_docs_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DOCS / "hooks" / "reference.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def pages() -> dict[str, str]:
    """The README and every page of the site, the generated ones included."""
    found = {"README.md": (REPO / "README.md").read_text(encoding="utf-8")}
    for path in sorted(DOCS.rglob("*.md")):
        if "hooks" not in path.relative_to(DOCS).parts:
            found[f"docs/{path.relative_to(DOCS).as_posix()}"] = path.read_text(encoding="utf-8")
    for uri, make in hook().PAGES.items():
        found[f"docs/{uri}"] = make()
    return found


def shell_lines(body: str, indent: str) -> list[str]:
    lines, continued = [], ""
    for raw in body.splitlines():
        line = raw[len(indent) :] if raw.startswith(indent) else raw.lstrip()
        line = line[2:] if line.startswith("$ ") else line
        if line.rstrip().endswith("\\"):
            continued += line.rstrip()[:-1].strip() + " "
            continue
        line, continued = (continued + line.strip()).strip(), ""
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def split_commands(page: str, line: str) -> list[Command]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words, commands, skip_next = list(lexer), [], False
    current: list[str] = []
    for word in [*words, ";"]:
        if skip_next:
            skip_next = False
        elif word in _SEPARATORS:
            if current:
                commands.append(Command(page, line.split(" #")[0].strip(), tuple(current)))
            current = []
        elif word in _REDIRECTS:
            skip_next = True
        elif not current and re.match(r"^[A-Z_][A-Z0-9_]*=", word):
            continue  # VAR=value before a command
        else:
            current.append(word)
    return commands


@cache
def documented() -> tuple[Command, ...]:
    out = []
    for page, text in pages().items():
        for block in _FENCE.finditer(text):
            for line in shell_lines(block["body"], block["indent"]):
                out.extend(split_commands(page, line))
    return tuple(out)


def situate_commands() -> list[Command]:
    return [c for c in documented() if c.argv[0] == "situate"]


def tiny_folder(root: Path) -> Path:
    """Three short Markdown documents with a qa.json: a folder of the reader's own, small."""
    folder = root / "kb"
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "setup.md": "# Setup\n\nInstall the command line tool with pip install acme-cli. The "
        "installer needs Python 3.10 or newer and writes a configuration file to your home "
        "folder.\n\n## Proxies\n\nBehind a proxy, set HTTPS_PROXY before running the installer; "
        "the tool reads it on every request.\n",
        "server.md": "# Server\n\nThe server listens on port 8765 by default. Change the port "
        "with the --port flag when you start it.\n\n## Restart\n\nTo restart the server, send it "
        "SIGHUP; it reloads its configuration without dropping connections.\n",
        "limits.md": "# Rate limits\n\nThe Free plan allows 60 requests per minute. Short bursts "
        "up to twice the limit are allowed for ten seconds.\n\n## Paid plans\n\nThe Team plan "
        "allows 1,000 requests per minute and a dedicated support channel.\n",
    }
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    qa = [
        {"id": "install", "q": "How do I install the CLI?", "gold": ["pip install acme-cli"]},
        {"id": "port", "q": "Which port does the server listen on?", "gold": ["port 8765"]},
        {"id": "burst", "q": "Are bursts allowed?", "gold": ["Short bursts up to twice the limit"]},
    ]
    import json

    (folder / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    return folder


def small_form(command: Command, folder: Path, output_dir: Path, extra=()) -> list[str]:
    """The command's arguments after the verb, the reader's folders replaced by ``folder``,
    ``outputs/`` by the test's output folder, ``output_dir`` set to it."""
    args = []
    for word in command.argv[1:]:
        key, eq, value = word.partition("=")
        if eq and key in ("dataset.path",) and value in FOLDER_PLACEHOLDERS:
            word = f"{key}={folder}"
        elif eq and value.startswith("outputs/"):
            word = f"{key}={output_dir}/{value.removeprefix('outputs/')}"
        elif word in FOLDER_PLACEHOLDERS:
            word = str(folder)
        args.append(word)
    overrides = [a for a in args if "=" in a and not a.startswith("-")]
    if overrides or command.argv[1:2] == ("run",) and "--cfg" not in args:
        args.append(f"output_dir={output_dir}")
    return [*args, *extra]


# ---------------------------------------------------------------- every command is checked


def test_the_docs_have_commands_of_every_kind() -> None:
    programs = {c.argv[0] for c in documented()}
    assert {"situate", "make", "python"} <= programs, programs
    assert len(_unique(situate_commands())) >= 40
    # every cheap command the test runs is still documented as written
    keys = {c.key for c in situate_commands()}
    for line in [*RUN, *OWN_FOLDER]:
        assert " ".join(shlex.split(line)) in keys, f"no longer in the docs: {line}"


def test_every_program_is_checked_or_skipped_for_a_reason() -> None:
    unknown = [str(c) for c in documented() if c.argv[0] not in {"situate", "make", "python"}
               and c.argv[0] not in SKIPPED]  # fmt: skip
    assert not unknown, "commands of no known program (check them here or add to SKIPPED): " + (
        "; ".join(unknown)
    )


@cache
def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, re.M))


def test_make_commands_name_makefile_targets() -> None:
    bad = [str(c) for c in documented() if c.argv[0] == "make"
           and not set(c.argv[1:]) <= makefile_targets()]  # fmt: skip
    assert not bad, f"make targets the Makefile lacks: {bad}"


def _flags(words) -> set[str]:
    return {w.partition("=")[0] for w in words if re.match(r"^--?[A-Za-z]", w)}


def _reads_flag(source: str, flag: str) -> bool:
    return f'"{flag}"' in source or f"'{flag}'" in source


def test_python_commands_name_scripts_and_their_flags() -> None:
    bad = []
    for c in documented():
        if c.argv[0] != "python":
            continue
        script = REPO / c.argv[1]
        if not script.is_file():
            bad.append(f"{c}: no file {c.argv[1]}")
            continue
        source = script.read_text(encoding="utf-8")
        bad += [f"{c}: {script.name} reads no {f}" for f in _flags(c.argv[2:])
                if not _reads_flag(source, f)]  # fmt: skip
    assert not bad, bad


def _verb_source(verb: str, sub: str | None) -> str:
    """The source of the modules a verb runs: its own and the commands/ modules it imports."""
    from situate.commands import VERBS

    row = VERBS[verb].subverbs[sub] if sub else VERBS[verb]
    seen, todo, text = set(), [row.module], []
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = REPO / "src" / (module.replace(".", "/") + ".py")
        source = path.read_text(encoding="utf-8")
        text.append(source)
        todo += [f"situate.commands.{m}" for m in re.findall(r"situate\.commands\.(\w+)", source)]
    return "\n".join(text)


POSITIONAL = {"contexts": {"show", "export"}, "emulate": {"anthropic", "openai", "cohere"},
              "data": {"fetch"}}  # fmt: skip


def verb_of(command: Command) -> tuple[str, str | None, list[str]]:
    """(verb, sub-verb, the remaining words) of a ``situate`` command; fails on an unknown one."""
    from situate.commands import VERBS

    words = list(command.argv[1:])
    assert words and words[0] in VERBS, f"{command}: no verb of {sorted(VERBS)}"
    verb, rest = words[0], words[1:]
    if VERBS[verb].subverbs:
        assert rest and rest[0] in VERBS[verb].subverbs, f"{command}: no {verb} sub-verb"
        return verb, rest[0], rest[1:]
    if verb in POSITIONAL:
        assert rest and rest[0] in POSITIONAL[verb], f"{command}: {verb} takes {POSITIONAL[verb]}"
    return verb, None, rest


def test_situate_commands_name_verbs_and_flags_they_read() -> None:
    bad = []
    for c in situate_commands():
        verb, sub, rest = verb_of(c)
        source = _verb_source(verb, sub)
        for flag in _flags(rest):
            if verb == "run" and flag in HYDRA_RUN_FLAGS:
                continue
            if not _reads_flag(source, flag):
                bad.append(f"{c}: situate {verb} reads no {flag}")
    assert not bad, bad


def test_data_fetch_names_a_data_set_it_has() -> None:
    from situate.datasets import fetch

    source = Path(fetch.__file__).read_text(encoding="utf-8")  # the data sets `fetch` knows
    fetched = [c for c in situate_commands() if c.argv[1:2] == ("data",)]
    assert fetched
    for c in fetched:
        assert _reads_flag(source, c.argv[3]), f"{c}: situate data fetch has no {c.argv[3]}"


def _composed(command: Command, folder: Path, output_dir: Path) -> None:
    """Compose and type-check the command's config as its verb does before any work."""
    from situate.commands.run import precheck
    from situate.config.compose import compose, first_values

    verb, _, rest = verb_of(command)
    args = small_form(Command(command.page, command.line, ("situate", verb, *rest)), folder,
                      output_dir)[1:]  # fmt: skip
    if verb in ("emulate", "data") or command.argv[1:3] in (
        ("questions", "review"),
        ("questions", "export"),
        ("questions", "import"),
    ):
        return  # no config: a server, a download, a file of questions (flags checked above)
    for arg in args:  # a questions file an earlier documented command writes there
        key, _, value = arg.partition("=")
        if key == "dataset.qa" and Path(value).is_relative_to(output_dir):
            Path(value).parent.mkdir(parents=True, exist_ok=True)
            Path(value).touch()
    if verb == "run":
        hydra_flags = any(a in HYDRA_RUN_FLAGS - {"-m", "--multirun"} for a in args)
        _, first = first_values([a for a in args if "=" in a and not a.startswith("-")])
        if first is not None and not hydra_flags:
            precheck(args)
            return
    overrides = [a for a in args if "=" in a and not a.startswith("-")]
    _, first = first_values(overrides, drop_unlisted=True)
    compose(first, mandatory=verb != "report")  # a report reads a study and builds no stage


def _unique(commands):
    return list({c.key: c for c in commands}.values())  # the same command on two pages once


@pytest.mark.slow  # Hydra composes a config in about a second on a busy machine
@pytest.mark.parametrize("command", _unique(situate_commands()), ids=lambda c: c.key[:90])
def test_every_situate_command_composes_and_type_checks(
    command: Command, tmp_path: Path, monkeypatch
) -> None:
    """A documented command that names a missing option, a wrong key or a wrong type fails."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    from situate.providers import vendors

    for vendor in vendors().values():  # a command that needs a key: composed as with one set
        if vendor.key_env:
            monkeypatch.setenv(vendor.key_env, "documented-command-check")
    try:
        _composed(command, tiny_folder(tmp_path), tmp_path / "outputs")
    except Exception as e:  # a SituateError, or anything else a bad override raises
        pytest.fail(f"{command}\n    -> {type(e).__name__}: {e}")


def test_the_check_refuses_a_command_that_cannot_run(tmp_path: Path) -> None:
    """The check above can fail: a wrong option, key or type is refused."""
    from situate.errors import SituateError

    folder = tiny_folder(tmp_path)
    for line in (
        "situate run fusion=no_such_fusion",
        "situate run fusion.k=abc",
        "situate report experiment=quickstart report.no_such_key=1",
        "situate run -m dataset=folder dataset.path=~/kb chunker=no_such,markdown",
    ):
        with pytest.raises(SituateError):
            _composed(split_commands("test", line)[0], folder, tmp_path / "outputs")
    with pytest.raises(AssertionError):
        verb_of(split_commands("test", "situate no_such_verb a=b")[0])


def test_split_commands_reads_shell_as_a_reader_types_it() -> None:
    got = split_commands("t", "A=1 situate run x=1 && make report | head > out.txt & # note")
    assert [c.argv for c in got] == [("situate", "run", "x=1"), ("make", "report"), ("head",)]
    body = "$ situate run \\\n    'b={f:dense_only}' # c\n# only a comment\n"
    assert shell_lines(body, "") == ["situate run 'b={f:dense_only}' # c"]


# ---------------------------------------------------------------- cheap commands run


def _run(command: str, extra: tuple[str, ...], folder: Path, output_dir: Path):
    parsed = split_commands("test", command)[0]
    args = small_form(parsed, folder, output_dir, extra)
    proc = run_cli(*args, cwd=REPO, timeout=600)
    assert proc.returncode == 0, f"{command} -> exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("command", list(RUN))
def test_cheap_commands_run(command: str, tmp_path: Path) -> None:
    proc = _run(command, RUN[command], tiny_folder(tmp_path), tmp_path / "outputs")
    assert proc.stdout.strip()


@pytest.mark.slow
def test_the_readme_path_for_ones_own_folder_runs(tmp_path: Path) -> None:
    """Generate a set offline, sweep the arms on it, write the report: on three small files."""
    folder, out = tiny_folder(tmp_path), tmp_path / "outputs"
    for command, extra in OWN_FOLDER.items():
        _run(command, extra, folder, out)
    assert (out / "questions" / "folder" / "questions.jsonl").is_file()
    assert (out / "reports" / "own_documents" / "index.html").is_file()


# ---------------------------------------------------------------- the site


def nav_pages(nav) -> list[str]:
    found = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        found += nav_pages(value) if isinstance(value, list) else [value]
    return found


def mkdocs_config() -> dict:
    return yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_is_in_the_navigation_and_every_entry_exists() -> None:
    in_nav = nav_pages(mkdocs_config()["nav"])
    site = {p.removeprefix("docs/") for p in pages() if p.startswith("docs/")}
    assert sorted(site - set(in_nav)) == [], "pages no navigation entry reaches"
    assert sorted(set(in_nav) - site) == [], "navigation entries with no page"
    assert len(in_nav) == len(set(in_nav))


def test_the_readme_is_short_and_holds_the_results_block_the_quickstart_includes() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    block = readme.split("<!-- --8<-- [start:results] -->", 1)[1].split(
        "<!-- --8<-- [end:results] -->"
    )[0]
    assert "## Results (quickstart, `make run`)" in block and "### Anthropic's table" in block
    quickstart = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    assert '--8<-- "README.md:results"' in quickstart  # one copy of the figures


def test_reference_lists_every_option_of_every_config_group() -> None:
    from situate.config.stages import BY_NAME

    page = hook().config_reference()
    folders = sorted(p.name for p in CONF.iterdir() if p.is_dir())
    assert set(folders) <= set(BY_NAME), "conf/ folders the stage table lacks (so the reference)"
    for group in folders:
        assert f"### `{group}`" in page, group
        for path in sorted((CONF / group).rglob("*.yaml")):
            name = path.relative_to(CONF / group).with_suffix("").as_posix()
            sub, _, leaf = name.rpartition("/")
            heading = f"#### `{group}/{sub}={leaf}`" if sub else f"#### `{group}={name}`"
            assert heading in page, f"the reference lacks {group}={name}"
            section = page.split(heading, 1)[1].split("\n#", 1)[0]
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            for key in data:
                if key != "defaults":
                    assert f"| `{key}` |" in section, f"{group}={name} lacks key {key}"
    commands = hook().commands_reference()
    from situate.commands import VERBS

    assert all(f"## `situate {verb}`" in commands for verb in VERBS)


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, a missing page or a bad docstring fails."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.fail("mkdocs is not installed: `make install` installs the docs extra "
                    "(pip install -e '.[docs]')")  # fmt: skip
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    site = tmp_path / "site"
    for page in nav_pages(mkdocs_config()["nav"]):
        html = "index.html" if page.endswith("index.md") else "index.html"
        built = site / page.removesuffix(".md").removesuffix("index") / html
        assert built.is_file(), f"{page} was not built"
    quickstart = (site / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "replicated offline" in quickstart and "--8&lt;--" not in quickstart  # README's block
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "situate.api.run" in api or 'id="situate.api.run"' in api
