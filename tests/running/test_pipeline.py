"""``Pipeline`` end to end in this process, on fake stages with hand-set vectors and lists.

Three documents of two paragraphs each (six chunks, rows 0-5) and two questions. Dense scores are
set by hand (chunk ``i`` embeds to the unit vector ``e_i``, so a query's weights order the
chunks), sparse lists too; the real flat index, RRF (k=60) and evaluator do the rest, and every
figure below is worked out by hand.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import BothAtTheLock
from situate.contexts.base import RuleContext
from situate.datasets.base import ShipsQuestions
from situate.dense.flat import FlatIndex
from situate.embedding.truncation import TokenWindow
from situate.evaluation.evaluate import Evaluator
from situate.fusion.rrf import ReciprocalRankFusion
from situate.money.billing import Billed, Unbilled
from situate.money.pricing import load_price_book
from situate.money.tokens import token_counter
from situate.paid.llm import LLMResponse
from situate.rankings import Rankings
from situate.records import Chunk, Context, Corpus, Document, Question, Span, Usage
from situate.reranking.none import NoReranker
from situate.running.pipeline import Pipeline
from situate.running.sweep_cache import corpus_digest

PARAGRAPHS = {
    "glaciers": ["Glaciers carve valleys.", "Moraines mark old ice."],
    "harbours": ["Harbours shelter ships.", "Tugboats push barges."],
    "bakery": ["Bread needs yeast.", "Ovens bake loaves."],
}
TEXTS = [p for doc in PARAGRAPHS.values() for p in doc]  # chunk rows 0-5, in document order
DOCUMENTS = [Document(name, "\n\n".join(paras), name.title()) for name, paras in PARAGRAPHS.items()]
# what the dense index embeds: each chunk with its context (TitleContext)
CONTEXTUAL = [f"{p}\n\nAbout {name.title()}." for name, paras in PARAGRAPHS.items() for p in paras]
Q1, Q2 = "What marks old ice?", "What pushes barges and bakes loaves?"
# query weights per chunk row: the dense ranking is their order
DENSE = {Q1: [6, 5, 4, 3, 2, 1], Q2: [1, 2, 6, 3, 5, 4]}
# BM25-like lists per query: (rows, scores), best first
SPARSE = {Q1: ([1, 3], [2.0, 1.0]), Q2: ([3, 5, 2], [3.0, 2.0, 1.0])}


def span_of(doc: Document, text: str) -> Span:
    start = doc.text.index(text)
    return Span(doc.doc_id, start, start + len(text))


class FakeDataset(ShipsQuestions):
    def load(self) -> Corpus:
        glaciers, harbours, bakery = DOCUMENTS
        questions = [
            Question("q1", Q1, (span_of(glaciers, "Moraines mark old ice."),)),
            Question(
                "q2",
                Q2,
                (span_of(harbours, "Tugboats push barges."), span_of(bakery, "Ovens bake loaves.")),
            ),
        ]
        return Corpus("three-docs", list(DOCUMENTS), questions)


class ParagraphChunker:
    name = "paragraphs"

    def identity(self) -> dict:
        return {"name": self.name}

    def chunk(self, corpus: Corpus) -> list[Chunk]:
        out = []
        for doc in corpus.documents:
            for i, para in enumerate(doc.text.split("\n\n")):
                start = doc.text.index(para)
                out.append(
                    Chunk(f"{doc.doc_id}#{i}", doc.doc_id, i, start, start + len(para), para)
                )
        return out


class TitleContext(RuleContext):
    """Situates each chunk with its document's title; only the dense index sees it."""

    name = "title"

    def __init__(self) -> None:
        super().__init__(placement="after", apply_to=("dense",))

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        return [Context(c.chunk_id, f"About {corpus.document(c.doc_id).title}.") for c in chunks]


