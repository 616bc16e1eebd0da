"""The one table of config groups (``conf/<group>/``): what each is and who reads it.

``app.py`` builds and tags runs from it, ``study/results_table.py`` and the report tell runs apart
by its choice groups, ``saved_index.py`` keys the persisted index by its index groups, ``situate
--help`` lists it, and the tests check every option of a built group against its protocol.
Adding a group is one row here. Imports nothing: ``situate --help`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Literal

# pipeline: a stage `app.build_pipeline` hands the Pipeline; setting: how a run runs (where, what
# it stores, prices, tracking); command: read only by another verb (judge, questions, estimate);
# preset: `@package _global_` combinations of other groups' options; hydra: Hydra's own groups
Kind = Literal["pipeline", "setting", "command", "preset", "hydra"]


@dataclass(frozen=True)
class Group:
    name: str
    kind: Kind
    protocol: str | None = None  # "module:Class" the options are read through (imported lazily)
    built: bool = False  # its options are objects (`_target_`) the config tests instantiate
    cached: str | None = None  # the content-addressed store its results are kept in
    index_key: Literal["config", "identity"] | None = None  # how it enters the saved index key
    tagged: Literal["always", "with_llm"] | None = None  # a run's tag and results-table column
    nested: bool = False  # composed inside another option (dataset=folder's parsers)

    def protocol_class(self) -> type:
        module, _, name = (self.protocol or "").partition(":")
        return getattr(import_module(module), name)


GROUPS: tuple[Group, ...] = (
    Group("arm", "preset", tagged="always"),
    Group("dataset", "pipeline", "situate.datasets.base:DatasetLoader", built=True,
          index_key="config", tagged="always"),
    Group("parser", "pipeline", "situate.parsing.base:Parser", built=True, cached="parse cache",
          nested=True),
    Group("chunker", "pipeline", "situate.chunking.base:Chunker", built=True, index_key="config",
          tagged="always"),
    Group("context", "pipeline", "situate.contexts.base:Contextualizer", built=True,
          cached="context store", index_key="identity", tagged="always"),
    Group("prompt", "setting", built=True, tagged="with_llm"),
    Group("llm", "setting", "situate.paid.llm:LLMProvider", built=True, tagged="with_llm"),
    Group("embedder", "pipeline", "situate.embedding.base:Embedder", built=True,
          cached="embedding store", index_key="identity", tagged="always"),
    Group("dense", "pipeline", "situate.dense.base:DenseIndex", built=True, cached="index folder",
          index_key="identity", tagged="always"),
    Group("sparse", "pipeline", "situate.sparse.base:SparseEngine", built=True,
          cached="index folder", index_key="identity", tagged="always"),
    Group("fusion", "pipeline", "situate.fusion.base:Fusion", built=True, tagged="always"),
    Group("reranker", "pipeline", "situate.reranking.base:Reranker", built=True,
          cached="rerank-score store", tagged="always"),
    Group("eval", "setting", built=True),
    Group("tracking", "setting", "situate.tracking.base:Tracker", built=True),
    Group("execution", "setting", "situate.running.execution:Execution", built=True),
    Group("store", "setting", built=True),
    Group("pricing", "setting", built=True),
    Group("judge", "command", built=True),
    Group("questions", "command"),
    Group("question_generator", "command", built=True),
    Group("estimate", "command"),
    Group("experiment", "preset"),
    Group("local", "preset"),
    Group("hydra", "hydra"),
)  # fmt: skip
BY_NAME = {g.name: g for g in GROUPS}

# the stages `app.build_pipeline` passes to `Pipeline` by name (the nested parser comes with its
# dataset)
PIPELINE_STAGES = tuple(g.name for g in GROUPS if g.kind == "pipeline" and not g.nested)
# the choices a run is tagged with and a results table tells runs apart by; the LLM ones only with
# context=llm (prompt and llm are composed always, but meant only with it)
CHOICE_GROUPS = tuple(g.name for g in GROUPS if g.tagged == "always")
LLM_GROUPS = tuple(g.name for g in GROUPS if g.tagged == "with_llm")
TAGGED_GROUPS = CHOICE_GROUPS + LLM_GROUPS  # what a finished run's tags can hold
# what decides the persisted indexes' content: these groups' configs and stages' identities
INDEX_CONFIG_GROUPS = tuple(g.name for g in GROUPS if g.index_key == "config")
INDEX_IDENTITY_GROUPS = tuple(g.name for g in GROUPS if g.index_key == "identity")
# other verbs' settings, left out of a run's logged parameters
COMMAND_GROUPS = tuple(g.name for g in GROUPS if g.kind == "command")


def help_lines() -> str:
    """The config groups by kind, for ``situate --help``."""
    titles = {
        "pipeline": "stages",
        "setting": "run settings",
        "command": "other verbs",
        "preset": "presets",
    }
    lines = []
    for kind, title in titles.items():
        names = ", ".join(
            f"{g.name} (inside dataset)" if g.nested else g.name for g in GROUPS if g.kind == kind
        )
        lines.append(f"  {title + ':':<14}{names}")
    return "\n".join(lines)
