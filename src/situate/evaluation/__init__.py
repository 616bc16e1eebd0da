"""Scoring ranked chunks against span-level gold."""
