"""The ``situate`` command. Imports stay inside each verb so ``situate --help`` answers at once."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"

DESCRIPTION = """\
situate: a lab for contextual retrieval.

verbs:
  run [-m] [group=option ...] [key=value ...]
                      run the pipeline (Hydra): one composed config, or a sweep with -m
                      e.g. situate run context=none fusion=dense_only
                           situate run -m context=none,replay fusion=dense_only,rrf
                           situate run experiment=quickstart
  index [group=option ...]
                      build and persist the indexes of a config under outputs/index/<hash>
  search "QUESTION" [group=option ...] [-k N] [--json]
                      top k chunks for a question from the persisted index: scores, ids,
                      source offsets and contexts
  chunks [group=option ...] [--limit N]
                      list chunk ids, offsets and the first 90 characters (to write gold);
                      the first 20 unless --limit says otherwise (0: all)
  report [group=option ...] [--all-runs] [--out DIR] [--permutations N]
                      compare a study's latest sweep (or every finished run) with its
                      baseline: outputs/reports/<study>/index.html (self-contained) and report.md
                      e.g. situate report experiment=cookbook_replication
  judge [group=option ...] [--all-runs] [--qrels FILE] [--stored-only]
                      relevance without labels: pool the top judge.depth chunks of a study's
                      arms, grade each (question, chunk) pair once with llm (0-3), score every
                      arm on the judgments and on gold: outputs/reports/<study>/judged.md
                      e.g. situate judge experiment=cookbook_replication llm=claude_haiku_4_5
  questions generate|review|export|import [group=option ...]
                      an evaluation set from your documents: generate questions with a
                      verbatim quote resolved to span gold (questions=..., llm=...), then
                      review them in the terminal or through a CSV / JSON Lines file
                      e.g. situate questions generate dataset=folder dataset.path=docs/
  estimate [group=option ...] [--judge]
                      before spending: calls, tokens and cost of contextualizing a dataset with
                      an llm (with and without caching, with batches), or a synthetic shape
                      (estimate=seed_shape), with the arithmetic behind every figure;
                      --judge prices `situate judge` of the study instead (llm's model,
                      Haiku 4.5 and Haiku 5.5; --llms a,b for other conf/llm options)
  contexts show|export [group=option ...] [--limit N] [--out FILE]
                      print (or write as JSON Lines) the contexts of a config with their token
                      usage; LLM contexts come from the store only: nothing is spent
  emulate anthropic|openai|cohere [--port N] [--fault-rate R]
                      serve a local emulator of that provider's API (real token accounting,
                      prompt caching, injected faults) to run the pipeline against for free
  data fetch NAME [--dest DIR]
                      download a public data set (cookbook, covid-qa) with pinned sha256, or
                      financebench: filings as PDFs with page gold (pinned git commit)

