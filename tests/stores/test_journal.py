"""The journal of paid answers: its format by hand, torn tails, damage inside, and a SQLite store
level with it (replayed after a kill between the journal's fsync and the commit, rebuilt when
its file is lost)."""

from __future__ import annotations

import sqlite3
import struct
import zlib

import pytest

from situate.stores import journal
from situate.stores.faults import StorageError
from situate.stores.sqlite import APPLIED, BlobStore


def test_a_record_is_mark_length_crc_then_op_key_value():
    record = journal.encode(journal.PUT, "k1", b"v")
    payload = b"\x01" + b"\x02\x00" + b"k1" + b"v"  # op 1, key length 2 (LE), key, value
    assert record == b"\xa5\x5aSJ" + struct.pack("<II", 6, zlib.crc32(payload)) + payload
    assert len(record) == 12 + 6


def test_scan_reads_puts_and_deletes_in_order(tmp_path):
    path = tmp_path / "j.journal"
    journal_id = journal.create(path, [("a", b"1")])
    end = journal.append(path, [journal.encode(journal.PUT, "b", b"2")])
    end = journal.append(path, [journal.encode(journal.DELETE, "a")])
    found = journal.scan(path)
    assert found.journal_id == journal_id and found.end == end == path.stat().st_size
    assert found.records == [(1, "a", b"1"), (1, "b", b"2"), (2, "a", b"")]
    assert journal.entries(found.records) == {"b": b"2"}
    assert found.damaged_bytes == 0 and not found.torn_tail


def test_a_torn_tail_is_reported_and_the_records_before_it_kept(tmp_path):
    path = tmp_path / "j.journal"
    journal.create(path, [("a", b"1"), ("b", b"2")])
    whole = path.stat().st_size
    with open(path, "ab") as f:
        f.write(journal.encode(journal.PUT, "c", b"3" * 50)[:20])  # a write cut short
    found = journal.scan(path)
    assert journal.entries(found.records) == {"a": b"1", "b": b"2"}
    assert found.torn_tail and found.end == whole and found.damaged_bytes == 20


def test_damage_inside_costs_only_the_damaged_record(tmp_path):
    path = tmp_path / "j.journal"
    journal.create(path, [("a", b"1" * 40), ("b", b"2" * 40), ("c", b"3" * 40)])
    data = bytearray(path.read_bytes())
    first = data.index(journal.MARK)
    second = data.index(journal.MARK, first + 1)
    data[second + 20] ^= 0xFF  # a flipped byte in b's payload: its CRC fails
    path.write_bytes(bytes(data))
    found = journal.scan(path)
    assert journal.entries(found.records) == {"a": b"1" * 40, "c": b"3" * 40}
    assert found.damaged_bytes == 12 + 3 + 1 + 40 and not found.torn_tail  # b's whole record


def test_a_paid_store_appends_each_write_to_its_journal(tmp_path):
    db = tmp_path / "contexts.sqlite"
    store = BlobStore(db, "contexts", paid=True)
    store.put_many([("k1", b"one"), ("k2", b"two")])
    store.move({"k3": b"three"}, ["k1"])
    assert store.journal == tmp_path / "contexts.sqlite.contexts.journal"
    found = journal.scan(store.journal)
    assert found.records == [
        (1, "k1", b"one"), (1, "k2", b"two"), (1, "k3", b"three"), (2, "k1", b""),
    ]  # fmt: skip
    applied = sqlite3.connect(db).execute(f"SELECT journal_id, applied FROM {APPLIED}").fetchone()
    assert applied == (found.journal_id, store.journal.stat().st_size)
    assert not (tmp_path / "embeddings.sqlite.embeddings.journal").exists()
    BlobStore(tmp_path / "embeddings.sqlite", "embeddings").put_many([("e", b"v")])  # not paid
    assert not (tmp_path / "embeddings.sqlite.embeddings.journal").exists()


def test_an_answer_journaled_but_not_committed_is_replayed_not_paid_again(tmp_path):
    """What a kill between the journal's fsync and the store's commit leaves: a record past
    the applied offset. The next open (or the next write) stores it."""
    db = tmp_path / "contexts.sqlite"
    store = BlobStore(db, "contexts", paid=True)
    store.put_many([("k1", b"one")])
    journal.append(store.journal, [journal.encode(journal.PUT, "k2", b"two")])  # no commit
    assert store.get_many(["k2"]) == {}
    assert BlobStore(db, "contexts", paid=True).get_many(["k1", "k2"]) == {
        "k1": b"one",
        "k2": b"two",
    }
    journal.append(store.journal, [journal.encode(journal.PUT, "k3", b"three")])
    store.put_many([("k4", b"four")])  # a write first levels the store with the journal
    assert len(store) == 4


def test_a_lost_store_file_is_rebuilt_from_its_journal_when_opened(tmp_path):
    db = tmp_path / "contexts.sqlite"
    store = BlobStore(db, "contexts", paid=True)
    store.put_many([(f"k{i}", f"answer {i}".encode()) for i in range(30)])
    store.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"contexts.sqlite{suffix}").unlink(missing_ok=True)
    again = BlobStore(db, "contexts", paid=True)
    assert len(again) == 30 and again.get_many(["k7"]) == {"k7": b"answer 7"}


def test_a_store_written_before_journals_starts_its_journal_with_every_row(tmp_path):
    db = tmp_path / "contexts.sqlite"
    BlobStore(db, "contexts").put_many([("old1", b"a"), ("old2", b"b")])  # no journal then
    store = BlobStore(db, "contexts", paid=True)
    assert journal.entries(journal.scan(store.journal).records) == {"old1": b"a", "old2": b"b"}


def test_a_torn_tail_is_cut_by_the_next_writer(tmp_path):
    db = tmp_path / "contexts.sqlite"
    store = BlobStore(db, "contexts", paid=True)
    store.put_many([("k1", b"one")])
    whole = store.journal.stat().st_size
    with open(store.journal, "ab") as f:
        f.write(b"\xa5\x5aSJ\x40\x00")  # a record cut after 6 bytes
    store.put_many([("k2", b"two")])
    found = journal.scan(store.journal)
    assert not found.torn_tail and found.damaged_bytes == 0
    assert found.records[-1] == (1, "k2", b"two")
    assert store.journal.stat().st_size == whole + len(journal.encode(journal.PUT, "k2", b"two"))


def test_a_journal_without_its_header_is_a_one_line_error_naming_repair(tmp_path):
    db = tmp_path / "contexts.sqlite"
    store = BlobStore(db, "contexts", paid=True)
    store.put_many([("k1", b"one")])
    store.journal.write_bytes(b"garbage" * 10)
    with pytest.raises(StorageError, match=r"journal of .* is damaged .*situate cache repair"):
        BlobStore(db, "contexts", paid=True)
