"""Content hashes, the SQLite BlobStore and the all-or-nothing DirectoryCache."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from situate.stores.files import DirectoryCache
from situate.stores.keys import content_hash, texts_hash
from situate.stores.sqlite import BlobStore

# ---------------------------------------------------------------- hashes


def test_content_hash_is_sha256_of_canonical_json_parts() -> None:
    # each part is json.dumps(part, sort_keys=True) followed by a NUL byte
    expected = hashlib.sha256(b'{"a": 1, "b": [1, 2]}\x00"query"\x00').hexdigest()
    assert content_hash({"b": [1, 2], "a": 1}, "query") == expected


def test_content_hash_is_stable_and_ignores_dict_key_order() -> None:
    assert content_hash({"model": "m", "dim": 3}, "text") == content_hash(
        {"dim": 3, "model": "m"}, "text"
    )
    # stable: the same in another process (Python's own hash() of a str is not), and by hand
    other = subprocess.run(
        [sys.executable, "-c", "from situate.stores.keys import content_hash as h; print(h('x'))"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "7"},
    )  # fmt: skip
    assert other.stdout.strip() == content_hash("x") == hashlib.sha256(b'"x"\x00').hexdigest()


def test_content_hash_is_order_sensitive() -> None:
    assert content_hash("a", "b") != content_hash("b", "a")
    assert content_hash(["a", "b"]) != content_hash(["b", "a"])
    assert content_hash("ab", "c") != content_hash("a", "bc")
    assert content_hash(["a", "b"]) != content_hash("a", "b")  # one list vs two parts


def test_texts_hash_separates_texts() -> None:
    assert texts_hash(["ab", "c"]) != texts_hash(["a", "bc"])
    assert texts_hash(["a", "b"]) != texts_hash(["b", "a"])
    # each text is its UTF-8 length as 8 little-endian bytes, then its bytes
    expected = hashlib.sha256(
        (2).to_bytes(8, "little") + b"ab" + (1).to_bytes(8, "little") + b"c"
    ).hexdigest()
    assert texts_hash(["ab", "c"]) == expected
    assert texts_hash(iter(["ab", "c"])) == expected  # any iterable
    assert texts_hash(["é"]) == hashlib.sha256((2).to_bytes(8, "little") + "é".encode()).hexdigest()


# ---------------------------------------------------------------- BlobStore


def test_blobstore_put_get_len(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "sub" / "cache.sqlite", "embeddings")  # folder is created
    assert len(store) == 0
    store.put_many([("k1", b"\x00\x01"), ("k2", b"two")])
    assert len(store) == 2
    assert store.get_many(["k1", "missing", "k2"]) == {"k1": b"\x00\x01", "k2": b"two"}
    assert store.get_many([]) == {}
    store.put_many([("k1", b"new")])  # replaces
    assert store.get_many(["k1"]) == {"k1": b"new"}
    assert len(store) == 2


def test_blobstore_get_many_beyond_the_parameter_limit(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "cache.sqlite", "t")
    store.put_many((f"k{i}", str(i).encode()) for i in range(2000))
    keys = [f"k{i}" for i in range(0, 2000, 2)] + [f"absent{i}" for i in range(500)]  # 1500 keys
    found = store.get_many(keys)
    assert len(found) == 1000
    assert found["k0"] == b"0"
    assert found["k1998"] == b"1998"
    assert "k1" not in found
    assert len(store) == 2000


def test_two_blobstores_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    first, second = BlobStore(path, "t"), BlobStore(path, "t")
    first.put_many([("a", b"1")])
    assert second.get_many(["a"]) == {"a": b"1"}
    second.put_many([("b", b"2")])
    assert first.get_many(["a", "b"]) == {"a": b"1", "b": b"2"}
    assert len(first) == len(second) == 2


def test_tables_are_separate(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    BlobStore(path, "embeddings").put_many([("k", b"vector")])
    contexts = BlobStore(path, "contexts")
    assert contexts.get_many(["k"]) == {}
    assert len(contexts) == 0


# ---------------------------------------------------------------- DirectoryCache


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_writing_renames_into_place(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    key = "0123456789abcdef"
    assert not cache.has("index", key)
    with cache.writing("index", key) as tmp:
        assert tmp.parent == tmp_path / "index"
        assert tmp != cache.path("index", key)
        assert not cache.has("index", key)  # not visible while being written
        (tmp / "data.bin").write_bytes(b"payload")
    assert cache.path("index", key) == tmp_path / "index" / key
    assert cache.has("index", key)
    assert (cache.path("index", key) / "data.bin").read_bytes() == b"payload"
    assert leftovers(tmp_path / "index") == [key]  # no temporary folder left


def test_writing_failure_leaves_nothing(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    with pytest.raises(RuntimeError, match="boom"), cache.writing("index", "abc") as tmp:
        (tmp / "half.bin").write_bytes(b"half")
        raise RuntimeError("boom")
    assert not cache.has("index", "abc")
    assert not cache.path("index", "abc").exists()
    assert leftovers(tmp_path / "index") == []


def test_writing_keeps_a_build_finished_first_by_another_process(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    theirs = cache.path("index", "abc")
    theirs.mkdir(parents=True)
    (theirs / "theirs.bin").write_bytes(b"theirs")
    with cache.writing("index", "abc") as tmp:
        (tmp / "mine.bin").write_bytes(b"mine")
    assert leftovers(theirs) == ["theirs.bin"]
    assert leftovers(tmp_path / "index") == ["abc"]
