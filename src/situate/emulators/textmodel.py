"""Deterministic stand-ins for models: hashed bag-of-words vectors, term-overlap relevance.

Good enough for plumbing and better than random: texts that share words get similar vectors,
and a document that contains the query's words scores higher.

Token counts are approximated as ``ceil(utf-8 bytes / 4)`` (OpenAI's rule of thumb for English
with cl100k/o200k; code and non-English text take more real tokens than this counts).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from functools import lru_cache

import numpy as np

from situate.words.stopwords import ENGLISH, SPANISH

_WORD = re.compile(r"\w+", re.UNICODE)
_MIN_PREFIX = 32


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def approx_tokens(text: str) -> int:
    """Approximate token count: ``ceil(len(utf-8 bytes) / 4)``, at least 1 for non-empty text."""
    n = len(text.encode("utf-8"))
    return 0 if n == 0 else max(1, math.ceil(n / 4))


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The start of ``text`` holding about ``max_tokens`` tokens (same approximation)."""
    raw = text.encode("utf-8")
    if len(raw) <= 4 * max_tokens:
        return text
    return raw[: 4 * max_tokens].decode("utf-8", errors="ignore")


def _prefix_sizes(dim: int) -> list[int]:
    sizes, p = [], _MIN_PREFIX
    while p < dim:
        sizes.append(p)
        p *= 2
    return [*sizes, dim]


@lru_cache(maxsize=500_000)
def _positions(feature: str, dim: int, salt: str) -> tuple[tuple[int, float], ...]:
    """One signed position inside every prefix (32, 64, 128, ... dim) of the vector.

    Because each feature lands in every prefix, a vector truncated to its first ``d``
    dimensions still carries every word (Matryoshka-style, like text-embedding-3).
    """
    sizes = _prefix_sizes(dim)
    digest = hashlib.blake2b(f"{salt}\x1f{feature}".encode(), digest_size=64).digest()
    out = []
    for i, size in enumerate(sizes):
        chunk = int.from_bytes(digest[(4 * i) % 60 : (4 * i) % 60 + 4], "little")
        out.append((chunk % size, 1.0 if (chunk >> 31) & 1 else -1.0))
    return tuple(out)


def hashed_vector(text: str, dim: int, salt: str = "") -> np.ndarray:
    """Unit float32 vector: hashed word counts (weight ``1 + log tf``) in ``dim`` dimensions."""
    counts = Counter(words(text)) or Counter({"\x00" + text: 1})
    v = np.zeros(dim, dtype=np.float64)
    for feature, tf in counts.items():
        w = 1.0 + math.log(tf)
        for idx, sign in _positions(feature, dim, salt):
            v[idx] += sign * w
    norm = np.linalg.norm(v)
    return (v / norm if norm > 0 else v).astype(np.float32)


def truncate_normalize(v: np.ndarray, dim: int) -> np.ndarray:
    """First ``dim`` components, rescaled to unit length."""
    head = np.asarray(v[:dim], dtype=np.float32)
    norm = float(np.linalg.norm(head))
    return head / norm if norm > 0 else head


def overlap_relevance(query: str, document: str) -> float:
    """Relevance in [0, 1]: share of query words found in the document, lifted by their density."""
    q = set(words(query))
    d = words(document)
    if not q or not d:
        return 0.0
    hits = [w for w in d if w in q]
    coverage = len(q.intersection(hits)) / len(q)
    density = len(hits) / len(d)
    return float(coverage * (0.9 + 0.1 * density))


# -- a stand-in for an LLM that writes chunk contexts ------------------------------------------

_TAGGED = re.compile(r"<([A-Za-z][\w-]*)>\s*(.*?)\s*</\1>", re.S)
# the English stop words, and words the emulator's stand-in answers have always left out as
# well: the rest of the usual (NLTK) English list and the verbs of method sections; kept so that
# its answers stay what the tests and recorded runs hold
_ALSO_LEFT_OUT = """
    again against am because doing down further having hers him itself just nor now off once ours
    out theirs through too until up yours use used using etc
"""
_STOPWORDS = ENGLISH | frozenset(_ALSO_LEFT_OUT.split())


def tagged(text: str, tag: str) -> str | None:
    """The content of the first ``<tag>...</tag>`` in ``text``, or None."""
    for name, content in _TAGGED.findall(text):
        if name == tag:
            return content
    return None


def excerpt_of(text: str) -> str:
    """The part of a request block a context is about: the last tagged block other than
    ``<document>`` (``<chunk>``, ``<excerpt>``...), else the whole text."""
    blocks = [content for name, content in _TAGGED.findall(text) if name != "document"]
    return blocks[-1] if blocks else text


