"""Checking and repairing what a cache folder keeps (``situate cache check`` / ``repair``).

What is checked, per kind:

- each SQLite store (``*.sqlite``): ``PRAGMA integrity_check``, its tables' entries, and each
  table's journal of paid answers beside it (:mod:`situate.stores.journal`): records, damaged
  bytes, a torn tail, answers not yet in the store;
- a journal whose store file is gone (the store is rebuilt from it);
- each index folder of a :class:`~situate.stores.files.DirectoryCache` (``index/<kind>/<key>``)
  against its manifest (every file's size and sha256).

What repair does: nothing is deleted. A damaged SQLite file (with its ``-wal`` and ``-shm``) is
moved into ``damaged/`` under the cache folder; a new file is written with every row that can
still be read from it (table by table, in rowid order, stepping over pages that fail), then
each journaled table is replayed from its journal, which holds every paid answer. A damaged
journal is moved aside too and written anew from the store and its readable records. A damaged
index folder is moved aside and is built again by the next run that needs it (no charge: it is
built from stored embeddings or texts).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from situate.stores import journal
from situate.stores.faults import guarded, sqlite_header_fault
from situate.stores.files import MANIFEST, folder_problems
from situate.stores.sqlite import APPLIED, BlobStore

DAMAGED = "damaged"  # under the cache folder: what repair moved aside
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's own files beside a database
STEP = 500  # rows read per query when salvaging
EMPTY_STEPS = 8  # steps without a row that end a salvage whose largest rowid is unreadable


@dataclass
class Finding:
    """What check found for one store, journal or index folder, and what repair did with it."""

    path: str
    kind: str  # "sqlite", "journal", "index"
    problems: list[str] = field(default_factory=list)
    entries: dict[str, int] = field(default_factory=dict)  # table -> entries readable
    journaled: dict[str, int] = field(default_factory=dict)  # table -> answers in its journal
    unapplied: dict[str, int] = field(default_factory=dict)  # table -> journal answers not stored
    notes: list[str] = field(default_factory=list)
    # set by repair
    moved_to: str | None = None
    recovered_from_file: dict[str, int] = field(default_factory=dict)
    recovered_from_journal: dict[str, int] = field(default_factory=dict)
    lost: dict[str, int | None] = field(default_factory=dict)  # None: unknown (count unreadable)
    repaired: bool = False

    @property
    def damaged(self) -> bool:
        return bool(self.problems)


def cache_files(cache_dir: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """The SQLite stores, the journals and the index folders under ``cache_dir`` (not what
    repair moved into ``damaged/``)."""
    stores, journals, folders = [], [], []
    if not cache_dir.is_dir():
        return stores, journals, folders
    for dirpath, dirnames, filenames in os.walk(cache_dir):
        here = Path(dirpath)
        if here == cache_dir:
            dirnames[:] = [d for d in dirnames if d != DAMAGED]
        if (here / MANIFEST).is_file() or _index_folder(cache_dir, here):
            folders.append(here)
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]  # builds in progress
        for name in filenames:
            if name.endswith(".sqlite"):
                stores.append(here / name)
            elif name.endswith(".journal") and not name.startswith("."):
                journals.append(here / name)
    return sorted(stores), sorted(journals), sorted(folders)


def _index_folder(cache_dir: Path, folder: Path) -> bool:
    """``index/<kind>/<key>``: a folder of a DirectoryCache (keys are 64 hex digits)."""
    parts = folder.relative_to(cache_dir).parts
    return len(parts) == 3 and parts[0] == "index" and len(parts[2]) == 64


def journal_tables(store: Path) -> dict[str, Path]:
    """The journals beside ``store``, by table (``<store>.<table>.journal``)."""
    prefix = f"{store.name}."
    return {
        p.name[len(prefix) : -len(".journal")]: p
        for p in sorted(store.parent.glob(f"{store.name}.*.journal"))
    }


@contextlib.contextmanager
def _open(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return [r[0] for r in rows if r[0] != APPLIED and not r[0].startswith("sqlite_")]


def check_store(path: Path) -> Finding:
    """Integrity, entries per table and the journals of the SQLite store at ``path``."""
    found = Finding(str(path), "sqlite")
    damage = sqlite_header_fault(path)
    if damage is not None:
        found.problems.append(damage)
    tables: list[str] = []
    applied: dict[str, tuple[str, int]] = {}
    try:
        with _open(path) as conn:
            result = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
            if result != ["ok"]:
                found.problems += [f"integrity_check: {r}" for r in result[:5]]
            tables = _tables(conn)
            for table in tables:
                try:
                    found.entries[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[
                        0
                    ]
                except sqlite3.Error as e:
                    found.problems.append(f"table {table}: {e}")
            with contextlib.suppress(sqlite3.Error):
                applied = {
                    t: (i, n) for t, i, n in conn.execute(f"SELECT * FROM {APPLIED}").fetchall()
                }
    except sqlite3.Error as e:
        found.problems.append(str(e))
    for table, jpath in journal_tables(path).items():
        scanned = journal.scan(jpath)
        kept = journal.entries(scanned.records)
        found.journaled[table] = len(kept)
        if scanned.journal_id is None:
            found.problems.append(f"journal {jpath.name}: no header (damaged)")
        elif scanned.damaged_bytes and not scanned.torn_tail:
            found.problems.append(
                f"journal {jpath.name}: {scanned.damaged_bytes} damaged bytes inside"
            )
        elif scanned.torn_tail:
            found.notes.append(
                f"journal {jpath.name}: a torn last record ({scanned.damaged_bytes} bytes, "
                "a write cut short); the next write cuts it"
            )
        if not found.damaged and table in found.entries:
            at = applied.get(table)
            if at is None or at[0] != scanned.journal_id or at[1] != scanned.end:
                stored = _keys(path, table)
                missing = [k for k in kept if k not in stored]
                if missing:
                    found.unapplied[table] = len(missing)
                    found.notes.append(
                        f"{len(missing)} answers of {table} are in its journal, not yet in the "
                        "store: the next run (or repair) replays them"
                    )
    return found


def _keys(path: Path, table: str) -> set[str]:
    with _open(path) as conn:
        return {r[0] for r in conn.execute(f"SELECT key FROM {table}")}


def check_orphan_journal(jpath: Path) -> Finding:
    """A journal whose store file is gone: its answers are rebuilt into a new store."""
    scanned = journal.scan(jpath)
    found = Finding(str(jpath), "journal")
    store, table = _store_of(jpath)
    found.journaled[table] = len(journal.entries(scanned.records))
    found.problems.append(
        f"its store {store.name} is missing: {found.journaled[table]} paid answers can be "
        "rebuilt from the journal"
    )
    return found


def _store_of(jpath: Path) -> tuple[Path, str]:
    stem = jpath.name[: -len(".journal")]
    db, _, table = stem.rpartition(".")
    return jpath.with_name(db), table


def check_folder(folder: Path, hashes: bool = True) -> Finding:
    found = Finding(str(folder), "index")
    problems = folder_problems(folder, hashes=hashes)
    if problems is None:
        found.notes.append("no manifest (built by an older situate): not verified")
    else:
        found.problems += problems
    return found


def check(cache_dir: str | Path, hashes: bool = True) -> list[Finding]:
    """Every store, journal and index folder under ``cache_dir``."""
    cache_dir = Path(cache_dir)
    stores, journals, folders = cache_files(cache_dir)
    findings = [check_store(p) for p in stores]
    store_names = {str(p) for p in stores}
    findings += [
        check_orphan_journal(j) for j in journals if str(_store_of(j)[0]) not in store_names
    ]
    findings += [check_folder(f, hashes) for f in folders]
    return findings


# -- repair ------------------------------------------------------------------------------------


def _aside(cache_dir: Path, path: Path, stamp: str) -> Path:
    """Move ``path`` (and SQLite's files beside it) into ``damaged/``, never deleting them."""
    target = cache_dir / DAMAGED / f"{path.relative_to(cache_dir)}.{stamp}"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(path, target)
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.rename(side, target.with_name(target.name + suffix))
    return target


def salvage(path: Path, tables: list[str]) -> tuple[dict[str, list[tuple[str, bytes]]], dict]:
    """Every row of ``tables`` that can still be read from the damaged file ``path``, and the
    count each table's own ``COUNT(*)`` gave (None where it failed)."""
    rows: dict[str, list[tuple[str, bytes]]] = {t: [] for t in tables}
    counts: dict[str, int | None] = {}
    try:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    except sqlite3.Error:
        return rows, {t: None for t in tables}
    try:
        for table in tables:
            try:
                counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            except sqlite3.Error:
                counts[table] = None
            rows[table] = _readable_rows(conn, table)
    finally:
        conn.close()
    return rows, counts


def _readable_rows(conn: sqlite3.Connection, table: str) -> list[tuple[str, bytes]]:
    """Rows in rowid order, ``STEP`` at a time; a step that fails is read row by row, and a
    row that fails is stepped over (a damaged page costs the rows on it, not the table). Where
    the largest rowid cannot be read, reading stops after ``EMPTY_STEPS`` steps without a row."""
    found: list[tuple[str, bytes]] = []
    try:
        top = conn.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.Error:
        top = None
    query = f"SELECT key, value FROM {table} WHERE rowid >= ? AND rowid < ? ORDER BY rowid"
    start, empty = 1, 0
    while (start <= top) if top is not None else (empty < EMPTY_STEPS):
        try:
            batch = conn.execute(query, (start, start + STEP)).fetchall()
        except sqlite3.Error:
            batch = []
            for rowid in range(start, start + STEP):
                with contextlib.suppress(sqlite3.Error):
                    batch += conn.execute(query, (rowid, rowid + 1)).fetchall()
        found += batch
        empty = 0 if batch else empty + 1
        start += STEP
    return [(k, bytes(v)) for k, v in found if isinstance(k, str) and v is not None]


def _known_tables(path: Path) -> list[str]:
    """The tables of a store, from its schema if it reads, else from its journals' names."""
    tables = set(journal_tables(path))
    with contextlib.suppress(sqlite3.Error), _open(path) as conn:
        tables |= set(_tables(conn))
    return sorted(tables)


def repair_store(cache_dir: Path, finding: Finding, stamp: str) -> None:
    """Write a damaged store anew from its readable rows (into a temporary file), move the
    damaged one aside, put the new one in its place, then replay its journals. A repair killed
    at any point leaves the damaged file in place or in ``damaged/``, never neither."""
    path = Path(finding.path)
    tables = _known_tables(path)
    jtables = journal_tables(path)
    rows, counts = salvage(path, tables)
    fresh = path.with_name(f".{path.name}.repairing")
    with guarded(fresh):
        for leftover in [fresh, *(fresh.with_name(fresh.name + s) for s in SIDE_FILES)]:
            leftover.unlink(missing_ok=True)  # a repair killed before its rename
    for table in tables:
        store = BlobStore(fresh, table)  # no journal yet: replayed below
        store.put_many(rows[table])
        store.close()
        finding.recovered_from_file[table] = len(rows[table])
    with guarded(path):
        finding.moved_to = str(_aside(cache_dir, path, stamp))
        os.rename(fresh, path)
        for suffix in SIDE_FILES:  # closed cleanly: a WAL checkpointed, nothing left beside it
            side = fresh.with_name(fresh.name + suffix)
            if side.exists():
                os.rename(side, path.with_name(path.name + suffix))
    _replay_journals(path, jtables, finding)
    for table in tables:
        recovered = {k for k, _ in rows[table]}
        if table in jtables:
            recovered |= set(journal.entries(journal.scan(jtables[table]).records))
        total = counts.get(table)
        finding.lost[table] = None if total is None else max(0, total - len(recovered))
    finding.repaired = True


def _replay_journals(path: Path, jtables: dict[str, Path], finding: Finding) -> None:
    for table, jpath in jtables.items():
        scanned = journal.scan(jpath)
        kept = journal.entries(scanned.records)
        stored = _keys(path, table) if path.exists() else set()
        finding.recovered_from_journal[table] = len([k for k in kept if k not in stored])
        if scanned.journal_id is None or (scanned.damaged_bytes and not scanned.torn_tail):
            _rewrite_journal(path, table, jpath, kept, finding)
        else:
            BlobStore(path, table, paid=True)  # opening replays what the store lacks


def _rewrite_journal(
    path: Path, table: str, jpath: Path, kept: dict[str, bytes], finding: Finding
) -> None:
    """A damaged journal: its readable answers into the store, then the journal moved aside and
    written anew from the store (so it holds every answer again)."""
    store = BlobStore(path, table)
    store.put_many(list(kept.items()))
    cache_dir = Path(finding.path).parent
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    with guarded(jpath):
        moved = cache_dir / DAMAGED / f"{jpath.name}.{stamp}"
        moved.parent.mkdir(parents=True, exist_ok=True)
        os.rename(jpath, moved)
    finding.notes.append(f"journal {jpath.name} moved to {moved} and written anew")
    BlobStore(path, table, paid=True)  # no journal: started with every row of the table


def repair(cache_dir: str | Path, findings: list[Finding] | None = None) -> list[Finding]:
    """Check ``cache_dir`` and repair what is damaged (see the module docstring)."""
    cache_dir = Path(cache_dir)
    findings = check(cache_dir) if findings is None else findings
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for finding in findings:
        path = Path(finding.path)
        if finding.kind == "sqlite" and any(not p.startswith("journal ") for p in finding.problems):
            repair_store(cache_dir, finding, stamp)
        elif finding.kind == "sqlite" and (finding.problems or finding.unapplied):
            jtables = journal_tables(path)
            _replay_journals(path, jtables, finding)  # a damaged journal, or answers to replay
            finding.repaired = True
        elif finding.kind == "sqlite" and finding.notes:  # a torn tail: cut it now
            for table in journal_tables(path):
                BlobStore(path, table, paid=True)
        elif finding.kind == "journal":
            store, table = _store_of(path)
            BlobStore(store, table, paid=True)  # a new store, replayed from the journal
            finding.recovered_from_journal[table] = finding.journaled[table]
            finding.repaired = True
        elif finding.kind == "index" and finding.problems:
            with guarded(path):
                finding.moved_to = str(_aside(cache_dir, path, stamp))
            finding.repaired = True
    return findings
