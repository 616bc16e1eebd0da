"""``situate questions validate``: tau, bias, decisions and the verdict on crafted per-question
score tables (checked by hand), the arms' grid, the human side's checks, and the whole command
on a folder with a human qa.json and an extractive questions.jsonl, offline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from situate.datasets.generated import Passage, Provenance, write_questions
from situate.errors import SituateError
from situate.evaluation.agreement import (
    DO_NOT_RANK,
    RANK,
    Criteria,
    decisions,
    set_agreement,
    split_half,
    tau_b,
    tau_interval,
    verdict,
)
from situate.study.validation import SetScores, check_human, expand_arms, validate

# -- tau, bias and decisions by hand ---------------------------------------------------------------

# three arms; human: 4 questions, generated: 4 questions (Pass@5, 0/1)
HUMAN = {
    "none": [0, 0, 1, 0],  # 0.25
    "heading_path": [1, 1, 1, 0],  # 0.75
    "llm": [1, 1, 1, 1],  # 1.00
}
GENERATED = {
    "none": [1, 1, 1, 0],  # 0.75
    "heading_path": [1, 0, 1, 0],  # 0.50 (below none: one pair flips)
    "llm": [1, 1, 1, 1],  # 1.00
}


def test_tau_and_bias_by_hand():
    # pairs (human, generated): none<heading (< >) discordant; none<llm (< <) concordant;
    # heading<llm (< <) concordant: tau-b = (2 - 1) / sqrt(3 * 3) = 1/3
    result = set_agreement(HUMAN, GENERATED, resamples=2000)
    assert result.tau == pytest.approx(1 / 3)
    bias = {a.arm: a.difference for a in result.arms}
    assert bias == pytest.approx({"none": 0.5, "heading_path": -0.25, "llm": 0.0})
    # the tau's interval holds the estimate and stays within [-1, 1]
    assert -1 <= result.tau_low <= result.tau <= result.tau_high <= 1
    # tau-b as scipy counts ties: (C - D) / sqrt((n0 - T_x)(n0 - T_y)) with one tie in x
    assert tau_b([0.5, 0.5, 1.0], [0.1, 0.2, 0.3])[0] == pytest.approx(2 / np.sqrt(2 * 3))
    assert tau_b([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])[0] == 0.0  # no ordering: no agreement


def test_the_tau_interval_of_sets_that_cannot_disagree_is_a_point():
    # every resample keeps a < b < c on both sets: each arm's scores sit wholly above the last's
    human = {"a": [0.1, 0.2], "b": [0.4, 0.5], "c": [0.8, 0.9]}
    generated = {"a": [0.0, 0.1, 0.2], "b": [0.3, 0.35, 0.4], "c": [0.6, 0.7, 0.9]}
    assert tau_interval(human, generated, resamples=500) == (1.0, 1.0)
    # reversed on the generated set: -1 in every resample
    reverse = {"a": generated["c"], "b": generated["b"], "c": generated["a"]}
    assert tau_interval(human, reverse, resamples=500) == (-1.0, -1.0)


def test_decisions_name_the_winner_of_each_set_in_words():
    pairs = decisions(HUMAN, GENERATED, permutations=2000)
    assert [(d.first, d.second) for d in pairs] == [
        ("none", "heading_path"), ("none", "llm"), ("heading_path", "llm")
    ]  # fmt: skip
    flip = pairs[0]
    assert (flip.human, flip.synthetic) == pytest.approx((-0.5, 0.25))
    assert not flip.agrees and flip.flipped and pairs[1].agrees and pairs[2].agrees
    assert flip.words("pass_at_5") == (
        "human: heading_path beats none by 50.0 pts; generated: none beats heading_path by 25.0 pts"
    )
    tie = decisions({"a": [1, 0], "b": [0, 1]}, {"a": [1, 1], "b": [1, 1]}, permutations=100)[0]
    assert tie.agrees and tie.words("mrr") == "human: a and b tie; generated: a and b tie"
    # a winner on one set and a tie on the other: not the same winner, yet not flipped
    one = decisions({"a": [1, 1], "b": [0, 1]}, {"a": [1, 1], "b": [1, 1]}, permutations=100)[0]
    assert not one.agrees and not one.flipped
    assert one.words("mrr") == "human: a beats b by 0.500; generated: a and b tie"
    # 4 questions cannot separate anything: the smallest two-sided sign-flip p is 2/16
    assert not any(d.separated for d in pairs)


def test_a_flip_the_human_set_separates_sinks_the_verdict():
    n = 30  # arm b beats a on every human question; the generated set reverses it
    human = {"a": [0.0] * n, "b": [1.0] * n, "c": [1.0] * (n - 5) + [0.0] * 5}
    generated = {"a": [1.0] * n, "b": [0.0] * n, "c": [0.5] * n}
    agreement = set_agreement(human, generated, resamples=500)
    pairs = decisions(human, generated, permutations=2000)
    found = verdict(agreement, pairs, Criteria(min_tau=-1.0, min_tau_low=-2.0), metric="Pass@5")
    assert not found.rank and found.words == DO_NOT_RANK
    (reason,) = found.reasons
    # human: b and c beat a on 30 and 25 questions (sign-flip p ~ 1e-4); b beats c on only 5
    # questions (p = 2 / 2^5 = 0.0625 before Holm): two decisions, both flipped; b vs c flips
    # too, but the human set does not decide it
    assert reason == (
        "2 of the 2 decisions the human set makes (Holm p < 0.05) are flipped or tied on the "
        "generated set: a vs b, a vs c"
    )
    assert [d.flipped for d in pairs] == [True, True, True]
    # the same sets ordered alike pass every criterion
    alike = {"a": [0.0] * n, "b": [1.0] * n, "c": [0.5] * n}
    same = verdict(
        set_agreement(human, alike, resamples=500), decisions(human, alike, permutations=500)
    )
    assert same.rank and same.words == RANK and same.reasons == []


def test_tau_below_the_bar_and_an_uninformative_set_are_reasons():
    agreement = set_agreement(HUMAN, GENERATED, resamples=500)
    found = verdict(agreement, [], Criteria(), problem="saturated", metric="Pass@5")
    assert found.reasons[0] == "Kendall's tau +0.33 is below +0.80"
    assert found.reasons[1].startswith("the tau's 95% interval reaches")
    assert found.reasons[2] == "the generated set is saturated at Pass@5"


def scores(name: str, table: dict[str, list[float]]) -> SetScores:
    s = SetScores(name, Path(f"{name}.json"), [f"q{i}" for i in range(len(table["none"]))])
    s.scores = {"pass_at_5": {a: np.asarray(v, float) for a, v in table.items()}}
    return s


def test_the_split_half_agreement_by_hand():
    # three arms a constant step apart: every split orders them alike on both halves
    steady = {"a": [0.0] * 6, "b": [0.5] * 6, "c": [1.0] * 6}
    h = split_half(steady, splits=200)
    assert (h.tau, h.low, h.high, h.half, h.splits) == (1.0, 1.0, 1.0, 3, 200)
    # two arms, a - b = [+1, +1, -1, -1]: of the 6 ways to pick a first half of 2, {0, 1} and
    # {2, 3} put the two +1s on one side (halves +1 / -1: tau -1), the other 4 leave both
    # halves tied (tau 0): about a third of the splits at -1, the median 0
    swing = {"a": [1.0, 1.0, 0.0, 0.0], "b": [0.0, 0.0, 1.0, 1.0]}
    h = split_half(swing, splits=3_000, seed=1)
    assert (h.tau, h.low, h.high) == (0.0, -1.0, 0.0)
    # two questions: halves of one, a - b = [+1, 0]: one half +1, the other tied, tau 0
    assert split_half({"a": [1.0, 0.0], "b": [0.0, 0.0]}, splits=50).tau == 0.0
    with pytest.raises(SituateError, match="1 question is too few to split in halves"):
        split_half({"a": [1], "b": [0]})


def test_validate_decides_at_the_metric_and_says_why():
    from situate.study.validation import Arm

    arms = [Arm(a, (f"context={a}",)) for a in HUMAN]
    v = validate(scores("human", HUMAN), scores("generated", GENERATED), arms, resamples=500)
    assert v.metric == "pass_at_5" and v.metric_chosen_by.startswith("the human set")
    assert [d.first for d in v.disagreeing] == ["none"] and v.disagreeing[0].flipped
    assert not v.verdict.rank
    assert (
        v.line.startswith(f"verdict: {DO_NOT_RANK} (at Pass@5: Kendall's tau +0.33 [")
        and "over 3 arms): Kendall's tau +0.33 is below +0.80" in v.line
    )
    # the human set's halves of 2: none [0, 0, 1, 0] < heading_path [1, 1, 1, 0] <= llm [1] * 4
    assert v.self_agreement.half == 2 and -1 <= v.self_agreement.tau <= 1
    assert v.self_line.startswith("the human set against itself: two halves of 2 questions order")
    with pytest.raises(SituateError, match="--metric mrr is not measured; choose one of pass_at_5"):
        validate(scores("human", HUMAN), scores("generated", GENERATED), arms, "mrr")


# -- the arms' grid and the human side ------------------------------------------------------------


def test_the_arms_are_the_grid_of_the_lists_and_of_a_preset():
    common, arms = expand_arms(
        ["-m", "dataset=folder", "dataset.path=docs", "context=none,heading_path",
         "fusion=sparse_only,dense_only"]
    )  # fmt: skip
    assert common == ["dataset=folder", "dataset.path=docs"]
    assert [a.label for a in arms] == [
        "none+sparse_only", "none+dense_only", "heading_path+sparse_only", "heading_path+dense_only"
    ]  # fmt: skip
    assert arms[1].overrides == ("context=none", "fusion=dense_only")
    # a preset's sweeper params, the command line's list winning for its key
    _, arms = expand_arms(["experiment=quickstart", "fusion=sparse_only,rrf"])
    assert [a.overrides for a in arms] == [
        ("context=none", "fusion=sparse_only"), ("context=none", "fusion=rrf"),
        ("context=replay", "fusion=sparse_only"), ("context=replay", "fusion=rrf"),
    ]  # fmt: skip
    # a value under two keys: the labels name their keys
    _, arms = expand_arms(["chunker.max_words=40,80", "chunker.min_words=40,80"])
    assert arms[1].label == "chunker.max_words=40 chunker.min_words=80"
    with pytest.raises(SituateError, match="give two or more arms to compare"):
        expand_arms(["dataset=folder", "dataset.path=docs", "context=none"])
    with pytest.raises(SituateError, match="leave dataset.qa out"):
        expand_arms(["dataset.qa=x.json", "context=none,heading_path"])


def generated_file(path: Path, q: str = "How many requests per minute?") -> Path:
    question = {
        "id": "g-000000000001", "q": q, "answer": "600", "quote": "600 requests",
        "gold": (), "strategy": "factual", "passage": Passage("a.md", 0, 10),
        "provenance": Provenance("extractive"), "review": "accepted",
    }  # fmt: skip
    from situate.datasets.generated import GeneratedQuestion

    write_questions(path, [GeneratedQuestion(**question)])
    return path


def test_the_generated_set_is_found_beside_the_documents_else_where_generate_wrote_it(
    tmp_path: Path,
):
    from situate.commands.questions_validate import default_generated
    from situate.config.compose import compose

    docs, out = tmp_path / "kb", tmp_path / "out"
    docs.mkdir()
    cfg = compose(["dataset=folder", f"dataset.path={docs}", f"output_dir={out}"])
    beside, written = docs / "questions.jsonl", out / "questions" / "folder" / "questions.jsonl"
    assert default_generated(cfg) == beside  # neither: the error names the folder's
    written.parent.mkdir(parents=True)
    written.write_text("", encoding="utf-8")  # `situate questions generate` without --out
    assert default_generated(cfg) == written
    beside.write_text("", encoding="utf-8")
    assert default_generated(cfg) == beside


def test_generated_questions_are_refused_as_the_human_side(tmp_path: Path):
    generated = generated_file(tmp_path / "questions.jsonl")
    with pytest.raises(SituateError, match=r"generated questions \(written by extractive\), "
                       "reviewed or not, are not human questions"):  # fmt: skip
        check_human(generated, generated)
    human = tmp_path / "qa.json"
    human.write_text(json.dumps([{"q": "how many REQUESTS per minute?", "gold": ["600"]}]))
    with pytest.raises(SituateError, match="question 0 .* is generated question g-000000000001"):
        check_human(human, generated)
    human.write_text(json.dumps([{"q": "Which port?", "gold": ["8765"]}]))
    check_human(human, generated)  # written by a person
    with pytest.raises(SituateError, match="without gold cannot be scored"):
        check_human(tmp_path / "questions.txt", generated)
    with pytest.raises(SituateError, match="no human questions here"):
        check_human(tmp_path / "missing" / "qa.json", generated)


# -- the whole command ---------------------------------------------------------------------------

TOPICS = {
    "billing.md": ("Billing", ["Invoices", "Refunds", "Taxes"]),
    "servers.md": ("Servers", ["Ports", "Restarts", "Logs"]),
    "accounts.md": ("Accounts", ["Passwords", "Teams", "Deletion"]),
    "limits.md": ("Limits", ["Requests", "Storage", "Uploads"]),
}
WORDS = {
    "Invoices": "invoice pdf monthly statement", "Refunds": "refund card chargeback credit",
    "Taxes": "vat tax region exemption", "Ports": "port listener socket tls",
    "Restarts": "restart daemon systemd reload", "Logs": "log rotation journal retention",
    "Passwords": "password reset hash expiry", "Teams": "team member invite owner",
    "Deletion": "deletion erase purge backup", "Requests": "request minute throttle burst",
    "Storage": "storage gigabyte quota bucket", "Uploads": "upload file size chunked",
}  # fmt: skip


def build_folder(root: Path) -> list[dict]:
    """Four Markdown guides of three sections; returns 12 human questions with quote gold, each
    naming its section only by the section's heading (as a person asks: heading_path finds
    them, a chunk without its heading does not: every section allows its own number of
    "operations for each account")."""
    root.mkdir(parents=True)
    human = []
    for n, (file, (title, sections)) in enumerate(TOPICS.items()):
        parts = [f"# {title}"]
        for k, section in enumerate(sections):
            a, b, c, d = WORDS[section].split()
            number = 100 * (n + 1) + 10 * (k + 1)
            sentences = [
                f"Administrators change the {c} value from the console when the {d} grows.",
                f"Support answers questions about {a} and {c} within {k + 2} business days.",
                f"Each {b} record keeps {number + 7} entries of {d} history for the auditors.",
                f"A {c} alert fires after {k + 3} failed {a} checks in one hour on the server.",
                f"The {a} {b} setting allows {number} operations for each account in this guide.",
            ]
            parts.append(f"## {section}\n\n" + " ".join(sentences))
            human.append(
                {
                    "id": f"h{len(human)}",
                    "q": f"How many operations does an account get for {section}?",
                    "gold": [f"allows {number} operations"],
                }  # fmt: skip
            )
        (root / file).write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return human


@pytest.mark.slow
def test_validate_runs_the_arms_on_both_sets_and_writes_its_verdict(tmp_path: Path, capsys, caplog):
    import logging

    from situate.commands import questions_generate, questions_validate

    docs, out = tmp_path / "docs", tmp_path / "out"
    human = build_folder(docs)
    (docs / "qa.json").write_text(json.dumps(human), encoding="utf-8")
    dataset = ["dataset=folder", f"dataset.path={docs}", "dataset.min_words=5", f"output_dir={out}"]
    assert questions_generate.main("generate", [
        *dataset, "question_generator=extractive", "questions.target=24",
        "questions.passage_words=30", "questions.mix.factual=1", "questions.mix.paraphrase=0",
        "questions.mix.context_dependent=0", "questions.filters.near_duplicate.enabled=false",
        "questions.filters.trivially_lexical.enabled=false", "--out", str(docs / "questions.jsonl"),
    ]) == 0  # fmt: skip
    capsys.readouterr()
    arms = ["chunker=markdown", "chunker.max_words=30,60", "context=none,heading_path",
            "fusion=sparse_only", "eval.ks=[1,3,5]", "study=byod_check"]  # fmt: skip
    with caplog.at_level(logging.INFO, logger="situate"):
        assert questions_validate.main("validate", [*dataset, *arms, "--resamples", "300"]) == 0
    # each arm's human run builds its sparse index; its generated run loads it from the cache
    loaded = [r for r in caplog.records if r.getMessage().startswith("sparse index: cached")]
    assert len(loaded) == 4
    printed = capsys.readouterr().out
    (line,) = [x for x in printed.splitlines() if x.startswith("verdict: ")]
    report = out / "reports" / "byod_check"
    found = json.loads((report / "validation.json").read_text())
    assert line.startswith(f"verdict: {found['verdict']} (at ")
    assert found["verdict"] in (RANK, DO_NOT_RANK) and found["rank"] == (found["verdict"] == RANK)
    assert found["rank"] == (found["reasons"] == [])
    assert [a["arm"] for a in found["arms"]] == [
        "30+none",
        "30+heading_path",
        "60+none",
        "60+heading_path",
    ]
    assert (
        found["sets"]["human"]["questions"] == 12 and found["sets"]["generated"]["questions"] >= 10
    )
    assert len(found["decisions"]) == 6 and -1 <= found["tau_low"] <= found["tau"] <= 1
    for arm in found["arms"]:  # bias = generated - human, inside its interval
        assert arm["bias"] == pytest.approx(arm["generated"] - arm["human"])
        assert arm["ci_low"] <= arm["bias"] <= arm["ci_high"]
    assert set(found["agreement"]) == {
        *(f"{m}_at_{k}" for m in ("pass", "recall") for k in (1, 3, 5)),
        "mrr",
    }
    # the human questions name their section by its heading only: a chunk of 30 words without
    # its heading misses them, heading_path finds them; the generated ones copy their sentence,
    # which every arm finds: saturated, and the human set's decisions are tied on it
    assert found["verdict"] == DO_NOT_RANK
    assert found["sets"]["generated"]["informativeness"]["problem_at_metric"] == "saturated"
    pair = next(
        d for d in found["decisions"] if (d["first"], d["second"]) == ("30+none", "30+heading_path")
    )
    # a 75-point gap on the 12 human questions, Holm-adjusted over the 6 pairs: p_holm ~0.06,
    # at the edge of alpha 0.05; the generated set ties the pair, so it does not agree either way
    assert pair["human"] == -0.75 and pair["human_p_holm"] < 0.1 and not pair["agrees"]
    assert pair["words"].startswith("human: 30+heading_path beats 30+none by ")
    assert f"  tied on one set: {pair['words']}" in printed
    assert any(r.startswith("the generated set is saturated at ") for r in found["reasons"])
    md = (report / "validation.md").read_text()
    assert "## How informative is the human set" in md and "## Decisions at" in md
    assert len(list((out / "cache" / "index" / "sparse").iterdir())) == 4  # chunkings x contexts
    assert "note: 12 human questions with gold; 20-40 narrow the intervals" in printed
    halves = found["human_split_half"]
    assert halves["half"] == 6 and halves["low"] <= halves["tau"] <= halves["high"]
    assert "the human set against itself: two halves of 6 questions order the arms" in printed
    assert "The human set against itself: two halves of 6 questions" in md

    # a user error is one line, exit 2, through the CLI
    from situate.cli import main

    assert (
        main(["questions", "validate", *dataset, *arms, "--human", str(docs / "questions.jsonl")])
        == 2
    )
    assert "are not human questions" in capsys.readouterr().err
    assert main(["questions", "validate", "dataset=cookbook", "context=none,replay"]) == 2
    assert "dataset cookbook is not a folder of documents" in capsys.readouterr().err
