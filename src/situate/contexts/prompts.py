"""Prompt variants for LLM contexts (``conf/prompt/*.yaml``), in our own words.

A variant renders two blocks per chunk: the *document block* (the whole document, plus a glossary
when the variant has one), identical for every chunk of a document so providers can cache it, and
the *chunk block* (the chunk and the instructions). Templates are ``str.format`` strings over
``document``, ``chunk``, ``title``, ``heading_path`` and ``glossary``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from situate.errors import SituateError
from situate.records import Chunk, Document

FIELDS = ("document", "chunk", "title", "heading_path", "glossary")


@dataclass(frozen=True)
class RenderedPrompt:
    document: str  # the cached prefix ("" when the variant doesn't send the document)
    prompt: str
    answer_prefix: str


class PromptVariant:
    """One way of asking for a chunk's context.

    Parameters
    ----------
    name : str
        The variant's name (recorded with every context).
    document_template : str
        The cached block; empty to send no document (the local model's hybrid prompt).
    chunk_template : str
        The per-chunk block with the instructions.
    answer_prefix : str
        Text the answer must start with, filled by our code ("This chunk is from {title}...").
    max_tokens : int
        Output tokens allowed per context.
    glossary : str or None
        A glossary for the cached block: a file path (one "term: definition" per line), or
        ``"corpus"`` to use terms defined elsewhere in the corpus ("X is/are ..." and
        "X: definition" lines), or None.
    glossary_terms : int
        At most this many corpus terms.
    """

    def __init__(
        self,
        name: str,
        chunk_template: str,
        document_template: str = "",
        answer_prefix: str = "",
        max_tokens: int = 150,
        glossary: str | None = None,
        glossary_terms: int = 40,
    ):
        for template in (document_template, chunk_template, answer_prefix):
            for field_name in re.findall(r"(?<!\{)\{(\w+)\}", template):
                if field_name not in FIELDS:
                    raise SituateError(
                        f"prompt {name}: unknown template field {{{field_name}}}; use {', '.join(FIELDS)}"
                    )
        self.name = name
        self.document_template = document_template
        self.chunk_template = chunk_template
        self.answer_prefix = answer_prefix
        self.max_tokens = max_tokens
        self.glossary = glossary
        self.glossary_terms = glossary_terms
        self._glossary_text: str | None = None

    def identity(self) -> dict:
        """The texts that change an answer (a glossary enters through the rendered prompt)."""
        return {
            "document_template": self.document_template,
            "chunk_template": self.chunk_template,
            "answer_prefix": self.answer_prefix,
            "max_tokens": self.max_tokens,
        }

    def prepare(self, documents: list[Document]) -> None:
        """Build the glossary once per corpus (a file's, or terms defined across the corpus)."""
        if not self.glossary:
            self._glossary_text = ""
        elif self.glossary == "corpus":
            self._glossary_text = corpus_glossary(documents, self.glossary_terms)
        else:
            path = Path(self.glossary)
            if not path.is_file():
                raise SituateError(
                    f"prompt {self.name}: glossary file {path} not found; fix prompt.glossary"
                )
            self._glossary_text = path.read_text(encoding="utf-8").strip()

    def render(
        self, document: Document, chunk: Chunk, document_text: str | None = None
    ) -> RenderedPrompt:
        """The blocks for ``chunk``; ``document_text`` replaces the document (a window of it)."""
        if self._glossary_text is None:
            self.prepare([document])
        values = {
            "document": document.text if document_text is None else document_text,
            "chunk": chunk.text,
            "title": document.title or document.doc_id,
            "heading_path": " > ".join(chunk.heading_path) or "(top level)",
            "glossary": self._glossary_text or "(none)",
        }
        return RenderedPrompt(
            document=self.document_template.format(**values) if self.document_template else "",
            prompt=self.chunk_template.format(**values),
            answer_prefix=self.answer_prefix.format(**values),
        )


_DEFINITION = re.compile(
    r"^\s*(?:[-*]\s*)?([A-Z][\w\- ]{1,40}?)\s*(?::|—| - | is | are )\s*(.{10,200}?)[.\n]", re.M
)


def corpus_glossary(documents: list[Document], limit: int) -> str:
    """``term: definition`` lines for capitalised terms defined in the corpus, most used first."""
    definitions: dict[str, str] = {}
    for doc in documents:
        for term, definition in _DEFINITION.findall(doc.text):
            definitions.setdefault(term.strip(), definition.strip())
    if not definitions:
        return ""
    usage = Counter()
    for doc in documents:
        for term in definitions:
            usage[term] += doc.text.count(term)
    ranked = sorted(definitions, key=lambda t: (-usage[t], t))[:limit]
    return "\n".join(f"{t}: {definitions[t]}" for t in sorted(ranked))
