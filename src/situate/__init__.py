"""situate: a lab for contextual retrieval.

The Python API (for notebooks) is imported on first use, so ``import situate`` stays light:
``situate.run(overrides=[...]) -> situate.Result``, ``situate.sweep([...]) -> pandas.DataFrame``,
``situate.compare(baseline, *runs)``, ``situate.halve(arms)`` (see :mod:`situate.api`).
"""

__version__ = "0.1.0"

API = ("Result", "compare", "halve", "run", "sweep")


def __getattr__(name: str):
    if name in API:
        from situate import api

        return getattr(api, name)
    raise AttributeError(f"module 'situate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
