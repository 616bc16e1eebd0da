"""The one table of config groups (situate/config/stages.py): it names every folder of conf/, and what
the run, the saved index, the results table and the help read of it is what they read before."""

from __future__ import annotations

import re
import subprocess
import sys

from situate.config.compose import CONF_DIR
from situate.config.stages import (
    BY_NAME,
    CHOICE_GROUPS,
    COMMAND_GROUPS,
    INDEX_CONFIG_GROUPS,
    INDEX_IDENTITY_GROUPS,
    LLM_GROUPS,
    PIPELINE_STAGES,
)
from situate.embedding.base import Embedder


def test_every_conf_folder_is_a_row_and_every_row_a_folder():
    folders = {p.name for p in CONF_DIR.iterdir() if p.is_dir()}
    assert folders == set(BY_NAME), folders ^ set(BY_NAME)


def test_the_groups_each_reader_takes():
    assert PIPELINE_STAGES == (
        "dataset", "chunker", "context", "embedder", "dense", "sparse", "fusion", "reranker",
    )  # fmt: skip
    assert ("arm", *PIPELINE_STAGES) == CHOICE_GROUPS
    assert LLM_GROUPS == ("prompt", "llm")
    assert INDEX_CONFIG_GROUPS == ("dataset", "chunker")
    assert INDEX_IDENTITY_GROUPS == ("context", "embedder", "dense", "sparse")
    assert COMMAND_GROUPS == ("judge", "questions", "question_generator", "estimate")


def test_a_protocol_is_imported_only_when_asked():
    assert BY_NAME["embedder"].protocol_class() is Embedder
    code = "import sys, situate.config.stages; assert 'situate.embedding.base' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_help_lists_every_group_of_the_table():
    from situate.cli import DESCRIPTION

    listed = set(re.findall(r"[a-z_]+", DESCRIPTION.split("config groups", 1)[1]))
    assert set(BY_NAME) - {"hydra"} <= listed, set(BY_NAME) - listed
