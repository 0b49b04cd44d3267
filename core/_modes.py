"""Process-global modes: deterministic algorithms and float32 matmul precision.

Deterministic mode is a mode bit of the dispatch key set (``_keys.MODE_DETERMINISTIC``),
so the dispatcher caches kernels separately for it and, while it is on, prefers a kernel
registered with ``Registry.deterministic_impl`` over one registered ``deterministic=False``
(and raises, or warns with ``warn_only``, when there is no alternative). Like PyTorch's,
the setting is process-global: it is put into the thread-state's class-level default
(seen by new threads) and into every existing thread's own value (see
``_state.set_process_default``). A thread that is inside a ``keys_included`` block
while the mode changes restores the value it saved on entry when the block ends, so
there the change takes effect only after its next call of ``use_deterministic_algorithms``.

The float32 matmul precision is a plain module global, read by backends through
:func:`float32_matmul_mode`.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _dtype, _keys, _state

__all__ = [
    "are_deterministic_algorithms_enabled",
    "device_flags",
    "fill_if_deterministic",
    "fill_resize_if_deterministic",
    "float32_matmul_mode",
    "get_deterministic_debug_mode",
    "get_float32_matmul_precision",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "use_deterministic_algorithms",
]

_MODE = _keys.MODE_DETERMINISTIC
# opweave.utils.deterministic.fill_uninitialized_memory (that module checks and sets it)
fill_uninitialized_memory = True
_lock = threading.Lock()


# -- deterministic algorithms ------------------------------------------------------------


def _check_bool(fn: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")
    return bool(value)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make operations use deterministic algorithms (process-wide), as ``torch.use_deterministic_algorithms``.

    With ``mode=True`` an op whose chosen kernel was registered ``deterministic=False``
    runs the backend's deterministic alternative (``Registry.deterministic_impl``) if it
    has one, and otherwise raises ``RuntimeError`` naming the op and the backend; with
    ``warn_only=True`` it warns (once per call of that kernel) and runs the
    nondeterministic kernel instead. While the mode is on, ``empty``-like factories and
    ``resize_`` fill new memory when ``opweave.utils.deterministic.fill_uninitialized_memory``
    is True (NaN for floating and complex dtypes, the largest value for integers).
    """
    mode = _check_bool("use_deterministic_algorithms", "mode", mode)
    warn_only = _check_bool("use_deterministic_algorithms", "warn_only", warn_only)
    with _lock:
        _state.set_process_default("included", lambda keys: keys | _MODE if mode else keys & ~_MODE)
        _state.set_process_default("deterministic_warn_only", lambda _old: warn_only)
        # warn_only is not part of the key set: forget kernels resolved under the old setting.
        from . import _dispatch

        _dispatch.invalidate()


def are_deterministic_algorithms_enabled() -> bool:
    """Whether deterministic mode is on (``use_deterministic_algorithms(True)``)."""
    return bool(_state.local().included & _MODE)


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode only warns (the ``warn_only`` flag of the last ``use_deterministic_algorithms``)."""
    return bool(_state.local().deterministic_warn_only)


_DEBUG_NAMES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """Set deterministic mode by level: ``0``/``"default"`` off, ``1``/``"warn"`` warn only, ``2``/``"error"`` raise.

    ``TypeError`` unless an int or str; ``ValueError`` for any other value.
    """
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, (int, str)):
        raise TypeError(f"set_deterministic_debug_mode(): debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_NAMES:
            raise ValueError(
                "set_deterministic_debug_mode(): invalid value of debug_mode, expected one of `default`, `warn`, "
                f"`error`, but got {debug_mode}"
            )
        debug_mode = _DEBUG_NAMES[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise ValueError(
            f"set_deterministic_debug_mode(): invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )


def get_deterministic_debug_mode() -> int:
    """The current level: 0 (off), 1 (warn only) or 2 (raise); see :func:`set_deterministic_debug_mode`."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def _fill_requested() -> bool:
    if not _state.local().included & _MODE:
        return False
    return fill_uninitialized_memory


def _fill_value(dtype):
    if dtype is _dtype.bool_:
        return True
    if dtype.is_floating_point:
        return math.nan
    if dtype.is_complex:
        return complex(math.nan, math.nan)
    return int(np.iinfo(dtype.numpy).max)


