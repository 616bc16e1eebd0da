"""Generated evaluation sets: ``situate questions generate`` and ``situate questions review``."""
