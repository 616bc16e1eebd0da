"""``situate report``: a study's runs from MLflow, compared with its baseline, as HTML and Markdown.

- :mod:`situate.report.collect` loads a study (the latest sweep, or every finished run) and finds
  its baseline run;
- :mod:`situate.report.compare` computes per-configuration intervals, paired comparisons with the
  baseline (Holm-corrected across the whole report) and the questions that flipped;
- :mod:`situate.report.render` writes ``index.html`` (self-contained) and ``report.md``.
"""
