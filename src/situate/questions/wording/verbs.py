"""English verbs as the question rules know them: the closed lists (``be``, ``have``, the modals,
verbs of change, irregular and common present forms), whether a token is a finite verb, its base
form and whether it is past."""

from __future__ import annotations

from situate.questions.wording.tokens import Token
from situate.questions.wording.words import word_set

BE = frozenset(["is", "are", "was", "were", "am", "be"])


HAVE = frozenset(["has", "have", "had"])


MODAL = frozenset(["can", "could", "may", "might", "must", "shall", "should", "will", "would"])


CHANGE = word_set(
    "increased decreased rose fell grew declined dropped improved increase decrease rise fall "
    "grow decline drop increases decreases rises falls grows declines drops climbed"
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


_PRESENT = word_set(
    "uses binds contains includes causes shows requires provides remains represents accounts "
    "affects infects encodes induces inhibits reduces enters mediates holds offers covers allows "
    "enables leads occurs appears exceeds reaches totals amounts comprises consists depends "
    "involves results lasts takes gives makes costs pays sells employs operates owns produces "
    "expresses targets recognizes activates regulates blocks prevents supports delivers admits "
    "ranges varies"
)


_NOT_VERBS = word_set(
    "need red bed seed feed speed shed hundred based related limited united detailed advanced "
    "selected skilled"
)


def is_verb(token: Token) -> bool:
    """Whether ``token`` is a finite verb of English by the closed lists and the -ed rule."""
    low = token.low
    if low in BE or low in HAVE or low in MODAL or low in _IRREGULAR or low in _PRESENT:
        return True
    if low in CHANGE:
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


def is_past(verb: str) -> bool:
    low = verb.casefold()
    return (low in _IRREGULAR and low not in ("has", "shown")) or low.endswith("ed")
