"""``situate.sparse.base.paired_contexts``: the contexts an engine indexes in a field of their own."""

from __future__ import annotations

import pytest

from situate.errors import SituateError
from situate.sparse.base import paired_contexts


def test_contexts_go_apart_only_with_a_context_field():
    texts, contexts = ["a", "b"], ["ca", "cb"]
    assert paired_contexts("pyserini", texts, contexts, True) == contexts
    assert paired_contexts("pyserini", texts, contexts, False) is None  # joined into the texts
    assert paired_contexts("pyserini", texts, None, True) is None


def test_contexts_that_do_not_pair_up_with_the_texts_are_one_line():
    with pytest.raises(SituateError) as err:
        paired_contexts("postgres_fts", ["a", "b"], ["ca"], False)
    assert str(err.value) == (
        "sparse=postgres_fts: 1 contexts for 2 chunk texts; they must pair up one to one"
    )
