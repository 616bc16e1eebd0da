"""The pipeline under faults and a SIGKILL, end to end (one rate, one kill: the quick version of
``make reliability``): nothing is lost, the metrics equal a fault-free run's."""

from __future__ import annotations

import json

import pytest
from reliability_support import harness


@pytest.mark.slow
def test_a_run_killed_while_contextualizing_under_20_percent_faults_loses_nothing(
    cookbook_dir, tmp_path
):
    settings = harness.Settings(
        rates=(0.2,), kills=("contextualize",), max_documents=4, seed=1, out=tmp_path
    )
    figures = harness.run_suite(settings, echo=lambda _: None)["20%"]
    assert json.loads((tmp_path / "summary.json").read_text())["20%"]["lost"] == 0
    n = figures["n_chunks"]
    assert figures["lost"] == 0 and figures["stored"] == n
    assert figures["metrics_equal_to_fault_free"], figures["metrics_differing"]
    assert figures["kills"][0]["killed"] and figures["kills"][0]["landed"] == "contextualize"
    assert figures["retries"] > 0 and figures["calls"] > n
    # a prompt is paid again only for causes no client can avoid; the kill catches at most the
    # calls in flight at once, a dropped connection after billing costs one answer each
    causes = figures["paid_twice_by_cause"]
    assert causes["avoidable"] == 0
    assert causes["in_flight_at_kill"] + causes["killed_before_commit"] <= settings.concurrency
    assert causes["reset_after_billing"] <= figures["faults"].get("reset_after", 0)
    assert figures["paid_twice"] <= sum(causes.values())  # a context paid 3 times counts twice
    assert figures["budget_covers_billed"]
    assert figures["temporaries_at_end"] == 0
