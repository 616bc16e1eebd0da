"""``situate run [-m]`` in this process with each config composed once: Hydra's run, and its basic
sweeper with its basic launcher, less the compositions they repeat.

``hydra.main`` composes a run's config twice (once for its mode, once to run it) and a sweep's
master config twice and each job twice more (the sweeper's validation, the launcher): 0.1-0.2 s
a composition, most of a warm one-job run's start. Here the master config is composed once, each
job once (by Hydra's own ``load_sweep_config``, as the launcher does; a sweep of one job with no
swept value is the master config itself), and each is run by Hydra's own ``run_job`` with Hydra's
callbacks (output folder, logging, saved YAML, ``HydraConfig``, ``hydra.job.num``): what a job
sees is what Hydra's launcher gives it. The jobs are composed before any runs, so a mistake in
any one stops the sweep before it starts (Hydra's basic sweeper validates the same way).

:func:`plan` returns None where Hydra must run the command itself: its own flags (``--cfg``,
``--info``...), another sweeper (Optuna) or launcher (joblib, Ray), or a sweep its basic sweeper
does not list (``interval``).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any

from situate.config.compose import CONF_DIR

log = logging.getLogger(__name__)

CONFIG_NAME = "config"
TASK_NAME = "app"  # Hydra's name for a job of ``situate.running.app`` (its log file is app.log)
BASIC_SWEEPERS = (
    "hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
    "hydra_plugins.situate_sweeper.CheckedBasicSweeper",
)
BASIC_LAUNCHER = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"


@dataclass
class Job:
    """One job of a plan: its overrides (as Hydra's sweeper hands them to its launcher), the
    swept values that name it, and its composed config (with its ``hydra`` node)."""

    overrides: list[str]
    swept: str
    config: Any


@dataclass
class Plan:
    """A command's master config and its jobs, composed, ready to :func:`launch`."""

    hydra: Any  # hydra._internal.hydra.Hydra, the process's GlobalHydra
    master: Any
    multirun: bool
    jobs: list[Job] = field(default_factory=list)


def plan(args: list[str]) -> Plan | None:
    """Compose ``situate run``'s config and its jobs, or None when Hydra must run the command
    (module docstring). A composition error is a one-line ``SituateError``; GlobalHydra is
    cleared again whenever no plan is returned."""
    if any(a.startswith("-") and a not in ("-m", "--multirun") for a in args):
        return None
    from hydra.core.global_hydra import GlobalHydra

    multirun = any(a in ("-m", "--multirun") for a in args)
    overrides = [a for a in args if a not in ("-m", "--multirun")]
    hydra = _main_hydra()
    try:
        result = _plan(hydra, overrides, multirun)
    except BaseException:
        GlobalHydra.instance().clear()
        raise
    if result is None:
        GlobalHydra.instance().clear()
    return result


def _main_hydra():
    """Hydra as ``hydra.main`` sets it up for ``situate.running.app`` (search path, job name)."""
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    search_path = create_config_search_path(str(CONF_DIR))
    return Hydra.create_main_hydra2(task_name=TASK_NAME, config_search_path=search_path)


def _compose(hydra, overrides: list[str], run_mode, validate: bool = True):
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from situate.config.compose import config_error

    try:
        return hydra.compose_config(
            config_name=CONFIG_NAME, overrides=overrides, run_mode=run_mode,
            with_log_configuration=False, validate_sweep_overrides=validate,
        )  # fmt: skip
    except (HydraException, OmegaConfBaseException) as e:
        raise config_error(e) from e


def _plan(hydra, overrides: list[str], multirun_flag: bool) -> Plan | None:
    """Hydra's ``_run_hydra`` for ``run`` and ``multirun`` on one composition of the config.

    Hydra composes the config in MULTIRUN mode to read its mode (a preset may set
    ``hydra.mode``), appends ``hydra.mode=...`` when the command line decides it, and composes
    again in that mode. The second composition differs from the first only by that override
    (which sets ``hydra.mode`` and is recorded in ``hydra.overrides.hydra``), by the check of
    swept values (refused in a run) and, in a run, by a config group left ``???`` (an error);
    so the first is kept, the override applied to it, the check made, and the config composed
    again only when a group is left ``???`` (for Hydra's own message)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from situate.config.compose import config_error

    try:
        parsed = OverridesParser.create(config_loader=hydra.config_loader).parse_overrides(
            overrides
        )
    except HydraException as e:
        raise config_error(e) from e
    master = _compose(hydra, overrides, RunMode.MULTIRUN, validate=False)  # Hydra's get_mode
    mode = master.hydra.mode
    decided = mode is None or (multirun_flag and mode == RunMode.RUN)
    if decided:
        mode = RunMode.MULTIRUN if multirun_flag else RunMode.RUN
        master.hydra.mode = mode
        master.hydra.overrides.hydra.append(f"hydra.mode={mode.name}")
    choices = master.hydra.runtime.choices
    left_missing = any(OmegaConf.is_missing(choices, g) for g in choices)
    if mode == RunMode.RUN and left_missing:
        extra = [f"hydra.mode={mode.name}"] if decided else []
        _compose(hydra, [*overrides, *extra], RunMode.RUN)  # raises Hydra's "You must specify"
    try:
        hydra.config_loader.validate_sweep_overrides_legal(parsed, run_mode=mode, from_shell=True)
    except HydraException as e:
        raise config_error(e) from e
    if mode == RunMode.RUN:
        return Plan(hydra, master, multirun=False, jobs=[Job(overrides, "", master)])
    if str(master.hydra.sweeper.get("_target_")) not in BASIC_SWEEPERS:
        return None
    if str(master.hydra.launcher.get("_target_")) != BASIC_LAUNCHER:
        return None
    jobs = _sweep_overrides(hydra, master)
    if jobs is None:
        return None
    # the sweep folder's ${now:...} resolved once, in the master, whose cache every job copies
    str(master.hydra.sweep.dir)
    task = list(master.hydra.overrides.task)
    # one job whose overrides are the command line's: Hydra's launcher would compose the same
    # overrides in RUN mode, which differs from the master's MULTIRUN mode only by a group left ???
    one_job = len(jobs) == 1 and jobs[0][0] == task and not left_missing
    result = Plan(hydra, master, multirun=True)
    for job, label in jobs:
        if one_job:
            config = copy.deepcopy(master)
            OmegaConf.copy_cache(from_config=master, to_config=config)  # as load_sweep_config
        else:
            try:
                config = hydra.config_loader.load_sweep_config(master, list(job))
            except HydraException as e:
                raise config_error(e) from e
        result.jobs.append(Job(list(job), label, config))
    return result


def _sweep_overrides(hydra, master) -> list[tuple[list[str], str]] | None:
    """The master config's grid (:func:`grid` of its ``hydra.sweeper.params`` and overrides)."""
    from omegaconf import OmegaConf

    params = [f"{k}={v}" for k, v in (master.hydra.sweeper.get("params") or {}).items()]
    task = OmegaConf.to_container(master.hydra.overrides.task, resolve=False)
    return grid(params, task, hydra.config_loader)


def grid(
    params: list[str], overrides: list[str], config_loader=None, max_jobs: int | None = None
) -> list[tuple[list[str], str]] | None:
    """Each job's overrides as Hydra's basic sweeper lists them (a preset's
    ``hydra.sweeper.params``, then the command line's ``overrides``, which win: its own
    ``split_arguments``), with the swept values that name it; None where the basic sweeper does
    not list them (``interval``; ``glob`` without Hydra's ``config_loader``) or where the grid
    has more than ``max_jobs`` jobs (counted before any is listed)."""
    import math

    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create(config_loader=config_loader).parse_overrides(
            [*params, *overrides]
        )
        axes = [o for o in parsed if o.is_sweep_override()]
        if (
            max_jobs is not None
            and math.prod(len(list(o.sweep_string_iterator())) for o in axes) > max_jobs
        ):
            return None
        batches = BasicSweeper.split_arguments(parsed, None)
    except (HydraException, TypeError, ValueError):
        return None
    keys = {o.get_key_element() for o in axes}
    return [
        (job, " ".join(o for o in job if o.partition("=")[0] in keys))
        for batch in batches
        for job in batch
    ]


def launch(plan: Plan, task_function) -> None:
    """Run the plan's jobs as Hydra's ``run`` or its basic launcher would, with Hydra's
    callbacks, its error report for a job's unexpected exception, and GlobalHydra cleared at the
    end."""
    from hydra._internal.utils import run_and_report
    from hydra.core.global_hydra import GlobalHydra

    try:
        run_and_report(lambda: _storage_faults_in_one_line(plan, task_function))
    finally:
        GlobalHydra.instance().clear()


def _storage_faults_in_one_line(plan: Plan, task_function) -> None:
    """A fault of the disk met by Hydra's own writes (the job's folder, its saved YAML) stops
    the run with its one-line error, not Hydra's stack trace."""
    import sqlite3

    from situate.errors import SituateExit
    from situate.stores.faults import storage_error

    try:
        _launch(plan, task_function)
    except (OSError, sqlite3.Error, ValueError) as e:
        # Hydra's logging set-up says a log file it cannot open as a ValueError caused by it
        cause = e if not isinstance(e, ValueError) else e.__cause__ or e.__context__
        output_dir = str(plan.master.get("output_dir", "output_dir"))
        error = None if cause is None else storage_error(cause, output_dir, fallback=True)
        if error is None:
            raise
        raise SituateExit(error) from e


def _launch(plan: Plan, task_function) -> None:
    from pathlib import Path

    from hydra._internal.callbacks import Callbacks
    from hydra.core.utils import configure_log, run_job
    from hydra.types import HydraContext
    from omegaconf import OmegaConf, open_dict

    master = plan.master
    configure_log(master.hydra.hydra_logging, master.hydra.verbose)
    callbacks = Callbacks(master)
    context = HydraContext(config_loader=plan.hydra.config_loader, callbacks=callbacks)
    if not plan.multirun:
        callbacks.on_run_start(config=master, config_name=CONFIG_NAME)
        ret = run_job(
            hydra_context=context, task_function=task_function, config=master,
            job_dir_key="hydra.run.dir", job_subdir_key=None,
        )  # fmt: skip
        callbacks.on_run_end(config=master, config_name=CONFIG_NAME, job_return=ret)
        _ = ret.return_value  # a job's exception, raised here as Hydra's run does
        return
    callbacks.on_multirun_start(config=master, config_name=CONFIG_NAME)
    sweep_dir = Path(str(master.hydra.sweep.dir))
    sweep_dir.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(master, sweep_dir / "multirun.yaml")
    log.info("Launching %d jobs locally", len(plan.jobs))
    returns = []
    for num, job in enumerate(plan.jobs):
        log.info("\t#%d : %s", num, " ".join(o for o in job.overrides if not _is_hydra(o)))
        with open_dict(job.config):
            job.config.hydra.job.id = num
            job.config.hydra.job.num = num
        returns.append(
            run_job(
                hydra_context=context,
                task_function=task_function,
                config=job.config,
                job_dir_key="hydra.sweep.dir",
                job_subdir_key="hydra.sweep.subdir",
            )  # fmt: skip
        )
        configure_log(master.hydra.hydra_logging, master.hydra.verbose)
    for ret in returns:
        _ = ret.return_value  # as Hydra's basic sweeper: a job's exception, after the batch
    callbacks.on_multirun_end(config=master, config_name=CONFIG_NAME)


def _is_hydra(override: str) -> bool:
    return override.lstrip("+~").startswith(("hydra.", "hydra/"))
