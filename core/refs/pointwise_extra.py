"""Pointwise canonical ops of the ``torch`` namespace not covered elsewhere: complex, polar, frexp, isin, and
the boolean tensor predicates (is_nonzero, is_same_size, is_floating_point, is_complex, is_signed, is_conj,
is_neg).

``complex``/``polar`` take float32 or float64 parts (PyTorch's float16 -> complex32 has no counterpart here:
complex32 does not exist, so float16 parts raise ``TypeError``). ``frexp`` works on the bit pattern of the
input (exact on every backend, subnormals included). ``isin`` sorts the test elements and binary-searches
them (or compares against each one when there are few); NaN is in no set, as in PyTorch and NumPy.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import define, prims
from ._tensor_utils import cast, fill_like, flatten, full, reshape
from ._utils import define_with_variants, prepare

# -- complex, polar --------------------------------------------------------


def _float_pair(op, first, second, names):
    for name, t in zip(names, (first, second)):
        if t.dtype not in (_dtype.float32, _dtype.float64):
            raise TypeError(
                f"{op}: expected both inputs to be float or double tensors but got {first.dtype.name} and "
                f"{second.dtype.name} (argument '{name}')"
            )
    if first.dtype is not second.dtype:
        raise TypeError(
            f"{op}: expected argument '{names[1]}' to have dtype {first.dtype.name} (as '{names[0]}'), "
            f"got {second.dtype.name}"
        )
    return prepare(op, [first, second], first.dtype)


def complex_(real, imag):
    """The complex tensor ``real + i * imag`` (float32 -> complex64, float64 -> complex128; broadcasts)."""
    return prims.complex(*_float_pair("complex", real, imag, ("real", "imag")))


def polar(abs, angle):  # noqa: A002 - PyTorch's argument name
    """The complex tensor ``abs * (cos(angle) + i * sin(angle))`` (float32/float64 inputs; broadcasts)."""
    return prims.polar(*_float_pair("polar", abs, angle, ("abs", "angle")))


# -- frexp -----------------------------------------------------------------

# float dtype -> (integer dtype of the same width, mantissa bits, exponent bits)
_LAYOUT = {
    "float16": (_dtype.int16, 10, 5),
    "bfloat16": (_dtype.int16, 7, 8),
    "float32": (_dtype.int32, 23, 8),
    "float64": (_dtype.int64, 52, 11),
}


def frexp(self):
    """``(mantissa, exponent)`` with ``self = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``.

    Zeros (keeping their sign), infinities and NaN give themselves and exponent 0. The exponent is int32.
    """
    op = "frexp"
    if self.dtype.name not in _LAYOUT:
        raise TypeError(f"{op}: only supports floating-point dtypes, got {self.dtype.name} for 'self'")
    bits_dtype, m_bits, e_bits = _LAYOUT[self.dtype.name]
    bias = (1 << (e_bits - 1)) - 1
    special = prims.logical_or(prims.logical_not(prims.isfinite(self)), prims.eq(self, fill_like(0, self)))
    tiny = float(_dtype.finfo(self.dtype).tiny)
    sub = prims.lt(prims.abs(self), fill_like(tiny, self))  # subnormals, and zeros (fixed up as special below)
    scale = m_bits + 1  # multiplying by 2**scale makes every subnormal normal, exactly
    has_sub = self.device.type == "meta" or (self.numel() > 0 and bool(prims.item(prims.any(sub, None))))
    x = prims.where(sub, prims.mul(self, fill_like(float(2**scale), self)), self) if has_sub else self
    bits = prims.view_of_dtype(x, bits_dtype)

    def const(v):
        return fill_like(v, bits)

    field = prims.bitwise_and(prims.shift_right_arithmetic(bits, const(m_bits)), const((1 << e_bits) - 1))
    exponent = prims.sub(cast(field, _dtype.int32), fill_like(bias - 1, field, _dtype.int32))
    if has_sub:
        exponent = prims.where(sub, prims.sub(exponent, fill_like(scale, exponent)), exponent)
    keep = ~(((1 << e_bits) - 1) << m_bits)
    if bits_dtype is _dtype.int16:
        keep = keep & 0xFFFF
        keep = keep - 0x10000 if keep >= 0x8000 else keep
    mbits = prims.bitwise_or(prims.bitwise_and(bits, const(keep)), const((bias - 1) << m_bits))
    mantissa = prims.view_of_dtype(mbits, self.dtype)
    mantissa = prims.where(special, self, mantissa)
    exponent = prims.where(special, fill_like(0, exponent), exponent)
    return mantissa, exponent


# -- isin ------------------------------------------------------------------

_FEW = 16  # up to this many test elements, compare against each one


def _check_isin_dtype(op, name, dtype):
    if dtype is _dtype.bool_ or dtype.is_complex:
        raise TypeError(f"{op}: unsupported input type for argument '{name}': {dtype.name}")


def _isin(op, elements, test, invert):
    _check_isin_dtype(op, "elements", elements.dtype)
    _check_isin_dtype(op, "test_elements", test.dtype)
    dtype = _dtype.result_type(elements, test)
    device = elements.device if elements.device.type != "cpu" or elements.ndim else test.device
    e = cast(elements, dtype)
    t = flatten(cast(test, dtype))
    if t.device != device:
        t = prims.device_put(t, device)
    if e.device != device:
        e = prims.device_put(e, device)
    if t.numel() == 0:
        return full(elements.shape, bool(invert), _dtype.bool_, device)
    values = flatten(e)
    if t.numel() <= _FEW:
        n = values.shape[0]
        grid = [n, t.numel()]
        hits = prims.eq(prims.broadcast_in_dim(values, grid, [0]), prims.broadcast_in_dim(t, grid, [1]))
        found = prims.any(hits, [1])
    else:
        ordered = prims.sort(t, 0, False, False)[0]
        at = prims.searchsorted(ordered, values, False)
        last = t.numel() - 1
        at = prims.where(prims.gt(at, fill_like(last, at)), fill_like(last, at), at)
        found = prims.eq(prims.take(ordered, at), values)
    found = reshape(found, elements.shape)
    return prims.logical_not(found) if invert else found


def isin_tensor_tensor(elements, test_elements, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (bool, the shape of ``elements``).

    Both are promoted to a common dtype; ``assume_unique`` is accepted for compatibility and changes nothing;
    ``invert`` gives the negation. Bool and complex inputs are not supported.
    """
    return _isin("isin", elements, test_elements, invert)


