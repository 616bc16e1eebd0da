"""Faithfulness audit: tokens in a context that its document never mentions.

A context that names a number, a code identifier or a capitalised name absent from its document
may be invented. The audit lists such tokens per context; it flags, it does not judge (a context
may legitimately paraphrase).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from situate.records import Chunk, Context, Corpus

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*%?")
# snake_case, camelCase, dotted.names, names with () or `backticks`
_IDENTIFIER = re.compile(r"`([^`\s]{2,})`|\b([A-Za-z_]\w*(?:_\w+|\.\w+)+|[a-z]+[A-Z]\w*)\b")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z]{2,}(?:\s+[A-Z][a-zA-Z]{2,})*)\b")
_COMMON = frozenset(
    [
        "The",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "In",
        "On",
        "For",
        "And",
        "But",
        "With",
        "From",
        "Here",
        "There",
    ]
)
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a"})


@dataclass(frozen=True)
class Flag:
    chunk_id: str
    context: str
    unsupported: tuple[str, ...]


def unsupported_tokens(context: str, document: str) -> list[str]:
    """Numbers, identifiers and capitalised names of ``context`` that ``document`` lacks."""
    return _missing(context, document.lower())


def _missing(context: str, lowered: str) -> list[str]:
    """:func:`unsupported_tokens` against a document already lower-cased (``lowered``)."""
    found: list[str] = []
    for m in _NUMBER.finditer(context):
        found.append(m.group(0).rstrip("%"))
    for m in _IDENTIFIER.finditer(context):
        found.append((m.group(1) or m.group(2)).strip("()"))
    for m in _CAPITALISED.finditer(context):
        found.extend(w for w in m.group(1).split() if w not in _COMMON)
    return [
        t
        for t in dict.fromkeys(found)
        if t and t.lower() not in _ABBREVIATIONS and t.lower() not in lowered
    ]


def audit(corpus: Corpus, chunks: list[Chunk], contexts: list[Context]) -> list[Flag]:
    """One ``Flag`` per non-empty context that has unsupported tokens.

    Each document is lower-cased once and each distinct context checked once against it (a rule
    context repeats per chunk of a document), so the audit grows with chunks plus document
    length, not with their product."""
    flags = []
    lowered: dict[str, str] = {}
    checked: dict[tuple[str, str], tuple[str, ...]] = {}
    for chunk, ctx in zip(chunks, contexts, strict=True):
        if not ctx.text:
            continue
        key = (chunk.doc_id, ctx.text)
        missing = checked.get(key)
        if missing is None:
            if chunk.doc_id not in lowered:
                lowered[chunk.doc_id] = corpus.document(chunk.doc_id).text.lower()
            missing = checked[key] = tuple(_missing(ctx.text, lowered[chunk.doc_id]))
        if missing:
            flags.append(Flag(chunk.chunk_id, ctx.text, missing))
    return flags
