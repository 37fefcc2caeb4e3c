"""The one check of the ranking parameters every entry point accepts (CLI, Python API, app),
and the fusion methods it checks against (``FusionMethod``; ``hiqa.retrieve.fusion`` implements them and
imports this module, never the other way round).

Eq. 2 (paper §3.3) is only meaningful for a dense weight ``α`` in [0, 1], a keyword weight
``β ≥ 0`` (at most 1 for the convex combination ``cc``) and a result count ``k ≥ 1``.  Outside
those ranges the old code either crashed deep inside NumPy or, worse, answered: ``k = 0`` gave an
empty list and ``k = -1`` every result but the last (a Python slice).  NaN slips through ``<``
comparisons, so every value is also required to be finite.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from hiqa.checks import check_number
from hiqa.errors import ParameterError

# The one set of defaults (how α 0.7 and β 0.2 were chosen: docs/benchmarks.md, Evaluation)
DEFAULT_ALPHA = 0.7
DEFAULT_BETA = 0.2
DEFAULT_METHOD = "minmax"


class FusionMethod(str, Enum):
    """How the routes' scores are made comparable before Eq. 2's weighted sum."""

    MINMAX = "minmax"
    ZSCORE = "zscore"
    RRF = "rrf"
    CC = "cc"
    RAW = "raw"

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def from_str(name: str) -> FusionMethod:
        methods = {m.value: m for m in FusionMethod}
        method = methods.get(name.strip().lower())
        if method is None:
            raise ValueError(
                f"Unknown fusion method {name!r}; valid methods are: {', '.join(methods)}"
            )
        return method


def check_method(method: Any) -> str:
    """The fusion method's canonical name; the error lists the valid ones."""
    try:
        return FusionMethod.from_str(str(method)).value
    except ValueError as exc:
        raise ParameterError(str(exc)) from None


def check_alpha(alpha: Any) -> float:
    return float(check_number("alpha", alpha, low=0, high=1, meaning="weight of the dense route",
                              hint="1 = dense only, 0 = BM25 only"))


def check_beta(beta: Any, method: Any = None) -> float:
    b = float(check_number("beta", beta, low=0, meaning="weight of the keyword bonus",
                           hint="0 turns the bonus off"))
    if method is not None and str(method).strip().lower() == "cc" and b > 1.0:
        raise ParameterError(
            f"beta must be in [0, 1] for the convex combination 'cc', got {b:g}"
        )
    return b


def check_k(k: Any, what: str = "k (number of results)") -> int:
    return int(check_number(what, k, low=1, integer=True))


@dataclass(frozen=True)
class Preset:
    """A validated fusion preset: method, α, β (``fusion.Weights`` is α, β with a reason)."""

    method: str
    alpha: float
    beta: float


def check_weights(method: Any, alpha: Any, beta: Any) -> Preset:
    """Validate the fusion method and both weights together (``cc`` caps β at 1)."""
    m = check_method(method)
    return Preset(m, check_alpha(alpha), check_beta(beta, m))


def check_preset(preset: Any, default: Preset) -> Preset:
    """A stored preset (a JSON object; missing keys from ``default``) as a ``Preset``; raises
    ``ParameterError`` naming what is wrong."""
    if not isinstance(preset, dict):
        raise ParameterError(f"the preset must be a JSON object, got {type(preset).__name__}")
    return check_weights(preset.get("method", default.method), preset.get("alpha", default.alpha),
                         preset.get("beta", default.beta))
