"""``sparse: postgres_fts`` on a real embedded Postgres: ts_rank, ts_rank_cd, languages, fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from situate.errors import SituateError
from situate.sparse.postgres_fts import PostgresFtsEngine

DOCS = ["the cat sat on the mat", "dogs chase cats", "a bird in the hand"]
# ts_rank of an OR query: per query lexeme, (w_max + sum_i w_i / i^2 - w_max) / (pi^2 / 6),
# averaged over the query's lexemes; one occurrence at weight 1.0 gives 1 / 1.6449341 = 0.6079271
ONE = 1 / 1.64493406685


def test_ts_rank_orders_three_documents_by_hand_values(pg: dict) -> None:
    engine = PostgresFtsEngine(rank="ts_rank", **pg)
    engine.build(DOCS)
    out = engine.search(["cats and dogs", "bird", "the"], depth=3)
    # "cats and dogs" -> 'cat' | 'dog' ('and' is a stop word): doc 1 has both, doc 0 only 'cat'
    assert out.ids[0].tolist() == [1, 0, -1]
    assert out.scores[0, :2] == pytest.approx([(ONE + ONE) / 2, ONE / 2], rel=1e-6)
    assert out.ids[1].tolist() == [2, -1, -1]
    assert out.scores[1, 0] == pytest.approx(ONE, rel=1e-6)
    assert out.ids[2].tolist() == [-1, -1, -1]  # only stop words: nothing matches


def test_ts_rank_cd_with_a_separate_weighted_context_field(pg: dict) -> None:
    engine = PostgresFtsEngine(rank="ts_rank_cd", context_field=True, context_weight=0.5, **pg)
    assert engine.separate_context
    engine.build(DOCS, ["about animals", "about dogs", "a proverb about a bird"])
    out = engine.search(["cats and dogs", "bird", "proverb"], depth=3)
    # cover density of an OR query: each matching position is a cover worth its weight
    # (chunk text A = 1.0, context B = 0.5): doc 1 = dog(A) + cat(A) + dog(B) = 2.5, doc 0 = 1.0
    assert out.ids[0].tolist() == [1, 0, -1]
    assert out.scores[0, :2].tolist() == pytest.approx([2.5, 1.0])
    assert out.ids[1, 0] == 2 and out.scores[1, 0] == pytest.approx(1.5)  # bird(A) + bird(B)
    assert out.ids[2, 0] == 2 and out.scores[2, 0] == pytest.approx(0.5)  # proverb(B) only


def test_normalization_divides_by_document_length(pg: dict) -> None:
    plain = PostgresFtsEngine(rank="ts_rank_cd", normalization=0, **pg)
    by_length = PostgresFtsEngine(rank="ts_rank_cd", normalization=2, **pg)
    assert plain.identity() == by_length.identity()  # query time: one table for both
    plain.build(DOCS)
    by_length.build(DOCS)
    assert plain.table == by_length.table
    # doc 1 has 3 words (dogs chase cats): 2.0 / 3; doc 0 has 3 lexemes (the, on: stop words)
    out = by_length.search(["cats and dogs"], depth=2)
    assert out.scores[0].tolist() == pytest.approx([2.0 / 3, 1.0 / 3])


def test_language_decides_stemming(pg: dict) -> None:
    docs = ["los niños estaban corriendo en el parque", "una casa blanca"]
    spanish = PostgresFtsEngine(language="spanish", **pg)
    spanish.build(docs)
    simple = PostgresFtsEngine(language="simple", **pg)
    simple.build(docs)
    # Snowball's Spanish stemmer makes "correr" and "corriendo" both 'corr'; simple only lowercases
    assert spanish.search(["correr"], depth=2).ids[0].tolist() == [0, -1]
    assert simple.search(["correr"], depth=2).ids[0].tolist() == [-1, -1]
    assert simple.search(["CORRIENDO"], depth=2).ids[0].tolist() == [0, -1]


def test_saved_folder_loads_on_a_server_without_the_table(pg: dict, tmp_path: Path) -> None:
    built = PostgresFtsEngine(context_field=True, **pg)
    built.build(DOCS, ["x", "y", "z"])
    built.save(tmp_path)
    expected = built.search(["cat"], depth=3)
    elsewhere = PostgresFtsEngine(context_field=True, **{**pg, "schema": pg["schema"] + "_b"})
    elsewhere.load(tmp_path)
    assert elsewhere.search(["cat"], depth=3).ids.tolist() == expected.ids.tolist()


def test_texts_with_nul_characters_are_indexed(pg: dict) -> None:
    engine = PostgresFtsEngine(**pg)
    engine.build(["binary\x00blob here", "plain"])
    assert engine.search(["blob"], depth=2).ids[0].tolist() == [0, -1]


def test_unknown_language_lists_the_servers_configurations(pg: dict) -> None:
    engine = PostgresFtsEngine(language="klingon", **pg)
    with pytest.raises(SituateError, match="sparse.language='klingon'.*valid: .*english.*spanish"):
        engine.build(DOCS)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"rank": "bm25"}, "sparse.rank='bm25' is not one of ts_rank, ts_rank_cd"),
        ({"normalization": 64}, "sparse.normalization=64 must be a bit mask from 0 to 63"),
        ({"context_weight": 2}, "sparse.context_weight=2 must be between 0 and 1"),
    ],
)
def test_bad_parameters_are_one_line(kwargs: dict, words: str) -> None:
    with pytest.raises(SituateError, match=words):
        PostgresFtsEngine(**kwargs)


def test_no_window_a_term_after_20000_words_is_found(pg: dict) -> None:
    # a tsvector keeps every lexeme (positions past 16,383 are stored as 16,383; the limit is
    # 1 MB of tsvector, an error, never a silent cut)
    engine = PostgresFtsEngine(**pg)
    engine.build(["filler " * 20_000 + "zebra", "zebra crossing"])
    assert sorted(engine.search(["zebra"], depth=2).row(0)[0].tolist()) == [0, 1]