def _fill_storage_from(tensor, first: int) -> None:
    """Fill the elements of ``tensor``'s storage from element ``first`` on (read as ``tensor``'s dtype)."""
    from ._ops import prims
    from ._tensor import Tensor

    item = tensor.dtype.itemsize
    count = tensor._storage.nbytes // item - first if item else 0
    if count <= 0 or tensor.device.type == "meta":
        return
    view = Tensor._make(tensor._storage, (count,), (1,), first, tensor.dtype, tensor.device, tensor._keys)
    value = prims.full([], _fill_value(tensor.dtype), dtype=tensor.dtype, device=tensor.device)
    prims.copy_to(view, prims.broadcast_in_dim(value, [count], []))


def fill_if_deterministic(tensor):
    """Fill a new uninitialised ``tensor`` in deterministic mode (when ``fill_uninitialized_memory``); return it.

    The whole storage is filled: NaN for floating and complex dtypes, the largest value
    for integer dtypes, True for bool. Called at the end of the ``empty`` factories'
    decompositions; nothing happens outside deterministic mode or on the meta device.
    """
    if _fill_requested():
        _fill_storage_from(tensor, 0)
    return tensor


def fill_resize_if_deterministic(tensor, old_storage_nbytes: int):
    """After ``resize_`` grew ``tensor``'s storage: fill the new part in deterministic mode; return ``tensor``.

    Elements of the storage at or beyond ``old_storage_nbytes // itemsize`` are filled as
    in :func:`fill_if_deterministic` (PyTorch's ``fill_resize_deterministic_``).
    """
    if _fill_requested():
        _fill_storage_from(tensor, old_storage_nbytes // tensor.dtype.itemsize if tensor.dtype.itemsize else 0)
    return tensor


# -- float32 matmul precision -----------------------------------------------------------

_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matrix multiplications (process-wide).

    ``"highest"`` (default): full float32 (IEEE) arithmetic. ``"high"``: a backend may use
    TF32 or a bfloat16x3 scheme where it has a fast kernel for it (else as "highest").
    ``"medium"``: a backend may use bfloat16 arithmetic (else as "high"). Outputs stay
    float32. What each backend does is declared by ``Backend.float32_matmul_modes``.
    """
    global _matmul_precision
    if not isinstance(precision, str):
        raise TypeError(f"set_float32_matmul_precision(): precision must be str, not {type(precision).__name__}")
    if precision not in _PRECISIONS:
        raise ValueError(
            f"set_float32_matmul_precision(): precision must be one of 'highest', 'high', 'medium', got {precision!r}"
        )
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The current float32 matmul precision: ``"highest"``, ``"high"`` or ``"medium"``."""
    return _matmul_precision


def float32_matmul_mode(device_type: str) -> str:
    """What a backend should do for a float32 matmul now: ``"ieee"`` or the mode it declares.

    Reads ``Backend.float32_matmul_modes`` (e.g. ``{"high": "tf32", "medium": "bf16"}``):
    "medium" uses the backend's "medium" mode, else its "high" mode; "high" its "high"
    mode; "highest" (and anything a backend does not declare) is ``"ieee"``.
    """
    from . import _backends

    backend = _backends.get(device_type)
    modes = getattr(backend, "float32_matmul_modes", None) or {}
    precision = _matmul_precision
    if precision == "medium":
        return modes.get("medium") or modes.get("high") or "ieee"
    if precision == "high":
        return modes.get("high") or "ieee"
    return "ieee"


class _MatmulFlags:
    """``opweave.backends.<device>.matmul``: PyTorch's ``allow_tf32`` view of the float32 matmul precision."""

    __slots__ = ("device_type",)

    def __init__(self, device_type: str):
        object.__setattr__(self, "device_type", device_type)

    @property
    def allow_tf32(self) -> bool:
        """True when the float32 matmul precision is not "highest"; setting it sets "high" or "highest"."""
        return _matmul_precision != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value) -> None:
        value = _check_bool(f"backends.{self.device_type}.matmul.allow_tf32", "value", value)
        set_float32_matmul_precision("high" if value else "highest")

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            raise AttributeError(f"backends.{self.device_type}.matmul has no setting {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<opweave.backends.{self.device_type}.matmul allow_tf32={self.allow_tf32}>"


class _DeviceFlags:
    """``opweave.backends.<device>``: per-device-type flags (only ``matmul`` so far)."""

    __slots__ = ("device_type", "matmul")

    def __init__(self, device_type: str):
        self.device_type = device_type
        self.matmul = _MatmulFlags(device_type)

    def __repr__(self):
        return f"<opweave.backends.{self.device_type} flags>"


_device_flags: dict[str, _DeviceFlags] = {}


def device_flags(device_type: str) -> _DeviceFlags:
    """The flags object ``opweave.backends.<device_type>`` (one per device type name)."""
    flags = _device_flags.get(device_type)
    if flags is None:
        flags = _device_flags.setdefault(device_type, _DeviceFlags(device_type))
    return flags
