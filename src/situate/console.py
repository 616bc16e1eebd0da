"""The rich console every command prints through."""

from __future__ import annotations


def console():
    """A stdout console; when stdout is a pipe or a file, 200 columns instead of rich's 80."""
    from rich.console import Console

    out = Console()
    return out if out.is_terminal else Console(width=200)
