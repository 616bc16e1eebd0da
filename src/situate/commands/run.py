"""``situate run [-m] [overrides]``: the pipeline's jobs, each config composed once and checked
before any runs (:mod:`situate.running.launch`, with :func:`check_plan`); Hydra's own flags, another
sweeper or launcher go through Hydra (``app.main``) after a precheck that says a bad key or value
in one line."""

from __future__ import annotations

import os
import sys
from functools import partial

from situate.config.compose import check_overrides, check_parameter, compose, first_values


def main(args: list[str]) -> int:
    check_overrides(args)
    COMPOSED_JOBS.clear()  # this command's jobs only (main may run more than once in a process)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    # a tracking server that stops mid-run: MLflow's default retries wait minutes before the
    # run can keep its results for `situate track`; two retries ride out a blip
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    from situate.running import launch

    plan = launch.plan(args)  # a run, or a basic sweeper's grid: each config composed once
    if plan is not None:
        try:
            check_plan(plan, args)
        except BaseException:
            from hydra.core.global_hydra import GlobalHydra

            GlobalHydra.instance().clear()
            raise
        from situate.running import app

        launch.launch(plan, app.task)
        return sweep_exit_code()
    precheck(args)  # Hydra runs the command: its flags, another sweeper or launcher
    if COMPOSED_JOBS:  # a basic sweeper's grid, each job composed and checked: not validated again
        args = [a for a in args if a != "hydra/sweeper=basic"] + ["hydra/sweeper=checked"]
    from situate.running import app

    # Hydra's parser wants its flags before the overrides: `run a=1 -m b=2,3` means `run -m a=1 b=2,3`
    flags = [a for a in args if a in ("-m", "--multirun")]
    sys.argv = ["situate run", *flags, *[a for a in args if a not in flags]]
    app.main()
    return sweep_exit_code()


def sweep_exit_code() -> int:
    """0, or 1 when a job of the sweep failed: the table above shows each job's one-line error (a
    script or CI step must not read a sweep with failed jobs as a success)."""
    from situate.study.results_table import SWEEP_OUTCOME

    failed, jobs = SWEEP_OUTCOME["failed"], SWEEP_OUTCOME["jobs"]
    skipped = SWEEP_OUTCOME.get("skipped", 0)
    if skipped:
        print(
            f"situate: {skipped} of {jobs} jobs of the sweep skipped: they need what is not "
            "installed (the table above says what); the others ran",
            file=sys.stderr,
        )
    if not failed:
        return 0
    print(
        f"situate: {failed} of {jobs} jobs of the sweep failed (the table above gives each "
        "error; the others' results are kept)",
        file=sys.stderr,
    )
    return 1


MAX_JOBS_CHECKED = 16  # a larger grid's jobs are checked each by itself when it starts (run_job)

# The overrides of each job this process composed and checked before Hydra starts, in the form
# Hydra's basic sweeper passes them (sorted; no ``hydra.`` overrides). When it holds any, ``main``
# runs the grid on ``hydra/sweeper=checked`` (``hydra_plugins.situate_sweeper``), which does not
# compose these jobs a second time.
COMPOSED_JOBS: set[tuple[str, ...]] = set()


def sweep_jobs(cfg, overrides: list[str]) -> list[tuple[list[str], str]] | None:
    """The overrides of each job of the sweep and the swept values that name it, as Hydra's basic
    sweeper enumerates them (:func:`situate.running.launch.grid` over the preset's
    ``hydra.sweeper.params``, then the command line's), or None when the grid cannot be listed
    here (``glob``, ``interval``, an Optuna search) or is larger than ``MAX_JOBS_CHECKED``."""
    from situate.running.launch import BASIC_SWEEPERS, grid

    if str(cfg.hydra.sweeper.get("_target_", "")) not in BASIC_SWEEPERS:
        return None
    params = [f"{k}={v}" for k, v in (cfg.hydra.sweeper.get("params") or {}).items()]
    return grid(params, overrides, max_jobs=MAX_JOBS_CHECKED)


def job_key(job: list[str]) -> tuple[str, ...]:
    """A job's overrides as Hydra's sweeper hands them to the launcher: no ``hydra`` ones, sorted."""
    return tuple(sorted(o for o in job if not o.lstrip("+~").startswith(("hydra.", "hydra/"))))


def check_sweep_jobs(cfg, overrides: list[str], checked: list[str] | None = None) -> None:
    """Compose every job of the sweep and check what its stages need (``situate.config.preflight``;
    :func:`check_jobs` says what a mistake or a missing part does). Each job composed is
    recorded in ``COMPOSED_JOBS``.

    ``checked``: the overrides of a job the caller has composed and checked already (the sweep's
    first values), not composed again (a one-job sweep composes once here, not twice)."""
    from situate.config.preflight import stages_of_run

    jobs = sweep_jobs(cfg, overrides)
    if not jobs:
        return

    def composed(job: list[str]) -> None:
        try:
            compose(job, uses=stages_of_run)
        finally:
            COMPOSED_JOBS.add(job_key(job))

    if checked is not None:
        COMPOSED_JOBS.add(job_key(checked))
    rest = [
        (swept, partial(composed, job))
        for job, swept in jobs
        if checked is None or job_key(job) != job_key(checked)
    ]
    check_jobs(rest, total=len(jobs))


