"""Embedders: texts to L2-normalised float32 vectors, cached by content hash."""
