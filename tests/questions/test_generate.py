"""``situate questions generate``: the passage spread, the mix rounding, the prompts and their
parser, quote resolution, and the whole command against the Anthropic emulator (a folder of PDF,
HTML, DOCX and Markdown; reruns, a larger target, a SIGKILL, a Spanish document, the estimate)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hydra.utils import instantiate

from document_fixtures import LIMITES_MD, LIMITES_TITLE, mixed_folder
from situate.config.compose import compose
from situate.datasets.generated import Passage, Provenance, read_questions
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.textmodel import question_answer
from situate.errors import SituateError
from situate.questions.base import GenerationRequest, Proposal
from situate.questions.generate import (
    assign_strategies,
    build_requests,
    keep_reviews,
    mix_counts,
    resolve,
)
from situate.questions.passages import sample_passages, windows
from situate.questions.prompts import AnswerError, document_language, parse_answer, render
from situate.records import Document

KEY = "emulator-key-test-questions"
REPO = Path(__file__).resolve().parents[2]


def paragraphs(tag: str, n: int, words: int = 50) -> str:
    """``n`` paragraphs of ``words`` distinct words each, one sentence per paragraph."""
    return "\n\n".join(" ".join(f"{tag}{p}w{i}" for i in range(words)) + "." for p in range(n))


# -- the spread of passages --------------------------------------------------------------------


def test_passages_are_spread_over_documents_by_length_capped_at_what_a_document_holds():
    a = Document("a.txt", paragraphs("a", 8))  # 400 words, 8 passages of 50
    b = Document("b.txt", paragraphs("b", 4))  # 200 words, 4 passages
    c = Document("c.txt", paragraphs("c", 1, words=300))  # 300 words, one sentence: 1 passage
    assert [len(s.passages) for d in (a, b, c) for s in windows(d, 50)] == [8, 4, 1]
    # Sainte-Lague over 400, 300, 200: a (400), c (300), b (200 > a's 400/3), a (133), then c's
    # 300/3 = 100 would beat a's 400/5 = 80, but c holds one passage: a, then b (66.7 > a's 57.1)
    picked = sample_passages([a, b, c], target=6, passage_words=50)
    assert [p.path for p in picked] == ["a.txt", "c.txt", "b.txt", "a.txt", "a.txt", "b.txt"]
    # a larger target only adds passages: the smaller sample is its start
    assert sample_passages([a, b, c], target=9, passage_words=50)[:6] == picked
    assert sample_passages([a, b, c], target=99, passage_words=50).__len__() == 13  # all there is


def test_more_requests_than_passages_ask_each_passage_again_up_to_per_passage():
    a = Document("a.txt", paragraphs("a", 2))  # 2 passages of 50 words
    b = Document("b.txt", paragraphs("b", 1))  # 1
    one = build_requests([a, b], target=7, mix={"factual": 1.0}, passage_words=50)
    assert [(r.passage.path, r.index) for r in one] == [("a.txt", 0), ("b.txt", 0), ("a.txt", 0)]
    # per_passage 2: every passage's first question, then each passage's second (index 1),
    # the same passages in the same order; the target (7) is more than 3 x 2 holds
    two = build_requests([a, b], target=7, mix={"factual": 1.0}, passage_words=50, per_passage=2)
    assert [r.index for r in two] == [0, 0, 0, 1, 1, 1]
    assert [r.passage for r in two[3:]] == [r.passage for r in two[:3]]
    # a target the first round meets is not asked again
    assert len(build_requests([a, b], 2, {"factual": 1.0}, 50, per_passage=3)) == 2
    with pytest.raises(SituateError, match="per_passage=0"):
        build_requests([a, b], 2, {"factual": 1.0}, 50, per_passage=0)


def test_inside_a_document_passages_are_spread_over_sections():
    text = f"# Guide\n\n## Setup\n\n{paragraphs('s', 4)}\n\n## Billing\n\n{paragraphs('b', 2)}\n"
    doc = Document("guide.md", text, title="Guide")
    sections = windows(doc, 50)
    assert [(s.section, len(s.passages)) for s in sections] == [("Setup", 4), ("Billing", 2)]
    # by section words 200 and 100: Setup, Billing (100 > 200/3), Setup (66.7 > 100/3)
    picked = sample_passages([doc], target=3, passage_words=50, seed=7)
    assert Counter(p.section for p in picked) == {"Setup": 2, "Billing": 1}
    # a passage is whole paragraphs, without its heading line
    first = sections[1].passages[0]
    assert text[first.start : first.end] == paragraphs("b", 1)
    # seeded: the same seed, the same passages; another seed shuffles inside sections
    assert sample_passages([doc], target=3, passage_words=50, seed=7) == picked
    orders = {tuple(sample_passages([doc], 6, 50, seed=s)) for s in range(6)}
    assert len(orders) > 1


# -- the strategy mix --------------------------------------------------------------------------

MIX = {"factual": 0.4, "context_dependent": 0.4, "paraphrase": 0.2}


def test_mix_ratios_are_rounded_by_largest_remainder():
    # 4: exact 1.6, 1.6, 0.8 -> floors 1, 1, 0; the two left go to 0.8 (paraphrase), then the
    # first of the 0.6 ties (factual)
    assert mix_counts(MIX, 4) == {"factual": 2, "context_dependent": 1, "paraphrase": 1}
    # 7: exact 2.8, 2.8, 1.4 -> 2, 2, 1; two left: both 0.8s
    assert mix_counts(MIX, 7) == {"factual": 3, "context_dependent": 3, "paraphrase": 1}
    assert mix_counts(MIX, 10) == {"factual": 4, "context_dependent": 4, "paraphrase": 2}
    assert mix_counts({"factual": 1, "paraphrase": 0}, 3) == {"factual": 3, "paraphrase": 0}
    # interleaved, and a larger target keeps the strategies of the earlier passages
    assert assign_strategies(MIX, 4) == ["factual", "context_dependent", "paraphrase", "factual"]
    assert assign_strategies(MIX, 6)[:4] == assign_strategies(MIX, 4)
    with pytest.raises(SituateError, match="unknown strategy 'trivia'"):
        mix_counts({"trivia": 1.0}, 3)
    with pytest.raises(SituateError, match="sum to 0"):
        mix_counts({"factual": 0}, 3)


# -- prompts and their answers -----------------------------------------------------------------

ES = Document("limites.md", LIMITES_MD, title=LIMITES_TITLE)


def request(doc: Document, start: int, end: int, strategy="factual", language="", section=""):
    return GenerationRequest(doc, Passage(doc.doc_id, start, end, section), strategy, language)


def test_the_answer_parser_reads_json_in_fences_or_prose_and_says_why_not():
    want = ("Q?", "A", "the quote")
    obj = '{"question": "Q?", "answer": "A", "quote": "the quote"}'
    for text in (obj, f"```json\n{obj}\n```", f"Sure! Here it is:\n{obj}\nHope this helps."):
        p = parse_answer(text)
        assert (p.question, p.answer, p.quote) == want
    fenced_then_other = '{"note": 1} and then ' + obj
    assert parse_answer(fenced_then_other).question == "Q?"  # the first object with the keys
    with pytest.raises(
        AnswerError, match="no JSON object in the answer: 'I cannot help with that.'"
    ):
        parse_answer("I cannot help with that.")
    with pytest.raises(AnswerError, match="non-empty question, answer and quote"):
        parse_answer('{"question": "Q?", "answer": "A", "quote": ""}')
    with pytest.raises(AnswerError, match="empty answer"):
        parse_answer("  ")


def test_prompts_by_strategy_and_language():
    start = ES.text.index("El plan")
    end = len(ES.text.rstrip())
    assert document_language(ES.text) == "Spanish"
    factual = render(request(ES, start, end, section="Plan Pro"))
    assert factual.document == "" and factual.language == "Spanish"
    assert "Write the question and the answer in Spanish." in factual.prompt
    assert f"<passage>\n{ES.text[start:end]}\n</passage>" in factual.prompt
    assert "Section: Plan Pro" in factual.prompt
    dependent = render(request(ES, start, end, "context_dependent"))
    assert dependent.document == f"<document>\n{ES.text}\n</document>"  # the cached prefix
    assert "elsewhere in the document and NOT in the passage" in dependent.prompt
    # a document longer than the model's window: a window of it centred on the passage
    windowed = render(request(ES, start, end, "context_dependent"), max_document_chars=60)
    middle = (start + end) // 2
    assert windowed.document == f"<document>\n{ES.text[middle - 30 : middle + 30]}\n</document>"
    configured = render(request(ES, start, end, "paraphrase", language="English"))
    assert "in English." in configured.prompt and "different words" in configured.prompt
    # the emulator answers a Spanish prompt in Spanish, naming the title when it has the document
    answer = json.loads(question_answer(dependent.document, dependent.prompt))
    assert answer["question"].startswith("¿Qué dice Límites de la API sobre")
    assert answer["quote"] in ES.text[start:end] or answer["quote"][1:] in ES.text[start:end]
    english = json.loads(question_answer(configured.prompt, configured.prompt))
    assert english["question"].startswith("What is stated about")


# -- quotes found in the document --------------------------------------------------------------

DOC = Document(
    "report.md",
    "# Results\n\nRevenue grew 12 percent to 4.2 million dollars.\n"
    "Costs  fell\nby 3 percent.\n\nIn 2024 we expect steady demand.\n",
)
PASSAGE = (11, DOC.text.index("\n\nIn 2024"))


def proposal(quote: str, question: str = "How much did revenue grow?", failure=None) -> Proposal:
    r = request(DOC, *PASSAGE)
    return Proposal(r, question, "12 percent", quote, Provenance("m"), failure=failure)


def test_each_quote_rule_is_recorded_with_its_span_and_an_unresolvable_quote_rejects():
    exact = resolve(proposal("Revenue grew 12 percent"))
    assert (exact.match, exact.gold[0].start, exact.gold[0].end) == ("exact", 11, 34)
    assert DOC.text[11:34] == "Revenue grew 12 percent"
    # case and whitespace slips: the span is the document's own text
    normal = resolve(proposal("costs fell by 3 percent."))
    span = normal.gold[0]
    assert normal.match == "normalized" and (span.start, span.end) == (59, 84)
    assert DOC.text[59:84] == "Costs  fell\nby 3 percent."
    fuzzy = resolve(proposal("Revenue grew 12 percent to 4.2 milion dollars."))  # a dropped l
    assert fuzzy.match == "fuzzy" and 90 <= fuzzy.match_score < 100
    assert (fuzzy.gold[0].start, fuzzy.gold[0].end) == (11, 58)
    # outside the passage but in its document: found there
    elsewhere = resolve(proposal("we expect steady demand"))
    assert elsewhere.gold[0].start == DOC.text.index("we expect")
    lost = resolve(proposal("Profits doubled in the third quarter."))
    assert lost.status == "rejected" and lost.rejected_by == "unresolvable_quote"
    assert (
        lost.gold == ()
        and "'Profits doubled in the third quarter.' is not in report.md" in lost.reason
    )
    failed = resolve(proposal("", question="", failure="unparsable answer: no JSON object"))
    assert failed.rejected_by == "no_question" and failed.reason.startswith("unparsable")


def test_a_rerun_keeps_the_reviewers_decisions():
    first = resolve(proposal("Revenue grew 12 percent"))
    other = resolve(proposal("Costs fell", question="What fell?"))
    other = type(other)(**{**other.__dict__, "id": "g-other"})
    reviewed = [first.reviewed("edited", "By how much did revenue grow in 2023?"), other]
    again, dropped = keep_reviews([first], reviewed)
    assert again[0].review == "edited" and again[0].q == "By how much did revenue grow in 2023?"
    assert again[0].original_q == "How much did revenue grow?"
    assert dropped == 1 and len(again) == 1  # the unreviewed one not generated again is left out


# -- end to end against the emulator -----------------------------------------------------------


def overrides(docs: Path, out: Path, emu, *more: str) -> list[str]:
    return [
        "dataset=folder", f"dataset.path={docs}", f"output_dir={out}", f"llm.base_url={emu.url}",
        "llm.backoff_base=0.005", "questions.passage_words=12", "tracking=none", *more,
    ]  # fmt: skip


@pytest.fixture
def emu(monkeypatch):
    """The Anthropic emulator, its key in the environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emulator:
        yield emulator


