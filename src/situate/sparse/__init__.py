"""Sparse (lexical) retrieval engines."""
