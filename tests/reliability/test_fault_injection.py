"""Issue 45, item 7: ``benchmarks/faultinject.c``, an ``LD_PRELOAD`` shim that makes the Nth
write of chosen files fail (as SQLite's test suite does), shown on real child processes: a SQLite
write meets ``database or disk is full`` at the chosen write, a plain file write ``OSError``
errno 28, the fault log names the file, and files the shim does not match are untouched."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fi = _load("faultinject")

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD shim: Linux only"),
    pytest.mark.skipif(
        fi.gcc() is None, reason="gcc not found: the fault-injection shim is compiled on demand"
    ),
]

# a child that writes rows to a SQLite file (WAL, one transaction per row, as the stores do) and
# a plain file beside it, and prints what it met as JSON
SQLITE_CHILD = textwrap.dedent(
    """
    import json, sqlite3, sys
    db_path, other = sys.argv[1], sys.argv[2]
    with open(other, "wb") as f:
        f.write(b"o" * 100_000)
    db = sqlite3.connect(db_path, isolation_level=None)
    out = {"rows": 0, "error": None}
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v BLOB)")
        for i in range(40):
            db.execute("INSERT INTO t VALUES (?, ?)", (str(i), b"x" * 3000))
            out["rows"] += 1
    except sqlite3.Error as e:
        out["error"] = [type(e).__name__, str(e)]
    with open(other, "ab") as f:
        f.write(b"p" * 100_000)
    print(json.dumps(out))
    """
)

FILE_CHILD = textwrap.dedent(
    """
    import json, os, sys
    out = {"writes": 0, "error": None}
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for i in range(10):
            os.write(fd, b"z" * 1000)
            out["writes"] += 1
        os.fsync(fd)
    except OSError as e:
        out["error"] = [e.errno, e.strerror]
    print(json.dumps(out))
    """
)


def run_child(code: str, args: list[str], extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAULT_")}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_shim_builds_once_per_source(tmp_path: Path):
    first = fi.build(tmp_path)
    assert first.exists() and first.suffix == ".so"
    mtime = first.stat().st_mtime_ns
    assert fi.build(tmp_path) == first and first.stat().st_mtime_ns == mtime  # not compiled again
    # named by the source's hash: a changed faultinject.c builds a new one
    assert first.name == f"faultinject-{fi.source_hash()}.so"


def test_a_sqlite_write_fails_at_the_chosen_write_and_the_log_names_the_file(tmp_path: Path):
    db, other = tmp_path / "contexts.sqlite", tmp_path / "other.bin"
    counted = tmp_path / "count"
    clean = run_child(
        SQLITE_CHILD, [str(db), str(other)], fi.env("contexts.sqlite", 0, count=counted)
    )
    assert clean == {"rows": 40, "error": None}  # count only: nothing fails
    total = fi.read_counts(counted).total
    assert total > 40  # the WAL's page writes, its syncs, the header
    db.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    other.unlink()

    log = tmp_path / "fault.log"
    at = total // 2
    got = run_child(
        SQLITE_CHILD,
        [str(db), str(other)],
        fi.env("contexts.sqlite", at, "ENOSPC", sticky=True, log=log),
    )
    assert got["error"] is not None and got["error"][0] == "OperationalError"
    assert "full" in got["error"][1] or "I/O" in got["error"][1]
    assert 0 < got["rows"] < 40
    fired = fi.read_log(log)
    assert fired and fired[0]["n"] == at and fired[0]["errno"] == "ENOSPC"
    assert Path(fired[0]["path"]).name.startswith("contexts.sqlite")
    assert all("contexts.sqlite" in f["path"] for f in fired)
    # the file the shim does not match was written whole, before and after the fault
    assert other.read_bytes() == b"o" * 100_000 + b"p" * 100_000


def test_a_plain_write_gets_oserror_28_or_eio_at_the_nth_write(tmp_path: Path):
    target = tmp_path / "cache" / "result.json"
    target.parent.mkdir()
    log = tmp_path / "fault.log"
    got = run_child(FILE_CHILD, [str(target)], fi.env("/cache/", 4, "ENOSPC", log=log))
    assert got == {"writes": 3, "error": [errno.ENOSPC, "No space left on device"]}
    assert target.stat().st_size == 3000
    assert [f["op"] for f in fi.read_log(log)] == ["write"]

    # only fsync counts: the first one fails, with EIO; the writes went through
    got = run_child(FILE_CHILD, [str(target)], fi.env("/cache/", 1, "EIO", ops="fsync"))
    assert got == {"writes": 10, "error": [errno.EIO, "Input/output error"]}
    assert target.stat().st_size == 10_000


def test_a_fault_that_is_not_sticky_fails_one_write_only(tmp_path: Path):
    target = tmp_path / "out" / "data.bin"
    target.parent.mkdir()
    code = textwrap.dedent(
        """
        import json, os, sys
        fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
        met = []
        for i in range(6):
            try:
                os.write(fd, b"a" * 10)
                met.append(0)
            except OSError as e:
                met.append(e.errno)
        print(json.dumps(met))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAULT_")}

    def met(sticky: bool) -> list[int]:
        extra = fi.env("/out/", 3, "ENOSPC", sticky=sticky)
        proc = subprocess.run(
            [sys.executable, "-c", code, str(target)], env={**env, **extra},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        return json.loads(proc.stdout)

    assert met(sticky=False) == [0, 0, errno.ENOSPC, 0, 0, 0]
    assert met(sticky=True) == [0, 0, errno.ENOSPC, errno.ENOSPC, errno.ENOSPC, errno.ENOSPC]


def test_count_ops_counts_a_command_and_points_are_seeded_across_it(tmp_path: Path):
    target = tmp_path / "cache" / "f.bin"
    target.parent.mkdir()
    counts = fi.count_ops([sys.executable, "-c", FILE_CHILD, str(target)], "/cache/")
    assert counts.returncode == 0, counts.stderr
    assert counts.total == 11 and counts.by_op == {"write": 10, "fsync": 1}
    assert len(counts.processes) == 1
    import random

    chosen = fi.points(counts.total, 4, random.Random(0))
    assert chosen == fi.points(counts.total, 4, random.Random(0))  # seeded
    assert len(chosen) == 4 and all(1 <= p <= 11 for p in chosen) and chosen == sorted(chosen)
    assert fi.points(2, 5, random.Random(0)) == [1, 2]


def test_opening_for_writing_can_fail_as_a_read_only_folder(tmp_path: Path):
    target = tmp_path / "cache" / "new.bin"
    target.parent.mkdir()
    extra = fi.env("/cache/", 1, "EROFS", ops="open", sticky=True)
    code = "import sys\ntry:\n open(sys.argv[1], 'w')\nexcept OSError as e:\n print(e.errno)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAULT_")}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(target)], env={**env, **extra},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.stdout.strip() == str(errno.EROFS) and not target.exists()


