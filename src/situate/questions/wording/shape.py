"""A question as parts (:class:`Shape`): whether it reads as a person's (:func:`fluent`), and its
wordings with the subject cut back, the qualifier or the adjectives left out."""

from __future__ import annotations

import re
from dataclasses import dataclass

from situate.questions.pos import tags as pos_tags
from situate.questions.wording.clauses import finite_verbs
from situate.questions.wording.spans import Answer
from situate.questions.wording.tokens import Token, copied_run, join
from situate.questions.wording.verbs import BE
from situate.questions.wording.words import (
    ACRONYMS,
    CLAUSE_OPENERS,
    CUT,
    DETERMINERS,
    NOT_SUBJECT,
    PREPOSITIONS,
    PRONOUNS,
)


@dataclass(frozen=True)
class Shape:
    """A question as parts, so it can be shortened: the words before the subject, the subject,
    the words after it, the qualifier."""

    opening: list[str]
    subject: list[str]
    rest: list[str]
    qualifier: list[str]
    language: str

    def text(self, subject_words: int | None = None, qualifier: bool = True) -> str:
        subject = self.subject if subject_words is None else self.subject[:subject_words]
        parts = [*self.opening, *subject, *self.rest, *(self.qualifier if qualifier else [])]
        body = join(parts).strip()
        body = body[:1].upper() + body[1:]
        return ("¿" if self.language == "es" else "") + body + "?"


_NOT_NOUNS = frozenset(["least", "most", "more", "less", "same", "other", "last"])


_SYMBOL = re.compile(r"[±°˚×=<>|~≤≥]")


_ADJECTIVE = re.compile(r"\w+(?:ous|ed|ing|al|ive|ic|ible|able|ful|less|like)$")


def fluent(shape: Shape, answer_text: str, sentence: str, answer: Answer) -> bool:
    """Whether the question reads as a person's: a subject that opens like a noun phrase and
    holds no verb or clause, a ``which`` followed by a noun, an answer that is a whole name or
    number (not "IFITM-like", not "17 - ODYA", not a table's "° F")."""
    if shape.language == "en":
        if shape.subject:
            first = shape.subject[0].casefold()
            if first in NOT_SUBJECT or first in PREPOSITIONS or first.endswith("ly"):
                return False
            if first in CLAUSE_OPENERS or (first.endswith("ing") and first.isalpha()):
                return False  # "compared to ...", "identifying ...": no noun phrase
            words = [Token(w, 0, 0) for w in shape.subject]
            if finite_verbs(words) or any(w in (",", ";", ":", "(", ")") for w in shape.subject):
                return False
            if any(
                w.casefold() in {"is", "are", "was", "were", "we", "it", "they", "which", "that"}
                for w in shape.subject[1:]
            ):
                return False
        if any(w.casefold() in CUT | PRONOUNS for w in shape.rest):
            return False
        if any(not w[:1].isalnum() and w not in ("$", "€", "£") for w in shape.rest):
            return False  # punctuation inside the question: a clause cut in the middle
        if any(w.casefold().endswith("ing") and len(w) > 5 for w in shape.rest[1:]):
            return False  # "do ... alignment including?": a clause cut in the middle
        if shape.rest and not shape.subject and shape.opening[-1] in ("did", "does", "do"):
            return False
        if "which" in shape.opening[:-1]:
            at = shape.opening.index("which") + 1
            noun = shape.opening[at]
            words = [*shape.opening, *shape.subject, *shape.rest]
            if (
                not noun.isalpha()
                or len(noun) < 4
                or _ADJECTIVE.match(noun.casefold())
                or noun.casefold() in _NOT_NOUNS
                or not pos_tags(words)[at].startswith("NN")
            ):
                return False  # "Since which similar ...", "Which interacts ...": no noun
    if answer.kind == "name" and re.search(r"-[a-z]{3,}$", answer_text):
        return False
    if shape.language == "en" and answer.kind == "name" and ACRONYMS.fullmatch(answer_text):
        return False  # "TB", "RTI", "HCV ELISA": people do not ask for an abbreviation
    if shape.language == "en" and (
        shape.opening[:1]
        and shape.opening[0] in PREPOSITIONS
        and shape.opening[1:2] in (["what"], ["whom"])
    ):
        return False  # "By what did the proteins separate?": a person asks "How ...?"
    if any(_SYMBOL.search(w) for w in (*shape.subject, *shape.rest, *shape.qualifier)):
        return False  # "the average body temperature ± 0.13 ° C": a measurement, not words
    if any(w.isupper() and len(w) > 3 and w.isalpha() for w in (*shape.subject, *shape.rest)):
        return False  # a heading in capitals ("RESULTS: ...") is no subject
    tail = sentence[answer.end : answer.end + 3].lstrip()
    if answer.kind in ("number", "count", "money", "percent", "duration") and tail[:1] in (
        "-",
        "°",
        "/",
        "×",
    ):
        return False
    if answer.kind == "number" and "which" not in shape.opening:
        # a bare number only reads as the complement of "be" ("What was the ratio?")
        be_only = shape.opening[-1:] and shape.opening[-1].casefold() in BE and not shape.rest
        change = shape.opening[:3] == ["by", "how", "much"]
        if not (be_only or change or shape.opening[:1] == ["how"]):
            return False
    if re.fullmatch(r"0\d+", answer_text):  # an identifier, not a quantity
        return False
    last = [*shape.opening, *shape.subject, *shape.rest, *shape.qualifier][-1:]
    if shape.language == "en" and last and last[0].casefold() in ("than", "as", "that"):
        return False  # "... estimated to be earlier than?": the comparison cut off
    n = sum(len(p) for p in (shape.opening, shape.subject, shape.rest, shape.qualifier))
    return 3 <= n <= 20


