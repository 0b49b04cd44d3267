"""Generated OpenCL kernels against NumPy oracles: elementwise over any layout, reductions, matmul, random."""

from __future__ import annotations

import warnings

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st

P = ow.ops.prims


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.array(a, order="C")).to("opencl")  # 0-dim stays 0-dim


def host(t):
    return t.numpy(force=True)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
layouts = st.sampled_from(["contiguous", "transposed", "strided", "broadcast"])


def laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a view with the requested layout (same logical values)."""
    if layout == "transposed" and x.ndim >= 2:
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided" and x.ndim >= 1:
        wide = np.repeat(x, 2, axis=-1)
        return dev(wide)[..., ::2]
    if layout == "broadcast" and x.ndim >= 1 and x.shape[0] > 0:
        row = x[:1]
        if (x == row).all():
            return dev(row).expand(*x.shape)
    return dev(x)


@given(shapes, layouts, layouts, st.sampled_from(["add", "mul", "sub", "maximum", "lt"]), st.integers(0, 2**31))
def test_binary_elementwise_over_any_layout(ocl, shape, la, lb, name, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    if x.size:
        x.flat[0] = np.nan
    oracle = {"add": np.add, "mul": np.multiply, "sub": np.subtract, "maximum": np.maximum, "lt": np.less}[name]
    got = getattr(P, name)(laid_out(x, la), laid_out(y, lb))
    np.testing.assert_allclose(host(got), oracle(x, y), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_integer_arithmetic_wraps(ocl, dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, 7, -3 if info.min else 3], dtype)
    y = np.array([1, -1 if info.min else 1, 9, 5], dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(host(P.add(dev(x), dev(y))), x + y)
        np.testing.assert_array_equal(host(P.mul(dev(x), dev(y))), x * y)
        np.testing.assert_array_equal(host(P.neg(dev(x))), -x)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh", "sqrt", "sigmoid", "floor", "isnan"])
def test_unary_float_with_special_values(ocl, name):
    x = np.array([0.0, -0.0, 0.5, -1.5, 3.0, np.inf, -np.inf, np.nan], np.float64)
    oracle = {
        "exp": np.exp,
        "log": np.log,
        "sin": np.sin,
        "tanh": np.tanh,
        "sqrt": np.sqrt,
        "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
        "floor": np.floor,
        "isnan": np.isnan,
    }[name]
    with np.errstate(all="ignore"):
        expected = oracle(x)
    np.testing.assert_allclose(host(getattr(P, name)(dev(x))), expected, rtol=1e-12)


def test_casts_follow_numpy(ocl):
    x = np.array([-2.7, -0.5, 0.0, 0.4, 1.5, 2.5, 100.9], np.float32)
    for dt, np_dt in [(ow.int32, np.int32), (ow.int64, np.int64), (ow.bool, np.bool_), (ow.float64, np.float64)]:
        np.testing.assert_array_equal(host(P.convert_element_type(dev(x), dt)), x.astype(np_dt))
    import ml_dtypes

    got = host(P.convert_element_type(dev(x * 1.001), ow.bfloat16))
    assert got.tobytes() == (x * 1.001).astype(ml_dtypes.bfloat16).tobytes()


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple), st.data())
def test_reductions_over_any_dims(ocl, shape, data):
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    x = np.random.default_rng(len(dims)).standard_normal(shape)
    axes = tuple(sorted(dims)) if dims else tuple(range(len(shape)))
    t = laid_out(x, data.draw(layouts))
    np.testing.assert_allclose(host(P.sum(t, dims or None)), x.sum(axis=axes), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(host(P.amax(t, dims or None)), x.max(axis=axes))
    np.testing.assert_array_equal(host(P.any(t, dims or None)), (x != 0).any(axis=axes))


def test_large_sum_splits_across_groups(ocl):
    x = np.random.default_rng(0).random(1 << 18).astype(np.float32)
    assert abs(float(host(P.sum(dev(x), None))) - x.astype(np.float64).sum()) < 1e-3 * x.size**0.5
    x[1234] = np.nan
    assert np.isnan(host(P.amax(dev(x), None)))


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 0, 3), (33, 65, 17), (64, 40, 96)])
def test_matmul_matches_numpy_for_transposed_operands(ocl, m, k, n):
    rng = np.random.default_rng(m * n)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    at = dev(a.T).t()
    np.testing.assert_allclose(host(P.mm(at, dev(b))), a @ b, rtol=1e-10, atol=1e-10)
    batch = rng.standard_normal((3, k, n)).astype(np.float32)
    got = P.bmm(dev(np.broadcast_to(a.astype(np.float32), (3, m, k))), dev(batch))
    np.testing.assert_allclose(host(got), a.astype(np.float32) @ batch, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [ow.float32, ow.float64])
def test_random_prims_equal_the_cpu_bit_for_bit(ocl, dtype):
    for seed, offset in [(0, 0), (2**63 + 5, 2**64 - 3), (-7, 12345)]:
        a, b = (P.uniform((5, 9), -2.0, 3.0, seed, offset, dtype=dtype, device=d) for d in ("opencl", "cpu"))
        assert host(a).tobytes() == b.numpy().tobytes()
        a, b = (P.random_bits((17,), seed, offset, device=d) for d in ("opencl", "cpu"))
        assert host(a).tobytes() == b.numpy().tobytes()
        a, b = (P.randint((11,), -(2**40), 2**40, seed, offset, dtype=ow.int64, device=d) for d in ("opencl", "cpu"))
        assert host(a).tobytes() == b.numpy().tobytes()
    ow.manual_seed(3)
    x = ow.randn(6, device="opencl")
    ow.manual_seed(3)
    assert host(x).tobytes() == ow.randn(6).numpy().tobytes()


def test_cpu_fallback_runs_cases_a_kernel_declines_with_one_warning(ocl):
    from opweave import _fallback

    a = np.array([1 + 2j, -3j], np.complex64)  # complex lerp: the lerp kernel hands it to the fallback
    b, w = np.array([5 - 1j, 2 + 2j], np.complex64), np.array([0.25, 0.5], np.complex64)
    before = _fallback.calls["prims::lerp"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = P.lerp(dev(a), dev(b), dev(w))
        P.lerp(dev(b), dev(a), dev(w))
    assert got.device.type == "opencl"
    np.testing.assert_allclose(host(got), a + w * (b - a), rtol=1e-6)
    assert _fallback.calls["prims::lerp"] == before + 2
    messages = [str(w.message) for w in caught if "prims::lerp" in str(w.message)]
    assert len(messages) <= 1  # once per process (possibly already given)


def test_fallback_writes_back_into_device_tensors(ocl):
    z = ow.zeros(2, 3, dtype=ow.complex64, device="opencl")
    P.copy_to(z, dev(np.full((2, 3), 1 + 2j, np.complex64)))
    np.testing.assert_array_equal(host(z), np.full((2, 3), 1 + 2j, np.complex64))


def test_explain_names_the_cpu_fallback_and_the_opt_in(ocl):
    from opweave import _fallback
    from opweave_opencl import BACKEND

    x = dev(np.ones((2, 2)))
    assert "CPU fallback" in str(ow.dispatch.explain(P.eig, x))
    assert "opencl" in str(ow.dispatch.explain(P.add, x, x)).split("Dense")[-1]
    assert _fallback.enabled(BACKEND)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), st.data())
def test_gather_and_index_select_match_numpy(ocl, shape, data):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape)
    d = data.draw(st.integers(0, len(shape) - 1))
    n = shape[d]
    picks = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=5)), np.int64)  # negatives raise
    t = laid_out(x, data.draw(layouts))
    np.testing.assert_array_equal(host(P.index_select(t, d, dev(picks))), np.take(x, picks, axis=d))
    index = rng.integers(0, n, size=shape)
    got = P.gather(t, d, dev(index))
    np.testing.assert_array_equal(host(got), np.take_along_axis(x, index, axis=d))


def test_an_out_of_range_index_raises_the_prims_index_error(ocl):
    a = dev(np.zeros((2, 3)))
    with pytest.raises(ow.IndexOutOfBoundsError, match="prims::gather: index 3 is out of bounds"):
        P.gather(a, 1, dev(np.array([[0, 3]])))


def test_large_contiguous_operands_take_the_contiguous_kernel(ocl):
    from opweave_kernelgen.kernels._common import CONTIGUOUS_MIN

    rng = np.random.default_rng(1)
    x, y = rng.random(CONTIGUOUS_MIN + 3), rng.random(CONTIGUOUS_MIN + 3)
    np.testing.assert_array_equal(host(P.mul(dev(x), dev(y))), x * y)
    np.testing.assert_array_equal(host(P.convert_element_type(dev(x), ow.float32)), x.astype(np.float32))


def test_deterministic_mode_runs_nondeterministic_prims_on_the_cpu(ocl):
    from opweave import _fallback

    x, index = np.zeros(4, np.float32), np.array([0, 0, 3, 0])
    src = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    want = x.copy()
    np.add.at(want, index, src)
    before = _fallback.calls["prims::scatter_add"]
    ow.use_deterministic_algorithms(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = ow.scatter_add(dev(x), 0, dev(index), dev(src))
    finally:
        ow.use_deterministic_algorithms(False)
    assert got.device.type == "opencl"
    np.testing.assert_array_equal(host(got), want)
    assert _fallback.calls["prims::scatter_add"] == before + 1


@pytest.mark.parametrize("name", ["pow", "remainder", "fmod", "div"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_binary_prims_with_integer_forms_run_on_the_device_for_every_dtype(ocl, name, dtype):
    from opweave import _fallback

    x = np.array([7, 5, 9, 2], dtype)
    y = np.array([2, 3, 2, 5], dtype)
    oracle = {"pow": np.power, "remainder": np.remainder, "fmod": np.fmod}.get(name)
    if name == "div":
        oracle = np.true_divide if np.issubdtype(dtype, np.floating) else (lambda a, b: np.trunc(a / b).astype(dtype))
    before = sum(_fallback.calls.values())
    got = host(getattr(P, name)(dev(x), dev(y)))
    assert sum(_fallback.calls.values()) == before
    np.testing.assert_allclose(got, oracle(x, y), rtol=1e-6)


@pytest.mark.parametrize(
    ("version", "preferred", "expected"),
    [
        ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-znver3", 16, 32),  # Zen 4 under LLVM 14
        ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-znver4", 16, 64),
        ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-sapphirerapids", 16, 64),
        ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-skylake-avx512", 16, 64),
        ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-skylake", 8, 32),
        ("OpenCL 3.0 (Build 0)", 8, 32),  # another driver: its preferred width
        ("OpenCL 3.0 (Build 0)", 16, 64),
    ],
)
def test_vector_width_comes_from_the_compile_target(version, preferred, expected):
    from opweave_opencl._runtime import vector_bytes

    assert vector_bytes(version, preferred) == expected
