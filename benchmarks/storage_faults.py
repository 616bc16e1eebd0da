"""``python benchmarks/storage_faults.py`` (``make reliability``'s storage part): disk and store
faults stop a run with one line, lose nothing paid, and ``situate cache repair`` mends the rest.

Issue 45, item 7. Every fault is injected into a real ``situate`` process by the ``LD_PRELOAD``
shim of ``benchmarks/faultinject.c`` (:mod:`faultinject`), or made on disk between runs, against
the local emulators (Anthropic for contexts, generated questions and judgments; OpenAI for
embeddings), on a small slice (2 cookbook documents, 3 small markdown files for the questions).

Targets, each a store the fault lands in (the file substring the shim matches):

``contexts``      ``cache/contexts.sqlite`` (+ ``-wal``, journal): ``situate run context=llm``
``embeddings``    ``cache/embeddings.sqlite``: ``situate run`` with the OpenAI-emulated embedder
``generations``   ``cache/generations.sqlite``: ``situate questions generate``
``judgments``     ``cache/judgments.sqlite``: ``situate judge`` on a study made once beforehand
``output_files``  the run's folder (``runs/<i>/``: result.json, per_question.csv, app.log)
``index``         ``cache/index/`` (the index folders written whole, then renamed)
``mlflow_db``     ``mlflow.db`` (+ ``-journal``): ``situate run tracking=mlflow``; after a fault
                  the runs it missed are logged with ``situate track``

Fault kinds (one *chain* per target and kind: a fresh cache, the faulted runs one after the
other, each resuming what the one before stored, then a run without faults):

``enospc``          ENOSPC on every write and fsync from the Nth on (sticky: a full disk stays full)
``eio``             EIO on the Nth write, fsync or truncate alone
``kill``            SIGKILL at the Nth write (the write not made)
``kill_journal``    SIGKILL right after the Nth fsync of the store's journal, before its commit
``read_only``       EROFS opening the store for writing; ``vanished``: ENOENT there
``damage_overwrite`` N random bytes overwritten at a seeded offset of the SQLite file (or its WAL)
                    after a finished run; ``damage_truncate``: the file cut at a seeded length

The Nth operations are seeded points spread over the store's operations, counted once per target
by a fault-free run under the shim (:func:`faultinject.count_ops`). After each faulted run:
``situate cache repair cache_dir=... --json``, then ``situate cache check ... --json``, then the
next faulted run; a final run without faults must finish. Per fault kind, in
``outputs/reliability/storage_summary.json`` (and a table on stdout):

``faults``            faults injected (the shim's log says it fired, or the file was damaged)
``one_line_errors``   faulted runs that stopped with exit 2 and exactly one ``error:`` line, no
                      traceback (a kill has no error line; a fault a run absorbed, rc 0, neither)
``absorbed``          faulted runs that finished anyway (the fault was in a write the run may
                      skip, e.g. a folder's fsync, or the damage was in a free page)
``other_exits``       faulted runs that ended otherwise (rc 1, several ``error:`` lines, a hang)
``tracebacks``        ``Traceback`` in the stderr of every situate process of the chain (faulted
                      runs, repairs, checks, the final run): must be 0
``lost``              paid entries committed (in the store or fsynced in its journal) before the
                      fault, not readable after the repair: must be 0 (a paid store's entries
                      are never recomputable for free)
``paid_twice``        answers the emulator billed more than once (as ``reliability.py`` reads
                      them; all billings of a key but its last), by the run that paid for
                      nothing: ``in_flight_at_kill``, ``in_flight_at_fault`` (its request
                      reached the emulator before the fault fired, or after it but no more of
                      them than the verb's other concurrent calls: each may have passed its
                      last check before the write's error returned; unavoidable),
                      ``sent_after_fault`` (more than that: the run went on paying for
                      answers it could not keep; must be 0) and ``avoidable`` (an
                      answer of a run that finished, paid again: must be 0)
``repaired``          stores ``situate cache repair`` reported mending (moved aside, rebuilt,
                      journal replayed)
``unrepaired``        stores still damaged after the repair (``cache check`` or reading them
                      fails): must be 0
``final_run_failed``  chains whose run without faults did not finish: must be 0

``storage_details.json`` has every step (its command's overrides, fault point, rc, the error
line, the last frame of a traceback). Logs of every process: ``storage_work/<chain>/logs``.

    python benchmarks/storage_faults.py [--targets contexts,embeddings,...] [--kinds enospc,...]
        [--points 4] [--damage-points 3] [--workers 2] [--max-documents 2] [--seed 0]
        [--scenarios postgres_restart,mlflow_server_down] [--out outputs/reliability] [--storage]

(about 130 faults in 45 chains; 29 min on 2 vCPUs shared with a load average of 15-20, 18.5
CPU-minutes: about 10 minutes on 2 idle cores; ``--targets contexts --kinds enospc --points 1``
for a quick look.)

``--storage`` also merges the summary under a ``"storage"`` key of
``outputs/reliability/summary.json`` (written by ``benchmarks/reliability.py``). Exit 1 when a
must-be-0 figure is not. After the chains, two scenarios stop a server mid-run (``scenarios`` in
the summary): :func:`scenario_postgres_restart` (``store=postgres``: restarted, then stopped for
good, then a rerun) and :func:`scenario_mlflow_server_down` (a tracking server stopped mid-run,
a run while it is down, ``situate track`` once it is back).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import faultinject  # noqa: E402

import reliability  # noqa: E402

REPO = HERE.parent
MESSAGES, EMBEDDINGS = "/v1/messages", "/v1/embeddings"
STUDY = "storage_faults"

# -- what is faulted ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    verb: str  # run | questions | judge
    store: str  # the paid store whose entries are counted: a file under cache_dir
    table: str
    paid_path: str  # the emulator path that bills its entries
    fault_path: str  # the shim's FAULT_PATH: "{work}" is the chain's folder
    sqlite: bool = True  # the faults land in a SQLite store (else: plain files)
    context_llm: bool = False
    tracking: bool = False  # tracking=mlflow (a local mlflow.db under the chain's folder)
    # the paid calls the verb makes at once (its stage's default `concurrency`): when one of them
    # meets the fault, each of the others may have passed its last check before the fault could
    # be known (the write's error not yet returned): at most this many less one are unavoidable
    concurrency: int = 1


TARGETS = {
    t.name: t
    for t in (
        Target("contexts", "run", "contexts.sqlite", "contexts", MESSAGES, "contexts.sqlite",
               context_llm=True, concurrency=4),
        Target("embeddings", "run", "embeddings.sqlite", "embeddings", EMBEDDINGS,
               "embeddings.sqlite"),
        Target("generations", "questions", "generations.sqlite", "generations", MESSAGES,
               "generations.sqlite", concurrency=4),
        Target("judgments", "judge", "judgments.sqlite", "judgments", MESSAGES,
               "judgments.sqlite", concurrency=4),
        Target("output_files", "run", "embeddings.sqlite", "embeddings", EMBEDDINGS,
               "{work}/runs/", sqlite=False),
        Target("index", "run", "embeddings.sqlite", "embeddings", EMBEDDINGS, "/cache/index/",
               sqlite=False),
        Target("mlflow_db", "run", "embeddings.sqlite", "embeddings", EMBEDDINGS, "mlflow.db",
               sqlite=False, tracking=True),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Kind:
    name: str
    errno: str = "ENOSPC"  # or SIGKILL
    ops: str = "write,fsync"
    sticky: bool = False
    when: str = "before"
    journal: bool = False  # the shim matches the store's journal only
    damage: str | None = None  # overwrite | truncate: made on disk between runs
    single: bool = False  # one fault at the store's first open (read_only, vanished)
    sqlite_only: bool = False


KINDS = {
    k.name: k
    for k in (
        Kind("enospc", "ENOSPC", "write,fsync", sticky=True),
        Kind("eio", "EIO", "write,fsync,truncate"),
        Kind("kill", "SIGKILL", "write"),
        Kind("kill_journal", "SIGKILL", "fsync", when="after", journal=True, sqlite_only=True),
        Kind("read_only", "EROFS", "open", sticky=True, single=True),
        Kind("vanished", "ENOENT", "open", sticky=True, single=True),
        Kind("damage_overwrite", damage="overwrite", sqlite_only=True),
        Kind("damage_truncate", damage="truncate", sqlite_only=True),
    )
}
# what a step's outcome is called
ONE_LINE, KILLED, ABSORBED, OTHER = "one_line", "killed", "absorbed", "other"
NOT_FIRED = "not_fired"
# why an answer was paid for more than once (the last two must not happen)
CAUSES = ("in_flight_at_kill", "in_flight_at_fault", "sent_after_fault", "avoidable")


@dataclass
class Settings:
    targets: tuple[str, ...] = tuple(TARGETS)
    kinds: tuple[str, ...] = tuple(KINDS)
    points: int = 4  # faults per chain (fewer when the store has fewer operations)
    damage_points: int = 3
    workers: int = 2
    max_documents: int = 2
    questions: int = 8
    seed: int = 0
    run_timeout: float = 300.0
    scenarios: tuple[str, ...] = ("postgres_restart", "mlflow_server_down")
    out: Path = field(default_factory=lambda: REPO / "outputs" / "reliability")


def _env() -> dict[str, str]:
    env = reliability._env()
    for name in [k for k in env if k.startswith("FAULT_")]:
        del env[name]
    env.pop("MLFLOW_TRACKING_URI", None)
    return env


# -- reading a store without its code (what was committed) ---------------------------------------


def committed(cache: Path, store: str, table: str) -> tuple[dict[str, bytes], str | None]:
    """The entries of ``table`` readable from the SQLite file, plus those fsynced in its journal
    (the journal's records win: they are what the store replays): what a fault must not lose.
    The second value names what could not be read (a damaged file), else None."""
    from situate.stores import journal

    path = cache / store
    found: dict[str, bytes] = {}
    problem = None
    if path.exists():
        try:
            db = sqlite3.connect(path, timeout=30)
            try:
                found.update(db.execute(f"SELECT key, value FROM {table}").fetchall())
            finally:
                db.close()
        except sqlite3.Error as e:
            problem = f"{path.name}: {e}"
    jpath = journal.journal_path(path, table)
    if jpath.exists():
        scan = journal.scan(jpath)
        found.update(journal.entries(scan.records))
    return found, problem


def kept(cache: Path, store: str, table: str) -> tuple[dict[str, bytes], str | None]:
    """The entries the store serves after a repair, read as a run reads them (its journal
    replayed at open); the second value is the one-line error when it cannot be read."""
    from situate.stores.faults import storage_error
    from situate.stores.sqlite import BlobStore

    path = cache / store
    if not path.exists() and not (path.parent / f"{store}.{table}.journal").exists():
        return {}, None
    try:
        blobs = BlobStore(path, table, paid=True)
        try:
            return dict(blobs.items()), None
        finally:
            conn = getattr(blobs._local, "conn", None)
            if conn is not None:
                conn.close()
    except Exception as e:  # noqa: BLE001 - reported, it is the finding
        error = storage_error(e, path)
        return {}, f"{type(e).__name__}: {error or e}"


def damage(path: Path, mode: str, rng: random.Random) -> dict:
    """Overwrite seeded random bytes of ``path`` (or its WAL, a third of the time when it has
    one), or cut it at a seeded length; returns what was done."""
    wal = Path(f"{path}-wal")
    if mode == "overwrite" and wal.exists() and wal.stat().st_size > 0 and rng.random() < 1 / 3:
        path = wal
    size = path.stat().st_size
    if mode == "truncate":
        length = rng.randrange(0, max(1, size))
        os.truncate(path, length)
        return {"file": path.name, "truncated_to": length, "size": size}
    n = rng.randint(16, 4096)
    offset = rng.randrange(0, max(1, size - n))
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(rng.randbytes(n))
    return {"file": path.name, "offset": offset, "bytes": n, "size": size}


# -- one chain: a target, a kind, a fresh cache ---------------------------------------------------


def traceback_frame(stderr: str) -> str | None:
    """The last frame of the last traceback in ``stderr`` and the exception line."""
    if "Traceback" not in stderr:
        return None
    tail = stderr[stderr.rindex("Traceback") :].splitlines()
    frames = [line.strip() for line in tail if line.strip().startswith("File ")]
    named = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")
    exc = next((line for line in reversed(tail) if named.match(line)), "")
    exc = exc or next((line for line in reversed(tail) if line and not line.startswith(" ")), "")
    return f"{frames[-1] if frames else '?'} -> {exc.strip()[:300]}"


class Chain:
    def __init__(self, target: Target, kind: Kind, settings: Settings, shared: dict):
        self.target, self.kind, self.settings, self.shared = target, kind, settings, shared
        self.name = f"{target.name}-{kind.name}"
        self.work = settings.out / "storage_work" / self.name
        shutil.rmtree(self.work, ignore_errors=True)
        (self.work / "logs").mkdir(parents=True)
        self.cache = self.work / "cache"
        self.rng = random.Random(f"{settings.seed}-{self.name}")
        self.steps: list[dict] = []
        self.anthropic = self.openai = None

    # processes ------------------------------------------------------------------------------
    def _emulators(self) -> None:
        s = reliability.Settings(seed=self.settings.seed, ttft=0.0)
        logs = self.work / "logs"
        if self.target.verb != "run" or self.target.context_llm:
            self.anthropic = reliability.EmulatorProcess(
                "anthropic", 0.0, s, logs / "anthropic.log"
            )
        if self.target.verb == "run":
            self.openai = reliability.EmulatorProcess("openai", 0.0, s, logs / "openai.log")

    def _stop(self) -> None:
        for emu in (self.anthropic, self.openai):
            if emu is not None:
                emu.stop()

    def command(self, i: int) -> list[str]:
        return situate_command(self.target, self.settings, self.work, i, self.anthropic,
                               self.openai, self.shared)  # fmt: skip

    def _situate(self, argv: list[str], label: str, extra: dict | None = None) -> dict:
        """``argv`` in its own process group; its stderr kept; killed after ``run_timeout``."""
        i = len(self.steps)
        log = self.work / "logs" / f"{i:02d}-{label}"
        started = time.time()
        with open(f"{log}.out", "w") as out, open(f"{log}.err", "w") as err:
            proc = subprocess.Popen(
                argv, cwd=REPO, stdout=out, stderr=err, env={**_env(), **(extra or {})},
                start_new_session=True,
            )  # fmt: skip
            hung = False
            try:
                rc = proc.wait(self.settings.run_timeout)
            except subprocess.TimeoutExpired:
                hung = True
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
        stderr = Path(f"{log}.err").read_text(errors="replace")
        stdout = Path(f"{log}.out").read_text(errors="replace")
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        return {
            "label": label, "rc": rc, "hung": hung, "started": started, "ended": time.time(),
            "seconds": round(time.time() - started, 2), "errors": errors,
            "tracebacks": stderr.count("Traceback"), "traceback": traceback_frame(stderr),
            "stdout": stdout, "log": str(log), "stderr_tail": stderr[-600:],
        }  # fmt: skip

    def cache_verb(self, action: str) -> dict:
        argv = [sys.executable, "-m", "situate.cli", "cache", action, f"cache_dir={self.cache}",
                "--json"]  # fmt: skip
        r = self._situate(argv, action)
        r["json"] = None
        with contextlib.suppress(json.JSONDecodeError, TypeError):
            r["json"] = json.loads(r.pop("stdout"))
        if r["rc"] == 2 and "unknown verb 'cache'" in r["stderr_tail"]:
            r["unavailable"] = True
        return r

    # the chain ------------------------------------------------------------------------------
    def run(self) -> dict:
        t0 = time.time()
        self._emulators()
        try:
            if self.kind.damage:
                self._damage_chain()
            else:
                self._fault_chain()
            final = self._situate(self.command(len(self.steps)), "final")
            final.pop("stdout", None)
            self.steps.append({"step": "final", **final, "outcome": _outcome(final, None)})
            paid = self._paid_twice()
        finally:
            self._stop()
        return {"chain": self.name, "target": self.target.name, "kind": self.kind.name,
                "seconds": round(time.time() - t0, 1), "paid_twice": paid, "steps": self.steps}  # fmt: skip

    def _fault_env(self, at: int, i: int) -> dict:
        k = self.kind
        path = self.target.fault_path.format(work=self.work)
        if k.journal:
            path = f"{self.target.store}.{self.target.table}.journal"
        return faultinject.env(
            path, at, k.errno, ops=k.ops, sticky=k.sticky, when=k.when,
            log=self.work / "logs" / f"{i:02d}-fault.log",
            count=self.work / "logs" / f"{i:02d}-fault.count",
        )  # fmt: skip

    def _fault_chain(self) -> None:
        counts = self.shared["counts"][self.target.name]
        if self.kind.single:
            points = [1]
        else:
            total = _ops_total(counts, self.kind)
            points = faultinject.points(total, self.settings.points, self.rng)
        consumed = 0
        before: dict[str, bytes] = {}
        for point in points:
            i = len(self.steps)
            at = point if self.kind.single else max(1, point - consumed)
            extra = self._fault_env(at, i)
            r = self._situate(self.command(i), "fault", extra)
            fired = faultinject.read_log(extra["FAULT_LOG"])
            matched = faultinject.read_counts(extra["FAULT_COUNT"]).total
            consumed += matched
            step = {"step": i, "point": point, "at": at, "fired": fired[:3], "n_fired": len(fired),
                    "matched": matched, "fault_time": fired[0]["t"] if fired else None, **r}  # fmt: skip

            step.pop("stdout", None)
            step["outcome"] = _outcome(r, bool(fired))
            before = self._after_fault(step, before)
            self.steps.append(step)
            if not fired:  # the run made fewer operations than the point: it finished
                break

    def _damage_chain(self) -> None:
        first = self._situate(self.command(0), "clean")
        first.pop("stdout", None)
        first["outcome"] = _outcome(first, None)
        path = self.cache / self.target.store
        good, problem = kept(self.cache, self.target.store, self.target.table)
        first.update(committed_entries=len(good), new_entries=len(good), kept_entries=len(good))
        self.steps.append({"step": 0, **first})
        for _ in range(self.settings.damage_points):
            i = len(self.steps)
            if not path.exists():
                break
            done = damage(path, self.kind.damage, self.rng)
            r = self._situate(self.command(i), "damaged")
            r.pop("stdout", None)
            step = {"step": i, "damage": done, **r, "outcome": _outcome(r, True)}
            good = self._after_fault(step, good, damaged=True)
            self.steps.append(step)

    def _after_fault(self, step: dict, before: dict, damaged: bool = False) -> dict:
        """Read what was committed, repair, check, read what is kept; ``before``: what was kept
        before this step (for damage: the store before the damage)."""
        t = self.target
        if damaged:
            now = dict(before)  # what the healthy store held: the damage must not lose it
            _, problem = committed(self.cache, t.store, t.table)
        else:
            now, problem = committed(self.cache, t.store, t.table)
        step["committed_entries"] = len(now)
        step["new_entries"] = len(set(now) - set(before))
        step["unreadable_before_repair"] = problem
        for line in step.get("errors", []):  # the fix a damaged MLflow store's line gives
            fix = re.search(r"move it aside, never delete it: `([^`]+)`", line)
            if fix:  # run as the user is told to (it moves, never deletes)
                subprocess.run(fix.group(1), shell=True, cwd=REPO, check=True)
                step["moved_aside"] = fix.group(1)
        if t.tracking and any((self.work / "runs").rglob("pending_mlflow.json")):
            # the runs the tracking store missed, logged now that it works again
            track = self._situate(
                [sys.executable, "-m", "situate.cli", "track", str(self.work / "runs")], "track"
            )
            step["track"] = _verb_summary(track)
        if self.cache.is_dir():  # else the fault came before any store was made
            step["repair"] = _verb_summary(self.cache_verb("repair"))
            step["check"] = _verb_summary(self.cache_verb("check"))
        after, error = kept(self.cache, t.store, t.table)
        step["kept_entries"] = len(after)
        step["unreadable_after_repair"] = error
        lost = [k for k, v in now.items() if after.get(k) != v]
        step["lost"] = len(lost)
        step["lost_keys"] = lost[:5]
        return after

    # what was paid --------------------------------------------------------------------------
    def _paid_twice(self) -> dict:
        """Answers billed more than once, by cause (:data:`CAUSES`), from the emulator's log:
        each billing of a key but its last was paid for nothing; its cause is read from the
        run it was answered in."""
        out = dict.fromkeys(("billed", "paid_twice", *CAUSES), 0)
        emu = self.openai if self.target.paid_path == EMBEDDINGS else self.anthropic
        if emu is None:
            return out
        log = [
            e
            for e in emu.stats(log=True).get("billed_log", [])
            if e["path"] == self.target.paid_path
        ]
        runs = [
            {"started": s["started"], "ended": s["ended"], "killed_at": None} for s in self.steps
        ]
        by_key: dict[str, list[tuple[float, float, int]]] = {}
        for entry in log:
            run = reliability._run_at(runs, entry["answered_at"], or_before=True)
            i = next((j for j, r in enumerate(runs) if r is run), -1)
            for key in entry["keys"]:
                by_key.setdefault(key, []).append((entry["answered_at"], entry["received_at"], i))
                out["billed"] += 1
                if i >= 0:
                    self.steps[i]["billed"] = self.steps[i].get("billed", 0) + 1
        repaid = [(received, i) for e in by_key.values() for _, received, i in sorted(e)[:-1]]
        after: dict[int, int] = {}  # per failing run: its repaid requests received after the fault
        for received, i in repaid:
            if self._cause(i, received) == "sent_after_fault":
                after[i] = after.get(i, 0) + 1
        for received, i in repaid:
            cause = self._cause(i, received)
            if cause == "sent_after_fault" and after[i] <= self.target.concurrency - 1:
                cause = "in_flight_at_fault"  # gated before the fault could be known
            out[cause] += 1
            out["paid_twice"] += 1
            if i >= 0:
                causes = self.steps[i].setdefault("repaid_later", {})
                causes[cause] = causes.get(cause, 0) + 1
        return out

    def _cause(self, i: int, received: float) -> str:
        if i < 0:
            return "avoidable"
        step = self.steps[i]
        if step.get("outcome") == KILLED:
            return "in_flight_at_kill"
        fault_time = step.get("fault_time")
        if fault_time is not None and step.get("outcome") in (ONE_LINE, OTHER):
            return "in_flight_at_fault" if received <= fault_time else "sent_after_fault"
        return "avoidable"  # answered in a run that finished (or met no fault), paid again


def _outcome(r: dict, fired: bool | None) -> str:
    if r["hung"]:
        return OTHER
    if r["rc"] == -signal.SIGKILL:
        return KILLED
    if r["rc"] == 0:
        return NOT_FIRED if fired is False else ABSORBED if fired else "ok"
    if r["rc"] == 2 and len(r["errors"]) == 1 and not r["tracebacks"]:
        return ONE_LINE
    return OTHER


def _verb_summary(r: dict) -> dict:
    return {
        k: r.get(k)
        for k in ("rc", "errors", "tracebacks", "traceback", "json", "unavailable", "seconds")
    }


def _ops_total(counts: faultinject.Counts, kind: Kind) -> int:
    """The fault-free run's operations that ``kind`` counts (its FAULT_OPS)."""
    cats = {
        "write": ("write", "pwrite", "pwrite64", "writev", "pwritev", "fwrite", "fflush",
                  "sendfile", "copy_file_range"),
        "fsync": ("fsync", "fdatasync"),
        "truncate": ("ftruncate", "ftruncate64", "fallocate", "posix_fallocate"),
    }  # fmt: skip
    if kind.journal:  # the journal's fsyncs (SQLite itself calls fdatasync)
        return counts.by_op.get("fsync", 0)
    names = {n for op in kind.ops.split(",") for n in cats.get(op, (op,))}
    return sum(n for op, n in counts.by_op.items() if op in names)


# -- the commands ---------------------------------------------------------------------------------


def situate_command(target: Target, s: Settings, work: Path, i: int, anthropic, openai,
                    shared: dict) -> list[str]:  # fmt: skip
    base = [sys.executable, "-m", "situate.cli"]
    cache = work / "cache"
    llm = ["llm=claude_haiku_5_5", "llm.backoff_base=0.05", "llm.backoff_max=1.0"]
    if anthropic is not None:
        llm.append(f"llm.base_url={anthropic.url}")
    if target.verb == "run":
        return [
            *base, "run", *(["context=llm", *llm, "context.budget_usd=1.0"] if target.context_llm
                            else ["context=none"]),
            "embedder=openai_small", f"embedder.base_url={openai.url}/v1", "embedder.batch_size=4",
            f"dataset.max_documents={s.max_documents}", "fusion=rrf",
            *([f"study={STUDY}", "tracking=mlflow"] if target.tracking else ["tracking=none"]),
            f"output_dir={work}", f"cache_dir={cache}", f"hydra.run.dir={work / 'runs' / str(i)}",
        ]  # fmt: skip
    if target.verb == "questions":
        return [
            *base, "questions", "generate", "dataset=folder", f"dataset.path={shared['docs']}",
            f"questions.target={s.questions}", "questions.passage_words=40",
            "questions.filters.near_duplicate.enabled=false", "questions.difficulty.measure=false",
            *llm, "question_generator.budget_usd=1", "question_generator.concurrency=4",
            "tracking=none", f"output_dir={work}", f"cache_dir={cache}",
        ]  # fmt: skip
    study = shared["study"]
    return [
        *base, "judge", *study_overrides(s, study), *llm, "judge.depth=5",
        "judge.agreement_pairs=10", f"output_dir={work}", f"cache_dir={cache}",
        "--permutations", "100",
    ]  # fmt: skip


def study_overrides(s: Settings, study: Path) -> list[str]:
    return [
        f"study={STUDY}", "baseline={context:none}", f"dataset.max_documents={s.max_documents}",
        f"tracking.db_path={study / 'mlflow.db'}", f"tracking.artifact_root={study / 'mlartifacts'}",
    ]  # fmt: skip


def prepare_docs(folder: Path) -> Path:
    """Three small markdown documents for ``situate questions generate``."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = (("Glaciers", "ice"), ("Harbours", "port"), ("Kilns", "clay"))
    for title, word in topics:
        paras = [
            f"{title} section {p}: the {word} {p} process takes {p + 3} days and needs "
            f"{10 * (p + 1)} workers. " + " ".join(f"{word}{p}term{i}" for i in range(40))
            for p in range(4)
        ]
        (folder / f"{word}.md").write_text(f"# {title}\n\n" + "\n\n".join(paras) + "\n")
    return folder


def prepare_study(s: Settings, folder: Path) -> Path:
    """A study tracked in MLflow for ``situate judge``: one run, no paid context."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    emu_settings = reliability.Settings(seed=s.seed, ttft=0.0)
    openai = reliability.EmulatorProcess("openai", 0.0, emu_settings, folder / "openai.log")
    try:
        argv = [
            sys.executable, "-m", "situate.cli", "run", "context=none", "embedder=openai_small",
            f"embedder.base_url={openai.url}/v1", *study_overrides(s, folder), "fusion=rrf",
            f"output_dir={folder}", f"cache_dir={folder / 'cache'}",
            f"hydra.run.dir={folder / 'run'}",
        ]  # fmt: skip
        proc = subprocess.run(argv, cwd=REPO, env=_env(), capture_output=True, text=True,
                              timeout=s.run_timeout)  # fmt: skip
    finally:
        openai.stop()
    if proc.returncode != 0:
        raise RuntimeError(f"the study for situate judge did not run: {proc.stderr[-2000:]}")
    return folder


def count_target(target: Target, s: Settings, shared: dict) -> faultinject.Counts:
    """A fault-free run of ``target`` under the shim: its store's operations, by function."""
    work = s.out / "storage_work" / f"{target.name}-count"
    shutil.rmtree(work, ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    emu = reliability.Settings(seed=s.seed, ttft=0.0)
    anthropic = openai = None
    try:
        if target.verb != "run" or target.context_llm:
            anthropic = reliability.EmulatorProcess("anthropic", 0.0, emu, work / "logs" / "a.log")
        if target.verb == "run":
            openai = reliability.EmulatorProcess("openai", 0.0, emu, work / "logs" / "o.log")
        argv = situate_command(target, s, work, 0, anthropic, openai, shared)
        counts = faultinject.count_ops(
            argv, target.fault_path.format(work=work), ops="write,fsync,truncate",
            env_base=_env(), cwd=REPO, timeout=s.run_timeout,
        )  # fmt: skip
    finally:
        for e in (anthropic, openai):
            if e is not None:
                e.stop()
    if counts.returncode != 0:
        raise RuntimeError(f"{target.name}: the fault-free run failed: {counts.stderr[-2000:]}")
    counts.stdout = counts.stderr = ""
    return counts


# -- scenarios of other engineers' code -----------------------------------------------------------


class Scenario:
    """A folder, the two emulators, and ``situate run`` processes whose store or tracking server
    is stopped while they run (when the emulator has answered ``after`` context requests)."""

    def __init__(self, name: str, settings: Settings):
        self.settings = settings
        self.work = settings.out / "storage_work" / name
        shutil.rmtree(self.work, ignore_errors=True)
        (self.work / "logs").mkdir(parents=True)
        emu = reliability.Settings(seed=settings.seed, ttft=0.0)
        logs = self.work / "logs"
        self.anthropic = reliability.EmulatorProcess("anthropic", 0.0, emu, logs / "anthropic.log")
        self.openai = reliability.EmulatorProcess("openai", 0.0, emu, logs / "openai.log")
        self.runs: list[dict] = []

    def overrides(self, documents: int | None = None) -> list[str]:
        return [
            "context=llm", "llm=claude_haiku_5_5", f"llm.base_url={self.anthropic.url}",
            "llm.backoff_base=0.05", "context.concurrency=2", "embedder=openai_small",
            f"embedder.base_url={self.openai.url}/v1", "fusion=rrf",
            f"dataset.max_documents={documents or self.settings.max_documents}",
            f"output_dir={self.work}", f"cache_dir={self.work / 'cache'}",
        ]  # fmt: skip

    def run(self, label: str, args: list[str], env: dict, after: int | None = None,
            action=None) -> dict:  # fmt: skip
        """``situate run ARGS``; once the emulator has answered ``after`` more context requests,
        ``action()`` (stop a server); the run's outcome as the chains record it."""
        i = len(self.runs)
        argv = [sys.executable, "-m", "situate.cli", "run", *args,
                f"hydra.run.dir={self.work / 'runs' / str(i)}"]  # fmt: skip
        base = self.anthropic.requests(MESSAGES)
        started = time.time()
        err_path = self.work / "logs" / f"{i:02d}-{label}.err"
        with (
            open(self.work / "logs" / f"{i:02d}-{label}.out", "w") as out,
            open(err_path, "w") as err,
        ):
            proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=err, env={**_env(), **env},
                                    start_new_session=True)  # fmt: skip
            acted = None
            deadline = time.monotonic() + self.settings.run_timeout
            while proc.poll() is None and time.monotonic() < deadline:
                due = action is not None and acted is None and after is not None
                if due and self.anthropic.requests(MESSAGES) - base >= after:
                    acted = time.time()
                    action()
                time.sleep(0.05)
            hung = proc.poll() is None
            if hung:
                os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        stderr = err_path.read_text(errors="replace")
        r = {
            "label": label, "rc": rc, "hung": hung, "acted": acted is not None,
            "errors": [line for line in stderr.splitlines() if line.startswith("error:")],
            "tracebacks": stderr.count("Traceback"), "traceback": traceback_frame(stderr),
            "started": started, "ended": time.time(), "killed_at": None,
        }  # fmt: skip
        r["outcome"] = _outcome(r, None)
        self.runs.append(r)
        return r

    def paid_twice(self) -> dict:
        log = self.anthropic.stats(log=True).get("billed_log", [])
        counts, _ = reliability.repayment_causes(log, self.runs)
        return counts

    def stop(self) -> None:
        self.anthropic.stop()
        self.openai.stop()


def scenario_postgres_restart(settings: Settings) -> dict | None:
    """``store=postgres`` (an embedded server of its own, on a Unix socket): the server restarted
    during contextualization (the run must ride it out: ``store.reconnect_s``), then stopped for
    good (the run must stop with one ``error:`` line, exit 2, within ``store.reconnect_s=3``),
    then started again (the rerun finishes; what was stored is not paid again). None when the
    embedded server is not installed."""
    try:
        import psycopg  # noqa: F401

        from situate.postgres.embedded import embedded_server
    except ImportError:
        return None
    sc = Scenario("postgres_restart", settings)
    root = sc.work / "pg"
    handle = embedded_server(root, "socket")
    try:
        info = handle.conninfo()
        env = {"SITUATE_PG_DSN": f"postgresql://postgres@/postgres?host={info['host']}"
                                 f"&port={info['port']}"}  # fmt: skip

        def stop() -> None:
            with handle._locked():
                handle._run("pg_ctl", "-D", str(handle.pgdata), "-w", "-m", "fast", "stop")

        def restart() -> None:
            stop()
            time.sleep(1.0)  # an outage, not a blink
            handle.conninfo()

        base = [*sc.overrides(), "store=postgres", "tracking=none"]
        sc.run("restarted", [*base, "store.reconnect_s=60"], env, after=3, action=restart)
        more = [*sc.overrides(settings.max_documents + 1), "store=postgres", "tracking=none"]
        sc.run("stopped", [*more, "store.reconnect_s=3"], env, after=3, action=stop)
        handle.conninfo()
        sc.run("rerun", [*more, "store.reconnect_s=60"], env)
        paid = sc.paid_twice()
    finally:
        with contextlib.suppress(Exception):
            handle.release()
        sc.stop()
    return _scenario_figures(sc, paid, expect={"restarted": 0, "stopped": 2, "rerun": 0})


def scenario_mlflow_server_down(settings: Settings) -> dict | None:
    """``tracking.tracking_uri=http://...``: a real ``mlflow server`` stopped mid-run (the run
    must finish, its results kept and its MLflow run written to ``pending_mlflow.json``, or stop
    with one line), a run started while it is down (one line, exit 2: the probe), then the
    server started again and ``situate track`` logging what waited (exit 0, no traceback)."""
    sc = Scenario("mlflow_server_down", settings)
    server: dict = {}
    port = _free_port()
    store = sc.work / "server"
    store.mkdir()

    def stop() -> None:
        proc = server.pop("proc", None)
        if proc is not None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)

    def start() -> None:
        stop()
        n = server["starts"] = server.get("starts", 0) + 1
        log = open(sc.work / "logs" / f"mlflow-server-{n}.log", "w")  # noqa: SIM115 - drained
        proc = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
             "--workers", "1", "--backend-store-uri", f"sqlite:///{store / 'server.db'}",
             "--default-artifact-root", str(store / "artifacts")],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True, env=_env(),
        )  # fmt: skip
        for line in proc.stdout:
            log.write(line)
            if "Uvicorn running on" in line or "Listening at" in line:
                break
        else:
            log.close()
            raise RuntimeError(f"mlflow server did not start: see {log.name}")

        def drain() -> None:
            for line in proc.stdout:
                log.write(line)
            log.close()

        threading.Thread(target=drain, daemon=True).start()
        server["proc"] = proc

    try:
        start()
        args = [
            *sc.overrides(),
            f"study={STUDY}",
            "tracking=mlflow",
            f"tracking.tracking_uri=http://127.0.0.1:{port}",
            "tracking.probe_seconds=60",
        ]  # fmt: skip  (a loaded machine answers slowly)
        # MLflow's client retries a refused connection for minutes (urllib3 backoff) before
        # situate sees the fault: bounded here, so that what is measured is situate's handling
        env = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
               "MLFLOW_HTTP_REQUEST_TIMEOUT": "20"}  # fmt: skip
        sc.run("server_stopped", args, env, after=3, action=stop)
        stop()  # in case the run ended before it was stopped
        sc.run("server_down", args, env)
        start()
        _wait_health(port, settings.run_timeout)
        argv = [sys.executable, "-m", "situate.cli", "track", str(sc.work / "runs")]
        track = subprocess.run(argv, cwd=REPO, env=_env(), capture_output=True, text=True,
                               timeout=settings.run_timeout)  # fmt: skip
        sc.track = {"rc": track.returncode, "tracebacks": track.stderr.count("Traceback"),
                    "traceback": traceback_frame(track.stderr), "stdout": track.stdout[-400:],
                    "errors": [x for x in track.stderr.splitlines() if x.startswith("error:")]}  # fmt: skip
        sc.run("rerun", args, env)
        paid = sc.paid_twice()
    finally:
        stop()
        sc.stop()
    figures = _scenario_figures(sc, paid, expect={"server_stopped": (0, 2), "server_down": 2,
                                                  "rerun": 0})  # fmt: skip
    figures["track"] = sc.track
    figures["tracebacks"] += sc.track["tracebacks"]
    figures["pending_logged"] = sum(1 for _ in (sc.work / "runs").rglob("logged_mlflow.json"))
    return figures


