"""The pooled judge against the Anthropic emulator: each pair judged once, stored, priced, capped;
the grade parse, the emulator's grading rule, the judged metrics and kappa by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.fault_injection import Faults
from situate.emulators.textmodel import approx_tokens, grading_answer
from situate.errors import SituateError
from situate.evaluation.judged import judged_scores
from situate.judging.agreement import agreement, cohen_kappa
from situate.judging.judge import Judge
from situate.judging.pool import Pair
from situate.judging.prompt import parse_grade, render
from situate.llm.anthropic_provider import AnthropicProvider
from situate.money.pricing import load_price_book

KEY = "emulator-key-test-judge-7c"
MODEL = "claude-haiku-4-5"
Q = "How do I stream tokens from the messages API?"
PAIRS = [
    Pair(
        "q1", Q, "Stream tokens with client.messages.stream(); the messages API sends events.", "a"
    ),
    Pair("q1", Q, "Tokens are counted by the messages endpoint.", "b"),  # 2 of 4 words
    Pair("q1", Q, "def add(x, y): return x + y", "c"),
    Pair("q2", "What is a vector database?", "A vector database stores embeddings.", "d"),
]


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def judge(emu, tmp_path: Path, **kw) -> Judge:
    llm = AnthropicProvider(MODEL, base_url=emu.url, backoff_base=0.005, batch_poll_seconds=0.02)
    return Judge(llm, str(tmp_path / "judgments.sqlite"), load_price_book(), **kw)


def test_prompt_names_the_scale_and_the_grade_is_the_first_digit():
    text = render("Q?", "passage text")
    assert "<question>\nQ?\n</question>" in text and "<passage>\npassage text\n</passage>" in text
    assert "0 = unrelated" in text and "3 = answers the question" in text
    assert parse_grade("2") == 2
    assert parse_grade("Grade: 3.") == 3
    assert parse_grade("Grade:1", "Grade:") == 1
    assert parse_grade("Grade: 7 or so", "Grade:") is None  # no digit 0-3: no grade
    assert parse_grade("I cannot tell") is None


def test_emulator_grades_by_the_share_of_question_words_in_the_passage():
    # content words of Q: stream, tokens, messages, api (4)
    assert grading_answer(render(Q, PAIRS[0].text)) == "3"  # 4 of 4
    assert grading_answer(render(Q, PAIRS[1].text)) == "2"  # tokens, messages: 2 of 4
    assert grading_answer(render(Q, "an api")) == "1"  # 1 of 4
    assert grading_answer(render(Q, PAIRS[2].text)) == "0"
    assert grading_answer("Situate this <chunk>x</chunk>") is None  # not a judge prompt


def test_each_pair_is_judged_once_then_served_from_the_store(key_env, tmp_path: Path):
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        first = judge(emu, tmp_path).judge(PAIRS + PAIRS[:2])  # duplicates: one call each
        assert len(first.calls) == 4 and first.from_store == 0
        again = judge(emu, tmp_path).judge(PAIRS)
        assert again.calls == [] and again.from_store == 4
        extra = Pair("q3", "Which model is cheapest?", "Haiku is the cheapest model.", "e")
        added = judge(emu, tmp_path).judge([*PAIRS, extra])  # an arm's new pair: one call
        assert len(added.calls) == 1 and added.from_store == 4
    j = judge(emu, tmp_path)
    grades = [added.judgments[j.key(p)].grade for p in PAIRS]
    assert grades == [3, 2, 0, 3]
    # every answer is one digit: one output token, priced at Haiku 4.5's $1 / $5 per Mtok
    for r in first.calls:
        assert r.usage.output == 1
    prompts = sum(approx_tokens(j.request(p).prompt) for p in PAIRS)
    assert first.cost_usd == pytest.approx((prompts * 1 + 4 * 5) / 1e6, rel=1e-12)


def test_a_store_key_names_the_endpoint(key_env, tmp_path: Path):
    with AnthropicEmulator(api_key=KEY) as a, AnthropicEmulator(api_key=KEY) as b:
        assert judge(a, tmp_path).key(PAIRS[0]) != judge(b, tmp_path).key(PAIRS[0])


def test_budget_stops_before_a_call_that_would_pass_it_and_a_higher_one_resumes(
    key_env, tmp_path: Path
):
    faults = Faults.uniform(0.3, kinds=("429_retry_after", "500", "reset"), seed=1, retry_after="0")
    with AnthropicEmulator(api_key=KEY, faults=faults) as emu:
        one = judge(emu, tmp_path / "x")
        cost_one = one.cost(one.judge(PAIRS[:1]).calls[0])
        capped = judge(emu, tmp_path, budget_usd=2.5 * cost_one, concurrency=1)
        with pytest.raises(
            SituateError, match=r"judge: budget reached: .* higher judge.budget_usd"
        ):
            capped.judge(PAIRS)
        assert capped.budget.spent <= 2.5 * cost_one
        done = judge(emu, tmp_path, budget_usd=1.0).judge(PAIRS)
        assert done.from_store >= 1 and done.from_store + len(done.calls) == 4


def test_batch_api_judges_at_half_price(key_env, tmp_path: Path):
    with AnthropicEmulator(api_key=KEY) as emu:
        plain = judge(emu, tmp_path / "plain").judge(PAIRS)
        batched = judge(emu, tmp_path / "batch", batch=True).judge(PAIRS)
    assert all(r.batch for r in batched.calls)
    assert batched.cost_usd == pytest.approx(plain.cost_usd / 2, rel=1e-12)


def test_judged_metrics_by_hand():
    # ranked grades 3, None, 0, 2; the pool of the question holds grades 3, 2, 2, 0
    s = judged_scores([3, None, 0, 2], [3, 2, 2, 0], ks=[2, 4], relevant_from=2)
    dcg4 = 3 / 1 + 0 + 0 + 2 / 2.321928094887362  # log2(5)
    idcg4 = 3 / 1 + 2 / 1.584962500721156 + 2 / 2 + 0  # log2(3), log2(4)
    assert s["judged_ndcg_at_4"] == pytest.approx(dcg4 / idcg4, abs=1e-12)
    assert s["judged_ndcg_at_2"] == pytest.approx(3 / (3 + 2 / 1.584962500721156), abs=1e-12)
    assert s["judged_precision_at_2"] == 0.5 and s["judged_precision_at_4"] == 0.5
    assert s["judged_recall_at_2"] == pytest.approx(1 / 3) and s[
        "judged_recall_at_4"
    ] == pytest.approx(2 / 3)
    assert s["unjudged_at_2"] == 0.5 and s["unjudged_at_4"] == 0.25


def test_kappa_and_agreement_by_hand():
    # judged relevant: T T F F T F; gold: T F F F T T -> observed 4/6, both marginals 1/2
    judged, gold = [True, True, False, False, True, False], [True, False, False, False, True, True]
    assert cohen_kappa(judged, gold) == pytest.approx((4 / 6 - 0.5) / 0.5)
    assert cohen_kappa([True, False], [True, False]) == 1.0
    a = agreement([(3, True), (1, True), (None, True), (2, False), (0, False)], relevant_from=2)
    assert (a.n_gold, a.n_other, a.unparsed) == (3, 2, 1)
    assert a.gold_judged_relevant == pytest.approx(1 / 3) and a.other_judged_relevant == 0.5
