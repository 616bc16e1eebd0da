"""Cached answers name the endpoint that wrote them: an emulator's are never served as the real API's.

Issue 16, item 1: after a run against `situate emulate anthropic`, a run against Claude itself found
"737 of 737 stored already" and served the emulator's text as Claude's. Each test writes answers
through one endpoint and asks for them through another.
"""

from __future__ import annotations

import numpy as np
import pytest

from contexts.test_llm_context import MODEL, PROMPT, corpus
from situate.contexts.llm import ContextStore, LLMContext
from situate.embedding.base import CachedEmbeddings
from situate.embedding.cohere_embedder import CohereEmbedder
from situate.embedding.openai_embedder import OpenAIEmbedder
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.cohere_api import CohereEmulator
from situate.emulators.openai_api import OpenAIEmulator
from situate.errors import SituateError
from situate.llm.anthropic_provider import AnthropicProvider
from situate.llm.openai_provider import OpenAIChatProvider
from situate.paid.endpoints import legacy_identity
from situate.providers import vendors
from situate.rankings import Rankings
from situate.reranking.base import CachedReranker
from situate.reranking.cohere_reranker import CohereReranker
from situate.stores.keys import content_hash
from situate.stores.sqlite import BlobStore

KEY = "emulator-key-endpoints-77"
VENDORS = vendors()
VARIABLES = tuple(v.base_url_env for v in VENDORS.values() if v.base_url_env)


@pytest.fixture(autouse=True)
def no_base_url_variables(monkeypatch):
    for v in VARIABLES:
        monkeypatch.delenv(v, raising=False)


# -- the endpoint itself ---------------------------------------------------------------------


def test_no_base_url_is_the_vendors_public_api():
    assert VENDORS["anthropic"].endpoint(None) == "https://api.anthropic.com"
    assert VENDORS["openai"].endpoint(None) == "https://api.openai.com/v1"
    assert VENDORS["cohere"].endpoint(None) == "https://api.cohere.com"


