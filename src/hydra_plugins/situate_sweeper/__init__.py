"""situate's basic sweeper: Hydra's, less a second composition of the jobs ``situate run`` checked.

Hydra's basic sweeper composes every job of a batch before launching it
(``validate_batch_is_legal``: composition errors early), and the launcher composes each again.
``situate run`` composes and checks every job of a sweep of up to 16 jobs before Hydra starts
(``situate.commands.run.check_sweep_jobs``, which says a mistake in one line), so here only the
jobs it did not compose are validated: one composition fewer per job (0.1-0.15 s each). Everything
else is Hydra's ``BasicSweeper`` (``max_batch_size``, ``params``, the order of the jobs).
"""

from __future__ import annotations

from collections.abc import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper


class CheckedBasicSweeper(BasicSweeper):
    """``BasicSweeper`` that skips validating the jobs this process has composed already."""

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        from situate.commands.run import COMPOSED_JOBS, job_key

        rest = [job for job in batch if job_key(list(job)) not in COMPOSED_JOBS]
        if rest:
            super().validate_batch_is_legal(rest)
