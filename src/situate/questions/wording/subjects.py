"""A clause's subject as the answer (:func:`subject_answer`) and its question "What
<predicate>?" (:func:`subject_shape`, :func:`subject_wordings`): English only."""

from __future__ import annotations

from dataclasses import replace

from situate.questions.pos import FINITE
from situate.questions.pos import tags as pos_tags
from situate.questions.wording.clauses import (
    finite_verbs,
    sentence_tags,
    strip_fronted,
)
from situate.questions.wording.shape import Shape
from situate.questions.wording.tokens import Token, copied_run, join, tokens
from situate.questions.wording.verbs import BE, HAVE, MODAL
from situate.questions.wording.words import (
    ACRONYMS,
    CUT,
    DETERMINERS,
    PREPOSITIONS,
    STOP_EN,
    SUBJECT_NEVER_OPENS,
    word_set,
)

# a subject's head noun that names no thing a person asks for ("The results showed ...")
_GENERIC_HEADS = word_set(
    "study studies result results data analysis analyses finding findings author authors paper "
    "article table figure fig review work approach method methods other others researcher "
    "researchers investigator investigators group groups example examples case cases reason "
    "reasons aim aims purpose objective objectives goal question questions part parts number "
    "model models report reports evidence observation observations experiment experiments "
    "sample samples section chapter total majority"
)


# a subject opening with one of these points back or counts rather than names
_NOT_NAMING = word_set(
    "this these that those such our their its his her each both all some many most several other "
    "another any no none few either neither"
)


_RELATIVE = frozenset(["which", "that", "who", "whom", "whose", "where", "when", "while"])


# verbs of reporting and lab procedure: "X are presented in Table 1", "Plates were washed ..."
# ask about the paper's layout or its bench work, not its findings
_PROCEDURE_VERBS = word_set(
    "presented described shown listed summarized summarised depicted illustrated given provided "
    "discussed detailed reviewed washed incubated performed conducted carried stained "
    "centrifuged diluted stored mixed added transferred collected obtained prepared included "
    "excluded recorded defined extracted subjected analysed analyzed purified amplified "
    "sequenced cloned examined evaluated approved"
)


# verbs by which a paper reports a finding; as a clause's own verb its subject is the study or
# the image ("Brain MRI showed ...", "Kweik and colleagues found ..."), not the finding
_REPORTING_VERBS = word_set(
    "found find finds showed show shows shown revealed reveals reported reports demonstrated "
    "demonstrates suggested suggests indicated indicates observed noted concluded"
)


# what a subject question's predicate may not name: the paper's own parts, a pointer back
_NOT_IN_PREDICATE = word_set(
    "table tables fig figs figure figures supplementary this these those our their its here "
    "above below previously"
)


_AUXILIARIES = BE | HAVE | MODAL | frozenset(["been", "being", "do", "does", "did"])


def _named(word: str) -> bool:
    """A compound name the tagger may call an adjective ("S-palmitoylation", "IFITM3-like" not)."""
    return "-" in word and word[:1].isupper() and not word.endswith("like")


def subject_answer(sentence: str, subject_words: int = 8) -> tuple[int, int] | None:
    """The span (characters of ``sentence``) of its clause's subject where that names a thing a
    person would ask for: "S-palmitoylation on the protein regulates the antiviral activity of
    IFITM3" -> "S-palmitoylation on the protein", asked "What regulates ...?". English only.

    The subject is the words before the clause's first finite verb (:func:`finite_verbs`, a fronted
    "In 2019," left out): at most ``subject_words`` words, all words (no comma, bracket or
    number), ending on a noun (by its tag), with no relative pronoun, no verb but a gerund,
    not opening with a pronoun, a determiner that points back ("these", "our"), a quantifier
    ("many", "all") or an adverb, and with a head noun that names something ("the results",
    "previous studies", "the majority" name nothing a question asks for). None otherwise."""
    toks = tokens(sentence)
    _, clause = strip_fronted(toks)
    tagged = sentence_tags(sentence)
    verbs = finite_verbs(clause, tagged)
    if not verbs:
        return None
    subject = clause[: verbs[0]]
    if not 1 <= len(subject) <= subject_words or len(clause) < verbs[0] + 2:
        return None  # no subject, a long one, or no predicate after the verb
    tags = [tagged.get(t.start, ("", ""))[0] for t in subject]
    first = subject[0].low
    head = next((i for i, t in enumerate(subject) if i > 0 and t.low in PREPOSITIONS), len(subject))
    if (
        not tags[-1].startswith("NN")
        or not (tags[head - 1].startswith("NN") or _named(subject[head - 1].text))
        or subject[head - 1].low in _GENERIC_HEADS  # "The majority of HBoV1 infections"
        or any(not (t.text[:1].isalpha()) for t in subject)
        or any(t.low in _RELATIVE for t in subject)
        or any(tag in FINITE or tag == "VBN" for tag in tags)
        or first in SUBJECT_NEVER_OPENS | _NOT_NAMING
        or (first.endswith("ly") and len(subject) > 1)
        or ACRONYMS.fullmatch(join(subject))
    ):
        return None
    return subject[0].start, subject[-1].end


