"""``situate report``: a study's runs (read by :mod:`situate.study`), compared with its baseline,
as HTML and Markdown.

- :mod:`situate.report.render` writes ``index.html`` (self-contained) and ``report.md``, with the
  judged metrics that ``situate judge`` wrote (:mod:`situate.judging.summary`) beside the gold ones.
"""
