"""Chunkers: split documents into contiguous chunks that keep their document offsets."""
