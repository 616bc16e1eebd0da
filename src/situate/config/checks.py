"""Checks of a composed config before any work starts, each failing in one line with the fix.

- every ``group.name=value`` override has the type its stage's parameter is annotated with;
- no mandatory value (``???`` in a YAML file) is left unset;
- the folders a run writes (``output_dir``, ``cache_dir``, Hydra's run or sweep folder) can be
  written.
"""

from __future__ import annotations

import inspect
import os
import tempfile
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from situate.errors import SituateError

# what a parameter annotated with the type takes, as a user reads it (one, and a list of them)
_NAMES = {
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    bool: ("true or false", "booleans"),
    str: ("a string", "strings"),
    type(None): ("null", "nulls"),
}
_SEQUENCES = (list, tuple, set, frozenset, Sequence)


def check_value_types(cfg: DictConfig, overrides: Iterable[Any]) -> None:
    """Refuse a ``group.name=value`` override whose value the stage's parameter cannot take.

    Parameters
    ----------
    cfg
        The composed config (each stage a node with ``_target_``).
    overrides
        Hydra's parsed overrides; a choice or range sweep is checked value by value.
    """
    for o in overrides:
        group, _, name = o.key_or_group.lstrip("+~").partition(".")
        if o.is_delete() or not name or "." in name:
            continue
        hint, default = parameter_hint(cfg.get(group), name)
        if hint is None:
            continue
        try:
            values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
        except Exception:  # interval or glob sweeps: the job checks them when it builds the stage
            continue
        for value in values:
            if isinstance(value, str) and "${" in value:
                continue  # an interpolation: resolved (and checked by the stage) in the job
            if value is None and default is None:
                continue
            if not accepts(hint, value):
                example = f"; e.g. {group}.{name}={_hydra(default)}" if _shown(default) else ""
                quote = "; quote it to pass a string" if hint is str else ""
                raise SituateError(
                    f"{o.input_line}: {group}.{name} takes {_describe(hint)}, not "
                    f"{_describe_value(value)}{quote}{example}"
                )


def check_mandatory_values(cfg: DictConfig, choices: Mapping[str, Any]) -> None:
    """Refuse a config that leaves a mandatory value (``???``) unset, naming its key and file.

    Parameters
    ----------
    cfg
        The composed config (its ``hydra`` node is skipped).
    choices
        The option chosen in each config group (``hydra.runtime.choices``), to name the file.
    """
    for key in _missing(cfg, ""):
        group = key.partition(".")[0]
        option = choices.get(group)
        where = f" (conf/{group}/{option}.yaml leaves it ???)" if option else ""
        raise SituateError(f"{key} is not set{where}; add {key}=<value> to the command")


def check_output_folders(cfg: DictConfig) -> None:
    """``output_dir`` and ``cache_dir``, which every verb that parses, indexes or runs writes."""
    check_writable("output_dir", cfg.output_dir)
    check_writable("cache_dir", cfg.cache_dir)


def check_writable(key: str, folder: str | Path) -> None:
    """Refuse a folder that cannot be created or written (e.g. under a file, read-only, or under
    ``/proc``, which even root cannot write): a scratch folder is made and removed in the nearest
    existing folder, since permission bits say nothing of root, mounts or pseudo-filesystems."""
    p = Path(folder).expanduser().absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    if not p.is_dir():
        reason = f"{p} is a file, not a folder"
    else:
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".situate-writable-", dir=p))
            return
        except OSError as e:
            reason = f"cannot create a folder in {p}: {e.strerror or e}"
    raise SituateError(
        f"{key}={folder}: cannot write there ({reason}); set {key}=<a writable folder>"
    )


def _missing(node: Any, prefix: str) -> list[str]:
    keys = []
    for k in node:
        if prefix == "" and k == "hydra":
            continue
        if OmegaConf.is_missing(node, k):
            keys.append(f"{prefix}{k}")
        elif not OmegaConf.is_interpolation(node, k) and OmegaConf.is_dict(node[k]):
            keys += _missing(node[k], f"{prefix}{k}.")
    return keys


def parameter_hint(node: Any, name: str) -> tuple[Any, Any]:
    """The type hint and default of parameter ``name`` of the node's ``_target_`` (or Nones)."""
    if not OmegaConf.is_dict(node) or not node.get("_target_"):
        return None, None
    from hydra.utils import get_object

    try:
        target = get_object(node._target_)
        function = target.__init__ if inspect.isclass(target) else target
        hints = typing.get_type_hints(function)
        default = inspect.signature(target).parameters[name].default
    except Exception:  # not importable, not inspectable, or no such parameter: others say so
        return None, None
    if name not in hints:
        return None, None
    return hints[name], None if default is inspect.Parameter.empty else default


def accepts(hint: Any, value: Any) -> bool:
    """Whether ``value`` (as Hydra parsed it) fits ``hint``; a hint not understood accepts all."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(accepts(a, value) for a in args)
    if origin is typing.Literal:
        return value in args
    if hint is bool or hint is type(None):
        return isinstance(value, hint)
    if hint in (int, float, str):
        numbers = (int, float) if hint is float else hint
        return isinstance(value, numbers) and not isinstance(value, bool)
    if hint in _SEQUENCES or origin in _SEQUENCES:
        item = args[0] if args else Any
        return isinstance(value, list) and all(accepts(item, v) for v in value)
    if hint in (dict, Mapping) or origin in (dict, Mapping):
        return isinstance(value, dict)
    return True


def _describe(hint: Any, plural: bool = False) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a, plural) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if hint in _NAMES:
        return _NAMES[hint][plural]
    if hint in _SEQUENCES or origin in _SEQUENCES:
        return f"a list of {_describe(args[0], plural=True)}" if args else "a list"
    if hint in (dict, Mapping) or origin in (dict, Mapping):
        return "a mapping"
    return getattr(hint, "__name__", str(hint))


def _describe_value(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return _hydra(value)
    kind = {int: "the integer", float: "the number", str: "the string", list: "the list"}
    return f"{kind.get(type(value), 'the value')} {_hydra(value)}"


def _hydra(value: Any) -> str:
    """``value`` as it is written on the command line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_hydra(v) for v in value) + "]"
    return str(value)


def _shown(default: Any) -> bool:
    return default is not None and isinstance(default, (int, float, str, list, tuple))
