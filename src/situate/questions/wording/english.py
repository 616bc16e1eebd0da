"""The English question rule: a sentence and its answer turned into a :class:`Shape` (the
question word by the answer's kind, the clause inverted around its verb: ``be``, a modal or
``have`` before the subject, else ``did`` / ``does`` / ``do`` and the base form)."""

from __future__ import annotations

from situate.questions.wording.clauses import (
    compound,
    finite_verbs,
    head_phrase,
    lower_first,
    qualifier_phrase,
    sentence_tags,
    split_at_answer,
    strip_fronted,
)
from situate.questions.wording.shape import Shape
from situate.questions.wording.spans import Answer
from situate.questions.wording.subjects import subject_shape
from situate.questions.wording.tokens import Token
from situate.questions.wording.verbs import BE, CHANGE, HAVE, MODAL, base_form, is_past, is_verb
from situate.questions.wording.words import (
    CUT,
    DETERMINERS,
    PREPOSITIONS,
    STOP_EN,
    word_set,
)

# the question word by the answer's kind
_WH = {
    "money": "how much",
    "duration": "how long",
    "percent": "what percentage",
    "date": "when",
    "count": "how many",
    "number": "what",
    "name": "what",
    "subject": "what",
}


def english_shape(
    sentence: str, answer: Answer, document: str, subject_words: int, qualifier_words: int
) -> Shape | None:
    before, after = split_at_answer(sentence, answer)
    kind = answer.kind
    if kind == "definition":  # "ACE2 is a membrane protein ..." -> "What is ACE2?"
        verb = before[-1].low if before else ""
        term = [t.text for t in before[:-1]]
        if verb not in ("is", "are") or not term or len(term) > subject_words + 1:
            return None
        return Shape(["what", verb], lower_first(term, document), [], [], "en")
    if kind == "subject":  # "S-palmitoylation ... regulates X" -> "What regulates X?"
        return subject_shape(after, qualifier_words)
    tagged = sentence_tags(sentence)
    wh = _WH[kind].split()
    # "In 2018, the company acquired ...": the date fronted, the clause after its comma
    if (
        kind == "date"
        and after[:1]
        and after[0].text == ","
        and all(t.low in PREPOSITIONS for t in before)
    ):
        clause = after[1:]
        verbs = finite_verbs(clause, tagged)
        if not verbs:
            return None
        v = verbs[0]
        subject = lower_first(
            [t.text for t in head_phrase(clause[:v], subject_words + 3)], document
        )
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
        and after[0].low not in PREPOSITIONS | CUT | DETERMINERS
    ):  # a name before a noun ("the ACE2 receptor") asks "which receptor"
        if len(after) > 1 and compound(after[1], tagged):
            return None  # "the Chinese Bovine coronavirus strain BCV-AKS-01": which strain?
        wh = ["which", after[0].text]
        after = after[1:]
        if before and before[-1].low in DETERMINERS:
            before = before[:-1]
    if kind == "count":
        if not after or not after[0].word:
            return None
        if len(after) > 1 and compound(after[1], tagged):
            return None  # "6 times increased odds of ...": the count is not of "times" alone
        wh = ["how", "many", after[0].text]
        after = after[1:]
    if (
        kind == "number"
        and len(before) >= 2
        and before[-1].text.isalpha()
        and before[-1].text.islower()
        and before[-1].low not in PREPOSITIONS | DETERMINERS | CUT | STOP_EN
        and before[-2].low in PREPOSITIONS
    ):  # "started in week 49" asks "in which week"
        wh = ["which", before[-1].text]
        before = before[:-1]
    if kind == "percent" and after[:1] and after[0].low == "of":
        wh = ["what", "share", "of"]
        after = after[1:]
    fronted, clause = strip_fronted(before)
    while clause and clause[-1].low in _HEDGES:  # "about", "approximately", "nearly", ...
        clause = clause[:-1]
    verbs = finite_verbs(clause, tagged)
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
        if kind == "name" and wh == ["what"] and rest[0].casefold() in BE:
            return None  # "What was founded in ...?" asks too little
        return Shape(wh, [], rest, [], "en")
    # no verb found but words before the answer: the last one is a present-tense verb
    # ("metered dose inhalers deliver 40 doses")
    if not verbs and (
        kind != "count"
        or not clause[-1].text.isalpha()
        or not clause[-1].text.islower()
        or clause[-1].low in PREPOSITIONS | DETERMINERS | CUT | STOP_EN
        or tagged.get(clause[-1].start, ("", ""))[0] not in ("VB", "VBP")
    ):
        return None  # only "<subject> <verb> 40 doses" guesses a present-tense verb
    v = verbs[0] if verbs else len(clause) - 1
    subject = lower_first([t.text for t in head_phrase(clause[:v], subject_words + 3)], document)
    if not subject:
        return None
    verb = clause[v]
    between = clause[v + 1 :]  # "first identified in", "enrolled", "through the"
    if between and between[-1].low in DETERMINERS:
        between = between[:-1]
    prep: list[str] = []
    if between and between[-1].low in PREPOSITIONS:
        prep = [between[-1].low]
        between = between[:-1]
    cut = next((i for i, t in enumerate(between) if t.low in PREPOSITIONS), len(between))
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
    qualifier = [t.text for t in qualifier_phrase(after, qualifier_words)]
    if not qualifier and fronted and kind != "date":
        qualifier = [t.low if i == 0 else t.text for i, t in enumerate(fronted)][:qualifier_words]
    mid = [t.text for t in between]
    low = verb.low
    trailing: list[str] = []
    if kind == "date":
        prep = [p for p in prep if p == "since"]
    elif kind in ("money", "percent", "number") and low in CHANGE and prep in ([], ["by"]):
        wh = ["by", "how", "much"] if kind == "percent" else wh
        prep = []
    elif kind == "percent" and low in BE and not prep:
        wh = ["what"]
    if kind == "percent" and (prep or wh[-1] == "of"):
        return None  # "in 4% formaldehyde", "10% of the cases were examined": no question
    elif kind == "name" and prep and prep[0] in ("at", "in", "from") and wh == ["what"]:
        wh, prep = ["where"], []
    if prep and kind in ("money", "count"):
        trailing, prep = prep, []  # "How much was it valued at?"
    return _inverted([*prep, *wh], verb, subject, [*mid, *trailing], qualifier, "en")