config groups (conf/<group>/<option>.yaml): dataset, chunker, context, embedder, dense, sparse,
fusion, reranker, eval, tracking, experiment. `situate run --help` shows Hydra's options and
`situate run --cfg job` prints the composed config.
"""

# Ctrl-C: one line (exit 130), no stack trace; every store commits as it goes
INTERRUPTED = (
    "interrupted; what is stored is kept (contexts, embeddings and finished indexes under "
    "cache_dir, finished runs): run the same command again to resume"
)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(DESCRIPTION)
        return 0
    verbs: dict[str, Callable[[list[str]], int]] = {
        "run": _run,
        "index": _index,
        "search": _search,
        "chunks": _chunks,
        "report": _report,
        "judge": _judge,
        "questions": _questions,
        "estimate": _estimate,
        "contexts": _contexts,
        "emulate": _emulate,
        "data": _data,
    }
    verb, rest = argv[0], argv[1:]
    if verb not in verbs:
        print(
            f"situate: unknown verb {verb!r}; valid: {', '.join(verbs)} (see situate --help)",
            file=sys.stderr,
        )
        return 2
    from situate.errors import SituateError, SituateExit

    try:
        return verbs[verb](rest)
    except SituateExit as e:
        if debug:
            raise e.error from None
        print(f"error: {e.error}", file=sys.stderr)
        return e.error.exit_code
    except SituateError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except BrokenPipeError:  # `situate ... | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        if "situate.tracking.summary" in sys.modules:  # a sweep's parent run is closed as KILLED
            sys.modules["situate.tracking.summary"].interrupted()
        if debug:
            raise
        print(INTERRUPTED, file=sys.stderr)
        return 130


def check_overrides(overrides: list[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject ``group=option`` overrides naming an option that has no YAML file, in one line."""
    from situate.errors import SituateError, did_you_mean

    for arg in overrides:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, _, value = arg.partition("=")
        group = key.lstrip("+~")
        folder = conf_dir / group
        if "/" in group or "." in group or not folder.is_dir() or value in ("", "null"):
            continue
        options = sorted(p.stem for p in folder.glob("*.yaml"))
        for option in _sweep_values(value):
            if option not in options:
                raise SituateError(
                    f"unknown option {group}={option}{did_you_mean(option, options)}; valid {group} "
                    f"options: {', '.join(options)} (files in {folder})"
                )


def _sweep_values(value: str) -> list[str]:
    """``a,b`` -> [a, b]; ``choice(a,b)`` -> [a, b]; anything fancier is left to Hydra."""
    inner = value
    if value.startswith("choice(") and value.endswith(")"):
        inner = value[len("choice(") : -1]
    if any(ch in inner for ch in "()[]{}$"):
        return []
    return [v.strip() for v in inner.split(",") if v.strip()]


def _run(args: list[str]) -> int:
    check_overrides(args)
    precheck(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    from situate import app

    # Hydra's parser wants its flags before the overrides: `run a=1 -m b=2,3` means `run -m a=1 b=2,3`
    flags = [a for a in args if a in ("-m", "--multirun")]
    sys.argv = ["situate run", *flags, *[a for a in args if a not in flags]]
    app.main()
    return 0


def compose(overrides: list[str], with_hydra: bool = False):
    """The composed config for ``overrides`` (no run folder, no logging setup), every mandatory
    value set; ``with_hydra`` keeps Hydra's own node (run folder, choices)."""
    check_overrides(overrides)
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import open_dict, read_write
    from omegaconf.errors import OmegaConfBaseException

    from situate.config_checks import check_mandatory_values

    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=overrides, return_hydra_config=True)
    except (HydraException, OmegaConfBaseException) as e:
        raise config_error(e) from e
    check_mandatory_values(cfg, cfg.hydra.runtime.choices)
    if not with_hydra:
        with read_write(cfg), open_dict(cfg):
            del cfg["hydra"]
    return cfg


def config_error(e: Exception):
    """Hydra's multi-line composition error as a one-line ``SituateError`` that says the fix."""
    from situate.errors import SituateError, did_you_mean

    cause = e.__cause__
    full_key = getattr(cause, "full_key", None)
    parent = getattr(cause, "parent_node", None)
    if full_key and "is not in struct" in str(cause):
        head, _, name = full_key.rpartition(".")
        where = f"of {head}" if head else "at the top level"
        valid = hint = ""
        if parent is not None and hasattr(parent, "keys"):
            valid = f"; valid keys {where}: {', '.join(str(k) for k in parent)}"
            hint = did_you_mean(full_key, [f"{head}.{k}" if head else str(k) for k in parent])
        return SituateError(
            f"unknown config key {full_key}{hint}{valid}; fix the name, or add a new key with "
            f"+{full_key}=... (`situate run --cfg job` prints the composed config)"
        )
    first, *rest = [line.strip() for line in str(e).splitlines() if line.strip()]
    detail = f" ({'; '.join(rest)})" if rest else ""
    override = getattr(e, "override", None)  # OverrideParseException
    where = f"cannot parse override {override!r}: " if override else ""
    return SituateError(f"config: {where}{first}{detail}")


