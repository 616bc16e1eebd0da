"""Where the heavy stages run: in this process (``execution=local``) or as Ray tasks (``execution=ray``).

The pipeline hands the context stage and the document embeddings to its execution, and nothing
else: indexes, search, evaluation and tracking stay in the driver.

With ``execution=ray`` the driver connects to Ray (``address``: ``local`` starts an instance on
this machine with ``num_workers`` CPUs; else an existing cluster, RAY_ADDRESS) and:

- contexts: splits the chunks into ``num_workers`` shards of whole documents (documents of
  identical text in the same shard, so one prompt is never paid twice), balanced by chunk count.
  Each task builds the context stage from its resolved config (Hydra instantiate inside the
  task), contextualizes its shard and stores every answer in the run's context store as it
  arrives, as a local run does; the driver puts the contexts back in chunk order and adopts what
  each task paid (its calls, the contexts written, the stats), so costs and metrics read as
  those of a local run.
- embeddings: the texts not in the embedding store yet, cut into ``num_workers`` runs; each task
  builds the embedder from its config and yields each batch's vectors as soon as they are
  encoded; the driver stores each batch as it arrives, in the store it was configured with.

Either way an interrupted run resumes from the stores and a rerun pays nothing. The tasks read
the driver's working directory (relative paths in the config name the same files: the same
machine, or a shared filesystem) and the environment variables the stages read (API keys, SDK
base URLs), passed as task arguments, never logged.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from situate.contexts.base import Contextualizer
from situate.embedding.base import Batches, CachedEmbeddings, Kind
from situate.errors import SituateError
from situate.providers import vendors
from situate.records import Chunk, Context, Corpus

log = logging.getLogger(__name__)

SHARD_BY = ("document",)
# variables the stages read besides the API keys their configs name (``api_key_env``): SDK base
# URLs, the Hugging Face offline switches (each vendor's record says which)
FORWARDED = tuple(name for vendor in vendors().values() for name in vendor.forwarded)


class Execution(Protocol):
    """Runs the context stage and the document embeddings for the pipeline.

    It reads of the stages only what their protocols declare: of the context stage
    (:class:`~situate.contexts.base.Contextualizer`) ``budget_usd``, ``calls``, ``written``,
    ``failures`` and ``stats``; of the embedder (:class:`~situate.embedding.base.Embedder`)
    ``identity()``, ``billed()`` and ``tokens_used``.
    """

    name: str
    # the resolved configs of the ``context`` and ``embedder`` groups, which an execution that
    # builds its stages again elsewhere (a Ray task) is given by ``situate.running.app.build_pipeline``;
    # None for one that runs the pipeline's own stage objects
    configs: dict[str, dict] | None

    def contextualize(
        self, context: Contextualizer, corpus: Corpus, chunks: list[Chunk]
    ) -> list[Context]: ...

    def embed(
        self, embeddings: CachedEmbeddings, texts: list[str], kind: Kind, progress=None
    ) -> np.ndarray: ...


class LocalExecution:
    """Everything in this process (the default)."""

    name = "local"
    configs = None  # the pipeline's own stages run here: nothing is built again

    def contextualize(
        self, context: Contextualizer, corpus: Corpus, chunks: list[Chunk]
    ) -> list[Context]:
        return context.contextualize(corpus, chunks)

    def embed(
        self, embeddings: CachedEmbeddings, texts: list[str], kind: Kind, progress=None
    ) -> np.ndarray:
        return embeddings(texts, kind, progress)


class RayExecution:
    """Contexts and document embeddings as Ray tasks over shards (see the module docstring).

    Parameters
    ----------
    address : str
        ``local`` (a Ray instance on this machine, started on first use), ``auto`` or a cluster's
        address (``host:6379``, ``ray://host:10001``); the config reads RAY_ADDRESS.
    num_workers : int
        Shards per stage, run at once.
    shard_by : {"document"}
        Context shards hold whole documents (a document's calls share its prompt cache).
    num_cpus_per_task : float
        CPUs Ray reserves per task (``local`` starts ``num_workers`` times as many).
    configs : dict or None
        The resolved configs of the ``context`` and ``embedder`` groups, instantiated in each
        task (set by ``situate.running.app.build_pipeline``).
    """

    name = "ray"

    def __init__(
        self,
        address: str = "local",
        num_workers: int = 2,
        shard_by: str = "document",
        num_cpus_per_task: float = 1.0,
        configs: dict[str, dict] | None = None,
    ):
        if num_workers < 1:
            raise SituateError(f"execution.num_workers={num_workers} must be >= 1")
        if shard_by not in SHARD_BY:
            raise SituateError(
                f"execution.shard_by={shard_by!r} is not one of {', '.join(SHARD_BY)}"
            )
        if num_cpus_per_task <= 0:
            raise SituateError(f"execution.num_cpus_per_task={num_cpus_per_task} must be > 0")
        self.address = str(address or "local")
        if self.address != "local":
            reachable(self.address)  # before anything is paid (ray.init would wait minutes)
        self.num_workers, self.shard_by = num_workers, shard_by
        self.num_cpus_per_task = num_cpus_per_task
        self.configs = configs or {}

    # -- contexts ---------------------------------------------------------------------------

    def contextualize(
        self, context: Contextualizer, corpus: Corpus, chunks: list[Chunk]
    ) -> list[Context]:
        if context.budget_usd is not None:
            raise SituateError(
                "execution=ray: context.budget_usd caps what one process spends, not a cluster; "
                "set context.budget_usd=null or run with execution=local"
            )
        shards = document_shards(corpus, chunks, self.num_workers)
        if len(shards) < 2:  # nothing to share out
            return context.contextualize(corpus, chunks)
        ray = self._ray()
        log.info("contexts: %d chunks in %d Ray tasks of whole documents", len(chunks), len(shards))
        task = ray.remote(contextualize_shard).options(num_cpus=self.num_cpus_per_task)
        # every document goes to every task (a corpus-wide glossary is part of the prompt)
        documents = ray.put(Corpus(corpus.name, corpus.documents, []))
        config, env = self._config("context"), self._env()
        refs = [task.remote(config, documents, [chunks[r] for r in rows], env) for rows in shards]
        results: list[ShardResult] = self._get(ray, refs)
        adopt(context, results)  # what failed shards paid too: a failed run reports its spend
        errors = [r.error for r in results if r.error]
        if errors:  # every shard ran to its end: what the others paid for is stored
            raise SituateError(errors[0])
        out: list[Context | None] = [None] * len(chunks)
        for rows, result in zip(shards, results, strict=True):
            for row, ctx in zip(rows, result.contexts, strict=True):
                out[row] = ctx
        return out

    # -- embeddings -------------------------------------------------------------------------

    def embed(
        self, embeddings: CachedEmbeddings, texts: list[str], kind: Kind, progress=None
    ) -> np.ndarray:
        return embeddings(texts, kind, progress, batches=self._batches(embeddings))

    def _batches(self, embeddings: CachedEmbeddings) -> Batches:
        embedder = embeddings.embedder

        def remote_batches(texts: list[str], kind: Kind, size: int):
            if len(texts) <= size:  # one batch: not worth a task
                yield from embeddings.local_batches(texts, kind, size)
                return
            ray = self._ray()
            task = ray.remote(num_returns="streaming")(encode_shard)
            task = task.options(num_cpus=self.num_cpus_per_task)
            config, env = self._config("embedder"), self._env()
            # whole batches per task: the same requests as a local run
            step = math.ceil(math.ceil(len(texts) / size) / self.num_workers) * size
            pending = [
                task.remote(config, texts[i : i + step], kind, size, i, env)
                for i in range(0, len(texts), step)
            ]
            expected, errors = embedder.identity(), []
            while pending:
                ready, _ = ray.wait(pending, num_returns=1)
                try:
                    offset, vectors, tokens, identity = self._get(ray, next(ready[0]))
                except StopIteration:
                    pending.remove(ready[0])
                    continue
                except SituateError as e:  # the other tasks' batches are still stored
                    errors.append(e)
                    pending.remove(ready[0])
                    continue
                if identity != expected:  # stored under this run's key: it must be its answer
                    raise SituateError(
                        f"execution=ray: a task's embedder {identity} is not this run's {expected} "
                        "(another endpoint or model): give the cluster the same configuration "
                        "and SDK variables, or run with execution=local"
                    )
                embedder.tokens_used += tokens  # billed in the task, paid by this run
                yield offset, vectors
            if errors:
                raise errors[0]

        return remote_batches

    # -- Ray --------------------------------------------------------------------------------

    def _config(self, group: str) -> dict:
        if group not in self.configs:
            raise SituateError(
                f"execution=ray: no {group} config to build the stage in a task "
                "(build the pipeline with situate.running.app.build_pipeline)"
            )
        return self.configs[group]

    def _env(self) -> dict[str, str]:
        names = set(FORWARDED) | set(config_values(self.configs, "api_key_env"))
        return {n: os.environ[n] for n in sorted(names) if n in os.environ}

    def _ray(self):
        import ray

        if ray.is_initialized():  # a sweep's Ray job, or an earlier stage of this run
            return ray
        kw: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
        kw["log_to_driver"] = False
        if self.address == "local":
            kw["num_cpus"] = max(1, math.ceil(self.num_workers * self.num_cpus_per_task))
        try:
            ray.init(address=self.address, **kw)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise no_cluster(self.address, str(e).strip().splitlines()[0]) from e
        cpus = ray.cluster_resources().get("CPU", 0)
        log.info(
            "execution=ray: %s, %g CPUs, %d tasks per stage", self.address, cpus, self.num_workers
        )
        return ray

    @staticmethod
    def _get(ray, refs):
        """``ray.get``; a task's ``SituateError`` is raised as itself (one line)."""
        from ray.exceptions import RayTaskError

        try:
            return ray.get(refs)
        except RayTaskError as e:
            if isinstance(e.cause, SituateError):
                raise e.cause from None
            raise


def reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse within seconds an address no Ray cluster answers at (``ray.init`` waits minutes)."""
    if address == "auto":
        return  # ray.init finds the cluster this machine runs, or says there is none
    hostport = address.removeprefix("ray://").rsplit("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise no_cluster(address, "not host:port, ray://host:port, auto or local")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise no_cluster(address, e.strerror or type(e).__name__) from None


def no_cluster(address: str, why: str) -> SituateError:
    return SituateError(
        f"execution=ray: no Ray cluster at RAY_ADDRESS={address} ({why}); set RAY_ADDRESS to a "
        "running cluster's address (`ray start --head` prints it), RAY_ADDRESS=local for a Ray "
        "instance on this machine, or run with execution=local"
    )


def config_values(config: Any, key: str) -> Iterator[str]:
    """Every string value of ``key`` anywhere in a nested config."""
    if isinstance(config, dict):
        for k, v in config.items():
            if k == key and isinstance(v, str):
                yield v
            else:
                yield from config_values(v, key)
    elif isinstance(config, list):
        for v in config:
            yield from config_values(v, key)


def document_shards(corpus: Corpus, chunks: list[Chunk], n: int) -> list[list[int]]:
    """Chunk rows in at most ``n`` shards of whole documents, in document order, balanced by
    chunk count; documents of identical text share a shard (their prompts are the same)."""
    groups: dict[str, list[int]] = {}
    for row, c in enumerate(chunks):
        groups.setdefault(corpus.document(c.doc_id).text, []).append(row)
    shards: list[list[int]] = [[]]
    target = len(chunks) / n
    done = 0
    for rows in groups.values():
        if shards[-1] and done >= target * len(shards) and len(shards) < n:
            shards.append([])
        shards[-1].extend(rows)
        done += len(rows)
    return [sorted(s) for s in shards if s]


@dataclass
class ShardResult:
    """What one context task returns: its contexts (in its chunks' order), what the stage
    recorded (an LLM context's ``calls``, ``written`` and ``failures``; its ``stats``) and its
    one-line error, if it failed."""

    contexts: list[Context]
    records: dict[str, list] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    error: str = ""


def contextualize_shard(
    config: dict, corpus: Corpus, chunks: list[Chunk], env: dict[str, str]
) -> ShardResult:
    """A Ray task: build the context stage from ``config`` and contextualize ``chunks``."""
    os.environ.update(env)
    stage = built(config, "context")
    try:
        contexts, error = stage.contextualize(corpus, chunks), ""
    except SituateError as e:  # answers already stored stay; the driver reports the error
        contexts, error = [], str(e)
    records = {}
    if stage.calls is not None:  # an LLM context: what it paid for, wrote and failed
        records = {
            "calls": list(stage.calls),
            "written": list(stage.written),
            "failures": list(stage.failures),
        }
    return ShardResult(contexts, records, dict(stage.stats), error)


def adopt(context: Contextualizer, results: list[ShardResult]) -> None:
    """Give the driver's context stage what the tasks recorded, as if it had run them all."""
    if context.calls is not None:  # an LLM context (a rule's records none)
        context.calls = [x for r in results for x in r.records.get("calls", [])]
        context.failures = [x for r in results for x in r.records.get("failures", [])]
        context.written = [x for r in results for x in r.records.get("written", [])]
        if any(r.error for r in results):
            context.written = []  # a shard stopped: the configuration's contexts are not all written
    context.stats = merged_stats([r.stats for r in results], context.calls or [])


def merged_stats(parts: list[dict[str, float]], calls: list) -> dict[str, float]:
    """One run's stats from its shards': counts and seconds add up, except the wall time
    (``contextualize_seconds``: the slowest shard); ``*_min``/``*_max`` are the extremes,
    ``*_p50`` the median of the shards', throughput is recomputed over every call."""
    from situate.contexts.llm import throughput

    out: dict[str, float] = {}
    for key in dict.fromkeys(k for p in parts for k in p):
        values = [p[key] for p in parts if key in p]
        if key.endswith("_per_s"):
            continue
        if key.endswith("_min"):
            out[key] = min(values)
        elif key.endswith("_max") or key == "contextualize_seconds":
            out[key] = max(values)
        elif key.endswith("_p50"):
            out[key] = float(statistics.median(values))
        else:
            out[key] = float(sum(values))
    out.update(throughput([r for _, r in calls]))
    return out


def encode_shard(config: dict, texts: list[str], kind: str, size: int, offset: int, env: dict):
    """A Ray task (streaming): build the embedder from ``config`` and yield ``(offset, vectors,
    tokens billed, embedder identity)`` per batch of ``texts``, ``offset`` counted in the
    driver's list."""
    os.environ.update(env)
    embedder = built(config, "embedder")
    identity, paid = embedder.identity(), 0
    for i in range(0, len(texts), size):
        vectors = embedder.encode(texts[i : i + size], kind)
        billed = embedder.billed().tokens  # an API embedder's, once answered; 0 for a local one
        yield offset + i, np.asarray(vectors, dtype=np.float32), billed - paid, identity
        paid = billed


def built(config: dict, group: str):
    """The stage of ``group`` built from its resolved ``config`` (a bad one: one line)."""
    from omegaconf import OmegaConf

    from situate.config.compose import instantiate_stage

    return instantiate_stage(OmegaConf.create({group: config}), group)
