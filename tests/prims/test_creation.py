"""Creation prims: empty_strided, empty_permuted, full, scalar_tensor, iota, eye, tril_indices, triu_indices."""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import pytest
from _prim_support import INTS, P, contiguous_strides
from hypothesis import given, settings
from hypothesis import strategies as st

ALL = list(ow.ALL_DTYPES)
ARITHMETIC = [d for d in ALL if not d.is_float8]
SETTINGS = settings(max_examples=25, deadline=None)
shapes = st.lists(st.integers(0, 4), max_size=4)


def both(call):
    """Run a factory call on cpu and meta; check they agree on shape and dtype; return the cpu tensor."""
    cpu, meta = call("cpu"), call("meta")
    assert cpu.device.type == "cpu" and meta.device.type == "meta"
    assert cpu.dtype == meta.dtype and tuple(cpu.shape) == tuple(meta.shape)
    return cpu, meta


# --- empty_strided / empty_permuted ------------------------------------------------------------------------


@SETTINGS
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(ALL))
def test_empty_strided(shape, data, dtype):
    strides = data.draw(st.lists(st.integers(0, 6), min_size=len(shape), max_size=len(shape)))
    cpu, meta = both(lambda dev: P.empty_strided(shape, strides, dtype=dtype, device=dev))
    assert cpu.dtype == dtype and tuple(cpu.shape) == tuple(shape)
    assert tuple(cpu.stride()) == tuple(strides) and tuple(meta.stride()) == tuple(strides)
    if not dtype.is_float8:
        view = cpu.numpy()
        view[...] = np.ones((), dtype.numpy)  # the memory is there and writable, whatever the strides
        assert view.shape == tuple(shape)


@SETTINGS
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(ALL))
def test_empty_permuted(shape, data, dtype):
    layout = data.draw(st.permutations(range(len(shape))))
    cpu, meta = both(lambda dev: P.empty_permuted(shape, layout, dtype=dtype, device=dev))
    physical = contiguous_strides([shape[d] for d in layout])
    expected = [0] * len(shape)
    for pos, d in enumerate(layout):
        expected[d] = physical[pos]
    assert tuple(meta.stride()) == tuple(expected)
    if math.prod(shape) > 1:  # strides of size-1 dims are free on the CPU
        assert all(cpu.stride()[d] == expected[d] for d in range(len(shape)) if shape[d] > 1)


# --- full / scalar_tensor ------------------------------------------------------------------------------


def fill_values(dtype):
    vals = [0, 1, True, False, 3]
    if dtype.kind != "uint":
        vals.append(-7)
    if dtype.is_floating_point or dtype.is_complex:
        vals += [2.5, -0.0, math.inf, -math.inf, math.nan]
    elif dtype.kind in ("int", "uint"):
        vals += [2.7, -1.5 if dtype.kind == "int" else 1.5]
    if dtype.is_complex:
        vals += [1 + 2j, complex(math.nan, 1)]
    return vals


def expected_fill(value, dtype):
    """torch semantics: a float fill of an integer tensor truncates toward zero."""
    if dtype.kind in ("int", "uint", "bool") and isinstance(value, float):
        value = bool(value) if dtype.kind == "bool" else math.trunc(value)
    return np.array(value).astype(dtype.numpy)


@pytest.mark.parametrize("dtype", ARITHMETIC)
@settings(max_examples=10, deadline=None)
@given(shape=shapes, data=st.data())
def test_full(dtype, shape, data):
    value = data.draw(st.sampled_from(fill_values(dtype)))
    cpu, _ = both(lambda dev: P.full(shape, value, dtype=dtype, device=dev))
    assert cpu.dtype == dtype
    assert cpu.is_contiguous() or cpu.numel() == 0  # NumPy gives empty arrays 0 strides
    expected = np.broadcast_to(expected_fill(value, dtype), tuple(shape))
    got = cpu.numpy()
    assert got.dtype == dtype.numpy
    np.testing.assert_array_equal(got.astype(np.complex128), expected.astype(np.complex128))
    s, _ = both(lambda dev: P.scalar_tensor(value, dtype=dtype, device=dev))
    assert tuple(s.shape) == () and s.dtype == dtype
    np.testing.assert_array_equal(s.numpy().astype(np.complex128), expected_fill(value, dtype).astype(np.complex128))


def test_full_float8_storage():
    for dtype in [d for d in ALL if d.is_float8]:
        out = P.full([3], 1.5, dtype=dtype, device="cpu")
        assert out.dtype == dtype and float(out.numpy()[0]) == 1.5


