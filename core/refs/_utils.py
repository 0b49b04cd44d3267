"""What canonical-op decompositions share: promotion, broadcasting, variants.

Type promotion follows PyTorch's ``elementwise_dtypes``: the result dtype comes
from ``result_type`` and the promotion kind; float16/bfloat16 compute in
float32 ("opmath") and round once at the end. In-place and ``out=`` variants of
a functional op are derived by :func:`define_with_variants`, one mechanism for
every op.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Sequence

from .. import _dtype
from .._ops import OpOverload, define, prims
from .._tensor import Tensor, wrap_scalar
from ..errors import DimIndexError
from ._overlap import check_out_overlap, check_resized_out_overlap


class Promotion(enum.Enum):
    """PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND."""

    DEFAULT = "default"  # result_type; compute in opmath
    NO_OPMATH = "no_opmath"  # result_type; compute in it too
    INT_TO_FLOAT = "int_to_float"  # bool/int results become the default float dtype
    ALWAYS_BOOL = "always_bool"  # compute in result_type, return bool
    COMPLEX_TO_FLOAT = "complex_to_float"  # complex results become their real dtype
    BOOL_TO_LONG = "bool_to_long"  # bool results become int64


def elementwise_dtypes(*args, kind: Promotion):
    """``(computation dtype, result dtype)`` for an elementwise op on ``args``."""
    present = [a for a in args if a is not None]
    result = _dtype.result_type(*present)
    if kind is Promotion.INT_TO_FLOAT and not (result.is_floating_point or result.is_complex):
        result = _dtype.get_default_dtype()
    compute = result if kind is Promotion.NO_OPMATH else _dtype.opmath_dtype(result)
    if kind is Promotion.ALWAYS_BOOL:
        return compute, _dtype.bool_
    if kind is Promotion.COMPLEX_TO_FLOAT and result.is_complex:
        return compute, result.to_real()
    if kind is Promotion.BOOL_TO_LONG and result is _dtype.bool_:
        return _dtype.int64, _dtype.int64
    return compute, result


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy/PyTorch broadcasting of shapes; ValueError naming the op on mismatch."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape, ndim - len(shape)):
            if size != out[i]:
                if out[i] == 1:
                    out[i] = size
                elif size != 1:
                    raise ValueError(
                        f"{op}: shapes {[list(s) for s in shapes]} cannot be broadcast together "
                        f"(size {size} against {out[i]} at dim {i})"
                    )
    return tuple(out)


def broadcast_to(t: Tensor, shape) -> Tensor:
    """``t`` viewed with ``shape`` (0-strides for broadcast dims); ``t`` itself when already that shape."""
    if t.shape == tuple(shape):
        return t
    offset = len(shape) - t.ndim
    return prims.broadcast_in_dim(t, list(shape), list(range(offset, len(shape))))


def to_dtype(t: Tensor, dtype) -> Tensor:
    """``t`` converted to ``dtype`` (itself when it already has it); a wrapped Python scalar without a backend."""
    if t.dtype is dtype:
        return t
    if t._wrapped_number and t._native is not None:
        return wrap_scalar(t._native.item(), dtype)
    return prims.convert_element_type(t, dtype)


def to_device(t: Tensor, device) -> Tensor:
    """Move a CPU scalar (0-dim) to ``device`` so that a device's prims see one device.

    Anything else stays where it is: tensors on two devices of one type (``vnpu:0``
    and ``vnpu:1``) reach the prim, whose meta function rejects them, as PyTorch does.
    """
    if t.device == device or device.type == "cpu" or t.ndim or t.device.type != "cpu":
        return t
    return prims.device_put(t, device)


def common_device(tensors):
    """The device of the operands, ignoring CPU 0-dim tensors (the dispatcher checked the rest)."""
    for t in tensors:
        if t is not None and (t.ndim or t.device.type != "cpu"):
            return t.device
    return next(t.device for t in tensors if t is not None)


def prepare(op: str, tensors, dtype):
    """Broadcast, convert to ``dtype`` and move to the common device: the inputs of an elementwise prim."""
    device = common_device(tensors)
    shape = broadcast_shapes(op, *(t.shape for t in tensors))
    return [broadcast_to(to_device(to_dtype(t, dtype), device), shape) for t in tensors]


def elementwise(prim, kind: Promotion, name: str):
    """A decomposition applying the elementwise ``prim`` with promotion and broadcasting."""

    def decomposition(*tensors):
        compute, result = elementwise_dtypes(*tensors, kind=kind)
        out = prim(*prepare(name, tensors, compute))
        return to_dtype(out, result)

    decomposition.__name__ = name
    return decomposition


def check_alpha(op: str, alpha, dtype) -> None:
    """PyTorch's rules for ``alpha``: no float alpha on integer tensors, no non-bool alpha on bool."""
    if isinstance(alpha, bool) and dtype is not _dtype.bool_ and alpha is not True:
        return
    if dtype is _dtype.bool_ and not isinstance(alpha, bool):
        raise TypeError(f"{op}: boolean inputs need a boolean 'alpha', got {alpha!r}")
    if not (dtype.is_floating_point or dtype.is_complex) and isinstance(alpha, float):
        raise TypeError(f"{op}: for integral inputs, argument 'alpha' must not be a floating point number")
    if not dtype.is_complex and isinstance(alpha, complex):
        raise TypeError(f"{op}: for non-complex inputs, argument 'alpha' must not be complex")


