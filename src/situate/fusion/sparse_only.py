"""``fusion: sparse_only``: the BM25 retriever alone."""

from situate.fusion.base import SingleList


class SparseOnly(SingleList):
    name = "sparse_only"
    needs = ("sparse",)