# --- iota -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS)
@SETTINGS
@given(length=st.integers(0, 20), start=st.integers(-5, 5), step=st.integers(-3, 3))
def test_iota(dtype, length, start, step):
    if dtype.kind == "uint":
        start, step = abs(start), abs(step)
    cpu, _ = both(lambda dev: P.iota(length, start=start, step=step, dtype=dtype, device=dev))
    assert cpu.dtype == dtype and tuple(cpu.shape) == (length,)
    assert cpu.numpy().tolist() == [start + step * i for i in range(length)]


# --- eye ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ARITHMETIC)
@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 6), m=st.integers(0, 6))
def test_eye(dtype, n, m):
    cpu, _ = both(lambda dev: P.eye(n, m, dtype=dtype, device=dev))
    assert cpu.dtype == dtype and tuple(cpu.shape) == (n, m)
    expected = [[1 if i == j else 0 for j in range(m)] for i in range(n)]
    assert cpu.numpy().astype(np.complex128).tolist() == expected


# --- tril_indices / triu_indices ----------------------------------------------------------------------------


def triangle(row, col, offset, lower):
    """Row-major (i, j) pairs with j - i <= offset (lower) or >= offset (upper)."""
    pairs = [(i, j) for i in range(row) for j in range(col) if (j - i <= offset if lower else j - i >= offset)]
    return [[p[0] for p in pairs], [p[1] for p in pairs]]


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [ow.int64, ow.int32, ow.int16])
@settings(max_examples=40, deadline=None)
@given(row=st.integers(0, 8), col=st.integers(0, 8), offset=st.integers(-10, 10))
def test_triangle_indices(lower, dtype, row, col, offset):
    op = P.tril_indices if lower else P.triu_indices
    cpu, meta = both(lambda dev: op(row, col, offset, dtype=dtype, device=dev))
    expected = triangle(row, col, offset, lower)
    assert cpu.dtype == dtype and tuple(cpu.shape) == (2, len(expected[0]))
    assert cpu.numpy().tolist() == expected


def test_triangle_counts_large():
    # the meta function counts without materialising: check it against the closed form on big sizes
    for row, col, offset in [(1000, 700, 3), (700, 1000, -250), (5, 10**6, 2), (10**6, 5, -(10**6))]:
        n = P.tril_indices(row, col, offset, dtype=ow.int64, device="meta").shape[1]
        assert n == sum(min(max(i + offset + 1, 0), col) for i in range(row))
        u = P.triu_indices(row, col, offset, dtype=ow.int64, device="meta").shape[1]
        assert u == sum(col - min(max(i + offset, 0), col) for i in range(row))


# --- tags and errors -------------------------------------------------------------------------------------------

FACTORIES = ["empty_strided", "empty_permuted", "full", "scalar_tensor", "iota", "eye", "tril_indices", "triu_indices"]


def test_tags():
    for name in FACTORIES:
        assert "factory" in getattr(P, name).default.tags


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_errors(device):
    f32 = ow.float32
    cases = [
        (ValueError, "empty_strided", lambda: P.empty_strided([2, -1], [1, 1], dtype=f32, device=device)),
        (ValueError, "empty_strided", lambda: P.empty_strided([2, 2], [1], dtype=f32, device=device)),
        (ValueError, "empty_permuted", lambda: P.empty_permuted([2, 3], [0, 0], dtype=f32, device=device)),
        (ValueError, "empty_permuted", lambda: P.empty_permuted([-2], [0], dtype=f32, device=device)),
        (ValueError, "full", lambda: P.full([-1], 0, dtype=f32, device=device)),
        (TypeError, "full", lambda: P.full([1], 1j, dtype=f32, device=device)),
        (TypeError, "scalar_tensor", lambda: P.scalar_tensor(1j, dtype=ow.int32, device=device)),
        (ValueError, "iota", lambda: P.iota(-1, start=0, step=1, dtype=ow.int64, device=device)),
        (TypeError, "iota", lambda: P.iota(3, start=0, step=1, dtype=f32, device=device)),
        (ValueError, "eye", lambda: P.eye(-1, 2, dtype=f32, device=device)),
        (ValueError, "eye", lambda: P.eye(2, -2, dtype=f32, device=device)),
        (ValueError, "tril_indices", lambda: P.tril_indices(-1, 2, 0, dtype=ow.int64, device=device)),
        (TypeError, "tril_indices", lambda: P.tril_indices(2, 2, 0, dtype=f32, device=device)),
        (ValueError, "triu_indices", lambda: P.triu_indices(2, -2, 0, dtype=ow.int64, device=device)),
        (TypeError, "triu_indices", lambda: P.triu_indices(2, 2, 0, dtype=ow.bool, device=device)),
    ]
    for exc, name, fn in cases:
        with pytest.raises(exc, match=f"prims::{name}"):
            fn()
