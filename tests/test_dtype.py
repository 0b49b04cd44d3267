"""Tests for opweave._dtype.

Every expectation here is an independent oracle: literal tables recorded by hand from
PyTorch 2.13 (torch.promote_types, torch.can_cast, torch.result_type, torch.finfo), numpy /
ml_dtypes for machine limits, and a rank-based re-implementation of ATen's ResultTypeState.
Where PyTorch answers complex32 (half-precision meeting complex) the tables say complex64,
since opweave has no complex32.
"""

import builtins
import copy
import pickle

import ml_dtypes
import numpy as np
import opweave._dtype as D
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

AB = {
    "b": D.bool_,
    "u8": D.uint8,
    "i8": D.int8,
    "i16": D.int16,
    "i32": D.int32,
    "i64": D.int64,
    "f16": D.float16,
    "bf16": D.bfloat16,
    "f32": D.float32,
    "f64": D.float64,
    "c64": D.complex64,
    "c128": D.complex128,
    "e4m3": D.float8_e4m3fn,
    "e5m2": D.float8_e5m2,
}
FLOATS = [D.float16, D.bfloat16, D.float32, D.float64, D.float8_e4m3fn, D.float8_e5m2]
INTS = [D.uint8, D.int8, D.int16, D.int32, D.int64]
DEFAULTS = [D.float16, D.bfloat16, D.float32, D.float64]


def parse_grid(text):
    """Parse a labelled grid into {(row dtype, column dtype): cell string}."""
    header, *rows = text.strip().splitlines()
    cols = [AB[c] for c in header.split()]
    cells = {}
    for line in rows:
        label, *values = line.split()
        assert len(values) == len(cols)
        for col, value in zip(cols, values):
            cells[AB[label], col] = value
    return cells


# torch.promote_types(row, col); X = RuntimeError (float8 promotion unsupported).
PROMOTE = parse_grid("""
         b   u8   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128 e4m3 e5m2
b        b   u8   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128    X    X
u8      u8   u8  i16  i16  i32  i64  f16 bf16  f32  f64  c64 c128    X    X
i8      i8  i16   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128    X    X
i16    i16  i16  i16  i16  i32  i64  f16 bf16  f32  f64  c64 c128    X    X
i32    i32  i32  i32  i32  i32  i64  f16 bf16  f32  f64  c64 c128    X    X
i64    i64  i64  i64  i64  i64  i64  f16 bf16  f32  f64  c64 c128    X    X
f16    f16  f16  f16  f16  f16  f16  f16  f32  f32  f64  c64 c128    X    X
bf16  bf16 bf16 bf16 bf16 bf16 bf16  f32 bf16  f32  f64  c64 c128    X    X
f32    f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64 c128    X    X
f64    f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128    X    X
c64    c64  c64  c64  c64  c64  c64  c64  c64  c64 c128  c64 c128    X    X
c128  c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128    X    X
e4m3     X    X    X    X    X    X    X    X    X    X    X    X e4m3    X
e5m2     X    X    X    X    X    X    X    X    X    X    X    X    X e5m2
""")

# torch.can_cast(row, col).
CAN_CAST = parse_grid("""
         b   u8   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128 e4m3 e5m2
b        Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y
u8       n    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y
i8       n    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y
i16      n    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y
i32      n    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y
i64      n    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y    Y
f16      n    n    n    n    n    n    Y    Y    Y    Y    Y    Y    Y    Y
bf16     n    n    n    n    n    n    Y    Y    Y    Y    Y    Y    Y    Y
f32      n    n    n    n    n    n    Y    Y    Y    Y    Y    Y    Y    Y
f64      n    n    n    n    n    n    Y    Y    Y    Y    Y    Y    Y    Y
c64      n    n    n    n    n    n    n    n    n    n    Y    Y    n    n
c128     n    n    n    n    n    n    n    n    n    n    Y    Y    n    n
e4m3     n    n    n    n    n    n    Y    Y    Y    Y    Y    Y    Y    Y
e5m2     n    n    n    n    n    n    Y    Y    Y    Y    Y    Y    Y    Y
""")