# a subject question copies its predicate, which is what it asks about: it may copy this many
# more consecutive words of the passage than ``max_copied`` (of the 213 human questions of the
# first 30 COVID-QA papers, the median copies 3, and 8 copy 6 or 7)
SUBJECT_EXTRA_COPIED = 2


def subject_shape(after: list[Token], qualifier_words: int) -> Shape | None:
    """ "What" + the predicate after a subject answer: the verb and its object up to the first
    preposition, then the prepositional phrases as the qualifier (at most ``qualifier_words`` + 2
    words), each up to a comma or conjunction. None where the predicate names the paper's
    layout or bench work, reports a finding, is "be" + a bare noun or goes on into another
    clause."""
    phrase: list[Token] = []
    for t in after:
        if t.text in ",;:.!?()" or t.low in CUT:
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
        or (main > 0 and phrase[main - 1].low in BE and tags[main].startswith("NN"))  # "X is
        # HIV infection": "What is HIV infection?" would ask for a definition, not for X
        or any(tag in FINITE for tag in tags[main + 1 :])  # "A cocktail of biotin conjugated
        # antibody was used": another clause's verb, the subject misread
        or any(t.low in _NOT_IN_PREDICATE for t in phrase)
    ):
        return None
    ended = after[len(phrase)].low if len(phrase) < len(after) else ""
    last = max((i for i, t in enumerate(phrase) if t.low in PREPOSITIONS), default=-1)
    if (
        last > 0
        and ended in ("and", "or", "to")
        and (phrase[last].low in ("between", "from") or len(phrase) - last <= 2)
    ):  # "between June [and September]", "of medium [and high educational level]": the
        # phrase cut in two, its last prepositional phrase left out
        phrase = phrase[:last]
    if phrase and len(phrase[-1].text) == 1 and phrase[-1].text.isalpha():
        return None  # "for GFP-expressing E[. coli]": an abbreviation cut at its point
    split = next((i for i, t in enumerate(phrase) if i > 1 and t.low in PREPOSITIONS), len(phrase))
    rest, qualifier = phrase[:split], phrase[split:]
    if len(qualifier) > qualifier_words + 2:  # a long one up to its next preposition, or none
        cut = [
            i
            for i, t in enumerate(qualifier[: qualifier_words + 3])
            if i > 0 and t.low in PREPOSITIONS
        ]
        qualifier = qualifier[: cut[-1]] if cut else []
    while qualifier and qualifier[-1].low in PREPOSITIONS | DETERMINERS:
        qualifier = qualifier[:-1]
    while rest and rest[-1].low in PREPOSITIONS | DETERMINERS:
        rest = rest[:-1]
    if not rest or len(rest) > 6:
        return None
    return Shape(["what"], [], [t.text for t in rest], [t.text for t in qualifier], "en")


def subject_wordings(shape: Shape, passage: str, max_copied: int) -> list[str]:
    """The wordings of a subject question, the most specific first: with its whole qualifier,
    with the qualifier's first prepositional phrase ("What is the main cause of death?"), without
    it, each where it copies at most ``max_copied`` + :data:`SUBJECT_EXTRA_COPIED` consecutive
    words of ``passage`` and still holds a noun and two content words after the verb (not "What
    are primarily involved?")."""
    second = next(
        (i for i, w in enumerate(shape.qualifier) if i > 0 and w.casefold() in PREPOSITIONS),
        len(shape.qualifier),
    )
    out = []
    for qualifier in (shape.qualifier, shape.qualifier[:second], []):
        while qualifier and qualifier[-1].casefold() in PREPOSITIONS | DETERMINERS:
            qualifier = qualifier[:-1]
        text = replace(shape, qualifier=qualifier).text()
        words = [*shape.rest[1:], *qualifier]
        if (
            copied_run(text, passage) <= max_copied + SUBJECT_EXTRA_COPIED
            and any(t.startswith("NN") for t in pos_tags([*shape.rest, *qualifier])[1:])
            and sum(len(w) >= 3 and w.casefold() not in STOP_EN | BE for w in words) >= 2
            and text not in out
        ):
            out.append(text)
    return out
