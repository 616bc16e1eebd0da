"""What a composed config's stages need, checked before any document is parsed or model loaded.

An option's class declares what it needs of the rest of the config and of the machine as a
classmethod ``preflight(params, run)``: ``params`` are its own resolved parameters, ``run`` a
:class:`RunView` of the run's other stages (the option chosen, its class, its parameters). It
raises a one-line ``SituateError`` for a config that cannot run (``chunker=prechunked`` with a
dataset that ships no chunks; ``context=replay`` with another chunker than its contexts were
recorded for; a folder that does not exist) and ``Unavailable`` for an optional part this machine
lacks (a cross-encoder folder, an API key): a sweep skips such a job, a single run stops on it.

One rule holds for every stage without a method of its own: an option whose parameters name an
``api_key_env`` needs that variable set (API embedders, rerankers and LLMs read their key from it).

Every verb runs it from :func:`situate.config.compose.compose` (``uses=``: the groups it builds), ``situate
run`` again per job of a sweep (:func:`situate.running.app.run_job`), so nothing here may read a document
or load a model: a check is a class attribute, a path's existence, a variable, a cache lookup.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from situate.errors import Unavailable


@dataclass(frozen=True)
class RunView:
    """The stages of one composed config as a ``preflight`` reads them.

    ``choices``: the option chosen in each config group (``hydra.runtime.choices``); ``configs``:
    each group's node of the composed config.
    """

    choices: Mapping[str, str | None]
    configs: Mapping[str, Any]

    def option(self, group: str) -> str | None:
        """The option chosen in ``group`` (``prechunked``), None when the group is not composed."""
        value = self.choices.get(group)
        return None if value is None else str(value)

    def params(self, group: str) -> dict[str, Any]:
        """The group's resolved parameters ({} when absent or not resolvable before the run)."""
        from omegaconf import OmegaConf

        node = self.configs.get(group)
        if node is None or not OmegaConf.is_dict(node):
            return {}
        try:
            return OmegaConf.to_container(node, resolve=True)  # type: ignore[return-value]
        except Exception:  # an interpolation only a job resolves: the job's own checks say
            return {}

    def target(self, group: str) -> type | None:
        """The class (or factory) of the option chosen in ``group``; None where not importable."""
        node = self.configs.get(group)
        name = node.get("_target_") if hasattr(node, "get") else None
        if not name:
            return None
        from hydra.utils import get_object

        try:
            return get_object(str(name))
        except Exception:  # instantiation will say why, in one line
            return None


def check_stages(cfg: Any, groups: Iterable[str], choices: Mapping[str, Any] | None = None) -> None:
    """Run the ``preflight`` of the option chosen in each of ``groups`` (in that order).

    Parameters
    ----------
    cfg
        The composed config (with or without its ``hydra`` node).
    groups
        The config groups the verb builds, e.g. ``stages_of_run(cfg)`` for ``situate run``.
    choices
        The option chosen per group; default ``cfg.hydra.runtime.choices``.

    Raises
    ------
    SituateError
        The first config mistake found (one line, with the fix).
    Unavailable
        The first optional part missing, when no group has a config mistake.
    """
    if choices is None:
        from omegaconf import OmegaConf

        choices = OmegaConf.select(cfg, "hydra.runtime.choices") or {}
    run = RunView(dict(choices), {g: cfg.get(g) for g in cfg if g != "hydra"})
    missing: Unavailable | None = None
    for group in groups:
        try:
            check_stage(group, run)
        except Unavailable as e:  # a config mistake elsewhere is said first: it needs a fix
            missing = missing or e
    if missing is not None:
        raise missing


def check_stage(group: str, run: RunView) -> None:
    """The one group's ``preflight`` (or the key rule of API stages)."""
    target = run.target(group)
    if target is None:
        return
    params = run.params(group)
    preflight = getattr(target, "preflight", None)
    if preflight is not None:
        preflight(params, run)
    key_env = params.get("api_key_env")
    if key_env and not os.environ.get(str(key_env), "").strip():
        raise Unavailable(
            f"{group}={run.option(group) or target.__name__}",
            f"its API key: set {key_env} (the key is read from the environment only)",
        )


def stages_of_run(cfg: Any) -> tuple[str, ...]:
    """The groups ``situate run`` builds: every pipeline stage, and ``llm`` with ``context=llm``."""
    from situate.config.stages import LLM_GROUPS, PIPELINE_STAGES

    uses_llm = "llm" in (cfg.get("context") or {})
    return PIPELINE_STAGES + (tuple(g for g in LLM_GROUPS if g == "llm") if uses_llm else ())


INDEX_STAGES = ("dataset", "chunker", "context", "embedder", "dense", "sparse")  # `situate index`


def stages_of_index(cfg: Any) -> tuple[str, ...]:
    """The groups ``situate index`` builds: the run's but fusion and reranker."""
    return tuple(g for g in stages_of_run(cfg) if g in INDEX_STAGES or g == "llm")


def with_its_llm(*groups: str):
    """The groups, and ``llm`` where one of them reads it (``llm: ${llm}``, as the judge and the
    LLM question generator do): a function of the composed config, for ``compose(uses=...)``."""

    def uses(cfg: Any) -> tuple[str, ...]:
        reads = any("llm" in (cfg.get(g) or {}) for g in groups)
        return groups + (("llm",) if reads else ())

    return uses


def skipped_line(jobs: Mapping[str, Unavailable]) -> str:
    """``skipped: arm=contextual_reranked (needs ...)``: the line a sweep prints before it runs."""
    return "skipped: " + "; ".join(f"{job}: needs {e.needs}" for job, e in jobs.items())
