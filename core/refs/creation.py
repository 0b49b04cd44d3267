"""Factory ops: empty/zeros/ones/full (and their ``_like``/``new_`` forms), ranges, eye, triangle indices.

Dtypes default to ``opweave.get_default_dtype()`` (``full`` infers it from the fill
value, ``arange`` from its arguments, ``_like``/``new_`` ops from ``self``), the
device to ``opweave.get_default_device()`` (``self``'s device for ``_like``/``new_``
ops); the device is always passed explicitly to the creation prims. Ranges are
computed in float64 (complex128) and rounded once to the result dtype.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._modes import fill_if_deterministic
from .._ops import prims
from .._pinned import with_pinning
from .._tensor import Tensor, contiguous_strides
from ._shapes import (
    PRESERVE,
    check_layout,
    check_sizes,
    factory_device,
    fill_value,
    scalar,
    scalar_dtype_of,
    strides_for,
)
from ._utils import define_with_variants

INT64 = _dtype.int64
FACTORY = ("factory",)
CORE_FACTORY = ("factory", "core")
DATA_FACTORY = ("factory", "data_dependent_output")


def _resolve(op: str, dtype, layout, device, pin_memory, like=None, default=None):
    """The (dtype, device) a factory uses, after checking layout and pin_memory."""
    check_layout(op, layout, pin_memory)
    if dtype is None:
        dtype = like.dtype if like is not None else (default or _dtype.get_default_dtype())
    return dtype, factory_device(device, like)


def _filled(op: str, shape, value, dtype, device, strides=None):
    """A new tensor of ``shape`` filled with ``value`` (contiguous unless ``strides`` say otherwise)."""
    value = fill_value(op, value, dtype)
    shape = list(shape)
    if strides is None or tuple(strides) == contiguous_strides(shape):
        return prims.full(shape, value, dtype=dtype, device=device)
    out = prims.empty_strided(shape, list(strides), dtype=dtype, device=device)
    prims.copy_to(out, scalar(value, out))
    return out


# -- empty ----------------------------------------------------------------------------


def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """An uninitialised tensor of shape ``size`` (contiguous, or channels_last(_3d) when asked)."""
    shape = check_sizes("empty", size)
    dtype, dev = _resolve("empty", dtype, layout, device, pin_memory)
    if memory_format == PRESERVE:
        raise ValueError("empty: preserve memory format is unsupported by the empty() operator")
    strides = strides_for("empty", shape, memory_format)
    return fill_if_deterministic(prims.empty_strided(list(shape), list(strides), dtype=dtype, device=dev))


def empty_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """An uninitialised tensor like ``self``; dense inputs keep their strides (preserve_format)."""
    dtype, dev = _resolve("empty_like", dtype, layout, device, pin_memory, like=self)
    strides = strides_for("empty_like", self.shape, memory_format, like=self)
    return fill_if_deterministic(prims.empty_strided(list(self.shape), list(strides), dtype=dtype, device=dev))


def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    """An uninitialised tensor with the given size and strides."""
    shape = check_sizes("empty_strided", size)
    if len(stride) != len(shape):
        raise ValueError(f"empty_strided: mismatch in length of strides and shape: {list(shape)} and {list(stride)}")
    dtype, dev = _resolve("empty_strided", dtype, layout, device, pin_memory)
    return fill_if_deterministic(prims.empty_strided(list(shape), list(stride), dtype=dtype, device=dev))


def empty_permuted(size, physical_layout, dtype=None, layout=None, device=None, pin_memory=None):
    """An uninitialised dense tensor whose dims are laid out in ``physical_layout`` order (outermost first)."""
    shape = check_sizes("empty_permuted", size)
    if sorted(physical_layout) != list(range(len(shape))):
        raise ValueError(
            f"empty_permuted: physical_layout {list(physical_layout)} is not a permutation of {len(shape)} dims"
        )
    dtype, dev = _resolve("empty_permuted", dtype, layout, device, pin_memory)
    return fill_if_deterministic(prims.empty_permuted(list(shape), list(physical_layout), dtype=dtype, device=dev))


def new_empty(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    """An uninitialised contiguous tensor of ``size`` with ``self``'s dtype and device unless given."""
    shape = check_sizes("new_empty", size)
    dtype, dev = _resolve("new_empty", dtype, layout, device, pin_memory, like=self)
    return fill_if_deterministic(
        prims.empty_strided(list(shape), list(contiguous_strides(shape)), dtype=dtype, device=dev)
    )


