"""Helpers shared by the ``nn_*`` canonical-op modules (norms, losses, attention, embeddings, distances).

Everything here reads tensor metadata or calls prims, so the ops built on it run on
every backend, the meta device included (except :func:`any_true`, which reads data).
"""

from __future__ import annotations

from .. import _dtype
from .._ops import prims
from .._tensor import Tensor
from ..prims._utils import FLOAT
from ._tensor_utils import expand, numel
from ._utils import to_device, to_dtype

#: ATen's ``Reduction`` enum and the names the schema default may carry.
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
_NAMED = {"None": 0, "none": 0, "Mean": 1, "mean": 1, "Sum": 2, "sum": 2}


def reduction_enum(op: str, reduction) -> int:
    """The ``int reduction`` argument as 0 (none), 1 (mean) or 2 (sum); ValueError otherwise."""
    if isinstance(reduction, str) and reduction in _NAMED:
        return _NAMED[reduction]
    if isinstance(reduction, int) and not isinstance(reduction, bool) and reduction in REDUCTIONS:
        return reduction
    raise ValueError(f"{op}: argument 'reduction' must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")


def check_float(op: str, t: Tensor, arg: str = "self") -> None:
    """TypeError unless ``t`` is a real floating tensor."""
    if t.dtype not in FLOAT:
        raise TypeError(f"{op}: expected a floating point tensor for argument '{arg}', but got {t.dtype.name}")


def opmath(op: str, t: Tensor, arg: str = "self") -> Tensor:
    """``t`` (checked to be real floating) in its computation dtype (float32 for 16-bit floats)."""
    check_float(op, t, arg)
    return to_dtype(t, _dtype.opmath_dtype(t.dtype))


def like(t: Tensor | None, ref: Tensor) -> Tensor | None:
    """``t`` converted to ``ref``'s dtype and moved to its device (None stays None)."""
    if t is None:
        return None
    return to_device(to_dtype(t, ref.dtype), ref.device)


def c(value, ref: Tensor) -> Tensor:
    """``value`` broadcast (stride 0) to ``ref``'s shape, dtype and device."""
    scalar = prims.full([], value, dtype=ref.dtype, device=ref.device)
    return prims.broadcast_in_dim(scalar, list(ref.shape), [])


def along(t: Tensor, ndim: int, dims, shape) -> Tensor:
    """``t`` (whose dims are ``dims`` of an ``ndim``-dim result) broadcast to ``shape``."""
    return prims.broadcast_in_dim(t, list(shape), list(dims))


def channel(t: Tensor, x: Tensor, dim: int = 1) -> Tensor:
    """A per-channel vector ``t`` broadcast against ``x`` along ``dim``."""
    return along(t, x.ndim, [dim], x.shape)


def keep(stat: Tensor, dims, x: Tensor) -> Tensor:
    """A statistic reduced over ``dims`` of ``x``, broadcast back to ``x``'s shape."""
    if not dims:
        return stat
    return expand(prims.expand_dims(stat, sorted(dims), x.ndim), x.shape)


def mean(x: Tensor, dims) -> Tensor:
    """Mean of ``x`` over ``dims`` (nan for empty reductions)."""
    count = numel(x.shape[d] for d in dims)
    total = prims.sum(x, list(dims))
    return prims.div(total, c(count, total))


def binary(prim, a: Tensor, b: Tensor) -> Tensor:
    """``prim(a, b)`` with NumPy broadcasting (same dtype and device assumed)."""
    from ._utils import broadcast_shapes

    shape = broadcast_shapes(str(prim), a.shape, b.shape)
    return prim(expand(a, shape), expand(b, shape))


def reduce_loss(loss: Tensor, reduction: int) -> Tensor:
    """``loss`` as it is (0), its mean (1) or its sum (2) over every element."""
    if reduction == 0:
        return loss
    dims = list(range(loss.ndim))
    return mean(loss, dims) if reduction == 1 else prims.sum(loss, dims)


def any_true(t: Tensor) -> bool:
    """Whether any element of the bool tensor ``t`` is true (reads the data; False on the meta device)."""
    if t.numel() == 0 or t.device.type == "meta":
        return False
    return bool(prims.item(prims.any(t, list(range(t.ndim)))))


def check_same_shape(op: str, a: Tensor, b: Tensor, names=("self", "target")) -> None:
    """ValueError unless ``a`` and ``b`` have one shape."""
    if a.shape != b.shape:
        raise ValueError(f"{op}: '{names[1]}' shape {list(b.shape)} must match '{names[0]}' shape {list(a.shape)}")


def flat_count(shape) -> int:
    """Number of elements of ``shape``."""
    return numel(shape)
