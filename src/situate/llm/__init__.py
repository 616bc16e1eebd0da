"""LLM providers that write chunk contexts: Anthropic, OpenAI, a local model."""
