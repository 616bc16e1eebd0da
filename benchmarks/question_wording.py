"""Where do a question's words come from? Human COVID-QA questions against generated ones.

    .venv/bin/python benchmarks/question_wording.py [--papers 30] [--target 300]
        [--generator NAME="KEY=VALUE ..."] ... [--name question_wording]

For each question with span gold over the first ``--papers`` COVID-QA papers (the human ones,
then each generator's, written in process by ``situate.questions.generate.build_requests`` and
the generator's ``propose``, quotes resolved, no filters), its content words (three letters or
more, not an English stop word or a question word) are placed by where they first occur, nearest
first: in the answer sentence (the sentence of the document holding the answer's start), within
75 whitespace tokens of the answer, within 150, elsewhere in the paper, nowhere in the paper. A
word matches a word of the text when both reduce to the same crude stem (casefolded, a plural or
"-ed"/"-ing"/"-ion" ending cut), so "infected" finds "infection".

Also reported: the question's words; the median IDF of its content words against that of its
answer sentence's content words (IDF over 200-word windows of the papers, as BM25 sees chunks);
the share of the sentence's three rarest words (highest IDF) the question keeps; and the share of
a question's words that are the answer sentence's rarest (top third by IDF). Prints a table and
writes outputs/bench/NAME.json. A generator's spec is ``name=key=value key=value`` (keyword
arguments of :class:`situate.questions.extractive.ExtractiveGenerator`).
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
from collections import Counter

from common import OUT, write_json
from synthetic_vs_human import COVID

from situate.words.stopwords import ENGLISH

WORD = re.compile(r"[^\W\d_][\w-]*", re.U)
STOP = ENGLISH | {"use", "used"}  # the rule's stop words, and two verbs of method
BANDS = ("sentence", "within_75", "within_150", "paper", "nowhere")
SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?](?!\S)|\n|$)")


def stem(word: str) -> str:
    w = word.casefold()
    for suffix in ("ations", "ation", "ions", "ion", "ing", "ies", "ed", "es", "s"):
        if len(w) - len(suffix) >= 4 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def content(text: str) -> list[str]:
    return [
        w for w in (m.group().casefold() for m in WORD.finditer(text))
        if len(w) >= 3 and w not in STOP
    ]  # fmt: skip


def sentence_at(text: str, position: int) -> tuple[int, int]:
    for m in SENTENCE.finditer(text):
        if m.start() <= position < max(m.end(), m.start() + 1):
            return m.start(), m.end()
    return position, position + 1


def token_window(text: str, start: int, end: int, tokens: int) -> str:
    """``tokens`` whitespace tokens either side of [start, end), the span itself included."""
    before = text[:start].split()
    after = text[end:].split()
    return " ".join(before[-tokens:]) + " " + text[start:end] + " " + " ".join(after[:tokens])


class Idf:
    """IDF of stems over 200-word windows (40 shared) of the papers."""

    def __init__(self, texts: list[str], window: int = 200, step: int = 160) -> None:
        df: Counter = Counter()
        n = 0
        for text in texts:
            words = text.split()
            for i in range(0, max(len(words) - window + step, 1), step):
                df.update({stem(w) for w in content(" ".join(words[i : i + window]))})
                n += 1
        self.df, self.n = df, n

    def __call__(self, word_stem: str) -> float:
        return math.log((self.n + 1) / (self.df.get(word_stem, 0) + 0.5))


def placement(question: str, text: str, start: int, end: int) -> Counter:
    s0, s1 = sentence_at(text, start)
    areas = [
        {stem(w) for w in content(text[s0:s1])},
        {stem(w) for w in content(token_window(text, start, end, 75))},
        {stem(w) for w in content(token_window(text, start, end, 150))},
        {stem(w) for w in content(text)},
    ]
    bands: Counter = Counter()
    for w in {stem(w) for w in content(question)}:
        band = next((BANDS[i] for i, area in enumerate(areas) if w in area), "nowhere")
        bands[band] += 1
    return bands


def rarity(question: str, text: str, start: int, idf: Idf) -> dict:
    s0, s1 = sentence_at(text, start)
    sentence = sorted({stem(w) for w in content(text[s0:s1])}, key=idf, reverse=True)
    asked = {stem(w) for w in content(question)}
    rare = set(sentence[: max(1, len(sentence) // 3)])
    return {
        "q_idf": statistics.median([idf(w) for w in asked]) if asked else 0.0,
        "s_idf": statistics.median([idf(w) for w in sentence]) if sentence else 0.0,
        "top3_kept": len(asked & set(sentence[:3])) / max(1, min(3, len(sentence))),
        "rare_share": len(asked & rare) / max(1, len(asked)),
    }


def profile(items: list[tuple[str, str, int, int]], idf: Idf) -> dict:
    """items: (question, paper text, answer start, answer end)."""
    bands: Counter = Counter()
    rows = []
    for question, text, start, end in items:
        bands.update(placement(question, text, start, end))
        rows.append({**rarity(question, text, start, idf), "words": len(question.split())})
    total = sum(bands.values()) or 1
    med = {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]} if rows else {}
    mean = {k: round(statistics.fmean(r[k] for r in rows), 3) for k in rows[0]} if rows else {}
    return {
        "questions": len(items),
        "content_words_per_question": round(total / max(1, len(items)), 2),
        "bands": {b: round(bands[b] / total, 3) for b in BANDS},
        "median": med,
        "mean": mean,
    }


def human_items(papers: int) -> tuple[list, dict[str, str], list]:
    from situate.datasets.squad import SquadLoader

    corpus = SquadLoader(str(COVID), max_documents=papers).load()
    texts = {d.doc_id: d.text for d in corpus.documents}
    items = [
        (q.text, texts[q.gold[0].doc_id], q.gold[0].start, q.gold[0].end)
        for q in corpus.questions
        if q.gold
    ]
    return items, texts, corpus.documents


def generated_items(documents, target: int, options: dict) -> tuple[list, list[str]]:
    from situate.questions.extractive import ExtractiveGenerator
    from situate.questions.generate import build_requests, resolve

    requests = build_requests(documents, target, {"factual": 1.0})
    texts = {d.doc_id: d.text for d in documents}
    items, examples = [], []
    for proposal in ExtractiveGenerator(**options).propose(requests):
        candidate = resolve(proposal)
        if candidate.status != "kept" or not candidate.gold:
            continue
        span = candidate.gold[0]
        text = texts[span.doc_id]
        at = text.find(candidate.answer, span.start, span.end)
        start = at if at >= 0 else span.start
        items.append((candidate.q, text, start, start + len(candidate.answer)))
        examples.append(f"{candidate.q} -> {candidate.answer}")
    return items, examples


def parse_options(spec: str) -> tuple[str, dict]:
    name, _, rest = spec.partition("=")
    options = {}
    for pair in rest.split():
        key, _, value = pair.partition("=")
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    return name, options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=30)
    parser.add_argument("--target", type=int, default=300)
    parser.add_argument("--generator", action="append", default=None)
    parser.add_argument("--name", default="question_wording")
    ns = parser.parse_args()
    items, texts, documents = human_items(ns.papers)
    idf = Idf(list(texts.values()))
    report = {"papers": ns.papers, "sets": {"human": profile(items, idf)}, "examples": {}}
    for spec in ns.generator or ["extractive="]:
        name, options = parse_options(spec)
        generated, examples = generated_items(documents, ns.target, options)
        report["sets"][name] = profile(generated, idf)
        report["examples"][name] = examples[:12]
    write_json(ns.name, report, OUT)
    print(table(report))


def table(report: dict) -> str:
    lines = [
        "| set (questions) | words | content words | "
        + " | ".join(BANDS)
        + " | median IDF q / sentence | sentence's 3 rarest kept | share rare |",
        "|---|---|---|" + "---|" * len(BANDS) + "---|---|---|",
    ]
    for name, s in report["sets"].items():
        b = s["bands"]
        m, a = s["median"], s["mean"]
        lines.append(
            f"| {name} ({s['questions']}) | {m['words']:.0f} | {s['content_words_per_question']} | "
            + " | ".join(f"{b[k]:.0%}" for k in BANDS)
            + f" | {m['q_idf']:.2f} / {m['s_idf']:.2f} | {a['top3_kept']:.0%} | "
            f"{a['rare_share']:.0%} |"
        )
    for name, examples in report["examples"].items():
        lines += ["", f"{name}:"] + [f"  {e}" for e in examples]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
