"""``situate cache check|repair [cache_dir=PATH] [--json] [--fast]``: what the cache folder keeps,
checked (every SQLite store's integrity, its journals of paid answers, every index folder against
its manifest) and repaired (a damaged file moved into ``<cache_dir>/damaged/``, never deleted,
and written anew from what can be read and from its journals): :mod:`situate.stores.repair`.

``check`` exits 1 when something is damaged (0 otherwise); ``repair`` exits 0 once everything it
found is repaired. ``--fast`` skips hashing the index folders' files (sizes only)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from situate.commands import VERBS, subverb

SUBVERBS = VERBS["cache"].subverbs
USAGE = f"usage: situate cache {{{','.join(SUBVERBS)}}} [cache_dir=PATH] [--json] [--fast]"
# tables whose values are priced answers (a JSON record with the model and its usage)
PRICED = {"contexts", "judgments", "generations", "closed_book_answers"}


def main(args: list[str]) -> int:
    chosen = subverb("cache", args, USAGE)
    if isinstance(chosen, int):
        return chosen
    verb, rest = chosen
    as_json = "--json" in rest
    hashes = "--fast" not in rest
    overrides = [a for a in rest if a not in ("--json", "--fast")]
    from situate.config.compose import compose
    from situate.errors import SituateError
    from situate.stores import repair

    unknown = [a for a in overrides if a.startswith("-")]
    if unknown:
        raise SituateError(f"situate cache: unknown option {unknown[0]}; {USAGE}")
    cfg = compose(overrides, mandatory=False)
    cache_dir = Path(str(cfg.cache_dir))
    if not cache_dir.is_dir():
        raise SituateError(
            f"cache_dir={cache_dir}: no such folder; give the one your runs use "
            "(situate cache check cache_dir=PATH)"
        )
    findings = repair.check(cache_dir, hashes=hashes)
    if verb == "repair":
        findings = repair.repair(cache_dir, findings)
        price_losses(cfg, findings)
    if as_json:
        print(json.dumps([asdict(f) for f in findings], indent=1))
    else:
        print(render(cache_dir, findings, verb))
    if verb == "check":
        return 1 if any(f.damaged for f in findings) else 0
    return 0 if all(f.repaired or not f.damaged for f in findings) else 1


def price_losses(cfg, findings) -> None:
    """Price the answers a repair could not recover at the mean price of those it did (their
    own model and usage, from ``conf/pricing/``): a note on the finding."""
    from situate.money.pricing import load_price_book
    from situate.records import Usage
    from situate.stores.sqlite import BlobStore

    book = None
    for f in findings:
        for table, lost in f.lost.items():
            if not lost or table not in PRICED:
                continue
            book = book or load_price_book(cfg)
            prices = []
            for _, value in BlobStore(f.path, table).items()[:200]:
                try:
                    record = json.loads(value)
                    usage = Usage(**record["usage"])
                    batch = bool(record.get("batch", False))
                    prices.append(book.price(record["model"]).call_cost(usage, batch=batch).total)
                except Exception:  # not a priced record of a known model
                    continue
            if prices:
                mean = sum(prices) / len(prices)
                f.notes.append(
                    f"{lost} answers of {table} must be paid again: about ${lost * mean:.4f} "
                    f"(${mean:.6f} each, the mean of {len(prices)} recovered)"
                )


def render(cache_dir: Path, findings, verb: str) -> str:
    """One paragraph per store that is damaged or was repaired, a line per healthy one."""
    lines = [f"{verb} {cache_dir}: {len(findings)} stores, journals and index folders"]
    for f in findings:
        name = (
            str(Path(f.path).relative_to(cache_dir))
            if f.path.startswith(str(cache_dir))
            else f.path
        )
        entries = ", ".join(f"{t} {n}" for t, n in f.entries.items())
        journaled = ", ".join(f"{t} {n}" for t, n in f.journaled.items())
        state = "damaged" if f.damaged else "ok"
        if f.repaired:
            state = "repaired"
        head = f"  {state:8} {name}"
        if entries:
            head += f" (entries: {entries}"
            head += f"; journaled: {journaled})" if journaled else ")"
        lines.append(head)
        for p in f.problems:
            lines.append(f"           - {p}")
        if f.moved_to:
            lines.append(f"           moved to {f.moved_to}")
        for table in sorted(set(f.recovered_from_file) | set(f.recovered_from_journal)):
            got_file = f.recovered_from_file.get(table, 0)
            got_journal = f.recovered_from_journal.get(table, 0)
            lost = f.lost.get(table)
            lost_text = "unknown (the file's count could not be read)" if lost is None else lost
            lines.append(
                f"           {table}: {got_file} recovered from the file, {got_journal} more from "
                f"its journal; lost: {lost_text}"
            )
        for note in f.notes:
            lines.append(f"           {note}")
    damaged = [f for f in findings if f.damaged and not f.repaired]
    if verb == "check" and damaged:
        lines.append(
            f"{len(damaged)} damaged: run `situate cache repair cache_dir={cache_dir}` "
            "(damaged files are moved into damaged/, never deleted)"
        )
    return "\n".join(lines)