def isin_tensor_scalar(elements, test_element, assume_unique=False, invert=False):
    """Whether each element equals ``test_element`` (``ne`` when ``invert``), with ``eq``'s promotion."""
    _check_isin_dtype("isin", "elements", elements.dtype)
    return ops.ne(elements, test_element) if invert else ops.eq(elements, test_element)


def isin_scalar_tensor(element, test_elements, assume_unique=False, invert=False):
    """Whether the number ``element`` is in ``test_elements`` (a 0-dim bool tensor)."""
    op = "isin"
    _check_isin_dtype(op, "test_elements", test_elements.dtype)
    value = element.item() if hasattr(element, "item") and not isinstance(element, (int, float)) else element
    dtype = _dtype.result_type(value, test_elements)
    wrapped = full((), value, dtype, test_elements.device)
    return _isin(op, wrapped, test_elements, invert)


# -- predicates ------------------------------------------------------------


def is_nonzero(self):
    """Whether the single element of ``self`` is not zero (ValueError unless ``self`` has exactly one)."""
    n = self.numel()
    if n != 1:
        which = "no values" if n == 0 else "more than one value"
        raise ValueError(f"is_nonzero: Boolean value of Tensor with {which} is ambiguous")
    return bool(prims.item(self) != 0)


def is_same_size(self, other):
    """Whether ``self`` and ``other`` have the same shape."""
    return tuple(self.shape) == tuple(other.shape)


def is_floating_point(self):
    """Whether the dtype of ``self`` is a floating point type."""
    return bool(self.dtype.is_floating_point)


def is_complex(self):
    """Whether the dtype of ``self`` is a complex type."""
    return bool(self.dtype.is_complex)


def is_signed(self):
    """Whether the dtype of ``self`` is signed (signed integers, floating and complex types)."""
    return bool(self.dtype.is_signed)


def is_conj(self):
    """Whether ``self`` has a lazy conjugate bit: always False (opweave conjugates eagerly)."""
    return False


def is_neg(self):
    """Whether ``self`` has a lazy negative bit: always False (opweave negates eagerly)."""
    return False


# -- definitions -----------------------------------------------------------


def _define():
    define_with_variants(
        "complex(Tensor real, Tensor imag) -> Tensor", complex_, tags=("pointwise", "out_exact_dtype"), inplace=False
    )
    define_with_variants("polar(Tensor abs, Tensor angle) -> Tensor", polar, tags=("pointwise",), inplace=False)
    define_with_variants(
        "frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)",
        frexp,
        tags=("pointwise",),
        inplace=False,
        out="Tensor_out",
    )
    for schema, fn in (
        (
            "isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False)",
            isin_tensor_tensor,
        ),
        (
            "isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False)",
            isin_tensor_scalar,
        ),
        (
            "isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False)",
            isin_scalar_tensor,
        ),
    ):
        define_with_variants(schema + " -> Tensor", fn, inplace=False)
    define("is_nonzero(Tensor self) -> bool", is_nonzero, tags=("data_dependent_output",))
    for schema, fn in (
        ("is_same_size(Tensor self, Tensor other) -> bool", is_same_size),
        ("is_floating_point(Tensor self) -> bool", is_floating_point),
        ("is_complex(Tensor self) -> bool", is_complex),
        ("is_signed(Tensor self) -> bool", is_signed),
        ("is_conj(Tensor self) -> bool", is_conj),
        ("is_neg(Tensor self) -> bool", is_neg),
    ):
        define(schema, fn)


_define()
