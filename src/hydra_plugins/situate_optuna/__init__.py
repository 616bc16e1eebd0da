"""situate's Optuna sweeper: Hydra's Optuna sweeper that resumes a killed study (see sweeper.py)."""
