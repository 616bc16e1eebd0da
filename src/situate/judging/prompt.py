"""The judge's prompt (in our own words) and how a grade is read from its answer.

The scale is TREC's graded one as RAG evaluators use it: 0 = unrelated, 1 = related but does not
answer, 2 = partly answers, 3 = answers. The answer is the digit alone (``max_tokens`` 1 on an
API: one token), so judging a pair costs its prompt and one output token.
"""

from __future__ import annotations

import re

from situate.stores.keys import content_hash

SCALE = {
    0: "unrelated to the question",
    1: "related to the question, but does not answer it",
    2: "partly answers the question",
    3: "answers the question",
}

TEMPLATE = """\
You are grading the results of a search engine. Read the question and the passage below, then \
say how well the passage answers the question, on this scale:
{scale}
<question>
{question}
</question>
<passage>
{passage}
</passage>
Judge the passage alone, as written. Reply with the grade only: one digit, 0, 1, 2 or 3."""

_GRADE = re.compile(r"[0-3]")


def render(question: str, passage: str) -> str:
    """The judge prompt for one (question, chunk) pair."""
    scale = "\n".join(f"{g} = {meaning}" for g, meaning in SCALE.items())
    return TEMPLATE.format(scale=scale, question=question.strip(), passage=passage.strip())


def prompt_hash(max_tokens: int, answer_prefix: str) -> str:
    """What changes an answer besides the model: the template, the scale, the answer's start and
    length (part of every judgment's store key)."""
    return content_hash("judge-prompt", TEMPLATE, SCALE, max_tokens, answer_prefix)


def parse_grade(text: str, answer_prefix: str = "") -> int | None:
    """The first digit 0-3 of the answer after ``answer_prefix``; None when it holds none."""
    answer = text[len(answer_prefix) :] if text.startswith(answer_prefix) else text
    found = _GRADE.search(answer)
    return int(found.group()) if found else None
