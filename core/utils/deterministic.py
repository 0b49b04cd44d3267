"""``opweave.utils.deterministic``: settings of deterministic mode, as ``torch.utils.deterministic``.

``fill_uninitialized_memory`` (bool, default True): while deterministic mode is on
(``opweave.use_deterministic_algorithms(True)``), ``empty``, ``empty_like``,
``empty_strided``, ``empty_permuted``, ``new_empty``, ``new_empty_strided`` and the
growth of ``resize_`` fill new memory with NaN (floating and complex dtypes), the
dtype's largest value (integers) or True (bool). Set it to False to skip the fill.
The setting is process-wide.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator

import numpy as np

from .. import _modes

__all__ = ["DeterministicGuard", "fill_uninitialized_memory"]  # noqa: F822 (a property of the module class)


class _DeterministicModule(types.ModuleType):
    """The module's class: makes ``fill_uninitialized_memory`` a checked bool attribute."""

    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether deterministic mode fills uninitialised memory (default True)."""
        return _modes.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(
                f"opweave.utils.deterministic.fill_uninitialized_memory must be bool, not {type(value).__name__}"
            )
        _modes.fill_uninitialized_memory = bool(value)


@contextlib.contextmanager
def DeterministicGuard(
    deterministic: bool, *, warn_only: bool = False, fill_uninitialized_memory: bool = True
) -> Iterator[None]:
    """Set deterministic mode (and the fill setting) inside a ``with`` block; restore both after, also on errors.

    The settings are process-wide, like ``use_deterministic_algorithms`` (PyTorch keeps a
    class of this name in its test utilities).
    """
    module = sys.modules[__name__]
    saved = (
        _modes.are_deterministic_algorithms_enabled(),
        _modes.is_deterministic_algorithms_warn_only_enabled(),
        module.fill_uninitialized_memory,
    )
    module.fill_uninitialized_memory = fill_uninitialized_memory
    _modes.use_deterministic_algorithms(deterministic, warn_only=warn_only)
    try:
        yield
    finally:
        _modes.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        module.fill_uninitialized_memory = saved[2]


sys.modules[__name__].__class__ = _DeterministicModule
