"""Composing a run's config and checking it before anything is paid: the compose
and override rules (compose.py), value checks (checks.py), the table of config groups
(stages.py) and the preflight each stage declares (preflight.py)."""