def _wait_health(port: int, limit: float) -> None:
    """Until the tracking server answers ``/health`` (a loaded machine starts it slowly)."""
    import urllib.request

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10).close()
            return
        except OSError:
            time.sleep(0.5)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _scenario_figures(sc: Scenario, paid: dict, expect: dict) -> dict:
    """Each run's exit against what it should be (an rc, or a tuple of allowed ones; a 2 must be
    one ``error:`` line), tracebacks, and paid twice by cause."""
    runs = []
    for r in sc.runs:
        want = expect.get(r["label"])
        allowed = want if isinstance(want, tuple) else (want,)
        ok = (
            r["rc"] in allowed
            and not r["tracebacks"]
            and (r["rc"] != 2 or r["outcome"] == ONE_LINE)
        )
        runs.append({k: r[k] for k in ("label", "rc", "acted", "outcome", "errors", "tracebacks",
                                        "traceback")} | {"as_expected": ok})  # fmt: skip
    return {
        "runs": runs,
        "as_expected": all(r["as_expected"] for r in runs),
        "tracebacks": sum(r["tracebacks"] for r in sc.runs),
        "paid_twice_by_cause": paid,
    }


# -- the suite --------------------------------------------------------------------------------------


def chains(settings: Settings) -> list[tuple[Target, Kind]]:
    out = []
    for t in settings.targets:
        for k in settings.kinds:
            target, kind = TARGETS[t], KINDS[k]
            if kind.sqlite_only and not target.sqlite:
                continue
            out.append((target, kind))
    return out


