"""The rates this machine has measured: items a second of each long stage, kept across runs.

A long stage (embedding with a model, contexts written by an LLM, files parsed) records how fast
it went when it ends, under a key that names the stage, its model and the endpoint it calls
(:func:`rate_key`: "texts embedded by all-MiniLM-L6-v2"). The next stage of that key announces
its length before it starts, and ``situate estimate`` prices a run's time beside its cost, from
these rates. They describe this
machine, so they live in the user's cache (``~/.cache/situate/rates.json``, or the file
:data:`RATES_VARIABLE` names), not in a project's outputs.

A rate is advice: a file that cannot be read or written is logged once and otherwise ignored,
so no run stops for it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from situate.stores.files import atomic_write_text
from situate.stores.locks import exclusive

RATES_VARIABLE = "SITUATE_RATES_FILE"
MIN_SECONDS = 5.0  # a stage shorter than this measures start-up more than its rate

log = logging.getLogger(__name__)
_warned: set[str] = set()


@dataclass(frozen=True)
class Rate:
    per_second: float
    items: int  # how many the measurement covered
    measured: str  # ISO date

    def seconds(self, items: int) -> float:
        return items / self.per_second


def rate_key(stage: str, identity: Mapping[str, object]) -> str:
    """The name of ``stage``'s rate with the model ``identity`` names, and the endpoint it calls
    where it calls one: a rate measured against an emulator or another server is never read for
    the real API ("contexts written by claude-haiku-4-5 at https://api.anthropic.com")."""
    model, endpoint = identity.get("model", "?"), identity.get("endpoint")
    return f"{stage} by {model}" + (f" at {endpoint}" if endpoint else "")


def rates_path() -> Path:
    named = os.environ.get(RATES_VARIABLE, "").strip()
    if named:
        return Path(named).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(cache) / "situate" / "rates.json"


def _warn_once(what: str, error: Exception) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning(
            "rates of this machine: %s (%s); times are not estimated from it, and the next "
            "stage that measures one writes the file anew",
            what,
            error,
        )


def _read(path: Path) -> dict:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        _warn_once(f"cannot read {path}", e)
        return {}
    return found if isinstance(found, dict) else {}


def read_rate(key: str) -> Rate | None:
    """The rate last measured here for ``key``, or None."""
    entry = _read(rates_path()).get(key)
    try:
        rate = Rate(float(entry["per_second"]), int(entry["items"]), str(entry["measured"]))
    except (TypeError, KeyError, ValueError):
        return None
    return rate if rate.per_second > 0 else None


def record_rate(key: str, items: int, seconds: float, today: date | None = None) -> bool:
    """Keep ``items / seconds`` as ``key``'s rate (a stage of at least :data:`MIN_SECONDS`);
    True when kept. Jobs of a sweep record under one lock, each read-modify-write whole."""
    if items <= 0 or seconds < MIN_SECONDS:
        return False
    path = rates_path()
    try:
        with exclusive(path.parent, path.name):
            rates = _read(path)
            rates[key] = {
                "per_second": round(items / seconds, 4),
                "items": items,
                "measured": (today or date.today()).isoformat(),
            }
            atomic_write_text(path, json.dumps(rates, indent=1, sort_keys=True) + "\n")
    except Exception as e:  # a full disk, a read-only home: the rate is advice
        _warn_once(f"cannot write {path}", e)
        return False
    return True
