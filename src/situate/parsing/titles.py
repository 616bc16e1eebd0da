"""Which strings name a document, and which rule named each one: the title rule of every parser.

A file's declared title is often no title: PDF metadata holds SEC accession numbers
(``0000320187-21-000028``), form headers (``UNITED STATES SECURITIES AND EXCHANGE COMMISSION``,
``FORM 10-K``) and producer defaults (``Microsoft Word - Document1``, ``untitled``); a question
generated from such a document then reads "In 0000320187-21-000028, ...". :func:`title_problem`
says why a candidate names nothing; each parser offers its candidates in order and keeps the first
usable one (:func:`first_usable`). A candidate is rejected when it is

- **empty**, **too short** (fewer than :data:`MIN_LETTERS` letters) or **too long** (more than
  :data:`MAX_CHARS` characters or :data:`MAX_WORDS` words: a sentence, not a title);
- **an identifier**: fewer than half of its characters (spaces aside) are letters
  (``0000320187-21-000028``, ``10-K 2021``, ``2021-03-15``), a hexadecimal hash or UUID (after a
  label or not: ``SHA: eef0ecf5...``), a single token of 8 characters or more a quarter of which
  are digits (``DOC20210315X7``), or a date;
- **a file name**: ends in a document or image extension (``report_v2.pdf``, ``10K_final.docx``),
  is a path, or is one token with an underscore (a file's stem: ``Apple_AR_2021``);
- **a producer default**: what an authoring tool writes when nobody named the file, or a web
  page's placeholder (``Redirecting...``, ``Index of /docs``; see :data:`PRODUCER_DEFAULTS`);
- **a form or agency header, or cover boilerplate** (see :data:`BOILERPLATE`): the lines every
  filing's cover shares, which name the form, not the document; or **a caption**, a line wholly
  in parentheses (``(State or other jurisdiction of incorporation)``).

Matching is case-insensitive, on the text with runs of spaces as one and leading/trailing
punctuation and symbols (``☒``, ``*``, quotes) removed. The rules that name a document are the
:data:`SOURCES`: ``metadata`` (the file's declared title: PDF ``Title``, DOCX core properties,
HTML ``<title>``, Markdown front matter), ``heading`` (the first heading), ``cover`` (a PDF's most
prominent line(s) on page 1: :func:`cover_title`), ``sidecar`` (``<file>.meta.json``) and
``filename`` (the file name, the last resort).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Part of every title-picking parser's identity: a change of these rules changes the parse cache
# key, so a parse cached under older rules (or before titles recorded their rule) is not served.
TITLE_RULES = 1

METADATA, HEADING, COVER, SIDECAR, FILENAME = "metadata", "heading", "cover", "sidecar", "filename"
SOURCES = (COVER, METADATA, HEADING, SIDECAR, FILENAME)  # the order the summary line counts them
SOURCE_WORDS = {
    COVER: "the cover page",
    METADATA: "metadata",
    HEADING: "the first heading",
    SIDECAR: ".meta.json",
    FILENAME: "file name",
}

MIN_LETTERS = 3
MAX_CHARS = 200
MAX_WORDS = 30
# A cover line is prominent when its font is at least this much larger than the body text.
PROMINENCE = 1.15
SAME_SIZE = 0.05  # lines within 5% of the title's size continue it (a title wrapped over lines)
MAX_COVER_LINES = 3

_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
IDENTIFIERS = (
    # a hash or UUID, after a label or not ("SHA: eef0ecf5...")
    re.compile(
        r"(?:[a-z0-9]{1,10}\s*[:#=]\s*)?(?:[0-9a-f]{16,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})"
    ),
    re.compile(r"\d{10}-\d{2}-\d{6}"),  # SEC accession number (also caught by the letter share)
    re.compile(rf"(?:{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+{_MONTH}\s+\d{{4}})"),  # a date
)
FILE_NAME = re.compile(
    r".*\.(?:pdf|docx?|dotx?|rtf|odt|pages|txt|md|html?|xml|xlsx?|csv|pptx?|key|indd|qxd|tex"
    r"|ps|eps|ai|psd|png|jpe?g|tiff?|gif|bmp|wpd)"
    r"|(?:[a-z]:)?[/\\]\S*|\S+[/\\]\S+[/\\]\S*"  # a path: rooted, or two separators, no space
    r"|\S*[a-z0-9]_[a-z0-9]\S*"  # a file's stem: one token with an underscore (10k_final_v2)
)
# What authoring tools write when nobody named the file, and web pages' placeholder titles.
PRODUCER_DEFAULTS = re.compile(
    r"untitled(?:[-\s]*\d+)?|no\s+title|title|document\s*\d*|doc\s*\d+|new\s+document\s*\d*"
    r"|microsoft\s+(?:word|excel|powerpoint|publisher|visio|office\s+\w+)\s+-\s+.*"
    r"|(?:microsoft\s+)?(?:word|powerpoint|excel)\s+document"
    r"|powerpoint\s+presentation|presentation\s*\d*|slide\s*\d*|book\s*\d+|workbook\s*\d*"
    r"|pdf(?:\s+document)?|print|blank|test|temp|draft|scan\w*"
    r"|(?:converted|generated|created)\s+(?:by|with|from)\s+.*"
    r"|redirect(?:ing)?(?:\s+to\b.*)?|loading|index\s+of\s+.*|(?:404\s+)?(?:page\s+)?not\s+found",
    re.IGNORECASE,
)
# Headers and captions every filing (or report cover) shares: they name a form, an agency or a
# part of the page, not the document. Each matches the whole candidate, except ``pursuant to
# section/rule``, which marks a cover's checkbox lines wherever it stands.
_FORM = r"(?:\d{1,2}-[a-z]{1,3}\d*|[a-z]{1,3}-\d{1,3}[a-z]?|n-[a-z]{2,4}|def\s*14[ac])(?:/a)?"
BOILERPLATE = (
    re.compile(r"(?:united\s+states\s+)?securities\s+and\s+exchange\s+commission"),
    re.compile(r"washington,?\s+d\.?\s*c\.?(?:\s+\d{5})?"),
    re.compile(r"united\s+states(?:\s+of\s+america)?"),
    re.compile(rf"(?:annual\s+report\s+on\s+|quarterly\s+report\s+on\s+)?form\s+{_FORM}"),
    re.compile(r"schedule\s+\d+[a-z]?(?:/a)?|exhibit\s+\d+(?:\.\d+)*"),
    re.compile(r".*\bpursuant\s+to\s+(?:section|rule|regulation)\b.*"),
    re.compile(
        r"(?:for\s+the\s+)?(?:fiscal\s+year|year|quarterly\s+period|transition\s+period"
        r"|period)\s+ended\b.*"
    ),
    re.compile(
        r"commission\s+file\s+(?:number|no)\b.*|mark\s+one|indicate\s+by\s+check\s+mark\b.*"
    ),
    re.compile(r"exact\s+name\s+of\s+registrant.*|.*\bas\s+specified\s+in\s+its\s+charter\b.*"),
    re.compile(r"(?:annual|quarterly|interim)\s+report"),
    re.compile(
        r"table\s+of\s+contents|contents|index|cover(?:\s+page)?|front\s+cover"
        r"|confidential|page\s+\d+(?:\s+of\s+\d+)?"
    ),
)


def tidy(title: str) -> str:
    """Runs of whitespace as one space, the ends trimmed."""
    return " ".join(title.split())


def title_problem(title: str) -> str | None:
    """Why ``title`` names no document, in a few words; None when it may name one."""
    text = tidy(title)
    core = _EDGES.sub("", text).lower()
    if not core:
        return "empty"
    if len(text) > MAX_CHARS or len(text.split()) > MAX_WORDS:
        return "too long"
    visible = [ch for ch in core if not ch.isspace()]
    letters = sum(ch.isalpha() for ch in visible)
    if FILE_NAME.fullmatch(core):
        return "a file name"
    if PRODUCER_DEFAULTS.fullmatch(core):
        return "a producer default"
    if letters * 2 < len(visible) or _code(core) or any(p.fullmatch(core) for p in IDENTIFIERS):
        return "an identifier"
    if letters < MIN_LETTERS:
        return "too short"
    if any(p.fullmatch(core) for p in BOILERPLATE):
        return "a form header or boilerplate"
    if text.startswith("(") and text.endswith(")"):
        return "a caption"
    return None


def _code(core: str) -> bool:
    """One token of 8 characters or more, 4 or more of them and at least a quarter digits
    (``doc20210315x7``; not ``gcs-oauth2-boto-plugin``)."""
    digits = sum(ch.isdigit() for ch in core)
    return " " not in core and len(core) >= 8 and digits >= 4 and digits * 4 >= len(core)


def usable(title: str) -> bool:
    """Whether ``title`` may name a document (:func:`title_problem` finds nothing)."""
    return title_problem(title) is None


def first_usable(candidates: Iterable[tuple[str | None, str]]) -> tuple[str, str]:
    """The first usable ``(title, source)`` of ``candidates`` (as given), else ``("", "")``."""
    for title, source in candidates:
        if title and usable(title):
            return title, source
    return "", ""


@dataclass(frozen=True)
class TextLine:
    """One text line of a page and its font size in points (the largest of its characters)."""

    text: str
    size: float


def cover_title(lines: Sequence[TextLine], body_size: float) -> str:
    """The most prominent usable line(s) of a cover page, with the filing's form; "" when none.

    The title is the first usable line of the largest size among those at least
    :data:`PROMINENCE` times ``body_size`` (the document's body text), joined with the usable
    lines right after it of the same size (a wrapped title, up to :data:`MAX_COVER_LINES`). Lines
    :func:`title_problem` rejects are skipped, so a cover whose biggest line is ``UNITED STATES
    SECURITIES AND EXCHANGE COMMISSION`` is named by its next prominent line, such as the
    company. On a filing's cover (a line ``FORM 10-K``) the form and the fiscal year are added:
    ``Apple Inc. - Form 10-K 2021`` (:func:`filing_context`).
    """
    floor = body_size * PROMINENCE
    candidates = [k for k, line in enumerate(lines) if line.size >= floor and usable(line.text)]
    if not candidates:
        return ""
    top = max(lines[k].size for k in candidates)
    first = next(k for k in candidates if lines[k].size == top)
    parts = [tidy(lines[first].text)]
    for line in lines[first + 1 : first + MAX_COVER_LINES]:
        joined = " ".join([*parts, tidy(line.text)])
        if abs(line.size - top) > SAME_SIZE * top or not usable(line.text) or not usable(joined):
            break
        parts.append(tidy(line.text))
    title = " ".join(parts)
    context = filing_context([line.text for line in lines])
    if context and context.split()[1].lower() not in title.lower():
        title = f"{title} - {context}"
    return title


_FORM_LINE = re.compile(rf"(?:annual\s+report\s+on\s+|quarterly\s+report\s+on\s+)?form\s+({_FORM})")
_YEAR = re.compile(
    r"(?:fiscal\s+year|year|quarterly\s+period|transition\s+period|period)\s+ended:?\s+"
    rf"(?:{_MONTH}\s+\d{{1,2}},?\s+|\d{{1,2}}\s+{_MONTH}\s+)?((?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def filing_context(lines: Sequence[str]) -> str:
    """``Form 10-K 2021`` when a cover line is a form header and the cover names the year it
    covers ("fiscal year ended September 25, 2021"), ``Form 10-K`` without a year, else ""."""
    form = None
    for line in lines:
        found = _FORM_LINE.fullmatch(_EDGES.sub("", tidy(line)).lower())
        if found:
            form = re.sub(r"\s+", " ", found.group(1)).upper()
            break
    if form is None:
        return ""
    year = _YEAR.search(tidy(" ".join(lines)))
    return f"Form {form}" + (f" {year.group(1)}" if year else "")


def body_size(sizes: Iterable[tuple[float, int]]) -> float:
    """The body text's font size: the median over characters of ``(size, character count)``."""
    weighted = [(size, n) for size, n in sizes if n > 0]
    if not weighted:
        return 0.0
    weighted.sort()
    half, seen = sum(n for _, n in weighted) / 2, 0
    for size, n in weighted:
        seen += n
        if seen >= half:
            return size
    return weighted[-1][0]


def summary(counts: dict[str, int]) -> str:
    """``74 documents: titles from the cover page 41, metadata 23, file name 10``."""
    total = sum(counts.values())
    parts = [f"{SOURCE_WORDS.get(s, s)} {counts[s]}" for s in _ordered(counts) if counts[s]]
    noun = "document" if total == 1 else "documents"
    return f"{total} {noun}: titles from " + ", ".join(parts) if parts else f"0 {noun}"


def _ordered(counts: dict[str, int]) -> list[str]:
    return [*(s for s in SOURCES if s in counts), *sorted(set(counts) - set(SOURCES))]