def test_the_sdks_variable_counts_as_the_sdk_would_read_it(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8765/")
    assert VENDORS["anthropic"].endpoint(None) == "http://127.0.0.1:8765"
    assert (
        VENDORS["anthropic"].endpoint("http://127.0.0.1:9000") == "http://127.0.0.1:9000"
    )  # option wins


def test_endpoint_is_normalised_and_drops_credentials():
    url = "HTTPS://user:hunter2@Proxy.Example.COM:8443/v1/?token=abc#x"
    assert VENDORS["openai"].endpoint(url) == "https://proxy.example.com:8443/v1"


def test_a_base_url_that_is_not_a_url_is_one_line():
    with pytest.raises(SituateError, match=r"base_url 'localhost' for anthropic is not a URL"):
        VENDORS["anthropic"].endpoint("localhost")


def test_identities_name_their_endpoint_and_legacy_identity_drops_it():
    llm = AnthropicProvider(MODEL)
    assert llm.identity()["endpoint"] == "https://api.anthropic.com"
    assert legacy_identity(llm.identity()) == {
        "provider": "anthropic",
        "model": MODEL,
        "temperature": 0.0,
        "thinking": None,
    }
    assert legacy_identity({"provider": "local", "model": "x"}) is None  # nothing to migrate
    chat = OpenAIChatProvider("gpt-4.1-mini", base_url="http://127.0.0.1:1/v1")
    assert chat.identity()["endpoint"] == "http://127.0.0.1:1/v1"


# -- contexts ----------------------------------------------------------------------------------


@pytest.fixture
def emulators(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with AnthropicEmulator(api_key=KEY) as a, AnthropicEmulator(api_key=KEY) as b:
        yield a, b


def llm_context(tmp_path, base_url, **kw) -> LLMContext:
    llm = AnthropicProvider(MODEL, base_url=base_url, min_cacheable_tokens=512, backoff_base=0.005)
    return LLMContext(PROMPT, llm, str(tmp_path / "contexts.sqlite"), **kw)


def calls(emu) -> int:
    return len(emu.bodies("/v1/messages"))


def test_contexts_written_by_an_emulator_are_not_served_to_the_real_api(
    emulators, tmp_path, monkeypatch
):
    emu, _ = emulators
    corp, chunks = corpus()
    written = llm_context(tmp_path, emu.url).contextualize(corp, chunks)
    assert calls(emu) == len(chunks)
    real = llm_context(tmp_path, None)
    assert real.lookup(corp, chunks) == [None] * len(chunks)  # `situate contexts show`
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(SituateError, match="set ANTHROPIC_API_KEY"):
        real.contextualize(corp, chunks)  # the run: it must need the key, not find 10 of 10
    again = llm_context(tmp_path, emu.url)  # the same emulator still finds its own
    stored = again.lookup(corp, chunks)
    assert [s.text for s in stored] == [c.text for c in written]
    assert {s.endpoint for s in stored} == {emu.url}


def test_another_emulator_pays_for_its_own_contexts(emulators, tmp_path):
    a, b = emulators
    corp, chunks = corpus()
    llm_context(tmp_path, a.url).contextualize(corp, chunks)
    llm_context(tmp_path, b.url).contextualize(corp, chunks)
    assert (calls(a), calls(b)) == (len(chunks), len(chunks))
    llm_context(tmp_path, a.url).contextualize(corp, chunks)
    llm_context(tmp_path, b.url).contextualize(corp, chunks)
    assert (calls(a), calls(b)) == (len(chunks), len(chunks))  # both kept, none overwritten


def test_a_context_recording_another_endpoint_is_refused(emulators, tmp_path):
    emu, _ = emulators
    corp, chunks = corpus()
    ctx = llm_context(tmp_path, emu.url)
    ctx.contextualize(corp, chunks)
    *_, keys = ctx.plan(corp, chunks)
    blob = ctx.store.blobs.get_many([keys[0]])[keys[0]]
    ctx.store.blobs.put_many([(keys[0], blob.replace(emu.url.encode(), b"https://api.x.com"))])
    with pytest.raises(SituateError, match="records https://api.x.com as its writer"):
        ctx.lookup(corp, chunks)


def make_legacy(ctx: LLMContext, corp, chunks) -> int:
    """Re-key ``ctx``'s stored contexts the way situate stored them before endpoints: no endpoint
    in the key, none in the value. Returns how many were moved."""
    _, _, rendered, keys = ctx.plan(corp, chunks)
    legacy = legacy_identity(ctx.llm.identity())
    old = {}
    for r, k in zip(rendered, keys, strict=True):
        blob = ctx.store.blobs.get_many([k])[k]
        value = blob.replace(f', "endpoint": "{ctx.endpoint}"'.encode(), b"")
        old[ContextStore.key(r, ctx.prompt, ctx.llm, legacy)] = value
    ctx.store.blobs.move(old, set(keys))
    return len(old)


def test_unverified_contexts_are_refused_by_default_before_any_call(emulators, tmp_path):
    emu, _ = emulators
    corp, chunks = corpus()
    first = llm_context(tmp_path, emu.url)
    first.contextualize(corp, chunks)
    assert make_legacy(first, corp, chunks) == len(chunks)
    n = calls(emu)
    with pytest.raises(SituateError) as e:
        llm_context(tmp_path, emu.url).contextualize(corp, chunks)
    assert calls(emu) == n  # nothing paid
    assert str(e.value) == (
        f"{tmp_path / 'contexts.sqlite'}: {len(chunks)} contexts for {MODEL} this run needs were "
        "stored by an older situate without the endpoint that wrote them (an emulator's would "
        f"pass for the real API's); if {emu.url} wrote them, rerun with unverified_cache=adopt, "
        "or with unverified_cache=ignore to pay for new ones"
    )


def test_adopted_contexts_are_rekeyed_and_cost_nothing(emulators, tmp_path):
    emu, _ = emulators
    corp, chunks = corpus()
    first = llm_context(tmp_path, emu.url)
    written = first.contextualize(corp, chunks)
    make_legacy(first, corp, chunks)
    n = calls(emu)
    adopted = llm_context(tmp_path, emu.url, unverified="adopt").contextualize(corp, chunks)
    assert calls(emu) == n
    assert [c.text for c in adopted] == [c.text for c in written]
    assert [c.usage for c in adopted] == [c.usage for c in written]  # what each cost, kept
    later = llm_context(tmp_path, emu.url)  # default policy: they are now verified entries
    assert {s.endpoint for s in later.lookup(corp, chunks)} == {emu.url}
    assert len(later.store.blobs) == len(chunks)  # moved, not copied


def test_ignored_unverified_contexts_are_paid_for_again_and_kept_aside(emulators, tmp_path):
    emu, _ = emulators
    corp, chunks = corpus()
    first = llm_context(tmp_path, emu.url)
    first.contextualize(corp, chunks)
    make_legacy(first, corp, chunks)
    n = calls(emu)
    llm_context(tmp_path, emu.url, unverified="ignore").contextualize(corp, chunks)
    assert calls(emu) == n + len(chunks)
    assert len(first.store.blobs) == 2 * len(chunks)


def test_an_unknown_policy_is_one_line(emulators, tmp_path):
    emu, _ = emulators
    corp, chunks = corpus()
    with pytest.raises(SituateError, match=r"unverified_cache='trust' is not one of refuse"):
        llm_context(tmp_path, emu.url, unverified="trust").contextualize(corp, chunks)


# -- embeddings and rerank scores --------------------------------------------------------------

TEXTS = ["alpha glaciers retreat", "baltic ports grow", "a tiny note"]


def test_vectors_of_one_openai_endpoint_are_not_served_to_another(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store = BlobStore(tmp_path / "e.sqlite", "embeddings")
    with OpenAIEmulator(api_key=KEY) as a, OpenAIEmulator(api_key=KEY) as b:
        first = CachedEmbeddings(OpenAIEmbedder(base_url=f"{a.url}/v1"), store)(TEXTS, "document")
        CachedEmbeddings(OpenAIEmbedder(base_url=f"{b.url}/v1"), store)(TEXTS, "document")
        again = CachedEmbeddings(OpenAIEmbedder(base_url=f"{a.url}/v1"), store)(TEXTS, "document")
        assert (len(a.bodies("/v1/embeddings")), len(b.bodies("/v1/embeddings"))) == (1, 1)
    np.testing.assert_array_equal(first, again)
    assert len(store) == 2 * len(TEXTS)


def test_unverified_vectors_are_refused_then_adopted(tmp_path, monkeypatch):
    monkeypatch.setenv("CO_API_KEY", KEY)
    store = BlobStore(tmp_path / "e.sqlite", "embeddings")
    with CohereEmulator(api_key=KEY) as emu:
        embedder = CohereEmbedder(base_url=emu.url)
        vectors = CachedEmbeddings(embedder, store)(TEXTS, "document")
        ident = embedder.identity()
        new = [content_hash(ident, "document", t) for t in TEXTS]
        old = [content_hash(legacy_identity(ident), "document", t) for t in TEXTS]
        blobs = store.get_many(new)
        store.move({o: blobs[n] for o, n in zip(old, new, strict=True)}, new)  # as stored before
        with pytest.raises(SituateError, match=r"3 document vectors of embed-english-v3.0 this"):
            CachedEmbeddings(embedder, store)(TEXTS, "document")
        adopted = CachedEmbeddings(embedder, store, unverified="adopt")(TEXTS, "document")
        assert len(emu.bodies("/v2/embed")) == 1  # neither refusal nor adoption paid
    np.testing.assert_array_equal(adopted, vectors)
    assert sorted(k for k, _ in store.items()) == sorted(new)


def test_rerank_scores_of_one_endpoint_are_not_served_to_another(tmp_path, monkeypatch):
    monkeypatch.setenv("CO_API_KEY", KEY)
    store = BlobStore(tmp_path / "r.sqlite", "scores")
    candidates = Rankings.from_rows([(np.arange(3), np.array([3.0, 2.0, 1.0]))], 3)
    with CohereEmulator(api_key=KEY) as a, CohereEmulator(api_key=KEY) as b:
        for emu in (a, b, a):
            CachedReranker(CohereReranker(base_url=emu.url), store)("tiny", TEXTS, candidates, 3)
        assert (len(a.bodies("/v2/rerank")), len(b.bodies("/v2/rerank"))) == (1, 1)
    assert len(store) == 2 * len(TEXTS)


# -- the scenario, through the CLI -----------------------------------------------------


@pytest.mark.slow
def test_a_run_after_an_emulator_run_needs_the_real_apis(cookbook_dir, tmp_path):
    from mlflow.tracking import MlflowClient

    from conftest import run_cli
    from test_cli import assert_one_line_error

    keys = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY, "CO_API_KEY": KEY}
    common = ["context=llm", "llm=claude_haiku_5_5", "embedder=openai_small", "reranker=cohere"]
    common += ["reranker.pool=5", f"output_dir={tmp_path}", "study=endpoints"]
    common += ["dataset.max_documents=2", "eval.ks=[5]"]
    with (
        AnthropicEmulator(api_key=KEY, ttft=0.0) as anthropic,
        OpenAIEmulator(api_key=KEY) as openai,
        CohereEmulator(api_key=KEY) as cohere,
    ):
        at = {
            "llm": f"llm.base_url={anthropic.url}",
            "embedder": f"embedder.base_url={openai.url}/v1",
            "reranker": f"reranker.base_url={cohere.url}",
        }
        proc = run_cli("run", *common, *at.values(), "tracking=mlflow", env=keys)
        assert proc.returncode == 0, proc.stderr
        assert "to write with claude-haiku-5-5 at " + anthropic.url in proc.stderr + proc.stdout
        (run,) = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_runs(["1"])
        assert {k: v for k, v in run.data.tags.items() if k.startswith("endpoint.")} == {
            "endpoint.context": anthropic.url,
            "endpoint.embedder": f"{openai.url}/v1",
            "endpoint.reranker": cohere.url,
        }  # the run's page says whose answers it scored
        no_keys = {k: "" for k in keys}
        # each stage in turn pointed at the real API: nothing the emulators wrote is served
        for stage, variable in [
            ("llm", "ANTHROPIC_API_KEY"),
            ("embedder", "OPENAI_API_KEY"),
            ("reranker", "CO_API_KEY"),
        ]:
            others = [v for s, v in at.items() if s != stage]
            # the emulators keep their keys: only the stage at the real API lacks its own
            proc = run_cli("run", *common, *others, "tracking=none", env={**keys, variable: ""})
            assert_one_line_error(proc, variable)
        shown = run_cli("contexts", "show", *common[:2], f"output_dir={tmp_path}", env=no_keys)
        assert shown.returncode == 0, shown.stderr
        assert "is stored yet for this prompt and model" in shown.stdout
        assert "This chunk" not in shown.stdout