def generate(args: list[str]) -> int:
    from situate.commands.questions_generate import main

    return main("generate", args)


def messages(emu) -> list:
    return [r for r in emu.requests if r.path == "/v1/messages" and r.billed]


def test_a_folder_of_pdf_html_docx_and_markdown_gets_span_gold_and_reruns_pay_nothing(
    tmp_path, emu, capsys
):
    docs, out = mixed_folder(tmp_path), tmp_path / "out"
    assert generate(overrides(docs, out, emu, "questions.target=6")) == 0
    paid_first = len(messages(emu))
    path = out / "questions" / "folder" / "questions.jsonl"
    first = read_questions(path)
    assert paid_first == len(first) == 6
    texts = {}
    from situate.datasets.folder import FolderLoader

    for d in FolderLoader(str(docs), cache=None).load().documents:
        texts[d.doc_id] = d.text
    for q in first:
        assert q.status == "kept" and q.match in ("exact", "normalized")
        span = q.gold[0]
        found = texts[span.doc_id][span.start : span.end]
        if q.match == "exact":
            assert found == q.quote
        else:  # the emulator's case slip: the span is the document's own text
            assert found.casefold() == q.quote.casefold() and found != q.quote
        p = q.passage
        assert p.start <= span.start and span.end <= p.end  # the quote is in its passage
    assert {q.passage.path for q in first} >= {"report.pdf", "handbook.docx", "manual.md"}
    assert Counter(q.strategy for q in first) == {
        "factual": 3, "context_dependent": 2, "paraphrase": 1,
    }  # fmt: skip
    assert all(not q.provenance.from_cache and q.provenance.cost_usd > 0 for q in first)
    # hand-checked: the manual's Installation passage is its second sentence, after the
    # title (17 characters with its blank line), the section heading (17) and the first
    # sentence (55) and a space: 90, and the 30 characters of the quote
    manual = next(q for q in first if q.passage.path == "manual.md")
    assert (manual.passage.section, manual.quote) == (
        "Installation", "The kit holds two long screws.",
    )  # fmt: skip
    assert (manual.gold[0].start, manual.gold[0].end) == (90, 120) == (manual.passage.start, 120)
    # the PDF's first page: "Overview\n" (9), then the sentence (45), found by the
    # normalized rule (the emulator's case slip: "acme sells...")
    pdf = next(q for q in first if q.passage.path == "report.pdf")
    assert (pdf.match, pdf.quote[:4], pdf.gold[0].start, pdf.gold[0].end) == (
        "normalized", "acme", 9, 54,
    )  # fmt: skip
    assert texts["report.pdf"][9:54] == "Acme sells anvils to coyotes in every desert."
    # the Spanish document's questions are in Spanish
    spanish = [q for q in first if q.passage.path == "limites.md"]
    assert all(q.language == "es" and q.q.startswith("¿") for q in spanish)

    # the file is a dataset as it is: dataset=generated reads the same questions and spans
    dataset = compose(["dataset=generated", f"dataset.path={docs}", f"dataset.qa={path}"]).dataset
    loaded = instantiate(dataset).load()
    assert [(q.text, q.gold[0].start, q.gold[0].end) for q in loaded.questions] == [
        (q.q, q.gold[0].start, q.gold[0].end) for q in first
    ]

    capsys.readouterr()
    assert generate(overrides(docs, out, emu, "questions.target=6")) == 0  # a rerun
    assert len(messages(emu)) == paid_first
    assert "billed $0 this run" in capsys.readouterr().out
    again = read_questions(path)
    assert [q.id for q in again] == [q.id for q in first]
    assert all(q.provenance.from_cache for q in again)

    assert generate(overrides(docs, out, emu, "questions.target=9")) == 0  # a larger target
    larger = read_questions(path)
    assert len(larger) == 9 and len(messages(emu)) == paid_first + 3
    assert [q.id for q in larger[:6]] == [q.id for q in first]
    assert sum(not q.provenance.from_cache for q in larger) == 3


