"""Torn writes: a process killed while writing a cache or a store leaves nothing that reads as
valid; the next run ignores what it left and redoes it."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import pytest
from reliability_support import (
    KEY,
    child,
    context,
    contextualizing_child,
    corpus,
    killed_itself,
)

from conftest import wait_until
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.money.pricing import load_price_book
from situate.stores.files import DirectoryCache, atomic_write_text
from situate.stores.sqlite import BlobStore

# -- DirectoryCache ----------------------------------------------------------------------------


def test_a_directory_build_killed_halfway_is_never_read_and_is_redone(tmp_path):
    key = "ab" * 32
    proc = child(
        f"""
        import os, signal
        from situate.stores.files import DirectoryCache
        with DirectoryCache({str(tmp_path)!r}).writing("dense", {key!r}) as tmp:
            (tmp / "index.faiss").write_bytes(b"half an ind")
            os.kill(os.getpid(), signal.SIGKILL)  # before the folder is renamed into place
        """
    )
    assert killed_itself(proc)
    cache = DirectoryCache(tmp_path)
    assert not cache.has("dense", key) and not cache.path("dense", key).exists()
    left = cache.stale_temporaries("dense", key)
    assert len(left) == 1 and left[0].name.startswith(".") and (left[0] / "index.faiss").exists()

    with cache.writing("dense", key) as tmp:  # the next build redoes it and sweeps the leftover
        (tmp / "index.faiss").write_bytes(b"a whole index")
    assert cache.has("dense", key)
    assert (cache.path("dense", key) / "index.faiss").read_bytes() == b"a whole index"
    assert sorted(p.name for p in cache.path("dense", key).parent.iterdir()) == [key]


def test_a_live_builders_temporary_folder_is_left_alone(tmp_path):
    cache = DirectoryCache(tmp_path)
    key = "cd" * 32
    with cache.writing("sparse", key) as mine:
        assert cache.stale_temporaries("sparse", key) == []  # this process is alive
        (mine / "x").write_text("x")
    assert cache.has("sparse", key)


def test_replacing_a_folder_swaps_it_whole(tmp_path):
    cache = DirectoryCache(tmp_path)
    key = "ef" * 32
    for version in ("old", "new"):
        with cache.writing("index", key, replace=True) as tmp:
            (tmp / "manifest.json").write_text(version)
            (tmp / version).write_text(version)
    folder = cache.path("index", key)
    assert sorted(p.name for p in folder.iterdir()) == [".manifest.json", "manifest.json", "new"]
    assert [p.name for p in folder.parent.iterdir()] == [key]  # the old one is gone
    with cache.writing("index", key) as tmp:  # without replace, an existing folder is kept
        (tmp / "manifest.json").write_text("other")
    assert (folder / "manifest.json").read_text() == "new"


# -- SQLite BlobStore --------------------------------------------------------------------------


def test_a_transaction_killed_mid_batch_leaves_nothing_of_that_batch(tmp_path):
    db = tmp_path / "blobs.sqlite"
    proc = child(
        f"""
        import os, signal
        from situate.stores.sqlite import BlobStore
        store = BlobStore({str(db)!r}, "embeddings")
        store.put_many([(f"a{{i}}", b"x" * 100) for i in range(100)])  # committed
        with store._transaction() as conn:  # the next batch, killed halfway through its rows
            for i in range(100):
                conn.execute("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", (f"b{{i}}", b"y" * 100))
                if i == 50:
                    os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    assert killed_itself(proc)
    assert Path(f"{db}-wal").exists()  # the log holds the torn transaction's pages, if any
    store = BlobStore(db, "embeddings")
    assert len(store) == 100
    assert store.get_many([f"b{i}" for i in range(100)]) == {}
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store.put_many([(f"b{i}", b"y" * 100) for i in range(100)])  # redone
    assert len(store) == 200


def test_batches_killed_at_random_times_are_all_or_nothing(tmp_path):
    db = tmp_path / "blobs.sqlite"
    rng = random.Random(7)
    for round_ in range(3):
        proc = child(
            f"""
            from situate.stores.sqlite import BlobStore
            store = BlobStore({str(db)!r}, "vectors")
            for b in range(10_000):
                store.put_many([(f"{round_}-{{b}}-{{i}}", bytes(2048)) for i in range(300)])
            """
        )
        committed = 300 * (round_ + 1)  # this round's first batch
        wait_until(
            lambda n=committed: db.exists() and len(BlobStore(db, "vectors")) >= n,
            f"{committed} rows committed",
        )
        time.sleep(rng.uniform(0, 0.05))  # a random kill point, not a wait for anything
        proc.kill()
        assert killed_itself(proc)
    rows = sqlite3.connect(db).execute("SELECT key FROM vectors").fetchall()
    per_batch: dict[str, int] = {}
    for (key,) in rows:
        batch = key.rsplit("-", 1)[0]
        per_batch[batch] = per_batch.get(batch, 0) + 1
    assert len(per_batch) >= 3 and set(per_batch.values()) == {300}  # no partial batch


# -- single files ----------------------------------------------------------------------------


def test_atomic_files_are_old_or_new_never_a_prefix(tmp_path):
    target = tmp_path / "result.json"
    size = 8_000_000
    proc = child(
        f"""
        from situate.stores.files import atomic_write_text
        for i in range(1000):
            atomic_write_text({str(target)!r}, "AB"[i % 2] * {size})
        """
    )
    wait_until(target.exists, "the first write")
    time.sleep(0.15)  # a random kill point, not a wait for anything
    proc.kill()
    assert killed_itself(proc)
    text = target.read_text()
    assert len(text) == size and text in ("A" * size, "B" * size)
    leftovers = [p for p in tmp_path.iterdir() if p != target]
    assert all(p.name.startswith(".result.json.") for p in leftovers)  # never read as results
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"


# -- the context store and the budget across a kill ------------------------------------------


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.mark.slow
def test_calls_in_flight_at_a_kill_stay_charged_in_the_budget(key_env, tmp_path):
    corp, chunks = corpus((8,))
    store = tmp_path / "contexts.sqlite"
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        emu.hold(after=1)  # the document's first call is answered, the next ones stay in flight
        proc = contextualizing_child(emu, store, (8,))
        assert emu.wait_held(4), "the child never had 4 calls in flight"
        proc.kill()
        assert killed_itself(proc)
        emu.release()  # the server reads, answers and bills what was in flight, for nobody
        assert emu.wait_idle()
        assert [(r.billed, r.client_gone) for r in emu.requests] == [(True, False)] + [
            (True, True)
        ] * 4

        ctx = context(emu, store, concurrency=4, budget_usd=1.0, pricing=load_price_book())
        ctx.contextualize(corp, chunks)
    assert all(s is not None for s in ctx.lookup(corp, chunks))  # nothing lost
    assert len(ctx.calls) == 7  # the four answers the kill lost are paid again
    # each of them is still counted by the budget of the next run, at its estimate: the pool
    # sent the calls of chunks 1 to 4 (in order) when the kill came
    rendered = ctx.plan(corp, chunks)[2]
    estimates = [ctx.budget.estimate(ctx._request(rendered[row])) for row in (1, 2, 3, 4)]
    assert ctx.stats["budget_earlier_unanswered_attempts"] == 4
    assert ctx.stats["budget_earlier_unanswered_usd"] == pytest.approx(sum(estimates))
