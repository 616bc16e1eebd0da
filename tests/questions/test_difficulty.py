"""Difficulty of a question, measured by hand on a tiny corpus; the caps; the quantile-bin match
of a human sample; and ``situate questions generate`` selecting to a small human qa.json."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from situate.datasets.generated import GeneratedQuestion, Passage, Provenance, read_questions
from situate.errors import SituateError
from situate.questions.difficulty.matching import (
    bin_distance,
    bin_edges,
    bin_of,
    match_bins,
    matched_size,
)
from situate.questions.difficulty.measures import Difficulty, DifficultyMeter, content_words
from situate.questions.difficulty.report import describe
from situate.questions.difficulty.selection import DifficultyTarget, target_set
from situate.records import Document, Span

DOCS = [
    Document("a.txt", "zebra zebra zebra lion"),
    Document("b.txt", "zebra giraffe elephant savanna grassland"),
    Document("c.txt", "penguin ice ocean fish cold"),
]


def whole(doc: Document) -> tuple[Span, ...]:
    return (Span(doc.doc_id, 0, len(doc.text)),)


def fake_embed(texts, kind="query"):
    """Counts of zebra, penguin and lion (and a small constant): a dense baseline by hand."""
    return np.array(
        [[t.count("zebra"), t.count("penguin"), t.count("lion"), 1e-3] for t in texts], float
    )


def meter(**kw) -> DifficultyMeter:
    options = dict(passage_words=8, baselines=["bm25", "dense"], embed=fake_embed, window_words=50)
    return DifficultyMeter(DOCS, **{**options, **kw})


def test_content_words_leave_out_stop_and_question_words():
    assert content_words("Which zebra eats the grass, and which zebra sleeps?") == [
        "zebra", "eats", "grass", "sleeps",
    ]  # fmt: skip


def test_overlap_and_ranks_by_hand():
    (d,) = meter().measure([("Which zebra eats grass?", whole(DOCS[1]))])
    # content words: zebra, eats, grass; the gold passage (b.txt) holds zebra: 1 of 3
    assert d.overlap == pytest.approx(1 / 3)
    # idf over the 3 windows (one per document): zebra in 2 -> ln(4/3) + 1; eats and grass in
    # none -> ln(4) + 1 each
    zebra, unseen = math.log(4 / 3) + 1, math.log(4) + 1
    assert d.overlap_idf == pytest.approx(zebra / (zebra + 2 * unseen))
    # BM25: only "zebra" matches; a.txt has it 3 times in 4 words, b.txt once in 5: b is second
    assert d.lexical_rank == 2
    # dense: the question is (1, 0, 0); b.txt (1, 0, 0) has cosine 1, a.txt (3, 0, 1) 0.95
    assert d.dense_rank == 1
    assert d.rank_depth == 3  # every window was read
    both = meter().measure(
        [("penguin in the cold ocean", whole(DOCS[2])), ("lion zebra", whole(DOCS[0]))]
    )
    assert [(x.overlap, x.lexical_rank, x.dense_rank) for x in both] == [(1.0, 1, 1), (1.0, 1, 1)]


def test_the_windows_are_embedded_and_indexed_once_per_meter_with_a_bar_for_the_windows():
    calls = []

    def counted(texts, kind="query", progress=None):
        calls.append((kind, len(texts), progress is not None))
        if progress is not None:
            progress(len(texts), len(texts))
        return fake_embed(texts, kind)

    m = meter(embed=counted)
    sample = m.measure([("Which zebra eats grass?", whole(DOCS[1]))])  # the human sample
    candidates = m.measure(
        [("penguin in the cold ocean", whole(DOCS[2])), ("Which zebra eats grass?", whole(DOCS[1]))]
    )
    # the three windows once, told to the bar; each measure's questions without one
    assert calls == [("query", 1, False), ("document", 3, True), ("query", 2, False)]
    assert m.lexical_engine() is m.lexical_engine()  # one BM25 index for both measures
    assert candidates[1] == sample[0]  # the same question ranks the same either way
    assert (candidates[0].lexical_rank, candidates[0].dense_rank) == (1, 1)


def test_a_gold_no_baseline_reaches_has_no_lexical_rank_and_counts_beyond_the_depth():
    (d,) = meter(baselines=["bm25"], embed=None).measure([("zebra", whole(DOCS[2]))])
    assert d.lexical_rank is None and d.dense_rank is None and d.overlap == 0.0
    assert d.value("lexical_rank") == 4  # depth 3 + 1
    assert math.isnan(d.value("dense_rank"))
    with pytest.raises(SituateError, match="dense baseline needs the run's embedder"):
        DifficultyMeter(DOCS, baselines=["dense"])


def test_lexical_windows_of_their_own_tell_a_question_spread_over_its_passage():
    # "zebra moon": both words in d.txt, 7 words apart; the gold is the word "lion"
    spread = Document("d.txt", "lion zebra hunt plain dusk night owl moon star sky")
    other = Document("e.txt", "zebra mane stripes")
    gold = (Span("d.txt", 0, 4),)
    options = dict(passage_words=8, baselines=["bm25", "dense"], embed=fake_embed, window_words=50)
    (coarse,) = DifficultyMeter([spread, other], **options).measure([("zebra moon", gold)])
    # one window a document: d.txt holds both words, ranked first
    assert coarse.lexical_rank == 1 and coarse.rank_depth == 2
    fine = DifficultyMeter([spread, other], lexical_window_words=5, **options)
    # 5-word windows sharing 1 (a fifth): d.txt [0, 5) [4, 9) [8, 10), e.txt [0, 3)
    assert [(c.doc_id, c.text) for c in fine.lexical_chunks] == [
        ("d.txt", "lion zebra hunt plain dusk"),
        ("d.txt", "dusk night owl moon star"),
        ("d.txt", "star sky"),
        ("e.txt", "zebra mane stripes"),
    ]
    assert fine.windows == "windows of 50 words (40 shared); BM25 over 5 words (1 shared)"
    assert DifficultyMeter([spread, other], **options).windows == "windows of 50 words (40 shared)"
    (d,) = fine.measure([("zebra moon", gold)])
    # BM25 (k1 1.5, b 0.75, mean length 3.75): idf(moon) = ln(1 + 3.5 / 1.5) = 1.20 in the
    # 5-word window of "moon" -> 1.20 x 2.5 / 2.875 = 1.04; idf(zebra) = ln 2 = 0.69 in the
    # 3 words of e.txt -> 0.69 x 2.5 / 2.275 = 0.76, in the gold's 5 words -> 0.60: third
    assert d.lexical_rank == 3 and d.rank_depth == 4
    # the dense rank keeps the windows of window_words (two here): the same as before
    assert d.dense_rank == coarse.dense_rank
    for bad in (3, True, 7.5):
        with pytest.raises(SituateError, match="lexical_window_words"):
            DifficultyMeter([spread, other], lexical_window_words=bad, **options)


def test_title_gain_is_how_far_the_documents_title_lifts_the_gold_by_hand():
    herds = Document("g.txt", "zebra lion", title="Zebra herds")
    savanna = Document("f.txt", "zebra grass zebra lion", title="Savanna")
    options = dict(passage_words=8, baselines=["bm25"], window_words=50)
    m = DifficultyMeter([savanna, herds], title_gain=True, **options)
    asked = m.measure([("zebra", whole(herds)), ("zebra", whole(savanna))])
    # BM25 of "zebra" (the same idf in both): k1 1.2, b 0.75, term part tf (k1 + 1) / (tf + k1
    # (1 - b + b len / mean len)). Plain (lengths 4 and 2, mean 3): f.txt 2 x 2.2 / 3.5 = 1.26
    # above g.txt 2.2 / 1.9 = 1.16. Titled ("Savanna\n\n..." 5 words, "Zebra herds\n\n..." 4,
    # mean 4.5): f.txt 4.4 / 3.3 = 1.33 below g.txt 4.4 / 3.1 = 1.42.
    assert [d.lexical_rank for d in asked] == [2, 1]
    # g.txt's question comes up from 2 to 1: log2 2 - log2 1; f.txt's goes down from 1 to 2
    assert [d.title_gain for d in asked] == [1.0, -1.0]
    assert Difficulty.from_json(asked[1].to_json()) == asked[1]
    assert asked[0].value("title_gain") == 1.0
    (unmeasured,) = DifficultyMeter([savanna, herds], **options).measure([("zebra", whole(herds))])
    assert unmeasured.title_gain is None and math.isnan(unmeasured.value("title_gain"))
    assert m.titled_engine() is m.titled_engine()  # one more index, built once
    with pytest.raises(SituateError, match="title_gain is a BM25 rank"):
        DifficultyMeter([savanna], baselines=["dense"], embed=fake_embed, title_gain=True)


def test_title_gain_is_measured_where_match_on_names_it(tmp_path: Path):
    from situate.questions.difficulty.selection import build

    sample = tmp_path / "qa.json"
    sample.write_text(json.dumps([{"q": "Which zebra?", "gold": ["zebra zebra zebra lion"]}]))
    settings = {"baselines": ["bm25"], "match": str(sample), "match_on": ["title_gain"]}
    m, target = build(settings, DOCS)
    assert m.title_gain and target.match_on == ["title_gain"]
    assert target.human[0].title_gain == 0.0  # no titles: the file names, in no question
    m, _ = build({**settings, "match_on": ["lexical_rank"]}, DOCS)
    assert not m.title_gain


def generated(qid: str, overlap: float, lexical: int | None, dense: int = 1) -> GeneratedQuestion:
    d = Difficulty(overlap, overlap, lexical, dense, 100)
    return GeneratedQuestion(
        id=qid, q=f"question {qid}?", answer="a", quote="q", gold=(Span("a.txt", 0, 4),),
        strategy="factual", passage=Passage("a.txt", 0, 4), provenance=Provenance("extractive"),
        difficulty=d.to_json(),
    )  # fmt: skip


def test_caps_remove_what_is_outside_them_then_keep_the_first_target():
    questions = [
        generated("easy", 0.9, 1),  # over max_overlap
        generated("top1", 0.3, 1),  # under min_lexical_rank
        generated("hard1", 0.4, 3),
        generated("hard2", 0.2, None),  # beyond the depth: rank 101
        generated("hard3", 0.5, 2),  # on both limits: kept
    ]
    target = DifficultyTarget({"max_overlap": 0.5, "min_lexical_rank": 2})
    removed = dict(target.select(questions, target=2).report.removed)
    assert removed == {
        "easy": "overlap 0.9 outside questions.difficulty.max_overlap=0.5",
        "top1": "lexical_rank 1 outside questions.difficulty.min_lexical_rank=2",
        "hard3": "over questions.target=2 (the first 2 are kept)",
    }
    with pytest.raises(SituateError, match="max_overlapp: no such cap"):
        DifficultyTarget({"max_overlapp": 0.5})


def test_bins_at_the_human_quantiles_merge_repeated_edges():
    ranks = [1] * 16 + [2] * 8 + [5] * 8 + [50] * 8
    # linear quantiles of the 40 sorted ranks: 0.25 -> 1, 0.5 -> 2, 0.75 -> 5
    assert bin_edges(ranks, 4) == [1.0, 2.0, 5.0]
    assert bin_edges([1] * 30 + [9] * 10, 4) == [1.0, 3.0]  # 0.25, 0.5 both 1; 0.75 -> 1 + 8 * 0.25
    assert [bin_of(r, [1.0, 2.0, 5.0]) for r in (1, 2, 3, 5, 6, 99)] == [0, 1, 2, 2, 3, 3]


def test_matching_a_human_sample_reproduces_its_quantiles():
    human = [Difficulty(i / 40, i / 40, 1 + i % 4, 1, 100) for i in range(40)]  # uniform 0-0.975
    rng = random.Random(0)
    # candidates three times easier than people: overlap sqrt(u) piles up near 1
    candidates = [
        (f"c{i}", Difficulty(math.sqrt(rng.random()), 0.5, 1 + rng.randrange(6), 1, 100))
        for i in range(400)
    ]
    kept, left, bins = match_bins(candidates, human, 40, ["overlap"], 4)
    assert len(kept) == 40 and len(left) == 360
    chosen = {qid: d for qid, d in candidates if qid in set(kept)}
    human_figures, kept_figures = describe(human), describe(list(chosen.values()))
    # within a bin the candidates keep their own skew: quartiles within 0.06 of the human ones
    for a, b in zip(human_figures["overlap"], kept_figures["overlap"], strict=True):
        assert abs(a - b) <= 0.06
    assert [b.quota for b in bins] == [10, 10, 10, 10]  # a quarter each
    joint = match_bins(candidates, human, 40, ["overlap", "lexical_rank"], 2)[2]
    assert [b.quota for b in joint] == [10, 10, 10, 10]  # 2 x 2 cells: ranks 1-2 / 3-4 halves
    assert all(b.kept == b.quota for b in bins)
    unmatched = describe([d for _, d in candidates])["overlap"][1]
    assert unmatched > 0.65  # the median overlap before matching, vs the human 0.49


def test_a_bin_short_of_candidates_keeps_what_it_has_and_says_so():
    human = [Difficulty(v, v, 1, 1, 100) for v in (0.1, 0.2, 0.8, 0.9)]
    candidates = [(f"c{i}", Difficulty(0.95, 0.95, 1, 1, 100)) for i in range(10)]
    kept, left, bins = match_bins(candidates, human, 4, ["overlap"], 2)
    assert len(kept) == 2  # the low bin (overlap <= 0.5) has no candidate
    assert [(b.label, b.quota, b.kept) for b in bins] == [
        ("overlap <= 0.50", 2, 0), ("overlap > 0.50", 2, 2),
    ]  # fmt: skip
    assert "is full: 2 of 4" in next(iter(left.values()))


def test_a_match_short_of_hard_candidates_shrinks_the_set_instead_of_filling_easy_bins():
    # half the human sample is hard (overlap <= 0.5), but only 3 candidates are; 20 are easy
    human = [Difficulty(v, v, 1, 1, 100) for v in (0.1, 0.2, 0.8, 0.9)]
    candidates = [(f"h{i}", Difficulty(0.3, 0.3, 1, 1, 100)) for i in range(3)]
    candidates += [(f"e{i}", Difficulty(0.95, 0.95, 1, 1, 100)) for i in range(20)]
    # tolerance 0.1, target 10: n = 10 wants 5 + 5 (short 2 > 1.0); n = 9: 5 + 4 (short 2 >
    # 0.9), ..., n = 7: 4 + 3 (short 1 > 0.7), n = 6: 3 + 3 (short 0): 6 kept, 3 of each
    kept, left, bins = match_bins(candidates, human, 10, ["overlap"], 2, tolerance=0.1)
    assert sorted(kept) == ["e0", "e1", "e2", "h0", "h1", "h2"]
    assert [(b.quota, b.kept) for b in bins] == [(3, 3), (3, 3)]
    assert "is full: 3 of 6" in left["e3"]
    # tolerance 1 fills what it can of the target: 3 hard, 5 easy (the old behaviour)
    kept, _, bins = match_bins(candidates, human, 10, ["overlap"], 2, tolerance=1)
    assert len(kept) == 8 and [(b.quota, b.kept) for b in bins] == [(5, 3), (5, 5)]
    # tolerance 0.15: n = 10 is short 2 > 1.5, n = 9 (5 + 4) 2 > 1.35, n = 8 (4 + 4) 1 <= 1.2
    assert len(match_bins(candidates, human, 10, ["overlap"], 2, tolerance=0.15)[0]) == 7
    assert matched_size({0: 0, 1: 20}, {0: 0.5, 1: 0.5}, 10, 0.1) == 0  # no hard one at all
    # total variation: kept 3 + 5 of 8 against the sample's 2 + 2 of 4: |3/8 - 1/2| = 1/8
    assert bin_distance(bins) == 0.125
    with pytest.raises(SituateError, match="tolerance=2 must be a number from 0 to 1"):
        DifficultyTarget({}, human, tolerance=2)


# -- end to end ---------------------------------------------------------------------------------

FINANCE = (
    "# Acme Annual Report\n\n"
    "Total revenues were $5.2 billion in 2021, up 12% from 2020.\n\n"
    "Cash and cash equivalents totaled $1,245 million and $697 million at December 31, 2021 "
    "and 2020, respectively.\n\n"
    "Gross margin decreased 3.5 percent to 41.2 percent in fiscal 2022 due to higher freight "
    "costs.\n\n"
    "In 2018, the company acquired Widget Corp for $310 million in cash.\n"
)
VIRUS = (
    "# Coronavirus Notes\n\n"
    "The novel coronavirus was first identified in December 2019 in Wuhan, China.\n\n"
    "About 80% of patients had mild symptoms and recovered without treatment.\n\n"
    "The trial enrolled 120 patients across four regional hospitals last winter.\n\n"
    "The virus enters airway cells through the ACE2 receptor on their surface.\n"
)
HUMAN = [
    {"q": "What were Acme's sales last year?", "gold": ["Total revenues were $5.2 billion"]},
    {"q": "Where did the outbreak start?", "gold": ["first identified in December 2019 in Wuhan"]},
    {"q": "How many people took part in the study?", "gold": ["enrolled 120 patients"]},
    {"q": "Which company did Acme buy?", "gold": ["acquired Widget Corp"]},
]


def test_generate_selects_to_a_small_human_sample_and_reports_both(tmp_path: Path, capsys):
    from situate.commands.questions_generate import main

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.md").write_text(FINANCE, encoding="utf-8")
    (docs / "virus.md").write_text(VIRUS, encoding="utf-8")
    human = tmp_path / "human" / "qa.json"
    human.parent.mkdir()
    human.write_text(json.dumps(HUMAN), encoding="utf-8")
    out = tmp_path / "out" / "questions.jsonl"
    args = [
        "dataset=folder", f"dataset.path={docs}", f"output_dir={tmp_path / 'out'}",
        "tracking=none", "question_generator=extractive", "questions=factual",
        "questions.passage_words=14", "questions.target=3",
        "questions.filters.near_duplicate.enabled=false",
        "questions.filters.trivially_lexical.enabled=false",
        "questions.difficulty.baselines=[bm25]", "questions.difficulty.match_on=[overlap]",
        "questions.difficulty.bins=2", f"questions.difficulty.match={human}", "--out", str(out),
    ]  # fmt: skip
    # three of the four human questions share no word with their passage, no candidate does:
    # matched within a tolerance of 0.1, no set is that hard, and the command says so
    assert main("generate", [*args[:-2], "questions.difficulty.tolerance=0.1", *args[-2:]]) == 0
    assert not [q for q in read_questions(out) if q.status == "kept"]
    assert "matched 0 of the 3 asked" in " ".join(capsys.readouterr().out.split())
    # the default (tolerance 1) fills what it can: the one bin the candidates reach
    assert main("generate", args) == 0
    questions = read_questions(out)
    # target 3 x oversample 3 = 9 requests; the documents hold 8 passages, so the first passage
    # is asked a second question (index 1)
    assert len(questions) == 9
    places = [(q.passage.path, q.passage.start) for q in questions]
    assert places.count(places[0]) == 2 and len(set(places)) == 8
    measured = [q for q in questions if q.difficulty is not None]
    assert measured and all(
        set(q.difficulty)
        == {
            "overlap",
            "overlap_idf",
            "lexical_rank",
            "dense_rank",
            "rank_depth",
            "form_shift",
            "title_gain",
        }
        for q in measured
    )
    kept = [q for q in questions if q.status == "kept"]
    assert 1 <= len(kept) <= 3
    by_difficulty = [q for q in questions if q.rejected_by == "difficulty"]
    assert by_difficulty and all("bin" in q.reason for q in by_difficulty)
    printed = capsys.readouterr().out
    assert "human sample" in printed and "gold is the lexical top 1" in printed
    report = (out.parent / "questions.difficulty.md").read_text(encoding="utf-8")
    assert "| | kept | candidates | human sample |" in report
    assert "## Quantile bins of the human sample" in report
    figures = json.loads((out.parent / "questions.difficulty.json").read_text(encoding="utf-8"))
    assert figures["human sample"]["questions"] == 4
    # the ranks say what they were measured over (the default windows)
    assert figures["windows"] == "windows of 200 words (40 shared)"
    assert "over windows of 200 words (40 shared)." in report
    # every kept question is in the one bin holding a quarter of the human sample: 75% apart
    assert figures["bin_distance"] == 0.75
    assert "differ from the human sample's by 75%" in " ".join(printed.split())
    assert sum(b["quota"] for b in figures["bins"]) == 3
    # matched on the title's pull: measured on every candidate and human question, binned, told
    titled = [a.replace("match_on=[overlap]", "match_on=[title_gain]") for a in args]
    assert main("generate", titled) == 0
    measured = [q for q in read_questions(out) if q.difficulty is not None]
    assert measured and all(isinstance(q.difficulty["title_gain"], float) for q in measured)
    report = (out.parent / "questions.difficulty.md").read_text(encoding="utf-8")
    assert "title_gain: median (q1-q3)" in report and "| title_gain " in report


def test_questions_matched_composes_the_recipe_and_asks_for_a_sample(tmp_path: Path):
    from hydra.utils import instantiate

    from situate.commands.questions_generate import main
    from situate.config.compose import compose

    cfg = compose(["questions=matched", "question_generator=extractive_matched"])
    d = cfg.questions.difficulty
    assert (list(d.match_on), d.bins, d.lexical_window_words, d.tolerance, d.oversample) == (
        ["lexical_rank", "dense_rank", "title_gain"], 3, 64, 0.1, 10,
    )  # fmt: skip
    assert dict(cfg.questions.mix) == {"factual": 1.0, "context_dependent": 0, "paraphrase": 0}
    generator = instantiate(cfg.question_generator)
    assert (generator.wording, generator.topic_window, generator.variants) == ("passage", 3000, 4)
    assert generator.subjects is True
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "virus.md").write_text(VIRUS, encoding="utf-8")
    args = [
        "dataset=folder", f"dataset.path={docs}", f"output_dir={tmp_path / 'out'}",
        "tracking=none", "questions=matched", "question_generator=extractive_matched",
        "--out", str(tmp_path / "out" / "questions.jsonl"),
    ]  # fmt: skip
    # no sample: one line (the command prints it), before any document is read or question
    # written
    with pytest.raises(SituateError) as error:
        main("generate", args)
    assert str(error.value) == (
        "questions=matched selects questions like 20-40 of your own: set "
        "questions.difficulty.match=<your qa.json> (questions with their gold as quotes, pages "
        "or chunk ids; docs/questions.md)"
    )
    assert not (tmp_path / "out").exists()
    with pytest.raises(SituateError, match="match_required='yes' must be true or false"):
        target_set({"match_required": "yes"})
