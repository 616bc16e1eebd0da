"""Adaptive search that survives a kill: Hydra's Optuna sweeper with a journal file.

optuna 2.10 (what hydra-optuna-sweeper 1.3 pins) cannot use its RDB storage with SQLAlchemy 2
(``RDBStorage`` fails on its alembic version check), and has no journal storage of its own. So:

- :class:`JournalStorage` is Optuna's in-memory storage that appends each finished trial (params
  with their distributions, values, state, user attributes) as one JSON line to a file, and, when
  a study of the same name is created again, replays those lines into it first;
- :class:`ResumableOptunaSweeper` is Hydra's ``OptunaSweeper`` that, with that storage, runs only
  the trials still to go (``n_trials`` minus the completed ones in the journal) and reseeds the
  sampler by that count, so that a resumed study neither repeats a finished trial nor draws the
  same first candidates again. A trial that was running when the process died is not in the
  journal: it is drawn anew.

Hydra instantiates plugins only from the ``hydra_plugins`` package, hence this module's home;
nothing heavy is imported until a sweep starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf


def journal_storage(path: str):
    """A :class:`JournalStorage` on ``path`` (the class is built on first use: optuna is heavy)."""
    return _journal_class()(path)


def _journal_class():
    import logging
    import warnings

    logging.getLogger("alembic").setLevel(logging.WARNING)  # optuna imports it, and it chatters
    import optuna
    from optuna.distributions import distribution_to_json, json_to_distribution
    from optuna.storages import InMemoryStorage
    from optuna.trial import TrialState, create_trial

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # Hydra's sweeper logs the study itself

    class JournalStorage(InMemoryStorage):
        """In-memory storage whose finished trials are also lines of a JSON-lines file."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = Path(path)

        def __repr__(self) -> str:
            return f"journal {self.path}"

        def set_study_directions(self, study_id: int, directions) -> None:
            super().set_study_directions(study_id, directions)
            if not self.get_all_trials(study_id, deepcopy=False):
                study = self.get_study_name_from_id(study_id)
                for line in self.lines(study):
                    if line["values"] is not None and len(line["values"]) != len(directions):
                        from situate.errors import SituateError, SituateExit

                        raise SituateExit(SituateError(
                            f"{self.path}: trial {line['number']} of study {study} has "
                            f"{len(line['values'])} objective value(s), this sweep "
                            f"{len(directions)}; set study= to a new name (or delete the file) "
                            "to start a study with other objectives"
                        ))  # fmt: skip
                    with warnings.catch_warnings():  # create_trial is "experimental" in 2.10
                        warnings.simplefilter("ignore")
                        trial = self.frozen(line)
                    super().create_new_trial(study_id, template_trial=trial)

        @staticmethod
        def frozen(line: dict):
            """The finished trial a journal line records."""
            return create_trial(
                state=TrialState[line["state"]],
                values=line["values"],
                params=line["params"],
                distributions={
                    k: json_to_distribution(v) for k, v in line["distributions"].items()
                },
                user_attrs=line["user_attrs"],
            )

        def set_trial_state(self, trial_id: int, state) -> bool:
            done = super().set_trial_state(trial_id, state)
            if done and state.is_finished():
                t = self.get_trial(trial_id)
                study_id = self.get_study_id_from_trial_id(trial_id)
                line = {
                    "study": self.get_study_name_from_id(study_id),
                    "number": t.number,
                    "state": t.state.name,
                    "values": t.values,
                    "params": t.params,
                    "distributions": {
                        k: distribution_to_json(d) for k, d in t.distributions.items()
                    },
                    "user_attrs": t.user_attrs,
                }
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(line) + "\n")
                    f.flush()
            return done

        def lines(self, study: str) -> list[dict]:
            """The journal's finished trials of ``study``, in the order they finished."""
            if not self.path.is_file():
                return []
            out = []
            for text in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    line = json.loads(text)
                except ValueError:  # a line cut short by the kill
                    continue
                if line.get("study") == study:
                    out.append(line)
            return out

        def completed(self, study: str) -> int:
            return sum(1 for line in self.lines(study) if line["state"] == "COMPLETE")

    return JournalStorage


class ResumableOptunaSweeper(Sweeper):
    """``hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper``, resumable (module doc)."""

    def __init__(self, **kwargs: Any) -> None:
        from hydra_plugins.hydra_optuna_sweeper.optuna_sweeper import OptunaSweeper

        self.inner = OptunaSweeper(**kwargs)
        self.n_trials = kwargs["n_trials"]

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.inner.setup(hydra_context=hydra_context, task_function=task_function, config=config)

    def sweep(self, arguments: list[str]) -> None:
        impl = self.inner.sweeper
        storage = impl.storage
        if hasattr(storage, "completed"):
            done = storage.completed(impl.study_name)
            impl.n_trials = max(0, self.n_trials - done)
            if done:
                import logging

                seed = OmegaConf.select(self.config, "hydra.sweeper.sampler.seed") or 0
                _reseed(impl.sampler, seed + done)
                logging.getLogger(__name__).info(
                    "study %s: %d trial(s) completed in %s; running the %d still to go",
                    impl.study_name, done, storage.path, impl.n_trials,
                )  # fmt: skip
        return self.inner.sweep(arguments)


def _reseed(sampler: Any, seed: int) -> None:
    """Give ``sampler`` (and the random sampler a TPE sampler starts with) a new seeded stream."""
    import numpy as np

    for s in (sampler, getattr(sampler, "_random_sampler", None)):
        if s is not None and hasattr(s, "_rng"):
            s._rng = np.random.RandomState(seed)
