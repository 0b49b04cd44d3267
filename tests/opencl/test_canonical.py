"""Direct OpenCL kernels of hot canonical ops, the launch cache and concurrent launches, against NumPy."""

from __future__ import annotations

import threading

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st

OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8]


def dev(a):
    return ow.tensor(np.array(a, order="C")).to("opencl")  # 0-dim stays 0-dim


def host(t):
    return t.numpy(force=True)


def _values(rng, shape, dtype):
    if np.issubdtype(dtype, np.floating):
        x = np.asarray(rng.standard_normal(shape), dtype)
        if x.size:
            x.flat[0] = np.nan
        if x.size > 2:
            x.flat[1], x.flat[2] = np.inf, -0.0
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


broadcastable = st.tuples(
    st.lists(st.integers(0, 4), max_size=3), st.lists(st.booleans(), min_size=3, max_size=3), st.integers(0, 2)
).map(lambda t: (tuple(t[0]), tuple(1 if one else n for n, one in zip(t[0], t[1])), t[2]))


@given(broadcastable, st.sampled_from(list(OPS)), st.sampled_from(DTYPES), st.integers(0, 2**31))
def test_binary_ops_match_numpy_over_broadcasts_and_views(ocl, shapes, name, dtype, seed):
    shape_a, shape_b, drop = shapes
    shape_b = shape_b[drop:]  # fewer dims on the right operand: broadcast by rank too
    rng = np.random.default_rng(seed)
    x, y = _values(rng, shape_a, dtype), _values(rng, shape_b, dtype)
    a = dev(x.T).T if x.ndim >= 2 else dev(x)  # a transposed view when it has two dims
    got = getattr(ow, name)(a, dev(y))
    if name == "div" and not np.issubdtype(dtype, np.floating):
        x, y = x.astype(np.float32), y.astype(np.float32)  # integers divide in the default float dtype
    with np.errstate(all="ignore"):
        want = OPS[name](x, y)
    assert got.dtype.numpy == want.dtype
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(host(got), want)


def test_direct_path_keeps_the_decompositions_layout(ocl):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = dev(x.T).T  # column-major
    direct = t + t
    assert direct.stride() == (1, 3)  # the layout of the non-broadcast input, as the prim's meta gives
    np.testing.assert_array_equal(host(direct), x + x)


def test_alpha_mixed_dtypes_and_cpu_scalars_take_the_decomposition(ocl):
    x = np.array([1.0, 2.0, 3.0], np.float32)
    a = dev(x)
    np.testing.assert_array_equal(host(ow.add(a, a, alpha=2)), x + 2 * x)
    np.testing.assert_array_equal(host(ow.sub(a, dev(x.astype(np.float64)))), np.zeros(3))
    np.testing.assert_array_equal(host(a * 2), x * 2)
    assert (a + dev(np.array([1, 2, 3], np.int32))).dtype == ow.float32


def test_mismatched_shapes_raise_the_decompositions_error_and_keep_inputs(ocl):
    a, b = dev(np.ones((2, 3), np.float32)), dev(np.ones((4,), np.float32))
    with pytest.raises(ValueError, match="add"):
        a + b
    np.testing.assert_array_equal(host(a), np.ones((2, 3)))


def test_repeated_launches_reuse_a_bound_kernel(ocl):
    from opweave_opencl import _runtime

    rt = _runtime.runtime(0)
    a = dev(np.arange(5, dtype=np.float32))
    before = len(rt._bound)
    results = [host(a * a) for _ in range(_runtime.HOT + 2)]
    for r in results:
        np.testing.assert_array_equal(r, np.arange(5, dtype=np.float32) ** 2)
    assert any(key[0].function_name.startswith("s_float32") for key in rt._bound) or len(rt._bound) > before


def test_bound_kernels_keep_negative_zero_distinct(ocl):
    ow.manual_seed(0)
    for value in [0.0, -0.0] * 4:
        t = ow.full((3,), value, device="opencl")
        assert np.signbit(host(t)).tolist() == [np.signbit(value)] * 3


def test_concurrent_launches_from_threads_give_each_its_own_result(ocl):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(n).astype(np.float32) for n in (3, 5, 7, 3, 5, 7, 11, 13)]
    results: dict = {}

    def work(i):
        t = dev(arrays[i])
        out = t
        for _ in range(20):
            out = out + t
        results[i] = host(out)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i, x in enumerate(arrays):
        want = x.copy()
        for _ in range(20):
            want = want + x
        np.testing.assert_array_equal(results[i], want)


def test_large_contiguous_operands_cover_a_partial_last_block(ocl):
    from opweave_kernelgen.kernels._common import CONTIGUOUS_MIN, CPU_BLOCK

    n = CONTIGUOUS_MIN + CPU_BLOCK + 3
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    np.testing.assert_array_equal(host(dev(x) + dev(y)), x + y)
    np.testing.assert_allclose(host(ow.exp(dev(x[: n - 1] / n))), np.exp(x[: n - 1] / n), rtol=4e-7)


@pytest.mark.parametrize(
    "shape,dims", [((1 << 16,), None), ((300, 257), (1,)), ((257, 300), (0,)), ((6, 7, 8), (0, 2))]
)
def test_sums_over_contiguous_and_strided_dims(ocl, shape, dims):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    got = host(ow.sum(dev(x), dims)) if dims is not None else host(ow.sum(dev(x)))
    want = x.astype(np.float64).sum(axis=dims)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(host(ow.amax(dev(x), dims if dims else ())), x.max(axis=dims))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 16, 37, 64])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_match_the_numpy_formula(ocl, dtype, n, log):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((9, n)) * 10).astype(dtype)
    x[1, 0], x[2, :], x[3, -1] = np.nan, -np.inf, np.inf
    t = dev(np.concatenate([x[:1], x]))[1:]  # a storage offset of one row (vector path only when n allows)
    with np.errstate(all="ignore"):
        shifted = x - x.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        want = shifted - np.log(e.sum(axis=1, keepdims=True)) if log else e / e.sum(axis=1, keepdims=True)
    got = host((ow.log_softmax if log else ow.softmax)(t, -1))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=tol, atol=tol)


def test_softmax_along_another_dim_or_with_a_dtype_takes_the_decomposition(ocl):
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    e = np.exp(x - x.max(axis=0))
    np.testing.assert_allclose(host(ow.softmax(dev(x), 0)), e / e.sum(axis=0), rtol=1e-6)
    got = ow.softmax(dev(x), 1, dtype=ow.float64)
    assert got.dtype == ow.float64
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(host(got), e / e.sum(axis=1, keepdims=True), rtol=1e-12)
