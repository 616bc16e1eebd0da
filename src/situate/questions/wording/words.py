"""Closed classes of English words the question rules test a token against: determiners,
prepositions, the words that end a phrase, the words a subject never opens with, pronouns, and
the rules' English stop words (a part of :data:`situate.words.stopwords.ENGLISH`)."""

from __future__ import annotations

import re

from situate.words.stopwords import ENGLISH


def word_set(text: str) -> frozenset[str]:
    """The words of ``text`` (split at white space) as a set."""
    return frozenset(text.split())


DETERMINERS = word_set("the a an this that these those its their his her our")


PREPOSITIONS = word_set(
    "in at on by for from to of with through into over under during since until via per across "
    "among between after before within without about against toward towards as"
)


CUT = word_set(
    "and or but which that who whom whose while whereas although because if when where so "
    "compared respectively"
)


# words a subject never opens with (a clause, an adverb, a pronoun that names nothing)
NOT_SUBJECT = word_set(
    "we it this these those they here there which that because based given unlike to just while "
    "whereas although though once however thus therefore also since if when where as using due "
    "our us i you he she one such"
) | word_set("its their his her then next further first data values")


CLAUSE_OPENERS = frozenset(
    ["compared", "based", "given", "using", "following", "according", "regarding", "due"]
)


PRONOUNS = frozenset(["we", "it", "they", "this", "these", "those", "here", "there", "our"])


# what a subject answer never opens with: the words above, a pronoun, a preposition, a clause
SUBJECT_NEVER_OPENS = NOT_SUBJECT | PRONOUNS | PREPOSITIONS | CLAUSE_OPENERS


# an abbreviation: capitals only, perhaps a plural or one lower-case letter ("TB", "ASCs",
# "RNAi"), one or two of them ("HCV ELISA"); "ACE2" and "HIV-1" name things and are asked for
ACRONYMS = re.compile(r"[A-Z]{2,6}[a-z]?(?: [A-Z]{2,6}[a-z]?)?")


# the stop words the rules skip besides the classes above (the auxiliaries, "it" and "they",
# "not", "than", "also", ...): a part of the one English list, the part the rules were tuned
# with (the whole list would also count "more", "other", "two" ... as saying nothing)
STOP_EN = ENGLISH & word_set(
    "is are was were be been has have had do does did it its they them their there here not no "
    "than then also very"
)
