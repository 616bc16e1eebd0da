"""``situate cache check`` / ``repair`` on real damage: a paid store rebuilt whole from its
journal, a free one from the rows that still read, a damaged journal written anew, a journal
whose store is gone, an index folder that differs from its manifest; nothing is deleted."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from conftest import damage
from situate.stores import journal, repair
from situate.stores.files import DirectoryCache
from situate.stores.sqlite import BlobStore


def answers(n: int, size: int = 900) -> list[tuple[str, bytes]]:
    return [(f"key{i:04d}", os.urandom(size)) for i in range(n)]


def by_path(findings, path: Path):
    return next(f for f in findings if f.path == str(path))


def test_a_damaged_paid_store_is_moved_aside_and_rebuilt_whole_from_its_journal(tmp_path):
    db = tmp_path / "contexts.sqlite"
    paid = answers(60)
    store = BlobStore(db, "contexts", paid=True)
    store.put_many(paid[:30])
    store.put_many(paid[30:])
    store.close()
    damage(db, 0.4)
    finding = by_path(repair.check(tmp_path), db)
    assert finding.damaged and finding.journaled == {"contexts": 60}

    fixed = by_path(repair.repair(tmp_path), db)
    assert fixed.repaired and Path(fixed.moved_to).parent == tmp_path / "damaged"
    assert Path(fixed.moved_to).read_bytes()[:16] == b"SQLite format 3\x00"  # kept, not deleted
    got_file = fixed.recovered_from_file["contexts"]
    assert got_file + fixed.recovered_from_journal["contexts"] == 60
    assert fixed.lost["contexts"] in (0, None)
    assert dict(BlobStore(db, "contexts", paid=True).items()) == dict(paid)
    assert not any(f.damaged for f in repair.check(tmp_path))


def test_a_free_store_keeps_the_rows_that_still_read(tmp_path):
    db = tmp_path / "embeddings.sqlite"
    rows = answers(400, 1500)
    store = BlobStore(db, "embeddings")
    store.put_many(rows)
    store.close()
    size = db.stat().st_size
    with open(db, "r+b") as f:  # one page in the middle of the table's leaves
        f.seek((size // 4096 // 2) * 4096)
        f.write(b"\xff" * 4096)
    fixed = by_path(repair.repair(tmp_path), db)
    assert fixed.repaired
    kept = dict(BlobStore(db, "embeddings").items())
    assert 0 < len(kept) < 400 and all(kept[k] == v for k, v in rows if k in kept)
    assert fixed.recovered_from_file["embeddings"] == len(kept)
    if fixed.lost["embeddings"] is not None:
        assert fixed.lost["embeddings"] == 400 - len(kept)


def test_a_journal_damaged_inside_is_written_anew_from_the_store(tmp_path):
    db = tmp_path / "judgments.sqlite"
    store = BlobStore(db, "judgments", paid=True)
    store.put_many(answers(10))
    data = bytearray(store.journal.read_bytes())
    data[len(data) // 2] ^= 0xFF
    store.journal.write_bytes(bytes(data))
    store.close()
    finding = by_path(repair.check(tmp_path), db)
    assert any("damaged bytes inside" in p for p in finding.problems)
    fixed = by_path(repair.repair(tmp_path), db)
    assert fixed.repaired and any("written anew" in n for n in fixed.notes)
    scanned = journal.scan(store.journal)
    assert scanned.damaged_bytes == 0 and len(journal.entries(scanned.records)) == 10
    assert len(list((tmp_path / "damaged").glob("judgments.sqlite.judgments.journal.*"))) == 1


def test_a_journal_whose_store_is_gone_rebuilds_it(tmp_path):
    db = tmp_path / "contexts.sqlite"
    paid = answers(12)
    store = BlobStore(db, "contexts", paid=True)
    store.put_many(paid)
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    orphan = by_path(repair.check(tmp_path), store.journal)
    assert orphan.kind == "journal" and "is missing" in orphan.problems[0]
    repair.repair(tmp_path)
    assert dict(BlobStore(db, "contexts").items()) == dict(paid)


def test_an_index_folder_that_differs_from_its_manifest_is_moved_aside(tmp_path):
    cache = DirectoryCache(tmp_path / "index")
    key = "ab" * 32
    with cache.writing("dense", key) as tmp:
        (tmp / "vectors.npy").write_bytes(os.urandom(4096))
        (tmp / "meta.json").write_text("{}")
    folder = cache.path("dense", key)
    assert by_path(repair.check(tmp_path), folder).problems == []
    with open(folder / "vectors.npy", "r+b") as f:
        f.seek(100)
        f.write(b"\x00" * 8)
    assert by_path(repair.check(tmp_path), folder).problems == [
        "vectors.npy changed (its sha256 differs)"
    ]
    assert by_path(repair.check(tmp_path, hashes=False), folder).problems == []  # same size
    (folder / "meta.json").unlink()
    fixed = by_path(repair.repair(tmp_path), folder)
    assert fixed.repaired and not cache.has("dense", key)
    assert (Path(fixed.moved_to) / "vectors.npy").exists()


def test_check_reads_a_healthy_cache_and_its_journals(tmp_path):
    BlobStore(tmp_path / "contexts.sqlite", "contexts", paid=True).put_many(answers(3))
    BlobStore(tmp_path / "contexts.sqlite", "context_charges").put_many(answers(1))
    found = by_path(repair.check(tmp_path), tmp_path / "contexts.sqlite")
    assert not found.damaged
    assert found.entries == {"contexts": 3, "context_charges": 1}
    assert found.journaled == {"contexts": 3}
    raw = sqlite3.connect(tmp_path / "contexts.sqlite")
    assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