def test_a_kill_lands_before_or_after_the_chosen_operation(tmp_path: Path):
    """``SIGKILL``: the process dies at the chosen write (not made) or right after an fsync
    (made: what it wrote is on disk, as a journal record fsynced before its store's commit)."""
    target = tmp_path / "cache" / "j.journal"
    target.parent.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAULT_")}
    cmd = [sys.executable, "-c", FILE_CHILD, str(target)]
    log = tmp_path / "log"
    extra = fi.env("/cache/", 3, "SIGKILL", log=log)
    proc = subprocess.run(cmd, env={**env, **extra}, capture_output=True, timeout=120)
    assert proc.returncode == -9 and target.stat().st_size == 2000
    assert fi.read_log(log)[0]["errno"] == "SIGKILL"
    extra = fi.env("/cache/", 1, "SIGKILL", ops="fsync", when="after")
    proc = subprocess.run(cmd, env={**env, **extra}, capture_output=True, timeout=120)
    assert proc.returncode == -9 and target.stat().st_size == 10_000


@pytest.mark.slow
def test_the_storage_harness_stops_a_full_disk_with_one_line_and_repairs_a_damaged_store(
    tmp_path: Path,
):
    """``benchmarks/storage_faults.py`` on the contexts store (against the Anthropic emulator):
    a full disk met mid-run and a damaged file each stop ``situate run`` with one ``error:``
    line, no traceback; ``situate cache repair`` leaves nothing damaged, nothing paid is lost,
    and a run without faults finishes."""
    sf = _load("storage_faults")
    data = Path(sf._env()["SITUATE_DATA_DIR"]) / "cookbook-codebase" / "codebase_chunks.json"
    if not data.exists():
        pytest.skip(f"cookbook data not found at {data} (run `situate data fetch cookbook`)")
    settings = sf.Settings(
        targets=("contexts",), kinds=("enospc", "damage_overwrite"), points=1, damage_points=1,
        workers=2, scenarios=(), out=tmp_path,
    )  # fmt: skip
    summary = sf.run_suite(settings, echo=lambda *_: None)
    rows = summary["kinds"]
    assert rows["all"]["faults"] >= 1, rows
    for row in rows.values():  # a fault in a write the run can do without (a checkpoint at exit)
        assert row["one_line_errors"] + row["absorbed"] == row["faults"], rows
    assert summary["failures"] == [], summary["failures"]
    assert (tmp_path / "storage_summary.json").exists()


