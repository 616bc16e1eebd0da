"""Reading a study: what ``situate report``, ``situate judge`` and a sweep's results table share.

- :mod:`situate.study.collect` loads a study (the latest sweep, or every finished run) from
  MLflow, labels its runs and finds its baseline run (with :mod:`situate.study.writing_cost`, the
  estimate of what writing a run's replayed contexts cost);
- :mod:`situate.study.compare` computes per-configuration intervals, paired comparisons with the
  baseline (Holm-corrected across the whole report) and the questions that flipped;
- :mod:`situate.study.selection` picks the best configuration on dev questions and reports it on
  test ones;
- :mod:`situate.study.labels` is how a metric and a p-value read;
- :mod:`situate.study.results_table` is the Hydra callback that prints the table a run or a sweep
  ends on.

It imports neither :mod:`situate.report` nor :mod:`situate.judging`: both read a study through it.
"""