def precheck(args: list[str]) -> None:
    """Compose ``run``'s config before Hydra does, so a bad key or value is one line, exit 2.

    A sweep (``-m a=x,y``) is composed with the first value of each swept parameter. Runs that
    pass Hydra's own flags (``--cfg``, ``--info``...) or sweeps it cannot enumerate here
    (``glob``, ``interval``) are left to Hydra.
    """
    if any(a.startswith("-") and a not in ("-m", "--multirun") for a in args):
        return
    overrides = [a for a in args if a not in ("-m", "--multirun")]
    parsed, first = first_values(overrides)
    if first is None:
        return
    cfg = compose(first, with_hydra=True)
    for o in parsed:
        if o.is_add() or o.is_force_add():
            check_parameter(cfg, o.key_or_group, o.input_line)
    from hydra.types import RunMode

    from situate.config_checks import check_value_types, check_writable

    check_value_types(cfg, parsed)
    check_writable("output_dir", cfg.output_dir)
    multirun = len(overrides) < len(args) or cfg.hydra.mode == RunMode.MULTIRUN
    if multirun:
        check_writable("hydra.sweep.dir", cfg.hydra.sweep.dir)
    else:
        check_writable("hydra.run.dir", cfg.hydra.run.dir)
    from situate.app import instantiate_stage
    from situate.errors import SituateError

    try:  # eval.ks, before a sweep launches jobs that would all fail on it
        instantiate_stage(cfg, "eval")
    except SituateError:
        raise
    except Exception:  # e.g. an interpolation only a real run resolves: the run will say
        pass
    instantiate_stage(cfg, "tracking").check()  # a dead tracking server: seconds, not minutes


def first_values(overrides: list[str], drop_unlisted: bool = False):
    """The parsed overrides, and each sweep override at its first value (``a=x,y`` -> ``a=x``).

    A sweep whose values cannot be listed here (``glob``, ``interval``) makes the second None, or
    is left out with ``drop_unlisted`` (the config then composes with that key's default).
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as e:
        raise config_error(e) from e
    first = []
    for o in parsed:
        if not o.is_sweep_override():
            first.append(o.input_line)
            continue
        try:
            value = next(iter(o.sweep_string_iterator()))
        except (HydraException, StopIteration):
            if drop_unlisted:
                continue
            return parsed, None
        first.append(f"{o.get_key_element()}={value}")
    return parsed, first


def check_parameter(cfg, key: str, override: str) -> None:
    """Refuse ``+group.name=...`` when the group's ``_target_`` takes no parameter ``name``."""
    import inspect

    from situate.errors import SituateError, did_you_mean

    group, _, name = key.partition(".")
    node = cfg.get(group) if name and "." not in name else None
    if node is None or not hasattr(node, "get") or not node.get("_target_"):
        return
    from hydra.utils import get_object

    try:
        params = inspect.signature(get_object(node._target_)).parameters.values()
    except Exception:  # not importable or not inspectable here: instantiation will say why
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if name not in names:
        raise SituateError(
            f"{override}: {node._target_} takes no parameter {name!r}{did_you_mean(name, names)}; "
            f"valid {group} parameters: {', '.join(names)}"
        )


def _index(args: list[str]) -> int:
    from situate import saved_index
    from situate.app import build_pipeline

    cfg = compose(args)
    folder, timings = saved_index.build(cfg, build_pipeline(cfg))
    spent = ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
    print(f"index: {folder} ({spent})")
    return 0


