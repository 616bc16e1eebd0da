"""Local stand-ins for provider APIs (OpenAI, Cohere...), for tests and offline runs.

Each emulator is an HTTP server on 127.0.0.1 that speaks the provider's wire format as the
official SDK sends and parses it, so the real client code runs unchanged against it.

:mod:`.server` (routing and HTTP, over :mod:`.wire`'s requests and responses) composes the
request log (:mod:`.request_log`), fault injection (:mod:`.fault_injection`) and holds for tests
(:mod:`.holds`); each vendor's emulator is ``<vendor>_api.py``, the Anthropic one composing
:mod:`.anthropic_request`, :mod:`.anthropic_cache`, :mod:`.anthropic_answer`,
:mod:`.anthropic_batches` and :mod:`.rate_buckets`.
"""

from situate.emulators.fault_injection import FAULT_KINDS, Faults
from situate.emulators.request_log import RecordedRequest
from situate.emulators.server import EmulatorServer
from situate.emulators.wire import Request, Response, json_response

__all__ = [
    "FAULT_KINDS",
    "EmulatorServer",
    "Faults",
    "RecordedRequest",
    "Request",
    "Response",
    "json_response",
]