FIGURES = (
    "faults", "runs", "one_line_errors", "killed", "absorbed", "other_exits", "tracebacks",
    "lost", "paid_twice", *CAUSES, "repaired", "moved_aside", "repair_reported_lost",
    "unrepaired", "final_run_failed", "chains", "seconds",
)  # fmt: skip
MUST_BE_ZERO = (
    "tracebacks", "other_exits", "lost", "sent_after_fault", "avoidable", "unrepaired",
    "final_run_failed",
)  # fmt: skip


def summarize(results: list[dict], by: str = "kind") -> dict:
    """Per fault kind (``by="target"``: per store), and over all of them last, the figures of
    the module docstring."""
    rows: dict[str, dict] = {}
    for chain in results:
        for name in (chain[by], "all"):
            row = rows.setdefault(name, dict.fromkeys(FIGURES, 0))
            row["chains"] += 1
            row["seconds"] = round(row["seconds"] + chain["seconds"], 1)
            for key in ("paid_twice", *CAUSES):
                row[key] += chain["paid_twice"][key]
            for step in chain["steps"]:
                row["runs"] += 1
                row["tracebacks"] += step["tracebacks"]
                for verb in ("repair", "check", "track"):
                    row["tracebacks"] += (step.get(verb) or {}).get("tracebacks") or 0
                outcome = step.get("outcome")
                if step["step"] == "final":
                    row["final_run_failed"] += step["rc"] != 0
                    continue
                if not (step.get("n_fired") or step.get("damage")):
                    continue  # no fault: the run that fills the store before a damage
                row["faults"] += 1
                row["one_line_errors"] += outcome == ONE_LINE
                row["killed"] += outcome == KILLED
                row["absorbed"] += outcome == ABSORBED
                row["other_exits"] += outcome == OTHER
                row["lost"] += step.get("lost", 0)
                stores = _stores_of((step.get("repair") or {}).get("json"))
                row["repaired"] += sum(1 for st in stores if st.get("repaired"))
                row["moved_aside"] += sum(1 for st in stores if st.get("moved_to"))
                row["repair_reported_lost"] += sum(
                    n or 0 for st in stores for n in (st.get("lost") or {}).values()
                )
                row["unrepaired"] += _unrepaired(step)
    if "all" in rows:
        rows["all"] = rows.pop("all")
    return rows


