"""Storage faults are one-line errors that name the file and the fix, and a write that fails
leaves the store as it was: a damaged file, a lock held past the wait, a read-only or vanished
folder, and a full disk (a real filesystem of fixed size, as SQLite's own tests use)."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess

import pytest

from conftest import damage, small_filesystem
from situate.stores import journal
from situate.stores.faults import StorageError, storage_error
from situate.stores.files import DirectoryCache, atomic_write_text
from situate.stores.sqlite import BlobStore


def test_a_damaged_file_names_itself_and_the_repair_verb(tmp_path):
    db = tmp_path / "embeddings.sqlite"
    store = BlobStore(db, "embeddings")
    store.put_many([(f"k{i}", os.urandom(1500)) for i in range(40)])
    store.close()
    damage(db, 0.3)
    with pytest.raises(StorageError) as raised:
        BlobStore(db, "embeddings").get_many([f"k{i}" for i in range(40)])
    assert raised.value.kind == "damaged" and "\n" not in str(raised.value)
    assert str(raised.value).startswith(f"{db}: the store is damaged (")
    assert f"situate cache repair cache_dir={tmp_path}" in str(raised.value)


def test_a_file_that_is_not_a_database(tmp_path):
    db = tmp_path / "contexts.sqlite"
    db.write_bytes(b"this is no database at all" * 200)
    with pytest.raises(StorageError, match=r"contexts\.sqlite: the store is damaged \(file is"):
        BlobStore(db, "contexts", paid=True)


def test_a_lock_held_past_the_wait_names_the_file(tmp_path):
    db = tmp_path / "contexts.sqlite"
    BlobStore(db, "contexts").put_many([("k", b"v")])
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # held until the test lets go: the wait always runs out
    try:
        with pytest.raises(StorageError) as raised:
            BlobStore(db, "contexts", timeout_s=0.05).put_many([("k2", b"v2")])
        assert raised.value.kind == "locked"
        assert str(raised.value).startswith(f"{db}: locked by another process")
        assert f"fuser {db}" in str(raised.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert BlobStore(db, "contexts").get_many(["k", "k2"]) == {"k": b"v"}


def test_a_vanished_folder_is_one_line(tmp_path):
    gone = tmp_path / "drive"
    with pytest.raises(OSError) as raised:
        (gone / "result.json").read_bytes()
    error = storage_error(raised.value)
    assert error.kind == "vanished"
    assert str(error).startswith(f"{gone / 'result.json'}: the file or its folder is gone")


def test_errno_and_sqlite_messages_are_classified():
    cases = {
        OSError(errno.ENOSPC, "No space left on device", "/d/f"): "no_space",
        OSError(errno.EROFS, "Read-only file system", "/d/f"): "read_only",
        OSError(errno.EACCES, "Permission denied", "/d/f"): "denied",
        OSError(errno.EIO, "Input/output error", "/d/f"): "io",
        sqlite3.DatabaseError("database disk image is malformed"): "damaged",
        sqlite3.DatabaseError("file is not a database"): "damaged",
        sqlite3.OperationalError("database or disk is full"): "no_space",
        sqlite3.OperationalError("database is locked"): "locked",
    }
    for exc, kind in cases.items():
        assert storage_error(exc, "/d/f").kind == kind, exc
    assert storage_error(ValueError("x"), "/d/f") is None
    assert storage_error(OSError(errno.ECONNREFUSED, "refused"), "/d/f") is None


def test_a_read_only_folder(tmp_path):
    with small_filesystem(tmp_path) as mount:
        store = BlobStore(mount / "contexts.sqlite", "contexts", paid=True)
        store.put_many([("k", b"v")])
        store.close()
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        with pytest.raises(StorageError) as raised:
            atomic_write_text(mount / "result.json", "{}")
        assert raised.value.kind == "read_only"
        assert str(raised.value).startswith(f"{mount / 'result.json'}: the filesystem is read-only")
        with pytest.raises(StorageError) as raised:
            BlobStore(mount / "contexts.sqlite", "contexts", paid=True).put_many([("k2", b"v")])
        assert raised.value.kind == "read_only", raised.value


def test_a_full_disk_leaves_a_paid_store_as_it_was_and_loses_no_answer(tmp_path):
    """Batches are written until the disk is full: every batch before the one that fails is
    whole, that one is all or nothing; once space is freed, opening the store again replays what
    its journal holds, so every answer journaled is stored."""
    with small_filesystem(tmp_path, "160k") as mount:
        (mount / "filler").write_bytes(bytes(32_000))  # what the user frees afterwards
        db = mount / "contexts.sqlite"
        store = BlobStore(db, "contexts", paid=True)
        written: dict[str, bytes] = {}
        failed: dict[str, bytes] = {}
        for b in range(200):
            batch = [(f"b{b}-{i}", os.urandom(700)) for i in range(4)]
            try:
                store.put_many(batch)
            except StorageError as e:
                assert e.kind == "no_space" and "\n" not in str(e), e
                assert str(e).startswith((f"{db}: no space", f"{store.journal}: no space"))
                failed = dict(batch)
                break
            written.update(batch)
        assert failed, "the disk never filled"
        stored = dict(store.items())
        assert {k: stored[k] for k in written} == written  # every batch before it, whole
        assert set(stored) & set(failed) in (set(), set(failed))  # all or nothing
        store.close()
        (mount / "filler").unlink()
        again = dict(BlobStore(db, "contexts", paid=True).items())
        journaled = journal.entries(journal.scan(store.journal).records)
        assert set(written) <= set(journaled) <= set(again)
        assert set(again) in (set(written), set(written) | set(failed))


def test_a_full_disk_during_an_index_build_is_one_line_and_leaves_no_folder(tmp_path):
    with small_filesystem(tmp_path, "64k") as mount:
        cache = DirectoryCache(mount / "index")
        with pytest.raises(StorageError) as raised, cache.writing("dense", "ab" * 32) as tmp:
            (tmp / "index.faiss").write_bytes(os.urandom(200_000))
        assert raised.value.kind == "no_space"
        assert str(raised.value).startswith(f"{tmp}: no space left") or str(
            raised.value
        ).startswith(f"{cache.path('dense', 'ab' * 32)}: no space left")
        assert not cache.has("dense", "ab" * 32)
        assert list((mount / "index" / "dense").iterdir()) == []  # no temporary left behind


def test_a_file_cut_inside_its_last_page_is_damaged_not_read_as_zeros(tmp_path):
    """SQLite reads a page cut short as zeros and its integrity check passes; the header's page
    count tells the file is short."""
    db = tmp_path / "generations.sqlite"
    store = BlobStore(db, "generations", paid=True)
    store.put_many([(f"k{i}", b'{"text": "an answer"}' * 20) for i in range(30)])
    store.close()
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size - 93)
    with pytest.raises(StorageError, match=r"generations\.sqlite: the store is damaged \(trunc"):
        BlobStore(db, "generations", paid=True)


def test_a_value_that_does_not_read_back_is_the_stores_damage(tmp_path):
    from situate.stores.faults import decoded

    with pytest.raises(StorageError) as raised:
        decoded(tmp_path / "contexts.sqlite", "ab" * 32, json.loads, b'{"text": "cut sh')
    assert raised.value.kind == "damaged"
    assert str(raised.value).startswith(f"{tmp_path / 'contexts.sqlite'}: the store is damaged")
    assert "entry abababababab does not read back" in str(raised.value)
