"""How much a same-set report overstates a sweep's winner: the measurement behind the README.

    python docs/winners_curse.py SWEEP_DIR [BASELINE_JOB] [SPLITS]

SWEEP_DIR is a finished sweep run with eval.split=dev_test (e.g. experiment=fusion_ablation
eval.split=dev_test). A split only partitions the questions (retrieval does not depend on it), so
every seed of eval.seed can be replayed from the jobs' per_question.csv: for each seed the split
is redrawn (situate.evaluation.splits.assign_parts, as a run with that eval.seed would draw it),
the best job is picked on dev (situate.study.selection.select) and its dev figure is set against
its test figure. The mean gap over many splits is the winner's curse: the optimism a report on
the questions that chose the winner would have shown.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from situate.evaluation.splits import assign_parts
from situate.records import Question, Span
from situate.study.collect import RunData
from situate.study.compare import parse_span
from situate.study.selection import select


def jobs(sweep: Path) -> list[RunData]:
    import situate

    folders = [f for f in sweep.iterdir() if f.name.isdigit() and (f / "result.json").exists()]
    results = [situate.Result.from_folder(f) for f in sorted(folders, key=lambda f: int(f.name))]
    shared = set.intersection(*(set(r.overrides) for r in results))
    out = []
    for r in results:
        label = " ".join(o for o in r.overrides if o not in shared)  # what tells the jobs apart
        questions = r.per_question.astype(str).to_dict("records")
        out.append(RunData(r.folder.name, label, "FINISHED", questions=questions, label=label))
    return out


def resplit(runs: list[RunData], seed: int) -> None:
    """Redraw every run's ``part`` column as eval.seed=``seed`` would."""
    first = runs[0].questions
    qs = [Question(q["qid"], "", (Span(*parse_span(q["gold"].split()[0])),)) for q in first]
    parts = dict(zip([q.qid for q in qs], assign_parts(qs, "dev_test", seed=seed), strict=True))
    for run in runs:
        for q in run.questions:
            q["part"] = parts[q["qid"]]


def main(sweep: str, baseline: int = 0, splits: int = 200) -> None:
    runs = jobs(Path(sweep))
    k = max(int(c[len("pass_at_") :]) for c in runs[0].questions[0] if c.startswith("pass_at_"))
    metric = f"pass_at_{k}"  # Pass@k at the largest k, as the report picks without a headline
    gaps, picks, tests = [], {}, []
    for seed in range(splits):
        resplit(runs, seed)
        s = select(runs, runs[baseline], metric, metric, permutations=1000)
        gaps.append(s.optimism)
        tests.append(s.reported_value)
        picks[s.chosen.label] = picks.get(s.chosen.label, 0) + 1
    same_set = max(r.column(metric).mean() for r in runs)
    g = 100 * np.array(gaps)
    print(f"{len(runs)} configurations, {splits} splits")
    print(f"same-set best Pass@{k} (all questions): {100 * same_set:.1f}%")
    print(f"picked on dev, its test Pass@{k}: mean {100 * np.mean(tests):.1f}%")
    print(f"dev - test of the pick: mean {g.mean():+.2f} pts (sd {g.std(ddof=1):.2f}, "
          f"standard error {g.std(ddof=1) / np.sqrt(len(g)):.2f})")  # fmt: skip
    top = sorted(picks.items(), key=lambda kv: -kv[1])[:3]
    print(f"{len(picks)} distinct picks; most often:", "; ".join(f"{k} ({v})" for k, v in top))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
