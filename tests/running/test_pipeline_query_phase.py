"""The query phase: a timed sample one at a time, the rest embedded in batches and searched
together, with the same rankings as one query at a time (cookbook slice, OpenAI emulator)."""

from __future__ import annotations

import numpy as np
import pytest

from situate.config.compose import compose
from situate.emulators.openai_api import OpenAIEmulator
from situate.running.app import build_pipeline

KEY = "sk-test-query-phase-5b1d"


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def pipeline(emu, tmp_path):
    cfg = compose(
        [
            "embedder=openai_small",
            f"embedder.base_url={emu.url}/v1",
            "embedder.batch_size=4",
            "fusion=rrf",
            "dataset.max_documents=4",
            f"output_dir={tmp_path}",
            "tracking=none",
        ]
    )
    pipe = build_pipeline(cfg)
    corpus, chunks, contexts = pipe.prepare({})
    pipe.build_indexes(chunks, contexts, set(pipe.fusion.needs), {})
    return pipe, [q.text for q in corpus.questions], pipe.searcher(chunks, contexts)


def test_batched_queries_rank_as_one_at_a_time_and_embed_in_batches(key_env, tmp_path):
    with OpenAIEmulator(api_key=KEY) as emu:
        pipe, queries, searcher = pipeline(emu, tmp_path / "batched")
        assert len(queries) == 14 and len(set(queries)) == len(queries)
        before = emu.calls("/v1/embeddings")
        told, embedded = [], []
        ranked, latency = searcher.search_all(
            queries, lambda n, total: told.append(n), 3, lambda n, total: embedded.append(n)
        )
        # 3 timed queries, one request each; the other 11 in requests of 4 (4 + 4 + 3)
        rest = len(queries) - 3
        assert emu.calls("/v1/embeddings") - before == 3 + 3
        assert len(latency.total) == 3 and len(latency.rerank) == len(queries)
        assert sum(told) == len(queries) and sum(embedded) == rest

        # cached like the chunks: a rerun on the same cache embeds no query again
        _, _, rerun = pipeline(emu, tmp_path / "batched")
        before = emu.calls("/v1/embeddings")
        again, _ = rerun.search_all(queries, sample=3)
        assert emu.calls("/v1/embeddings") == before
        np.testing.assert_array_equal(again.ids, ranked.ids)

        _, _, alone = pipeline(emu, tmp_path / "alone")  # a fresh cache: every query embedded
        one_by_one, all_timed = alone.search_all(queries)
    assert len(all_timed.total) == len(queries)
    np.testing.assert_array_equal(ranked.ids, one_by_one.ids)
    np.testing.assert_allclose(ranked.scores, one_by_one.scores, rtol=1e-6)


def test_each_stages_list_is_kept_per_query_in_query_order(key_env, tmp_path):
    with OpenAIEmulator(api_key=KEY) as emu:
        pipe, queries, _ = pipeline(emu, tmp_path / "stages")
        corpus, chunks, contexts = pipe.prepare({})
        searcher = pipe.searcher(chunks, contexts, stage_depth=3)
        ranked, _ = searcher.search_all(queries, sample=2)  # 2 alone, 12 in batches
        dense = pipe.dense.search(pipe.embeddings(queries, "query"), 3)
        sparse = pipe.sparse.search(queries, 3)
    assert len(searcher.stages) == len(queries)
    for q, kept in enumerate(searcher.stages):
        assert list(kept) == ["dense", "sparse", "fusion"]  # reranker none: no rerank list
        np.testing.assert_array_equal(kept["dense"][0], dense.ids[q])
        np.testing.assert_array_equal(kept["sparse"][0], sparse.ids[q])
        np.testing.assert_array_equal(kept["fusion"][0], ranked.ids[q][:3])  # fusion is final
        assert all(len(ids) == 3 and seconds >= 0 for ids, _, seconds in kept.values())
    # a batch's seconds are shared by its queries: the batched ones have equal shares
    assert len({kept["dense"][2] for kept in searcher.stages[2:]}) == 1
