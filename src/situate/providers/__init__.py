"""The vendors situate pays, one module per vendor, and the one path every paid call takes.

Each vendor module (``anthropic``, ``openai``, ``cohere``, ``local``) owns its SDK client
(built with the endpoint of :mod:`situate.endpoints` passed explicitly and the SDK's own retries
off), which of its errors are worth retrying, the one-line text of the others (never the key)
and its :class:`Vendor` record. Stage options (``llm``, ``embedder``, ``reranker``) are thin
adapters over them.

Every paid call (an LLM completion, an embedding batch, a rerank request) is sent by
:func:`send`: :func:`situate.llm.retry.with_retries` under a gate
(:func:`situate.llm.retry.attempt_gate`): the LLM stages install their
:class:`situate.llm.paid_calls.CallGate`, embedders and rerankers an :class:`ApiGate` (the same
rpm/tpm :class:`~situate.llm.ratelimit.RateCeiling` and AIMD limit, without a budget).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from situate.errors import SituateError
from situate.llm.base import LLMCallFailed
from situate.llm.ratelimit import RATE_GUARD_SECONDS, RATE_LIMITED, AIMDLimit, RateCeiling
from situate.llm.retry import RETRYABLE_STATUS, attempt_gate, retry_after_seconds, with_retries

T = TypeVar("T")
Retryable = Callable[[Exception], tuple[bool, float | None]]


@dataclass(frozen=True)
class Emulated:
    """A vendor's local emulator: its class (``module:Class`` under :mod:`situate.emulators`),
    the key it takes, the overrides that point situate's options at it (``{url}``: where it
    listens) and whether it streams (takes a time to first token)."""

    cls: str
    key: str
    overrides: str
    streams: bool = True


@dataclass(frozen=True)
class LeakScan:
    """What ``tests/test_secrets.py`` runs to use a vendor (``{url}``: its emulator) and what
    the one-line error of a refused key names."""

    overrides: tuple[str, ...]
    stage: str


@dataclass(frozen=True)
class Vendor:
    """What situate knows of a vendor beside its code: the variable its key is read from (None:
    no key), the price-book ids (``conf/pricing/``) of the models its options use, its emulator
    and its leak scan (None: none)."""

    name: str
    key_env: str | None
    pricing: tuple[str, ...]
    emulator: Emulated | None = None
    scan: LeakScan | None = None


def vendors() -> dict[str, Vendor]:
    """Every vendor module's ``VENDOR``, by name (a new module is found without a list)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        vendor = importlib.import_module(f"{__name__}.{info.name}").VENDOR
        found[vendor.name] = vendor
    return dict(sorted(found.items()))


def emulated() -> dict[str, Vendor]:
    """The vendors with a local emulator (``situate emulate``)."""
    return {name: v for name, v in vendors().items() if v.emulator is not None}


def emulator(
    vendor: Vendor, key: str, faults=None, ttft: float = 0.0, host="127.0.0.1", port=0, **timing
):
    """``vendor``'s emulator taking ``key``, not started yet. ``timing``: more of its options
    (``output_tokens_per_second``, ``rpm``, ``tpm``); ``ValueError`` naming one it lacks."""
    module, name = vendor.emulator.cls.split(":")
    cls = getattr(importlib.import_module(f"situate.emulators.{module}"), name)
    offered = inspect.signature(cls).parameters
    for option in timing:
        if option not in offered:
            raise ValueError(f"--{option.replace('_', '-')} is not an option of {name}")
    streams = {"ttft": ttft} if vendor.emulator.streams else {}
    server = cls(api_key=key, faults=faults, **streams, **timing)
    server.host, server.port = host, port
    return server


def sdk_client(sdk_class, vendor: str, option: str, key_env: str, base_url, timeout, **extra):
    """``sdk_class`` (an SDK's client) with the key from ``key_env`` (and only from there), the
    endpoint cache keys name passed explicitly and the SDK's retries off (:func:`send` retries)."""
    from situate.endpoints import base_url as resolved_base_url

    return sdk_class(
        api_key=api_key(key_env, option),
        base_url=resolved_base_url(vendor, base_url),
        timeout=timeout,
        max_retries=0,
        **extra,
    )


def status_retryable(error, connection_error, status_error) -> tuple[bool, float | None]:
    """Retry an SDK's ``connection_error`` (timeouts, resets) and a ``status_error`` of a
    retryable HTTP status (honouring its ``retry-after``)."""
    if isinstance(error, connection_error):
        return True, None
    if isinstance(error, status_error) and error.status_code in RETRYABLE_STATUS:
        headers = getattr(error, "headers", None)
        response = getattr(error, "response", None)
        return True, retry_after_seconds(headers if response is None else response.headers)
    return False, None


def api_key(variable: str, option: str) -> str:
    """The key in environment variable ``variable``, or a one-line error naming it."""
    value = os.environ.get(variable, "").strip()
    if not value:
        raise SituateError(f"{option}: set {variable} (the key is read from the environment only)")
    return value


def refused_key(option: str, key_env: str) -> str:
    """The line of a 401 (an API's message may echo part of the key: never repeated here)."""
    return f"{option}: the API refused the key in {key_env} (401); set a valid key"


@dataclass(frozen=True)
class Retries:
    """How often and how long a paid call is retried (``max_retries`` after the first try; the
    defaults wait at most 0.5 s before the first retry and at most 8 s ever, as the SDKs do)."""

    max_retries: int
    backoff_base: float = 0.5
    backoff_max: float = 8.0


def send(call: Callable[[], T], retryable: Retryable, retries: Retries, gate=None) -> T:
    """``call()`` through :func:`situate.llm.retry.with_retries` with ``gate`` on every attempt.

    A call still failing after the retries raises the vendor's last error (its module turns it
    into one line); an error not worth retrying is raised at once.
    """
    with attempt_gate(gate):
        try:
            result, _ = with_retries(
                call, retryable, retries.max_retries, retries.backoff_base, retries.backoff_max
            )
        except LLMCallFailed as failed:
            raise failed.__cause__ from None
    return result


class ApiGate:
    """The gate of an embedder's or reranker's attempts: at most ``rpm`` requests and ``tpm``
    estimated tokens a minute (:class:`RateCeiling`) and the AIMD limit on attempts in flight
    (:class:`AIMDLimit`, from ``concurrency``). ``tokens`` is set before each call."""

    def __init__(
        self,
        option: str,
        rpm: int | None,
        tpm: int | None,
        concurrency: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.ceiling = RateCeiling(
            rpm, tpm, 60.0 + RATE_GUARD_SECONDS, clock=clock, sleep=sleep, option=option
        )
        self.limit = AIMDLimit(concurrency)
        self.tokens = 0
        self.rate_limited = 0
        self._epoch = 0

    def before(self) -> None:
        self.ceiling.acquire(self.tokens)
        self._epoch = self.limit.acquire()

    def after(self, outcome: str) -> None:
        self.limit.release(self._epoch, outcome)
        if outcome == RATE_LIMITED:
            self.rate_limited += 1
