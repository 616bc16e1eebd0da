"""A sentence's clause as the question rules cut it: the words before and after the answer, a
fronted phrase, the clause's finite verbs (by part-of-speech tags or the closed lists), the
subject's head noun phrase, the qualifier after the answer, a first word lower-cased unless it
is a name."""

from __future__ import annotations

import functools
import re

from situate.questions.pos import FINITE
from situate.questions.pos import tags as pos_tags
from situate.questions.wording.spans import MONTHS, Answer
from situate.questions.wording.tokens import Token, tokens
from situate.questions.wording.verbs import is_verb
from situate.questions.wording.words import (
    CUT,
    DETERMINERS,
    PREPOSITIONS,
)


@functools.lru_cache(maxsize=65536)
def _named_midsentence(word: str, document: str) -> bool:
    """Whether ``document`` writes ``word`` capitalised after a lower-case word or a comma
    somewhere: a name (one scan of the document per word, however many questions ask)."""
    return re.search(rf"[a-z,;]\s+{re.escape(word)}\b", document) is not None


def lower_first(words: list[str], document: str) -> list[str]:
    """The first word lower-cased unless the document only writes it capitalised (a name)."""
    if not words:
        return words
    w = words[0]
    et_al = len(words) > 1 and words[1].casefold() == "et"
    if w[:1].isupper() and w[1:].islower() and not et_al and not _named_midsentence(w, document):
        return [w.lower(), *words[1:]]
    if w.casefold() in DETERMINERS or w.casefold() in PREPOSITIONS:
        return [w.lower(), *words[1:]]
    return words


def head_phrase(phrase: list[Token], limit: int) -> list[Token]:
    """A subject's head noun phrase: cut at a comma, a relative pronoun or a conjunction after
    its first word; at most ``limit`` words, never ending on a function word."""
    out: list[Token] = []
    for i, t in enumerate(phrase):
        if t.text in ",;:(" or (i > 0 and t.low in CUT - {"and"}):
            break
        out.append(t)
    if len(out) > limit:  # keep the words up to the first preposition, if it leaves some
        cut = next((i for i, t in enumerate(out) if i > 0 and t.low in PREPOSITIONS), len(out))
        out = out[: min(cut, limit)] if cut >= 2 else out[:limit]
    while out and (out[-1].low in PREPOSITIONS or out[-1].low in DETERMINERS or out[-1].low in CUT):
        out.pop()
    return out


def qualifier_phrase(after: list[Token], limit: int) -> list[Token]:
    """The words right after the answer up to a comma or conjunction, if at most ``limit``;
    else a date phrase of the rest ("at December 31, 2021")."""
    out: list[Token] = []
    for t in after:
        if t.text in ",;:.!?()" or t.low in CUT:
            break
        out.append(t)
    while out and (out[-1].low in PREPOSITIONS or out[-1].low in DETERMINERS):
        out.pop()
    if out and len(out) <= limit:
        return out
    for i, t in enumerate(after):
        if t.low in ("in", "at", "on", "during", "for", "by", "since") and i + 1 < len(after):
            nxt = after[i + 1]
            if nxt.low in MONTHS or re.fullmatch(r"(1[89]|20)\d\d", nxt.text):
                phrase = [t, nxt]
                j = i + 2
                while (
                    j < len(after)
                    and len(phrase) < 5
                    and (after[j].text.isdigit() or after[j].text == ",")
                ):
                    phrase.append(after[j])
                    j += 1
                while phrase and phrase[-1].text == ",":
                    phrase.pop()
                return phrase
    return []


_CLAUSE_JOINS = frozenset(["while", "whereas", "although", "though", "but"])


def split_at_answer(sentence: str, answer: Answer) -> tuple[list[Token], list[Token]]:
    toks = tokens(sentence)
    before = [t for t in toks if t.end <= answer.start]
    after = [t for t in toks if t.start >= answer.end]
    # a fronted phrase ending in a comma ("In 2019, ...", "As of December 31, ...") is not
    # the subject; a clause before a semicolon is another sentence
    for cut in range(len(before) - 1, -1, -1):
        if before[cut].text == ";" or (
            before[cut].low in _CLAUSE_JOINS and cut > 0 and before[cut - 1].text == ","
        ):  # ", while IFITM1-3 proteins share ~85% ...": the answer's clause starts after it
            before = before[cut + 1 :]
            break
    return before, after


def strip_fronted(before: list[Token]) -> tuple[list[Token], list[Token]]:
    """(the fronted phrase, the clause): "In 2019, the company ..." -> ("In 2019", "the company ...")."""
    if before and before[0].low in PREPOSITIONS | {"as"}:
        comma = next((i for i, t in enumerate(before) if t.text == ","), None)
        if comma is not None and comma <= 6:
            return before[:comma], before[comma + 1 :]
    return [], before


def finite_verbs(
    clause: list[Token], tagged: dict[int, tuple[str, str]] | None = None
) -> list[int]:
    """Where ``clause``'s finite verbs are (never its first word).

    With ``tagged`` (the sentence's part-of-speech tags by token start, :mod:`.pos`): a word
    tagged past, present or modal, or a participle with an object after it and no comma or
    "also" before it ("The trial enrolled 120 patients"; not "the proteins separated by ...",
    not "also called COPD"). Without: the closed lists and the ``-ed`` rule of :func:`is_verb`
    (an -ed word after a preposition, a determiner or "and" is an adjective: "with confirmed
    influenza")."""
    out = []
    for i, t in enumerate(clause):
        if i == 0:
            continue
        prev = clause[i - 1].low
        tag, after = tagged.get(t.start, ("", "")) if tagged is not None else ("", "")
        if tag:
            if (
                tag in FINITE
                and (tag != "VBD" or prev not in (",", "also"))
                or (
                    tag == "VBN"
                    and after in _OBJECT_TAGS
                    and prev not in PREPOSITIONS | DETERMINERS | {",", "also"}
                )
            ):
                out.append(i)
            continue
        if not is_verb(t):
            continue
        if t.low.endswith("ed") and prev in PREPOSITIONS | DETERMINERS | {"and", "or"}:
            continue
        if t.low.endswith("ed") and prev in (",", "also"):
            continue  # "Inflammatory lung disease, also called COPD, ...": a participle
        out.append(i)
    return out


# what follows a participle that is the clause's verb: its object
_OBJECT_TAGS = frozenset(["DT", "CD", "PRP$", "NN", "NNS", "NNP", "NNPS", "JJ", "PRP"])


def compound(token: Token, tagged: dict[int, tuple[str, str]]) -> bool:
    """Whether ``token`` goes on the noun phrase before it (a noun, an adjective, a participle):
    the phrase a question would ask about is longer than its first noun."""
    tag = tagged.get(token.start, ("", ""))[0]
    return tag.startswith("NN") or tag in ("JJ", "VBN", "VBG")


def sentence_tags(sentence: str) -> dict[int, tuple[str, str]]:
    """(the part-of-speech tag of each token of ``sentence``, the next token's), by the token's
    start."""
    toks = tokens(sentence)
    tags = pos_tags([t.text for t in toks])
    return {t.start: (tag, nxt) for t, tag, nxt in zip(toks, tags, [*tags[1:], ""], strict=True)}
