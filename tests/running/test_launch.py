"""``situate.running.launch``: each config composed once, and each the config Hydra would have given.

Hydra's ``hydra.main`` composes a run's config a second time in its mode and each sweep job once
more in its launcher (``load_sweep_config``); the plan keeps the first composition where the two
are the same. Each test compares the plan's configs with the ones Hydra's own calls compose."""

from __future__ import annotations

import pytest
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf

from situate.errors import SituateError
from situate.running import launch


@pytest.fixture(autouse=True)
def _clear_hydra():
    yield
    GlobalHydra.instance().clear()


def as_data(cfg) -> dict:
    """A config as plain data, interpolations unresolved (``${now:...}`` stays a string)."""
    return OmegaConf.to_container(cfg, resolve=False, enum_to_str=True)


def hydras_own(p: launch.Plan, overrides: list[str], mode: RunMode):
    """The config ``Hydra.run`` / ``Hydra.multirun`` compose for these overrides."""
    return p.hydra.compose_config(
        config_name="config", overrides=[*overrides, f"hydra.mode={mode.name}"], run_mode=mode
    )


def test_a_run_is_composed_once_as_hydra_run_composes_it(tmp_path):
    args = ["fusion=sparse_only", "tracking=none", f"output_dir={tmp_path}"]
    p = launch.plan(args)
    assert p is not None and not p.multirun and len(p.jobs) == 1
    assert p.jobs[0].config is p.master
    assert as_data(p.master) == as_data(hydras_own(p, args, RunMode.RUN))
    assert p.master.hydra.mode == RunMode.RUN
    assert list(p.master.hydra.overrides.hydra) == ["hydra.mode=RUN"]


def test_a_one_job_sweep_is_its_master_config_as_the_launcher_would_compose_it(tmp_path):
    args = ["-m", "fusion=sparse_only", "tracking=none", f"output_dir={tmp_path}"]
    p = launch.plan(args)
    assert p is not None and p.multirun and len(p.jobs) == 1
    job = p.jobs[0]
    assert job.config is not p.master  # a copy: run_job writes into it
    master = hydras_own(p, args[1:], RunMode.MULTIRUN)
    assert as_data(p.master) == as_data(master)
    launcher = p.hydra.config_loader.load_sweep_config(p.master, job.overrides)
    assert as_data(job.config) == as_data(launcher)
    # the sweep folder's ${now:...} was resolved once, and the job reads the same folder
    assert str(job.config.hydra.sweep.dir) == str(p.master.hydra.sweep.dir)


def test_each_job_of_a_grid_is_composed_as_the_launcher_composes_it(tmp_path):
    args = ["-m", "fusion=sparse_only,rrf", "fusion.pool=100,150", "tracking=none",
            f"output_dir={tmp_path}"]  # fmt: skip
    p = launch.plan(args)
    assert [j.swept for j in p.jobs] == [
        "fusion=sparse_only fusion.pool=100",
        "fusion=sparse_only fusion.pool=150",
        "fusion=rrf fusion.pool=100",
        "fusion=rrf fusion.pool=150",
    ]  # fmt: skip  (Hydra's basic sweeper's order)
    for job in p.jobs:
        launcher = p.hydra.config_loader.load_sweep_config(p.master, job.overrides)
        assert as_data(job.config) == as_data(launcher)
        assert str(job.config.hydra.sweep.dir) == str(p.master.hydra.sweep.dir)
    assert [(j.config.hydra.runtime.choices.fusion, j.config.fusion.pool) for j in p.jobs] == [
        ("sparse_only", 100), ("sparse_only", 150), ("rrf", 100), ("rrf", 150),
    ]  # fmt: skip
    assert [j.config.hydra.job.override_dirname for j in p.jobs][0] == (
        f"fusion.pool=100,fusion=sparse_only,output_dir={tmp_path},tracking=none"
    )


def test_a_preset_that_sweeps_runs_as_a_sweep_without_the_flag(tmp_path):
    """``experiment=cookbook_replication`` sets ``hydra.mode: MULTIRUN`` and sweeps ``arm`` in
    ``hydra.sweeper.params``: four jobs, each composed as Hydra's launcher composes it."""
    p = launch.plan(["experiment=cookbook_replication", "tracking=none", f"output_dir={tmp_path}"])
    assert p.multirun
    assert [j.swept for j in p.jobs] == [
        "arm=baseline", "arm=contextual_embeddings", "arm=contextual_bm25",
        "arm=contextual_reranked",
    ]  # fmt: skip
    assert list(p.master.hydra.overrides.hydra) == []  # the mode is the preset's, not appended
    for job in p.jobs:
        launcher = p.hydra.config_loader.load_sweep_config(p.master, job.overrides)
        assert as_data(job.config) == as_data(launcher)


@pytest.mark.parametrize(
    "args",
    [
        ["--cfg", "job"],  # Hydra's own flags
        ["-m", "hydra/launcher=joblib", "fusion=rrf,sparse_only"],  # another launcher
        ["experiment=tune_fusion"],  # another sweeper (Optuna)
        ["-m", "fusion.k=interval(1,60)"],  # a sweep the basic sweeper does not list
    ],
)
def test_what_only_hydra_runs_is_left_to_it(tmp_path, args):
    assert launch.plan([*args, f"output_dir={tmp_path}"]) is None
    assert not GlobalHydra.instance().is_initialized()  # cleared for hydra.main


def test_a_swept_value_without_the_flag_is_hydras_one_line_error(tmp_path):
    with pytest.raises(SituateError, match=r"^config: Ambiguous value for argument 'fusion=rrf,"):
        launch.plan(["fusion=rrf,sparse_only", f"output_dir={tmp_path}"])
    assert not GlobalHydra.instance().is_initialized()
