"""Tracking: what a run did goes to MLflow (or nowhere); a results table closes every run."""
