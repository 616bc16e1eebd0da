"""Small realistic documents built in a test's tmp_path (no binary fixture is committed).

Each builder writes one file and the module's constants say what its parsed text must be, so
tests compare with hand-written expected values.
"""

from __future__ import annotations

from pathlib import Path

# A 3-page annual report with a metadata title; page texts as PDFium extracts them.
REPORT_TITLE = "Annual Report 2023"
REPORT_PAGES = [
    "Overview\nAcme sells anvils to coyotes.",
    "Results\nRevenue grew 12 percent to 4.2 million dollars.",
    "Outlook\nWe expect steady demand in 2024.",
]


def build_pdf(path: Path, pages: list[str], title: str | None = None, **canvas_args) -> Path:
    """A PDF with one page per entry, each line of the entry drawn as one text line."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), **canvas_args)
    if title is not None:
        c.setTitle(title)
    for page in pages:
        for k, line in enumerate(page.split("\n")):
            if line:
                c.drawString(72, 720 - 20 * k, line)
        c.showPage()
    c.save()
    return path


def build_report_pdf(path: Path) -> Path:
    return build_pdf(path, REPORT_PAGES, REPORT_TITLE)


# A filing's cover as EDGAR's PDFs set it: the agency header biggest, then the form and the
# company at one size, captions small; two pages of 10-point body text after it.
FILING_COVER = [
    ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", 16),
    ("Washington, D.C. 20549", 10),
    ("FORM 10-K", 14),
    ("ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934", 9),
    ("For the fiscal year ended September 25, 2021", 10),
    ("Apple Inc.", 14),
    ("(Exact name of registrant as specified in its charter)", 8),
    ("California 94-2404110", 10),
]
FILING_BODY = [
    "PART I\nItem 1. Business\nThe Company designs, manufactures and markets smartphones.",
    "Item 1A. Risk Factors\nThe Company's operations and performance depend on economic conditions.",
]


def build_cover_pdf(
    path: Path,
    cover: list[tuple[str, float]] | None,
    title: str | None = None,
    body: list[str] = FILING_BODY,
    scale: float = 1,
) -> Path:
    """A PDF whose page 1 draws each ``(line, font size)`` of ``cover`` (None: a drawn shape, no
    text), then one page per entry of ``body`` in 10-point text. With ``scale`` the cover is
    drawn at ``size / scale`` points under a ``scale`` transform (how some producers write text:
    same printed size)."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    if title is not None:
        c.setTitle(title)
    if cover is None:
        c.rect(100, 100, 300, 400, fill=1)
    y = 760.0
    for line, size in cover or []:
        y -= size * 1.6
        c.saveState()
        c.translate(72, y)
        c.scale(scale, scale)
        c.setFont("Helvetica-Bold" if size > 10 else "Helvetica", size / scale)
        c.drawString(0, 0, line)
        c.restoreState()
    c.showPage()
    for page in body:
        c.setFont("Helvetica", 10)
        for k, line in enumerate(page.split("\n")):
            c.drawString(72, 720 - 14 * k, line)
        c.showPage()
    c.save()
    return path


def build_encrypted_pdf(path: Path) -> Path:
    """A PDF that needs a user password to open."""
    from reportlab.lib import pdfencrypt

    encrypt = pdfencrypt.StandardEncryption("user-pass", ownerPassword="owner-pass")
    return build_pdf(path, ["Hidden text"], encrypt=encrypt)