class HandSetEmbedder(Unbilled):
    """Chunk row ``i`` (with its context) embeds to ``e_i``; a query to its normalised weights.

    A text it was not given by hand (a chunk without its context) raises ``KeyError``."""

    name = "hand-set"
    batch_size = 256

    def warm_up(self) -> None:
        pass  # nothing to load

    def __init__(self, tokens: int = 512) -> None:
        self.tokens = tokens
        self.encoded: list[str] = []
        self.vectors = {("document", t): row for t, row in zip(CONTEXTUAL, np.eye(6), strict=True)}
        for query, weights in DENSE.items():
            w = np.asarray(weights, dtype=np.float32)
            self.vectors["query", query] = w / np.linalg.norm(w)

    def identity(self) -> dict:
        return {"embedder": self.name}

    def window(self) -> TokenWindow:
        """A word a token, two special tokens, ``self.tokens`` of them read."""
        return TokenWindow(
            self.tokens, "head", self.name, "words", lambda ts: [len(t.split()) + 2 for t in ts]
        )

    def encode(self, texts: list[str], kind: str) -> np.ndarray:
        self.encoded.extend(texts)
        return np.stack([self.vectors[kind, t] for t in texts]).astype(np.float32)


class HandSetSparse:
    """Answers each question with its hand-set list; remembers the texts it indexed."""

    name = "hand-set-sparse"
    separate_context = False

    def __init__(self) -> None:
        self.texts: list[str] | None = None

    def identity(self) -> dict:
        return {"engine": self.name}

    def build(self, texts: list[str], contexts: list[str] | None = None) -> None:
        self.texts = list(texts)

    def save(self, folder: Path) -> None:
        (folder / "texts.json").write_text(json.dumps(self.texts))

    def load(self, folder: Path) -> None:
        self.texts = json.loads((folder / "texts.json").read_text())

    def search(self, queries: list[str], depth: int) -> Rankings:
        rows = [(np.array(SPARSE[q][0][:depth]), np.array(SPARSE[q][1][:depth])) for q in queries]
        return Rankings.from_rows(rows, depth)


def pipeline(cache_dir: Path, embedder: HandSetEmbedder, sparse: HandSetSparse) -> Pipeline:
    return Pipeline(
        dataset=FakeDataset(),
        chunker=ParagraphChunker(),
        context=TitleContext(),
        embedder=embedder,
        dense=FlatIndex(threads=1),
        sparse=sparse,
        fusion=ReciprocalRankFusion(k=60),
        reranker=NoReranker(),
        evaluator=Evaluator(ks=(1, 2, 3)),
        cache_dir=cache_dir,
    )


def test_a_window_that_cuts_a_context_is_counted_and_said(tmp_path: Path, caplog) -> None:
    # word counts + 2 special tokens of the dense texts (chunk, then "About <Title>."):
    #   3+2+2=7, 4+2+2=8 (Moraines mark old ice.), 7, 7, 7, 7. A window of 7 cuts one text by
    #   one token, and its context sits at the end the window drops (placement=after).
    result = pipeline(tmp_path, HandSetEmbedder(tokens=7), HandSetSparse()).run()
    assert {k: v for k, v in result.metrics.items() if "truncated" in k} == {
        "texts_truncated": 1.0,
        "texts_truncated_share": 1 / 6,
        "texts_truncated_tokens": 1.0,
        "texts_truncated_tokens_max": 1.0,
        "contexts_truncated": 1.0,
        "contexts_truncated_share": 1 / 6,
    }
    assert result.truncation["dense"].cut_rows == (1,)  # glaciers#1, "Moraines mark old ice."
    cut = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert cut[0].startswith(
        "dense index: hand-set's window of 7 tokens cut the context of 1 of 6 chunks (16.7%)"
    )
    assert "set context.placement=before" in cut[0]
    assert cut[1].startswith("dense index: 1 of 6 texts (16.7%) are longer than hand-set's")
    # the same texts and window: counted once, read back from the cache, said again
    caplog.clear()
    again = pipeline(tmp_path, HandSetEmbedder(tokens=7), HandSetSparse()).run()
    assert again.truncation == result.truncation
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 2
    # a window every text fits in: nothing cut, nothing said
    caplog.clear()
    wide = pipeline(tmp_path, HandSetEmbedder(tokens=8), HandSetSparse()).run()
    assert wide.metrics["texts_truncated"] == 0 and wide.metrics["contexts_truncated"] == 0
    assert not [r for r in caplog.records if "window" in r.getMessage()]


