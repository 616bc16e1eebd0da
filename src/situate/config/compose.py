"""Composing a config as ``situate`` does: ``group=option`` checks, Hydra's compose API, and
Hydra's errors as one line that says the fix. Every verb that reads a config composes it here."""

from __future__ import annotations

from pathlib import Path

CONF_DIR = Path(__file__).resolve().parents[3] / "conf"


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


def compose(overrides: list[str], with_hydra: bool = False, uses=(), mandatory: bool = True):
    """The composed config for ``overrides`` (no run folder, no logging setup), every mandatory
    value set and every ``group.name=value`` of the type its stage takes; ``with_hydra`` keeps
    Hydra's own node (run folder, choices).

    ``uses``: the config groups the verb builds (or a function of the composed config that says
    them, e.g. ``preflight.stages_of_run``); their options' ``preflight`` checks run here, before
    any document is parsed or model loaded (:mod:`situate.config.preflight`). ``mandatory=False``: a
    verb that builds no stage (the report reads a study) does not need a run's ``???`` values
    (``experiment=own_documents`` leaves ``dataset.path`` to the command line)."""
    check_overrides(overrides)
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import open_dict, read_write
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=overrides, return_hydra_config=True)
    except (HydraException, OmegaConfBaseException) as e:
        raise config_error(e) from e
    check_composed(cfg, OverridesParser.create().parse_overrides(overrides), uses, mandatory)
    if not with_hydra:
        with read_write(cfg), open_dict(cfg):
            del cfg["hydra"]
    return cfg


def check_composed(cfg, parsed, uses=(), mandatory: bool = True) -> None:
    """What :func:`compose` checks of a composed config (with its ``hydra`` node): every mandatory
    value set (``mandatory``), each ``group.name=value`` of ``parsed`` (Hydra's parsed overrides)
    of the type its stage takes, and the ``preflight`` checks of the groups ``uses`` names."""
    from situate.config.checks import check_mandatory_values, check_value_types

    if mandatory:
        check_mandatory_values(cfg, cfg.hydra.runtime.choices)
    check_value_types(cfg, parsed)
    groups = uses(cfg) if callable(uses) else uses
    if groups:
        from situate.config.preflight import check_stages

        check_stages(cfg, groups)


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


def instantiate_stage(cfg, group: str):
    """Build the option chosen in ``group``; a bad parameter becomes a one-line ``SituateError``."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    from situate.errors import SituateError

    try:
        return instantiate(cfg[group])
    except InstantiationException as e:
        if isinstance(e.__cause__, SituateError):
            raise e.__cause__ from None
        detail = str(e.__cause__ or e).strip().splitlines()[-1]
        raise SituateError(
            f"config group {group} ({cfg[group].get('_target_')}): {detail}; fix the option's parameters"
        ) from e


# ``_target_``s an older situate wrote into the configs it saved with each run (MLflow's
# config.yaml), and where each class lives now: a study recorded before a move still reads
MOVED_TARGETS = {
    "situate.pricing.PriceBook": "situate.money.pricing.PriceBook",
    "situate.estimate.Shape": "situate.money.shapes.Shape",
    "situate.tracking.summary.ResultsTable": "situate.study.results_table.ResultsTable",
    "situate.store.SqliteStores": "situate.stores.sqlite.SqliteStores",
    "situate.pgstore.PostgresStores": "situate.postgres.store.PostgresStores",
    "situate.execution.LocalExecution": "situate.running.execution.LocalExecution",
    "situate.execution.RayExecution": "situate.running.execution.RayExecution",
}


def current_targets(cfg):
    """``cfg`` (a saved run's config) with every moved ``_target_`` pointing where its class lives
    now (:data:`MOVED_TARGETS`); a copy, the saved config is left as it was."""
    from omegaconf import OmegaConf

    def walk(node):
        if isinstance(node, dict):
            return {
                k: MOVED_TARGETS.get(v, v) if k == "_target_" and isinstance(v, str) else walk(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return OmegaConf.create(walk(OmegaConf.to_container(cfg, resolve=False)))
