"""An append-only journal of paid answers beside a SQLite store, from which the store is rebuilt.

Answers that cost money (contexts, generated questions, judgments, API embeddings and rerank
scores) are appended to ``<store file>.<table>.journal`` and fsynced inside the store's own write
transaction, before the transaction commits and before the answer is used. The store records how
far into the journal it has applied (table ``_journal``: the journal's id and byte offset, in
the same transaction as the rows), so:

- a process killed between the journal's fsync and the store's commit leaves a record past the
  applied offset, which the next writer or the next open replays: the answer is not paid again;
- a store file that is lost or damaged is rebuilt from its journal (a missing file at the next
  open, a damaged one by ``situate cache repair``);
- writers append under SQLite's write lock (``BEGIN IMMEDIATE``), so the journal's order is the
  commits' order and the applied offset never passes a record that is not in the store.

The format is binary and self-checking. A header line ``SITUATE-JOURNAL 1 <id>\\n`` (the id is
random, so a rewritten journal is never mistaken for the one a store applied), then records::

    MARK (4 bytes) | length (u32 LE) | crc32 of the payload (u32 LE) | payload
    payload = op (u8: 1 put, 2 delete) | key length (u16 LE) | key (UTF-8) | value

A record cut short by a crash (a torn tail) fails its length or CRC and is cut off by the next
writer; damage inside the file is skipped by scanning for the next ``MARK`` whose record checks,
and counted.
"""

from __future__ import annotations

import contextlib
import os
import struct
import uuid
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from situate.stores.files import fsync_dir

MAGIC = b"SITUATE-JOURNAL 1 "
MARK = b"\xa5\x5aSJ"
HEAD = struct.Struct("<4sII")  # mark, payload length, crc32
PUT, DELETE = 1, 2
MAX_RECORD = 1 << 30  # a length above this is damage, not a record


def journal_path(store: str | Path, table: str) -> Path:
    """Where the journal of ``table`` in the SQLite file ``store`` lives (beside it)."""
    store = Path(store)
    return store.with_name(f"{store.name}.{table}.journal")


def encode(op: int, key: str, value: bytes = b"") -> bytes:
    k = key.encode("utf-8")
    payload = struct.pack("<BH", op, len(k)) + k + value
    return HEAD.pack(MARK, len(payload), zlib.crc32(payload)) + payload


@dataclass
class Scan:
    """What reading a journal found: its id, its records from ``start`` on, the offset after the
    last good record (``end``), and bytes that did not check (damage inside, a torn tail)."""

    journal_id: str | None
    records: list[tuple[int, str, bytes]] = field(default_factory=list)
    end: int = 0
    damaged_bytes: int = 0
    torn_tail: bool = False
    header_end: int = 0


def _header(data: bytes) -> tuple[str | None, int]:
    if not data.startswith(MAGIC):
        return None, 0
    line_end = data.find(b"\n", len(MAGIC))
    if line_end < 0:
        return None, 0
    return data[len(MAGIC) : line_end].decode("ascii", "replace"), line_end + 1


def scan(path: str | Path, start: int | None = None) -> Scan:
    """Read the journal at ``path`` from byte ``start`` (default: its first record)."""
    data = Path(path).read_bytes()
    journal_id, header_end = _header(data)
    found = Scan(journal_id, header_end=header_end)
    if journal_id is None:
        found.damaged_bytes = len(data)
        return found
    pos = header_end if start is None or start < header_end else start
    found.end = pos
    while pos < len(data):
        record = _record_at(data, pos)
        if record is not None:
            op, key, value, nxt = record
            found.records.append((op, key, value))
            pos = found.end = nxt
            continue
        nxt = data.find(MARK, pos + 1)  # damage: the next record that checks
        while nxt >= 0 and _record_at(data, nxt) is None:
            nxt = data.find(MARK, nxt + 1)
        if nxt < 0:
            found.torn_tail = True
            found.damaged_bytes += len(data) - pos
            break
        found.damaged_bytes += nxt - pos
        pos = nxt
    return found


def _record_at(data: bytes, pos: int) -> tuple[int, str, bytes, int] | None:
    if len(data) - pos < HEAD.size:
        return None
    mark, length, crc = HEAD.unpack_from(data, pos)
    body = pos + HEAD.size
    if mark != MARK or length < 3 or length > MAX_RECORD or body + length > len(data):
        return None
    payload = data[body : body + length]
    if zlib.crc32(payload) != crc:
        return None
    op, key_len = struct.unpack_from("<BH", payload)
    if op not in (PUT, DELETE) or 3 + key_len > length:
        return None
    try:
        key = payload[3 : 3 + key_len].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return op, key, payload[3 + key_len :], body + length


def entries(records: Iterable[tuple[int, str, bytes]]) -> dict[str, bytes]:
    """The entries the records leave (later puts win, deletes remove)."""
    out: dict[str, bytes] = {}
    for op, key, value in records:
        if op == PUT:
            out[key] = value
        else:
            out.pop(key, None)
    return out


def create(path: str | Path, items: Iterable[tuple[str, bytes]] = ()) -> str:
    """Write a new journal at ``path`` holding ``items`` (to a temporary file, fsynced, renamed
    into place); returns its id."""
    path = Path(path)
    journal_id = uuid.uuid4().hex
    tmp = path.with_name(f".{path.name}.{journal_id[:8]}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + journal_id.encode() + b"\n")
            for key, value in items:
                f.write(encode(PUT, key, value))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return journal_id


def append(path: str | Path, records: Iterable[bytes]) -> int:
    """Append encoded ``records`` in one write, fsync, and return the journal's new size. A write
    that fails (a full disk) cuts the journal back to its size before it, then raises."""
    blob = b"".join(records)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        before = os.fstat(fd).st_size
        try:
            written = os.write(fd, blob)
            while written < len(blob):  # a short write: the rest, or the error that caused it
                written += os.write(fd, blob[written:])
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):  # else a torn record: the next writer cuts it
                os.ftruncate(fd, before)
            raise
        return before + len(blob)
    finally:
        os.close(fd)


def cut(path: str | Path, size: int) -> None:
    """Cut the journal back to ``size`` bytes (a torn tail past its last good record)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def puts(items: Iterable[tuple[str, bytes]]) -> Iterator[bytes]:
    for key, value in items:
        yield encode(PUT, key, value)


def deletes(keys: Iterable[str]) -> Iterator[bytes]:
    for key in keys:
        yield encode(DELETE, key)