def test_a_run_fuses_hand_set_lists_and_scores_them_by_hand(tmp_path: Path) -> None:
    embedder, sparse = HandSetEmbedder(), HandSetSparse()
    result = pipeline(tmp_path, embedder, sparse).run()

    # contexts reach the dense index only (apply_to=[dense]); BM25 indexes the plain chunks
    assert sparse.texts == TEXTS
    assert embedder.encoded == [*CONTEXTUAL, Q1, Q2]
    # RRF, k=60, 1-based ranks. q1: dense 0,1,2,3,4,5; sparse 1,3.
    #   row 1: 1/62 + 1/61 > row 3: 1/64 + 1/62 > row 0: 1/61        -> 1, 3, 0
    # q2: dense 2,4,5,3,1,0; sparse 3,5,2.
    #   row 2: 1/61 + 1/63 = 0.032266 > row 3: 1/64 + 1/61 = 125/3904 > row 5: 1/63 + 1/62 = 125/3906
    assert result.rankings.ids.tolist() == [[1, 3, 0], [2, 3, 5]]
    assert result.rankings.scores[0, 0] == pytest.approx(1 / 62 + 1 / 61)
    assert result.rankings.scores[1, 1] == pytest.approx(125 / 3904)
    # q1's gold is row 1 (rank 1); q2's golds are rows 3 and 5 (ranks 2 and 3)
    m = result.metrics
    assert (m["pass_at_1"], m["pass_at_2"], m["pass_at_3"]) == (
        0.5,
        0.75,
        1.0,
    )  # (1+0)/2, (1+1/2)/2
    assert (m["recall_at_1"], m["recall_at_2"], m["recall_at_3"]) == (0.5, 0.75, 1.0)
    assert m["mrr"] == 0.75  # (1/1 + 1/2) / 2
    assert m["n_chunks"] == 6 and m["n_documents"] == 3 and m["n_questions"] == 2
    assert m["texts_embedded"] == 8  # six chunks and two questions
    # index_tokens counts what the dense index embedded, contexts included, not the plain chunks:
    # WordPiece splits at the blank line, so each text is its chunk's tokens plus its context's
    # ("About Glaciers." is 3: about, glaciers, .)
    count, _ = token_counter(None, "local")
    assert count(["About Glaciers."]) == [3]
    assert (
        m["index_tokens"]
        == sum(count(CONTEXTUAL))
        == sum(count(TEXTS))
        + sum(
            count([f"About {name.title()}." for name, paras in PARAGRAPHS.items() for _ in paras])
        )
    )
    q2 = result.evaluation.per_question[1]
    assert q2.top_ids == ["harbours#0", "harbours#1", "bakery#1"] and q2.first_relevant_rank == 2


def test_a_second_run_reads_every_vector_and_index_from_the_cache(
    tmp_path: Path, monkeypatch
) -> None:
    first = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse()).run()
    embedder, sparse = HandSetEmbedder(), HandSetSparse()

    def no_counting(*args, **kwargs):
        raise AssertionError("index_tokens counted again, not read from the cache")

    monkeypatch.setattr("situate.money.tokens.token_counter", no_counting)
    second = pipeline(tmp_path, embedder, sparse).run()
    assert second.metrics["index_tokens"] == first.metrics["index_tokens"] > 0
    assert embedder.encoded == [] and second.metrics["texts_embedded"] == 0
    assert sparse.texts == TEXTS  # loaded from the sparse index's cache folder, not built again
    assert second.rankings.ids.tolist() == first.rankings.ids.tolist()
    assert second.evaluation.metrics == first.evaluation.metrics


# -- spend of a run stopped before its contexts were all written (issue 16, item 2) ------------


class PaidTitleContext(TitleContext):
    """An LLM context's bill: one call paid by this run; ``written`` the configuration's contexts
    as their store records them (empty: the run stopped before writing them all)."""

    def __init__(self, written: list) -> None:
        super().__init__()
        # claude-haiku-5-5: 1,000 uncached, 2,000 cache-write (5m) and 100 output tokens
        self.call = ("glaciers", LLMResponse("ctx", Usage(1000, 2000, 0, 100), "claude-haiku-5-5"))
        self.written = written

    def billed(self) -> Billed:
        return Billed(model="claude-haiku-5-5", calls=[self.call], written=self.written)


