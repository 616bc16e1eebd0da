"""A sentence and its answer phrase turned into a short wh-question, by rule (no model).

What :mod:`situate.questions.extractive` step 4 describes: the answer's kind sets the question
word, the clause is turned around its first verb, the subject is cut to its head noun phrase,
the rest to a short qualifier, and no run of more than ``max_copied`` words of the passage is
copied; a subject answer (:func:`subject_answer`) is asked "What <predicate>?".
:func:`wh_questions` returns no wording where no rule applies (the generator then tries
its next sentence): a question it cannot word is better not written than written as a cloze;
where one applies, the vaguer wordings of step 6 follow the first.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from situate.questions.pos import FINITE
from situate.questions.pos import tags as pos_tags

_TOKEN = re.compile(r"[$€£]?\d[\d,.]*\d%?|[$€£]?\d%?|[^\W_][\w'’-]*|[^\w\s]", re.U)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre"
)
MONTHS = frozenset(_MONTHS.split())
_UNITS = frozenset(["million", "billion", "thousand", "trillion", "millones", "mil", "miles"])
_CURRENCY = frozenset(["usd", "eur", "gbp", "dollars", "euros", "dólares"])
_DURATIONS = frozenset(
    [
        "seconds",
        "minutes",
        "hours",
        "days",
        "weeks",
        "months",
        "years",
        "decades",
        "second",
        "minute",
        "hour",
        "day",
        "week",
        "month",
        "year",
        "segundos",
        "minutos",
        "horas",
        "días",
        "semanas",
        "meses",
        "años",
    ]
)
_BE = frozenset(["is", "are", "was", "were", "am", "be"])
_HAVE = frozenset(["has", "have", "had"])
_MODAL = frozenset(["can", "could", "may", "might", "must", "shall", "should", "will", "would"])
_CHANGE = frozenset(
    [
        "increased",
        "decreased",
        "rose",
        "fell",
        "grew",
        "declined",
        "dropped",
        "improved",
        "increase",
        "decrease",
        "rise",
        "fall",
        "grow",
        "decline",
        "drop",
        "increases",
        "decreases",
        "rises",
        "falls",
        "grows",
        "declines",
        "drops",
        "climbed",
    ]
)
# common verbs of reports and papers that no suffix rule finds (past forms: base form)
_IRREGULAR = {
    "had": "have", "has": "have", "rose": "rise", "fell": "fall", "grew": "grow",
    "found": "find", "made": "make", "took": "take", "gave": "give", "began": "begin",
    "led": "lead", "paid": "pay", "held": "hold", "saw": "see", "became": "become",
    "spent": "spend", "brought": "bring", "left": "leave", "won": "win", "sold": "sell",
    "built": "build", "ran": "run", "met": "meet", "chose": "choose", "wrote": "write",
    "got": "get", "showed": "show", "shown": "show", "lost": "lose", "kept": "keep",
    "told": "tell", "knew": "know", "came": "come", "went": "go", "bought": "buy",
    "caught": "catch", "taught": "teach", "thought": "think", "sent": "send", "drew": "draw",
}  # fmt: skip
_PRESENT = frozenset(
    [
        "uses",
        "binds",
        "contains",
        "includes",
        "causes",
        "shows",
        "requires",
        "provides",
        "remains",
        "represents",
        "accounts",
        "affects",
        "infects",
        "encodes",
        "induces",
        "inhibits",
        "reduces",
        "enters",
        "mediates",
        "holds",
        "offers",
        "covers",
        "allows",
        "enables",
        "leads",
        "occurs",
        "appears",
        "exceeds",
        "reaches",
        "totals",
        "amounts",
        "comprises",
        "consists",
        "depends",
        "involves",
        "results",
        "lasts",
        "takes",
        "gives",
        "makes",
        "costs",
        "pays",
        "sells",
        "employs",
        "operates",
        "owns",
        "produces",
        "expresses",
        "targets",
        "recognizes",
        "activates",
        "regulates",
        "blocks",
        "prevents",
        "supports",
        "delivers",
        "admits",
        "ranges",
        "varies",
    ]
)
_NOT_VERBS = frozenset(
    [
        "need",
        "red",
        "bed",
        "seed",
        "feed",
        "speed",
        "shed",
        "hundred",
        "based",
        "related",
        "limited",
        "united",
        "detailed",
        "advanced",
        "selected",
        "skilled",
    ]
)
_DETERMINERS = frozenset(
    ["the", "a", "an", "this", "that", "these", "those", "its", "their", "his", "her", "our"]
)
_PREPOSITIONS = frozenset(
    [
        "in",
        "at",
        "on",
        "by",
        "for",
        "from",
        "to",
        "of",
        "with",
        "through",
        "into",
        "over",
        "under",
        "during",
        "since",
        "until",
        "via",
        "per",
        "across",
        "among",
        "between",
        "after",
        "before",
        "within",
        "without",
        "about",
        "against",
        "toward",
        "towards",
        "as",
    ]
)
_CUT = frozenset(
    [
        "and",
        "or",
        "but",
        "which",
        "that",
        "who",
        "whom",
        "whose",
        "while",
        "whereas",
        "although",
        "because",
        "if",
        "when",
        "where",
        "so",
        "compared",
        "respectively",
    ]
)
_WH = {
    "en": {
        "money": "how much",
        "duration": "how long",
        "percent": "what percentage",
        "date": "when",
        "count": "how many",
        "number": "what",
        "name": "what",
        "subject": "what",
    },
    "es": {
        "money": "cuánto",
        "duration": "cuánto tiempo",
        "percent": "qué porcentaje",
        "date": "cuándo",
        "count": "cuántos",
        "number": "cuánto",
        "name": "qué",
    },
}
_FEMININE = re.compile(r"\w+(?:as|dades|tudes|iones)$")  # cuántas solicitudes
_SPANISH_STOP = frozenset(
    [
        "el",
        "la",
        "los",
        "las",
        "un",
        "una",
        "unos",
        "unas",
        "de",
        "del",
        "en",
        "a",
        "al",
        "por",
        "para",
        "con",
        "sin",
        "y",
        "o",
        "que",
        "se",
        "su",
        "sus",
    ]
)


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.casefold()

    @property
    def word(self) -> bool:
        return self.text[:1].isalnum() or self.text[:1] in "$€£"


def tokens(text: str) -> list[Token]:
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def join(parts: list[Token] | list[str]) -> str:
    """Words joined with single spaces, punctuation attached to the word before it."""
    out = ""
    for p in parts:
        t = p.text if isinstance(p, Token) else p
        if not out:
            out = t
        elif t in ",.;:%)!?" or t in ("'s", "’s") or out.endswith(("(", "$", "€", "£")):
            out += t
        else:
            out += " " + t
    return out


def is_verb(token: Token) -> bool:
    """Whether ``token`` is a finite verb of English by the closed lists and the -ed rule."""
    low = token.low
    if low in _BE or low in _HAVE or low in _MODAL or low in _IRREGULAR or low in _PRESENT:
        return True
    if low in _CHANGE:
        return True
    return (
        low.endswith("ed")
        and len(low) > 4
        and low.isalpha()
        and token.text[:1].islower()
        and low not in _NOT_VERBS
    )


def base_form(verb: str) -> str:
    """The base form of an English finite verb ("enrolled" -> "enroll", "totaled" -> "total")."""
    low = verb.casefold()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ied"):
        return low[:-3] + "y"
    if low.endswith("ed"):
        stem = low[:-2]
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] in "pbtgmnr" and stem[-1] != "l":
            return stem[:-1]  # stopped -> stop
        if stem.endswith(
            ("at", "ut", "iz", "is", "ir", "or", "ur", "iv", "av", "ov", "uc", "ag", "ang", "min")
        ) and not stem.endswith(("eat", "oat", "ort", "ear", "oor", "air", "eor")):
            return stem + "e"  # estimated, used, recognized, acquired, approved, produced
        if stem.endswith(("v", "s", "z", "c", "g")) and not stem.endswith(("ss", "ng")):
            return stem + "e"
        return stem
    if low.endswith("ies"):
        return low[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes", "zes")):
        return low[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return low[:-1]
    return low


def _is_past(verb: str) -> bool:
    low = verb.casefold()
    return (low in _IRREGULAR and low not in ("has", "shown")) or low.endswith("ed")


@dataclass(frozen=True)
class Answer:
    """The answer phrase (characters of the sentence) and its kind."""

    start: int
    end: int
    kind: str  # money, percent, date, count, duration, number, name, definition, subject


def widen(sentence: str, start: int, end: int, kind: str) -> Answer:
    """The answer phrase grown into its unit or date, with its kind (module docstring)."""
    toks = tokens(sentence)
    inside = [i for i, t in enumerate(toks) if t.start < end and start < t.end]
    if not inside:
        return Answer(start, end, "name" if kind == "other" else kind)
    first, last = inside[0], inside[-1]
    if kind == "definition":
        return Answer(start, end, kind)
    if kind == "date":
        return Answer(start, end, kind)
    if kind in ("other", "count") and re.fullmatch(r"[$€£]?[\d,.]+", toks[first].text):
        # "$5.2 billion", "5.2 million dollars", "December 31, 2021", "March 2020"
        if first > 0 and toks[first - 1].text in "$€£":
            first -= 1
            kind = "money"
        if toks[first].text[:1] in "$€£":
            kind = "money"
        if last + 1 < len(toks) and toks[last + 1].low in _UNITS:
            last += 1
            if kind != "money":
                kind = (
                    "money"
                    if last + 1 < len(toks) and toks[last + 1].low in _CURRENCY
                    else ("number" if kind == "other" else kind)
                )
        if last + 1 < len(toks) and toks[last + 1].low in _CURRENCY:
            last += 1
            kind = "money"
        if last + 1 < len(toks) and toks[last + 1].low in _DURATIONS and kind == "other":
            last += 1
            kind = "duration"  # "5.2 days": how long
        if first > 0 and toks[first - 1].low in MONTHS:
            first -= 1
            kind = "date"
            if (
                last + 2 < len(toks)
                and toks[last + 1].text == ","
                and re.fullmatch(r"(1[89]|20)\d\d", toks[last + 2].text)
            ):
                last += 2
    elif kind == "year":
        kind = "date"
        if first > 0 and toks[first - 1].low in MONTHS:
            first -= 1
        elif (
            first > 2
            and toks[first - 1].text == ","
            and toks[first - 2].text.isdigit()
            and toks[first - 3].low in MONTHS
        ):
            first -= 3
    elif kind == "other":
        kind = "name"
    if kind == "other":
        kind = "number"
    return Answer(toks[first].start, toks[last].end, kind)


@functools.lru_cache(maxsize=65536)
def _named_midsentence(word: str, document: str) -> bool:
    """Whether ``document`` writes ``word`` capitalised after a lower-case word or a comma
    somewhere: a name (one scan of the document per word, however many questions ask)."""
    return re.search(rf"[a-z,;]\s+{re.escape(word)}\b", document) is not None


def _lower_first(words: list[str], document: str) -> list[str]:
    """The first word lower-cased unless the document only writes it capitalised (a name)."""
    if not words:
        return words
    w = words[0]
    et_al = len(words) > 1 and words[1].casefold() == "et"
    if w[:1].isupper() and w[1:].islower() and not et_al and not _named_midsentence(w, document):
        return [w.lower(), *words[1:]]
    if w.casefold() in _DETERMINERS or w.casefold() in _PREPOSITIONS:
        return [w.lower(), *words[1:]]
    return words


def _head(phrase: list[Token], limit: int) -> list[Token]:
    """A subject's head noun phrase: cut at a comma, a relative pronoun or a conjunction after
    its first word; at most ``limit`` words, never ending on a function word."""
    out: list[Token] = []
    for i, t in enumerate(phrase):
        if t.text in ",;:(" or (i > 0 and t.low in _CUT - {"and"}):
            break
        out.append(t)
    if len(out) > limit:  # keep the words up to the first preposition, if it leaves some
        cut = next((i for i, t in enumerate(out) if i > 0 and t.low in _PREPOSITIONS), len(out))
        out = out[: min(cut, limit)] if cut >= 2 else out[:limit]
    while out and (
        out[-1].low in _PREPOSITIONS or out[-1].low in _DETERMINERS or out[-1].low in _CUT
    ):
        out.pop()
    return out


def _qualifier(after: list[Token], limit: int) -> list[Token]:
    """The words right after the answer up to a comma or conjunction, if at most ``limit``;
    else a date phrase of the rest ("at December 31, 2021")."""
    out: list[Token] = []
    for t in after:
        if t.text in ",;:.!?()" or t.low in _CUT:
            break
        out.append(t)
    while out and (out[-1].low in _PREPOSITIONS or out[-1].low in _DETERMINERS):
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


def copied_run(question: str, passage: str) -> int:
    """The longest run of consecutive words of ``question`` found consecutively in ``passage``
    (words case-folded, punctuation aside)."""
    q = re.findall(r"\w+", question.casefold())
    p = re.findall(r"\w+", passage.casefold())
    best = 0
    prev = [0] * (len(p) + 1)
    for a in q:
        cur = [0] * (len(p) + 1)
        for j, b in enumerate(p, start=1):
            if a == b:
                cur[j] = prev[j - 1] + 1
                if cur[j] > best:
                    best = cur[j]
        prev = cur
    return best


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


def wh_questions(
    sentence: str,
    answer: Answer,
    document: str,
    passage: str,
    language: str = "en",
    *,
    subject_words: int = 5,
    qualifier_words: int = 4,
    max_copied: int = 5,
) -> list[str]:
    """Every wording of the question of ``sentence`` asking for ``answer`` that copies at most
    ``max_copied`` consecutive words of ``passage``, the most specific first: the subject as
    long as it goes (then cut back to a preposition: "the first cases of ..." -> "the first
    cases"), with the qualifier, then without it; then, in English, each of them with the
    subject's adjectives left out ("the median incubation period" -> "the incubation period"):
    a vaguer question, as a person who does not know the passage's terms asks it. Empty when
    the sentence has no question by the rule."""
    shape = (_spanish if language == "es" else _english)(
        sentence, answer, document, subject_words, qualifier_words
    )
    if shape is None or not _fluent(shape, sentence[answer.start : answer.end], sentence, answer):
        return []
    if answer.kind == "subject":
        return _subject_wordings(shape, passage, max_copied)
    out = _shortened(shape, passage, max_copied)
    if out and language == "en" and (plain := _without_adjectives(shape.subject)) != shape.subject:
        out += _shortened(replace(shape, subject=plain), passage, max_copied)
    return list(dict.fromkeys(out))


def _shortened(shape: Shape, passage: str, max_copied: int) -> list[str]:
    """The texts of ``shape`` with its subject cut back and its qualifier left out (in that
    order) that copy at most ``max_copied`` consecutive words of ``passage``: the first one
    as short as it must be, the others whole noun phrases (the subject whole or up to a
    preposition, never "the median" of "the median incubation period")."""
    out = []
    full = len(shape.subject)
    for qualifier in (True, False):
        for n in range(full, -1 if not shape.subject else 0, -1):
            while n > 1 and shape.subject[n - 1].casefold() in _PREPOSITIONS | _DETERMINERS | _CUT:
                n -= 1  # never end the subject on a function word
            cut = [
                i for i in range(1, n) if shape.subject[i].casefold() in _PREPOSITIONS
            ]  # shorter: up to a preposition ("the first cases of ..." -> "the first cases")
            if n < full and cut:
                n = cut[-1]
            if n and shape.subject[n - 1].casefold() in _PREPOSITIONS | _DETERMINERS | _CUT:
                continue  # "How long was the?"
            text = shape.text(n, qualifier)
            if copied_run(text, passage) > max_copied:
                continue
            if len(re.findall(r"\w+", text)) < 3:
                return out  # shorter still says nothing
            whole = n == full or shape.subject[n].casefold() in _PREPOSITIONS
            if text not in out and (whole or not out):
                out.append(text)
    return out


def _without_adjectives(subject: list[str]) -> list[str]:
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


# words a subject never opens with (a clause, an adverb, a pronoun that names nothing)
_NOT_SUBJECT = frozenset(
    [
        "we",
        "it",
        "this",
        "these",
        "those",
        "they",
        "here",
        "there",
        "which",
        "that",
        "because",
        "based",
        "given",
        "unlike",
        "to",
        "just",
        "while",
        "whereas",
        "although",
        "though",
        "once",
        "however",
        "thus",
        "therefore",
        "also",
        "since",
        "if",
        "when",
        "where",
        "as",
        "using",
        "due",
        "our",
        "us",
        "i",
        "you",
        "he",
        "she",
        "one",
        "such",
    ]
)
_NOT_SUBJECT = _NOT_SUBJECT | frozenset(
    ["its", "their", "his", "her", "then", "next", "further", "first", "data", "values"]
)
_CLAUSE_OPENERS = frozenset(
    ["compared", "based", "given", "using", "following", "according", "regarding", "due"]
)
_NOT_NOUNS = frozenset(["least", "most", "more", "less", "same", "other", "last"])
_PRONOUNS = frozenset(["we", "it", "they", "this", "these", "those", "here", "there", "our"])
# an abbreviation: capitals only, perhaps a plural or one lower-case letter ("TB", "ASCs",
# "RNAi"), one or two of them ("HCV ELISA"); "ACE2" and "HIV-1" name things and are asked for
_ACRONYMS = re.compile(r"[A-Z]{2,6}[a-z]?(?: [A-Z]{2,6}[a-z]?)?")
_SYMBOL = re.compile(r"[±°˚×=<>|~≤≥]")
_ADJECTIVE = re.compile(r"\w+(?:ous|ed|ing|al|ive|ic|ible|able|ful|less|like)$")


def _fluent(shape: Shape, answer_text: str, sentence: str, answer: Answer) -> bool:
    """Whether the question reads as a person's: a subject that opens like a noun phrase and
    holds no verb or clause, a ``which`` followed by a noun, an answer that is a whole name or
    number (not "IFITM-like", not "17 - ODYA", not a table's "° F")."""
    if shape.language == "en":
        if shape.subject:
            first = shape.subject[0].casefold()
            if first in _NOT_SUBJECT or first in _PREPOSITIONS or first.endswith("ly"):
                return False
            if first in _CLAUSE_OPENERS or (first.endswith("ing") and first.isalpha()):
                return False  # "compared to ...", "identifying ...": no noun phrase
            words = [Token(w, 0, 0) for w in shape.subject]
            if _verbs(words) or any(w in (",", ";", ":", "(", ")") for w in shape.subject):
                return False
            if any(
                w.casefold() in {"is", "are", "was", "were", "we", "it", "they", "which", "that"}
                for w in shape.subject[1:]
            ):
                return False
        if any(w.casefold() in _CUT | _PRONOUNS for w in shape.rest):
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
    if shape.language == "en" and answer.kind == "name" and _ACRONYMS.fullmatch(answer_text):
        return False  # "TB", "RTI", "HCV ELISA": people do not ask for an abbreviation
    if shape.language == "en" and (
        shape.opening[:1]
        and shape.opening[0] in _PREPOSITIONS
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
        be_only = shape.opening[-1:] and shape.opening[-1].casefold() in _BE and not shape.rest
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


_CLAUSE_JOINS = frozenset(["while", "whereas", "although", "though", "but"])


def _split(sentence: str, answer: Answer) -> tuple[list[Token], list[Token]]:
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


def _strip_fronted(before: list[Token]) -> tuple[list[Token], list[Token]]:
    """(the fronted phrase, the clause): "In 2019, the company ..." -> ("In 2019", "the company ...")."""
    if before and before[0].low in _PREPOSITIONS | {"as"}:
        comma = next((i for i, t in enumerate(before) if t.text == ","), None)
        if comma is not None and comma <= 6:
            return before[:comma], before[comma + 1 :]
    return [], before


def _verbs(clause: list[Token], tagged: dict[int, tuple[str, str]] | None = None) -> list[int]:
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
                    and prev not in _PREPOSITIONS | _DETERMINERS | {",", "also"}
                )
            ):
                out.append(i)
            continue
        if not is_verb(t):
            continue
        if t.low.endswith("ed") and prev in _PREPOSITIONS | _DETERMINERS | {"and", "or"}:
            continue
        if t.low.endswith("ed") and prev in (",", "also"):
            continue  # "Inflammatory lung disease, also called COPD, ...": a participle
        out.append(i)
    return out


# what follows a participle that is the clause's verb: its object
_OBJECT_TAGS = frozenset(["DT", "CD", "PRP$", "NN", "NNS", "NNP", "NNPS", "JJ", "PRP"])


def _compound(token: Token, tagged: dict[int, tuple[str, str]]) -> bool:
    """Whether ``token`` goes on the noun phrase before it (a noun, an adjective, a participle):
    the phrase a question would ask about is longer than its first noun."""
    tag = tagged.get(token.start, ("", ""))[0]
    return tag.startswith("NN") or tag in ("JJ", "VBN", "VBG")


def _tagged(sentence: str) -> dict[int, tuple[str, str]]:
    """(the part-of-speech tag of each token of ``sentence``, the next token's), by the token's
    start."""
    toks = tokens(sentence)
    tags = pos_tags([t.text for t in toks])
    return {t.start: (tag, nxt) for t, tag, nxt in zip(toks, tags, [*tags[1:], ""], strict=True)}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# a subject's head noun that names no thing a person asks for ("The results showed ...")
_GENERIC_HEADS = _words(
    "study studies result results data analysis analyses finding findings author authors paper "
    "article table figure fig review work approach method methods other others researcher "
    "researchers investigator investigators group groups example examples case cases reason "
    "reasons aim aims purpose objective objectives goal question questions part parts number "
    "model models report reports evidence observation observations experiment experiments "
    "sample samples section chapter total majority"
)
# a subject opening with one of these points back or counts rather than names
_NOT_NAMING = _words(
    "this these that those such our their its his her each both all some many most several other "
    "another any no none few either neither"
)
_RELATIVE = frozenset(["which", "that", "who", "whom", "whose", "where", "when", "while"])
# verbs of reporting and lab procedure: "X are presented in Table 1", "Plates were washed ..."
# ask about the paper's layout or its bench work, not its findings
_PROCEDURE_VERBS = _words(
    "presented described shown listed summarized summarised depicted illustrated given provided "
    "discussed detailed reviewed washed incubated performed conducted carried stained "
    "centrifuged diluted stored mixed added transferred collected obtained prepared included "
    "excluded recorded defined extracted subjected analysed analyzed purified amplified "
    "sequenced cloned examined evaluated approved"
)
# verbs by which a paper reports a finding; as a clause's own verb its subject is the study or
# the image ("Brain MRI showed ...", "Kweik and colleagues found ..."), not the finding
_REPORTING_VERBS = _words(
    "found find finds showed show shows shown revealed reveals reported reports demonstrated "
    "demonstrates suggested suggests indicated indicates observed noted concluded"
)
# what a subject question's predicate may not name: the paper's own parts, a pointer back
_NOT_IN_PREDICATE = _words(
    "table tables fig figs figure figures supplementary this these those our their its here "
    "above below previously"
)
_AUXILIARIES = _BE | _HAVE | _MODAL | frozenset(["been", "being", "do", "does", "did"])


def _named(word: str) -> bool:
    """A compound name the tagger may call an adjective ("S-palmitoylation", "IFITM3-like" not)."""
    return "-" in word and word[:1].isupper() and not word.endswith("like")


def subject_answer(sentence: str, subject_words: int = 8) -> tuple[int, int] | None:
    """The span (characters of ``sentence``) of its clause's subject where that names a thing a
    person would ask for: "S-palmitoylation on the protein regulates the antiviral activity of
    IFITM3" -> "S-palmitoylation on the protein", asked "What regulates ...?". English only.

    The subject is the words before the clause's first finite verb (:func:`_verbs`, a fronted
    "In 2019," left out): at most ``subject_words`` words, all words (no comma, bracket or
    number), ending on a noun (by its tag), with no relative pronoun, no verb but a gerund,
    not opening with a pronoun, a determiner that points back ("these", "our"), a quantifier
    ("many", "all") or an adverb, and with a head noun that names something ("the results",
    "previous studies", "the majority" name nothing a question asks for). None otherwise."""
    toks = tokens(sentence)
    _, clause = _strip_fronted(toks)
    tagged = _tagged(sentence)
    verbs = _verbs(clause, tagged)
    if not verbs:
        return None
    subject = clause[: verbs[0]]
    if not 1 <= len(subject) <= subject_words or len(clause) < verbs[0] + 2:
        return None  # no subject, a long one, or no predicate after the verb
    tags = [tagged.get(t.start, ("", ""))[0] for t in subject]
    first = subject[0].low
    head = next(
        (i for i, t in enumerate(subject) if i > 0 and t.low in _PREPOSITIONS), len(subject)
    )
    if (
        not tags[-1].startswith("NN")
        or not (tags[head - 1].startswith("NN") or _named(subject[head - 1].text))
        or subject[head - 1].low in _GENERIC_HEADS  # "The majority of HBoV1 infections"
        or any(not (t.text[:1].isalpha()) for t in subject)
        or any(t.low in _RELATIVE for t in subject)
        or any(tag in FINITE or tag == "VBN" for tag in tags)
        or first in _NOT_SUBJECT | _PRONOUNS | _NOT_NAMING | _PREPOSITIONS | _CLAUSE_OPENERS
        or (first.endswith("ly") and len(subject) > 1)
        or _ACRONYMS.fullmatch(join(subject))
    ):
        return None
    return subject[0].start, subject[-1].end


# a subject question copies its predicate, which is what it asks about: it may copy this many
# more consecutive words of the passage than ``max_copied`` (of the 213 human questions of the
# first 30 COVID-QA papers, the median copies 3, and 8 copy 6 or 7)
SUBJECT_EXTRA_COPIED = 2


def _subject_shape(after: list[Token], qualifier_words: int) -> Shape | None:
    """ "What" + the predicate after a subject answer: the verb and its object up to the first
    preposition, then the prepositional phrases as the qualifier (at most ``qualifier_words`` + 2
    words), each up to a comma or conjunction. None where the predicate names the paper's
    layout or bench work, reports a finding, is "be" + a bare noun or goes on into another
    clause."""
    phrase: list[Token] = []
    for t in after:
        if t.text in ",;:.!?()" or t.low in _CUT:
            break
        phrase.append(t)
    tags = pos_tags([t.text for t in phrase])
    auxiliary = [
        t.low in _AUXILIARIES or tag.startswith("RB") for t, tag in zip(phrase, tags, strict=True)
    ]
    main = auxiliary.index(False) if False in auxiliary else len(phrase)  # the main verb
    if (
        main == len(phrase)
        or phrase[main].low in _PROCEDURE_VERBS
        or (main == 0 and phrase[0].low in _REPORTING_VERBS)
        or (main > 0 and phrase[main - 1].low in _BE and tags[main].startswith("NN"))  # "X is
        # HIV infection": "What is HIV infection?" would ask for a definition, not for X
        or any(tag in FINITE for tag in tags[main + 1 :])  # "A cocktail of biotin conjugated
        # antibody was used": another clause's verb, the subject misread
        or any(t.low in _NOT_IN_PREDICATE for t in phrase)
    ):
        return None
    ended = after[len(phrase)].low if len(phrase) < len(after) else ""
    last = max((i for i, t in enumerate(phrase) if t.low in _PREPOSITIONS), default=-1)
    if (
        last > 0
        and ended in ("and", "or", "to")
        and (phrase[last].low in ("between", "from") or len(phrase) - last <= 2)
    ):  # "between June [and September]", "of medium [and high educational level]": the
        # phrase cut in two, its last prepositional phrase left out
        phrase = phrase[:last]
    if phrase and len(phrase[-1].text) == 1 and phrase[-1].text.isalpha():
        return None  # "for GFP-expressing E[. coli]": an abbreviation cut at its point
    split = next((i for i, t in enumerate(phrase) if i > 1 and t.low in _PREPOSITIONS), len(phrase))
    rest, qualifier = phrase[:split], phrase[split:]
    if len(qualifier) > qualifier_words + 2:  # a long one up to its next preposition, or none
        cut = [
            i
            for i, t in enumerate(qualifier[: qualifier_words + 3])
            if i > 0 and t.low in _PREPOSITIONS
        ]
        qualifier = qualifier[: cut[-1]] if cut else []
    while qualifier and qualifier[-1].low in _PREPOSITIONS | _DETERMINERS:
        qualifier = qualifier[:-1]
    while rest and rest[-1].low in _PREPOSITIONS | _DETERMINERS:
        rest = rest[:-1]
    if not rest or len(rest) > 6:
        return None
    return Shape(["what"], [], [t.text for t in rest], [t.text for t in qualifier], "en")


def _subject_wordings(shape: Shape, passage: str, max_copied: int) -> list[str]:
    """The wordings of a subject question, the most specific first: with its whole qualifier,
    with the qualifier's first prepositional phrase ("What is the main cause of death?"), without
    it, each where it copies at most ``max_copied`` + :data:`SUBJECT_EXTRA_COPIED` consecutive
    words of ``passage`` and still holds a noun and two content words after the verb (not "What
    are primarily involved?")."""
    second = next(
        (i for i, w in enumerate(shape.qualifier) if i > 0 and w.casefold() in _PREPOSITIONS),
        len(shape.qualifier),
    )
    out = []
    for qualifier in (shape.qualifier, shape.qualifier[:second], []):
        while qualifier and qualifier[-1].casefold() in _PREPOSITIONS | _DETERMINERS:
            qualifier = qualifier[:-1]
        text = replace(shape, qualifier=qualifier).text()
        words = [*shape.rest[1:], *qualifier]
        if (
            copied_run(text, passage) <= max_copied + SUBJECT_EXTRA_COPIED
            and any(t.startswith("NN") for t in pos_tags([*shape.rest, *qualifier])[1:])
            and sum(len(w) >= 3 and w.casefold() not in STOP_EN | _BE for w in words) >= 2
            and text not in out
        ):
            out.append(text)
    return out


def _english(
    sentence: str, answer: Answer, document: str, subject_words: int, qualifier_words: int
) -> Shape | None:
    before, after = _split(sentence, answer)
    kind = answer.kind
    if kind == "definition":  # "ACE2 is a membrane protein ..." -> "What is ACE2?"
        verb = before[-1].low if before else ""
        term = [t.text for t in before[:-1]]
        if verb not in ("is", "are") or not term or len(term) > subject_words + 1:
            return None
        return Shape(["what", verb], _lower_first(term, document), [], [], "en")
    if kind == "subject":  # "S-palmitoylation ... regulates X" -> "What regulates X?"
        return _subject_shape(after, qualifier_words)
    tagged = _tagged(sentence)
    wh = _WH["en"][kind].split()
    # "In 2018, the company acquired ...": the date fronted, the clause after its comma
    if (
        kind == "date"
        and after[:1]
        and after[0].text == ","
        and all(t.low in _PREPOSITIONS for t in before)
    ):
        clause = after[1:]
        verbs = _verbs(clause, tagged)
        if not verbs:
            return None
        v = verbs[0]
        subject = _lower_first([t.text for t in _head(clause[:v], subject_words + 3)], document)
        rest = _predicate(clause[v + 1 :], qualifier_words)
        if not subject:
            return None
        return _inverted(wh, clause[v], subject, rest, [], "en")
    if kind == "name" and after[:2] and after[0].low == "et" and after[1].low.startswith("al"):
        wh = ["who"]
        after = after[2:]
        if after and after[0].text == ".":
            after = after[1:]
    elif (
        kind == "name"
        and after
        and after[0].word
        and after[0].text.islower()
        and not is_verb(after[0])
        and after[0].low not in _PREPOSITIONS | _CUT | _DETERMINERS
    ):  # a name before a noun ("the ACE2 receptor") asks "which receptor"
        if len(after) > 1 and _compound(after[1], tagged):
            return None  # "the Chinese Bovine coronavirus strain BCV-AKS-01": which strain?
        wh = ["which", after[0].text]
        after = after[1:]
        if before and before[-1].low in _DETERMINERS:
            before = before[:-1]
    if kind == "count":
        if not after or not after[0].word:
            return None
        if len(after) > 1 and _compound(after[1], tagged):
            return None  # "6 times increased odds of ...": the count is not of "times" alone
        wh = ["how", "many", after[0].text]
        after = after[1:]
    if (
        kind == "number"
        and len(before) >= 2
        and before[-1].text.isalpha()
        and before[-1].text.islower()
        and before[-1].low not in _PREPOSITIONS | _DETERMINERS | _CUT | STOP_EN
        and before[-2].low in _PREPOSITIONS
    ):  # "started in week 49" asks "in which week"
        wh = ["which", before[-1].text]
        before = before[:-1]
    if kind == "percent" and after[:1] and after[0].low == "of":
        wh = ["what", "share", "of"]
        after = after[1:]
    fronted, clause = _strip_fronted(before)
    while clause and clause[-1].low in _HEDGES:  # "about", "approximately", "nearly", ...
        clause = clause[:-1]
    verbs = _verbs(clause, tagged)
    if not verbs and len(clause) <= 1:
        # the answer is the subject: the question word takes its place
        if kind == "date":
            return None
        if kind == "percent" and wh[-1] == "of":
            np: list[Token] = []
            for t in after:
                if is_verb(t):
                    break
                np.append(t)
            if len(np) > subject_words or len(np) == len(after):
                return None
            rest = _predicate(after[len(np) :], qualifier_words + 2)
            return Shape(wh, [t.text for t in np], rest, [], "en") if rest else None
        rest = _predicate(after, qualifier_words + 2)
        if not rest or not is_verb(Token(rest[0], 0, 0)):
            return None
        if kind == "name" and wh == ["what"] and rest[0].casefold() in _BE:
            return None  # "What was founded in ...?" asks too little
        return Shape(wh, [], rest, [], "en")
    # no verb found but words before the answer: the last one is a present-tense verb
    # ("metered dose inhalers deliver 40 doses")
    if not verbs and (
        kind != "count"
        or not clause[-1].text.isalpha()
        or not clause[-1].text.islower()
        or clause[-1].low in _PREPOSITIONS | _DETERMINERS | _CUT | STOP_EN
        or tagged.get(clause[-1].start, ("", ""))[0] not in ("VB", "VBP")
    ):
        return None  # only "<subject> <verb> 40 doses" guesses a present-tense verb
    v = verbs[0] if verbs else len(clause) - 1
    subject = _lower_first([t.text for t in _head(clause[:v], subject_words + 3)], document)
    if not subject:
        return None
    verb = clause[v]
    between = clause[v + 1 :]  # "first identified in", "enrolled", "through the"
    if between and between[-1].low in _DETERMINERS:
        between = between[:-1]
    prep: list[str] = []
    if between and between[-1].low in _PREPOSITIONS:
        prep = [between[-1].low]
        between = between[:-1]
    cut = next((i for i, t in enumerate(between) if t.low in _PREPOSITIONS), len(between))
    if len(between) > 3 and kind != "name":
        between = between[:cut]  # "developed the first assay [for the antigen] in 2015"
    if len(between) > 3 or prep == ["of"]:
        return None  # a long object (a name inside it: "was unable to be detected by the
        # anti-histidine Ab"), or "of" (the answer qualifies a noun: ambiguous)
    if (
        kind == "name"
        and not prep
        and any(tagged.get(t.start, ("", ""))[0].startswith("NN") for t in between)
    ):
        return None  # "found an association with maternal DNA": the name qualifies a noun
        # of its own phrase, which the question would leave out
    qualifier = [t.text for t in _qualifier(after, qualifier_words)]
    if not qualifier and fronted and kind != "date":
        qualifier = [t.low if i == 0 else t.text for i, t in enumerate(fronted)][:qualifier_words]
    mid = [t.text for t in between]
    low = verb.low
    trailing: list[str] = []
    if kind == "date":
        prep = [p for p in prep if p == "since"]
    elif kind in ("money", "percent", "number") and low in _CHANGE and prep in ([], ["by"]):
        wh = ["by", "how", "much"] if kind == "percent" else wh
        prep = []
    elif kind == "percent" and low in _BE and not prep:
        wh = ["what"]
    if kind == "percent" and (prep or wh[-1] == "of"):
        return None  # "in 4% formaldehyde", "10% of the cases were examined": no question
    elif kind == "name" and prep and prep[0] in ("at", "in", "from") and wh == ["what"]:
        wh, prep = ["where"], []
    if prep and kind in ("money", "count"):
        trailing, prep = prep, []  # "How much was it valued at?"
    return _inverted([*prep, *wh], verb, subject, [*mid, *trailing], qualifier, "en")


STOP_EN = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "it",
        "its",
        "they",
        "them",
        "their",
        "there",
        "here",
        "not",
        "no",
        "than",
        "then",
        "also",
        "very",
    ]
)
_HEDGES = frozenset(
    [
        "about",
        "approximately",
        "nearly",
        "only",
        "around",
        "almost",
        "roughly",
        "over",
        "under",
        "some",
        "just",
    ]
)


