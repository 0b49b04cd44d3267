"""``normal``, ``bernoulli``, ``randperm`` (and bfloat16 ``uniform``/``randint``) on the device, bit for bit.

The expected values are the formulas of the Philox specification written out here
over its word stream (``opweave._philox.random_words``, itself checked against the
published Philox test vectors).
"""

from __future__ import annotations

import warnings

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave import _fallback
from opweave._philox import random_words

P = ow.ops.prims


def dev(a):
    return ow.tensor(np.ascontiguousarray(a)).to("opencl")


def host(t):
    return t.numpy(force=True)


def on_device(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, checking that no prim ran through the CPU fallback."""
    before = sum(_fallback.calls.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = fn(*args, **kwargs)
    assert sum(_fallback.calls.values()) == before, "a prim ran through the CPU fallback"
    return result


def unit53(a, b):
    return (a >> 5).astype(np.float64) * 2.0**26 + (b >> 6).astype(np.float64)


def normal_formula(n, mean, std, seed, offset, np_dtype):
    pairs = -(-n // 2)
    w = random_words(4 * pairs, seed, offset).reshape(pairs, 4)
    u1 = (unit53(w[:, 0], w[:, 1]) + 1.0) * 2.0**-53
    u2 = unit53(w[:, 2], w[:, 3]) * 2.0**-53
    r, theta = np.sqrt(-2.0 * np.log(u1)), 2.0 * np.pi * u2
    z = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)[:n]
    return (mean + std * z).astype(np_dtype)


def uniform_formula(n, seed, offset, float64):
    if float64:
        w = random_words(2 * n, seed, offset)
        return unit53(w[0::2], w[1::2]) * 2.0**-53
    return (random_words(n, seed, offset) >> 8).astype(np.float64) * 2.0**-24


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_normal_bit_exact_on_a_million_samples(ocl, dtype):
    t = getattr(ow, dtype)
    n = (1 << 20) + 1
    got = host(on_device(P.normal, [n], 0.25, 3.0, 2**40 + 17, 123, dtype=t, device="opencl"))
    np.testing.assert_array_equal(bits(got), bits(normal_formula(n, 0.25, 3.0, 2**40 + 17, 123, t.numpy)))


def test_normal_float64_within_a_few_ulp(ocl):
    # The device's double log/sin/cos may differ from NumPy's by an ulp (see kernels/random.py).
    n = 100_001
    # mean 0 and std 0.5 keep z's ulp error visible as is (no cancellation in mean + std * z).
    got = host(on_device(P.normal, [n], 0.0, 0.5, 9, 2**64 - 3, dtype=ow.float64, device="opencl"))
    expected = normal_formula(n, 0.0, 0.5, 9, 2**64 - 3, np.float64)
    assert np.abs(got.view(np.int64) - expected.view(np.int64)).max() <= 4
    shifted = host(on_device(P.normal, [n], -1.0, 0.5, 9, 2**64 - 3, dtype=ow.float64, device="opencl"))
    np.testing.assert_allclose(shifted, normal_formula(n, -1.0, 0.5, 9, 2**64 - 3, np.float64), rtol=0, atol=1e-15)


def test_normal_shapes_and_zero_std(ocl):
    got = on_device(P.normal, [2, 0, 3], 0.0, 1.0, 1, 0, dtype=ow.float32, device="opencl")
    assert tuple(got.shape) == (2, 0, 3)
    scalar = on_device(P.normal, [], 5.0, 0.0, 1, 0, dtype=ow.float32, device="opencl")
    assert tuple(scalar.shape) == () and host(scalar) == 5.0
    got = host(on_device(P.normal, [3, 5], 1.0, 2.0, 4, 8, dtype=ow.float32, device="opencl"))
    np.testing.assert_array_equal(bits(got), bits(normal_formula(15, 1.0, 2.0, 4, 8, np.float32).reshape(3, 5)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "offset", "broadcast"])
def test_bernoulli_over_any_layout(ocl, dtype, layout):
    t = getattr(ow, dtype)
    rng = np.random.default_rng(0)
    p = rng.random((6, 7)).astype(t.numpy)
    p[0, :3] = [0.0, 1.0, -0.0]
    if layout == "transposed":
        pd = dev(p.T).transpose(0, 1)
    elif layout == "offset":
        pd = dev(np.concatenate([p[:1], p]))[1:]
    elif layout == "broadcast":
        p = np.broadcast_to(p[2], p.shape)
        pd = dev(p[2]).expand(6, 7)
    else:
        pd = dev(p)
    got = host(on_device(P.bernoulli, pd, 77, 5))
    u = uniform_formula(p.size, 77, 5, dtype == "float64").reshape(p.shape)
    expected = (u < p.astype(np.float64)).astype(t.numpy)
    assert got.dtype == t.numpy
    np.testing.assert_array_equal(bits(got), bits(expected))
    if layout != "broadcast":
        assert (got[0, :3].astype(np.float64) == [0, 1, 0]).all()


def test_bernoulli_empty_scalar_and_invalid_p(ocl):
    assert tuple(on_device(P.bernoulli, dev(np.ones((0, 4), np.float32)), 1, 0).shape) == (0, 4)
    scalar = on_device(P.bernoulli, ow.tensor(np.array(1.0, np.float32)).to("opencl"), 1, 0)
    assert tuple(scalar.shape) == () and host(scalar) == 1.0
    for bad in (1.5, -0.25, np.nan):
        p = dev(np.array([0.5, bad], np.float32))
        with warnings.catch_warnings(), pytest.raises(ValueError, match="bernoulli"):
            warnings.simplefilter("ignore")  # the CPU kernel raises; its fallback warns once
            P.bernoulli(p, 1, 0)
        assert host(p)[0] == 0.5


def keys_formula(n, seed, offset):
    w = random_words(2 * n, seed, offset).astype(np.uint64)
    return w[0::2] | (w[1::2] << np.uint64(32))


@given(st.integers(0, 3000), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_randperm_is_the_stable_argsort_of_the_keys(ocl, n, seed, offset):
    got = host(on_device(P.randperm, n, seed, offset, dtype=ow.int64, device="opencl"))
    np.testing.assert_array_equal(got, np.argsort(keys_formula(n, seed, offset), kind="stable"))


@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8", "float32", "float64", "bfloat16"])
def test_randperm_dtypes(ocl, dtype):
    t = getattr(ow, dtype)
    n = 200
    got = host(on_device(P.randperm, n, 3, 4, dtype=t, device="opencl"))
    assert got.dtype == t.numpy
    np.testing.assert_array_equal(got.astype(np.int64), np.argsort(keys_formula(n, 3, 4), kind="stable"))


def test_randperm_large(ocl):
    n = 100_003
    got = host(on_device(P.randperm, n, 11, 2**63, dtype=ow.int64, device="opencl"))
    np.testing.assert_array_equal(got, np.argsort(keys_formula(n, 11, 2**63), kind="stable"))


def test_bfloat16_uniform_and_randint(ocl):
    n = 4099
    got = host(on_device(P.uniform, [n], -2.0, 3.0, 5, 6, dtype=ow.bfloat16, device="opencl"))
    v = (-2.0 + 5.0 * uniform_formula(n, 5, 6, False)).astype(np.float32).astype(ow.bfloat16.numpy)
    below = np.array(3.0, ow.bfloat16.numpy)
    below = np.array(bits(below) - 1, np.uint16).view(ow.bfloat16.numpy)  # the largest bfloat16 below 3
    v = np.where(v.astype(np.float64) >= 3.0, below, v)
    np.testing.assert_array_equal(bits(got), bits(v))
    got = host(on_device(P.randint, [n], -7, 100, 5, 6, dtype=ow.bfloat16, device="opencl"))
    w = random_words(2 * n, 5, 6).astype(np.uint64)
    expected = (w[0::2] | (w[1::2] << np.uint64(32))) % np.uint64(107)
    np.testing.assert_array_equal(got.astype(np.int64), expected.astype(np.int64) - 7)
