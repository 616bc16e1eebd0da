"""A sentence's word tokens for the question rules, how they are joined back into text, and how
many consecutive words a question copies from its passage."""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[$€£]?\d[\d,.]*\d%?|[$€£]?\d%?|[^\W_][\w'’-]*|[^\w\s]", re.U)


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
