"""Values of the one-launch canonical kernels (``kernels.canonical_activations``) on the OpenCL device, against NumPy.

The CUDA backend runs the same generated kernels (the dry-device tests check it launches them once); here
PoCL runs them. References are the formulas evaluated in float64 and rounded once to the dtype.
"""

from __future__ import annotations

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
@pytest.mark.parametrize("name", ["relu", "silu", "gelu"])
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
