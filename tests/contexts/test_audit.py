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
