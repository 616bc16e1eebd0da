# %% [markdown]
# # situate from a notebook: pick on dev, report on test
#
# Cells in the percent format (`# %%`): open this file in Jupyter (with jupytext) or VS Code and
# run it cell by cell, or run it whole with `python docs/notebook.py`. Everything is offline:
# the cookbook set with its replayed contexts and the local MiniLM embedder. The calls are those
# of the command line (same caches under `outputs/cache`, same MLflow store), so a notebook run
# is also a run in `make mlflow-ui`.
#
# `SITUATE_EXAMPLE_ARGS` adds overrides to every call (the tests run it on 12 documents).

# %%
import os

import situate

EXTRA = os.environ.get("SITUATE_EXAMPLE_ARGS", "").split()

# %% [markdown]
# ## One run
#
# `eval.split=dev_test` puts whole documents in `dev` or `test` (seeded): the metrics come for
# every question and for each part (`dev_pass_at_20`, `test_pass_at_20`), and each row of
# `per_question` says its part.

# %%
rrf = situate.run(["fusion=rrf", "eval.split=dev_test", *EXTRA])
print(rrf.run_id, {k: round(v, 3) for k, v in rrf.metrics.items() if k.endswith("pass_at_20")})
rrf.per_question[["qid", "part", "pass_at_20", "first_relevant_rank"]].head()

# %% [markdown]
# ## A sweep
#
# One row per job; `attrs["selection"]` says which job is best on dev and what it scores on
# test, against the baseline on the test questions; `attrs["informativeness"]` whether those test
# questions can separate the jobs at all (`.warning` is None when they can).

# %%
table = situate.sweep(
    [
        "fusion=dense_only,rrf,zscore_sum",
        "eval.split=dev_test",
        "baseline={fusion:dense_only}",
        *EXTRA,
    ]
)
print(table[["overrides", "dev_pass_at_20", "test_pass_at_20"]])
for line in table.attrs["selection"]:
    print(line)
print(table.attrs["informativeness"].verdict)

# %% [markdown]
# ## Paired statistics
#
# Any runs against a baseline, paired by question: on the test questions only here.

# %%
jobs = [situate.Result.from_folder(f) for f in table["folder"]]
print(situate.compare(jobs[0], *jobs[1:], metric="pass_at_20", part="test").T)
