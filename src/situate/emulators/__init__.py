"""Local stand-ins for provider APIs (OpenAI, Cohere...), for tests and offline runs.

Each emulator is an HTTP server on 127.0.0.1 that speaks the provider's wire format as the
official SDK sends and parses it, so the real client code runs unchanged against it.
"""

from situate.emulators.server import (
    FAULT_KINDS,
    EmulatorServer,
    Faults,
    RecordedRequest,
    Request,
    Response,
    json_response,
)

__all__ = [
    "FAULT_KINDS",
    "EmulatorServer",
    "Faults",
    "RecordedRequest",
    "Request",
    "Response",
    "json_response",
]
