"""Human labels for ``situate judge --human-labels``: the three file forms read alike, and
``judged.json``'s ``ppi`` record written only with labels and read back whole."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from situate.errors import SituateError
from situate.evaluation.ppi import ppi_mean
from situate.judging.human import read_label_file, records
from situate.judging.summary import JUDGED_FILE, JudgedRun, JudgedStudy, PPISummary, read_judged

EXPECTED = {"q1": {"c1": 2, "c2": 0}, "q2": {"c9": 3}}


def test_trec_csv_and_jsonl_labels_read_alike(tmp_path):
    trec = tmp_path / "labels.txt"
    trec.write_text("# mine\nq1 0 c1 2\nq1 0 c2 0\nq2 0 c9 3\n")
    csv = tmp_path / "labels.csv"
    csv.write_text("qid,chunk_id,grade\nq1,c1,2\nq1,c2,0\nq2,c9, 3\n")
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        '{"qid": "q1", "chunk_id": "c1", "grade": 2}\n{"qid": "q1", "chunk_id": "c2", "grade": "0"}'
        '\n\n{"qid": "q2", "chunk_id": "c9", "grade": 3}\n'
    )
    for path in (trec, csv, jsonl):
        assert read_label_file(path) == EXPECTED, path


def test_a_bad_label_line_is_one_line_naming_it(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "q1", "chunk_id": "c1", "grade": 2}\n{"qid": "q1", "grade": 2}\n')
    with pytest.raises(SituateError, match=r"bad.jsonl: line 2 has no qid, chunk_id and whole"):
        read_label_file(bad)
    bad.write_text("{not json\n")
    with pytest.raises(SituateError, match=r"line 1 is not JSON"):
        read_label_file(bad)
    csv = tmp_path / "bad.csv"
    csv.write_text("qid,chunk_id,grade\nq1,c1,two\n")
    with pytest.raises(SituateError, match=r"bad.csv: line 2 has no qid"):
        read_label_file(csv)
    with pytest.raises(SituateError, match=r"no such file"):
        read_label_file(tmp_path / "none.txt")


def _study(ppi=None) -> JudgedStudy:
    run = JudgedRun(
        "r1", "baseline", True, {"judged_ndcg_at_5": 0.5}, {"judged_ndcg_at_5": (0.4, 0.6)}
    )
    return JudgedStudy(
        "s", "m", "", "abc", 2, 20, 10, [5], ["judged_ndcg_at_5"], [run], None, ppi
    )  # fmt: skip


def test_judged_json_keeps_the_correction_only_with_labels(tmp_path):
    _study().write(tmp_path)
    assert "ppi" not in json.loads((tmp_path / JUDGED_FILE).read_text())
    assert read_judged(tmp_path) == _study()
    e = ppi_mean([1.0, 0.5, 0.0, 1.0, 0.5], [1.0, 0.5, 0.0], [1.0, 0.0, 0.0])
    recs = records({"r1": {"judged_ndcg_at_5": e}})
    # var_N(f) = .175 over N = 5 makes z^2 .035 = .134 > .02^2: no number of labels suffices
    assert recs["r1"]["judged_ndcg_at_5"] == {
        **asdict(e),
        "labels_needed": None,
        "more_labels": None,
    }
    ppi = PPISummary("labels.txt", 4, 3, "PPI", 0.95, 0.02, recs, {})
    _study(ppi).write(tmp_path)
    back = read_judged(tmp_path)
    assert back.ppi.runs["r1"]["judged_ndcg_at_5"]["mean"] == pytest.approx(0.6 - 1 / 6)
    assert back.ppi.method == "PPI" and back.ppi.questions == 3


def test_judge_options_that_do_not_go_together_are_one_line_errors(tmp_path):
    from situate.commands.judge import main

    with pytest.raises(SituateError, match="--power-tuning tunes the correction by --human"):
        main(["--power-tuning"])
    labels = tmp_path / "labels.txt"
    labels.write_text("q1 0 c1 2\n")
    with pytest.raises(SituateError, match="drop --sample-only"):
        main(["--human-labels", str(labels), "--sample-only"])
    with pytest.raises(SituateError, match="none.txt: no such file"):
        main(["--human-labels", str(tmp_path / "none.txt")])