# a child that stores 30 answers in a paid BlobStore, one transaction each, and prints what it
# met as JSON (with the warnings the store logged)
STORE_CHILD = textwrap.dedent(
    """
    import json, logging, sys
    from situate.stores.faults import StorageError
    from situate.stores.sqlite import BlobStore
    warnings = []
    class Keep(logging.Handler):
        def emit(self, record):
            warnings.append(record.getMessage())
    logging.getLogger("situate.stores.sqlite").addHandler(Keep())
    store = BlobStore(sys.argv[1], "contexts", paid=True)
    out = {"stored": 0, "error": None, "kind": None}
    try:
        for i in range(30):
            store.put_many([(f"k{i}", b"v" * 500)])
            out["stored"] += 1
    except StorageError as e:
        out["error"], out["kind"] = str(e), e.kind
    try:
        out["read_back"] = len(store.get_many([f"k{i}" for i in range(30)]))
    except StorageError:
        out["read_back"] = None
    out["warnings"] = warnings
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("sticky", [False, True], ids=["once", "stays"])
def test_an_io_error_is_tried_once_more_and_one_that_stays_is_one_line(tmp_path: Path, sticky):
    db = tmp_path / "contexts.sqlite"
    counted = tmp_path / "count"
    src = {"PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    clean = run_child(
        STORE_CHILD, [str(db)], {**src, **fi.env("contexts.sqlite", 0, count=counted)}
    )
    assert clean["stored"] == 30 and clean["warnings"] == []
    total = fi.read_counts(counted).total
    for leftover in tmp_path.glob("contexts.sqlite*"):
        leftover.unlink()
    got = run_child(
        STORE_CHILD,
        [str(db)],
        {**src, **fi.env("contexts.sqlite", total // 2, errno_name="EIO", sticky=sticky)},
    )
    if not sticky:  # a passing fault: the store tries the transaction again and loses nothing
        assert got["error"] is None and got["stored"] == 30 and got["read_back"] == 30
        assert len(got["warnings"]) == 1 and "trying once more" in got["warnings"][0]
    else:  # a disk that keeps failing: one line, with SQLite's own words, and nothing half-written
        assert got["kind"] == "io" and "\n" not in got["error"]
        assert got["error"].startswith(f"{db}: input/output error (")
        assert "disk I/O error" in got["error"] or "Input/output error" in got["error"]
        assert got["stored"] < 30 and got["read_back"] is None
