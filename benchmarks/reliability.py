"""``python benchmarks/reliability.py`` (``make reliability``): faults and kills lose nothing.

The pipeline runs as a user runs it (``situate run`` in its own process) against two emulators
in processes of their own (Anthropic for the contexts, OpenAI for the embeddings), which inject
429 (with and without ``retry-after``), 529 (Anthropic only, as the real APIs), 500, connection
resets (before the server did the work, and after it billed: ``reset_after``) and slow answers at
each fault rate (5%, 20% and 50% by default, split evenly over the kinds). For each rate, on a
fresh cache:

1. one run per kill target (``contextualize``, ``embed``, ``index``) is killed with SIGKILL: it
   waits for a seeded random point of that stage (the k-th context request, the k-th embedding
   request, the first index folder appearing), then a seeded random delay, then is killed;
   each resumes what the previous one stored;
2. then runs go on, unkilled, until one finishes (a run can also fail after its retries).

The emulators outlive the kills and keep counting; their request log is read from
``GET /_emulator/stats`` (an emulator-only endpoint). Per rate, ``summary.json`` reports:

``calls``          requests the emulators received (contexts, embeddings; every attempt)
``retries``        requests answered with a fault the client had to retry (429, 529, 500, resets;
                   slow answers are answers)
``stored``         contexts in the store at the end
``paid_twice``     contexts whose prompt was billed more than once: its ``/v1/messages`` request
                   got more than one successful (2xx) answer across all runs (the emulator counts
                   an answer it computed as billed, whether or not the client was still there
                   to read it)
``paid_twice_by_cause``  every answer billed for nothing (all of a context's billed answers but
                   the one it kept: the last one the emulator sent to a live client), by cause
                   (:func:`repayment_causes`). Three causes no client can avoid, the Messages
                   API having no idempotency key and a lost answer no way to be fetched again:
                   ``in_flight_at_kill`` (the client was killed with the call in flight: the
                   server answered a closed connection), ``killed_before_commit`` (the answer
                   reached a live client, killed before its commit in the store: in transit, or
                   within ``killed_before_commit_ms_max`` of the kill) and
                   ``reset_after_billing`` (the server billed, then dropped the connection: the
                   client saw no answer and retried). The fourth, ``avoidable``, is an answer a
                   client that was not killed received and paid again: a bug, and must be 0.
                   ``commit_window_ms_max`` (and ``commit_window_ms_p50``) is the longest
                   (median) time, measured by the client in the runs that finished, from a
                   response returned by the SDK to its commit in the store
``lost``           chunks with no stored context at the end (must be 0)
``metrics_equal_to_fault_free``  recall, pass, nDCG, failure rate and MRR of the final run
                   equal those of a fault-free run of the same slice

and, for information: ``embedding_texts_paid_twice`` (texts embedded and billed more than once:
vectors are stored per cache batch, after the embedding requests of the batch); ``billed_usd``
(the emulator's billed answers, priced) against ``budget_spent_usd`` (what the final run's
budget counts: stored contexts, and attempts possibly billed without an answer, kept as charge
rows across kills; ``budget_covers_billed``); ``runs``, ``runs_failed``; each kill (target,
delay, the stage it landed in, temporary index folders it left) and ``temporaries_at_end``.
``details.json`` adds the settings and the fault-free reference. Every run's log is under
``work/<scenario>/logs``.

    python benchmarks/reliability.py [--rates 0.05,0.2,0.5] [--max-documents 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KILL_TARGETS = ("contextualize", "embed", "index")
ANTHROPIC_FAULTS = "429,429_retry_after,529,500,reset,reset_after,slow"
OPENAI_FAULTS = "429,429_retry_after,500,reset,reset_after,slow"  # 529 is Anthropic's own status
RETRIED = ("429", "429_retry_after", "529", "500", "reset", "reset_after")
KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY", "sk-ant-emulator"),
    "openai": ("OPENAI_API_KEY", "sk-emulator"),
}
QUALITY = re.compile(r"^((pass|recall|ndcg|failure_rate)_at_\d+|mrr)$")
MESSAGES, EMBEDDINGS = "/v1/messages", "/v1/embeddings"
UNAVOIDABLE = ("in_flight_at_kill", "killed_before_commit", "reset_after_billing")
CAUSES = (*UNAVOIDABLE, "avoidable")


@dataclass
class Settings:
    rates: tuple[float, ...] = (0.05, 0.2, 0.5)
    kills: tuple[str, ...] = KILL_TARGETS
    max_documents: int = 10
    concurrency: int = 4
    embed_batch: int = 16  # texts per embedding request: several requests to kill between
    ttft: float = 0.01  # the emulators' time to first token
    slow_seconds: float = 0.2
    retry_after: str = "1"
    seed: int = 0
    max_final_runs: int = 4
    run_timeout: float = 300.0
    budget_usd: float = 1.0  # far above the slice's cost: a cap that never stops, kept honest
    out: Path = field(default_factory=lambda: REPO / "outputs" / "reliability")


# -- the emulators, in processes of their own ----------------------------------------------------


class EmulatorProcess:
    """``situate emulate PROVIDER`` in a subprocess; ``stats()`` reads its request log."""

    def __init__(self, provider: str, rate: float, settings: Settings, log: Path):
        kinds = ANTHROPIC_FAULTS if provider == "anthropic" else OPENAI_FAULTS
        seed = settings.seed * 1000 + int(rate * 100) + (0 if provider == "anthropic" else 500)
        cmd = [
            sys.executable, "-m", "situate.cli", "emulate", provider, "--port", "0",
            "--fault-rate", str(rate), "--faults", kinds, "--seed", str(seed),
            "--ttft", str(settings.ttft), "--slow-seconds", str(settings.slow_seconds),
            "--retry-after", settings.retry_after,
        ]  # fmt: skip
        self.log = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log, text=True, env=_env()
        )
        line = self.proc.stdout.readline()
        match = re.search(r"base_url=(http://127\.0\.0\.1:\d+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"emulator {provider} did not start: {line!r} (see {log})")
        self.url = match.group(1)

    def stats(self, log: bool = False) -> dict:
        with urllib.request.urlopen(f"{self.url}/_emulator/stats?log={int(log)}", timeout=30) as r:
            return json.load(r)

    def requests(self, path: str) -> int:
        return self.stats()["paths"].get(path, {}).get("requests", 0)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SITUATE_DATA_DIR", str(REPO.parent / "shared" / "data"))
    env.update({name: key for name, key in KEYS.values()})
    env.update({"NO_COLOR": "1", "TERM": "dumb", "PYTHONUNBUFFERED": "1"})
    return env


# -- one scenario: a fresh cache, emulators at one fault rate ------------------------------------


class Scenario:
    def __init__(self, name: str, rate: float, settings: Settings, reference: dict | None):
        self.name, self.rate, self.settings, self.reference = name, rate, settings, reference
        self.work = settings.out / "work" / name
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.rng = random.Random(f"{settings.seed}-{name}")
        self.runs: list[dict] = []
        self.kills: list[dict] = []

    def overrides(self) -> list[str]:
        s = self.settings
        return [
            "context=llm", "llm=claude_haiku_5_5", f"llm.base_url={self.anthropic.url}",
            "llm.backoff_base=0.05", "llm.backoff_max=1.0", f"context.concurrency={s.concurrency}",
            "embedder=openai_small", f"embedder.base_url={self.openai.url}/v1",
            "embedder.max_retries=10", f"embedder.batch_size={s.embed_batch}",
            f"dataset.max_documents={s.max_documents}", "fusion=rrf", "tracking=none",
            f"output_dir={self.work}", f"cache_dir={self.work / 'cache'}",
            f"context.budget_usd={s.budget_usd}",
        ]  # fmt: skip

    def run(self) -> dict:
        logs = self.work / "logs"
        logs.mkdir()
        t0 = time.time()
        self.anthropic = EmulatorProcess(
            "anthropic", self.rate, self.settings, logs / "anthropic.log"
        )
        try:
            self.openai = EmulatorProcess("openai", self.rate, self.settings, logs / "openai.log")
            try:
                return self._run(t0)
            finally:
                self.openai.stop()
        finally:
            self.anthropic.stop()

    def _run(self, t0: float) -> dict:
        n_chunks = self.reference["n_chunks"] if self.reference else None
        for target in self.settings.kills if self.reference else ():
            self._killed_run(target, n_chunks)
        final = None
        for _ in range(self.settings.max_final_runs):
            final = self._pipeline_run()
            if final["rc"] == 0:
                break
        if final is None or final["rc"] != 0:
            raise RuntimeError(f"{self.name}: no run finished; see {self.work / 'logs'}")
        metrics = json.loads((Path(final["dir"]) / "result.json").read_text())["metrics"]
        out = self._measure(metrics)
        out["seconds"] = round(time.time() - t0, 1)
        return out

    # runs ------------------------------------------------------------------------------------
    def _start(self) -> tuple[subprocess.Popen, Path]:
        """Start the next run; its record (``_record``) notes when it started, ended, was killed."""
        i = len(self.runs)
        run_dir = self.work / "runs" / str(i)
        log = open(self.work / "logs" / f"run{i}.log", "w")  # noqa: SIM115 - closed by the caller
        started = time.time()
        proc = subprocess.Popen(
            [sys.executable, "-m", "situate.cli", "run", *self.overrides(), f"hydra.run.dir={run_dir}"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True,
        )  # fmt: skip
        proc.log = log  # type: ignore[attr-defined]
        proc.started = started  # type: ignore[attr-defined]
        return proc, run_dir

    def _record(self, proc, run_dir: Path, killed: bool, killed_at: float | None) -> dict:
        rc = proc.wait()
        proc.log.close()
        record = {
            "rc": rc, "dir": str(run_dir), "killed": killed,
            "started": proc.started, "ended": time.time(), "killed_at": killed_at,
        }  # fmt: skip
        self.runs.append(record)
        return record

    def _pipeline_run(self) -> dict:
        proc, run_dir = self._start()
        killed_at = None
        try:
            proc.wait(self.settings.run_timeout)
        except subprocess.TimeoutExpired:
            killed_at = time.time()
            os.killpg(proc.pid, signal.SIGKILL)
        return self._record(proc, run_dir, False, killed_at)

    def _killed_run(self, target: str, n_chunks: int) -> None:
        """Start a run, wait for a random point of ``target``, then SIGKILL it."""
        stored = self._count("contexts.sqlite", "contexts")
        k_context = self.rng.randint(1, max(1, n_chunks - stored - 1))
        k_embed = self.rng.randint(1, max(1, math.ceil(n_chunks / self.settings.embed_batch) - 1))
        delay = self.rng.uniform(0, {"contextualize": 0.3, "embed": 0.005, "index": 0.02}[target])
        base = {
            MESSAGES: self.anthropic.requests(MESSAGES),
            EMBEDDINGS: self.openai.requests(EMBEDDINGS),
        }
        index_before = self._index_entries()
        proc, run_dir = self._start()
        deadline = time.monotonic() + self.settings.run_timeout
        triggered = False
        near = target == "contextualize"  # polled slowly until the stage before is done
        while proc.poll() is None and time.monotonic() < deadline:
            if not near:
                done = (
                    ("contexts.sqlite", "contexts")
                    if target == "embed"
                    else ("embeddings.sqlite", "embeddings")
                )
                near = self._count(*done) >= n_chunks
            elif target == "contextualize":
                triggered = self.anthropic.requests(MESSAGES) - base[MESSAGES] >= k_context
            elif target == "embed":
                triggered = self.openai.requests(EMBEDDINGS) - base[EMBEDDINGS] >= k_embed
            else:
                triggered = bool(self._index_entries() - index_before)
            if triggered:
                break
            time.sleep(0.002 if near and target != "contextualize" else 0.02)
        if triggered:
            time.sleep(delay)
        killed_at = time.time()
        killed = proc.poll() is None
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
        self._record(proc, run_dir, killed, killed_at if killed else None)
        self.kills.append(
            {
                "target": target,
                "delay_s": round(delay, 4),
                "killed": killed,  # False: the run ended before the kill point
                "landed": self._landed(n_chunks, run_dir) if killed else "finished",
                "temporaries_left": sum(
                    1 for p in self._index_entries() if p.rsplit("/", 1)[-1].startswith(".")
                ),
            }
        )

    # state on disk -------------------------------------------------------------------------
    def _count(self, file: str, table: str) -> int:
        path = self.work / "cache" / file
        if not path.exists():
            return 0
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        except sqlite3.OperationalError:  # the table is not created yet
            return 0
        finally:
            db.close()

    def _index_entries(self) -> set[str]:
        root = self.work / "cache" / "index"
        return {f"{p.parent.name}/{p.name}" for p in root.glob("*/*")} if root.is_dir() else set()

    def _landed(self, n_chunks: int, run_dir: Path) -> str:
        """The first stage whose output is incomplete after the kill."""
        if self._count("contexts.sqlite", "contexts") < n_chunks:
            return "contextualize"
        if self._count("embeddings.sqlite", "embeddings") < n_chunks:
            return "embed"
        finals = {
            e.split("/")[0] for e in self._index_entries() if not e.split("/")[1].startswith(".")
        }
        if finals < {"dense", "sparse"}:
            return "index"
        return "search" if not (run_dir / "result.json").exists() else "finished"

    # what was paid and kept ----------------------------------------------------------------
    def _measure(self, metrics: dict) -> dict:
        a, o = self.anthropic.stats(log=True), self.openai.stats(log=True)
        paths = {**a["paths"], **o["paths"]}
        faults: dict[str, int] = {}
        for p in paths.values():
            for kind, n in p["faults"].items():
                faults[kind] = faults.get(kind, 0) + n
        billed = a["paths"].get(MESSAGES, {}).get("billed_keys", {})
        causes, gaps = repayment_causes(a.get("billed_log", []), self.runs)
        quality = {k: v for k, v in metrics.items() if QUALITY.match(k)}
        reference = (self.reference or {}).get("quality", quality)
        stored = self._count("contexts.sqlite", "contexts")
        embed_billed = o["paths"].get(EMBEDDINGS, {}).get("billed_keys", {})
        billed_usd = self._billed_usd(a.get("billed_log", []))
        budget_spent = metrics.get("budget_spent_usd")
        return {
            "calls": a["requests"] + o["requests"],
            "retries": sum(n for kind, n in faults.items() if kind in RETRIED),
            "stored": stored,
            "paid_twice": sum(1 for n in billed.values() if n > 1),
            "lost": self._lost(),
            "metrics_equal_to_fault_free": quality == reference,
            "paid_twice_by_cause": causes,
            "killed_before_commit_ms_max": round(1000 * max(gaps), 2) if gaps else None,
            "embedding_texts_paid_twice": sum(1 for n in embed_billed.values() if n > 1),
            "commit_window_ms_max": self._window(metrics, "max"),
            "commit_window_ms_p50": self._window(metrics, "p50"),
            "temporaries_at_end": sum(
                1 for e in self._index_entries() if e.split("/")[1].startswith(".")
            ),
            "billed_usd": round(billed_usd, 8),
            "budget_spent_usd": _round(budget_spent, 8),
            "budget_covers_billed": budget_spent is not None and budget_spent >= billed_usd - 1e-12,
            "budget_unanswered_attempts": metrics.get("budget_earlier_unanswered_attempts"),
            "calls_by_path": {path: p["requests"] for path, p in paths.items()},
            "faults": faults,
            "runs": len(self.runs),
            "runs_failed": sum(1 for r in self.runs if not r["killed"] and r["rc"] != 0),
            "kills": self.kills,
            "metrics_differing": sorted(k for k in quality if quality[k] != reference.get(k)),
            "n_chunks": metrics.get("n_chunks"),
            "quality": quality,
        }

    def _window(self, metrics: dict, stat: str) -> float | None:
        """The response-to-commit time of the runs that finished (this one, the reference)."""
        key = f"store_window_ms_{stat}"
        found = [w for w in (metrics.get(key), (self.reference or {}).get(key)) if w is not None]
        return _round(max(found) if found else None)

    @staticmethod
    def _billed_usd(log: list[dict]) -> float:
        """What the Anthropic emulator billed (every 2xx answer, received or not), priced."""
        from situate.money.pricing import load_price_book
        from situate.records import Usage

        price = load_price_book().price("claude-haiku-5-5")
        total = 0.0
        for entry in log:
            u = entry.get("usage") or {}
            if entry["path"] != MESSAGES or not u:
                continue
            usage = Usage(
                input_uncached=u.get("input_tokens", 0),
                cache_write=u.get("cache_creation_input_tokens", 0),
                cache_read=u.get("cache_read_input_tokens", 0),
                output=u.get("output_tokens", 0),
            )
            total += price.call_cost(usage, ttl="5m").total
        return total

    def _lost(self) -> int:
        """Chunks of the slice with no stored context (reads the store; calls nothing)."""
        from hydra.utils import instantiate

        from situate.config.compose import compose

        os.environ.setdefault("SITUATE_DATA_DIR", _env()["SITUATE_DATA_DIR"])
        cfg = compose(self.overrides())
        corpus = instantiate(cfg.dataset).load()
        chunks = instantiate(cfg.chunker).chunk(corpus)
        return sum(1 for s in instantiate(cfg.context).lookup(corpus, chunks) if s is None)


# -- why a context was paid twice ----------------------------------------------------------------


def repayment_causes(log: list[dict], runs: list[dict]) -> tuple[dict[str, int], list[float]]:
    """Each ``/v1/messages`` answer billed for nothing, by cause; and, for those killed before
    their commit, how many seconds before the kill the server had answered.

    ``log`` is the emulator's billed log (``received_at``, ``answered_at``, ``fault``,
    ``client_gone``); ``runs`` the runs, one after another (``started``, ``ended``, and
    ``killed_at``, None when not killed). A context billed n times was paid n - 1 times for
    nothing: all its billed answers but the one it kept, the last one sent to a live client. The
    cause of each (see the module docstring) comes from what the emulator saw, not from timing
    alone: a request the emulator read after its client was killed (a busy machine delays the
    read) is ``in_flight_at_kill`` however long before the *next* kill it was answered.
    """
    by_key: dict[str, list[dict]] = {}
    for entry in log:
        if entry["path"] == MESSAGES:
            by_key.setdefault(entry["keys"][0], []).append(entry)
    counts, gaps = dict.fromkeys(CAUSES, 0), []
    for entries in by_key.values():
        if len(entries) < 2:
            continue
        entries.sort(key=lambda e: e["answered_at"])
        sent = [e for e in entries if e["fault"] != "reset_after" and not e["client_gone"]]
        kept = sent[-1] if sent else None
        for entry in entries:
            if entry is not kept:
                cause, gap = _cause(entry, runs)
                counts[cause] += 1
                if gap is not None:
                    gaps.append(gap)
    return counts, gaps


def _cause(entry: dict, runs: list[dict]) -> tuple[str, float | None]:
    if entry["fault"] == "reset_after":
        return "reset_after_billing", None
    if entry["client_gone"]:  # its client had closed the connection: killed, or it gave up
        sender = _run_at(runs, entry["received_at"], or_before=True)
        killed_at = sender["killed_at"] if sender else None
        if killed_at is not None and killed_at <= entry["answered_at"]:
            return "in_flight_at_kill", None
        return "avoidable", None  # a client that gave up waiting (a timeout), then paid again
    run = _run_at(runs, entry["answered_at"])  # the client was alive to read the answer
    if run is None or run["killed_at"] is None:
        return "avoidable", None  # received by a run that was not killed, and paid again
    if entry["answered_at"] >= run["killed_at"]:
        return "in_flight_at_kill", None  # answered while the kill was landing
    return "killed_before_commit", run["killed_at"] - entry["answered_at"]


def _run_at(runs: list[dict], t: float, or_before: bool = False) -> dict | None:
    """The run alive at ``t``; with ``or_before``, else the last one that ended before ``t``
    (a request read late, after its client died)."""
    alive = [r for r in runs if r["started"] <= t <= r["ended"]]
    if alive or not or_before:
        return alive[-1] if alive else None
    ended = [r for r in runs if r["ended"] < t]
    return max(ended, key=lambda r: r["ended"]) if ended else None


# -- the suite -----------------------------------------------------------------------------------


def _round(x: float | None, digits: int = 2) -> float | None:
    return None if x is None else round(x, digits)


def label(rate: float) -> str:
    return f"{rate * 100:g}%"


def run_suite(settings: Settings, echo=print) -> dict:
    """Fault-free reference, then each rate with its kills; returns ``{label: figures}``."""
    settings.out.mkdir(parents=True, exist_ok=True)
    echo(f"reliability: fault-free reference ({settings.max_documents} cookbook documents)")
    ref = Scenario("fault_free", 0.0, settings, None).run()
    reference = {
        "n_chunks": int(ref["n_chunks"]),
        "quality": ref["quality"],
        "calls": ref["calls"],
        "store_window_ms_max": ref["commit_window_ms_max"],
        "store_window_ms_p50": ref["commit_window_ms_p50"],
    }
    summary = {}
    for rate in settings.rates:
        echo(f"reliability: {label(rate)} faults, kills during {', '.join(settings.kills)}")
        summary[label(rate)] = Scenario(f"rate_{label(rate)[:-1]}", rate, settings, reference).run()
        echo("  " + _line(summary[label(rate)]))
    details = {
        "settings": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()
        },
        "fault_free": {**reference, "seconds": ref["seconds"], "lost": ref["lost"]},
        "rates": summary,
        "work": str(settings.out / "work"),
    }
    (settings.out / "details.json").write_text(json.dumps(details, indent=1))
    short = {
        name: {k: v for k, v in figures.items() if k not in ("quality", "calls_by_path")}
        for name, figures in summary.items()
    }
    (settings.out / "summary.json").write_text(json.dumps(short, indent=1))
    return summary


def _line(f: dict) -> str:
    landed = ", ".join(k["landed"] for k in f["kills"])
    causes = ", ".join(f"{k} {n}" for k, n in f["paid_twice_by_cause"].items())
    return (
        f"calls {f['calls']}  retries {f['retries']}  stored {f['stored']}  "
        f"paid_twice {f['paid_twice']} ({causes})  lost {f['lost']}  metrics equal "
        f"{f['metrics_equal_to_fault_free']}  kills landed in: {landed}  {f['seconds']}s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/reliability.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rates", default="0.05,0.2,0.5", help="fault rates, comma-separated")
    parser.add_argument("--kills", default=",".join(KILL_TARGETS), help="kill targets, in order")
    parser.add_argument("--max-documents", type=int, default=10, help="cookbook documents")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(REPO / "outputs" / "reliability"))
    args = parser.parse_args(argv)
    kills = tuple(k for k in args.kills.split(",") if k)
    unknown = set(kills) - set(KILL_TARGETS)
    if unknown:
        parser.error(f"unknown kill targets {sorted(unknown)}; known: {', '.join(KILL_TARGETS)}")
    settings = Settings(
        rates=tuple(float(r) for r in args.rates.split(",")),
        kills=kills,
        max_documents=args.max_documents,
        seed=args.seed,
        out=Path(args.out).resolve(),
    )
    data = Path(_env()["SITUATE_DATA_DIR"]) / "cookbook-codebase" / "codebase_chunks.json"
    if not data.exists():
        print(
            f"reliability: {data} not found; run `situate data fetch cookbook` or set "
            "SITUATE_DATA_DIR",
            file=sys.stderr,
        )
        return 2
    try:
        summary = run_suite(settings)
    except RuntimeError as e:  # a scenario where no run finished: its logs say why
        print(f"reliability: {e}", file=sys.stderr)
        return 1
    print(f"reliability: {settings.out / 'summary.json'}")
    bad = [
        name
        for name, f in summary.items()
        if f["lost"]
        or not f["metrics_equal_to_fault_free"]
        or f["paid_twice_by_cause"]["avoidable"]
    ]
    if bad:
        print(
            f"reliability: FAILED at {', '.join(bad)}: lost contexts, metrics differ or an "
            "avoidable re-payment",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
