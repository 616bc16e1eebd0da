"""The providers layer: its registry of vendors and the facts each vendor's record owns."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import situate.providers
from situate.commands.emulate import parse, usage_line
from situate.money.pricing import load_price_book
from situate.providers import vendors
from situate.running.execution import FORWARDED

MODULES = sorted(
    p.stem for p in Path(situate.providers.__file__).parent.glob("*.py") if p.stem != "__init__"
)


def test_every_vendor_module_is_registered_under_its_name_and_its_models_are_priced():
    found = vendors()
    assert list(found) == MODULES and "local" in found
    prices = yaml.safe_load(Path("conf/pricing/default.yaml").read_text())["models"]
    for vendor in found.values():
        assert set(vendor.pricing) <= set(prices), vendor.name
    assert found["local"].key_env is None and found["local"].emulator is None


def test_a_vendor_with_a_key_names_its_endpoint_and_a_task_gets_its_variables(monkeypatch):
    for vendor in vendors().values():
        assert set(vendor.forwarded) <= set(FORWARDED), vendor.name
        if vendor.key_env is None:
            assert vendor.public_api is None and vendor.base_url_env is None, vendor.name
            continue
        monkeypatch.delenv(vendor.base_url_env, raising=False)
        assert vendor.endpoint(None) == vendor.public_api.rstrip("/"), vendor.name
        monkeypatch.setenv(vendor.base_url_env, "http://127.0.0.1:9/")
        assert vendor.endpoint(None) == "http://127.0.0.1:9", vendor.name
        assert vendor.endpoint("http://127.0.0.1:7") == "http://127.0.0.1:7", vendor.name
        assert vendor.base_url_env in FORWARDED
    assert {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"} <= set(FORWARDED)


def test_cache_minimums_are_the_price_books():
    book = load_price_book()
    for vendor in vendors().values():
        minimums = vendor.cache_minimums(book)
        assert set(minimums) <= set(vendor.pricing), vendor.name
        for model in vendor.pricing:
            assert minimums.get(model) == book.price(model).min_cacheable_tokens, model
    assert vendors()["anthropic"].cache_minimums()["claude-haiku-5-5"] == 512


def test_situate_emulate_serves_the_vendors_with_an_emulator():
    assert parse(["cohere"]).provider == "cohere"
    with pytest.raises(SystemExit):
        parse(["local"])  # no emulator
    assert usage_line("cohere", "http://127.0.0.1:9") == (
        "embedder.base_url=http://127.0.0.1:9 reranker.base_url=http://127.0.0.1:9"
        "  export CO_API_KEY=co-emulator"
    )
