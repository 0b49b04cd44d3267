"""Values of the one-launch canonical kernels (``kernels.canonical_activations``) on the OpenCL device, against NumPy.

The CUDA backend runs the same generated kernels (the dry-device tests check it launches them once); here
PoCL runs them. References are the formulas evaluated in float64 and rounded once to the dtype.
"""

from __future__ import annotations

import operator

import ml_dtypes
import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("pyopencl")
F = ow.nn.functional


@pytest.fixture(scope="module", autouse=True)
def ocl():
    import opweave_opencl

    if not opweave_opencl.is_available():
        pytest.skip(f"no OpenCL device: {opweave_opencl.unavailable_reason()}")


def _erf(x):
    from scipy.special import erf

    return erf(x)


REFS = {
    "relu": (ow.relu, lambda x: np.where(x <= 0, 0.0, x)),  # +0.0 for -0.0, as the decomposition (PyTorch: -0.0)
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf(x * np.sqrt(0.5)))),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda x: np.where(x > 0, x, x * 0.2)),
    "gelu_tanh": (
        lambda t: F.gelu(t, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
}
FLOAT_DTYPES = {"float32": np.float32, "float64": np.float64, "bfloat16": ml_dtypes.bfloat16}
BOUND = 1e4  # |x| of the finite draws (see _tolerance)

layouts = st.sampled_from(["contiguous", "transposed", "strided"])


def _device(x, dtype: str, layout: str):
    """``x`` (float64 values exact in ``dtype``) as a ``dtype`` OpenCL tensor of ``layout``, and its values."""
    if layout == "transposed" and x.ndim == 2:
        t = ow.tensor(np.ascontiguousarray(x.T)).to("opencl").to(getattr(ow, dtype)).t()
    elif layout == "strided" and x.ndim >= 1:
        wide = np.repeat(x, 2, axis=-1)
        t = ow.tensor(wide).to("opencl").to(getattr(ow, dtype))[..., ::2]
    else:
        t = ow.tensor(x).to("opencl").to(getattr(ow, dtype))
    return t


def _tolerance(x, ref, dtype: str):
    """Each formula's rounding bound: a few units of the compute type relative to |ref|, plus |x| for gelu.

    gelu's ``1 + erf``/``1 + tanh`` cancels for negative x, so its absolute error is that of erf/tanh (near 1)
    times ``0.5 |x|``; silu's ``exp(-x)`` overflows for x below -log(max), flushing results under ``|x| / max``.
    16-bit floats compute in float and round once: one unit of the result's last place on top.
    """
    compute = np.float32 if dtype == "bfloat16" else FLOAT_DTYPES[dtype]
    eps, big = float(np.finfo(compute).eps), float(np.finfo(compute).max)
    tol = 16 * eps * (np.abs(ref) + np.abs(x)) + 4 * BOUND / big
    if dtype == "bfloat16":
        tol = tol + np.abs(ref) * 2.0**-8
    return tol


def _check(name: str, x, dtype: str, layout: str):
    op, formula = REFS[name]
    t = _device(x, dtype, layout)
    got = op(t)
    assert got.dtype == t.dtype and got.shape == t.shape and got.device == t.device
    values = t.double().numpy(force=True)
    with np.errstate(all="ignore"):
        ref = formula(values)
    got = got.double().numpy(force=True)
    assert np.array_equal(np.isnan(got), np.isnan(ref)), (values, got, ref)
    fin = ~np.isnan(ref)
    if name == "relu":  # exact, sign of zero included
        assert np.array_equal(got[fin], ref[fin]) and np.array_equal(np.signbit(got), np.signbit(ref))
        return
    inf = fin & np.isinf(ref)
    assert np.array_equal(got[inf], ref[inf]), (values[inf], got[inf])
    fin &= ~inf
    err = np.abs(got[fin] - ref[fin])
    assert np.all(err <= _tolerance(values[fin], ref[fin], dtype)), (values[fin], got[fin], ref[fin])


finite = st.floats(-BOUND, BOUND, width=32)
special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0])