def wrap_dim(op: str, dim: int, ndim: int) -> int:
    """Normalise a dim; DimIndexError (IndexError, ValueError) naming the op if out of range (0-dim: 0 and -1)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise DimIndexError(f"{op}: dim {dim} is out of range for a tensor with {ndim} dims")
    return dim % bound


def reduction_dims(op: str, dim, ndim: int) -> tuple:
    """The dims a reduction reduces: all when ``dim`` is None or empty, else normalised and unique."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = tuple(wrap_dim(op, d, ndim) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dim {list(dims)} appears more than once")
    return out if ndim else ()


def keep_dims(t: Tensor, dims, ndim: int) -> Tensor:
    """Re-insert reduced ``dims`` as size-1 dims (``keepdim=True``)."""
    if not dims:
        return t
    return prims.expand_dims(t, sorted(dims), ndim)


# -- generated variants ---------------------------------------------------


def _variant_schema(functional: OpOverload, variant: str, out_overload: str | None = None) -> str:
    s = functional.schema
    args = list(s.arguments)
    if variant == "inplace":
        first = args[0]
        text = [f"Tensor(a!) {first.name}"] + [_arg_text(a) for a in args[1:]]
        star = _star_position(args)
        if star is not None:
            text.insert(star, "*")
        overload = f".{s.overload}" if s.overload else ""
        return f"{s.name}_{overload}({', '.join(text)}) -> Tensor(a!)"
    names = [r.name for r in s.returns]
    out_names = (
        names
        if len(names) > 1 and all(names)
        else (["out"] if len(names) == 1 else [f"out{i}" for i in range(len(names))])
    )
    text = [_arg_text(a) for a in args]
    star = _star_position(args)
    if star is not None:
        text.insert(star, "*")
    letters = "abcdefgh"
    outs = [f"Tensor({letters[i]}!) {n}" for i, n in enumerate(out_names)]
    if star is None:
        text.append("*")
    text.extend(outs)
    overload = out_overload or ("out" if s.overload in ("", "Tensor") else f"{s.overload}_out")
    if len(outs) == 1:
        returns = "Tensor(a!)"
    else:
        returns = "(" + ", ".join(f"Tensor({letters[i]}!) {n}" for i, n in enumerate(out_names)) + ")"
    return f"{s.name}.{overload}({', '.join(text)}) -> {returns}"


def _arg_text(arg) -> str:
    text = f"{arg.type} {arg.name}"
    if arg.has_default:
        text += "=" + _default_text(arg.default)
    return text


