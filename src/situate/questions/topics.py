"""The topic of an answer's neighbourhood: the name the text around it repeats.

A person asking about a passage names what the passage is about, often with words of the
sentences around the answer rather than of the answer's own sentence ("What is the median time
until death for MERS-CoV?" asked of "... while the median time until death is 11-13 days ...").
:func:`neighbourhood_topic` finds that name for ``question_generator.wording=passage``
(:mod:`situate.questions.extractive`, step 5):

1. **The neighbourhood**: ``window`` whitespace tokens either side of the answer's sentence,
   the sentence included, never across a heading (a line opening with ``#``): about what a
   chunk of ``2 x window`` tokens holding the sentence would hold.
2. **Its names**: runs of capitalised words (a run's first word left out where it opens a
   sentence, after ``.``, ``!``, ``?``, ``:``, a line break or the neighbourhood's start,
   unless it has a capital after its first letter: ``MERS-CoV``, ``DC-SIGNR``) and tokens
   mixing capitals and digits (``ACE2``, ``HIV-1``); never a stop word, a month, or a
   document's furniture (``Fig``, ``Table``, ``Section``, ``Item``, ...).
3. **The topic**: the name occurring most often in the neighbourhood (compared casefolded), at
   least ``min_count`` times, sharing no word part with the question or the answer ("HIV" is
   not the topic of a question naming "HIV-1", nor "RTIs" of one answered "RTI"); ties go to
   the name met first.
   None when no name repeats enough.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

_MIXED = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Z])[A-Za-z][\w-]*\w\b")  # ACE2, HIV-1
_CAPITALISED = re.compile(r"\b[A-ZÁÉÍÓÚÑ][\wáéíóúñ-]+(?:[ ]+[A-ZÁÉÍÓÚÑ][\wáéíóúñ-]+)*")
_MONTH_NAMES = (
    "january february march april may june july august september october november december "
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre"
)
_MONTHS = frozenset(_MONTH_NAMES.split())
# words that name a part of a document (or a person's title), not what it is about
_FURNITURE_WORDS = (
    "fig figs figure figures table tables supplementary appendix section sections note notes "
    "item items page pages part chapter et al abstract introduction methods results discussion "
    "conclusion conclusions references text background tabla figura anexo dr mr mrs ms prof "
    "sr sra"
)
FURNITURE = frozenset(_FURNITURE_WORDS.split())


@dataclass(frozen=True)
class Topic:
    name: str  # as first written in the neighbourhood
    count: int  # occurrences there, casefolded


def neighbourhood(text: str, start: int, end: int, window: int) -> tuple[int, int]:
    """Characters of ``window`` (>= 1) whitespace tokens either side of ``text[start:end]``,
    clipped at the headings (lines opening with ``#``) before and after it."""
    starts, ends = _tokens(text)
    before = int(np.searchsorted(starts, start, "left"))  # tokens that start before the sentence
    lo = int(starts[before - window]) if before >= window else 0
    after = int(np.searchsorted(ends, end, "right"))  # the first token ending past it
    hi = int(ends[after + window - 1]) if len(ends) - after >= window else len(text)
    heading = [m.end() for m in re.finditer(r"(?m)^#[^\n]*\n", text[lo:start])]
    if heading:
        lo += heading[-1]
    below = re.search(r"(?m)^#", text[end:hi])
    if below is not None:
        hi = end + below.start()
    return lo, hi


@functools.lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Where each whitespace token of ``text`` starts and ends, found once per document (every
    question of a document asks for its neighbourhoods)."""
    found = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    starts, ends = zip(*found, strict=True) if found else ((), ())
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence (or ``text``, or a line)."""
    stripped = text[:start].rstrip(" \t\"'([¿¡")
    return not stripped or stripped[-1] in ".!?:\n\r"


def _parts(text: str) -> set[str]:
    """The casefolded word parts of ``text`` ("HIV-1" -> hiv, 1), digits left out."""
    return {w for w in re.findall(r"[^\W_]+", text.casefold()) if not w.isdigit()}


def _shares(name: str, held: set[str]) -> bool:
    """Whether a word part of ``name`` is one of ``held`` or, three letters or more, opens one
    or is opened by one (a plural: "RTIs" and "RTI")."""
    for part in _parts(name):
        for word in held:
            if part == word or (
                min(len(part), len(word)) >= 3 and (part.startswith(word) or word.startswith(part))
            ):
                return True
    return False


def names(text: str, stop: Collection[str]) -> list[tuple[int, str]]:
    """(position, name) of every name of ``text`` (the module docstring, step 2), in order."""
    found = {(m.start(), m.group()) for m in _MIXED.finditer(text)}
    for m in _CAPITALISED.finditer(text):
        words = m.group().split()
        start = m.start()
        if _opens_sentence(text, start) and not any(c.isupper() for c in words[0][1:]):
            start += len(words[0]) + 1
            words = words[1:]
        if words:
            found.add((start, " ".join(words)))
    return sorted(
        (p, n)
        for p, n in found
        if len(n) >= 2
        and not any(w.casefold() in stop or w.casefold() in _MONTHS for w in n.split())
        and not _parts(n) & FURNITURE
    )


@functools.lru_cache(maxsize=4096)
def _names_between(text: str, lo: int, hi: int, stop: frozenset[str]) -> tuple:
    """:func:`names` of ``text[lo:hi]``, once per neighbourhood (each wording of a sentence asks
    for the same one)."""
    return tuple(names(text[lo:hi], stop))


def neighbourhood_topic(
    text: str,
    start: int,
    end: int,
    *,
    window: int,
    taken: Collection[str],
    stop: Collection[str],
    min_count: int = 2,
) -> Topic | None:
    """The topic (module docstring) of the sentence ``text[start:end]``; ``taken``: the texts a
    topic must share no word with (the question, the answer)."""
    lo, hi = neighbourhood(text, start, end, window)
    counts: dict[str, int] = {}
    first: dict[str, tuple[int, str]] = {}
    for position, name in _names_between(text, lo, hi, frozenset(stop)):
        key = name.casefold()
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, (position, name))
    held = set().union(*(_parts(t) for t in taken)) - set(stop)
    candidates = [k for k, c in counts.items() if c >= min_count and not _shares(k, held)]
    if not candidates:
        return None
    best = min(candidates, key=lambda k: (-counts[k], first[k][0]))
    return Topic(first[best][1], counts[best])
