"""Running a study: the app a Hydra job calls (app.py), launching it (launch.py), the
pipeline of one configuration (pipeline.py), its query path (searcher.py), where its work
runs (execution.py), a saved index (saved_index.py) and the tuning objective (tuning.py)."""