def _stores_of(data) -> list[dict]:
    """The stores of a ``situate cache check|repair --json`` answer (a list of stores)."""
    if isinstance(data, dict):
        data = data.get("stores", [])
    return [s for s in data if isinstance(s, dict)] if isinstance(data, list) else []


def _unrepaired(step: dict) -> int:
    """1 when the store cannot be read after the repair, else the stores ``cache check`` still
    finds problems in (all, when it failed without saying)."""
    if step.get("unreadable_after_repair"):
        return 1
    check = step.get("check") or {}
    if check.get("unavailable"):
        return 0
    if check.get("json") is not None:
        return sum(1 for st in _stores_of(check["json"]) if st.get("problems"))
    return 1 if check.get("rc") not in (0, None) else 0


def failures(rows: dict) -> list[str]:
    """What must be 0 and is not."""
    return [
        f"{name}: {key} {row[key]}"
        for name, row in rows.items()
        if name != "all"
        for key in MUST_BE_ZERO
        if row[key]
    ]


COLUMNS = (
    ("kind", "kind", 16), ("faults", "faults", 6), ("one_line_errors", "1-line", 6),
    ("killed", "killed", 6), ("absorbed", "absorbed", 8), ("other_exits", "other", 5),
    ("tracebacks", "tracebacks", 10), ("lost", "lost", 4), ("paid_twice", "paid2x", 6),
    ("in_flight_at_kill", "@kill", 5), ("in_flight_at_fault", "@fault", 6),
    ("sent_after_fault", "after_fault", 11), ("avoidable", "avoidable", 9),
    ("repaired", "repaired", 8), ("unrepaired", "unrepaired", 10),
    ("final_run_failed", "final_failed", 12),
)  # fmt: skip