# torch.result_type(tensor of dtype row with ndim 1, tensor of dtype col with ndim 0).
DIM_VS_ZERO = parse_grid("""
         b   u8   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128 e4m3 e5m2
b        b   u8   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128    X    X
u8      u8   u8   u8   u8   u8   u8  f16 bf16  f32  f64  c64 c128    X    X
i8      i8   i8   i8   i8   i8   i8  f16 bf16  f32  f64  c64 c128    X    X
i16    i16  i16  i16  i16  i16  i16  f16 bf16  f32  f64  c64 c128    X    X
i32    i32  i32  i32  i32  i32  i32  f16 bf16  f32  f64  c64 c128    X    X
i64    i64  i64  i64  i64  i64  i64  f16 bf16  f32  f64  c64 c128    X    X
f16    f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  c64  c64  f16  f16
bf16  bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16  c64  c64 bf16 bf16
f32    f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  c64  c64  f32  f32
f64    f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128  f64  f64
c64    c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64
c128  c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
e4m3  e4m3 e4m3 e4m3 e4m3 e4m3 e4m3 e4m3 e4m3 e4m3 e4m3    X    X e4m3 e4m3
e5m2  e5m2 e5m2 e5m2 e5m2 e5m2 e5m2 e5m2 e5m2 e5m2 e5m2    X    X e5m2 e5m2
""")

# torch.result_type(tensor of dtype row, Python scalar) for scalars True, 1, 1.5, 1j.
# D = the default dtype, C = the default complex dtype; same for ndim 0 and ndim 1.
TENSOR_VS_SCALAR = {
    row.split()[0]: row.split()[1:]
    for row in """
        b      b   i64     D     C
        u8    u8    u8     D     C
        i8    i8    i8     D     C
        i16  i16   i16     D     C
        i32  i32   i32     D     C
        i64  i64   i64     D     C
        f16  f16   f16   f16   c64
        bf16 bf16 bf16  bf16   c64
        f32  f32   f32   f32   c64
        f64  f64   f64   f64  c128
        c64  c64   c64   c64   c64
        c128 c128 c128  c128  c128
        e4m3 e4m3 e4m3  e4m3     X
        e5m2 e5m2 e5m2  e5m2     X
    """.strip().splitlines()
}
SCALARS = [True, 1, 1.5, 1j]
DEFAULT_COMPLEX = {D.float16: D.complex64, D.bfloat16: D.complex64}
DEFAULT_COMPLEX.update({D.float32: D.complex64, D.float64: D.complex128})


class FakeTensor:
    """Minimal tensor-like: an opweave dtype, an ndim and the wrapped-number flag."""

    def __init__(self, dtype, ndim, wrapped=False):
        self.dtype = dtype
        self.ndim = ndim
        self._wrapped_number = wrapped

    def __repr__(self):
        return f"FakeTensor({self.dtype!r}, ndim={self.ndim}, wrapped={self._wrapped_number})"


@pytest.fixture(autouse=True)
def restore_default_dtype():
    """Put the default dtype back after every test, whatever the test did."""
    saved = D.get_default_dtype()
    yield
    D.set_default_dtype(saved)


def expect(cell, default=D.float32):
    """Turn a table cell into a dtype, or None for X (TypeError expected)."""
    if cell == "X":
        return None
    if cell == "D":
        return default
    if cell == "C":
        return DEFAULT_COMPLEX[default]
    return AB[cell]


def check(fn, *args, want):
    """Assert fn(*args) is the dtype `want`, or raises TypeError when `want` is None."""
    if want is None:
        with pytest.raises(TypeError):
            fn(*args)
    else:
        assert fn(*args) is want, (args, want)


# ---------------------------------------------------------------- dtype objects


