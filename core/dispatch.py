"""``opweave.dispatch``: inspect and extend the dispatcher."""

from __future__ import annotations

from ._dispatch import (
    Decline,
    Explanation,
    cached_key_sets,
    cpu_fallback_calls,
    explain,
    register_deterministic_kernel,
    register_fallback,
    register_kernel,
    registered,
    restore,
    snapshot,
)
from ._keys import Alias, Layer, backend_bit, format_keyset, layer_bit, layers_at_and_above
from ._plans import Plan, PlanCheckError, Step
from ._plans import plans_of as plans
from ._state import keys_excluded, keys_included

__all__ = [
    "Plan",
    "PlanCheckError",
    "Step",
    "plans",
    "Alias",
    "Decline",
    "cached_key_sets",
    "cpu_fallback_calls",
    "restore",
    "snapshot",
    "Explanation",
    "Layer",
    "backend_bit",
    "explain",
    "format_keyset",
    "keys_excluded",
    "keys_included",
    "layer_bit",
    "layers_at_and_above",
    "register_deterministic_kernel",
    "register_fallback",
    "register_kernel",
    "registered",
]
