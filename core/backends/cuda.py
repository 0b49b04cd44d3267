"""``opweave.backends.cuda``: the CUDA backend's flags, as ``torch.backends.cuda`` (they need no GPU and no plugin).

- ``matmul.allow_tf32``: the float32 matmul precision seen as a bool (True ↔ ``"high"``, False ↔ ``"highest"``;
  reading it gives ``precision != "highest"``), the same setting as ``opweave.set_float32_matmul_precision``.
- ``matmul.allow_fp16_reduced_precision_reduction`` / ``matmul.allow_bf16_reduced_precision_reduction`` (default
  True): whether float16/bfloat16 GEMMs may reduce in the output's precision (cuBLAS's split-K reductions); False sets
  ``CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION``. Assigning a tuple ``(allow_reduced_precision, allow_splitk)``
  also records the split-K permission, read back through ``..._split_k``.
- ``matmul.allow_fp16_accumulation`` (default False): float16 GEMMs may accumulate in float16.
- :func:`is_built`: whether a CUDA backend is installed (the ``cuda`` plugin), not whether a GPU is present.

The settings are process-wide, as PyTorch's.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from .._modes import _check_bool, _MatmulFlags, device_flags

__all__ = ["is_built", "matmul"]

_DEVICE_TYPE = "cuda"


def _parse_reduction(name: str, value: Any) -> tuple[bool, bool]:
    """``bool`` or ``(allow_reduced_precision[, allow_splitk])`` → the pair (PyTorch's ``_parse_reduction_setting``)."""
    where = f"backends.cuda.matmul.{name}"
    if isinstance(value, bool):
        return value, True
    if isinstance(value, (tuple, list)):
        if not value:
            raise TypeError(f"{where} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{where} expects at most two boolean arguments")
        for part, label in zip(value, ("allow_reduced_precision", "allow_splitk")):
            if not isinstance(part, bool):
                raise TypeError(f"{where} expects a bool for {label}, but got {type(part).__name__}")
        return value[0], value[1] if len(value) == 2 else True
    raise TypeError(f"{where} expects a bool or a tuple/list of bools, but got {type(value).__name__}")


class CudaMatmulFlags(_MatmulFlags):
    """``opweave.backends.cuda.matmul``: ``allow_tf32`` and cuBLAS's reduced-precision settings."""

    __slots__ = ("_fp16_reduction", "_bf16_reduction", "_fp16_accumulation")
    _SETTINGS = frozenset(
        {
            "allow_tf32",
            "allow_fp16_reduced_precision_reduction",
            "allow_bf16_reduced_precision_reduction",
            "allow_fp16_accumulation",
        }
    )

    def __init__(self) -> None:
        super().__init__(_DEVICE_TYPE)
        object.__setattr__(self, "_fp16_reduction", (True, True))
        object.__setattr__(self, "_bf16_reduction", (True, True))
        object.__setattr__(self, "_fp16_accumulation", False)

    @property
    def allow_fp16_reduced_precision_reduction(self) -> bool:
        """Whether float16 GEMMs may use reduced-precision reductions (default True)."""
        return self._fp16_reduction[0]

    @allow_fp16_reduced_precision_reduction.setter
    def allow_fp16_reduced_precision_reduction(self, value: bool | tuple[bool, ...]) -> None:
        object.__setattr__(self, "_fp16_reduction", _parse_reduction("allow_fp16_reduced_precision_reduction", value))

    @property
    def allow_fp16_reduced_precision_reduction_split_k(self) -> bool:
        """The split-K permission given with ``allow_fp16_reduced_precision_reduction`` (default True)."""
        return self._fp16_reduction[1]

    @property
    def allow_bf16_reduced_precision_reduction(self) -> bool:
        """Whether bfloat16 GEMMs may use reduced-precision reductions (default True)."""
        return self._bf16_reduction[0]

    @allow_bf16_reduced_precision_reduction.setter
    def allow_bf16_reduced_precision_reduction(self, value: bool | tuple[bool, ...]) -> None:
        object.__setattr__(self, "_bf16_reduction", _parse_reduction("allow_bf16_reduced_precision_reduction", value))

    @property
    def allow_bf16_reduced_precision_reduction_split_k(self) -> bool:
        """The split-K permission given with ``allow_bf16_reduced_precision_reduction`` (default True)."""
        return self._bf16_reduction[1]

    @property
    def allow_fp16_accumulation(self) -> bool:
        """Whether float16 GEMMs may accumulate in float16 (``CUBLAS_COMPUTE_16F``; default False)."""
        return self._fp16_accumulation

    @allow_fp16_accumulation.setter
    def allow_fp16_accumulation(self, value: bool) -> None:
        value = _check_bool("backends.cuda.matmul.allow_fp16_accumulation", "value", value)
        object.__setattr__(self, "_fp16_accumulation", value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._SETTINGS:
            raise AttributeError(f"backends.cuda.matmul has no setting {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (
            f"<opweave.backends.cuda.matmul allow_tf32={self.allow_tf32} "
            f"allow_fp16_reduced_precision_reduction={self.allow_fp16_reduced_precision_reduction} "
            f"allow_bf16_reduced_precision_reduction={self.allow_bf16_reduced_precision_reduction} "
            f"allow_fp16_accumulation={self.allow_fp16_accumulation}>"
        )


matmul = CudaMatmulFlags()
device_flags(_DEVICE_TYPE).matmul = matmul  # one object, however it is reached


def is_built() -> bool:
    """Whether opweave has a CUDA backend installed (the ``cuda`` plugin), as ``torch.backends.cuda.is_built``.

    True does not mean a GPU is usable: that is ``opweave.cuda.is_available()``. It imports no plugin: it looks for
    a registered ``cuda`` backend or an ``opweave.backends`` entry point named ``cuda`` whose module is installed.
    """
    from .._plugins import records

    for record in records():
        if record.name != _DEVICE_TYPE or record.refused:
            continue
        if record.loaded:
            return True
        module = record.value.partition(":")[0].strip()
        try:
            if importlib.util.find_spec(module) is not None:
                return True
        except (ImportError, ValueError):
            continue
    from .._backends import _backends

    return _DEVICE_TYPE in _backends
