"""The emulators' request statistics (GET /_emulator/stats) and the reset_after fault."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.request

import anthropic
import openai
import pytest

from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.fault_injection import FAULT_KINDS, Faults
from situate.emulators.openai_api import OpenAIEmulator
from situate.emulators.request_log import STATS_PATH, body_hash

KEY = "sk-ant-stats"


def stats(url: str, log: bool = False) -> dict:
    with urllib.request.urlopen(f"{url}{STATS_PATH}?log={int(log)}") as r:
        return json.load(r)


def ask(client, text: str):
    return client.messages.create(
        model="claude-haiku-5-5", max_tokens=20, messages=[{"role": "user", "content": text}]
    )


def test_stats_count_statuses_faults_and_billing_per_prompt_and_are_not_requests():
    with AnthropicEmulator(api_key=KEY, ttft=0) as emu:
        client = anthropic.Anthropic(api_key=KEY, base_url=emu.url, max_retries=0)
        emu.inject("429", "reset", "529")
        outcomes = []
        for text in ("alpha", "alpha", "alpha", "alpha", "beta", "alpha"):
            try:
                ask(client, text)
                outcomes.append("ok")
            except anthropic.APIError as e:
                outcomes.append(type(e).__name__)
        assert outcomes == [
            "RateLimitError", "APIConnectionError", "OverloadedError", "ok", "ok", "ok",
        ]  # fmt: skip
        s = stats(emu.url, log=True)
        assert emu.calls() == 6 and s["requests"] == 6  # the stats requests are not counted
        assert all(r.path != STATS_PATH for r in emu.requests)
        m = s["paths"]["/v1/messages"]
        assert m["status"] == {"429": 1, "reset": 1, "529": 1, "200": 3}
        assert m["faults"] == {"429": 1, "reset": 1, "529": 1}
        assert m["billed"] == 3 and sorted(m["billed_keys"].values()) == [1, 2]
        alpha = body_hash(emu.requests[0].body)  # every "alpha" request has the same body
        assert m["billed_keys"][alpha] == 2
        assert m["billed_usage"]["output_tokens"] > 0
        beta = next(k for k in m["billed_keys"] if k != alpha)
        assert [e["keys"] for e in s["billed_log"]] == [[alpha], [beta], [alpha]]
        for e in s["billed_log"]:
            assert e["received_at"] <= e["answered_at"]


def test_reset_after_bills_the_request_and_sends_nothing():
    assert "reset_after" not in FAULT_KINDS  # never drawn unless asked for
    with AnthropicEmulator(api_key=KEY, ttft=0) as emu:
        client = anthropic.Anthropic(api_key=KEY, base_url=emu.url, max_retries=0)
        emu.inject("reset_after")
        with pytest.raises(anthropic.APIConnectionError):
            ask(client, "gamma")
        ask(client, "gamma")
        m = stats(emu.url)["paths"]["/v1/messages"]
        assert m["status"] == {"reset": 1, "200": 1}
        assert m["billed"] == 2 and list(m["billed_keys"].values()) == [2]  # paid twice
    faults = Faults(rate_reset_after=0.5, seed=1)
    assert [k for k, r in faults.rates() if r] == ["reset_after"]


def test_embeddings_bill_each_input():
    with OpenAIEmulator(api_key="sk-e") as emu:
        client = openai.OpenAI(api_key="sk-e", base_url=f"{emu.url}/v1", max_retries=0)
        client.embeddings.create(model="text-embedding-3-small", input=["one", "two"])
        client.embeddings.create(model="text-embedding-3-small", input=["two"])
        e = stats(emu.url)["paths"]["/v1/embeddings"]
        assert e["billed"] == 2
        assert e["billed_keys"] == {body_hash("one"): 1, body_hash("two"): 2}
        assert e["billed_usage"]["total_tokens"] > 0


@pytest.mark.slow
def test_situate_emulate_serves_stats_in_its_own_process():
    proc = subprocess.Popen(
        [sys.executable, "-m", "situate.cli", "emulate", "anthropic", "--fault-rate", "0.5",
         "--faults", "429,slow", "--slow-seconds", "0.01", "--ttft", "0"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        url = line.split("llm.base_url=")[1].split()[0]
        client = anthropic.Anthropic(api_key="sk-ant-emulator", base_url=url, max_retries=0)
        for _ in range(10):
            with contextlib.suppress(anthropic.RateLimitError):
                ask(client, "delta")
        m = stats(url)["paths"]["/v1/messages"]
        assert m["requests"] == 10 and set(m["faults"]) <= {"429", "slow"}
        assert m["status"].get("200", 0) == m["billed"] == 10 - m["faults"].get("429", 0)
    finally:
        proc.terminate()
        proc.wait(120)  # a hang guard: it ends as soon as the emulator stops
