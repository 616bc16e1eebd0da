"""Progress bars: what they say and the totals they count, read through the progress hook."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from situate.embedding.base import CachedEmbeddings
from situate.progress import progress_bar
from situate.running.pipeline import batched_label, embedding_label, queries_label
from situate.stores.sqlite import BlobStore


class LengthEmbedder:
    """Vector of a text: [len(text), 1]."""

    name = "length"

    def identity(self) -> dict:
        return {"provider": "length"}

    def encode(self, texts: list[str], kind: str) -> np.ndarray:
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_chunk_label_and_bar_total_count_the_same_texts(tmp_path: Path) -> None:
    texts = ["a", "bb", "a", "ccc", "bb"]  # 5 chunks, 3 distinct texts
    label = embedding_label(texts)
    assert label == "embedding 5 chunks (3 distinct texts)"
    told: list[tuple[int, int]] = []
    embeddings = CachedEmbeddings(
        LengthEmbedder(), BlobStore(tmp_path / "e.sqlite", "embeddings"), batch_size=2
    )
    embeddings(texts, "document", lambda n, total: told.append((n, total)))
    assert told == [(0, 3), (2, 3), (1, 3)]  # none cached, then batches of 2 and 1 of 3 distinct


def test_chunk_label_without_duplicates_says_only_the_count() -> None:
    assert embedding_label(["a", "b"]) == "embedding 2 chunks"


def test_the_cookbook_bar_reads_723_of_723_distinct_on_80_columns(capsys) -> None:
    texts = [f"chunk {i % 723}" for i in range(737)]  # the cookbook: 737 chunks, 723 texts
    with progress_bar(embedding_label(texts)) as advance:
        advance(0, 723)
        advance(723, 723)
    err = capsys.readouterr().err  # rich's default width off a terminal: 80 columns
    assert "embedding 737 chunks (723 distinct texts)" in err and "723/723" in err


def test_a_bar_shows_its_label_and_final_count(capsys) -> None:
    with progress_bar(queries_label(3)) as advance:
        for _ in range(3):
            advance(1, 3)
    err = capsys.readouterr().err  # not a terminal: rich prints the finished bar once
    assert "embedding + searching 3 questions" in err
    assert "3/3" in err


def test_a_sparse_only_search_says_nothing_is_embedded() -> None:
    assert queries_label(129, embeds=False) == "searching 129 questions"
    assert queries_label(129) == "embedding + searching 129 questions"


def test_the_batched_questions_bar_counts_the_questions_after_the_timed_ones() -> None:
    # 74 questions, the first 50 timed one at a time: 24 go in batches, 23 distinct texts
    queries = [f"q{i}" for i in range(73)] + ["q60"]
    assert batched_label(queries, 50) == "embedding 24 questions in batches (23 distinct texts)"
    assert batched_label(queries[:60], 50) == "embedding 10 questions in batches"
    assert batched_label(queries, None) == "embedding 0 questions in batches"  # all timed


def test_nothing_to_do_shows_no_bar(capsys) -> None:
    with progress_bar("embedding 2 chunks (minilm)") as advance:
        advance(2, 2)  # everything came from the cache
    assert capsys.readouterr().err == ""


def test_the_query_loop_reports_each_question(tmp_path: Path) -> None:
    from situate.dense.flat import FlatIndex
    from situate.fusion.dense_only import DenseOnly
    from situate.reranking.base import CachedReranker
    from situate.reranking.none import NoReranker
    from situate.running.pipeline import Searcher

    embeddings = CachedEmbeddings(LengthEmbedder(), BlobStore(tmp_path / "e.sqlite", "embeddings"))
    dense = FlatIndex(threads=1)
    dense.build(embeddings(["a", "bb", "ccc"], "document"))
    reranker = CachedReranker(NoReranker(), BlobStore(tmp_path / "r.sqlite", "rerank"))
    searcher = Searcher(embeddings, dense, None, DenseOnly(), reranker, ["a", "bb", "ccc"], 2)
    told: list[tuple[int, int]] = []
    ranked, latency = searcher.search_all(["x", "yy"], lambda n, total: told.append((n, total)))
    assert told == [(1, 2), (1, 2)]
    assert len(latency.total) == 2


def test_the_batched_questions_bar_counts_what_it_embeds(tmp_path: Path, monkeypatch) -> None:
    """A run answers eval.latency_sample questions one at a time and embeds the rest in batches:
    that bar's label names the rest and their distinct texts, the count its total reaches."""
    from test_pipeline import FakeDataset, HandSetEmbedder, HandSetSparse, pipeline

    import situate.running.pipeline
    from situate.records import Question

    class FiveQuestions(FakeDataset):  # q1, q2, then q1's text again and q2's twice
        def load(self):
            corpus = super().load()
            q1, q2 = corpus.questions
            corpus.questions.extend(
                Question(f"q{n}", q.text, q.gold) for n, q in ((3, q1), (4, q2), (5, q2))
            )
            return corpus

    told: dict[str, list[tuple[int, int | None]]] = {}

    @contextlib.contextmanager
    def recording_bar(description: str, **options):
        calls = told.setdefault(description, [])
        yield lambda n, total=None: calls.append((n, total))

    monkeypatch.setattr(situate.running.pipeline, "progress_bar", recording_bar)
    run = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    run.dataset = FiveQuestions()
    run.evaluator.latency_sample = 2  # q1 and q2 one at a time; q3, q4, q5 (2 texts) in batches
    run.run()
    # the timed queries embedded both texts already: the bar's 2 of 2 come from the cache
    assert told["embedding 3 questions in batches (2 distinct texts)"] == [(2, 2)]
    assert told["embedding + searching 5 questions"] == [(1, 5)] * 5
