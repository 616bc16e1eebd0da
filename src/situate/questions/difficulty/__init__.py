"""How hard a question is, measured cheaply, and a generated set selected to a difficulty target
(``questions.difficulty``): the measures and the meter that takes them (``measures``), the human
sample a set can be matched to (``human_sample``), the quantile bins that match it
(``matching``), the target, caps or a match, and its building from the settings
(``selection``), and the difficulty report written beside ``questions.jsonl`` (``report``).
What the measures showed on real questions: docs/research/difficulty-measures.md."""
