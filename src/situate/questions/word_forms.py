"""Word forms: how often people ask with a word in another form than their passage's, and a
share of generated questions asked so.

People do not copy their passage's word forms. Of COVID-QA's 1,380 questions, 31.7% hold a
content word that is not in its passage while its stem is ("responses" asked as "response",
"cells" as "cell", "reported" as "report"): 7.1% of all their content words, about one word in
each such question. A rule that copies its passage's forms writes none, so BM25 without a stemmer
(``sparse=bm25s``) finds its questions more easily than Lucene's Porter-stemmed BM25
(``sparse=pyserini``) does: a set matched to people's difficulty ranked bm25s up to 8 points above
Lucene where people's questions put them within -1..+2 (docs/research/word-forms.md).

- :func:`form_shift`: the share of a question's content words (as the difficulty measures count
  them) that are not in the passage while their stem is (the Snowball English stemmer of
  PyStemmer, which bm25s and Lucene's Porter stemmer agree with on these suffixes).
- :func:`vary_form`: the question with one word's form changed, by regular endings, to a form the
  documents hold with the same stem, where the change cannot break agreement:

  - a noun's number (-s, -es, -ies): a common noun heading a noun phrase that is an object (after
    a preposition, or a verb other than an auxiliary) and starts with a determiner either number
    takes (``the``, ``its``, ``their``...): "in **the lungs**" -> "in the lung", "of the spike
    **protein**" -> "of the spike proteins", "What inhibits **the replication**?"; followed by no
    noun, verb, possessive or relative pronoun ("the cells that express", whose verb would
    agree). Its stem stays (else no change: "news" is not "new");
  - a verb's tense (past -ed, -ied <-> present -s, -es, -ies): the verb of a singular question
    subject ("What", "Who", "What" or "Which" and a singular noun) that is not an auxiliary:
    "What **induced** a response?" -> "What induces a response?", "What **inhibits** the
    replication?" -> "What inhibited the replication?" (people ask "What supports the results?"
    of a passage that says they were supported).

  Tags from :mod:`situate.questions.pos`; English only.
- :func:`vary`: ``share`` of the questions varied so (chosen by a hash of each id: the same
  questions at any target), counting those that already hold a shifted word.

``questions.difficulty.word_forms`` sets the share: a number, or ``match`` for the human sample's
share (questions with a form-shifted word, measured against their gold passage).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Container, Sequence
from dataclasses import replace
from functools import lru_cache

from situate.datasets.generated import GeneratedQuestion
from situate.questions.filters import words
from situate.questions.wording.tokens import Token, tokens
from situate.records import Span

NOUNS = frozenset(["NN", "NNS"])
_TENSED = frozenset(["VBD", "VBN", "VBZ"])  # the tagger reads "What induced" as VBD or VBN
_SUBJECTS = frozenset(["what", "who"])  # a question word that is a singular subject
# "What percentage reported": the noun asks a quantity, it is not the verb's subject
_QUANTITIES = frozenset(["percentage", "proportion", "number", "share", "fraction", "amount"])
_PREPOSITIONS = frozenset(["IN", "TO"])
_MODIFIERS = frozenset(["JJ", "JJR", "JJS", "NN", "VBN", "VBG", "CD"])  # inside the noun phrase
_NOT_AFTER = frozenset(["NN", "NNS", "NNP", "NNPS", "POS", "MD"])  # a longer noun, 's, a modal
# determiners either number takes ("the cell", "the cells"; "their cell", "their cells")
_DETERMINERS = frozenset(["the", "its", "their", "his", "her", "our", "your"])
_RELATIVE = frozenset(["that", "which", "who", "whom", "whose"])  # its verb would agree
# verbs whose next noun phrase may be their subject ("What is the role", "How did the study")
_AUXILIARIES = frozenset((
    "be", "is", "are", "was", "were", "been", "being", "am", "have", "has", "had", "having",
    "do", "does", "did", "done", "can", "could", "may", "might", "must", "shall", "should",
    "will", "would",
))  # fmt: skip


def _governs(before: Token, tag: str) -> bool:
    """Whether the word ``before`` a noun phrase makes it an object, never a subject: a
    preposition, or a verb that is not an auxiliary."""
    if tag in _PREPOSITIONS:
        return True
    return tag.startswith("VB") and before.low not in _AUXILIARIES


@lru_cache(maxsize=1)
def stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return stemmer().stemWord(word)


def shifted_words(asked: Sequence[str], passage: str) -> list[str]:
    """The words of ``asked`` (content words) not in ``passage`` whose stem is."""
    present = set(words(passage))
    stems = {stem(w) for w in present}
    return [w for w in asked if w not in present and stem(w) in stems]


def form_shift(asked: Sequence[str], passage: str) -> float:
    """The share of the content words ``asked`` whose form is not the passage's but whose stem
    is; 0 for a question with no content word."""
    return len(shifted_words(asked, passage)) / len(asked) if asked else 0.0


def other_number(word: str, tag: str, vocabulary: Container[str]) -> str | None:
    """``word`` (tagged NN or NNS) in the other number by the regular English endings (-s, -es,
    -ies), where that form is in ``vocabulary`` (the documents' words: a form people write) and
    keeps the stem; else None."""
    if tag == "NN":
        forms = [word + "s", word + "es"]
        if word.endswith("y") and word[-2:-1] not in "aeiou":
            forms.append(word[:-1] + "ies")
    else:
        forms = []
        if word.endswith("ies"):
            forms.append(word[:-3] + "y")
        if word.endswith("es"):
            forms.append(word[:-2])
        if word.endswith("s") and not word.endswith("ss"):
            forms.append(word[:-1])
    for other in forms:
        if other in vocabulary and stem(other) == stem(word):
            return other
    return None


def _noun_sites(
    found: Sequence[Token], tagged: Sequence[str], vocabulary: Container[str]
) -> list[tuple[int, str]]:
    """The (token index, other form) of each noun whose number can change (module docstring)."""
    from situate.questions.pos import FINITE

    sites = []
    for i, (tok, tag) in enumerate(zip(found, tagged, strict=True)):
        word = tok.text
        if tag not in NOUNS or not word.isalpha() or not word.islower() or len(word) < 3:
            continue
        after = tagged[i + 1] if i + 1 < len(found) else ""
        if after in _NOT_AFTER or after.startswith("VB") or after in FINITE:
            continue
        if i + 1 < len(found) and found[i + 1].text in ("'", "’"):
            continue
        j = i - 1
        while j >= 0 and tagged[j] in _MODIFIERS and found[j].text[:1].islower():
            j -= 1
        if j < 1 or found[j].low not in _DETERMINERS or not _governs(found[j - 1], tagged[j - 1]):
            continue
        if i + 1 < len(found) and found[i + 1].low in _RELATIVE:
            continue
        other = other_number(word, tag, vocabulary)
        if other is not None:
            sites.append((i, other))
    return sites


def other_tense(word: str, tag: str, vocabulary: Container[str]) -> str | None:
    """``word`` (a verb tagged VBD or VBN: past; VBZ: present, third person) in the other tense
    by the regular English endings (-ed, -d, -ied <-> -s, -es, -ies), where that form is in
    ``vocabulary`` and keeps the stem; else None (an irregular verb: "came")."""
    forms = []
    if tag == "VBZ":
        if word.endswith("ies"):
            forms.append(word[:-3] + "ied")
        if word.endswith("es"):
            forms.append(word[:-2] + "ed")
        if word.endswith("s") and not word.endswith("ss"):
            forms += [word[:-1] + "d", word[:-1] + "ed", word[:-1] + word[-2] + "ed"]
    elif word.endswith("ed"):
        if word.endswith("ied"):
            forms.append(word[:-3] + "ies")
        forms += [word[:-1] + "s", word[:-2] + "s", word[:-2] + "es"]
        if len(word) > 4 and word[-3] == word[-4]:
            forms.append(word[:-3] + "s")  # stopped: stops
    for other in forms:
        if other != word and other in vocabulary and stem(other) == stem(word):
            return other
    return None


def _verb_sites(
    found: Sequence[Token], tagged: Sequence[str], vocabulary: Container[str]
) -> list[tuple[int, str]]:
    """The (token index, other form) of the verb of a singular question subject whose tense
    can change (module docstring): none, or one."""
    if len(found) < 3:
        return []
    i = 1
    if found[0].low in ("what", "which") and tagged[1] == "NN" and found[1].text.islower():
        if found[1].low in _QUANTITIES:
            return []
        i = 2  # "What protein induced", "Which gene encodes"
    elif found[0].low not in _SUBJECTS:
        return []
    word = found[i].text
    if tagged[i] not in _TENSED or not word.isalpha() or not word.islower():
        return []
    if word in _AUXILIARIES or (i + 1 < len(found) and found[i + 1].low == "by"):
        return []  # "What was", and "What caused by": a participle, not the verb
    other = other_tense(word, tagged[i], vocabulary)
    return [] if other is None else [(i, other)]


def vary_form(question: str, vocabulary: Container[str], choose: int = 0) -> str | None:
    """``question`` with one word's form changed (the ``choose``-th site, modulo their number:
    the nouns whose number can change, then the verb whose tense can), or None when no word can
    change (module docstring); the other form must be in ``vocabulary``."""
    from situate.questions.pos import tags

    found = tokens(question)
    tagged = tags([t.text for t in found])
    sites = _noun_sites(found, tagged, vocabulary) + _verb_sites(found, tagged, vocabulary)
    if not sites:
        return None
    i, other = sites[choose % len(sites)]
    tok = found[i]
    return question[: tok.start] + other + question[tok.end :]


def _draw(qid: str) -> float:
    """A number in [0, 1) fixed by the question's id."""
    digest = hashlib.sha256(f"word_forms:{qid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def vary(
    questions: Sequence[GeneratedQuestion],
    share: float,
    shifted: Callable[[str, Sequence[Span]], bool],
    vocabulary: Container[str],
) -> list[GeneratedQuestion]:
    """``questions`` with ``share`` of the English ones with gold (kept so far) asked with a
    form-shifted word: those that already hold one count; the others that can change are varied
    in the order of a hash of their ids, so the same ones are at any target. ``shifted(question,
    gold)`` tells whether a wording holds a form-shifted word against its gold passage
    (:meth:`situate.questions.difficulty.measures.DifficultyMeter.form_shifted`). A varied
    question keeps its first wording in ``unvaried_q``."""
    english = [q for q in questions if q.status == "kept" and q.gold and q.language == "en"]
    already = {q.id for q in english if shifted(q.q, q.gold)}
    wanted = round(share * len(english)) - len(already)
    changes: dict[str, str] = {}
    for q in sorted(english, key=lambda q: _draw(q.id)):
        if len(changes) >= wanted:
            break
        if q.id in already:
            continue
        varied = vary_form(q.q, vocabulary, int(_draw(q.id) * 1000))
        if varied is not None and shifted(varied, q.gold):
            changes[q.id] = varied
    return [
        replace(q, q=changes[q.id], unvaried_q=q.q) if q.id in changes else q for q in questions
    ]
