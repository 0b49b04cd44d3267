"""``opweave.dispatch``: inspect and extend the dispatcher."""

from __future__ import annotations

from ._dispatch import Explanation, explain, register_kernel
from ._keys import Alias, Layer, backend_bit, format_keyset
from ._state import keys_excluded, keys_included

__all__ = [
    "Alias",
    "Explanation",
    "Layer",
    "backend_bit",
    "explain",
    "format_keyset",
    "keys_excluded",
    "keys_included",
    "register_kernel",
]
