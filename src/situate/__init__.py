"""situate: a lab for contextual retrieval."""

__version__ = "0.1.0"
