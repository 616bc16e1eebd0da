"""The part-of-speech tags the question rule reads (TextBlob's bundled Brill tagger)."""

from __future__ import annotations

import subprocess
import sys

from situate.questions.pos import FINITE, tagger, tags


def test_tags_by_hand():
    words = [
        "The",
        "proteins",
        "separated",
        "by",
        "SDS-PAGE",
        "were",
        "visualized",
        "using",
        "a",
        "laser",
        ".",
    ]
    got = dict(zip(words, tags(words), strict=True))
    # "separated" before "by": a participle; "were": the finite verb; "using": a gerund
    assert got["separated"] == "VBN" and got["were"] == "VBD" and got["using"] == "VBG"
    assert got["The"] == "DT" and got["proteins"] == "NNS" and got["laser"] == "NN"
    assert got["were"] in FINITE and got["separated"] not in FINITE
    assert tags([]) == []


def test_the_tagger_does_not_import_nltk():
    # ``import textblob`` imports nltk (1.5 s); the rule reads TextBlob's _text.py alone
    code = (
        "import sys; from situate.questions.pos import tags; tags(['It', 'works', '.']); "
        "print('nltk' in sys.modules, 'textblob' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_rules_identity_names_its_tagger_data():
    import importlib.metadata

    from situate.questions.extractive import ExtractiveGenerator

    version = importlib.metadata.version("textblob")
    assert tagger() == f"textblob {version}"
    assert ExtractiveGenerator().identity()["tagger"] == f"textblob {version}"