_HEDGES = word_set("about approximately nearly only around almost roughly over under some just")


def _inverted(
    opening: list[str], verb: Token, subject: list[str], rest: list[str], qualifier, language
) -> Shape | None:
    """``opening`` + the verb inverted around ``subject``: ``be``, a modal or ``have`` + a
    participle before it, else ``did`` / ``does`` / ``do`` and the verb's base form."""
    low = verb.low
    if low in BE or low in MODAL or (low in HAVE and rest and rest[0].endswith(("ed", "en"))):
        return Shape([*opening, low], subject, rest, qualifier, language)
    aux = "did" if is_past(verb.text) else ("does" if low.endswith("s") else "do")
    return Shape([*opening, aux], subject, [base_form(verb.text), *rest], qualifier, language)


def _predicate(after: list[Token], limit: int) -> list[str]:
    """The verb phrase after a subject answer, up to a comma or conjunction, at most ``limit``."""
    out: list[str] = []
    for t in after:
        if t.text in ",;:.!?()" or t.low in CUT:
            break
        out.append(t.text)
    if len(out) > limit:
        cut = [i for i, w in enumerate(out[:limit]) if w.casefold() in PREPOSITIONS]
        out = out[: cut[-1]] if cut and cut[-1] >= 2 else out[:limit]
    while out and (out[-1].casefold() in PREPOSITIONS or out[-1].casefold() in DETERMINERS):
        out.pop()
    return out
