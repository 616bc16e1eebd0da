"""``situate run [-m] [overrides]``: the pipeline through Hydra (``app.main``), after a precheck that
says a bad key or value in one line."""

from __future__ import annotations

import os
import sys

from situate.config import check_overrides, check_parameter, compose, first_values


def main(args: list[str]) -> int:
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
    return sweep_exit_code()


def sweep_exit_code() -> int:
    """0, or 1 when a job of the sweep failed: the table above shows each job's one-line error (a
    script or CI step must not read a sweep with failed jobs as a success)."""
    from situate.study.results_table import SWEEP_OUTCOME

    failed, jobs = SWEEP_OUTCOME["failed"], SWEEP_OUTCOME["jobs"]
    if not failed:
        return 0
    print(
        f"situate: {failed} of {jobs} jobs of the sweep failed (the table above gives each "
        "error; the others' results are kept)",
        file=sys.stderr,
    )
    return 1


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

    from situate.config_checks import check_output_folders, check_value_types, check_writable

    check_value_types(cfg, parsed)
    check_output_folders(cfg)
    multirun = len(overrides) < len(args) or cfg.hydra.mode == RunMode.MULTIRUN
    if multirun:
        check_writable("hydra.sweep.dir", cfg.hydra.sweep.dir)
    else:
        check_writable("hydra.run.dir", cfg.hydra.run.dir)
    from situate.config import instantiate_stage
    from situate.errors import SituateError

    try:  # eval.ks, before a sweep launches jobs that would all fail on it
        instantiate_stage(cfg, "eval")
    except SituateError:
        raise
    except Exception:  # e.g. an interpolation only a real run resolves: the run will say
        pass
    instantiate_stage(cfg, "tracking").check()  # a dead tracking server: seconds, not minutes
