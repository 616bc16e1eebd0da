"""One MLflow trace per question of a retrieval run, linked to the run (its Traces tab).

A trace holds a root span ``retrieve`` (type ``CHAIN``; inputs: the question and its id; outputs:
the final list's chunk ids and the rank of its first gold chunk) and, in pipeline order, one
``RETRIEVER`` span per stage that ran (``dense``, ``sparse``, ``fusion``, ``rerank``), whose
output is the stage's ranked list as :class:`mlflow.entities.Document` objects (MLflow's
convention, which its UI shows as retrieved documents): the chunk's first characters and, in
``metadata``, its ``chunk_id`` (shown beside it), ``doc_uri``, ``score``, ``rank`` (1 = best)
and ``gold`` (it overlaps a gold span). A span lasts the seconds its stage took for the question; the stages of a
trace follow one another, and the traces of a run too, the last ending when they are written.
The trace is tagged ``situate.question_id`` and ``situate.gold_found``.

The traces are built here as finished spans and written the way MLflow's own OTLP endpoint
writes the spans it receives: ``log_spans`` creates the traces (name, state, times, previews,
and the tags the root span carries as ``mlflow.traceTag.*`` attributes) in one transaction per
:data:`BATCH` traces, and ``link_traces_to_run`` links them to the run, which the run's Traces
tab and ``search_traces(run_id=...)`` read as they read the metadata ``mlflow.sourceRun`` (which
only a ``start_trace`` per trace, one transaction each, could write). MLflow's tracing API
(``MlflowClient.start_trace`` / ``start_span``) is not used: its process-wide OpenTelemetry
provider exports to the *global* tracking URI, not the client's (a trace meant for another store
is lost with a warning), in one transaction per span and one per trace, from a background queue
that drops what comes once 1,000 tasks wait, at about 8 times the cost (``benchmarks/traces.py``).
Nothing here touches MLflow's global state (tracking URI, active run or experiment, in-memory
traces), nor Python's random state, nor prints anything.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from situate.evaluation.evaluate import QuestionResult

TOP = 10  # Documents per span
PAGE_CHARS = 300  # the start of a chunk's text a Document holds
BATCH = 64  # traces written in one call (link_traces_to_run takes at most 100)
ROOT = "retrieve"  # the root span, and the trace's name
QUESTION_TAG = "situate.question_id"
GOLD_TAG = "situate.gold_found"  # "true" / "false"; absent when the question has no gold
TAG_ATTRIBUTE = "mlflow.traceTag."  # a root span attribute the store makes a trace tag


@dataclass
class StageList:
    """One stage's ranked list for one question.

    Parameters
    ----------
    name : str
        The stage: ``dense``, ``sparse``, ``fusion`` or ``rerank``.
    chunk_ids : list of str
        The chunks it ranked, best first.
    scores : list of float
        Their scores, in the same order.
    seconds : float
        How long the stage took for this question (a batch's share is fine).
    """

    name: str
    chunk_ids: list[str]
    scores: list[float]
    seconds: float


@dataclass
class QuestionTrace:
    """What one question's trace shows.

    Parameters
    ----------
    question_id : str
        The question's id (tagged ``situate.question_id``).
    question : str
        Its text, the query the retrievers ran.
    gold_chunk_ids : set of str
        The chunks that overlap a gold span (empty: the question has no gold).
    stages : list of StageList
        The stages that ran, in pipeline order; the last one's list is the final one.
    """

    question_id: str
    question: str
    gold_chunk_ids: set[str]
    stages: list[StageList]


@dataclass
class TraceCounts:
    """What :func:`log_traces` wrote.

    Parameters
    ----------
    questions : int
        How many traces were asked for.
    logged : int
        How many of them the store holds for the run afterwards, counted by searching them back.
    seconds : float
        Wall time spent writing and counting them.
    """

    questions: int
    logged: int
    seconds: float


def log_traces(
    tracking_uri: str,
    experiment_id: str,
    run_id: str,
    traces: list[QuestionTrace],
    chunk_text: Callable[[str], str],
    chunk_uri: Callable[[str], str],
    top: int = TOP,
) -> TraceCounts:
    """Write one trace per question to the store at ``tracking_uri``, linked to ``run_id``.

    Parameters
    ----------
    tracking_uri : str
        The MLflow store (``sqlite:///...``, a server, a database).
    experiment_id : str
        The run's experiment, where the traces go.
    run_id : str
        The run the traces are linked to.
    traces : list of QuestionTrace
        One per question.
    chunk_text : callable
        A chunk's text from its id (a Document keeps its first :data:`PAGE_CHARS` characters).
    chunk_uri : callable
        A chunk's document, its ``doc_uri``, from its id.
    top : int
        How many chunks of each stage's list become Documents.

    Returns
    -------
    TraceCounts
        ``logged`` less than ``questions``: traces were lost, which the caller says.

    Raises
    ------
    mlflow.exceptions.MlflowException
        When the store refuses a write (a store that keeps no spans, such as MLflow's
        file store, raises ``NotImplementedError``).
    """
    from mlflow import MlflowClient
    from mlflow.tracing.client import TracingClient

    started = time.perf_counter()
    client, tracing = MlflowClient(tracking_uri), TracingClient(tracking_uri)
    at = time.time_ns() - sum(_ns(s.seconds) for q in traces for s in q.stages)
    ids: set[str] = set()
    for i in range(0, len(traces), BATCH):
        spans, batch = [], []
        for q in traces[i : i + BATCH]:
            trace_id, trace_spans, at = _build(q, at, chunk_text, chunk_uri, top)
            spans.extend(trace_spans)
            batch.append(trace_id)
        tracing.log_spans(experiment_id, spans)
        client.link_traces_to_run(batch, run_id)
        ids.update(batch)
    logged = _count(client, experiment_id, run_id, ids)
    return TraceCounts(len(traces), logged, time.perf_counter() - started)


def gold_rank(q: QuestionTrace) -> int | None:
    """The rank (1 = best) of the first gold chunk in ``q``'s final list, None if none is."""
    final = q.stages[-1].chunk_ids if q.stages else []
    return next((r for r, cid in enumerate(final, 1) if cid in q.gold_chunk_ids), None)


def _ns(seconds: float) -> int:
    return max(0, round(seconds * 1e9))


def _build(q, at, chunk_text, chunk_uri, top):
    """``q``'s trace id, its spans (root first) and when it ends, starting at ``at`` (ns)."""
    from mlflow.entities import Document, SpanType
    from mlflow.tracing.constant import TraceTagKey
    from mlflow.tracing.utils import generate_mlflow_trace_id_from_otel_trace_id

    otel_id = secrets.randbits(128) or 1  # not Python's random: a seeded run would repeat ids
    trace_id = generate_mlflow_trace_id_from_otel_trace_id(otel_id)
    root_id = secrets.randbits(64) or 1
    start = at
    spans = []
    for stage in q.stages:
        docs = [
            Document(
                page_content=chunk_text(cid)[:PAGE_CHARS],
                metadata={  # the UI shows the first key beside each document, the rest on a click
                    "chunk_id": cid,
                    "doc_uri": chunk_uri(cid),
                    "score": float(score),
                    "rank": rank,
                    "gold": cid in q.gold_chunk_ids,
                },
                id=cid,
            )
            for rank, (cid, score) in enumerate(
                zip(stage.chunk_ids[:top], stage.scores[:top], strict=False), 1
            )
        ]
        end = at + _ns(stage.seconds)
        span = (stage.name, SpanType.RETRIEVER, at, end, {"query": q.question}, docs, {})
        spans.append(_span(otel_id, trace_id, root_id, secrets.randbits(64) or 1, *span))
        at = end
    rank = gold_rank(q)
    tags = {TraceTagKey.TRACE_NAME: ROOT, QUESTION_TAG: q.question_id}
    if q.gold_chunk_ids:
        tags[GOLD_TAG] = "false" if rank is None else "true"
    inputs = {"query": q.question, "question_id": q.question_id}
    outputs = {"chunk_ids": q.stages[-1].chunk_ids[:top] if q.stages else [], "gold_rank": rank}
    carried = {TAG_ATTRIBUTE + key: value for key, value in tags.items()}
    span = (ROOT, SpanType.CHAIN, start, at, inputs, outputs, carried)
    return trace_id, [_span(otel_id, trace_id, None, root_id, *span), *spans], at


def _span(otel_id, trace_id, parent, span_id, name, span_type, start, end, inputs, outputs, extra):
    """A finished span, made as MLflow reads a stored one back (``Span.from_dict``)."""
    from mlflow.entities import Span
    from mlflow.tracing.constant import SpanAttributeKey
    from mlflow.tracing.utils import dump_span_attribute_value as dump
    from mlflow.tracing.utils.default_log_level import default_log_level_for_span_type

    attributes = {
        SpanAttributeKey.REQUEST_ID: dump(trace_id),
        SpanAttributeKey.SPAN_TYPE: dump(span_type),
        SpanAttributeKey.INPUTS: dump(inputs),
        SpanAttributeKey.OUTPUTS: dump(outputs),
        SpanAttributeKey.LOG_LEVEL: dump(int(default_log_level_for_span_type(span_type))),
        **{key: dump(value) for key, value in extra.items()},
    }
    return Span.from_dict(
        {
            "trace_id": _b64(otel_id, 16),
            "span_id": _b64(span_id, 8),
            "parent_span_id": None if parent is None else _b64(parent, 8),
            "name": name,
            "start_time_unix_nano": start,
            "end_time_unix_nano": end,
            "status": {"code": "STATUS_CODE_OK", "message": ""},
            "attributes": attributes,
        }
    )


def _b64(value: int, size: int) -> str:
    return base64.b64encode(value.to_bytes(size, "big")).decode()


def _count(client, experiment_id: str, run_id: str, ids: set[str]) -> int:
    """How many of the traces ``ids`` the store finds linked to ``run_id``."""
    found, token = 0, None
    while True:
        page = client.search_traces(
            locations=[experiment_id],
            run_id=run_id,
            max_results=500,
            page_token=token,
            include_spans=False,
        )
        found += sum(t.info.trace_id in ids for t in page)
        token = page.token
        if not token:
            return found


STAGE_ORDER = ("dense", "sparse", "fusion", "rerank")


def question_traces(
    questions: Sequence[QuestionResult],
    stages: Sequence[Mapping[str, tuple[Any, Any, float]]],
    chunk_ids: Sequence[str],
    picked: Iterable[int],
) -> list[QuestionTrace]:
    """The traces of the questions at positions ``picked``: ``stages[q]`` holds question
    ``q``'s list from each stage (chunk rows into ``chunk_ids``, scores, seconds), as
    :class:`situate.running.searcher.Searcher` keeps them."""
    out = []
    for q in picked:
        result, lists = questions[q], stages[q]
        out.append(
            QuestionTrace(
                question_id=result.qid,
                question=result.question,
                gold_chunk_ids=set(result.relevant_ids),
                stages=[
                    StageList(
                        name,
                        [chunk_ids[int(r)] for r in lists[name][0]],
                        [float(s) for s in lists[name][1]],
                        float(lists[name][2]),
                    )
                    for name in STAGE_ORDER
                    if name in lists
                ],
            )
        )
    return out
