"""The pipeline under faults and a SIGKILL, end to end (one rate, one kill: the quick version of
``make reliability``): nothing is lost, the metrics equal a fault-free run's."""

from __future__ import annotations

import json

from situate.reliability import Settings, run_suite


def test_a_run_killed_while_contextualizing_under_20_percent_faults_loses_nothing(
    cookbook_dir, tmp_path
):
    settings = Settings(
        rates=(0.2,), kills=("contextualize",), max_documents=4, seed=1, out=tmp_path
    )
    figures = run_suite(settings, echo=lambda _: None)["20%"]
    assert json.loads((tmp_path / "summary.json").read_text())["20%"]["lost"] == 0
    n = figures["n_chunks"]
    assert figures["lost"] == 0 and figures["stored"] == n
    assert figures["metrics_equal_to_fault_free"], figures["metrics_differing"]
    assert figures["kills"][0]["killed"] and figures["kills"][0]["landed"] == "contextualize"
    assert figures["retries"] > 0 and figures["calls"] > n
    # a prompt is paid twice only when the kill caught its call in flight or its answer in
    # transit: at most the calls in flight at once
    assert figures["paid_twice"] <= settings.concurrency
    assert figures["paid_twice"] == (
        figures["paid_twice_answered_after_kill"] + figures["paid_twice_answered_before_kill"]
    )
    assert figures["budget_covers_billed"]
    assert figures["temporaries_at_end"] == 0
