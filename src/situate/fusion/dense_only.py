"""``fusion: dense_only``: the embedding retriever alone."""

from situate.fusion.base import SingleList


class DenseOnly(SingleList):
    name = "dense_only"
    needs = ("dense",)
