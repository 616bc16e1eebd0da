"""The machinery of paid calls, between the stages that pay and the vendors they pay.

``llm`` (what an LLM call is: request, response, failure, the ``LLMProvider`` protocol of the
``llm`` options), ``retry`` (retries honouring ``retry-after``, the per-attempt gate, ``send``),
``ratelimit`` (AIMD concurrency, the rpm/tpm ceiling), ``budget`` (the spending cap),
``schedule`` (the cache-aware order of a run's LLM calls), ``calls`` (``PaidCalls``: every paid
LLM call through one gate, committed before it is settled) and ``adapter`` (``ApiAdapter``, the
base of the embedders and rerankers over a paid API, and its ``ApiGate``). It imports the vendor
modules (:mod:`situate.providers`) and plain records, stores and prices; the stages import it.
"""
