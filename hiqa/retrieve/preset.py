"""A collection's saved fusion weights (its *preset*), read with a fallback and saved checked."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hiqa.errors import HiqaError
from hiqa.index.registry import Registry
from hiqa.retrieve.params import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_METHOD,
    Preset,
    check_preset,
    check_weights,
)

DEFAULT_PRESET = Preset(DEFAULT_METHOD, DEFAULT_ALPHA, DEFAULT_BETA)


def as_dict(p: Preset) -> dict[str, Any]:
    """A preset as the registry stores it."""
    return {"method": p.method, "alpha": p.alpha, "beta": p.beta}


def stored_preset(meta: Mapping[str, Any]) -> tuple[Preset, str | None]:
    """The registry's saved weights and, when they are out of range, why the defaults are used
    instead (with the command that fixes it): one bad save cannot break every later search."""
    stored = meta.get("preset")
    if stored is None:
        return DEFAULT_PRESET, None
    try:
        return check_preset(stored, DEFAULT_PRESET), None
    except HiqaError as exc:
        name = meta.get("name", "")
        return DEFAULT_PRESET, (
            f"the saved fusion preset of collection {name!r} is invalid ({exc}); using "
            f"the defaults {DEFAULT_METHOD}, alpha {DEFAULT_ALPHA}, beta {DEFAULT_BETA}. "
            f"Save a valid one with `hiqa preset -c {name} --alpha {DEFAULT_ALPHA} "
            f"--beta {DEFAULT_BETA}`"
        )


def save_preset(registry: Registry, method: str, alpha: float, beta: float) -> None:
    """Raises ``ParameterError`` (and saves nothing) when a value is out of range."""
    w = as_dict(check_weights(method, alpha, beta))
    registry.update(lambda d: d.__setitem__("preset", w), new_generation=False)


def weights(meta: Mapping[str, Any], method: str | None = None, alpha: float | None = None,
            beta: float | None = None) -> Preset:
    """The given fusion weights, the saved preset's where one is None, checked."""
    preset = stored_preset(meta)[0]
    return check_weights(method or preset.method, preset.alpha if alpha is None else alpha,
                         preset.beta if beta is None else beta)
