"""English part-of-speech tags for the question rule (:mod:`situate.questions.wording`).

A rule that turns a sentence around its verb must know which word is the verb; a closed list
and an ``-ed`` test take "the proteins **separated** by SDS-PAGE were visualized" and "lung
disease, also **called** COPD, includes ..." for the clause's verb. These tags come from the
Brill tagger of Tom De Smedt's *pattern* as TextBlob ships it (MIT): a lexicon of about 100,000
words with their most frequent Penn Treebank tag, the morphology rules that tag unknown words
by their ending, and the context rules that correct a tag by its neighbours ("separated" before
"by" is ``VBN``). No model download, no network; about 0.1 ms a sentence.

Only TextBlob's ``_text.py`` (standard library only) and its data files are read:
``import textblob`` would import nltk (1.5 s here) for nothing the rule uses.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from situate.errors import SituateError

FINITE = frozenset(["VBD", "VBZ", "VBP", "MD"])  # a finite verb: past, present, modal


def tagger() -> str:
    """Which tagger data tags the words (its package and version): part of the rule's identity,
    so a question written with other data says so in its provenance."""
    try:
        return f"textblob {importlib.metadata.version('textblob')}"
    except importlib.metadata.PackageNotFoundError:
        return "textblob (not installed)"


@lru_cache(maxsize=1)
def _parser():
    spec = importlib.util.find_spec("textblob")
    if spec is None or not spec.submodule_search_locations:
        raise SituateError(
            "question_generator=extractive needs TextBlob's tagger data: pip install textblob"
        )
    root = Path(spec.submodule_search_locations[0])
    name = "situate._textblob_text"
    module_spec = importlib.util.spec_from_file_location(name, root / "_text.py")
    assert module_spec is not None and module_spec.loader is not None
    text = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = text
    module_spec.loader.exec_module(text)
    en = root / "en"
    lexicon = text.Lexicon(
        path=str(en / "en-lexicon.txt"),
        morphology=str(en / "en-morphology.txt"),
        context=str(en / "en-context.txt"),
        entities=str(en / "en-entities.txt"),
        language="en",
    )
    return text.Parser(lexicon=lexicon, default=("NN", "NNP", "CD"), language="en")


def tags(words: Sequence[str]) -> list[str]:
    """The Penn Treebank tag of each of ``words`` (one sentence, already tokenized)."""
    if not words:
        return []
    tagged = _parser().find_tags(list(words), map=lambda token, tag: (token, tag))
    return [tag for _, tag in tagged]
