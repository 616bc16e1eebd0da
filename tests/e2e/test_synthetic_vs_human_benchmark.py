"""benchmarks/synthetic_vs_human.py: a generated question's gold as the benchmark writes it, the
quote or (``--gold answer``) the answer phrase inside it, as the human questions' gold is."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from situate.datasets.generated import GeneratedQuestion, Passage, Provenance
from situate.records import Span

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import synthetic_vs_human as bench  # noqa: E402

CONTEXT = "Intro text. The median incubation period was 5.2 days in Wuhan. More text follows."
QUOTE = "The median incubation period was 5.2 days in Wuhan."
START = CONTEXT.index(QUOTE)


def question(qid: str, answer: str) -> GeneratedQuestion:
    span = Span("7", START, START + len(QUOTE), "span")
    return GeneratedQuestion(
        id=qid, q="How long was the median incubation period?", answer=answer, quote=QUOTE,
        gold=(span,), strategy="factual", passage=Passage("7", 0, len(CONTEXT)),
        provenance=Provenance("extractive"), language="en",
    )  # fmt: skip


def test_the_gold_is_the_quote_or_the_answer_phrase_inside_it(tmp_path: Path):
    found = question("g-1", "5.2 days")
    assert bench.gold_text(found, CONTEXT) == ("5.2 days", CONTEXT.index("5.2 days"))
    # an answer the quote does not hold (an LLM's paraphrase): the whole quote
    paraphrased = question("g-2", "about five days")
    assert bench.gold_text(paraphrased, CONTEXT) == (QUOTE, START)
    assert bench.gold_text(found, CONTEXT, "quote") == (QUOTE, START)
    # case aside, the quote's own text: "THE MEDIAN" finds "The median"
    assert bench.gold_text(question("g-3", "THE MEDIAN"), CONTEXT) == ("The median", START)
    source = tmp_path / "covid.json"
    source.write_text(json.dumps({"data": [{"paragraphs": [
        {"document_id": 7, "context": CONTEXT, "qas": []},
    ]}]}))  # fmt: skip
    for gold, text in (("quote", QUOTE), ("answer", "5.2 days")):
        squad = tmp_path / f"{gold}.json"
        assert bench.as_squad(source, [found], 1, squad, gold) == {"g-1": "factual"}
        (answer,) = json.loads(squad.read_text())["data"][0]["paragraphs"][0]["qas"][0]["answers"]
        assert (
            CONTEXT[answer["answer_start"] :].startswith(answer["text"]) and answer["text"] == text
        )


def test_split_tau_is_split_half_of_the_arms_scores_and_none_without_a_rest():
    import numpy as np
    from common import split_tau

    class Scores:  # what an arm's result gives the benchmarks: per-question scores of a metric
        def __init__(self, values):
            self.values = np.array(values, dtype=float)

        def scores(self, metric):
            assert metric == "pass_at_5"
            return self

        def to_numpy(self):
            return self.values

    results = {"a": Scores([1, 1, 1, 1]), "b": Scores([0, 0, 0, 0]), "c": Scores([1, 0, 0, 0])}
    # one question against the other three (tests/evaluation/test_agreement.py): tau-a 2/3 in
    # three draws of four, 1/3 where question 0 is the one
    one = split_tau(results, ["a", "b", "c"], "pass_at_5", part=1, tau_a=True)
    assert one["tau"] == round(2 / 3, 3) and one["range"][0] == round(1 / 3, 3)
    assert split_tau(results, ["a", "b", "c"], "pass_at_5", part=4) is None