def _search(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="situate search", description="Search a persisted index.")
    parser.add_argument("query", help="the question")
    parser.add_argument(
        "overrides", nargs="*", help="the same group=option overrides given to `situate index`"
    )
    parser.add_argument("-k", type=int, default=10, help="how many chunks to show (default 10)")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    ns = parser.parse_args(args)
    from situate.errors import SituateError

    if ns.k < 1:
        raise SituateError(f"search: -k {ns.k} must be a positive integer")
    from situate import saved_index
    from situate.app import build_pipeline

    cfg = compose(ns.overrides)
    index = saved_index.load(cfg, build_pipeline(cfg), ns.overrides)
    hits, seconds = index.search(ns.query, ns.k)
    if ns.json:
        import json

        rows = [
            {
                "rank": h.rank,
                "score": h.score,
                "chunk_id": h.chunk.chunk_id,
                "doc_id": h.chunk.doc_id,
                "start": h.chunk.start,
                "end": h.chunk.end,
                "context": h.context,
                "text": h.chunk.text,
            }  # fmt: skip
            for h in hits
        ]
        print(
            json.dumps(
                {
                    "query": ns.query,
                    "seconds": seconds,
                    **index.startup,
                    "index": str(index.folder),
                    "hits": rows,
                },
                indent=1,
            )
        )
        return 0
    from rich.table import Table

    from situate.console import console

    table = Table(title=ns.query, caption=search_timing(seconds, index.startup), show_lines=True)
    for col in ("#", "score", "chunk", "offsets", "context", "text"):
        table.add_column(
            col, overflow="fold" if col in ("chunk", "context", "text") else "ellipsis"
        )
    for h in hits:
        table.add_row(
            str(h.rank), f"{h.score:.4g}", h.chunk.chunk_id, f"{h.chunk.doc_id}:{h.chunk.start}-{h.chunk.end}",
            h.context[:200], " ".join(h.chunk.text.split())[:200],
        )  # fmt: skip
    console().print(table)
    return 0


STARTUP = {"jvm_start_seconds": "JVM start", "index_open_seconds": "index open", "model_load_seconds": "model load"}  # fmt: skip


def search_timing(seconds: float, startup: dict[str, float]) -> str:
    """``query 35 ms (before it: index open 2.1 s, model load 3.4 s)``: the query's time apart."""
    before = ", ".join(f"{STARTUP[key]} {value:.1f} s" for key, value in startup.items())
    return f"query {seconds * 1000:.0f} ms (before it: {before})"


def _chunks(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate chunks", description="List chunk ids, offsets and text."
    )
    parser.add_argument("overrides", nargs="*", help="group=option overrides")
    parser.add_argument(
        "--limit", type=int, default=20, help="how many chunks to list (default 20, 0 for all)"
    )
    ns = parser.parse_intermixed_args(args)
    from situate.errors import SituateError

    if ns.limit < 0:
        raise SituateError(f"chunks: --limit {ns.limit} must be 0 (all) or a positive integer")
    from hydra.utils import instantiate
    from rich.table import Table

    from situate.console import console

    cfg = compose(ns.overrides)
    corpus = instantiate(cfg.dataset).load()
    chunks = instantiate(cfg.chunker).chunk(corpus)
    shown = chunks[: ns.limit] if ns.limit else chunks
    table = Table(
        title=f"{corpus.name}: {len(chunks)} chunks ({cfg.chunker._target_.rsplit('.', 1)[-1]})"
    )
    for col, justify in (
        ("chunk id", "left"),
        ("start", "right"),
        ("end", "right"),
        ("heading path", "left"),
        ("text", "left"),
    ):
        table.add_column(col, justify=justify, overflow="fold" if col == "chunk id" else "ellipsis")
    for c in shown:
        table.add_row(
            c.chunk_id,
            str(c.start),
            str(c.end),
            " > ".join(c.heading_path),
            " ".join(c.text.split())[:90],
        )
    if len(shown) < len(chunks):
        table.caption = (
            f"{len(chunks) - len(shown)} more not shown (--limit {len(shown)}; --limit 0 for all)"
        )
    console().print(table)
    return 0