def table(rows: dict, first: str = "kind") -> str:
    heads = [first, *(h for _, h, _ in COLUMNS[1:])]
    lines = [
        "  ".join(
            h.rjust(w) if i else h.ljust(w)
            for i, (h, (_, _, w)) in enumerate(zip(heads, COLUMNS, strict=True))
        )
    ]
    for name, row in rows.items():
        cells = [name.ljust(COLUMNS[0][2])]
        cells += [str(row[key]).rjust(w) for key, _, w in COLUMNS[1:]]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def run_suite(settings: Settings, echo=print) -> dict:
    settings.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    so = faultinject.build()
    echo(f"storage faults: shim {so}")
    work = settings.out / "storage_work"
    work.mkdir(parents=True, exist_ok=True)
    shared: dict = {"docs": prepare_docs(work / "docs"), "counts": {}}
    todo = chains(settings)
    targets = sorted({t.name for t, _ in todo})
    lock = threading.Lock()
    with ThreadPoolExecutor(settings.workers) as pool:
        if "judgments" in targets:
            shared["study"] = pool.submit(prepare_study, settings, work / "study").result()
        counted = {t: pool.submit(count_target, TARGETS[t], settings, shared) for t in targets}
        for t, future in counted.items():
            shared["counts"][t] = future.result()
            c = shared["counts"][t]
            echo(f"  {t}: {c.total} operations in a fault-free run ({_short(c.by_op)})")

        def one(pair):
            chain = Chain(pair[0], pair[1], settings, shared)
            result = chain.run()
            (chain.work / "chain.json").write_text(json.dumps(result, indent=1, default=str))
            with lock:
                echo(f"  {result['chain']}: {_chain_line(result)}")
            return result

        results = list(pool.map(one, todo))
    details = {
        "settings": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()
        },
        "counts": {t: asdict(c) for t, c in shared["counts"].items()},
        "chains": results,
    }
    (settings.out / "storage_details.json").write_text(json.dumps(details, indent=1, default=str))
    rows = summarize(results)
    scenarios = {}
    for name, scenario in (("postgres_restart", scenario_postgres_restart),
                           ("mlflow_server_down", scenario_mlflow_server_down)):  # fmt: skip
        if name in settings.scenarios:
            echo(f"  scenario {name} ...")
            try:
                scenarios[name] = scenario(settings)
            except Exception as e:  # noqa: BLE001 - a harness's own failure, reported
                scenarios[name] = {"as_expected": False, "harness_error": repr(e), "tracebacks": 0}
            echo(f"  scenario {name}: {_scenario_line(scenarios[name])}")
    summary = {
        "kinds": rows,
        "targets": summarize(results, by="target"),
        "failures": failures(rows)
        + [
            f"scenario {name}: not as expected"
            for name, figures in scenarios.items()
            if figures is not None and not figures["as_expected"]
        ],
        "wall_seconds": round(time.time() - t0, 1),
        "scenarios": scenarios,
    }
    (settings.out / "storage_summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def _scenario_line(figures: dict | None) -> str:
    if figures is None:
        return "not run (not installed)"
    if "harness_error" in figures:
        return f"harness error {figures['harness_error']}"
    runs = ", ".join(f"{r['label']} rc {r['rc']} {r['outcome']}" for r in figures["runs"])
    return (f"{runs} | tracebacks {figures['tracebacks']} paid twice "
            f"{figures['paid_twice_by_cause']} as expected {figures['as_expected']}")  # fmt: skip


def _short(by_op: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(by_op.items()))


def _chain_line(r: dict) -> str:
    steps = [s for s in r["steps"] if s["step"] != "final"]
    outcomes = " ".join(s.get("outcome", "?") for s in steps)
    tb = sum(s["tracebacks"] + sum((s.get(v) or {}).get("tracebacks") or 0 for v in ("repair", "check", "track"))
             for s in r["steps"])  # fmt: skip
    lost = sum(s.get("lost", 0) for s in steps)
    final = r["steps"][-1]["rc"]
    p = r["paid_twice"]
    return (f"{outcomes} | tracebacks {tb} lost {lost} paid twice {p['paid_twice']} "
            f"(avoidable {p['avoidable']}) final rc {final} {r['seconds']}s")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/storage_faults.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--points", type=int, default=4, help="faults per chain")
    parser.add_argument("--damage-points", type=int, default=3, help="damages per chain")
    parser.add_argument("--workers", type=int, default=2, help="chains at once")
    parser.add_argument("--max-documents", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--scenarios",
        default="postgres_restart,mlflow_server_down",
        help="servers stopped mid-run, after the chains ('' for none)",
    )
    parser.add_argument("--out", default=str(REPO / "outputs" / "reliability"))
    parser.add_argument("--storage", action="store_true",
                        help="also merge the summary into summary.json under 'storage'")  # fmt: skip
    args = parser.parse_args(argv)
    targets = tuple(t for t in args.targets.split(",") if t)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    for given, known, what in ((targets, TARGETS, "targets"), (kinds, KINDS, "kinds")):
        unknown = set(given) - set(known)
        if unknown:
            parser.error(f"unknown {what} {sorted(unknown)}; known: {', '.join(known)}")
    if faultinject.gcc() is None:
        print(
            "storage faults: gcc not found (the fault shim is compiled on demand)", file=sys.stderr
        )
        return 2
    settings = Settings(
        targets=targets, kinds=kinds, points=args.points, damage_points=args.damage_points,
        workers=args.workers, max_documents=args.max_documents, seed=args.seed,
        scenarios=tuple(x for x in args.scenarios.split(",") if x),
        out=Path(args.out).resolve(),
    )  # fmt: skip
    data = Path(_env()["SITUATE_DATA_DIR"]) / "cookbook-codebase" / "codebase_chunks.json"
    if not data.exists():
        print(
            f"storage faults: {data} not found; run `situate data fetch cookbook`", file=sys.stderr
        )
        return 2
    try:
        summary = run_suite(settings)
    except RuntimeError as e:
        print(f"storage faults: {e}", file=sys.stderr)
        return 1
    print(table(summary["kinds"]))
    print(table(summary["targets"], "store"))
    print(f"storage faults: {settings.out / 'storage_summary.json'} ({summary['wall_seconds']}s)")
    if args.storage:
        path = settings.out / "summary.json"
        merged = json.loads(path.read_text()) if path.exists() else {}
        merged["storage"] = summary
        path.write_text(json.dumps(merged, indent=1))
    if summary["failures"]:
        print("storage faults: FAILED: " + "; ".join(summary["failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