ATTRS = """
name          itemsize kind    float complex signed dlpack
bool          1        bool    0     0       0      6,8
uint8         1        uint    0     0       0      1,8
int8          1        int     0     0       1      0,8
int16         2        int     0     0       1      0,16
int32         4        int     0     0       1      0,32
int64         8        int     0     0       1      0,64
float16       2        float   1     0       1      2,16
bfloat16      2        float   1     0       1      4,16
float32       4        float   1     0       1      2,32
float64       8        float   1     0       1      2,64
complex64     8        complex 0     1       1      5,64
complex128    16       complex 0     1       1      5,128
float8_e4m3fn 1        float   1     0       1      10,8
float8_e5m2   1        float   1     0       1      12,8
"""
NUMPY_OF = {
    "bool": np.bool_,
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "float32": np.float32,
    "float64": np.float64,
    "complex64": np.complex64,
    "complex128": np.complex128,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
}


def test_all_dtypes_order_and_attributes():
    """ALL_DTYPES is in the documented order and every attribute matches the table."""
    rows = [line.split() for line in ATTRS.strip().splitlines()[1:]]
    assert [d.name for d in D.ALL_DTYPES] == [r[0] for r in rows]
    for index, (d, row) in enumerate(zip(D.ALL_DTYPES, rows)):
        name, itemsize, kind, is_float, is_complex, is_signed, dlpack = row
        assert d.itemsize == int(itemsize)
        assert d.kind == kind
        assert d.is_floating_point == (is_float == "1")
        assert d.is_complex == (is_complex == "1")
        assert d.is_signed == (is_signed == "1")
        assert d.dlpack == tuple(int(x) for x in dlpack.split(","))
        assert d.is_float8 == name.startswith("float8")
        assert d.numpy == np.dtype(NUMPY_OF[name])
        assert d.index == d.priority == index
        assert getattr(D, "bool_" if name == "bool" else name) is d


def test_aliases():
    """torch-style aliases name the same singletons, and builtins stay intact."""
    assert D.half is D.float16
    assert D.float is D.float32
    assert D.double is D.float64
    assert D.long is D.int64
    assert D.int is D.int32
    assert D.short is D.int16
    assert D.cfloat is D.complex64
    assert D.cdouble is D.complex128
    assert D.bool is D.bool_
    assert builtins.bool(1) is True  # the module did not clobber builtins
    assert not {"bool", "float", "int"} & set(D.__all__)
    assert all(hasattr(D, name) for name in D.__all__)


def test_repr_and_hash():
    """repr is 'opweave.<name>'; dtypes are hashable and equal only to themselves."""
    assert [repr(d) for d in D.ALL_DTYPES] == [f"opweave.{n}" for n in NUMPY_OF]
    assert len({d: d.name for d in D.ALL_DTYPES}) == 14
    assert D.float32 == D.float32 and D.float32 != D.float64 and D.float32 != "float32"


@pytest.mark.parametrize("d", D.ALL_DTYPES, ids=str)
def test_pickle_and_copy_return_the_singleton(d):
    """pickle, copy and deepcopy all give back the very same object."""
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
    assert copy.copy(d) is d and copy.deepcopy([d])[0] is d


def test_dtypes_are_immutable_and_not_constructible():
    """Attributes cannot be set or deleted, and dtype() cannot make new instances."""
    with pytest.raises(AttributeError):
        D.float32.itemsize = 8
    with pytest.raises(AttributeError):
        D.float32.extra = 1
    with pytest.raises(AttributeError):
        del D.float32.name
    with pytest.raises(TypeError):
        D.dtype("float32")


def test_to_real_and_to_complex():
    """to_real / to_complex follow the documented mapping; no counterpart -> ValueError."""
    real = {"c64": "f32", "c128": "f64"}
    cplx = {"f16": "c64", "bf16": "c64", "f32": "c64", "f64": "c128", "c64": "c64"}
    cplx["c128"] = "c128"
    for ab, d in AB.items():
        assert d.to_real() is AB[real.get(ab, ab)]
        if ab in cplx:
            assert d.to_complex() is AB[cplx[ab]]
        else:
            with pytest.raises(ValueError):
                d.to_complex()


def test_opmath_dtype():
    """Half-precision and float8 compute in float32; everything else in itself."""
    for d in D.ALL_DTYPES:
        low = d.name in ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")
        assert D.opmath_dtype(d) is (D.float32 if low else d)


# ---------------------------------------------------------------- numpy interop