def check_jobs(jobs, total: int, skipped: dict | None = None) -> None:
    """Run each ``(swept, check)`` of a sweep's jobs: a config mistake in any stops the sweep,
    naming its job; a job that needs what is not installed (``Unavailable``) is listed in one
    line as skipped, and skipped when it runs; all ``total`` jobs skipped is a mistake.
    ``skipped``: the jobs the caller found skipped already."""
    from situate.config.preflight import skipped_line
    from situate.errors import SituateError, Unavailable

    skipped = dict(skipped or {})
    for swept, check in jobs:
        try:
            check()
        except Unavailable as e:  # composed; its stages' checks found a part missing
            skipped[swept] = e
        except SituateError as e:
            raise SituateError(f"sweep job {swept}: {e}") from e
    if skipped and len(skipped) == total:
        raise SituateError(f"every job of the sweep is skipped: {next(iter(skipped.values()))}")
    if skipped:
        print(f"situate: {skipped_line(skipped)}", file=sys.stderr)


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
    from hydra.types import RunMode

    from situate.config.preflight import stages_of_run
    from situate.errors import Unavailable

    multirun = len(overrides) < len(args)
    checked: list[str] | None = first
    try:
        cfg = compose(first, with_hydra=True, uses=stages_of_run)
    except Unavailable:
        if not multirun:
            raise
        cfg = compose(first, with_hydra=True)  # the first job is skipped: the rest are checked
        checked = None  # composed without its checks: its job is checked (and listed skipped)
    multirun = multirun or cfg.hydra.mode == RunMode.MULTIRUN
    check_typed_overrides(cfg, parsed)
    if multirun:
        check_sweep_jobs(cfg, overrides, checked)
    check_run_config(cfg, multirun)


def check_plan(plan, args: list[str]) -> None:
    """The precheck's checks on a plan's composed configs (:mod:`situate.running.launch`): the first
    job's (what :func:`situate.config.compose.compose` checks; a run, or a sweep of one job, stops on a
    part not installed), the overrides as typed (``fusion.k=60,abc``), the other jobs'
    (:func:`check_jobs`), then those of the run as a whole on the first job's config."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from situate.config.compose import check_composed
    from situate.config.preflight import stages_of_run
    from situate.errors import Unavailable

    parser = OverridesParser.create()
    first, *rest = plan.jobs
    skipped: dict[str, Unavailable] = {}
    try:
        check_composed(first.config, parser.parse_overrides(first.overrides), stages_of_run)
    except Unavailable as e:
        if not rest:
            raise
        skipped[first.swept] = e
    overrides = [a for a in args if a not in ("-m", "--multirun")]
    check_typed_overrides(first.config, parser.parse_overrides(overrides))
    checks = (
        (job.swept, partial(
            check_composed, job.config, parser.parse_overrides(job.overrides),
            stages_of_run if n < MAX_JOBS_CHECKED else (),  # a larger grid's: when each starts
        ))
        for n, job in enumerate(rest, start=1)
    )  # fmt: skip
    check_jobs(checks, total=len(plan.jobs), skipped=skipped)
    check_run_config(first.config, plan.multirun)


def check_typed_overrides(cfg, parsed) -> None:
    """``+group.name=...`` names a parameter of the group's class, and each override as typed
    (``fusion.k=60,abc``: every value of a sweep) is of its parameter's type, before any job."""
    from situate.config.checks import check_value_types

    for o in parsed:
        if o.is_add() or o.is_force_add():
            check_parameter(cfg, o.key_or_group, o.input_line)
    check_value_types(cfg, parsed)


def check_run_config(cfg, multirun: bool) -> None:
    """The run's folders writable, ``eval`` built, the tracking server answering: before a sweep
    launches jobs that would all fail on one of them."""
    from situate.config.checks import check_output_folders, check_writable

    check_output_folders(cfg)
    if multirun:
        check_writable("hydra.sweep.dir", cfg.hydra.sweep.dir)
    else:
        check_writable("hydra.run.dir", cfg.hydra.run.dir)
    from situate.config.compose import instantiate_stage
    from situate.errors import SituateError

    try:  # eval.ks, before a sweep launches jobs that would all fail on it
        instantiate_stage(cfg, "eval")
    except SituateError:
        raise
    except Exception:  # e.g. an interpolation only a real run resolves: the run will say
        pass
    instantiate_stage(cfg, "tracking").check()  # a dead tracking server: seconds, not minutes