def new_empty_strided(self, size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    """An uninitialised tensor with the given size and strides, ``self``'s dtype and device unless given."""
    dtype, dev = _resolve("new_empty_strided", dtype, layout, device, pin_memory, like=self)
    return empty_strided(size, stride, dtype, None, dev, None)


# -- filled ---------------------------------------------------------------------------


def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    """A tensor of ``size`` filled with ``fill_value``; the dtype is inferred from it (bool, int64, float, complex)."""
    shape = check_sizes("full", size)
    dtype, dev = _resolve("full", dtype, layout, device, pin_memory, default=scalar_dtype_of(fill_value))
    return _filled("full", shape, fill_value, dtype, dev)


def zeros(size, dtype=None, layout=None, device=None, pin_memory=None):
    """A tensor of ``size`` filled with 0 (default dtype unless given)."""
    shape = check_sizes("zeros", size)
    dtype, dev = _resolve("zeros", dtype, layout, device, pin_memory)
    return _filled("zeros", shape, 0, dtype, dev)


def ones(size, dtype=None, layout=None, device=None, pin_memory=None):
    """A tensor of ``size`` filled with 1 (default dtype unless given)."""
    shape = check_sizes("ones", size)
    dtype, dev = _resolve("ones", dtype, layout, device, pin_memory)
    return _filled("ones", shape, 1, dtype, dev)


def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """A tensor like ``self`` (shape, dtype, device, layout) filled with ``fill_value``."""
    dtype, dev = _resolve("full_like", dtype, layout, device, pin_memory, like=self)
    strides = strides_for("full_like", self.shape, memory_format, like=self)
    return _filled("full_like", self.shape, fill_value, dtype, dev, strides)


def zeros_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """A tensor like ``self`` filled with 0."""
    return full_like(self, 0, dtype, layout, device, pin_memory, memory_format)


def ones_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """A tensor like ``self`` filled with 1."""
    return full_like(self, 1, dtype, layout, device, pin_memory, memory_format)


def new_full(self, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    """A contiguous tensor of ``size`` filled with ``fill_value``, ``self``'s dtype and device unless given."""
    shape = check_sizes("new_full", size)
    dtype, dev = _resolve("new_full", dtype, layout, device, pin_memory, like=self)
    return _filled("new_full", shape, fill_value, dtype, dev)


def new_zeros(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    """``new_full`` with 0."""
    return new_full(self, size, 0, dtype, layout, device, pin_memory)


def new_ones(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    """``new_full`` with 1."""
    return new_full(self, size, 1, dtype, layout, device, pin_memory)


def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    """A 0-dim tensor holding ``s`` (default dtype unless given, whatever the type of ``s``)."""
    dtype, dev = _resolve("scalar_tensor", dtype, layout, device, pin_memory)
    return prims.scalar_tensor(fill_value("scalar_tensor", s, dtype), dtype=dtype, device=dev)


# -- ranges ---------------------------------------------------------------------------


def _no_complex(op: str, *values):
    for v in values:
        if isinstance(v, complex):
            raise TypeError(f"{op}: complex values are not supported, got {v!r}")


def _range_dtype(op: str, dtype, values):
    if dtype is None:
        is_int = all(isinstance(v, int) for v in values)
        dtype = INT64 if is_int else _dtype.get_default_dtype()
    if dtype is _dtype.bool_ or dtype.is_complex or dtype.is_float8:
        raise TypeError(f'{op}: "{op}_cpu" not implemented for {dtype.name}')
    return dtype


def _arange_length(op: str, start, end, step, dtype) -> tuple:
    """``(length, start, step)`` of an arange, with torch's checks and integer truncation."""
    integral = dtype.kind in ("int", "uint")
    xstart, xend, xstep = (int(start), int(end), int(step)) if integral else (float(start), float(end), float(step))
    if xstep == 0:
        raise ValueError(f"{op}: step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):
        raise ValueError(f"{op}: unsupported range: {start} -> {end}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise ValueError(f"{op}: upper bound and larger bound inconsistent with step sign")
    if dtype is INT64:
        sign = 1 if xstep > 0 else -1
        length = (xend - xstart + xstep - sign) // xstep
    else:
        length = math.ceil((float(end) - float(start)) / float(step))
    if not 0 <= length <= 2**63 - 1:
        raise ValueError(f"{op}: invalid size, possible overflow?")
    return int(length), xstart, xstep


def _arange(start, end, step, dtype, layout, device, pin_memory):
    op = "arange"
    _no_complex(op, start, end, step)
    check_layout(op, layout, pin_memory)
    dtype = _range_dtype(op, dtype, (start, end, step))
    dev = factory_device(device)
    length, xstart, xstep = _arange_length(op, start, end, step, dtype)
    if dtype.kind in ("int", "uint"):
        out = prims.iota(length, start=xstart, step=xstep, dtype=INT64, device=dev)
        return out if dtype is INT64 else prims.convert_element_type(out, dtype)
    index = prims.convert_element_type(prims.iota(length, start=0, step=1, dtype=INT64, device=dev), _dtype.float64)
    values = prims.add(prims.mul(index, scalar(xstep, index)), scalar(xstart, index))
    return prims.convert_element_type(values, dtype) if dtype is not _dtype.float64 else values


def arange(end, dtype=None, layout=None, device=None, pin_memory=None):
    """``0, 1, ..., end - 1``: int64 for integer arguments, else the default dtype."""
    return _arange(0, end, 1, dtype, layout, device, pin_memory)


def arange_start(start, end, dtype=None, layout=None, device=None, pin_memory=None):
    """``start, start + 1, ...`` below ``end``."""
    return _arange(start, end, 1, dtype, layout, device, pin_memory)


def arange_start_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    """``start + i * step`` for ``i < ceil((end - start) / step)``; a zero or wrong-signed step → ValueError."""
    return _arange(start, end, step, dtype, layout, device, pin_memory)


def _linear_points(op: str, start, end, steps, dtype, dev):
    """torch's linspace points in float64/complex128: from ``start`` for the first half, from ``end`` for the rest."""
    if steps < 0:
        raise ValueError(f"{op}: number of steps must be non-negative")
    compute = _dtype.complex128 if dtype.is_complex else _dtype.float64
    if dtype.kind in ("int", "uint"):
        start, end = int(start.real if isinstance(start, complex) else start), int(end)
    index = prims.iota(steps, start=0, step=1, dtype=INT64, device=dev)
    if steps <= 1:
        return prims.full([steps], start, dtype=compute, device=dev)
    step = (end - start) / (steps - 1)
    fwd = prims.convert_element_type(index, compute)
    back = prims.convert_element_type(prims.iota(steps, start=steps - 1, step=-1, dtype=INT64, device=dev), compute)
    first = prims.add(scalar(start, fwd), prims.mul(fwd, scalar(step, fwd)))
    second = prims.sub(scalar(end, back), prims.mul(back, scalar(step, back)))
    return prims.where(prims.lt(index, scalar(steps // 2, index)), first, second)


def _space_dtype(op: str, dtype, start, end):
    if dtype is None:
        complex_args = isinstance(start, complex) or isinstance(end, complex)
        dtype = _dtype.default_complex_dtype() if complex_args else _dtype.get_default_dtype()
    if dtype is _dtype.bool_ or dtype.is_float8:
        raise TypeError(f'{op}: "{op}_cpu" not implemented for {dtype.name}')
    if (isinstance(start, complex) or isinstance(end, complex)) and not dtype.is_complex:
        raise TypeError(f"{op}: complex start/end need a complex dtype, got {dtype.name}")
    return dtype


def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (default dtype unless given)."""
    dtype = _space_dtype("linspace", dtype, start, end)
    check_layout("linspace", layout, pin_memory)
    points = _linear_points("linspace", start, end, steps, dtype, factory_device(device))
    return points if points.dtype is dtype else prims.convert_element_type(points, dtype)


def _zero_dim_bounds(op: str, start, end):
    """``start``/``end`` of the Tensor overloads as Python numbers; PyTorch takes only 0-dim tensors."""
    dims = [v.dim() if isinstance(v, Tensor) else 0 for v in (start, end)]
    if dims != [0, 0]:
        raise RuntimeError(
            f"{op}: only supports 0-dimensional start and end tensors, but got start with {dims[0]} dimension(s) "
            f"and end with {dims[1]} dimension(s)."
        )
    return tuple(v.item() if isinstance(v, Tensor) else v for v in (start, end))


# PyTorch's overloads of linspace/logspace taking (0-dim) tensor bounds (read with .item(): not on meta)
_TENSOR_BOUNDS = (
    ("Tensor_Tensor", "Tensor", "Tensor"),
    ("Tensor_Scalar", "Tensor", "Scalar"),
    ("Scalar_Tensor", "Scalar", "Tensor"),
)


def linspace_tensor(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    """``linspace`` with 0-dim tensor ``start`` and/or ``end`` (``linspace.Tensor_Tensor`` and the mixed forms)."""
    start, end = _zero_dim_bounds("linspace", start, end)
    return linspace(start, end, steps, dtype, layout, device, pin_memory)


def logspace_tensor(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    """``logspace`` with 0-dim tensor ``start`` and/or ``end`` (``logspace.Tensor_Tensor`` and the mixed forms)."""
    start, end = _zero_dim_bounds("logspace", start, end)
    return logspace(start, end, steps, base, dtype, layout, device, pin_memory)


def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    """``base ** linspace(start, end, steps)`` (computed in float64/complex128, rounded once)."""
    dtype = _space_dtype("logspace", dtype, start, end)
    check_layout("logspace", layout, pin_memory)
    exponents = _linear_points("logspace", start, end, steps, dtype, factory_device(device))
    values = prims.pow(scalar(base, exponents), exponents)
    return values if values.dtype is dtype else prims.convert_element_type(values, dtype)


# -- eye and triangle indices -----------------------------------------------------------


def eye_m(n, m, dtype=None, layout=None, device=None, pin_memory=None):
    """An ``n × m`` matrix with ones on the main diagonal."""
    if n < 0:
        raise ValueError(f"eye: n must be greater or equal to 0, got {n}")
    if m < 0:
        raise ValueError(f"eye: m must be greater or equal to 0, got {m}")
    dtype, dev = _resolve("eye", dtype, layout, device, pin_memory)
    return prims.eye(n, m, dtype=dtype, device=dev)


def eye(n, dtype=None, layout=None, device=None, pin_memory=None):
    """The ``n × n`` identity matrix."""
    return eye_m(n, n, dtype, layout, device, pin_memory)


def _triangle_indices(op: str, prim_name: str):
    def indices(row, col, offset=0, dtype=INT64, layout=None, device=None, pin_memory=None):
        if dtype == "long" or dtype is None:  # the schema's default names the dtype
            dtype = INT64
        if row < 0:
            raise ValueError(f"{op}: row must be non-negative, got {row}")
        if col < 0:
            raise ValueError(f"{op}: col must be non-negative, got {col}")
        if dtype not in (_dtype.int32, INT64):
            raise TypeError(f'{op}: "{op}" not implemented for {dtype.name}')
        check_layout(op, layout, pin_memory)
        return getattr(prims, prim_name)(row, col, offset, dtype=dtype, device=factory_device(device))

    indices.__doc__ = (
        f"The (row, col) coordinates of the {'lower' if op == 'tril_indices' else 'upper'} triangle of a "
        "``row × col`` matrix (diagonal ``offset``) as a 2 × N tensor, in row-major order."
    )
    return indices


tril_indices = _triangle_indices("tril_indices", "tril_indices")
triu_indices = _triangle_indices("triu_indices", "triu_indices")

_F = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"

FACTORIES = [
    (
        f"empty.memory_format(SymInt[] size, *, {_F}, MemoryFormat? memory_format=None) -> Tensor",
        empty,
        CORE_FACTORY,
    ),
    (f"empty_like(Tensor self, *, {_F}, MemoryFormat? memory_format=None) -> Tensor", empty_like, FACTORY),
    (f"empty_strided(SymInt[] size, SymInt[] stride, *, {_F}) -> Tensor", empty_strided, CORE_FACTORY),
    (f"empty_permuted(SymInt[] size, int[] physical_layout, *, {_F}) -> Tensor", empty_permuted, CORE_FACTORY),
    (f"new_empty(Tensor self, SymInt[] size, *, {_F}) -> Tensor", new_empty, FACTORY),
    (f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, {_F}) -> Tensor", new_empty_strided, FACTORY),
    (f"new_zeros(Tensor self, SymInt[] size, *, {_F}) -> Tensor", new_zeros, FACTORY),
    (f"new_ones(Tensor self, SymInt[] size, *, {_F}) -> Tensor", new_ones, FACTORY),
    (f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_F}) -> Tensor", new_full, FACTORY),
    (f"zeros(SymInt[] size, *, {_F}) -> Tensor", zeros, FACTORY),
    (f"ones(SymInt[] size, *, {_F}) -> Tensor", ones, FACTORY),
    (f"full(SymInt[] size, Scalar fill_value, *, {_F}) -> Tensor", full, CORE_FACTORY),
    (f"zeros_like(Tensor self, *, {_F}, MemoryFormat? memory_format=None) -> Tensor", zeros_like, FACTORY),
    (f"ones_like(Tensor self, *, {_F}, MemoryFormat? memory_format=None) -> Tensor", ones_like, FACTORY),
    (
        f"full_like(Tensor self, Scalar fill_value, *, {_F}, MemoryFormat? memory_format=None) -> Tensor",
        full_like,
        CORE_FACTORY,
    ),
    (f"scalar_tensor(Scalar s, *, {_F}) -> Tensor", scalar_tensor, CORE_FACTORY),
    (f"arange(Scalar end, *, {_F}) -> Tensor", arange, FACTORY),
    (f"arange.start(Scalar start, Scalar end, *, {_F}) -> Tensor", arange_start, FACTORY),
    (f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_F}) -> Tensor", arange_start_step, CORE_FACTORY),
    (f"linspace(Scalar start, Scalar end, int steps, *, {_F}) -> Tensor", linspace, FACTORY),
    (f"logspace(Scalar start, Scalar end, int steps, float base=10.0, *, {_F}) -> Tensor", logspace, FACTORY),
    *[
        (f"linspace.{name}({a} start, {b} end, int steps, *, {_F}) -> Tensor", linspace_tensor, DATA_FACTORY)
        for name, a, b in _TENSOR_BOUNDS
    ],
    *[
        (
            f"logspace.{name}({a} start, {b} end, int steps, float base=10.0, *, {_F}) -> Tensor",
            logspace_tensor,
            DATA_FACTORY,
        )
        for name, a, b in _TENSOR_BOUNDS
    ],
    (f"eye(SymInt n, *, {_F}) -> Tensor", eye, FACTORY),
    (f"eye.m(SymInt n, SymInt m, *, {_F}) -> Tensor", eye_m, FACTORY),
    (
        "tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor",
        tril_indices,
        FACTORY,
    ),
    (
        "triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor",
        triu_indices,
        FACTORY,
    ),
]


def _define():
    for schema, fn, tags in FACTORIES:
        define_with_variants(schema, with_pinning(fn), tags=tags, inplace=False, out=True)


_define()
