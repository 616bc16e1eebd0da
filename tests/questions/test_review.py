"""Question filters, `situate questions review|export|import`, and reading a generated set.

Fixtures are GeneratedQuestion records written directly (no generator): a small folder of
Markdown documents and a questions.jsonl whose gold spans are hand-computed offsets into them.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from conftest import CONF_DIR, run_cli
from situate.commands.questions_review import main as review_main
from situate.datasets.folder import FolderLoader
from situate.datasets.generated import (
    GeneratedQuestion,
    Passage,
    Provenance,
    read_questions,
    write_questions,
)
from situate.embedding.onnx_minilm import OnnxMiniLMEmbedder
from situate.errors import SituateError
from situate.paid.llm import LLMCallFailed, LLMRequest, LLMResponse
from situate.questions.filters import (
    AnswerableWithoutCorpus,
    DanglingReference,
    NearDuplicate,
    TooEasy,
    TriviallyLexical,
    Underspecified,
    apply_filters,
    build_filters,
)
from situate.records import Document, Span, Usage

PLANS = "# Plans\n\nThe Pro plan allows 600 requests per minute. The Free plan allows 60.\n"
# "600 requests per minute" = PLANS[29:52]; "The Free plan allows 60." = PLANS[54:78]
INSTALL = "# Install\n\nInstall situate with pip install situate, then run situate chunks.\n"
# "pip install situate" = INSTALL[32:51]


def question(
    qid: str, q: str, quote: str = "", path: str = "plans.md", start: int = 0, end: int = 0, **kw
) -> GeneratedQuestion:
    gold = (Span(path, start, end),) if end else ()
    return GeneratedQuestion(
        id=qid,
        q=q,
        answer=kw.pop("answer", "an answer"),
        quote=quote,
        gold=gold,
        strategy=kw.pop("strategy", "factual"),
        passage=Passage(path, 0, 80, kw.pop("section", "Plans")),
        provenance=Provenance("extractive"),
        match=kw.pop("match", "exact" if end else None),
        **kw,
    )


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "plans.md").write_text(PLANS, encoding="utf-8")
    (folder / "install.md").write_text(INSTALL, encoding="utf-8")
    return folder


def five_questions() -> list[GeneratedQuestion]:
    return [
        question(
            "g-1",
            "How many requests per minute does the Pro plan allow?",
            "600 requests per minute",
            start=29,
            end=52,
            answer="600",
        ),
        question(
            "g-2",
            "What does the Free plan allow?",
            "The Free plan allows 60.",
            start=54,
            end=78,
            answer="60 requests",
        ),
        question(
            "g-3",
            "How is situate installed?",
            "pip install situate",
            "install.md",
            32,
            51,
            answer="with pip",
            section="Install",
        ),
        question(
            "g-4",
            "What limit has the Pro plan?",
            "600 requests per minute",
            start=29,
            end=52,
            answer="600",
        ),
        question(
            "g-5",
            "What does the Free plan cap?",
            "The Free plan allows 60.",
            start=54,
            end=78,
            answer="60",
        ),
    ]


@pytest.fixture
def qfile(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    write_questions(path, five_questions())
    return path


def one_line_error(fn, *args, **kwargs) -> str:
    with pytest.raises(SituateError) as e:
        fn(*args, **kwargs)
    message = str(e.value)
    assert "\n" not in message
    return message


# ------------------------------------------------------------------ dangling_reference


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("What does it cover?", 'points at "what does it"'),
        ("According to this section, what is the limit?", 'points at "this section"'),
        ("What are the results mentioned above?", 'points at "mentioned above"'),
        ("What did the authors find about ACE2?", 'points at "the authors"'),
        ("Why is this function slow?", 'points at "this function"'),
        ("¿Qué cubre?", "names nothing it asks about"),
        ("Según el texto, ¿cuál es el límite?", 'points at "el texto"'),
        ("¿Qué describe este apartado?", 'points at "este apartado"'),
        ("¿De qué trata dicha sección?", 'points at "dicha sección"'),
        ("What is it most similar to?", 'points at "what is it"'),
        ("Why were they hospitalised?", 'points at "why were they"'),
        # COVID-QA's human questions: the "it" of "it is hard to ..." names nothing missing
        ("Why is it challenging to estimate the reproduction number?", None),
        ("What does it mean for a pandemic to have a WHO alert level of 6?", None),
        ("When was it determined that the 1918 pandemic was caused by H1N1?", None),
        ("What is the rate limit of the Pro plan?", None),
        ("What is photosynthesis?", None),
        ("How does the Foo API retry in the context of rate limits?", None),
        ("¿Qué versión está disponible en el plan Pro?", None),  # "está" is a verb
        ("¿Cuál es el límite de peticiones del plan Pro?", None),
    ],
)
def test_dangling_reference(text: str, reason: str | None):
    found = DanglingReference.reason(text)
    if reason is None:
        assert found is None
    else:
        assert found is not None and found.startswith(reason)


# ------------------------------------------------------------------ near_duplicate


@pytest.fixture(scope="module")
def minilm() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder()


def test_near_duplicate_keeps_the_first_and_names_it(minilm):
    qs = [
        question("g-1", "What is the rate limit of the Pro plan?"),
        question("g-2", "What is the rate limit for the Pro plan?"),  # cosine 0.995 with g-1
        question("g-3", "How do I install situate with pip?"),  # cosine -0.09 with g-1
        question("g-4", "What rate limit does the Free plan have?"),  # cosine 0.80 with g-1
    ]
    embed = lambda texts, kind="query": minilm.encode(list(texts), kind)  # noqa: E731
    strict = NearDuplicate(embed, threshold=0.95).removals(qs, [])
    assert list(strict) == ["g-2"]
    assert strict["g-2"].startswith("cosine 0.995 >= 0.95 with g-1 ('What is the rate limit of")
    loose = NearDuplicate(embed, threshold=0.8).removals(qs, [])
    assert list(loose) == ["g-2", "g-4"]
    assert "with g-1" in loose["g-4"]  # g-2 was removed: a duplicate of a removed one names g-1


def test_near_duplicate_goes_through_the_embedding_store(minilm, tmp_path: Path):
    settings = {
        "near_duplicate": {"enabled": True, "threshold": 0.95, "store": str(tmp_path / "e.sqlite")}
    }
    (f,) = build_filters(settings, embedder=minilm)
    qs = [
        question("g-1", "What is the rate limit of the Pro plan?"),
        question("g-2", "What is the rate limit for the Pro plan?"),
    ]
    assert list(f.removals(qs, [])) == ["g-2"]
    from situate.stores.sqlite import BlobStore

    assert len(BlobStore(tmp_path / "e.sqlite", "embeddings")) == 2  # one query vector each


# ------------------------------------------------------------------ trivially_lexical

# 5 documents; ln(5 / 1) = 1.609 >= 1.5 > ln(5 / 2) = 0.916: a word in one document is rare
LEXICAL_DOCS = [
    Document("a.md", "The zorblat reactor vents xenon gas at dawn."),
    Document("b.md", "The reactor at the plant was shut down."),
    Document("c.md", "Gas prices rose at dawn."),
    Document("d.md", "The plant hired staff."),
    Document("e.md", "The staff went home."),
]
QUOTE = "The zorblat reactor vents xenon gas at dawn."  # rare: vents, xenon, zorblat


def test_trivially_lexical_counts_the_quotes_rare_words_in_the_question():
    qs = [
        question("g-1", "Why does the zorblat reactor vent xenon?", QUOTE),  # zorblat, xenon: 2/3
        question("g-2", "Which gas leaves the zorblat unit at sunrise?", QUOTE),  # zorblat: 1/3
        question("g-3", "What does the reactor release in the morning?", QUOTE),  # 0/3
    ]
    removed = TriviallyLexical(rare_idf=1.5, max_share=0.6, min_copied=2).removals(qs, LEXICAL_DOCS)
    assert removed == {"g-1": "copies 2 of the quote's 3 rare words (idf >= 1.5): xenon, zorblat"}
    # at 0.7 of the rare words, 2 of 3 (0.667) is not enough
    assert (
        TriviallyLexical(rare_idf=1.5, max_share=0.7, min_copied=2).removals(qs, LEXICAL_DOCS) == {}
    )
    # at idf >= 0.9, reactor, gas and dawn (in 2 documents each) are rare too: g-1 copies 3 of 6
    assert TriviallyLexical(rare_idf=0.9, max_share=0.5, min_copied=2).removals(
        qs, LEXICAL_DOCS
    ) == {"g-1": "copies 3 of the quote's 6 rare words (idf >= 0.9): reactor, xenon, zorblat"}


def test_underspecified_sums_the_idf_of_the_words_a_question_names():
    """Over LEXICAL_DOCS: zorblat and xenon in 1 of 5 documents (ln 5 = 1.609), reactor, gas and
    plant in 2 (ln 2.5 = 0.916), the and at (function words) not counted."""
    qs = [
        question("g-1", "What is the number?"),  # number: in none, counted as in one: 1.609
        question("g-2", "Why does the zorblat reactor vent xenon?"),  # 1.609 * 3 + 0.916
        question("g-3", "What did the plant hire?"),  # plant 0.916, hire 1.609 (in none: "hired")
        question("g-4", "What is it?"),  # names nothing
    ]
    removed = Underspecified(min_idf=2.0).removals(qs, LEXICAL_DOCS)
    assert removed == {
        "g-1": "names too little to be found: number (idf 1.61 in all < 2.0)",
        "g-4": "names too little to be found: nothing (idf 0.00 in all < 2.0)",
    }  # g-3: 0.916 + 1.609 = 2.53 >= 2.0
    assert list(Underspecified(min_idf=2.6).removals(qs, LEXICAL_DOCS)) == ["g-1", "g-3", "g-4"]
    assert list(Underspecified(min_idf=0.5).removals(qs, LEXICAL_DOCS)) == ["g-4"]


# ------------------------------------------------------------------ answerable_without_corpus


class CannedLLM:
    """An LLMProvider whose answers are written in advance, by question."""

    name = "canned"
    model = "canned-1"

    def __init__(self, replies: dict[str, str]):
        self.replies = replies
        self.calls = 0

    def identity(self) -> dict:
        return {"provider": self.name, "model": self.model}

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        assert request.document == ""  # never the passage
        question = request.prompt.split("Question: ", 1)[1].split("\n", 1)[0]
        return LLMResponse(self.replies[question], Usage(input_uncached=20, output=8), self.model)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_answerable_without_corpus_judges_by_the_answers_words_and_stores_replies(tmp_path: Path):
    qs = [
        question("g-1", "What is the capital of France?", answer="Paris"),
        question(
            "g-2", "How many requests per minute does Pro allow?", answer="600 requests per minute"
        ),
        question("g-3", "What does situate chunk with?", answer="the markdown chunker"),
    ]
    llm = CannedLLM(
        {
            "What is the capital of France?": "The capital of France is Paris.",  # 1/1
            # 600, requests, minute ("per" names nothing): 2 of 3 found (0.67 < 0.8)
            "How many requests per minute does Pro allow?": "About 60 requests per minute.",
            "What does situate chunk with?": "I don't know",
        }
    )
    store = str(tmp_path / "answers.sqlite")
    removed = AnswerableWithoutCorpus(llm, min_recall=0.8, store=store).removals(qs, [])
    assert removed == {
        "g-1": "the llm answered without the passage (100% of the answer's words): "
        "'The capital of France is Paris.'"
    }
    assert llm.calls == 3
    assert AnswerableWithoutCorpus(llm, min_recall=0.65, store=store).removals(qs, []).keys() == {
        "g-1",
        "g-2",
    }
    assert llm.calls == 3  # every reply came from the store


class FailingLLM(CannedLLM):
    def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        raise LLMCallFailed("HTTP 529 overloaded", retries=3)


def test_answerable_without_corpus_keeps_a_question_whose_call_failed(tmp_path: Path):
    qs = [question("g-1", "What is the capital of France?", answer="Paris")]
    llm = FailingLLM({})
    store = str(tmp_path / "answers.sqlite")
    assert AnswerableWithoutCorpus(llm, store=store).removals(qs, []) == {}
    assert AnswerableWithoutCorpus(llm, store=store).removals(qs, []) == {}
    assert llm.calls == 2  # a failure is not stored: the next run asks again


# ------------------------------------------------------------------ too_easy


def test_too_easy_removes_what_every_baseline_finds_first(minilm):
    documents = [Document("plans.md", PLANS), Document("install.md", INSTALL)]
    qs = [
        # names the words of plans.md: both baselines rank its window first
        question("g-1", "How many requests per minute does the Pro plan allow?", start=29, end=52),
        # gold in plans.md, but worded like install.md
        question("g-2", "Which pip command installs situate?", start=29, end=52),
    ]
    assert TooEasy(["bm25"], window_words=50, overlap_words=10).removals(qs, documents) == {
        "g-1": "every baseline (bm25) finds the gold at rank 1"
    }
    embed = lambda texts, kind="query": minilm.encode(list(texts), kind)  # noqa: E731
    both = TooEasy(["bm25", "dense"], embed, window_words=50, overlap_words=10)
    assert list(both.removals(qs, documents)) == ["g-1"]


# ------------------------------------------------------------------ building and applying


def test_default_filters_build_from_the_config(minilm, tmp_path: Path):
    conf = OmegaConf.merge(
        {"cache_dir": str(tmp_path)},
        {"filters": OmegaConf.load(CONF_DIR / "questions" / "filters" / "default.yaml")},
    )
    # as `situate questions generate` passes them: the composed DictConfig
    filters = build_filters(conf.filters, embedder=minilm)
    assert [f.name for f in filters] == [
        "dangling_reference",
        "near_duplicate",
        "trivially_lexical",
    ]
    qs = [
        question("g-1", "What is the rate limit of the Pro plan?"),
        question("g-2", "What is the rate limit for the Pro plan?"),
    ]
    assert list(filters[1].removals(qs, [])) == ["g-2"]
    assert (tmp_path / "embeddings.sqlite").is_file()  # ${cache_dir}/embeddings.sqlite
    conf.filters.underspecified.enabled = True
    built = build_filters(conf.filters, embedder=minilm)
    assert [f.name for f in built][:2] == ["dangling_reference", "underspecified"]
    assert built[1].min_idf == 2.0
    conf.filters.underspecified.enabled = False
    conf.filters.too_easy.enabled = True
    assert build_filters(conf.filters, embedder=minilm)[-1].baselines == ["bm25", "dense"]
    settings = OmegaConf.to_container(conf.filters, resolve=True)
    settings["too_easy"]["enabled"] = False
    on = {
        **settings,
        "answerable_without_corpus": {**settings["answerable_without_corpus"], "enabled": True},
    }
    assert "needs an llm" in one_line_error(build_filters, on, embedder=minilm)
    assert "needs the embedder" in one_line_error(build_filters, settings)
    assert "no such filter" in one_line_error(build_filters, {"dangling": {"enabled": True}})
    bad = {"trivially_lexical": {"enabled": True, "rare": 2}}
    assert "questions.filters.trivially_lexical" in one_line_error(build_filters, bad)
    over = {"near_duplicate": {"enabled": True, "threshold": 1.5}}
    assert one_line_error(build_filters, over, embedder=minilm) == (
        "questions.filters.near_duplicate.threshold=1.5 is invalid; use a number in (0, 1]"
    )


def test_apply_filters_runs_in_order_on_what_is_still_kept():
    unresolved = question("g-0", "What is the zorblat yield?", QUOTE).rejected(
        "unresolvable_quote", "no match"
    )
    qs = [
        unresolved,
        question("g-1", "What does it cover?", QUOTE),  # dangling (and lexical-free)
        question("g-2", "Why does this zorblat reactor vent xenon?", QUOTE),  # dangling AND lexical
        question("g-3", "Why does the zorblat reactor vent xenon?", QUOTE),  # lexical
        question("g-4", "What does the reactor release in the morning?", QUOTE),  # kept
    ]
    out, reports = apply_filters(
        qs, LEXICAL_DOCS, [DanglingReference(), TriviallyLexical(1.5), TriviallyLexical(1.5)]
    )
    assert [q.id for q in out] == ["g-0", "g-1", "g-2", "g-3", "g-4"]
    assert out[0] == unresolved  # untouched
    assert [(q.status, q.rejected_by) for q in out[1:]] == [
        ("rejected", "dangling_reference"),
        ("rejected", "dangling_reference"),  # the first filter that removes it is the one named
        ("rejected", "trivially_lexical"),
        ("kept", None),
    ]
    assert [(r.name, r.count) for r in reports] == [
        ("dangling_reference", 2),
        ("trivially_lexical", 1),
        ("trivially_lexical", 0),  # a filter that removes nothing still reports
    ]
    assert reports[0].removed[0] == ("g-1", 'points at "what does it" without naming it')


# ------------------------------------------------------------------ review in the terminal


def test_review_scripted_through_stdin_writes_each_decision_and_resumes(
    qfile, docs_dir, monkeypatch, capsys
):
    monkeypatch.setattr(
        "sys.stdin", io.StringIO("a\nr\ne\nHow many requests may a Free plan send?\ns\n")
    )
    assert review_main("review", [str(qfile), "--documents", str(docs_dir)]) == 0
    out = capsys.readouterr().out
    assert "The Pro plan allows" in out  # the text around the quote, from the parsed document
    assert (
        "1 accepted, 1 edited, 1 rejected, 1 skipped this session; 2 kept question(s) still pending"
        in " ".join(out.split())
    )
    got = {q.id: q for q in read_questions(qfile)}
    assert [got[i].review for i in ("g-1", "g-2", "g-3", "g-4", "g-5")] == [
        "accepted", "rejected", "edited", "pending", "pending",
    ]  # fmt: skip
    assert got["g-3"].q == "How many requests may a Free plan send?"
    assert got["g-3"].original_q == "How is situate installed?"
    # resume: the skipped g-4 comes first, then g-5; "quit" leaves g-5 pending
    monkeypatch.setattr("sys.stdin", io.StringIO("accept\nq\n"))
    review_main("review", [str(qfile)])
    got = {q.id: q for q in read_questions(qfile)}
    assert (got["g-4"].review, got["g-5"].review) == ("accepted", "pending")
    assert "g-4" in capsys.readouterr().out


def test_review_shows_rejected_on_request_and_an_accept_overrules_the_filter(
    tmp_path, monkeypatch, capsys
):
    path = tmp_path / "questions.jsonl"
    qs = five_questions()
    qs[0] = qs[0].rejected("dangling_reference", 'points at "this section" without naming it')
    write_questions(path, qs)
    monkeypatch.setattr("sys.stdin", io.StringIO("a\n"))
    review_main("review", [str(path)])
    assert read_questions(path)[0].review == "pending"  # not shown: the first shown was g-2
    assert read_questions(path)[1].review == "accepted"
    monkeypatch.setattr("sys.stdin", io.StringIO("a\nq\n"))
    review_main("review", [str(path), "--show-rejected"])
    assert "removed by dangling_reference" in capsys.readouterr().out
    first = read_questions(path)[0]
    assert (first.status, first.review, first.rejected_by) == ("kept", "accepted", None)


# ------------------------------------------------------------------ export and import


def test_export_then_import_a_hand_edited_csv_with_bom_and_crlf(qfile, docs_dir, tmp_path, capsys):
    csv_path = tmp_path / "review.csv"
    assert (
        review_main("export", [str(qfile), "--to", str(csv_path), "--documents", str(docs_dir)])
        == 0
    )
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8", newline="")))
    assert list(rows[0]) == [
        "id",
        "q",
        "answer",
        "quote",
        "context",
        "strategy",
        "section",
        "review",
    ]
    assert [r["id"] for r in rows] == ["g-1", "g-2", "g-3", "g-4", "g-5"]
    assert (
        rows[0]["context"]
        == "# Plans The Pro plan allows [600 requests per minute]. The Free plan allows 60."
    )
    assert rows[2]["section"] == "Install"
    # as a spreadsheet saves it: a byte order mark, CRLF, ';' between fields; decisions typed in
    rows[0]["review"] = "accepted"
    rows[1]["review"] = "Rejected"
    rows[2]["q"] = "Which command installs situate?"  # an edit; review left "pending"
    rows[3]["review"] = ""  # blank: pending
    del rows[4]  # a row left out keeps its decision
    buf = io.StringIO()
    writer = csv.DictWriter(buf, list(rows[0]), delimiter=";", lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    csv_path.write_bytes(b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8"))
    assert review_main("import", [str(qfile), "--from", str(csv_path)]) == 0
    assert "1 accepted, 1 edited, 1 pending, 1 rejected read from" in capsys.readouterr().out
    got = read_questions(qfile)
    assert [q.review for q in got] == ["accepted", "rejected", "edited", "pending", "pending"]
    assert got[2].q == "Which command installs situate?"
    assert got[2].original_q == "How is situate installed?"


def test_export_then_import_jsonl(qfile, tmp_path):
    path = tmp_path / "review.jsonl"
    review_main("export", [str(qfile), "--to", str(path)])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0]["context"] == ""  # without --documents, no surrounding text
    rows[4]["review"] = "rejected"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    review_main("import", [str(qfile), "--from", str(path)])
    assert [q.review for q in read_questions(qfile)] == ["pending"] * 4 + ["rejected"]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"id": "g-9", "review": "accepted"}, "review.csv: row 3: unknown id 'g-9'"),
        (
            {"id": "g-2", "review": "yes"},
            "review.csv: row 3: review 'yes' for g-2; write one of pending, accepted, rejected, edited",
        ),
        ({"id": "g-1", "review": "accepted"}, "review.csv: row 3: id g-1 again (first at"),
        (
            {"id": "g-2", "review": "edited"},
            "review.csv: row 3: review 'edited' for g-2 but q is unchanged",
        ),
    ],
)
def test_import_bad_rows_are_one_line_errors(qfile, tmp_path, row, expected):
    path = tmp_path / "review.csv"
    path.write_text(
        f"id,review\r\ng-1,accepted\r\n{row['id']},{row['review']}\r\n", encoding="utf-8"
    )
    before = qfile.read_text()
    assert expected in one_line_error(review_main, "import", [str(qfile), "--from", str(path)])
    assert qfile.read_text() == before  # nothing written


def test_import_without_the_header_columns(qfile, tmp_path):
    path = tmp_path / "review.csv"
    path.write_text("question,decision\nx,accepted\n", encoding="utf-8")
    assert "row 1 (the header) has no id or review column" in one_line_error(
        review_main, "import", [str(qfile), "--from", str(path)]
    )


# ------------------------------------------------------------------ reading the set


def reviewed_set(path: Path) -> None:
    qs = five_questions()
    qs[0] = qs[0].reviewed("accepted")
    qs[1] = qs[1].reviewed("rejected")
    qs[2] = qs[2].reviewed("edited", "Which command installs situate?")
    qs[3] = qs[3].rejected("near_duplicate", "cosine 0.990 >= 0.95 with g-1")
    write_questions(path, qs)  # g-5 pending


def test_generated_set_optional_and_required_review(docs_dir, tmp_path):
    path = tmp_path / "questions.jsonl"
    reviewed_set(path)
    optional = FolderLoader(str(docs_dir), qa=str(path)).load()
    assert [q.qid for q in optional.questions] == ["g-1", "g-3", "g-5"]
    assert optional.questions[0].gold == (Span("plans.md", 29, 52, "span"),)
    assert optional.questions[1].text == "Which command installs situate?"
    assert optional.notes["questions_pending_review"] == 1  # g-5
    assert [d.doc_id for d in optional.documents] == ["install.md", "plans.md"]
    required = FolderLoader(str(docs_dir), qa=str(path), review="required").load()
    assert [q.qid for q in required.questions] == ["g-1", "g-3"]


def test_generated_set_with_nothing_usable_says_how_many_are_pending(docs_dir, tmp_path):
    path = tmp_path / "questions.jsonl"
    write_questions(path, five_questions())
    message = one_line_error(FolderLoader(str(docs_dir), qa=str(path), review="required").load)
    assert message == (
        f"{path}: no usable question of 5 (dataset.review=required; 5 pending review); review "
        f"them with `situate questions review {path}` or set dataset.review=optional"
    )
    assert "dataset.review='sometimes' is invalid" in one_line_error(
        FolderLoader, str(docs_dir), review="sometimes"
    )


def test_generated_set_refuses_gold_of_a_changed_document(docs_dir, tmp_path):
    path = tmp_path / "questions.jsonl"
    write_questions(path, five_questions())
    (docs_dir / "plans.md").write_text(
        "# Plans\n\nPro: 600 requests per minute.\n", encoding="utf-8"
    )
    message = one_line_error(FolderLoader(str(docs_dir), qa=str(path)).load)
    assert "question g-1: plans.md[29:52] is no longer its quote" in message


def test_generated_set_refuses_a_repeated_id_and_an_empty_question(docs_dir, tmp_path):
    """Issue 16, item 4: per_question.csv and paired comparisons join on the id, and an empty
    question was scored (a hit at k=2 of three chunks)."""
    path = tmp_path / "questions.jsonl"
    qs = five_questions()
    write_questions(path, qs)
    # two files pasted together, with a blank line between: g-2 again on line 7
    path.write_text(path.read_text() + "\n" + json.dumps(qs[1].to_json()) + "\n")
    duplicate = (
        f"{path}: line 7: duplicate question id 'g-2' (line 2 has it too); give every question "
        "its own id"
    )
    assert one_line_error(FolderLoader(str(docs_dir), qa=str(path)).load) == duplicate
    assert one_line_error(read_questions, path) == duplicate  # review, export, import too
    qs[4] = replace(qs[4], q="  ")
    write_questions(path, qs)
    assert one_line_error(FolderLoader(str(docs_dir), qa=str(path)).load) == (
        f"{path}: question g-5: empty question text; write the question or remove the record"
    )
    qs[4] = qs[4].rejected("dangling_reference", "no question")  # not run: not refused
    write_questions(path, qs)
    loaded = FolderLoader(str(docs_dir), qa=str(path)).load()
    assert [q.qid for q in loaded.questions] == ["g-1", "g-2", "g-3", "g-4"]


@pytest.mark.slow
def test_run_on_a_generated_set_end_to_end(docs_dir, tmp_path):
    path = tmp_path / "questions.jsonl"
    reviewed_set(path)
    proc = run_cli(
        "run", "dataset=generated", f"dataset.path={docs_dir}", f"dataset.qa={path}",
        "dataset.review=required", "chunker=markdown", "chunker.min_words=1", "context=none",
        "embedder=minilm_onnx", "tracking=none", f"output_dir={tmp_path / 'out'}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (result,) = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("result.json")]
    assert result["metrics"]["n_questions"] == 2
    assert result["metrics"]["n_documents"] == 2
    assert result["metrics"]["questions_pending_review"] == 1  # g-5, left out
    # two documents of one chunk each: each question's gold chunk is ranked first
    assert result["metrics"]["mrr"] == 1.0
    rows = list(csv.DictReader(next((tmp_path / "out").rglob("per_question.csv")).open()))
    assert [(r["qid"], r["gold"]) for r in rows] == [
        ("g-1", "plans.md:29-52"),
        ("g-3", "install.md:32-51"),
    ]


@pytest.mark.slow
def test_cli_review_from_a_pipe_then_a_bad_import_is_one_line(qfile, tmp_path):
    proc = run_cli("questions", "review", str(qfile), input="r\na\nq\n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "1 accepted, 1 rejected this session; 3 kept question(s) still pending" in " ".join(
        proc.stdout.split()
    )
    assert [q.review for q in read_questions(qfile)][:3] == ["rejected", "accepted", "pending"]
    bad = tmp_path / "review.csv"
    bad.write_text("id,review\ng-1,maybe\n", encoding="utf-8")
    proc = run_cli("questions", "import", str(qfile), "--from", str(bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        f"error: {bad}: row 2: review 'maybe' for g-1; write one of pending, accepted, rejected, "
        "edited"
    )


def test_export_context_only_where_the_span_still_holds_the_quote(qfile, docs_dir, tmp_path):
    (docs_dir / "plans.md").write_text(
        "# Plans\n\nPro: 600 requests per minute.\n", encoding="utf-8"
    )
    path = tmp_path / "review.jsonl"
    review_main("export", [str(qfile), "--to", str(path), "--documents", str(docs_dir)])
    contexts = {r["id"]: r["context"] for r in map(json.loads, path.read_text().splitlines())}
    assert contexts["g-1"] == ""  # plans.md[29:52] is no longer the quote: no misplaced highlight
    assert contexts["g-3"] == (
        "# Install Install situate with [pip install situate], then run situate chunks."
    )
