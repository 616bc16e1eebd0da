"""``context: heading_path``: a context written by code, not by an LLM.

The document title and the chunk's heading path ("Guide > Install > From source"; a first heading
that repeats the title is not said twice), optionally
followed by the ``top_terms`` most distinctive terms of the chunk's section by TF-IDF (a section is
all chunks of one document that share a heading path; documents without headings are one section).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from situate.contexts.base import RuleContext
from situate.records import Chunk, Context, Corpus
from situate.words.stopwords import ENGLISH

_TOKEN = re.compile(r"(?u)\b[^\W\d_][\w]{2,}\b")
# The English stop words and the verbs of method sections: the TF-IDF terms should name the
# section's subject, not its grammar
_STOP = ENGLISH | {"out", "use", "used", "using"}


def path_below_title(title: str, heading_path: tuple[str, ...]) -> tuple[str, ...]:
    """``heading_path`` without its first heading when that heading is the title (case and
    spacing aside): a document titled by its first heading says the title once."""
    same = (
        heading_path
        and " ".join(heading_path[0].split()).casefold() == " ".join(title.split()).casefold()
    )
    return heading_path[1:] if same else heading_path


class HeadingPathContext(RuleContext):
    """Title and heading path (and optionally TF-IDF terms) as the context of each chunk.

    Parameters
    ----------
    top_terms : int
        How many of the section's most distinctive terms to add (0 adds none).
    """

    name = "heading_path"

    def __init__(
        self,
        top_terms: int = 0,
        placement: str = "before",
        separator: str = "\n\n",
        apply_to: Sequence[str] = ("dense", "sparse", "rerank"),
    ):
        super().__init__(placement, separator, apply_to)
        self.top_terms = top_terms

    def identity(self) -> dict:
        return {**super().identity(), "top_terms": self.top_terms}

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        terms = self._section_terms(chunks) if self.top_terms > 0 else {}
        out = []
        for c in chunks:
            title = corpus.document(c.doc_id).title or c.doc_id
            text = " > ".join((title, *path_below_title(title, c.heading_path)))
            key_terms = terms.get((c.doc_id, c.heading_path))
            if key_terms:
                text += f" (key terms: {', '.join(key_terms)})"
            out.append(Context(c.chunk_id, text))
        return out

    def _section_terms(self, chunks: list[Chunk]) -> dict[tuple[str, tuple[str, ...]], list[str]]:
        """Top TF-IDF terms per section: tf = count in section, idf = ln((1 + N) / (1 + df)) + 1 (smoothed, as in scikit-learn)."""
        counts: dict[tuple[str, tuple[str, ...]], Counter[str]] = {}
        for c in chunks:
            section = counts.setdefault((c.doc_id, c.heading_path), Counter())
            section.update(t for t in _TOKEN.findall(c.text.lower()) if t not in _STOP)
        df = Counter(t for section in counts.values() for t in section)
        n = len(counts)
        top: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for key, section in counts.items():
            scored = sorted(
                section.items(),
                key=lambda kv: (-kv[1] * (math.log((1 + n) / (1 + df[kv[0]])) + 1), kv[0]),
            )
            top[key] = [t for t, _ in scored[: self.top_terms]]
        return top