@pytest.mark.parametrize("dtype", sorted(FLOAT_DTYPES))
@pytest.mark.parametrize("name", sorted(REFS))
@given(
    x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5), elements=finite),
    layout=layouts,
)
def test_float_activations_match_their_formulas(name, dtype, x, layout):
    x = x.astype(FLOAT_DTYPES[dtype]).astype(np.float64)  # values exact in the dtype
    _check(name, x, dtype, layout)


@pytest.mark.parametrize("dtype", sorted(FLOAT_DTYPES))
@pytest.mark.parametrize("name", ["relu", "silu", "gelu", "leaky_relu"])
def test_specials_follow_the_formulas(name, dtype):
    """nan stays nan (relu too), relu(-0.0) is +0.0, ±inf as the formulas give (silu(-inf) and gelu(-inf) are nan).

    gelu's tanh form is left out: OpenCL allows tanh(-inf) one unit off -1 (PoCL's is), which makes
    ``0.5 * -inf * (1 + tanh)`` -inf instead of nan; CUDA's tanhf is exact there.
    """
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -1.5])
    for layout in ("contiguous", "strided"):
        _check(name, x, dtype, layout)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_integer_relu_is_exact(dtype):
    info = np.iinfo(dtype)
    x = np.array(sorted({info.min, max(info.min, -1), 0, 1, info.max}), dtype)
    got = ow.relu(ow.tensor(x).to("opencl"))
    assert got.dtype == getattr(ow, np.dtype(dtype).name)
    assert np.array_equal(got.numpy(force=True), np.where(x <= 0, 0, x).astype(dtype))


SCALAR_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
SCALAR_DTYPES = [np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64]


def _reference(name: str, x, value, dtype, reflected: bool):
    """NumPy's result in ``dtype`` of ``x op value`` (``value op x`` when ``reflected``), the scalar cast first."""
    s = np.array(value).astype(dtype)
    with np.errstate(all="ignore"):
        return SCALAR_OPS[name](s, x) if reflected else SCALAR_OPS[name](x, s)


@pytest.mark.parametrize("dtype", SCALAR_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
    data=st.data(),
    layout=layouts,
    reflected=st.booleans(),
)
def test_tensor_scalar_ops_keep_the_tensor_dtype(name, dtype, shape, data, layout, reflected):
    """``a op 2.5`` / ``3 op a`` on a device tensor: the tensor's dtype, the scalar cast to it (PyTorch's rule)."""
    if name == "div" and not np.issubdtype(dtype, np.floating):
        pytest.skip("integer division promotes to float: the decomposition")
    floating = np.issubdtype(dtype, np.floating)
    if floating:
        x = data.draw(hnp.arrays(dtype, shape, elements=st.floats(width=32) | special))
        value = data.draw(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(2**40), 2**40) | st.booleans())
    else:
        info = np.iinfo(dtype)
        x = data.draw(hnp.arrays(dtype, shape))
        value = data.draw(st.integers(int(info.min), int(info.max)) | st.booleans())
    t = _device(x.astype(np.float64) if floating else x, np.dtype(dtype).name, layout)
    op = getattr(operator, "truediv" if name == "div" else name)
    got = op(value, t) if reflected else op(t, value)  # 2.5 - t: Tensor.__rsub__
    ref = _reference(name, t.numpy(force=True), value, dtype, reflected)
    assert got.dtype == t.dtype and got.device == t.device and got.shape == t.shape
    np.testing.assert_array_equal(got.numpy(force=True), ref)


def test_zero_dim_cpu_tensor_of_the_same_dtype_is_a_scalar():
    x = np.array([1.0, -0.0, np.inf], np.float32)
    got = ow.tensor(x).to("opencl") * ow.tensor(np.float32(-2.0))
    assert got.device.type == "opencl" and got.dtype == ow.float32
    np.testing.assert_array_equal(got.numpy(force=True), x * np.float32(-2.0))


def test_a_float_scalar_promotes_an_integer_tensor():
    got = ow.tensor(np.array([1, 2], np.int32)).to("opencl") - 0.5
    assert got.dtype == ow.float32
    np.testing.assert_array_equal(got.numpy(force=True), np.array([0.5, 1.5], np.float32))
