"""``situate report experiment=NAME [overrides] [--all-runs]``: a study's HTML and Markdown report."""

from __future__ import annotations

import argparse
from pathlib import Path

from situate.errors import SituateError


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate report",
        description=(
            "Compare a study's runs (MLflow experiment `study`) with its baseline (config key "
            "`baseline`) and write outputs/reports/<study>/index.html and report.md (with the "
            "judged metrics of `situate judge` when it wrote judged.json there)."
        ),
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        help="the overrides of the study, e.g. experiment=cookbook_replication",
    )
    parser.add_argument(
        "--all-runs",
        action="store_true",
        help="every FINISHED run of the study (newest of each configuration), not the latest sweep",
    )
    parser.add_argument(
        "--out", default=None, help="folder to write to (default outputs/reports/<study>)"
    )
    parser.add_argument(
        "--permutations",
        type=int,
        default=10_000,
        help="randomization-test permutations and bootstrap resamples (default 10000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    ns = parser.parse_args(args)
    if ns.permutations < 100:
        raise SituateError(f"report: --permutations {ns.permutations} is too few (use >= 100)")

    from omegaconf import OmegaConf

    from situate.config.compose import compose
    from situate.judging.summary import read_judged
    from situate.report.render import write_report
    from situate.study.compare import compare_study

    cfg = compose(ns.overrides, mandatory=False)  # a study is read, no stage built
    data = study_of(cfg, all_runs=ns.all_runs)
    headline = OmegaConf.select(cfg, "report.headline")
    sc = compare_study(data, permutations=ns.permutations, seed=ns.seed, headline=headline)
    out = Path(ns.out) if ns.out else Path(str(cfg.output_dir)) / "reports" / data.name
    html, md = write_report(sc, out, read_judged(out))  # judged.json: `situate judge` wrote it
    _summary(sc, html, md)
    if data.parent is not None:
        attach_report(data.tracking_uri, data.parent.run_id, [html, md])
    return 0


REPORT_FOLDER = "report"  # where the report's files go among the parent run's artifacts


def attach_report(uri: str, run_id: str, files: list[Path]) -> None:
    """Log the report's files into the sweep's parent run (``report/``), so whoever is sent
    the sweep opens its report from MLflow; a store that refuses is said in one line (the
    report is written either way)."""
    import logging

    from situate.console import console
    from situate.tracking.base import without_credentials
    from situate.tracking.faults import tracking_error

    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)
    import mlflow

    client = mlflow.MlflowClient(uri)
    try:
        for path in files:
            client.log_artifact(run_id, str(path), REPORT_FOLDER)
    except Exception as e:
        fault = tracking_error(e, None, "tracking.tracking_uri", without_credentials(uri))
        line = str(fault) if fault is not None else f"{type(e).__name__}: {str(e).splitlines()[0]}"
        console().print(f"the report is not attached to sweep run {run_id}: {line}", markup=False)
        return
    console().print(
        f"attached to the sweep's MLflow run {run_id}: "
        + ", ".join(f"{REPORT_FOLDER}/{p.name}" for p in files),
        markup=False,
    )


def study_of(cfg, all_runs: bool = False):
    """The study of a composed config (``study``, ``baseline``) read from its MLflow store."""
    from omegaconf import OmegaConf

    from situate.study.collect import load_study

    study = str(cfg.study)
    baseline = cfg.get("baseline")
    baseline = OmegaConf.to_container(baseline, resolve=True) if baseline is not None else None
    if baseline is not None and not isinstance(baseline, dict):
        raise SituateError(
            f"study {study}: baseline={baseline!r} must be a mapping of config groups to options, "
            "e.g. baseline={arm:baseline}"
        )
    return load_study(study, baseline, tracking_uri(cfg, study), all_runs=all_runs)


def tracking_uri(cfg, study: str) -> str:
    """The MLflow store of the config's tracker (``tracking=mlflow``), checked to answer."""
    if cfg.get("tracking") is None:
        raise SituateError(f"study {study}: tracking is off; reports read MLflow (tracking=mlflow)")
    from hydra.utils import instantiate

    from situate.tracking.base import Tracker

    tracker: Tracker = instantiate(cfg.tracking)
    tracker.check()  # a dead tracking server: one line in seconds, not MLflow's minutes of retries
    uri = tracker.uri
    if not uri:
        raise SituateError(
            f"study {study}: tracking {cfg.tracking.get('_target_')} has no MLflow URI"
        )
    return str(uri)


def _summary(sc, html: Path, md: Path) -> None:
    from rich.table import Table

    from situate.console import console
    from situate.study.compare import significance
    from situate.study.labels import metric_label

    study = sc.study
    k = sc.k_flip
    table = Table(title=f"{study.name}: {len(study.runs)} run(s), baseline {study.baseline.label}")
    table.add_column("configuration")
    table.add_column(f"Pass@{k}", justify="right")
    table.add_column(f"Recall@{k}", justify="right")
    table.add_column("MRR", justify="right")
    scope = metric_label(sc.headline) if sc.headline else f"{len(sc.compared)} metrics"
    table.add_column(f"vs baseline ({scope}, Holm)", overflow="fold")
    versus = {v.run.run_id: v for v in sc.versus}
    for run in study.runs:
        s = sc.summary_of(run)
        if s is None:
            what = "skipped" if run.status == "SKIPPED" else "failed"  # skipped: needs ...
            table.add_row(run.label, what, "", "", (run.error or "")[:120])
            continue
        v = versus.get(run.run_id)
        if run is study.baseline:
            verdict = "baseline"
        elif v is None or not v.comparisons:
            verdict = (v.note if v else "") or "-"
        elif sc.headline:
            c = v.comparisons[0]
            verdict = f"{100 * c.difference:+.1f} pts, {significance(c, sc.alpha)}"
        else:
            better = [metric_label(c.metric) for c in v.comparisons if c.significant]
            verdict = f"significant at {', '.join(better)}" if better else "not significant at any"
        table.add_row(
            run.label,
            f"{100 * s.means[f'pass_at_{k}']:.1f}",
            f"{100 * s.means[f'recall_at_{k}']:.1f}",
            f"{s.means['mrr']:.3f}",
            verdict,
        )
    out = console()
    out.print(table)
    for line in sc.selection.sentences() if sc.selection else []:
        out.print(line)
    out.print(f"report: {html.resolve()}")
    out.print(f"markdown: {md.resolve()}")
