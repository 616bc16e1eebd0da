"""Storage faults for any process: ``benchmarks/faultinject.c`` as an ``LD_PRELOAD`` shim.

As SQLite's own test suite makes the Nth write of its VFS fail, the shim makes the Nth write (or
fsync, truncate, open for writing, rename) of the files whose path holds a substring fail with
``ENOSPC``, ``EIO`` or any errno (or SIGKILL the process right before or after it), in a real
``situate`` process, whatever library writes (SQLite,
Python's io, faiss's stdio). :func:`build` compiles it with gcc into
``outputs/reliability/build/`` (again when the ``.c`` changes); :func:`env` is the environment
that loads it; :func:`count_ops` runs a command once under it without faults and counts the
matching operations, to pick seeded fault points among them::

    from benchmarks.faultinject import env, count_ops
    n = count_ops(cmd, "contexts.sqlite").total
    subprocess.run(cmd, env={**os.environ, **env("contexts.sqlite", at=n // 2, sticky=True)})

Linux (glibc) only. The variables (``FAULT_PATH``, ``FAULT_OPS``, ``FAULT_AT``, ``FAULT_ERRNO``,
``FAULT_STICKY``, ``FAULT_SHORT``, ``FAULT_WHEN``, ``FAULT_LOG``, ``FAULT_COUNT``) are described in the ``.c``.
Counts and fault points are per process: a child process that loads the shim counts its own.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SOURCE = HERE / "faultinject.c"
BUILD = REPO / "outputs" / "reliability" / "build"
DEFAULT_OPS = "write,fsync,truncate"
CATEGORIES = ("write", "fsync", "truncate", "open", "rename", "mkdir")


class BuildError(RuntimeError):
    """gcc is missing, or the shim did not compile."""


def gcc() -> str | None:
    """The C compiler the shim is built with (``$CC``, else ``gcc``), or None when missing."""
    return shutil.which(os.environ.get("CC", "gcc"))


def source_hash() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]


def build(out: str | Path | None = None) -> Path:
    """The shim's shared library, compiled when missing or when ``faultinject.c`` changed (its
    name carries the hash of the source); the compile is atomic, so parallel callers are safe."""
    folder = Path(out) if out is not None else BUILD
    target = folder / f"faultinject-{source_hash()}.so"
    if target.exists():
        return target
    compiler = gcc()
    if compiler is None:
        raise BuildError("gcc not found: install it (apt-get install gcc) or set CC")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".faultinject-", suffix=".so", dir=folder)
    os.close(fd)
    cmd = [compiler, "-O2", "-Wall", "-shared", "-fPIC", "-o", tmp, str(SOURCE), "-ldl"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        os.unlink(tmp)
        raise BuildError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    os.replace(tmp, target)
    for old in folder.glob("faultinject-*.so"):  # earlier sources' builds
        if old != target:
            old.unlink(missing_ok=True)
    return target


def env(
    path_substr: str,
    at: int,
    errno_name: str = "ENOSPC",
    ops: str = DEFAULT_OPS,
    sticky: bool = False,
    short: bool = False,
    when: str = "before",
    log: str | Path | None = None,
    count: str | Path | None = None,
    base: dict | None = None,
) -> dict[str, str]:
    """The variables that make a process fail its ``at``-th (1-based; 0: none, count only)
    matching operation (``ops``) on files whose path contains ``path_substr`` with
    ``errno_name`` (``"SIGKILL"``: the process kills itself there, ``when`` "before" or "after"
    the operation is made); ``sticky``: every later one too; ``log``: a line per fault fired there;
    ``count``: the counts at exit there. ``LD_PRELOAD`` keeps what ``base`` (default
    ``os.environ``) preloads already. Merge into an environment: ``{**os.environ, **env(...)}``."""
    so = str(build())
    preload = (base if base is not None else os.environ).get("LD_PRELOAD", "")
    out = {
        "LD_PRELOAD": f"{so}:{preload}" if preload else so,
        "FAULT_PATH": path_substr,
        "FAULT_OPS": ops,
        "FAULT_AT": str(int(at)),
        "FAULT_ERRNO": errno_name,
        "FAULT_STICKY": "1" if sticky else "0",
        "FAULT_SHORT": "1" if short else "0",
        "FAULT_WHEN": when,
    }
    if log is not None:
        out["FAULT_LOG"] = str(log)
    if count is not None:
        out["FAULT_COUNT"] = str(count)
    return out


@dataclass
class Counts:
    """The matching operations of a command run without faults."""

    total: int = 0  # over every process that made one
    by_op: dict[str, int] = field(default_factory=dict)  # per function (pwrite64, fdatasync...)
    processes: list[dict] = field(default_factory=list)  # per process: pid, matched, ops
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""


def read_counts(path: str | Path) -> Counts:
    """What the processes appended to a ``FAULT_COUNT`` file."""
    counts = Counts()
    path = Path(path)
    if not path.exists():
        return counts
    for line in path.read_text().splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "pid" not in fields:
            continue
        ops = {k: int(v) for k, v in fields.items() if k not in ("pid", "matched", "fired")}
        counts.processes.append(
            {"pid": int(fields["pid"]), "matched": int(fields["matched"]), "ops": ops}
        )
        counts.total += int(fields["matched"])
        for op, n in ops.items():
            counts.by_op[op] = counts.by_op.get(op, 0) + n
    return counts


def count_ops(
    cmd: list[str],
    path_substr: str,
    ops: str = DEFAULT_OPS,
    env_base: dict | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
) -> Counts:
    """Run ``cmd`` once under the shim, with no fault, and count its operations (``ops``) on
    files whose path contains ``path_substr``."""
    base = dict(env_base if env_base is not None else os.environ)
    with tempfile.TemporaryDirectory(prefix="faultcount-") as tmp:
        count = Path(tmp) / "count"
        full = {**base, **env(path_substr, 0, ops=ops, count=count, base=base)}
        proc = subprocess.run(
            cmd, env=full, cwd=cwd, capture_output=True, text=True, timeout=timeout
        )
        counts = read_counts(count)
    counts.returncode, counts.stdout, counts.stderr = proc.returncode, proc.stdout, proc.stderr
    return counts


FIRED = re.compile(r"^fired pid=(\d+) op=(\S+) n=(\d+) errno=(\S+) t=([\d.]+) path=(.*)$")


def read_log(path: str | Path) -> list[dict]:
    """The faults fired, from a ``FAULT_LOG`` file: pid, op, n (its rank), errno, t (when, as
    ``time.time()``), path."""
    path = Path(path)
    if not path.exists():
        return []
    fired = []
    for line in path.read_text().splitlines():
        m = FIRED.match(line)
        if m:
            pid, op, n, code, t, where = m.groups()
            fired.append(
                {
                    "pid": int(pid),
                    "op": op,
                    "n": int(n),
                    "errno": code,
                    "t": float(t),
                    "path": where,
                }
            )
    return fired


def points(total: int, k: int, rng: random.Random) -> list[int]:
    """``k`` seeded fault points among ``total`` operations (1-based): one drawn in each of ``k``
    equal strata, so early, middle and late writes are all hit; fewer when ``total < k``."""
    if total <= 0 or k <= 0:
        return []
    k = min(k, total)
    chosen = []
    for i in range(k):
        lo, hi = 1 + (total * i) // k, (total * (i + 1)) // k
        chosen.append(rng.randint(lo, max(lo, hi)))
    return sorted(set(chosen))
