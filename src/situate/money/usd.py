"""How money figures are written: dollars (4 significant digits), rates, counts and factors,
each from an exact fraction.

:func:`usd` is the one way every command and report writes dollars; :func:`rate_text`,
:func:`count` and :func:`number` write the arithmetic lines of ``situate estimate`` and of
``situate estimate --judge``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

Number = int | Fraction


def exact(value: float | int | str | Fraction | Decimal) -> Fraction:
    """``value`` as an exact fraction; a float is read as the decimal it prints as (0.1 -> 1/10)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(Decimal(repr(value)))
    return Fraction(Decimal(value)) if isinstance(value, str) else Fraction(value)


def usd(value: float | int | Fraction | Decimal) -> str:
    """Dollars, the one way every command and report writes them: 4 significant digits and never
    fewer than cents (``$0.3838``, ``$0.09000``, ``$1.436``, ``$1,234.57``); ``$0`` for nothing."""
    amount = exact(float(value) if not isinstance(value, Fraction | int | Decimal) else value)
    if amount == 0:
        return "$0"
    d = Decimal(amount.numerator) / Decimal(amount.denominator)
    for _ in range(2):  # again when rounding carries into a new digit: 0.99996 -> $1.000
        places = max(2, 3 - d.copy_abs().adjusted())
        d = d.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
    return f"{'-' if d < 0 else ''}${abs(d):,.{places}f}"


def count(value: Number) -> str:
    """Tokens, documents or calls: ``1,250``; a fraction as ``142.86``."""
    value = exact(value) if not isinstance(value, Fraction | int) else value
    if isinstance(value, int) or value.denominator == 1:
        return f"{int(value):,}"
    return f"{float(value):,.2f}"


def number(value: Fraction) -> str:
    """A factor such as ``5`` or ``0.5``."""
    return format(_decimal(value, 6).normalize(), "f")


def rate_text(rate: Fraction) -> str:
    """``$0.10``, ``$0.125``, ``$2.50``: at least two decimals, more where the rate has them."""
    return f"${_plain_decimal(rate, 2)}"


def _decimal(value: Fraction, places: int) -> Decimal:
    q = Decimal(1).scaleb(-places)
    return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(q, ROUND_HALF_UP)


def _plain_decimal(value: Fraction, min_places: int) -> str:
    text = f"{_decimal(value, 9):,f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(min_places, '0')}"