@pytest.mark.parametrize("d", D.ALL_DTYPES, ids=str)
def test_from_numpy_round_trip(d):
    """from_numpy inverts .numpy, from a dtype, a scalar type or a name."""
    assert D.from_numpy(d.numpy) is d
    assert D.from_numpy(NUMPY_OF[d.name]) is d
    assert D.from_numpy(np.zeros(2, dtype=d.numpy).dtype) is d


def test_from_numpy_other_spellings():
    """Platform spellings of the same numpy type map to the same dtype."""
    assert D.from_numpy(np.longlong) is D.int64
    assert D.from_numpy(np.intc) is D.int32
    assert D.from_numpy("f8") is D.float64
    assert D.from_numpy(np.dtype("=c8")) is D.complex64


@pytest.mark.parametrize("bad", ["uint16", "uint32", "uint64", "object", "datetime64[ns]", "U3", ">f4", "V4"])
def test_from_numpy_unsupported(bad):
    """Unsupported numpy dtypes raise TypeError naming the dtype."""
    with pytest.raises(TypeError, match="from_numpy") as info:
        D.from_numpy(bad)
    assert str(np.dtype(bad)) in str(info.value)


@pytest.mark.parametrize("name", ["float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "int4"])
def test_from_numpy_other_ml_dtypes(name):
    """ml_dtypes types that opweave lacks are refused, not confused with a float8 type."""
    with pytest.raises(TypeError, match=name):
        D.from_numpy(getattr(ml_dtypes, name))


def test_from_numpy_rejects_non_dtypes():
    """None (which numpy reads as float64) and garbage raise TypeError."""
    for bad in (None, "not-a-dtype", 3.5):
        with pytest.raises(TypeError):
            D.from_numpy(bad)


# ---------------------------------------------------------------- default dtype


def test_default_dtype_set_and_restore():
    """The default starts at float32 and accepts exactly the four floating types."""
    assert D.get_default_dtype() is D.float32
    assert D.default_complex_dtype() is D.complex64
    for d in DEFAULTS:
        D.set_default_dtype(d)
        assert D.get_default_dtype() is d
        assert D.default_complex_dtype() is DEFAULT_COMPLEX[d]
        assert D.finfo().dtype == d.name


@pytest.mark.parametrize("bad", [D.int32, D.bool_, D.complex64, D.float8_e4m3fn, D.float8_e5m2, "float32", np.float32])
def test_set_default_dtype_rejects(bad):
    """Anything but float16/bfloat16/float32/float64 raises TypeError and changes nothing."""
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        D.set_default_dtype(bad)
    assert D.get_default_dtype() is D.float32


# ---------------------------------------------------------------- promote_types / can_cast


def test_promote_types_full_table():
    """Every one of the 196 ordered pairs matches PyTorch's table."""
    for (a, b), cell in PROMOTE.items():
        check(D.promote_types, a, b, want=expect(cell))


def test_promote_types_symmetric():
    """promote_types(a, b) == promote_types(b, a), errors included."""
    for a in D.ALL_DTYPES:
        for b in D.ALL_DTYPES:
            try:
                ab = D.promote_types(a, b)
            except TypeError:
                ab = None
            check(D.promote_types, b, a, want=ab)


def test_promote_types_float8_message():
    """The float8 error names both dtypes."""
    msg = "promotion for float8 types is not supported, got float8_e4m3fn and float32"
    with pytest.raises(TypeError, match=msg):
        D.promote_types(D.float8_e4m3fn, D.float32)


def test_promote_types_rejects_non_dtypes():
    """Non-dtype arguments raise TypeError."""
    with pytest.raises(TypeError):
        D.promote_types(D.float32, np.float32)


def test_can_cast_full_table():
    """Every one of the 196 ordered pairs matches torch.can_cast."""
    for (a, b), cell in CAN_CAST.items():
        assert D.can_cast(a, b) is (cell == "Y"), (a, b)


# ---------------------------------------------------------------- result_type tables


def test_result_type_dim_vs_zero_dim_table():
    """An ndim>0 tensor against a 0-dim tensor, every dtype pair, both argument orders."""
    for (a, b), cell in DIM_VS_ZERO.items():
        want = expect(cell)
        check(D.result_type, FakeTensor(a, 1), FakeTensor(b, 0), want=want)
        check(D.result_type, FakeTensor(b, 0), FakeTensor(a, 3), want=want)


def test_result_type_same_category_is_promote_types():
    """Two tensors of the same category (both ndim>0, or both 0-dim) just promote."""
    for (a, b), cell in PROMOTE.items():
        for ndim in (0, 2):
            check(D.result_type, FakeTensor(a, ndim), FakeTensor(b, ndim), want=expect(cell))


@pytest.mark.parametrize("default", DEFAULTS, ids=str)
def test_result_type_tensor_vs_scalar_table(default):
    """Every dtype (ndim 0, ndim 1, wrapped-free) against every Python scalar kind."""
    D.set_default_dtype(default)
    for ab, cells in TENSOR_VS_SCALAR.items():
        for scalar, cell in zip(SCALARS, cells):
            want = expect(cell, default)
            for ndim in (0, 1):
                check(D.result_type, FakeTensor(AB[ab], ndim), scalar, want=want)
                check(D.result_type, scalar, FakeTensor(AB[ab], ndim), want=want)


@pytest.mark.parametrize("default", DEFAULTS, ids=str)
def test_result_type_scalars_only(default):
    """Only scalars: bool < int64 < default float < default complex."""
    D.set_default_dtype(default)
    ranked = [D.bool_, D.int64, default, DEFAULT_COMPLEX[default]]
    for i, x in enumerate(SCALARS):
        for j, y in enumerate(SCALARS):
            assert D.result_type(x, y) is ranked[max(i, j)]
        assert D.result_type(x) is ranked[i]


@pytest.mark.parametrize("default", DEFAULTS, ids=str)
def test_wrapped_numbers_behave_like_python_scalars(default):
    """A 0-dim tensor flagged _wrapped_number acts as the Python scalar it wraps."""
    D.set_default_dtype(default)
    python_dtypes = [D.bool_, D.int64, D.float64, D.complex128]  # what torch wraps them as
    for ab in TENSOR_VS_SCALAR:
        for ndim in (0, 1):
            tensor = FakeTensor(AB[ab], ndim)
            for scalar, python_dtype in zip(SCALARS, python_dtypes):
                wrapped = FakeTensor(python_dtype, 0, wrapped=True)
                try:
                    want = D.result_type(tensor, scalar)
                except TypeError:
                    want = None
                check(D.result_type, tensor, wrapped, want=want)


def test_result_type_examples():
    """The worked examples (each checked against torch by hand)."""
    i8, u8, b = FakeTensor(D.int8, 1), FakeTensor(D.uint8, 1), FakeTensor(D.bool_, 1)
    assert D.result_type(i8, 1) is D.int8
    assert D.result_type(i8, 1.5) is D.float32
    assert D.result_type(b, True) is D.bool_
    assert D.result_type(b, 1) is D.int64
    assert D.result_type(FakeTensor(D.float16, 1), 1.5) is D.float16
    assert D.result_type(FakeTensor(D.int32, 1), FakeTensor(D.float64, 0)) is D.float64
    assert D.result_type(FakeTensor(D.float32, 1), 1j) is D.complex64
    assert D.result_type(FakeTensor(D.float64, 1), 1j) is D.complex128
    assert D.result_type(u8, -1) is D.uint8
    assert D.result_type(u8, FakeTensor(D.int8, 0)) is D.uint8
    assert D.result_type(u8, FakeTensor(D.int8, 1)) is D.int16
    assert D.result_type(i8, FakeTensor(D.int64, 0), 2.5) is D.float32
    assert D.result_type(i8, FakeTensor(D.float64, 0), 2.5) is D.float64
    assert D.result_type(FakeTensor(D.float16, 0), 1j) is D.complex64  # torch: complex32
    D.set_default_dtype(D.float64)
    assert D.result_type(i8, 1.5) is D.float64
    assert D.result_type(i8, 1j) is D.complex128
    assert D.result_type(FakeTensor(D.float32, 1), 1j) is D.complex64


def test_result_type_numpy_scalars():
    """numpy scalars count as the Python scalar of the same kind."""
    i8 = FakeTensor(D.int8, 1)
    assert D.result_type(i8, np.int32(3)) is D.int8
    assert D.result_type(i8, np.uint64(3)) is D.int8
    assert D.result_type(i8, np.float64(3)) is D.float32
    assert D.result_type(i8, np.float16(3)) is D.float32
    assert D.result_type(i8, ml_dtypes.bfloat16(3)) is D.float32
    assert D.result_type(i8, np.complex64(3)) is D.complex64
    assert D.result_type(FakeTensor(D.bool_, 1), np.bool_(True)) is D.bool_


def test_result_type_errors():
    """No arguments, or an argument of an unsupported type, raise TypeError."""
    with pytest.raises(TypeError):
        D.result_type()
    with pytest.raises(TypeError, match=r"argument 1 .*str"):
        D.result_type(FakeTensor(D.int8, 1), "x")
    bad_args = [None, D.float32, [1], np.zeros(2), np.datetime64("2020-01-01"), object()]
    for bad in bad_args:
        with pytest.raises(TypeError, match=type(bad).__name__):
            D.result_type(bad)
    with pytest.raises(TypeError, match="float8"):
        D.result_type(FakeTensor(D.float8_e4m3fn, 1), 1j)
    with pytest.raises(TypeError, match="float8"):
        D.result_type(FakeTensor(D.int32, 1), FakeTensor(D.float8_e5m2, 0))


# ---------------------------------------------------------------- result_type: property test

RANK = {"bool": 0, "uint": 1, "int": 1, "float": 2, "complex": 3}
COMPLEX_OF = {"f16": "c64", "bf16": "c64", "f32": "c64", "f64": "c128"}
NAME_OF = {d: ab for ab, d in AB.items()}


class Unsupported(Exception):
    """The reference model's 'PyTorch raises here'."""


def ref_promote(a, b):
    """Promotion by lookup in the literal PROMOTE table."""
    cell = PROMOTE[a, b]
    if cell == "X":
        raise Unsupported
    return AB[cell]


def ref_group(dtypes):
    """Fold one category's dtypes (None when the category is empty)."""
    result = None
    for d in dtypes:
        result = d if result is None else ref_promote(result, d)
    return result


def ref_lift(high, low):
    """A lower category only matters when its kind ranks strictly above the higher one's."""
    if high is None or low is None:
        return low if high is None else high
    if RANK[low.kind] <= RANK[high.kind]:
        return high
    if low.is_complex and high.is_floating_point:  # keep the precision of `high`
        if NAME_OF[high] not in COMPLEX_OF:
            raise Unsupported
        return AB[COMPLEX_OF[NAME_OF[high]]]
    return ref_promote(high, low)


def ref_result_type(items, default):
    """Re-implementation of ResultTypeState over ("tensor", dtype, ndim, wrapped) /
    ("scalar", kind, value) items, by category ranks."""
    scalar_dtype = {"bool": D.bool_, "int": D.int64, "float": default}
    scalar_dtype["complex"] = DEFAULT_COMPLEX[default]
    groups = {"dim": [], "zero": [], "wrapped": []}
    for item in items:
        if item[0] == "scalar":
            groups["wrapped"].append(scalar_dtype[item[1]])
            continue
        _, d, ndim, wrapped = item
        if wrapped and d.kind in ("float", "complex"):
            d = scalar_dtype[d.kind]
        group = "dim" if ndim > 0 else "wrapped" if wrapped else "zero"
        groups[group].append(d)
    dim, zero, wrapped = (ref_group(groups[g]) for g in ("dim", "zero", "wrapped"))
    return ref_lift(dim, ref_lift(zero, wrapped))


SCALAR_VALUES = {
    "bool": [True, False, np.bool_(False)],
    "int": [0, -3, 2**40, np.int16(5), np.uint8(7)],
    "float": [1.5, float("nan"), np.float32(2), np.float16(1), ml_dtypes.bfloat16(1)],
    "complex": [1j, complex(2, 0), np.complex64(1j), np.complex128(3)],
}
tensor_items = st.tuples(
    st.just("tensor"),
    st.sampled_from(D.ALL_DTYPES),
    st.sampled_from([0, 0, 1, 2]),
    st.booleans(),
).map(lambda t: t if t[2] == 0 else (*t[:3], t[3] and t[2] == 1))
scalar_items = st.sampled_from(sorted(SCALAR_VALUES)).flatmap(
    lambda kind: st.sampled_from(SCALAR_VALUES[kind]).map(lambda value: ("scalar", kind, value))
)


def build_arg(item):
    """Turn a reference item into a real argument (a FakeTensor or the scalar value)."""
    if item[0] == "scalar":
        return item[2]
    _, d, ndim, wrapped = item
    return FakeTensor(d, ndim, wrapped)


@settings(max_examples=250, deadline=None)
@given(
    items=st.lists(st.one_of(tensor_items, scalar_items), min_size=1, max_size=6),
    default=st.sampled_from(DEFAULTS),
)
def test_result_type_matches_rank_model(items, default):
    """result_type agrees with the rank-based model on random argument lists."""
    D.set_default_dtype(default)
    try:
        args = [build_arg(item) for item in items]
        try:
            want = ref_result_type(items, default)
        except Unsupported:
            want = None
        check(D.result_type, *args, want=want)
    finally:
        D.set_default_dtype(D.float32)


# ---------------------------------------------------------------- finfo / iinfo

RESOLUTION = {"f16": 1e-3, "bf16": 1e-2, "f32": 1e-6, "f64": 1e-15, "e4m3": 1.0, "e5m2": 1.0}


def limits_oracle(d):
    """numpy's finfo for numpy's own floats, ml_dtypes' for the rest."""
    if d.name in ("float16", "float32", "float64"):
        return np.finfo(NUMPY_OF[d.name])
    return ml_dtypes.finfo(NUMPY_OF[d.name])


@pytest.mark.parametrize("d", FLOATS + [D.complex64, D.complex128], ids=str)
def test_finfo(d):
    """finfo matches numpy/ml_dtypes; complex dtypes describe their real part."""
    real = {"complex64": D.float32, "complex128": D.float64}.get(d.name, d)
    oracle = limits_oracle(real)
    info = D.finfo(d)
    assert info.bits == oracle.bits
    assert info.dtype == real.name
    for field in ("eps", "max", "min", "tiny", "smallest_normal"):
        value = getattr(info, field)
        assert type(value) is float
        assert value == float(getattr(oracle, "tiny" if field == "smallest_normal" else field))
    assert info.smallest_normal == info.tiny
    assert info.resolution == RESOLUTION[NAME_OF[real]]
    assert f"dtype={real.name}" in repr(info)


def test_finfo_default():
    """finfo() and finfo(None) describe the default dtype."""
    assert D.finfo().dtype == "float32" and D.finfo(None).eps == D.finfo(D.float32).eps
    D.set_default_dtype(D.bfloat16)
    assert D.finfo().dtype == "bfloat16"


@pytest.mark.parametrize("bad", INTS + [D.bool_, "float32", np.float32], ids=str)
def test_finfo_rejects(bad):
    """Integer, bool and non-opweave arguments raise TypeError."""
    with pytest.raises(TypeError):
        D.finfo(bad)


@pytest.mark.parametrize("d", INTS, ids=str)
def test_iinfo(d):
    """iinfo matches numpy's iinfo, as Python ints."""
    oracle = np.iinfo(NUMPY_OF[d.name])
    info = D.iinfo(d)
    assert (info.bits, info.max, info.min, info.dtype) == (
        oracle.bits,
        int(oracle.max),
        int(oracle.min),
        d.name,
    )
    assert type(info.max) is int and type(info.min) is int
    assert f"dtype={d.name}" in repr(info)


@pytest.mark.parametrize("bad", [D.bool_, *FLOATS, D.complex64, D.complex128, "int32"], ids=str)
def test_iinfo_rejects(bad):
    """bool, floating, complex and non-opweave arguments raise TypeError."""
    with pytest.raises(TypeError):
        D.iinfo(bad)