def test_a_stopped_run_reports_what_it_paid_and_no_configuration_cost(tmp_path: Path) -> None:
    usd = (1000 * 0.10 + 2000 * 0.125 + 100 * 0.50) / 1e6  # $0.0004, at conf/pricing's prices

    def spent(written: list) -> dict[str, float]:
        p = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
        p.context, p.price_book = PaidTitleContext(written), load_price_book()
        return p.spent()

    stopped = spent([])
    assert stopped["run_cost_usd_context"] == pytest.approx(usd, rel=1e-12)
    assert stopped["run_llm_calls"] == 1 and stopped["run_tokens_cache_write"] == 2000
    # what the configuration's contexts cost is not known until they are all written: not $0
    assert not [k for k in stopped if k.startswith("config_")]
    done = spent([PaidTitleContext([]).call])
    assert done["config_cost_usd_context"] == pytest.approx(usd, rel=1e-12)
    assert done["config_cost_usd_total"] == pytest.approx(usd, rel=1e-12)
    assert done["config_llm_calls"] == 1


def test_calls_unanswered_at_a_stop_are_logged_apart_from_the_priced_ones(tmp_path: Path) -> None:
    class StoppedWithCallsInFlight(PaidTitleContext):
        def billed(self) -> Billed:
            return dataclasses.replace(super().billed(), unanswered=2)

    p = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    p.context, p.price_book = StoppedWithCallsInFlight([]), load_price_book()
    spent = p.spent()
    assert spent["run_llm_calls"] == 1 and spent["run_llm_calls_unanswered"] == 2
    # an ordinary run logs no such metric
    p.context = PaidTitleContext([])
    assert "run_llm_calls_unanswered" not in p.spent()


def test_a_folder_without_questions_stops_before_a_document_is_parsed(tmp_path: Path) -> None:
    """No qa.json: the run names the file it expected before parsing a folder (minutes of PDFs)."""
    from situate.datasets.folder import FolderLoader
    from situate.errors import SituateError

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nSome text about glaciers.\n")
    parse_cache = tmp_path / "parsed.sqlite"
    run = pipeline(tmp_path / "cache", HandSetEmbedder(), HandSetSparse())
    run.dataset = FolderLoader(str(folder), cache=str(parse_cache))
    with pytest.raises(SituateError, match=rf"^{folder / 'qa.json'}: no questions file, and "):
        run.run()
    assert not parse_cache.exists()  # the parse cache opens on the first file parsed
    run.dataset.load()  # without questions required (situate index, search, chunks): it parses
    assert parse_cache.exists()


# -- the chunk cache (issue 23, item 2) ---------------------------------------------------------


def test_chunks_are_cut_once_per_corpus_and_chunker(tmp_path: Path, monkeypatch) -> None:
    first = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    chunks = first.chunks(FakeDataset().load())

    def no_chunking(self, corpus):
        raise AssertionError("chunked again, not read from the chunk cache")

    monkeypatch.setattr(ParagraphChunker, "chunk", no_chunking)
    again = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    assert again.chunks(FakeDataset().load()) == chunks
    # another chunker option, or a changed document, is another key: chunked again
    monkeypatch.setattr(ParagraphChunker, "identity", lambda self: {"name": "paragraphs", "x": 1})
    with pytest.raises(AssertionError, match="chunked again"):
        again.chunks(FakeDataset().load())
    monkeypatch.undo()
    monkeypatch.setattr(ParagraphChunker, "chunk", no_chunking)
    corpus = FakeDataset().load()
    corpus.documents[0] = Document(corpus.documents[0].doc_id, corpus.documents[0].text + " More.")
    with pytest.raises(AssertionError, match="chunked again"):
        again.chunks(corpus)


