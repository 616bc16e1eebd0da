"""The faithfulness audit flags numbers, identifiers and names a context adds to its document."""

from __future__ import annotations

from situate.contexts.audit import audit, unsupported_tokens
from situate.records import Chunk, Context, Corpus, Document

DOC = "The parse_config function reads settings.yaml. Revenue was 314 million in Q2 at ACME Corp."


def test_supported_tokens_pass():
    assert (
        unsupported_tokens("This chunk shows `parse_config` and revenue of 314 at ACME.", DOC) == []
    )


def test_invented_number_identifier_and_name_are_flagged():
    context = "This chunk, from the Globex report, says revenue was 315 via load_config."
    assert unsupported_tokens(context, DOC) == ["315", "load_config", "Globex"]


def test_sentence_openers_and_abbreviations_are_not_names():
    assert unsupported_tokens("This part covers settings, e.g. yaml files.", DOC) == []


def test_audit_lists_flagged_contexts_only():
    corpus = Corpus("t", [Document("d", DOC)], [])
    chunks = [Chunk("d#0", "d", 0, 0, 40, DOC[:40]), Chunk("d#1", "d", 1, 40, len(DOC), DOC[40:])]
    contexts = [Context("d#0", "About parse_config."), Context("d#1", "Revenue of 999 at Initech.")]
    (flag,) = audit(corpus, chunks, contexts)
    assert flag.chunk_id == "d#1"
    assert flag.unsupported == ("999", "Initech")


class CountingText(str):
    """A document text that counts how often it is lower-cased."""

    lowered = 0

    def lower(self) -> str:
        CountingText.lowered += 1
        return str.lower(self)


def test_each_document_is_lowered_once_and_each_distinct_context_checked_once():
    # a rule context (heading_path) repeats per chunk: the audit must not grow with chunks x
    # document length
    text = CountingText(DOC)
    corpus = Corpus("t", [Document("d", text)], [])
    chunks = [Chunk(f"d#{i}", "d", i, 0, 10, DOC[:10]) for i in range(50)]
    contexts = [
        Context(f"d#{i}", "Report > Initech" if i % 2 else "About ACME.") for i in range(50)
    ]
    CountingText.lowered = 0
    flags = audit(corpus, chunks, contexts)
    assert CountingText.lowered == 1
    assert [f.chunk_id for f in flags] == [f"d#{i}" for i in range(1, 50, 2)]
    assert {f.unsupported for f in flags} == {("Initech",)}