def _inverted(
    opening: list[str], verb: Token, subject: list[str], rest: list[str], qualifier, language
) -> Shape | None:
    """``opening`` + the verb inverted around ``subject``: ``be``, a modal or ``have`` + a
    participle before it, else ``did`` / ``does`` / ``do`` and the verb's base form."""
    low = verb.low
    if low in _BE or low in _MODAL or (low in _HAVE and rest and rest[0].endswith(("ed", "en"))):
        return Shape([*opening, low], subject, rest, qualifier, language)
    aux = "did" if _is_past(verb.text) else ("does" if low.endswith("s") else "do")
    return Shape([*opening, aux], subject, [base_form(verb.text), *rest], qualifier, language)


def _predicate(after: list[Token], limit: int) -> list[str]:
    """The verb phrase after a subject answer, up to a comma or conjunction, at most ``limit``."""
    out: list[str] = []
    for t in after:
        if t.text in ",;:.!?()" or t.low in _CUT:
            break
        out.append(t.text)
    if len(out) > limit:
        cut = [i for i, w in enumerate(out[:limit]) if w.casefold() in _PREPOSITIONS]
        out = out[: cut[-1]] if cut and cut[-1] >= 2 else out[:limit]
    while out and (out[-1].casefold() in _PREPOSITIONS or out[-1].casefold() in _DETERMINERS):
        out.pop()
    return out


