"""The one range check of a numeric option, for the CLI, the Python API and the app alike."""
from __future__ import annotations

import math
from typing import Any

from hiqa.errors import ParameterError


def check_number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                 integer: bool = False, meaning: str = "", hint: str = "") -> Any:
    """The one range check of a numeric option (CLI, API, app): ``value`` as an int (with
    ``integer``) or a finite float in [``low``, ``high``], or a ``ParameterError`` that names
    the option, its range and what it means."""
    bounds = ((f" in [{low:g}, {high:g}]" if high is not None else f" >= {low:g}")
              if low is not None else (f" <= {high:g}" if high is not None else ""))
    about = f" ({meaning})" if meaning else ""
    kind = "a whole number" if integer else "a number"
    wrong_type = ParameterError(f"{name} must be {kind}{bounds}{about}, got {value!r}")
    if isinstance(value, bool) or integer and isinstance(value, float) and not value.is_integer():
        raise wrong_type
    try:
        number = int(value) if integer else float(value)
    except (TypeError, ValueError, OverflowError):
        raise wrong_type from None
    if not math.isfinite(number) or (low is not None and number < low) or (
            high is not None and number > high):
        raise ParameterError(f"{name} must be{bounds}{about}, got {number:g}"
                             + (f"; {hint}" if hint else ""))
    return number

