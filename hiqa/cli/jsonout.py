"""JSON output any parser accepts: what every ``--json`` and ``--out`` of the CLI writes.

Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which are not JSON: a score that
is missing (a dense vector still being filled in, a route that did not see the segment) is
written as ``null`` instead, and ``allow_nan=False`` makes any that slips through an error here
rather than in the reader's parser.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TextIO

import numpy as np


def finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None, numpy scalars and arrays as Python values."""
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return [finite(v) for v in value.tolist()]
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(finite(value), indent=indent, ensure_ascii=False, allow_nan=False)


def dump(value: Any, out: TextIO, *, indent: int | None = None) -> None:
    out.write(dumps(value, indent=indent))