def test_two_jobs_side_by_side_cut_the_same_chunks_once(tmp_path: Path, monkeypatch) -> None:
    """Two jobs of a joblib sweep over one corpus and chunker: the second waits for the first's
    chunks and reads them from the cache (the first cuts only once both came to the lock)."""
    both = BothAtTheLock(monkeypatch)
    monkeypatch.setattr(ParagraphChunker, "chunk", both.held(ParagraphChunker.chunk))
    results = both.run(
        lambda: pipeline(tmp_path, HandSetEmbedder(), HandSetSparse()).chunks(FakeDataset().load())
    )
    assert both.computed == 1 and len(results) == 2 and results[0] == results[1]


def test_two_jobs_side_by_side_count_the_index_tokens_once(tmp_path: Path, monkeypatch) -> None:
    """The chunks' WordPiece count (57 s for 66k chunks) serves every job of a chunking: two jobs
    side by side count it once (the first counts only once both came to the lock)."""
    both = BothAtTheLock(monkeypatch)
    monkeypatch.setattr("situate.money.tokens.token_counter", both.held(token_counter))
    texts = ["Glaciers carve valleys.", "Harbours shelter boats."]
    found = both.run(
        lambda: pipeline(tmp_path, HandSetEmbedder(), HandSetSparse()).shared.local_tokens(texts)
    )
    assert both.computed == 1 and len(found) == 2 and found[0] == found[1] > 0


def test_the_corpus_digest_names_document_ids_texts_and_shipped_chunks() -> None:
    corpus = FakeDataset().load()
    digest = corpus_digest(corpus)
    renamed = Corpus("x", [Document("other", d.text) for d in corpus.documents[:1]], [])
    same_text = Corpus("x", [Document(corpus.documents[0].doc_id, corpus.documents[0].text)], [])
    assert corpus_digest(renamed) != corpus_digest(same_text)
    assert corpus_digest(FakeDataset().load()) == digest
    shipped = Chunk("a#0", corpus.documents[0].doc_id, 0, 0, 3, corpus.documents[0].text[:3])
    with_chunks = FakeDataset().load()
    with_chunks.prechunks = [shipped]
    assert corpus_digest(with_chunks) != digest
    other_heading = corpus_digest(with_chunks)
    with_chunks.prechunks = [dataclasses.replace(shipped, heading_path=("H",))]
    assert corpus_digest(with_chunks) not in (digest, other_heading)


@pytest.mark.parametrize("separator", ["\n\n", " ", " | "])
def test_index_tokens_count_chunk_and_context_apart_only_across_whitespace(
    tmp_path: Path, separator: str
) -> None:
    p = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    p.context.separator = separator
    corpus = FakeDataset().load()
    chunks = p.chunks(corpus)
    contexts = p.context.contextualize(corpus, chunks)
    count, _ = token_counter(None, "local")
    joined = p.context.texts(chunks, contexts, "dense")
    assert p.index_tokens(chunks, contexts) == sum(count(joined))
    if separator.strip():  # the separator's own tokens are counted
        assert sum(count(joined)) > sum(count([c.text for c in chunks])) + sum(
            count([x.text for x in contexts])
        )


def test_the_audit_is_read_back_for_the_same_chunks_contexts_and_documents(
    tmp_path: Path, monkeypatch
) -> None:
    """The faithfulness audit's flags are cached by chunk ids, documents and contexts: a second
    pipeline reads them back; a changed context is audited again."""
    import situate.running.sweep_cache

    first = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    corpus = FakeDataset().load()
    chunks = first.chunks(corpus)
    contexts = [Context(c.chunk_id, "Glaciers and 1999 Volcanoes.") for c in chunks]
    flags = first.shared.audit(corpus, chunks, contexts)
    # "1999" is in no document: every chunk is flagged for it
    assert [f.chunk_id for f in flags] == [c.chunk_id for c in chunks]
    assert all("1999" in f.unsupported for f in flags)

    def no_audit(*args):
        raise AssertionError("audited again, not read from the cache")

    monkeypatch.setattr(situate.running.sweep_cache, "audit", no_audit)
    again = pipeline(tmp_path, HandSetEmbedder(), HandSetSparse())
    assert again.shared.audit(corpus, chunks, contexts) == flags
    changed = [*contexts[:-1], Context(chunks[-1].chunk_id, "Ovens.")]
    with pytest.raises(AssertionError, match="audited again"):
        again.shared.audit(corpus, chunks, changed)