def _contexts(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate contexts", description="Show or export contexts."
    )
    parser.add_argument("action", choices=("show", "export"))
    parser.add_argument(
        "overrides", nargs="*", help="group=option overrides (e.g. context=llm prompt=code)"
    )
    parser.add_argument("--limit", type=int, default=20, help="show: how many chunks (default 20)")
    parser.add_argument("--out", default=None, help="export: the JSON Lines file (default stdout)")
    ns = parser.parse_intermixed_args(args)
    import json

    from hydra.utils import instantiate

    from situate.records import Usage

    cfg = compose(ns.overrides)
    corpus = instantiate(cfg.dataset).load()
    chunks = instantiate(cfg.chunker).chunk(corpus)
    if ns.action == "show":
        chunks = chunks[: ns.limit]
    context = instantiate(cfg.context)
    from situate.contexts.llm import LLMContext

    if isinstance(context, LLMContext):  # read the store, never call the model
        found = context.lookup(corpus, chunks)
        rows = [
            (c, s.text if s else None, s.usage if s else Usage(), s.model if s else "")
            for c, s in zip(chunks, found, strict=True)
        ]
    else:
        rows = [
            (c, x.text, x.usage, "")
            for c, x in zip(chunks, context.contextualize(corpus, chunks), strict=True)
        ]
    if ns.action == "export":
        lines = [
            json.dumps(
                {
                    "chunk_id": c.chunk_id, "doc_id": c.doc_id, "index": c.index, "context": text, "model": model,
                    "usage": {"input_uncached": u.input_uncached, "cache_write": u.cache_write, "cache_read": u.cache_read, "output": u.output},
                },
                ensure_ascii=False,
            )
            for c, text, u, model in rows
        ]  # fmt: skip
        if ns.out:
            Path(ns.out).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            print(f"{len(rows)} contexts written to {ns.out}", file=sys.stderr)
        else:
            print("\n".join(lines))
        return 0
    from rich.table import Table

    from situate.console import console

    table = Table(title=f"{corpus.name}: contexts of {len(rows)} chunks", show_lines=True)
    for col in ("chunk", "context", "uncached", "write", "read", "out"):
        table.add_column(
            col,
            overflow="fold",
            justify="right" if col in ("uncached", "write", "read", "out") else "left",
        )
    for c, text, u, _ in rows:
        shown = "(not stored yet)" if text is None else text or "(none)"
        table.add_row(
            c.chunk_id,
            shown,
            str(u.input_uncached),
            str(u.cache_write),
            str(u.cache_read),
            str(u.output),
        )
    out = console()
    out.print(table)
    if rows and all(text is None for _, text, _, _ in rows):
        again = " ".join(ns.overrides)
        out.print(
            f"no context of these chunks is stored yet for this prompt and model: "
            f"`situate run {again}` writes them (`situate estimate {again}` prices that first); "
            "`situate contexts show` alone shows Claude's recorded contexts (context=replay)",
            highlight=False,
            markup=False,
        )
    return 0


def _report(args: list[str]) -> int:
    from situate.report.cli import main as report

    return report(args)


def _questions(args: list[str]) -> int:
    from situate.questions.cli import main as questions

    return questions(args)


def _judge(args: list[str]) -> int:
    from situate.judging.cli import main as judge

    return judge(args)


def _estimate(args: list[str]) -> int:
    from situate.estimate_cli import main as estimate

    return estimate(args)


def _emulate(args: list[str]) -> int:
    from situate.emulators.cli import main as emulate

    return emulate(args)


def _data(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="situate data", description="Fetch a public data set.")
    sub = parser.add_subparsers(dest="action", required=True)
    fetch_p = sub.add_parser("fetch", help="download a data set and check its sha256")
    fetch_p.add_argument(
        "name", help="cookbook, covid-qa or financebench (real 10-K/10-Q PDFs, page gold)"
    )
    fetch_p.add_argument("--dest", default=os.environ.get("SITUATE_DATA_DIR", "../shared/data"))
    ns = parser.parse_args(args)
    from situate.datasets.fetch import fetch

    for path in fetch(ns.name, Path(ns.dest)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
