"""The question generator's prompts (in our own words), one per strategy, and how an answer is read.

Every prompt shows the passage in a ``<passage>`` block and asks for one JSON object
``{"question", "answer", "quote"}``, the quote copied character for character from the passage
(the command finds it in the document: :mod:`situate.datasets.quotes`). Strategies:

- ``factual``: a question the passage answers;
- ``context_dependent``: the whole document comes first, as a cached prefix (``LLMRequest.document``,
  the same block for every passage of the document, so the provider's prompt cache serves it);
  the question must name what it asks about with a name, product, period or section that appears
  elsewhere in the document and not in the passage: the passage alone does not tell a retriever
  what it is about, which is what contextual retrieval exists for;
- ``paraphrase``: a question in other words than the passage's (few shared words).

Language: the questions are written in ``language`` when one is configured (``language:
Spanish``), else in the document's own language, which :func:`document_language` names from its
commonest function words (English, Spanish, French, German, Portuguese, Italian; English when it
cannot tell), so the prompt always names the language explicitly.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from situate.questions.base import GenerationRequest
from situate.stores.keys import content_hash

STRATEGIES = ("factual", "context_dependent", "paraphrase")

_INSTRUCTIONS = {
    "factual": (
        "Write one question that a reader of this document could ask and that the passage "
        "answers. The question must make sense on its own, without the passage at hand: name "
        'what it is about instead of saying "it", "this" or "the passage".'
    ),
    "context_dependent": (
        "The whole document is above; the passage is one part of it. Write one question that "
        "the passage answers but that names what it asks about with a name, product, period or "
        "section title that appears elsewhere in the document and NOT in the passage itself. "
        "Someone searching with your question should need the rest of the document to see that "
        "this passage is the answer."
    ),
    "paraphrase": (
        "Write one question that the passage answers, worded as a user would ask it: use "
        "different words from the passage (synonyms, another sentence structure) and copy as "
        "few of its words as you can. The question must make sense on its own."
    ),
}

TEMPLATE = """\
You are helping build an evaluation set for a search engine over a collection of documents.
{instructions}{variant}
Document title: {title}
Section: {section}
<passage>
{passage}
</passage>
Write the question and the answer in {language}.
Reply with one JSON object and nothing else, with these keys:
{{"question": "...", "answer": "a short answer, a few words", "quote": "..."}}
"quote" is the shortest sentence or phrase of the passage that supports the answer, copied \
character for character from the passage (same words, same spelling, same punctuation)."""

DOCUMENT_TEMPLATE = "<document>\n{text}\n</document>"

# the commonest function words of each language (a document's language is the one whose words
# it uses most)
_FUNCTION_WORDS = {
    "English": "the of and to in is that for it with as are on this by be from or which",
    "Spanish": "el la de que y en los las del se por un una para con es al lo como más",
    "French": "le la les de des et en un une du est que pour dans qui sur au par pas",
    "German": "der die und das den ist nicht mit von zu ein eine auf für sich dem des",
    "Portuguese": "o a os as de do da que e em um uma para com não por dos das se",
    "Italian": "il la di che e un una per non con del della sono gli le si più alla",
}
_LANGUAGE_WORDS = {lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()}
LANGUAGE_CODES = {
    "English": "en", "Spanish": "es", "French": "fr", "German": "de", "Portuguese": "pt",
    "Italian": "it",
}  # fmt: skip
_WORD = re.compile(r"\w+", re.UNICODE)


def language_scores(text: str) -> dict[str, int]:
    """How many of ``text``'s words are each language's function words."""
    counts = Counter(w.lower() for w in _WORD.findall(text))
    return {lang: sum(counts[w] for w in words) for lang, words in _LANGUAGE_WORDS.items()}


def document_language(text: str, sample_chars: int = 20_000) -> str:
    """The language (a name) whose function words are commonest in ``text``; English on a tie."""
    scores = language_scores(text[:sample_chars])
    best = max(scores.values())
    return "English" if best == 0 else next(lang for lang, s in scores.items() if s == best)


def language_code(language: str) -> str:
    """``es`` for "Spanish" (the record's ``language``); a name not listed stays as written."""
    return LANGUAGE_CODES.get(language.strip().title(), language.strip())


@dataclass(frozen=True)
class RenderedQuestionPrompt:
    """What is sent: the cached document block ("" unless ``context_dependent``) and the prompt."""

    document: str
    prompt: str
    language: str  # the language asked for (a name)


def document_window(request: GenerationRequest, max_chars: int | None) -> str:
    """The document text a ``context_dependent`` prompt shows: all of it, or when it is longer
    than ``max_chars`` (the model's window), the ``max_chars`` characters centred on the passage."""
    text = request.document.text
    if max_chars is None or len(text) <= max_chars:
        return text
    middle = (request.passage.start + request.passage.end) // 2
    start = max(0, min(middle - max_chars // 2, len(text) - max_chars))
    return text[start : start + max_chars]


def render(
    request: GenerationRequest, max_document_chars: int | None = None
) -> RenderedQuestionPrompt:
    """The prompt for one request (its strategy must be one of :data:`STRATEGIES`); a document
    longer than ``max_document_chars`` is shown as a window around the passage."""
    doc = request.document
    language = request.language.strip() or document_language(doc.text)
    variant = (
        f"\nThis is question {request.index + 1} about this passage: ask about a different "
        "detail than the most obvious one."
        if request.index
        else ""
    )
    prompt = TEMPLATE.format(
        instructions=_INSTRUCTIONS[request.strategy],
        variant=variant,
        title=doc.title or doc.doc_id,
        section=request.passage.section or "(none)",
        passage=request.passage_text.strip(),
        language=language,
    )
    block = ""
    if request.strategy == "context_dependent":
        block = DOCUMENT_TEMPLATE.format(text=document_window(request, max_document_chars))
    return RenderedQuestionPrompt(block, prompt, language)


def templates_hash() -> str:
    """What changes every answer besides the model and the passage: the templates."""
    return content_hash("question-prompt", TEMPLATE, DOCUMENT_TEMPLATE, _INSTRUCTIONS)


@dataclass(frozen=True)
class ParsedAnswer:
    question: str
    answer: str
    quote: str


class AnswerError(ValueError):
    """An answer that holds no usable JSON object; the message is one line."""


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def _objects(text: str):
    """Every JSON object in ``text``: fenced blocks first, then each ``{`` that starts one."""
    decoder = json.JSONDecoder()
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        for m in re.finditer(r"\{", candidate):
            try:
                value, _ = decoder.raw_decode(candidate, m.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                yield value


def parse_answer(text: str) -> ParsedAnswer:
    """The question, answer and quote of a model's reply: the first JSON object holding the
    three keys, inside a code fence or surrounded by prose; :class:`AnswerError` (one line)
    when there is none."""
    if not text.strip():
        raise AnswerError("empty answer")
    seen_object = False
    for obj in _objects(text):
        seen_object = True
        fields = {k.lower(): v for k, v in obj.items() if isinstance(k, str)}
        values = [fields.get(k) for k in ("question", "answer", "quote")]
        if all(isinstance(v, str) and v.strip() for v in values):
            question, answer, quote = (v.strip() for v in values)
            return ParsedAnswer(question, answer, quote)
    start = " ".join(text.split())[:60]
    if seen_object:
        raise AnswerError(f"no JSON object with non-empty question, answer and quote: {start!r}")
    raise AnswerError(f"no JSON object in the answer: {start!r}")
