"""Write a study's report: ``index.html`` (one self-contained file) and ``report.md``.

The HTML carries its CSS inline and its charts as inline SVG drawn by matplotlib
(:mod:`situate.report.charts`; text as paths: no font, script, stylesheet or image is fetched
from anywhere); collapsible sections are plain ``<details>``. ``report.md``
(:mod:`situate.report.markdown`) holds the same tables in Markdown, for pasting into a document.
Both render one view model (:func:`situate.report.view.build_context`).
"""

from __future__ import annotations

from pathlib import Path

from situate.judging.summary import JudgedStudy
from situate.report.charts import standalone_svg
from situate.report.markdown import render_markdown
from situate.report.view import build_context
from situate.study.compare import StudyComparison


def write_report(
    sc: StudyComparison, out_dir: str | Path, judged: JudgedStudy | None = None
) -> tuple[Path, Path]:
    """Render ``index.html`` and ``report.md`` into ``out_dir`` (with the judged metrics of
    ``judged``, what ``situate judge`` wrote for the study); return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = build_context(sc, judged)
    html = out / "index.html"
    html.write_text(render_html(ctx), encoding="utf-8")
    md = out / "report.md"
    md.write_text(render_markdown(sc, ctx), encoding="utf-8")
    for name, svg in ctx["charts"].items():  # each chart on its own, to paste into documents
        if svg:
            (out / f"{name}_chart.svg").write_text(standalone_svg(svg), encoding="utf-8")
    return html, md


def render_html(ctx: dict) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("situate.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from markupsafe import Markup

    charts = {k: Markup(v) if v else None for k, v in ctx["charts"].items()}
    return env.get_template("report.html.j2").render(**{**ctx, "charts": charts})