def title_of(document: str, max_chars: int = 80) -> str:
    """A document's title: the first non-empty line of its ``<document>`` content (or of the
    whole text), without Markdown markers, cut at a word boundary."""
    body = tagged(document, "document") or document
    for line in body.splitlines():
        line = re.sub(r"</?[A-Za-z][\w-]*>", " ", line)  # markup tags, not their content
        line = " ".join(line.split()).lstrip("#*>-= ").rstrip(":").strip()
        if line:
            if len(line) > max_chars:
                line = line[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "..."
            return line
    return "this document"


def distinctive_terms(excerpt: str, document: str, k: int = 5) -> list[str]:
    """The ``k`` words that best tell ``excerpt`` apart within ``document``: the share of a
    word's occurrences in the document that fall in the excerpt, times ``log(1 + tf)`` in the
    excerpt (a word found only there, and often, ranks first); stopwords, numbers and words
    under 3 letters left out; ties go to the earlier word."""
    doc_counts = Counter(words(document))
    order: dict[str, int] = {}
    tf: Counter = Counter()
    for w in words(excerpt):
        if len(w) < 3 or w in _STOPWORDS or w.isdigit():
            continue
        order.setdefault(w, len(order))
        tf[w] += 1

    def score(w: str) -> float:
        return tf[w] / max(tf[w], doc_counts[w]) * math.log(1 + tf[w])

    return sorted(tf, key=lambda w: (-score(w), order[w]))[:k]


def join_terms(terms: list[str]) -> str:
    if not terms:
        return "this part of the document"
    return terms[0] if len(terms) == 1 else f"{', '.join(terms[:-1])} and {terms[-1]}"


def situating_answer(document: str, request: str, prefill: str = "") -> str:
    """A deterministic chunk context: ``This chunk is from <title>; it covers <terms>.``

    ``document`` is the cached document block (its ``<document>`` content when tagged),
    ``request`` the block holding the chunk (its last tagged block other than ``<document>``).
    With ``prefill`` (the start of the answer, already written) the return value is only its
    continuation, as the APIs return it.
    """
    terms = join_terms(
        distinctive_terms(excerpt_of(request), tagged(document, "document") or document)
    )
    answer = f"This chunk is from {title_of(document)}; it covers {terms}."
    if not prefill:
        return answer
    if answer.startswith(prefill) and len(answer) > len(prefill):
        return answer[len(prefill) :]
    return f" {terms}."


# -- a stand-in for an LLM that grades relevance ---------------------------------------------


def content_words(text: str) -> set[str]:
    """Words of 3 letters or more, stopwords and numbers left out."""
    return {w for w in words(text) if len(w) >= 3 and w not in _STOPWORDS and not w.isdigit()}


def grading_answer(request: str) -> str | None:
    """A relevance grade for a request holding ``<question>`` and ``<passage>`` blocks (a judge
    prompt, see :mod:`situate.judging.prompt`), else None.

    The grade is the share of the question's content words found in the passage: 3 from 3/4, 2
    from 1/2, 1 from 1/4, else 0. Deterministic and plausible (a passage sharing the question's
    words is more likely to answer it), and no judgment of meaning: an emulator.
    """
    question, passage = tagged(request, "question"), tagged(request, "passage")
    if question is None or passage is None:
        return None
    asked = content_words(question)
    share = len(asked & content_words(passage)) / len(asked) if asked else 0.0
    return str(sum(share >= cut for cut in (0.25, 0.5, 0.75)))


# -- a stand-in for an LLM that writes evaluation questions ----------------------------------

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_ASKED_LANGUAGE = re.compile(r"Write the question and the answer in ([A-Za-z]+)\.")
_SPANISH = SPANISH  # function words a question's terms leave out (the ones above are English)
_TITLE_LINE = re.compile(r"^Document title: (.+)$", re.M)
_QUESTION_FORMS = {
    # (with a document name, without one); {terms} and {title} filled in
    "Spanish": ("¿Qué dice {title} sobre {terms}?", "¿Qué se indica sobre {terms}?", " y "),
    "English": ("What does {title} say about {terms}?", "What is stated about {terms}?", " and "),
}


def question_answer(document: str, request: str) -> str | None:
    """A question-writing answer for a request holding a ``<passage>`` block and asking for a
    JSON ``quote`` (a question generator prompt, see :mod:`situate.questions.prompts`), else None.

    The reply is the JSON object a real model writes: the quote is the passage's sentence holding
    its most distinctive word (within the document), copied verbatim except for one deterministic
    slip in one passage of four (its first letter's case swapped), which the quote finder's
    ``normalized`` rule undoes; the question names the quote's distinctive words and, when the
    document is the cached prefix (``context_dependent``), the document's title; the answer is
    the quote's first words. Spanish when the prompt asks for Spanish, else English.
    """
    passage = tagged(request, "passage")
    if passage is None or '"quote"' not in request or tagged(request, "question") is not None:
        return None
    whole = tagged(document, "document")
    sentences = [s.strip() for s in _SENTENCE.findall(passage) if len(s.split()) >= 3]
    sentences = sentences or [passage.strip()]
    top = distinctive_terms(passage, whole or passage, k=1)
    quote = next((s for s in sentences if top and top[0] in words(s)), sentences[0])
    quote = " ".join(quote.split(" ")[:40]) if len(quote.split()) > 40 else quote
    asked = _ASKED_LANGUAGE.search(request)
    language = asked.group(1) if asked and asked.group(1) in _QUESTION_FORMS else "English"
    with_title, plain, conjunction = _QUESTION_FORMS[language]
    terms = [t for t in distinctive_terms(quote, whole or passage, k=6) if t not in _SPANISH][:3]
    named = terms[0] if len(terms) == 1 else conjunction.join([", ".join(terms[:-1]), terms[-1]])
    titled = _TITLE_LINE.search(request)
    title = titled.group(1).strip() if titled else title_of(document)
    question = (with_title if whole else plain).format(title=title, terms=named or title)
    slipped = quote
    if int(hashlib.sha256(passage.encode()).hexdigest(), 16) % 4 == 0 and quote[:1].isalpha():
        slipped = quote[0].swapcase() + quote[1:]
    answer = " ".join(quote.split()[:12])
    return json.dumps(
        {"question": question, "answer": answer, "quote": slipped}, ensure_ascii=False
    )
