"""The report's estimate of what writing replayed contexts cost (the cookbook's: Claude 3 Haiku).

Offline every run costs $0; a replayed run is shown with what its contexts cost to write, from
the usage each record carries or from counted tokens, and marked as an estimate.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from situate.config.compose import compose
from situate.money.estimate import estimate_corpus
from situate.money.tokens import token_counter
from situate.report.charts import configuration_cost
from situate.report.render import write_report
from situate.study.collect import load_study
from situate.study.compare import compare_study
from situate.study.writing_cost import writing_cost

# every call of doc_1 reported this usage; Claude 3 Haiku: $0.25 in, $0.30 write, $1.25 out per Mtok
USAGE = {"input_uncached": 1000, "cache_write": 2000, "cache_read": 0, "output": 100}
PER_CALL = (1000 * 0.25 + 2000 * 0.30 + 100 * 1.25) / 1e6  # $0.000975
DOC_1_CHUNKS = 13


@pytest.fixture
def recorded_with_usage(cookbook_dir: Path, tmp_path: Path) -> Path:
    """doc_1's 13 recorded contexts, each with the usage its call reported (as an export has)."""
    records = json.loads((cookbook_dir / "recorded_contexts.json").read_text())[:DOC_1_CHUNKS]
    path = tmp_path / "doc_1_contexts.jsonl"
    path.write_text("".join(json.dumps({**r, "usage": USAGE}) + "\n" for r in records))
    return path


def test_recorded_usage_is_priced_call_by_call(recorded_with_usage: Path) -> None:
    cfg = compose(["dataset.max_documents=1", f"context.path={recorded_with_usage}"])
    cost = writing_cost(cfg)
    assert cost.model == "claude-3-haiku-20240307"
    assert cost.usd == pytest.approx(DOC_1_CHUNKS * PER_CALL)  # $0.012675
    assert cost.how == "recorded usage of 13 calls"


def test_without_usage_the_tokens_are_counted(cookbook_dir: Path) -> None:
    cfg = compose(["dataset.max_documents=3"])  # the cookbook's file: no usage recorded
    cost = writing_cost(cfg)
    assert cost.model == "claude-3-haiku-20240307"
    # the same schedule `situate estimate` prices, with the recorded contexts' tokens as output
    from hydra.utils import instantiate

    corpus = instantiate(cfg.dataset).load()
    chunks = instantiate(cfg.chunker).chunk(corpus)
    texts = [x.text for x in instantiate(cfg.context).contextualize(corpus, chunks)]
    writer = compose(["llm=claude_3_haiku"])
    count, _ = token_counter(None, "local")
    output = round(sum(count(texts)) / len(texts))
    from situate.money.pricing import load_price_book

    expected = estimate_corpus(
        load_price_book().price("claude-3-haiku-20240307"), corpus, chunks,
        instantiate(writer.prompt), instantiate(writer.llm), counter="local", output_tokens=output,
    )  # fmt: skip
    assert cost.usd == pytest.approx(expected.with_caching)
    assert 0 < cost.usd < expected.without_caching  # doc_1 is written once and read 12 times
    assert (
        f"counted tokens of 27 calls (prompt default, local WordPiece count, {output} " in cost.how
    )


def test_plain_chunks_have_nothing_to_estimate(cookbook_dir: Path) -> None:
    assert writing_cost(compose(["context=none", "dataset.max_documents=1"])) is None


def _log(client, exp_id: str, name: str, cfg, folder: Path) -> None:
    from situate.tracking.base import flatten

    context = cfg.context._target_.rsplit(".", 1)[-1]
    tags = {"context": "none" if context == "NoContext" else "replay", "dataset": "cookbook"}
    run = client.create_run(exp_id, run_name=name, tags=tags)
    rid = run.info.run_id
    for key, value in flatten(OmegaConf.to_container(cfg, resolve=True)).items():
        client.log_param(rid, key, value)
    folder.mkdir(parents=True)
    with open(folder / "per_question.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["qid", "reciprocal_rank", "pass_at_5", "recall_at_5"])
        for i in range(4):
            w.writerow([f"q{i}", "1.0", "1.0" if i or name == "replay" else "0.0", "1.0"])
    (folder / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    for f in folder.iterdir():
        client.log_artifact(rid, str(f))
    client.log_metric(rid, "config_cost_usd_total", 0.0)
    client.set_terminated(rid, "FINISHED")


@pytest.mark.slow
def test_the_report_adds_the_estimate_and_marks_it(recorded_with_usage: Path, tmp_path: Path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("written", artifact_location=(tmp_path / "art").as_uri())
    plain = compose(["dataset.max_documents=1", "context=none"])
    replay = compose(["dataset.max_documents=1", f"context.path={recorded_with_usage}"])
    _log(client, exp, "plain", plain, tmp_path / "plain")
    _log(client, exp, "replay", replay, tmp_path / "replay")

    study = load_study("written", {"context": "none"}, uri)
    runs = {r.tags["context"]: r for r in study.runs}
    assert runs["none"].writing is None
    assert runs["replay"].writing.usd == pytest.approx(DOC_1_CHUNKS * PER_CALL)
    assert configuration_cost(runs["replay"]) == (pytest.approx(0.012675), True)
    assert configuration_cost(runs["none"]) == (0.0, False)
    _, md = write_report(compare_study(study, permutations=200), tmp_path / "out")
    text = md.read_text()
    assert "| contexts written $ |" in text
    assert "| replay | $0 | $0.01268 (estimate) |" in text  # 4 significant digits
    assert "with claude-3-haiku-20240307, from recorded usage of 13 calls" in text
