"""Helpers shared by the elementwise canonical-op modules (``elementwise*.py``).

Prims are looked up when an op runs, not when it is defined, so the canonical
ops can be defined before (or without) the prim families they decompose into.
Every helper reads only tensor metadata, so the ops run on the meta device.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import lookup, prims
from .._tensor import Tensor, wrap_scalar
from ..prims._utils import ALL, BOOL, COMPLEX, FLOAT, FLOATING, INT, INTEGRAL, NUMERIC, REAL
from ._utils import (
    Promotion,
    broadcast_shapes,
    broadcast_to,
    common_device,
    define_with_variants,
    elementwise_dtypes,
    prepare,
    to_device,
    to_dtype,
)

P = Promotion
bool_ = _dtype.bool_

__all__ = [
    "ALL",
    "BOOL",
    "COMPLEX",
    "FLOAT",
    "FLOATING",
    "INT",
    "INTEGRAL",
    "NUMERIC",
    "REAL",
    "P",
    "redirect",
    "make",
    "apply_prim",
    "as_tensor",
    "bool_",
    "check_alpha",
    "check_dtype",
    "check_scalar_fits",
    "full_like",
    "pointwise",
    "prepare_all",
    "prim",
    "scalar_like",
    "unsupported",
]


def prim(name: str):
    """The prim packet ``prims.<name>``, resolved now (call this inside decompositions)."""
    return getattr(prims, name)


def unsupported(op: str, dtype, arg: str = "self") -> TypeError:
    """The TypeError for an op that has no implementation for ``dtype``."""
    return TypeError(f"{op}: not implemented for {dtype.name} tensors (argument '{arg}')")


def check_dtype(op: str, dtype, allowed, arg: str = "self") -> None:
    """Raise :func:`unsupported` unless ``dtype`` is in ``allowed``."""
    if dtype not in allowed:
        raise unsupported(op, dtype, arg)


def as_tensor(value) -> Tensor:
    """``value`` itself when a Tensor, else the Python scalar wrapped as a weak 0-dim tensor."""
    return value if isinstance(value, Tensor) else wrap_scalar(value)


def apply_prim(op: str, prim_name: str, tensors, kind, allowed=ALL, extra=()):
    """Promote, check, broadcast ``tensors``; apply ``prims.<prim_name>(*tensors, *extra)``; cast to the result dtype.

    ``allowed`` is the set of computation dtypes the op supports (checked before
    anything runs, so errors name the canonical op rather than the prim).
    """
    compute, result = elementwise_dtypes(*tensors, kind=kind)
    check_dtype(op, compute, allowed)
    args = prepare(op, tensors, compute)
    return to_dtype(prim(prim_name)(*args, *extra), result)


def prepare_all(op: str, tensors, dtype):
    """Like ``prepare`` but tensors may keep their own dtype where ``dtype`` is None for them.

    ``dtype`` is a list (one per tensor, None = keep). Returns broadcast tensors on
    the common device.
    """
    device = common_device(tensors)
    shape = broadcast_shapes(op, *(t.shape for t in tensors))
    out = []
    for t, d in zip(tensors, dtype):
        t = t if d is None else to_dtype(t, d)
        out.append(broadcast_to(to_device(t, device), shape))
    return out


def scalar_like(value, like: Tensor) -> Tensor:
    """``value`` as a tensor of ``like``'s dtype, device and shape (a broadcast 0-dim tensor)."""
    full = prims.full([], value, dtype=like.dtype, device=like.device)
    return broadcast_to(full, like.shape)


def full_like(like: Tensor, value, dtype=None) -> Tensor:
    """A new dense tensor shaped like ``like`` filled with ``value``."""
    return prims.full(list(like.shape), value, dtype=dtype or like.dtype, device=like.device)


def check_scalar_fits(op: str, arg: str, value, dtype) -> None:
    """PyTorch's rule for Scalar arguments: no complex value for a non-complex dtype, no float for an integral one."""
    if isinstance(value, bool):
        return
    if isinstance(value, complex) and not dtype.is_complex:
        raise TypeError(f"{op}: argument '{arg}' is complex ({value!r}) but the computation is {dtype.name}")
    if isinstance(value, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"{op}: argument '{arg}' must not be a floating point number for {dtype.name} inputs")


def check_alpha(op: str, alpha, dtype) -> None:
    """PyTorch's ``alpha_check``: bool alpha only for bool results, no float/complex alpha for int/real."""
    if isinstance(alpha, bool) and dtype is not bool_:
        raise TypeError(f"{op}: a boolean 'alpha' is only supported for boolean results, not {dtype.name}")
    check_scalar_fits(op, "alpha", alpha, dtype)


def pointwise(schema: str, fn, *, core: bool = False, inplace: bool = True, out=True, tags=()):
    """``define_with_variants`` with the "pointwise" tag (and "core" when asked).

    ``out`` may name the ``out=`` overload (see ``define_with_variants``).
    """
    all_tags = ("pointwise",) + (("core",) if core else ()) + tuple(tags)
    return define_with_variants(schema, fn, tags=all_tags, inplace=inplace, out=out)


def redirect(schema: str, target: str, *, doc=None, inplace: bool = True, out=True, tags=("pointwise",)):
    """Define ``schema`` as a call of the overload ``target`` with the same arguments in the same order.

    Used for aliases (``absolute`` → ``abs``) and for Scalar overloads (``add.Scalar`` →
    ``add.Tensor``): Python numbers passed where ``target`` takes a Tensor are wrapped
    as weak 0-dim tensors, so they promote like PyTorch's wrapped numbers.
    """
    tensor_positions = []

    def decomposition(*args):
        op = lookup(target)
        if not tensor_positions:
            tensor_positions.extend(a.type.name == "Tensor" and not a.type.is_list for a in op.schema.arguments)
        args = [as_tensor(v) if t and v is not None else v for v, t in zip(args, tensor_positions)]
        return op.call_bound(*args)

    decomposition.__name__ = schema.split("(")[0].replace(".", "_")
    decomposition.__doc__ = doc or f"Alias for ``{target}``."
    return pointwise(schema, decomposition, inplace=inplace, out=out, tags=tuple(t for t in tags if t != "pointwise"))


def make(name: str, fn, doc: str):
    """Name and document a generated decomposition."""
    fn.__name__ = name
    fn.__doc__ = doc
    return fn
