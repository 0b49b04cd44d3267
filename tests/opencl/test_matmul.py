"""OpenCL matrix products against NumPy: the packed register-blocked kernel (CPU devices) and the tiled one."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def dev(a):
    return ow.tensor(np.array(a, order="C")).to("opencl")


def host(t):
    return t.numpy(force=True)


def _operand(x: np.ndarray, layout: str):
    if layout == "transposed":
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided":
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset":
        return dev(np.concatenate([x, x], axis=-2))[..., x.shape[-2] :, :]
    return dev(x)


layouts = st.sampled_from(["contiguous", "transposed", "strided", "offset"])


@settings(max_examples=12, deadline=None)
@given(
    st.integers(1, 80), st.integers(1, 70), st.integers(1, 90), layouts, layouts,
    st.sampled_from([np.float32, np.float64]), st.integers(0, 2**31),
)  # fmt: skip
def test_products_big_enough_for_the_packed_kernel_match_numpy(ocl, m, k, n, la, lb, dtype, seed):
    from opweave_kernelgen.kernels.linalg import PACKED_MIN

    k = max(k, -(-PACKED_MIN // (m * n)))  # enough multiply-adds for the packed path (edges in M and N stay)
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    got = host(_operand(x, la) @ _operand(y, lb))
    want = x.astype(np.float64) @ y.astype(np.float64)
    tol = 1e-4 * np.sqrt(k) if dtype == np.float32 else 1e-11 * np.sqrt(k)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("shapes", [((4, 70, 80), (4, 80, 90)), ((1, 64, 64), (3, 64, 65)), ((2, 300, 5), (5, 200))])
def test_batched_and_broadcast_products(ocl, shapes):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(shapes[0]).astype(np.float32), rng.standard_normal(shapes[1]).astype(np.float32)
    np.testing.assert_allclose(host(dev(x) @ dev(y)), x.astype(np.float64) @ y, rtol=1e-4, atol=1e-4)


def test_special_values_propagate_through_the_packed_kernel(ocl):
    x = np.ones((64, 64), np.float32)
    y = np.ones((64, 80), np.float32)
    x[3, 5], y[7, 70] = np.nan, np.inf
    got, want = host(dev(x) @ dev(y)), x @ y
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(got[~np.isnan(want) & ~np.isinf(want)], want[~np.isnan(want) & ~np.isinf(want)])


def test_empty_inner_dimension_gives_zeros(ocl):
    got = host(dev(np.ones((70, 0), np.float32)) @ dev(np.ones((0, 90), np.float32)))
    np.testing.assert_array_equal(got, np.zeros((70, 90), np.float32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_integer_products_wrap_like_numpy(ocl, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    x = rng.integers(info.min, info.max, (6, 9), dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, (2, 9, 5), dtype=dtype, endpoint=True)
    with np.errstate(over="ignore"):
        want = x @ y
    np.testing.assert_array_equal(host(dev(x) @ dev(y)), want)
