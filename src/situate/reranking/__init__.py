"""Rerankers: reorder the fused candidates of each query."""
