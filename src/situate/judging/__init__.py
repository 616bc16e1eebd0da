"""``situate judge``: relevance without labels, from a pooled LLM judge on a graded scale."""