def shortened(shape: Shape, passage: str, max_copied: int) -> list[str]:
    """The texts of ``shape`` with its subject cut back and its qualifier left out (in that
    order) that copy at most ``max_copied`` consecutive words of ``passage``: the first one
    as short as it must be, the others whole noun phrases (the subject whole or up to a
    preposition, never "the median" of "the median incubation period")."""
    out = []
    full = len(shape.subject)
    for qualifier in (True, False):
        for n in range(full, -1 if not shape.subject else 0, -1):
            while n > 1 and shape.subject[n - 1].casefold() in PREPOSITIONS | DETERMINERS | CUT:
                n -= 1  # never end the subject on a function word
            cut = [
                i for i in range(1, n) if shape.subject[i].casefold() in PREPOSITIONS
            ]  # shorter: up to a preposition ("the first cases of ..." -> "the first cases")
            if n < full and cut:
                n = cut[-1]
            if n and shape.subject[n - 1].casefold() in PREPOSITIONS | DETERMINERS | CUT:
                continue  # "How long was the?"
            text = shape.text(n, qualifier)
            if copied_run(text, passage) > max_copied:
                continue
            if len(re.findall(r"\w+", text)) < 3:
                return out  # shorter still says nothing
            whole = n == full or shape.subject[n].casefold() in PREPOSITIONS
            if text not in out and (whole or not out):
                out.append(text)
    return out


def without_adjectives(subject: list[str]) -> list[str]:
    """``subject`` without its adjectives and adverbs before a noun (tagged ``JJ*`` / ``RB*``),
    where a noun is left: "the median incubation period" -> "the incubation period"."""
    tags = pos_tags(subject)
    kept = [
        i
        for i, t in enumerate(tags)
        if not (t.startswith(("JJ", "RB")) and any(x.startswith("NN") for x in tags[i + 1 :]))
    ]
    if not any(tags[i].startswith("NN") for i in kept):
        return subject
    return [subject[i] for i in kept]
