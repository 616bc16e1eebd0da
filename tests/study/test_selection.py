"""The report's pick: chosen on dev, reported on test (eval.split), every figure by hand."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from situate.report.markdown import render_markdown
from situate.study.collect import RunData, load_study
from situate.study.compare import compare_study
from situate.study.selection import select

# 12 questions: q0-q5 dev, q6-q11 test. pass@5 per question (pass@1 = recall = pass@5)
DEV_TEST = {
    "baseline": [1, 0, 1, 0, 1, 0] + [1, 0, 1, 0, 1, 0],  # dev 50%, test 50%
    "lucky": [1, 1, 1, 1, 1, 1] + [1, 0, 0, 0, 1, 0],  # dev 100%, test 33.3%
    "steady": [1, 1, 1, 1, 0, 0] + [1, 1, 1, 1, 0, 0],  # dev 66.7%, test 66.7%
}
PARTS = ["dev"] * 6 + ["test"] * 6


def rows(scores: list[float], parts: list[str] | None) -> list[dict]:
    out = []
    for i, s in enumerate(scores):
        cells = {f"{m}_at_{k}": f"{s:.4f}" for m in ("pass", "recall") for k in (1, 5)}
        row = {"qid": f"q{i}", "question": f"question {i}?", "gold": f"doc{i}:0-10",
               "first_relevant_rank": "1" if s else "", "reciprocal_rank": f"{s:.4f}", **cells}  # fmt: skip
        if parts is not None:
            row["part"] = parts[i]
        out.append(row)
    return out


def run(name: str, scores: list[float], parts: list[str] | None = PARTS) -> RunData:
    return RunData(name, name, "FINISHED", questions=rows(scores, parts), label=name)


def test_dev_test_picks_on_dev_and_reports_on_test() -> None:
    runs = [run(n, s) for n, s in DEV_TEST.items()]
    s = select(runs, runs[0], "pass_at_5", "pass_at_5", permutations=2000)
    assert s.split == "dev_test" and s.chosen.label == "lucky"
    assert (s.n_chosen_on, s.n_reported_on) == (6, 6)
    assert s.chosen_value == 1.0 and s.reported_value == pytest.approx(2 / 6)
    assert s.optimism == pytest.approx(4 / 6)
    c = s.versus  # on test: baseline [1,0,1,0,1,0] vs lucky [1,0,0,0,1,0]
    assert c.difference == pytest.approx(-1 / 6) and (c.wins, c.ties, c.losses) == (0, 5, 1)
    first, second = s.sentences()
    assert first.startswith(
        "Picked on dev, reported on test: lucky has the best Pass@5 of 3 configurations on the 6 "
        "dev questions (100.0%); on the 6 test questions the choice did not see it scores 33.3%"
    )
    assert first.endswith(
        "a report on the questions that chose it would have overstated it by +66.7 pts."
    )
    assert second.startswith("Against the baseline baseline on the same test questions: -16.7 pts")


def test_a_pick_whose_dev_and_test_figures_agree_says_so() -> None:
    # steady: dev 4/6, test 4/6, picked over the baseline's dev 3/6: no gap either way
    runs = [run("baseline", DEV_TEST["baseline"]), run("steady", DEV_TEST["steady"])]
    s = select(runs, runs[0], "pass_at_5", "pass_at_5", permutations=200)
    assert s.chosen.label == "steady" and s.optimism == 0.0
    first = s.sentences()[0]
    assert "on the 6 test questions the choice did not see it scores 66.7%" in first
    assert first.endswith(
        "its dev and test figures agree here (the winner's curse biases the dev figure up on "
        "average, not in every split)."
    )


def test_kfold_scores_each_fold_with_the_choice_made_without_it() -> None:
    parts = ["fold_1", "fold_1", "fold_2", "fold_2"]
    a, b = run("a", [1, 1, 0, 0], parts), run("b", [0, 0, 1, 1], parts)
    base = run("base", [0.5] * 4, parts)
    s = select([base, a, b], base, "pass_at_5", "pass_at_5", permutations=500)
    # fold_1 is scored by the best on fold_2 (b: 0 there), fold_2 by the best on fold_1 (a: 0)
    assert s.split == "kfold" and s.per_fold == [("fold_1", "b"), ("fold_2", "a")]
    assert s.reported_value == 0.0 and s.chosen_value == 0.5 and s.optimism == 0.5
    assert s.versus.difference == -0.5


def test_without_a_split_many_arms_are_flagged_optimistic() -> None:
    arms = [run(f"arm{i}", [float(j < i) for j in range(12)], None) for i in range(5)]
    s = select(arms, arms[0], "pass_at_5", "pass_at_5")
    assert s.split == "none" and s.chosen.label == "arm4" and s.reported_value is None
    best, warning = s.sentences()
    assert best == "Best configuration by Pass@5: arm4 (33.3% on all 12 questions)."
    assert warning.startswith(
        "Warning: that figure is optimistic: it is the best of 5 configurations, picked and "
        "reported on the same 12 questions"
    )
    (few,) = select(arms[:3], arms[0], "pass_at_5", "pass_at_5").sentences()  # 3: no warning
    assert few.startswith("Best configuration by Pass@5: arm2")


def test_runs_split_differently_get_no_pick() -> None:
    a = run("a", DEV_TEST["lucky"])
    b = run("b", DEV_TEST["steady"], PARTS[::-1])
    s = select([a, b], a, "pass_at_5", "pass_at_5")
    assert s.split == "none" and "split their questions differently" in s.sentences()[1]


@pytest.fixture(scope="module")
def split_store(tmp_path_factory) -> str:
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("split_store")
    uri = f"sqlite:///{(root / 'mlflow.db').resolve()}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("split", artifact_location=(root / "art").resolve().as_uri())
    pid = client.create_run(exp, run_name="sweep", tags={"sweep": "true"}).info.run_id
    for name, scores in DEV_TEST.items():
        rid = client.create_run(exp, run_name=name, tags={"fusion": name, "mlflow.parentRunId": pid}).info.run_id  # fmt: skip
        folder = Path(root / name)
        folder.mkdir()
        table = rows(scores, PARTS)
        with open(folder / "per_question.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0]))
            w.writeheader()
            w.writerows(table)
        client.log_artifact(rid, str(folder / "per_question.csv"))
        client.set_terminated(rid, "FINISHED")
    client.set_terminated(pid, "FINISHED")
    return uri


@pytest.mark.slow
def test_the_report_chooses_on_dev_and_reports_on_test(split_store) -> None:
    study = load_study("split", {"fusion": "baseline"}, split_store)
    sc = compare_study(study, permutations=2000, headline="pass_at_5")
    assert sc.selection.chosen.label == "lucky"
    # every comparison of the report pairs the 6 test questions only
    lucky = next(v for v in sc.versus if v.run.label == "lucky").comparisons[0]
    assert (lucky.baseline, lucky.value) == (pytest.approx(0.5), pytest.approx(2 / 6))
    assert sc.summary_of(sc.study.baseline).means["pass_at_5"] == 0.5
    assert "on the 6 test questions (the dev questions chose)" in sc.scope()
    md = render_markdown(sc)
    assert "- **Picked on dev, reported on test: lucky has the best Pass@5" in md
    # how far the questions separate the configurations: on the same 6 test questions
    assert "Computed on the 6 test questions the figures are reported on." in md
    assert re.search(r"\| (\*\*)?Pass@5(\*\*)? \| 6 \|", md)  # 6 questions, not 12


def test_the_sweep_table_names_the_dev_pick_and_its_test_figure(tmp_path: Path) -> None:
    results, folders = [], []
    for i, (name, scores) in enumerate(DEV_TEST.items()):
        folder = tmp_path / str(i)
        folder.mkdir()
        table = rows(scores, PARTS)
        with open(folder / "per_question.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0]))
            w.writeheader()
            w.writerows(table)
        results.append({"run_id": name, "choices": {"fusion": name}, "overrides": [f"fusion={name}"]})  # fmt: skip
        folders.append(folder)
    from situate.study.selection import sweep_selection

    first, second = sweep_selection(results, folders, {"fusion": "baseline"})
    assert first.startswith("Picked on dev, reported on test: fusion=lucky has the best Pass@5")
    assert "scores 33.3%" in first
    assert second.startswith("Against the baseline fusion=baseline on the same test questions")
    (alone,) = sweep_selection(results, folders, None)  # no baseline: the pick alone
    assert alone == first


def test_the_winners_curse_replay_redraws_splits_from_a_sweep(tmp_path: Path, capsys) -> None:
    import runpy

    # 2 jobs on 12 one-question documents: "lucky" and "steady" of DEV_TEST, no part column
    for i, name in enumerate(("lucky", "steady")):
        folder = tmp_path / str(i)
        folder.mkdir()
        table = rows(DEV_TEST[name], None)
        with open(folder / "per_question.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0]))
            w.writeheader()
            w.writerows(table)
        overrides = [f"fusion={name}", "eval.split=dev_test"]
        (folder / "result.json").write_text(json.dumps({"metrics": {}, "overrides": overrides}))
    script = runpy.run_path(str(Path(__file__).parents[2] / "docs" / "winners_curse.py"))
    script["main"](str(tmp_path), 0, 4)
    out = capsys.readouterr().out
    assert "2 configurations, 4 splits" in out
    assert "same-set best Pass@5 (all questions): 66.7%" in out  # both 8 of 12
    assert "fusion=lucky" in out or "fusion=steady" in out  # labels drop the shared override
    assert "eval.split" not in out.split("most often:")[1]
