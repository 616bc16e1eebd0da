"""Where a cached answer came from: the API endpoint that wrote it.

Every stage backed by a remote API (LLM contexts, API embeddings, API rerank scores) puts
``endpoint`` in its ``identity()``, so the cache key of each answer names the endpoint that wrote
it: an emulator's answers (``http://127.0.0.1:8765``) are never served to a run against
``https://api.anthropic.com``, nor the other way round. The endpoint is resolved the way the
vendor's SDK resolves it (the option's ``base_url``, else the SDK's environment variable, else the
vendor's public API: :meth:`situate.providers.Vendor.endpoint`, from the vendor's record) and
then passed to the SDK explicitly, so the client talks to exactly the endpoint the key names.

Stores written before keys named their endpoint hold entries whose origin is unknown. A run that
finds some of its answers only there acts on ``unverified_cache`` (config.yaml): ``refuse`` (the
default) stops with one line before anything is paid, ``adopt`` re-keys them as written by this
run's endpoint (the user vouches for them), ``ignore`` leaves them aside and pays for new ones.
"""

from __future__ import annotations

from collections.abc import Callable

from situate.errors import SituateError
from situate.stores.sqlite import BlobStore

UNVERIFIED_POLICIES = ("refuse", "adopt", "ignore")


def legacy_identity(identity: dict) -> dict | None:
    """The identity a store written before endpoints were recorded used (None: no endpoint)."""
    if "endpoint" not in identity:
        return None
    return {k: v for k, v in identity.items() if k != "endpoint"}


def recover_unverified(
    store: BlobStore,
    legacy_of: dict[str, str],
    policy: str,
    what: str,
    endpoint_: str,
    rewrite: Callable[[bytes], bytes] | None = None,
) -> dict[str, bytes]:
    """Act on entries stored under a legacy key for keys this run is missing.

    Parameters
    ----------
    store : BlobStore
        The store the keys live in.
    legacy_of : dict
        Missing key -> the key the same answer had before keys named the endpoint.
    policy : {"refuse", "adopt", "ignore"}
        See the module docstring.
    what : str
        What the entries are, for the message ("contexts for claude-haiku-4-5").
    endpoint_ : str
        This run's endpoint (the one adopted entries are re-keyed as written by).
    rewrite : callable or None
        Applied to each adopted value (e.g. to record its endpoint in it).

    Returns
    -------
    dict
        Missing key -> value, for the adopted entries (empty unless ``policy="adopt"``).
    """
    if policy not in UNVERIFIED_POLICIES:
        raise SituateError(
            f"unverified_cache={policy!r} is not one of {', '.join(UNVERIFIED_POLICIES)}"
        )
    if not legacy_of or policy == "ignore":
        return {}
    found = store.get_many(list(dict.fromkeys(legacy_of.values())))
    if not found:
        return {}
    pending = {key: old for key, old in legacy_of.items() if old in found}
    if policy == "refuse":
        raise SituateError(
            f"{store.where}: {len(pending)} {what} this run needs were stored by an older situate "
            "without the endpoint that wrote them (an emulator's would pass for the real API's); "
            f"if {endpoint_} wrote them, rerun with unverified_cache=adopt, or with "
            "unverified_cache=ignore to pay for new ones"
        )
    adopted = {key: (rewrite or (lambda b: b))(found[old]) for key, old in pending.items()}
    store.move(adopted, set(pending.values()))
    return adopted
