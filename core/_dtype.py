"""Element types of opweave and PyTorch's type-promotion rules.

Every dtype is an immutable singleton (compare with ``is`` or ``==``).  The rules for
``promote_types``, ``result_type`` and ``can_cast`` follow PyTorch exactly (c10's
``promoteTypes`` and ATen's ``ResultTypeState``), with one gap: opweave has no
``complex32``, so wherever PyTorch would produce ``complex32`` (half-precision values
meeting a complex number) opweave produces ``complex64``.

The quantized dtypes ``qint8``, ``quint8`` and ``qint32`` (``is_quantized``) are stored as
int8, uint8 and int32 (``numpy``); they are not in ``ALL_DTYPES`` (see ``QUANTIZED_DTYPES``),
and promotion involving them raises TypeError, as in PyTorch.

The module also binds the names ``bool``, ``float`` and ``int`` (as ``torch.bool`` etc.),
so the code below always reaches Python's own types through ``builtins``.
"""

from __future__ import annotations

import builtins
import math

import ml_dtypes
import numpy as np

__all__ = [
    "dtype",
    "bool_",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e5m2",
    "qint8",
    "quint8",
    "qint32",
    "QUANTIZED_DTYPES",
    "half",
    "double",
    "long",
    "short",
    "cfloat",
    "cdouble",
    "ALL_DTYPES",
    "from_numpy",
    "get_default_dtype",
    "set_default_dtype",
    "default_complex_dtype",
    "promote_types",
    "result_type",
    "can_cast",
    "opmath_dtype",
    "finfo",
    "iinfo",
]
# ``bool``, ``float`` and ``int`` are deliberately left out of ``__all__`` so that
# ``from opweave._dtype import *`` never shadows Python's builtins.

# DLPack type codes (dlpack.h, DLPack 1.2).
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6
_DL_FLOAT8_E4M3FN, _DL_FLOAT8_E5M2 = 10, 12

_FIELDS = (
    "name",
    "itemsize",
    "kind",
    "is_floating_point",
    "is_complex",
    "is_signed",
    "numpy",
    "dlpack",
    "is_float8",
    "index",
    "is_quantized",
)


