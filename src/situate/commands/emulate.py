"""``situate emulate {anthropic,openai,cohere}``: serve a provider emulator until Ctrl-C.

Prints one line with the config override and the key to export, e.g.::

    llm.base_url=http://127.0.0.1:8765  export ANTHROPIC_API_KEY=sk-ant-emulator

``GET <url>/_emulator/stats`` answers the emulator's request counts (see
:mod:`situate.emulators.request_log`); SIGTERM or Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from situate.emulators.fault_injection import ALL_FAULT_KINDS, Faults
from situate.emulators.server import EmulatorServer, check_loopback

DEFAULT_FAULTS = "429_retry_after,529,500,reset"  # 529 is Anthropic's "overloaded" only
# a provider's timing beyond the time to first token (the Anthropic emulator's options)
TIMING = ("output_tokens_per_second", "rpm", "tpm")


def providers() -> dict:
    """The vendors with an emulator (:func:`situate.providers.emulated`): a new vendor's emulator
    is its ``VENDOR`` record's ``emulator``, nothing here."""
    from situate.providers import emulated

    return emulated()


def build(
    provider: str, faults: Faults, ttft: float, host: str, port: int, **timing
) -> EmulatorServer:
    """The emulator of ``provider``, not started yet (``timing``: see :func:`timing_options`)."""
    from situate.providers import emulator

    vendor = providers()[provider]
    return emulator(vendor, vendor.emulator.key, faults, ttft, host, port, **timing)


def timing_options(args: argparse.Namespace) -> dict:
    """The provider-timing options given (``ValueError`` for a value out of range)."""
    given = {k: getattr(args, k) for k in TIMING if getattr(args, k) is not None}
    for option, value in given.items():
        if value <= 0:
            raise ValueError(f"--{option.replace('_', '-')} {value} must be > 0")
    return given


def usage_line(provider: str, url: str) -> str:
    """The override to pass to ``situate run`` and the key to export."""
    vendor = providers()[provider]
    overrides = vendor.emulator.overrides.format(url=url)
    return f"{overrides}  export {vendor.key_env}={vendor.emulator.key}"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="situate emulate",
        description="Serve a local emulator of a provider's API (token accounting, prompt "
        "caching, injected faults) until Ctrl-C.",
    )
    parser.add_argument("provider", choices=tuple(providers()))
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address (127.0.0.1)")
    parser.add_argument(
        "--fault-rate", type=float, default=0.0, help="share of requests answered with a fault"
    )
    parser.add_argument(
        "--faults",
        default=None,
        help="comma-separated kinds the fault rate is split over (default: "
        "429_retry_after,529,500,reset for anthropic, the same without 529 for the others); "
        f"known: {','.join(ALL_FAULT_KINDS)}",
    )
    parser.add_argument(
        "--retry-after", default="1", help="retry-after header of 429_retry_after faults (seconds)"
    )
    parser.add_argument(
        "--slow-seconds", type=float, default=1.0, help="delay of slow faults (seconds)"
    )
    parser.add_argument(
        "--ttft", type=float, default=0.2, help="seconds to first token (LLM emulators)"
    )
    parser.add_argument(
        "--output-tokens-per-second",
        type=float,
        default=None,
        help="generation speed after the first token (anthropic; default: the whole answer at once)",
    )
    parser.add_argument(
        "--rpm", type=int, default=None, help="requests per minute before 429 (anthropic)"
    )
    parser.add_argument(
        "--tpm",
        type=int,
        default=None,
        help="input tokens plus max_tokens per minute before 429 (anthropic)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    default = DEFAULT_FAULTS if args.provider == "anthropic" else DEFAULT_FAULTS.replace(",529", "")
    kinds = tuple(k.strip() for k in (args.faults or default).split(",") if k.strip())
    try:
        check_loopback(args.host)
        if not 0.0 <= args.fault_rate <= 1.0:
            raise ValueError(f"--fault-rate {args.fault_rate} must be within 0..1")
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port {args.port} must be within 0..65535")
        if args.ttft < 0:
            raise ValueError(f"--ttft {args.ttft} must be >= 0")
        if args.slow_seconds < 0:
            raise ValueError(f"--slow-seconds {args.slow_seconds} must be >= 0")
        extra = {"retry_after": args.retry_after, "slow_seconds": args.slow_seconds}
        faults = (
            Faults.uniform(args.fault_rate, kinds, seed=args.seed, **extra)
            if kinds
            else Faults(seed=args.seed, **extra)
        )
        timing = timing_options(args)
        server = build(args.provider, faults, args.ttft, args.host, args.port, **timing)
        url = server.start()
    except (ValueError, OSError) as e:
        print(f"situate emulate: {e}", file=sys.stderr)
        return 2
    print(usage_line(args.provider, url), flush=True)
    stop = threading.Event()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if main_thread else None
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        server.stop()
    return 0