def _default_text(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return value if value.isidentifier() and value not in ("mean", "sum", "none") else f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ",".join(_default_text(v) for v in value) + "]"
    return repr(value)


def _star_position(args):
    for i, a in enumerate(args):
        if a.kwarg_only:
            return i
    return None


def _inplace_kernel(functional: OpOverload):
    def kernel(self, *rest):
        result = functional.call_bound(self, *rest)
        name = f"{functional.schema.name}_"
        if result.shape != self.shape:
            raise ValueError(
                f"{name}: output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        if not _dtype.can_cast(result.dtype, self.dtype):
            raise TypeError(
                f"{name}: result type {result.dtype.name} can't be cast to the desired output type {self.dtype.name}"
            )
        prims.copy_to(self, to_device(result, self.device))
        return self

    return kernel


def _out_kernel(functional: OpOverload, n_outs: int):
    n_args = len(functional.schema.arguments)
    name = functional.schema.qualified_name
    any_overlap = "out_no_overlap" in functional.tags
    exact_dtype = "out_exact_dtype" in functional.tags

    arguments = functional.schema.arguments
    names = [a.name for a in arguments]
    # a factory writing to out= makes its result in out='s dtype and on its device (PyTorch)
    dtype_at = names.index("dtype") if "factory" in functional.tags and "dtype" in names else None
    if dtype_at is not None and arguments[dtype_at].default is not None:  # tril_indices: dtype=long
        dtype_at = None
    device_at = names.index("device") if dtype_at is not None and "device" in names else None

    def kernel(*args):
        outs = args[n_args:]
        for out in outs:
            if isinstance(out, Tensor):
                check_out_overlap(name, out, args[:n_args], any_overlap=any_overlap)
        if dtype_at is not None and isinstance(outs[0], Tensor):
            args = _factory_args_from_out(name, args, outs[0], dtype_at, device_at)
        results = functional.call_bound(*args[:n_args])
        results = results if isinstance(results, tuple) else (results,)
        for out, result in zip(outs, results):  # every out= tensor is checked before any is written
            if exact_dtype and isinstance(out, Tensor) and out.dtype is not result.dtype:
                raise RuntimeError(
                    f"{name}: Expected out tensor to have dtype {result.dtype.name}, but got {out.dtype.name} instead"
                )
            check_out(name, out, result)
            if any_overlap:  # as PyTorch's structured kernels: checked again once out= is resized
                check_resized_out_overlap(name, out, result.shape, args[:n_args])
        for out, result in zip(outs, results):
            write_out(name, out, result)
        return outs[0] if n_outs == 1 else tuple(outs)

    return kernel


def _factory_args_from_out(op: str, args: tuple, out: Tensor, dtype_at: int, device_at: int | None) -> tuple:
    """A factory's bound arguments with ``dtype``/``device`` taken from its ``out=`` tensor where not given."""
    args = list(args)
    dtype = args[dtype_at]
    if dtype is None:
        args[dtype_at] = out.dtype
    elif dtype is not out.dtype:
        raise RuntimeError(f"{op}: argument 'dtype': {dtype.name} does not match the dtype of out= ({out.dtype.name})")
    if device_at is not None and args[device_at] is None:
        args[device_at] = out.device
    return tuple(args)


def check_out(op: str, out: Tensor, result: Tensor) -> None:
    """Raise PyTorch's error if ``result`` cannot be written to the ``out=`` tensor (type, device, dtype)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}: argument 'out' must be Tensor, not {type(out).__name__}")
    if out.device != result.device:
        raise RuntimeError(f"{op}: out= tensor is on {out.device} but the result is on {result.device}")
    if not _dtype.can_cast(result.dtype, out.dtype):
        raise TypeError(
            f"{op}: result type {result.dtype.name} can't be cast to the desired output type {out.dtype.name}"
        )


def write_out(op: str, out: Tensor, result: Tensor) -> None:
    """Copy ``result`` into the ``out=`` tensor with PyTorch's checks and resize rule."""
    check_out(op, out, result)
    if out.shape != result.shape:
        if out.numel() != 0:
            warnings.warn(
                f"{op}: an output with one or more elements was resized since it had shape {list(out.shape)}, "
                f"which does not match the required output shape {list(result.shape)}",
                UserWarning,
                stacklevel=4,
            )
        prims.resize(out, list(result.shape))
    prims.copy_to(out, result)


def define_with_variants(schema: str, decomposition, *, tags=(), inplace=True, out=True, doc=None) -> OpOverload:
    """Define a functional canonical op and derive its in-place and ``out=`` variants.

    ``out`` may be a string: the overload name of the ``out=`` variant, where the default
    rule (``.out`` for the "" and "Tensor" overloads) would clash (``clamp.Tensor_out``), or
    the whole ``out=`` schema, where ATen names the out arguments itself
    (``max_pool2d_with_indices.out(..., *, Tensor(a!) out, Tensor(b!) indices)``).
    """
    functional = define(schema, decomposition, tags=tags, doc=doc)
    variant_tags = tuple(t for t in tags if t not in ("core",)) + ("generated",)
    if inplace:
        op = define(
            _variant_schema(functional, "inplace"), _inplace_kernel(functional), tags=variant_tags + ("inplace",)
        )
        op.functional, op.variant = functional, "inplace"
    if out:
        n_outs = len(functional.schema.returns)
        out_overload = out if isinstance(out, str) else None
        op = define(
            out if out_overload and "(" in out else _variant_schema(functional, "out", out_overload),
            _out_kernel(functional, n_outs),
            tags=variant_tags + ("out",),
        )
        op.functional, op.variant = functional, "out"
    return functional