class dtype:  # noqa: N801 - named like torch.dtype
    """An opweave element type (immutable singleton; compare with ``is`` or ``==``).

    Attributes: ``name`` ("float32"), ``itemsize`` (bytes), ``kind`` (one of "bool",
    "uint", "int", "float", "complex"), ``is_floating_point`` (real floating types,
    float8 included), ``is_complex``, ``is_signed``, ``numpy`` (the numpy dtype used for
    storage), ``dlpack`` (``(type_code, bits)``), ``is_float8`` and ``index`` (the
    position in ``ALL_DTYPES``; also available as ``priority``), ``is_quantized`` (qint8,
    quint8, qint32: ``numpy`` is then the storage type of the integer representation).
    """

    __slots__ = _FIELDS

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("opweave.dtype cannot be instantiated; use the module's dtypes")

    @classmethod
    def _make(cls, name, kind, np_dtype, dlpack_code, index, is_quantized=False):
        """Create one singleton (module-internal)."""
        self = object.__new__(cls)
        np_dtype = np.dtype(np_dtype)
        values = {
            "name": name,
            "itemsize": np_dtype.itemsize,
            "kind": kind,
            "is_floating_point": kind == "float",
            "is_complex": kind == "complex",
            "is_signed": kind not in ("bool", "uint"),
            "numpy": np_dtype,
            "dlpack": (dlpack_code, np_dtype.itemsize * 8),
            "is_float8": name.startswith("float8"),
            "index": index,
            "is_quantized": is_quantized,
        }
        for field in _FIELDS:
            object.__setattr__(self, field, values[field])
        return self

    def __setattr__(self, key, value):
        raise AttributeError(f"opweave.dtype is immutable; cannot set {key!r}")

    def __delattr__(self, key):
        raise AttributeError(f"opweave.dtype is immutable; cannot delete {key!r}")

    def __repr__(self):
        return f"opweave.{self.name}"

    def __reduce__(self):
        return (_dtype_from_name, (self.name,))

    @property
    def priority(self) -> int:
        """Alias of ``index``: the position of this dtype in ``ALL_DTYPES``."""
        return self.index

    def to_real(self) -> dtype:
        """Return the real counterpart: complex64 -> float32, complex128 -> float64, else self."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> dtype:
        """Return the complex counterpart of a non-float8 floating or complex dtype.

        float32, float16 and bfloat16 give complex64 (opweave has no complex32), float64
        gives complex128, complex dtypes are returned unchanged; anything else raises
        ValueError.
        """
        if self.is_complex:
            return self
        try:
            return _TO_COMPLEX[self]
        except KeyError:
            raise ValueError(f"{self!r} has no complex counterpart") from None


def _dtype_from_name(name):
    """Return the singleton called ``name`` (used by unpickling)."""
    return _BY_NAME[name]


_SPECS = (
    ("bool", "bool", np.bool_, _DL_BOOL),
    ("uint8", "uint", np.uint8, _DL_UINT),
    ("int8", "int", np.int8, _DL_INT),
    ("int16", "int", np.int16, _DL_INT),
    ("int32", "int", np.int32, _DL_INT),
    ("int64", "int", np.int64, _DL_INT),
    ("float16", "float", np.float16, _DL_FLOAT),
    ("bfloat16", "float", ml_dtypes.bfloat16, _DL_BFLOAT),
    ("float32", "float", np.float32, _DL_FLOAT),
    ("float64", "float", np.float64, _DL_FLOAT),
    ("complex64", "complex", np.complex64, _DL_COMPLEX),
    ("complex128", "complex", np.complex128, _DL_COMPLEX),
    ("float8_e4m3fn", "float", ml_dtypes.float8_e4m3fn, _DL_FLOAT8_E4M3FN),
    ("float8_e5m2", "float", ml_dtypes.float8_e5m2, _DL_FLOAT8_E5M2),
)

ALL_DTYPES = tuple(dtype._make(name, *rest, i) for i, (name, *rest) in enumerate(_SPECS))
_BY_NAME = {d.name: d for d in ALL_DTYPES}

(
    bool_,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
    float8_e4m3fn,
    float8_e5m2,
) = ALL_DTYPES

# Quantized dtypes: integer storage, not part of ALL_DTYPES (kept after it in ``index`` order).
QUANTIZED_DTYPES = tuple(
    dtype._make(name, kind, np_dtype, code, len(ALL_DTYPES) + i, True)
    for i, (name, kind, np_dtype, code) in enumerate(
        (
            ("qint8", "int", np.int8, _DL_INT),
            ("quint8", "uint", np.uint8, _DL_UINT),
            ("qint32", "int", np.int32, _DL_INT),
        )
    )
)
qint8, quint8, qint32 = QUANTIZED_DTYPES
_BY_NAME.update((d.name, d) for d in QUANTIZED_DTYPES)

half = float16
double = float64
long = int64
short = int16
cfloat = complex64
cdouble = complex128
# torch-style names that shadow builtins at module level only (see the module docstring).
globals().update({"bool": bool_, "float": float32, "int": int32})

_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}

# numpy dtypes compare (and hash) equal across spellings of one type (np.longlong and
# np.int64, "<f4" and "=f4"), but not across byte orders or ml_dtypes' other types.
_FROM_NUMPY = {d.numpy: d for d in ALL_DTYPES}


def from_numpy(np_dtype):
    """Return the opweave dtype stored as ``np_dtype`` (anything ``numpy.dtype`` accepts).

    Raises TypeError naming the numpy dtype when opweave has no such type (uint16, object,
    datetime64, strings, structured or non-native byte order dtypes, ...).
    """
    if np_dtype is None:  # numpy.dtype(None) would mean float64
        raise TypeError("from_numpy: expected a numpy dtype, got None")
    try:
        npd = np.dtype(np_dtype)
    except TypeError as exc:
        raise TypeError(f"from_numpy: not a numpy dtype: {np_dtype!r}") from exc
    found = _FROM_NUMPY.get(npd)
    if found is None:
        raise TypeError(f"from_numpy: numpy dtype {npd.str} ({npd}) is not supported by opweave")
    return found


_DEFAULT_CHOICES = (float16, bfloat16, float32, float64)
_default_dtype = float32


def get_default_dtype() -> dtype:
    """Return the default floating-point dtype (float32 unless changed)."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype to float16, bfloat16, float32 or float64.

    Raises TypeError for anything else.
    """
    global _default_dtype
    if not isinstance(d, dtype) or d not in _DEFAULT_CHOICES:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {d!r}")
    _default_dtype = d


def default_complex_dtype():
    """Return complex128 if the default dtype is float64, else complex64."""
    return complex128 if _default_dtype is float64 else complex64


def _check_dtype(d, where):
    if not isinstance(d, dtype):
        raise TypeError(f"{where}: expected an opweave dtype, got {type(d).__name__}: {d!r}")


def promote_types(a: dtype, b: dtype) -> dtype:
    """Return the smallest dtype both ``a`` and ``b`` promote to (torch.promote_types).

    Raises TypeError when a float8 dtype meets any different dtype, like PyTorch.
    """
    _check_dtype(a, "promote_types")
    _check_dtype(b, "promote_types")
    if a is b:
        return a
    if a.is_quantized or b.is_quantized:
        raise TypeError(f"promote_types: promotion for quantized types is not supported, got {a.name} and {b.name}")
    if a.is_float8 or b.is_float8:
        raise TypeError(f"promote_types: promotion for float8 types is not supported, got {a.name} and {b.name}")
    if a.is_complex or b.is_complex:
        # The real parts decide the width: complex64 with float64 gives complex128.
        return promote_types(a.to_real(), b.to_real()).to_complex()
    if a.is_floating_point and b.is_floating_point:
        if a.itemsize == b.itemsize:  # float16 with bfloat16
            return float32
        return a if a.itemsize > b.itemsize else b
    if a.is_floating_point or b.is_floating_point:
        return a if a.is_floating_point else b
    # Both bool or integer.
    if a is bool_ or b is bool_:
        return b if a is bool_ else a
    if a.is_signed == b.is_signed:
        return a if a.itemsize > b.itemsize else b
    signed = a if a.is_signed else b
    return int16 if signed is int8 else signed


def can_cast(from_: dtype, to: dtype) -> bool:
    """Return whether ``from_`` may be cast to ``to`` under PyTorch's casting rules.

    complex -> non-complex, floating -> integral or bool, and non-bool -> bool are
    refused; everything else is allowed.
    """
    _check_dtype(from_, "can_cast")
    _check_dtype(to, "can_cast")
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return not (from_ is not bool_ and to is bool_)


def opmath_dtype(d):
    """Return the dtype to compute in for values of ``d``.

    float16, bfloat16 and the float8 types compute in float32 (as ATen's opmath_type);
    every other dtype computes in itself.
    """
    _check_dtype(d, "opmath_dtype")
    if d in (float16, bfloat16) or d.is_float8:
        return float32
    return d


def _promote_skip_none(a, b):
    if a is None:
        return b
    return promote_types(a, b)


def _combine_categories(higher, lower):
    """ATen's combine_categories: merge a higher-priority and a lower-priority result."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        if higher.is_float8:
            raise TypeError(
                f"result_type: promotion for float8 types is not supported, got {higher.name} and {lower.name}"
            )
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(value):
    """Return the dtype a Python or numpy scalar contributes, or None if it is not one."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool_
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, (builtins.float, np.floating)):
        return _default_dtype
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return default_complex_dtype()
    if isinstance(value, np.generic):  # ml_dtypes scalars (bfloat16, float8, ...)
        try:
            if from_numpy(value.dtype).is_floating_point:
                return _default_dtype
        except TypeError:
            return None
    return None


def result_type(*args: object) -> dtype:
    """Return the dtype of an elementwise operation on ``args`` (torch.result_type).

    Each argument is a tensor-like (an object with an opweave ``.dtype`` and an integer
    ``.ndim``, optionally ``_wrapped_number=True`` for a Python scalar wrapped as a 0-dim
    tensor) or a Python/numpy scalar (bool, int, float, complex).  Tensors with ndim > 0
    outrank 0-dim tensors, which outrank scalars; a lower category only matters when it
    is of a higher kind (bool < integer < floating < complex), as in ATen's
    ResultTypeState.  Python floats take the default dtype and complex numbers
    ``default_complex_dtype()``.
    """
    if not args:
        raise TypeError("result_type() requires at least one argument")
    dim_result = zero_result = wrapped_result = None
    for position, arg in enumerate(args):
        arg_dtype = getattr(arg, "dtype", None)
        ndim = getattr(arg, "ndim", None)
        if isinstance(arg_dtype, dtype) and isinstance(ndim, builtins.int):
            if arg_dtype.is_quantized:
                raise TypeError(f"result_type(): promotion for quantized types is not supported, got {arg_dtype.name}")
            wrapped = builtins.bool(getattr(arg, "_wrapped_number", False))
            current = arg_dtype
            if wrapped and current.is_complex:
                current = default_complex_dtype()
            elif wrapped and current.is_floating_point:
                current = _default_dtype
            if ndim > 0:
                dim_result = _promote_skip_none(dim_result, current)
            elif wrapped:
                wrapped_result = _promote_skip_none(wrapped_result, current)
            else:
                zero_result = _promote_skip_none(zero_result, current)
            continue
        current = _scalar_dtype(arg)
        if current is None:
            raise TypeError(
                f"result_type(): argument {position} (counting from 0) has unsupported "
                f"type {type(arg).__name__}; expected a tensor or a bool/int/float/complex scalar"
            )
        wrapped_result = _promote_skip_none(wrapped_result, current)
    return _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))


def _float_info_source(d):
    if d in (float16, float32, float64):
        return np.finfo(d.numpy)
    return ml_dtypes.finfo(d.numpy)


class finfo:  # noqa: N801 - named like torch.finfo
    """Machine limits of a floating-point dtype (torch.finfo).

    ``finfo(dtype=None)`` describes the default dtype when ``dtype`` is None; a complex
    dtype gives the limits of its real part.  Attributes (Python numbers): ``bits``,
    ``eps``, ``max``, ``min``, ``tiny``, ``smallest_normal`` (== ``tiny``),
    ``resolution`` (10 ** -floor(-log10(eps)), as PyTorch) and ``dtype`` (the name of
    the real dtype, e.g. "float32").
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, dtype: dtype | None = None) -> None:
        d = _default_dtype if dtype is None else dtype
        if not isinstance(d, _DTYPE_CLASS) or not (d.is_floating_point or d.is_complex):
            raise TypeError(
                f"finfo() requires a floating-point or complex opweave dtype, got {d!r}; use iinfo for integer types"
            )
        d = d.to_real()
        info = _float_info_source(d)
        self.bits = d.itemsize * 8
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = builtins.float(info.smallest_normal)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = d.name

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 - named like torch.iinfo
    """Machine limits of an integer dtype (torch.iinfo).

    Attributes (Python ints): ``bits``, ``max``, ``min`` and ``dtype`` (the name, e.g.
    "int32").  bool and non-integer dtypes raise TypeError, as in PyTorch.
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, dtype: dtype) -> None:
        if not isinstance(dtype, _DTYPE_CLASS) or dtype.kind not in ("int", "uint"):
            raise TypeError(f"iinfo() requires an integer opweave dtype, got {dtype!r}")
        info = np.iinfo(dtype.numpy)
        self.bits = dtype.itemsize * 8
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = dtype.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


_DTYPE_CLASS = dtype
