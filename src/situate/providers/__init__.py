"""The vendors situate pays, one module per vendor, and what every vendor shares.

Each vendor module (``anthropic``, ``openai``, ``cohere``, ``local``) owns its SDK client (built
with its endpoint passed explicitly and the SDK's own retries off), which of its errors are worth
retrying, the one-line text of the others (never the key) and its :class:`Vendor` record: what
situate knows of the vendor beside its code (key variable, public endpoint and base-URL variable,
the variables a Ray task needs, price-book ids, where its cache minimums come from, emulator).
Everything else that names a vendor derives from the records (:func:`vendors`).

The retry/gate path every paid call takes is one layer up, :mod:`situate.paid`.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from situate.errors import SituateError

Retryable = Callable[[Exception], tuple[bool, float | None]]
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
RATE_LIMIT_STATUS = frozenset({429, 529})  # the server asks the client to slow down


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
    """What ``tests/e2e/test_secrets.py`` runs to use a vendor (``{url}``: its emulator) and what
    the one-line error of a refused key names."""

    overrides: tuple[str, ...]
    stage: str


@dataclass(frozen=True)
class Vendor:
    """What situate knows of a vendor beside its code.

    ``key_env``: the variable its key is read from (None: no key). ``pricing``: the price-book
    ids (``conf/pricing/``) of the models its options use; their ``min_cacheable_tokens`` are its
    cache minimums (:meth:`cache_minimums`, what its emulator caches by). ``public_api``: the
    endpoint its SDK calls by default, ``base_url_env`` the variable that SDK reads instead (None
    for both: no remote API). ``env``: more variables its stages read, which a Ray task needs
    too (:attr:`forwarded`). Then its emulator and its leak scan (None: none).
    """

    name: str
    key_env: str | None
    pricing: tuple[str, ...]
    public_api: str | None = None
    base_url_env: str | None = None
    env: tuple[str, ...] = ()
    emulator: Emulated | None = None
    scan: LeakScan | None = None

    @property
    def forwarded(self) -> tuple[str, ...]:
        """The variables its stages read besides the keys their configs name (``api_key_env``):
        what ``execution=ray`` hands each task."""
        return tuple(v for v in (self.base_url_env, *self.env) if v)

    def base_url(self, configured: str | None) -> str:
        """The URL its SDK would call: ``configured``, else :attr:`base_url_env`, else
        :attr:`public_api`."""
        variable = os.environ.get(self.base_url_env, "").strip() if self.base_url_env else ""
        url = configured or variable or self.public_api
        if url is None:
            raise SituateError(f"{self.name} has no API endpoint (a model run in this process)")
        return url

    def endpoint(self, configured: str | None) -> str:
        """The normalised endpoint of :meth:`base_url`, as cache keys and logs carry it.

        Scheme and host in lower case, the port only where one is given, the path without a
        trailing slash; user name, password, query and fragment are dropped (they never reach a
        key or a log).
        """
        url = self.base_url(configured)
        parts = urlsplit(url)
        if not parts.scheme or not parts.hostname:
            raise SituateError(
                f"base_url {url!r} for {self.name} is not a URL; give one like "
                "http://127.0.0.1:8765"
            )
        try:
            port = f":{parts.port}" if parts.port is not None else ""
        except ValueError:
            raise SituateError(f"base_url {url!r} for {self.name} has a bad port") from None
        return f"{parts.scheme.lower()}://{parts.hostname.lower()}{port}{parts.path.rstrip('/')}"

    def cache_minimums(self, book=None) -> dict[str, int]:
        """Price-book id -> the minimum cacheable prompt length of each of its models that has
        one, read from ``book`` (default: ``conf/pricing/default.yaml``, as the cost code reads
        it)."""
        from situate.money.pricing import load_price_book

        book = book if book is not None else load_price_book()
        found = {model: book.price(model).min_cacheable_tokens for model in self.pricing}
        return {model: tokens for model, tokens in found.items() if tokens is not None}


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


def sdk_client(sdk_class, vendor: Vendor, option: str, key_env: str, base_url, timeout, **extra):
    """``sdk_class`` (an SDK's client) with the key from ``key_env`` (and only from there), the
    endpoint cache keys name (:meth:`Vendor.base_url`) passed explicitly and the SDK's retries
    off (:func:`situate.paid.retry.send` retries)."""
    return sdk_class(
        api_key=api_key(key_env, option),
        base_url=vendor.base_url(base_url),
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


def retry_after_seconds(headers) -> float | None:
    """Seconds from a ``retry-after-ms`` or ``retry-after`` header (seconds form), if any."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def api_key(variable: str, option: str) -> str:
    """The key in environment variable ``variable``, or a one-line error naming it."""
    value = os.environ.get(variable, "").strip()
    if not value:
        raise SituateError(f"{option}: set {variable} (the key is read from the environment only)")
    return value


def refused_key(option: str, key_env: str) -> str:
    """The line of a 401 (an API's message may echo part of the key: never repeated here)."""
    return f"{option}: the API refused the key in {key_env} (401); set a valid key"