def test_the_estimate_equals_the_billed_input_and_caps_the_output(tmp_path, monkeypatch, capsys):
    """A long document (above Haiku 4.5's 4,096-token cache minimum): its context_dependent
    questions write the document block once and read it after; the estimate counts with the
    emulator's own counter, so its input is what is billed, and its output is a ceiling."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    from situate.commands.questions_generate import estimate, prepare

    docs = tmp_path / "docs"
    docs.mkdir()
    sections = "\n\n".join(f"## Part {i}\n\n{paragraphs(f'p{i}x', 3, words=40)}" for i in range(20))
    (docs / "long.md").write_text(f"# Long Guide\n\n{sections}\n", encoding="utf-8")
    out = tmp_path / "out"
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        args = overrides(
            docs, out, emu, "questions=context_dependent", "questions.target=4",
            "questions.passage_words=40",
        )  # fmt: skip
        _, _, generator, requests = prepare(args)
        result, stored = estimate(generator, requests, counter="provider")
        assert stored == 0 and result.calls == 4 and result.documents == 1
        from situate.commands.estimate import main as estimate_cli

        assert estimate_cli([*args, "--questions", "--counter", "provider"]) == 0
        printed = capsys.readouterr().out
        assert "4 to write (context_dependent)" in printed and "0 questions stored" in printed
        assert generate(args) == 0
        billed = [r.usage for r in messages(emu)]
    t = result.tokens
    assert t["cache_write"] == billed[0]["cache_creation_input_tokens"] > 4096
    assert t["cache_read"] == sum(u["cache_read_input_tokens"] for u in billed[1:])
    assert t["uncached"] == sum(u["input_tokens"] for u in billed)
    questions = read_questions(out / "questions" / "folder" / "questions.jsonl")
    paid = sum(q.provenance.cost_usd for q in questions)
    price = generator.pricing.price(generator.llm.model)
    output_usd = (
        sum(q.provenance.output_tokens for q in questions) * float(price.rate("output")) / 1e6
    )
    estimated_input = float(result.cached.dollars) - float(result.cached.part("output"))
    assert paid - output_usd == pytest.approx(estimated_input, rel=1e-9)
    assert paid < result.with_caching < result.without_caching


def test_a_budget_stops_generation_in_one_line_and_a_higher_one_resumes(tmp_path, emu):
    docs, out = mixed_folder(tmp_path), tmp_path / "out"
    args = overrides(docs, out, emu, "questions.target=6", "question_generator.concurrency=1")
    with pytest.raises(SituateError, match=r"question_generator: budget reached: .* higher"):
        generate([*args, "question_generator.budget_usd=0.0025"])
    paid = len(messages(emu))
    assert 0 < paid < 6
    questions = read_questions(out / "questions" / "folder" / "questions.jsonl")
    assert sum(q.rejected_by == "no_question" for q in questions) == 6 - paid
    assert generate([*args, "question_generator.budget_usd=1"]) == 0
    assert len(messages(emu)) == 6  # the first run's answers were not paid again


@pytest.mark.slow
def test_an_emulators_questions_are_not_served_to_another_endpoint(tmp_path, monkeypatch):
    """Issue 16, item 1, for generated questions: the generation store's key names the endpoint,
    so another emulator pays for its own and a run against Claude needs the key."""
    docs, out = mixed_folder(tmp_path), tmp_path / "out"
    path = out / "questions" / "folder" / "questions.jsonl"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with (
        AnthropicEmulator(api_key=KEY, ttft=0.0) as a,
        AnthropicEmulator(api_key=KEY, ttft=0.0) as b,
    ):
        assert generate(overrides(docs, out, a, "questions.target=3")) == 0
        assert generate(overrides(docs, out, b, "questions.target=3")) == 0
        assert (len(messages(a)), len(messages(b))) == (3, 3)
        assert {q.provenance.endpoint for q in read_questions(path)} == {b.url}
        assert generate(overrides(docs, out, a, "questions.target=3")) == 0  # its own: stored
        assert len(messages(a)) == 3
        assert all(q.provenance.from_cache for q in read_questions(path))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    real = [o for o in overrides(docs, out, a, "questions.target=3") if "base_url" not in o]
    with pytest.raises(SituateError, match="set ANTHROPIC_API_KEY"):
        generate(real)


@pytest.mark.slow
def test_a_generation_killed_mid_way_resumes_without_paying_a_stored_answer_again(tmp_path):
    docs = mixed_folder(tmp_path)
    out = tmp_path / "out"
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        args = overrides(
            docs, out, emu, "questions.target=6", "question_generator.concurrency=1",
            "question_generator.budget_usd=1",
        )  # fmt: skip
        command = [sys.executable, "-m", "situate.cli", "questions", "generate", *args]
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PYTHONPATH": str(REPO / "src")}
        emu.hold(after=2)  # two answers go through and are stored; the third call is held
        proc = subprocess.Popen(command, env=env, cwd=REPO)
        assert emu.wait_held(1), "the child never sent its third call"
        proc.kill()
        assert proc.wait(60) < 0
        emu.release()
        assert emu.wait_idle()
        first = messages(emu)
        assert len(first) == 3 and first[2].client_gone  # billed, its answer lost with the child
        from situate.questions.store import GenerationStore

        store = GenerationStore(out / "cache" / "generations.sqlite")
        rows = list(store.charges.rows.items())  # the lost answer's attempt, counted by the budget
        assert len(rows) == 1 and float(rows[0][1]) > 0

        rerun = subprocess.run(command, env=env, cwd=REPO, timeout=600, capture_output=True)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert emu.wait_idle()
    billed_keys = Counter(k for r in messages(emu) for k in r.billing_keys)
    # six prompts: each stored answer billed once; only the call in flight at the kill twice
    assert len(billed_keys) == 6 and sorted(billed_keys.values()) == [1, 1, 1, 1, 1, 2]
    assert billed_keys[first[2].billing_keys[0]] == 2
    assert all(billed_keys[r.billing_keys[0]] == 1 for r in first[:2])
    assert len(read_questions(out / "questions" / "folder" / "questions.jsonl")) == 6


def test_the_batch_api_writes_the_same_questions_at_half_price(tmp_path, emu):
    docs = mixed_folder(tmp_path)
    plain_out, batch_out = tmp_path / "plain", tmp_path / "batch"
    base = ["questions=factual", "questions.target=4"]
    assert generate(overrides(docs, plain_out, emu, *base)) == 0
    more = ("question_generator.batch=true", "llm.batch_poll_seconds=0.02")
    chosen = tmp_path / "set.jsonl"  # --out: the file to write
    assert generate([*overrides(docs, batch_out, emu, *base, *more), "--out", str(chosen)]) == 0
    assert not (batch_out / "questions").exists()
    plain = read_questions(plain_out / "questions" / "folder" / "questions.jsonl")
    batch = read_questions(chosen)
    assert [(q.id, q.q, q.gold) for q in batch] == [(q.id, q.q, q.gold) for q in plain]
    for b, p in zip(batch, plain, strict=True):
        assert b.provenance.cost_usd == pytest.approx(p.provenance.cost_usd / 2, rel=1e-12)
    assert any(r.path == "/v1/messages/batches" for r in emu.requests)


def test_the_estimate_of_calls_with_and_without_a_cached_document_block():
    from situate.money.estimate import estimate_calls
    from situate.money.pricing import load_price_book

    price = load_price_book().price("claude-haiku-4-5")  # $1 in, $1.25 write, $0.10 read, $5 out
    result = estimate_calls(
        price, [("document d", 5000, [100, 100, 100]), ("(no document block)", 0, [200, 200])],
        output_tokens=50, counter="test", shape_lines=[],
    )  # fmt: skip
    # with caching: one write of 5,000 and two reads; 700 uncached; 5 x 50 out
    assert result.tokens == {
        "cache_write": 5000,
        "cache_read": 10000,
        "uncached": 700,
        "output": 250,
    }
    with_caching = (5000 * 1.25 + 10000 * 0.1 + 700 * 1 + 250 * 5) / 1e6
    assert result.with_caching == pytest.approx(with_caching, rel=1e-12)
    assert result.without_caching == pytest.approx((15700 + 1250) / 1e6, rel=1e-12)
    # with batches: the document's first call alone at full price, every other call at half
    first = (5000 * 1.25 + 100 + 50 * 5) / 1e6
    assert result.with_batches == pytest.approx(first + (with_caching - first) / 2, rel=1e-12)
