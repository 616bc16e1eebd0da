"""``execution=ray``: contexts and document embeddings as Ray tasks over shards (issue 13).

The Ray tests start a local Ray instance with 2 workers in this process (the first run that
needs it starts it; it is shut down after the module) and drive the Anthropic and OpenAI
emulators, which count what each answer was billed. A run on Ray must give what a local run
gives (contexts, vectors, metrics, costs) and pay each answer once; a rerun pays nothing.
"""

from __future__ import annotations

import socket

import numpy as np
import pytest

from conftest import run_cli
from situate.config.compose import compose
from situate.contexts.none import NoContext
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.fault_injection import Faults
from situate.emulators.openai_api import OpenAIEmulator
from situate.errors import SituateError
from situate.paid.llm import LLMResponse
from situate.records import Chunk, Corpus, Document, Usage
from situate.running.app import build_pipeline
from situate.running.execution import (
    RayExecution,
    ShardResult,
    adopt,
    document_shards,
    merged_stats,
)
from situate.stores.sqlite import BlobStore
from test_cli import assert_one_line_error

KEY = "emulator-key-execution-13"
SLICE = ["dataset.max_documents=4", "tracking=none"]  # 4 cookbook files, 28 chunks
# 8 texts per embeddings request: the 28 chunks are 4 requests, shared out between 2 tasks
OPENAI = ["embedder=openai_small", "embedder.batch_size=8"]
LLM = ["context=llm", "llm=claude_haiku_5_5", "llm.max_retries=1", "llm.backoff_base=0.01"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


# -- sharding and merging (no Ray) -------------------------------------------------------------


def corpus_of(texts: dict[str, str], rows: list[str]) -> tuple[Corpus, list[Chunk]]:
    docs = [Document(d, t) for d, t in texts.items()]
    chunks = [Chunk(f"{d}:{i}", d, i, 0, 1, f"{d}{i}") for i, d in enumerate(rows)]
    return Corpus("c", docs, []), chunks


def test_shards_hold_whole_documents_balanced_by_chunks():
    corp, chunks = corpus_of({"a": "A", "b": "B", "c": "C"}, ["a", "a", "a", "b", "c", "c"])
    # 6 chunks in 2 shards: a's 3, then b's 1 and c's 2
    assert document_shards(corp, chunks, 2) == [[0, 1, 2], [3, 4, 5]]
    assert document_shards(corp, chunks, 1) == [[0, 1, 2, 3, 4, 5]]
    assert document_shards(corp, chunks, 5) == [[0, 1, 2], [3], [4, 5]]  # never a split document


def test_documents_of_identical_text_share_a_shard():
    # a and c have the same text: their prompts are the same, one task must write them
    corp, chunks = corpus_of({"a": "same", "b": "B", "c": "same"}, ["a", "b", "c"])
    assert document_shards(corp, chunks, 2) == [[0, 2], [1]]


def test_shard_stats_merge_into_one_runs():
    parts = [
        {"contexts_from_store": 3.0, "concurrency_min": 2.0, "store_window_ms_max": 5.0,
         "store_window_ms_p50": 1.0, "contextualize_seconds": 4.0, "rate_wait_seconds": 1.5},
        {"contexts_from_store": 4.0, "concurrency_min": 4.0, "store_window_ms_max": 2.0,
         "store_window_ms_p50": 3.0, "contextualize_seconds": 6.0, "rate_wait_seconds": 0.5,
         "llm_generation_tokens_per_s": 9.0},
    ]  # fmt: skip
    assert merged_stats(parts, []) == {
        "contexts_from_store": 7.0,
        "concurrency_min": 2.0,
        "store_window_ms_max": 5.0,
        "store_window_ms_p50": 2.0,
        "contextualize_seconds": 6.0,  # the shards ran at once: the slowest one
        "rate_wait_seconds": 2.0,
    }  # a throughput without its calls is not averaged from the shards'


def test_the_driver_adopts_the_shards_calls_and_only_whole_written_contexts():
    class Stage:  # what the driver's context stage records, as LLMContext does
        calls: list = []
        written: list = []
        failures: list = []
        stats: dict = {}

    a, b = LLMResponse("ctx a", Usage(output=3), "m"), LLMResponse("ctx b", Usage(output=4), "m")
    done = ShardResult([], {"calls": [("a", a)], "written": [("a", "ctx a")]}, {"llm_calls": 1})
    stopped = ShardResult([], {"calls": [("b", b)], "written": []}, {"llm_calls": 1}, "budget")
    stage = Stage()
    adopt(stage, [done])
    assert (stage.calls, stage.written) == ([("a", a)], [("a", "ctx a")])
    adopt(stage, [done, stopped])
    # every call paid is the run's; a shard stopped, so the configuration's contexts are not
    # all written and none is priced as the configuration's (no config_* figure)
    assert (stage.calls, stage.written, stage.stats) == ([("a", a), ("b", b)], [], {"llm_calls": 2})


def test_the_driver_adopts_no_records_of_a_stage_that_calls_no_llm():
    stage = NoContext()
    adopt(stage, [ShardResult([]), ShardResult([])])
    assert (stage.calls, stage.written, stage.failures, stage.stats) == (None, (), (), {})


def test_an_address_without_a_cluster_is_one_line_within_seconds():
    port = closed_port()
    with pytest.raises(SituateError, match=rf"RAY_ADDRESS=127.0.0.1:{port} \(.*\); set RAY_"):
        RayExecution(address=f"127.0.0.1:{port}")
    with pytest.raises(SituateError, match="not host:port"):
        RayExecution(address="head-node")


def test_bad_parameters_are_one_line():
    with pytest.raises(SituateError, match="execution.num_workers=0 must be >= 1"):
        RayExecution(num_workers=0)
    with pytest.raises(SituateError, match="execution.shard_by='chunk' is not one of document"):
        RayExecution(shard_by="chunk")


def test_a_budget_is_refused_before_ray_starts(tmp_path):
    cfg = compose([*LLM, "context.budget_usd=1", "execution=ray", f"output_dir={tmp_path}"])
    pipeline = build_pipeline(cfg)
    corp, chunks = corpus_of({"a": "A", "b": "B"}, ["a", "b"])
    with pytest.raises(SituateError, match="budget_usd caps what one process spends"):
        pipeline.execution.contextualize(pipeline.context, corp, chunks)


# -- on a local Ray instance -------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_instance():
    yield
    import ray

    ray.shutdown()


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for v in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(v, raising=False)


def run(out, *overrides):
    pipeline = build_pipeline(compose([*SLICE, f"output_dir={out}", *overrides]))
    return pipeline, pipeline.run()


def stored(out, name: str, table: str) -> dict[str, bytes]:
    return dict(BlobStore(out / "cache" / name, table).items())


def document_vectors(pipeline, result) -> np.ndarray:
    """The vectors of the run's chunks as indexed, read back from its embedding store."""
    texts = pipeline.context.texts(result.chunks, result.contexts, "dense")
    encoded = pipeline.embeddings.encoded
    vectors = pipeline.embeddings(texts, "document")
    assert pipeline.embeddings.encoded == encoded  # all stored: nothing encoded again
    return vectors


def billed(emu, path: str) -> dict[str, int]:
    return emu.stats()["paths"].get(path, {}).get("billed_keys", {})


def paid_metrics(metrics: dict) -> dict:
    """What a run scored and paid (not how long it took, nor the limits each process saw)."""
    drop = ("seconds", "_ms", "_ms_max", "_ms_p50", "concurrency_final")
    return {k: v for k, v in metrics.items() if not k.endswith(drop)}


@pytest.mark.slow
def test_contexts_and_embeddings_on_ray_are_a_local_runs(ray_instance, keys, tmp_path):
    with (
        AnthropicEmulator(api_key=KEY, ttft=0.0) as local_llm,
        OpenAIEmulator(api_key=KEY) as local_emb,
        AnthropicEmulator(api_key=KEY, ttft=0.0) as ray_llm,
        OpenAIEmulator(api_key=KEY) as ray_emb,
    ):

        def at(llm, emb):
            return [*LLM, f"llm.base_url={llm.url}", *OPENAI, f"embedder.base_url={emb.url}/v1"]

        local_pipeline, local = run(tmp_path / "local", *at(local_llm, local_emb))
        pipeline, on_ray = run(tmp_path / "ray", *at(ray_llm, ray_emb), "execution=ray")
        assert pipeline.execution.name == "ray"
        # the same contexts in the same chunk order, the same vectors, the same scores and costs
        assert [c.chunk_id for c in on_ray.chunks] == [c.chunk_id for c in local.chunks]
        assert [x.text for x in on_ray.contexts] == [x.text for x in local.contexts]
        assert [x.usage for x in on_ray.contexts] == [x.usage for x in local.contexts]
        vectors = document_vectors(pipeline, on_ray)
        assert vectors.shape == (28, 1536)
        np.testing.assert_array_equal(vectors, document_vectors(local_pipeline, local))
        assert paid_metrics(on_ray.metrics) == pytest.approx(paid_metrics(local.metrics))
        assert on_ray.metrics["run_llm_calls"] == len(on_ray.chunks) == 28
        assert on_ray.metrics["run_cost_usd_context"] > 0
        # each context billed once, each chunk text embedded once, by the tasks
        messages = billed(ray_llm, "/v1/messages")
        assert len(messages) == 28 and set(messages.values()) == {1}
        embeddings = billed(ray_emb, "/v1/embeddings")
        assert set(embeddings.values()) == {1}
        assert len(stored(tmp_path / "ray", "contexts.sqlite", "contexts")) == 28

        # a rerun finds every answer in the stores: nothing paid, the same results
        _, again = run(tmp_path / "ray", *at(ray_llm, ray_emb), "execution=ray")
        assert billed(ray_llm, "/v1/messages") == messages
        assert billed(ray_emb, "/v1/embeddings") == embeddings
        assert again.metrics["run_llm_calls"] == 0
        assert again.metrics["contexts_from_store"] == 28
        assert [x.text for x in again.contexts] == [x.text for x in local.contexts]
        assert again.evaluation.metrics == local.evaluation.metrics


@pytest.mark.slow
def test_minilm_loads_inside_the_workers(ray_instance, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no hub: the model comes from its package
    over = ["context=heading_path", "embedder=minilm", "embedder.batch_size=8"]
    local_pipeline, local = run(tmp_path / "local", *over)
    pipeline, on_ray = run(tmp_path / "ray", *over, "execution=ray")
    vectors = document_vectors(pipeline, on_ray)
    assert vectors.shape == (28, 384)
    # other processes, other thread counts: the same vectors up to float rounding
    np.testing.assert_allclose(vectors, document_vectors(local_pipeline, local), atol=1e-5)
    assert [x.text for x in on_ray.contexts] == [x.text for x in local.contexts]
    assert on_ray.evaluation.metrics == local.evaluation.metrics
    assert on_ray.metrics["texts_embedded"] == local.metrics["texts_embedded"]


@pytest.mark.slow
def test_the_api_down_fails_the_run_in_one_line_and_keeps_what_is_stored(
    ray_instance, keys, tmp_path
):
    out = tmp_path / "out"
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        over = [*LLM, f"llm.base_url={emu.url}", "execution=ray"]
        run(out, *over, "dataset.max_documents=2")  # the first 2 files: 20 chunks stored
        first = billed(emu, "/v1/messages")
        assert len(first) == 20
        emu.faults = Faults(rate_500=1.0)  # the API is down from now on
        with pytest.raises(SituateError) as failed:
            run(out, *over)  # 4 files: one shard has its 20 stored, the other must call
        message = str(failed.value)
        assert "\n" not in message and "500" in message, message
        assert "chunks failed after retries" in message
        assert len(stored(out, "contexts.sqlite", "contexts")) == 20
        emu.faults = Faults()
        _, done = run(out, *over)  # the API is back: only the 8 missing contexts are paid
        assert done.metrics["run_llm_calls"] == 8
        assert done.metrics["contexts_from_store"] == 20
        assert billed(emu, "/v1/messages").items() >= first.items()
        assert set(billed(emu, "/v1/messages").values()) == {1}


@pytest.mark.slow
def test_a_ray_address_without_a_cluster_is_one_line_at_the_cli(tmp_path):
    env = {"RAY_ADDRESS": f"127.0.0.1:{closed_port()}"}
    proc = run_cli("run", "execution=ray", *SLICE, f"output_dir={tmp_path}", env=env)
    line = assert_one_line_error(proc, "RAY_ADDRESS=127.0.0.1:", "execution=local")
    assert "contextualizing" not in proc.stderr, line  # refused before anything ran


@pytest.mark.slow
def test_a_failed_embedding_task_keeps_the_other_tasks_batches(ray_instance, keys, tmp_path):
    out = tmp_path / "out"
    with OpenAIEmulator(api_key=KEY) as emu:
        over = ["context=none", *OPENAI, f"embedder.base_url={emu.url}/v1", "execution=ray"]
        over += ["embedder.max_retries=0"]
        # 28 chunk texts: tasks of 16 (2 requests) and 12 (2 requests); the first request to
        # arrive, the first of one task, is answered 500
        emu.inject("500")
        with pytest.raises(SituateError) as failed:
            run(out, *over)
        assert "\n" not in str(failed.value) and "500" in str(failed.value), failed.value
        kept = len(stored(out, "embeddings.sqlite", "embeddings"))
        assert kept in (12, 16)  # the other task's texts, whichever task failed
        first = billed(emu, "/v1/embeddings")
        assert len(first) == kept
        _, done = run(out, *over)  # only the failed task's texts are paid, once
        assert done.metrics["texts_embedded"] == 28 - kept + done.metrics["n_questions"]
        assert set(billed(emu, "/v1/embeddings").values()) == {1}
