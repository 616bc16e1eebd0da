"""Bm25sEngine against Lucene BM25 computed by hand on a three-document corpus.

Tokens are lowercase ``\\w\\w+`` words (single letters are dropped):

doc 0 "The cat sat on the mat"       -> the cat sat on the mat      (6 tokens)
doc 1 "The dog sat"                  -> the dog sat                 (3 tokens)
doc 2 "A cat and a dog and a cat"    -> cat and dog and cat         (5 tokens)

N = 3, avglen = (6 + 3 + 5) / 3 = 14/3, k1 = 1.2, b = 0.75.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from situate.errors import SituateError
from situate.sparse.bm25s_engine import Bm25sEngine

DOCS = ["The cat sat on the mat", "The dog sat", "A cat and a dog and a cat"]
K1, B = 1.2, 0.75
N, AVGLEN = 3, (6 + 3 + 5) / 3


def idf(df: int) -> float:
    return math.log(1 + (N - df + 0.5) / (df + 0.5))


def tf_part(tf: int, length: int) -> float:
    """Lucene's term-frequency part. bm25s's "lucene" (like Lucene since 8.0) drops the constant
    (k1 + 1) factor of the classic tf * (k1 + 1) / (tf + ...), which does not change rankings."""
    return tf / (tf + K1 * (1 - B + B * length / AVGLEN))


def engine(**kwargs) -> Bm25sEngine:
    e = Bm25sEngine(**kwargs)
    e.build(DOCS)
    return e


def test_single_term_scores() -> None:
    # "cat": df 2 (docs 0, 2) -> idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)
    assert idf(2) == pytest.approx(math.log(1.6))
    doc0 = math.log(1.6) * 1 / (1 + 1.2 * (0.25 + 0.75 * 6 / (14 / 3)))  # tf 1, len 6
    doc2 = math.log(1.6) * 2 / (2 + 1.2 * (0.25 + 0.75 * 5 / (14 / 3)))  # tf 2, len 5
    assert doc0 == pytest.approx(idf(2) * tf_part(1, 6))
    ranked = engine().search(["cat"], depth=3)
    ids, scores = ranked.row(0)
    assert ids.tolist() == [2, 0]  # doc 1 has no "cat" and is left out
    assert scores == pytest.approx([doc2, doc0], rel=1e-5)
    assert ranked.ids.tolist() == [[2, 0, -1]]


def test_two_term_query_sums_term_scores() -> None:
    # "dog": df 2 (docs 1, 2); "mat": df 1 (doc 0) -> idf = ln(1 + 2.5 / 1.5) = ln(8/3)
    assert idf(1) == pytest.approx(math.log(8 / 3))
    expected = {
        0: idf(1) * tf_part(1, 6),  # mat
        1: idf(2) * tf_part(1, 3),  # dog
        2: idf(2) * tf_part(1, 5),  # dog
    }
    ids, scores = engine().search(["Dog MAT"], depth=3).row(0)
    assert sorted(ids.tolist()) == [0, 1, 2]
    assert ids.tolist() == sorted(expected, key=lambda d: -expected[d])
    assert scores == pytest.approx([expected[d] for d in ids.tolist()], rel=1e-5)
    # and with the cat term too: doc 2 gets cat (tf 2) + dog (tf 1)
    ids, scores = engine().search(["cat dog"], depth=3).row(0)
    doc2 = idf(2) * tf_part(2, 5) + idf(2) * tf_part(1, 5)
    assert ids[0] == 2
    assert scores[0] == pytest.approx(doc2, rel=1e-5)


def test_k1_and_b_are_used() -> None:
    # b = 0: no length normalisation, so tf_part = tf / (tf + k1)
    ids, scores = engine(k1=2.0, b=0.0).search(["cat"], depth=2).row(0)
    assert ids.tolist() == [2, 0]
    assert scores == pytest.approx(
        [math.log(1.6) * 2 / (2 + 2.0), math.log(1.6) * 1 / (1 + 2.0)], rel=1e-5
    )


def test_depth_cuts_and_is_capped_at_the_corpus_size() -> None:
    ranked = engine().search(["cat"], depth=1)
    assert ranked.ids.tolist() == [[2]]
    assert engine().search(["cat"], depth=50).depth == 3


def test_query_without_known_terms_gives_a_padded_row() -> None:
    ranked = engine().search(["zebra a", "sat"], depth=3)
    assert ranked.ids[0].tolist() == [-1, -1, -1]
    assert ranked.scores[0].tolist() == [-np.inf, -np.inf, -np.inf]
    ids, scores = ranked.row(1)
    # "sat": df 2 (docs 0, 1); doc 1 is shorter (len 3) so it scores higher
    assert ids.tolist() == [1, 0]
    assert scores == pytest.approx([idf(2) * tf_part(1, 3), idf(2) * tf_part(1, 6)], rel=1e-5)


def test_save_load_round_trip(tmp_path: Path) -> None:
    built = engine()
    built.save(tmp_path / "index")
    loaded = Bm25sEngine()
    loaded.load(tmp_path / "index")
    queries = ["cat", "dog mat", "zebra"]
    a, b = built.search(queries, depth=3), loaded.search(queries, depth=3)
    assert a.ids.tolist() == b.ids.tolist()
    np.testing.assert_allclose(a.scores, b.scores)


def test_english_stemmer() -> None:
    texts = ["she runs daily", "he walks"]
    plain = Bm25sEngine()
    plain.build(texts)
    assert plain.search(["running"], depth=2).ids.tolist() == [[-1, -1]]
    stemmed = Bm25sEngine(stemmer="english")
    stemmed.build(texts)
    assert stemmed.search(["running"], depth=2).ids.tolist() == [[0, -1]]  # run == run


def test_identity_names_every_setting() -> None:
    identity = Bm25sEngine(k1=1.5, stemmer="english").identity()
    expected = {
        "engine": "bm25s",
        "k1": 1.5,
        "b": 0.75,
        "method": "lucene",
        "stemmer": "english",
        "stopwords": None,
    }
    assert identity.items() >= expected.items()
    assert Bm25sEngine(b=0.5).identity() != Bm25sEngine().identity()


def test_token_pattern_keeping_single_letters() -> None:
    # with \w+ doc 2 is "a cat and a dog and a cat" = 8 tokens; avglen = (6 + 3 + 8) / 3 = 17/3
    assert engine().search(["a"], depth=3).ids.tolist() == [[-1, -1, -1]]  # default drops "a"
    ids, scores = engine(token_pattern=r"(?u)\b\w+\b").search(["a"], depth=3).row(0)
    # "a": df 1, tf 3 in doc 2 -> ln(1 + 2.5 / 1.5) * 3 / (3 + 1.2 * (0.25 + 0.75 * 8 / (17/3)))
    assert ids.tolist() == [2]
    assert scores[0] == pytest.approx(
        math.log(8 / 3) * 3 / (3 + 1.2 * (0.25 + 0.75 * 8 / (17 / 3))), rel=1e-5
    )


def test_invalid_method() -> None:
    with pytest.raises(SituateError, match="sparse.method='okapi'"):
        Bm25sEngine(method="okapi")


def test_unknown_stemmer() -> None:
    with pytest.raises(SituateError, match="sparse.stemmer='klingon'"):
        Bm25sEngine(stemmer="klingon").build(DOCS)


def test_no_window_a_term_after_20000_words_is_found() -> None:
    # BM25 reads a whole text: a context after a chunk of any length is indexed
    e = Bm25sEngine()
    e.build(["filler " * 20_000 + "zebra", "zebra crossing"])
    assert sorted(e.search(["zebra"], depth=2).row(0)[0].tolist()) == [0, 1]


COOKBOOK_LIKE = [
    "The retriever loads its index from disk; the index maps each term to its documents.",
    "BM25 sums, for each query term, an idf weight times a saturated term frequency.",
    "Sparse retrieval with bm25s: the score matrix is stored column by column (CSC).",
    "A query term missing from every document adds nothing; repeated terms count twice.",
    "Indexes, documents and terms: the retriever ranks documents by their summed scores.",
]
QUERIES = ["index documents", "term term frequency", "retriever scores", "nothing here zebra", ""]


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
@pytest.mark.parametrize("options", [{}, {"stemmer": "english"}, {"stopwords": "en"}])
def test_a_loaded_index_scores_as_bm25s_itself_does(tmp_path: Path, method, options) -> None:
    """The engine scores a saved index with numpy, without bm25s: every document's score equals
    bm25s's own ``get_scores`` on the same index, bit for bit, for every method (bm25l and bm25+
    add a score for each absent term) and tokenizer option."""
    import bm25s

    built = Bm25sEngine(method=method, **options)
    built.build(COOKBOOK_LIKE)
    built.save(tmp_path / "index")
    loaded = Bm25sEngine(method=method, **options)
    loaded.load(tmp_path / "index")
    reference = bm25s.BM25.load(str(tmp_path / "index"))
    stemmer = built._stemmer()
    for query in QUERIES:
        tokens = bm25s.tokenize(
            [query], stopwords=options.get("stopwords"), stemmer=stemmer, return_ids=False,
            show_progress=False,
        )[0]  # fmt: skip
        assert loaded.query_tokens([query])[0] == tokens
        known = [t for t in tokens if t in reference.vocab_dict]
        if not known:
            assert loaded.search([query], depth=5).row(0)[0].tolist() == []
            continue
        expected = reference.get_scores(known)
        assert np.array_equal(loaded._matrix.scores(tokens), expected)
        assert np.array_equal(built._matrix.scores(tokens), expected)


def test_a_repeated_query_term_counts_twice() -> None:
    """bm25s adds a term's column once per occurrence in the query: "cat cat" scores double."""
    e = engine()
    once, twice = e.search(["cat"], depth=3), e.search(["cat cat"], depth=3)
    assert once.ids.tolist() == twice.ids.tolist()
    np.testing.assert_allclose(twice.scores[0][:2], 2 * once.scores[0][:2], rtol=1e-6)