def build_image_only_pdf(path: Path, pages: int = 2) -> Path:
    """A PDF of drawn shapes and no text layer (what a scan looks like to a text extractor)."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for _ in range(pages):
        c.rect(100, 100, 300, 400, fill=1)
        c.showPage()
    c.save()
    return path


# A Word document: core title, Heading 1/2, a bullet, a table.
HANDBOOK_TITLE = "Employee Handbook"
HANDBOOK_TEXT = (
    "# Leave policy\n\n"
    "Everyone gets 25 days of paid leave.\n\n"
    "## Carry-over\n\n"
    "Up to 5 unused days carry over to the next year.\n\n"
    "- Ask your manager first.\n\n"
    "## Allowances\n\n"
    "| Grade | Days |\n"
    "| --- | --- |\n"
    "| Junior | 25 |\n"
    "| Senior | 30 |"
)


def build_handbook_docx(path: Path, title: str | None = HANDBOOK_TITLE) -> Path:
    import docx

    document = docx.Document()
    if title is not None:
        document.core_properties.title = title
    document.add_heading("Leave policy", level=1)
    document.add_paragraph("Everyone gets 25 days of paid leave.")
    document.add_heading("Carry-over", level=2)
    document.add_paragraph("Up to 5 unused days carry over to the next year.")
    document.add_paragraph("Ask your manager first.", style="List Bullet")
    document.add_paragraph("")  # an empty paragraph adds nothing
    document.add_heading("Allowances", level=2)
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate([("Grade", "Days"), ("Junior", "25"), ("Senior", "30")]):
        for k, value in enumerate(row):
            table.cell(r, k).text = value
    document.save(str(path))
    return path


# An HTML export of a docs page: navigation, header, footer and script around the content.
RATE_LIMITS_HTML = """<!doctype html>
<html><head><title>Rate limits | Acme Docs</title><style>body { color: #333 }</style></head>
<body>
<header><a href="/">Acme Docs</a> <form><input name="q"></form></header>
<nav><ul><li><a href="/start">Getting started</a></li><li><a href="/auth">Authentication</a></li></ul></nav>
<main>
<h1>Rate limits</h1>
<p>Requests are limited <b>per API key</b>.</p>
<h2>Plans</h2>
<table>
<thead><tr><th>Plan</th><th>Requests per minute</th></tr></thead>
<tbody><tr><td>Free</td><td>60</td></tr><tr><td>Pro</td><td>600</td></tr></tbody>
</table>
<h3>Bursts</h3>
<p>Short bursts up to twice the limit are allowed.</p>
</main>
<footer>Copyright Acme</footer>
<script>track("page")</script>
</body></html>
"""
RATE_LIMITS_TEXT = (
    "# Rate limits\n\n"
    "Requests are limited **per API key**.\n\n"
    "## Plans\n\n"
    "| Plan | Requests per minute |\n"
    "| --- | --- |\n"
    "| Free | 60 |\n"
    "| Pro | 600 |\n\n"
    "### Bursts\n\n"
    "Short bursts up to twice the limit are allowed."
)


# A Markdown manual and a Spanish page: with the report, the HTML page and the handbook, the
# mixed folder `situate questions generate` and the own-documents path are tested on.
MANUAL_MD = (
    "# Widget Manual\n\n"
    "## Installation\n\n"
    "Screw the bracket to the wall before you hang the unit. The kit holds two long screws.\n\n"
    "## Warranty\n\n"
    "The Widget Pro is covered for three years from the date of purchase.\n"
)
LIMITES_TITLE = "Límites de la API"
LIMITES_MD = (
    "# Límites de la API\n\n## Plan Pro\n\nEl plan Pro permite 600 solicitudes por minuto. "
    "Las solicitudes que superan el límite reciben un error 429.\n"
)


def mixed_folder(tmp_path: Path) -> Path:
    """``tmp_path/docs``: a PDF, an HTML page, a DOCX, a Markdown manual and a Spanish page."""
    docs = tmp_path / "docs"
    docs.mkdir()
    build_pdf(
        docs / "report.pdf",
        ["Overview\nAcme sells anvils to coyotes in every desert.", "Results\nRevenue grew 12 percent to 4.2 million dollars."],
        "Annual Report 2023",
    )  # fmt: skip
    (docs / "limits.html").write_text(RATE_LIMITS_HTML, encoding="utf-8")
    build_handbook_docx(docs / "handbook.docx")
    (docs / "manual.md").write_text(MANUAL_MD, encoding="utf-8")
    (docs / "limites.md").write_text(LIMITES_MD, encoding="utf-8")
    return docs