def _spanish(
    sentence: str, answer: Answer, document: str, subject_words: int, qualifier_words: int
) -> Shape | None:
    before, after = _split(sentence, answer)
    kind = answer.kind
    wh = _WH["es"][kind].split()
    if kind == "count":
        if not after or not after[0].word:
            return None
        noun = after[0].text
        wh = ["cuántas" if _FEMININE.match(noun) and noun.casefold() != "días" else "cuántos", noun]
        after = after[1:]
    fronted, clause = _strip_fronted(before)
    # the preposition and article before the answer ("a los") go in front of the question word
    prep: list[str] = []
    while clause and clause[-1].low in _SPANISH_STOP:
        prep.insert(0, clause[-1].low)
        clause = clause[:-1]
    if kind == "date":
        prep = []
    if prep and prep[-1] in ("el", "la", "los", "las", "un", "una") and len(prep) == 1:
        prep = []
    if not clause:
        return None
    verb = clause[-1].text
    subject_tokens = _head(clause[:-1], subject_words + 3)
    subject = _lower_first([t.text for t in subject_tokens], document)
    qualifier = [t.text for t in _qualifier(after, qualifier_words)]
    opening = [*prep, *wh]
    if kind == "count" and qualifier and qualifier[0].casefold() in ("por", "de"):
        opening, qualifier = [*opening, *qualifier], []
    return Shape([*opening, verb], subject, [], qualifier, "es")
