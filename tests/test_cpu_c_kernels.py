"""The CPU backend's compiled C kernels (``OPWEAVE_CPU_KERNELS=c``) against NumPy formulas written here.

Each kernel is called directly (it must take the call: a float32/float64 tensor of the layout it has a
loop for) and through the public op on the ``c`` path (any layout: a view it has no loop for goes to
NumPy). Inputs mix ordinary values with nan, ±inf and -0.0; shapes include 0-dim, empty, transposed
and broadcast operands. Tolerances: elementwise math is the C library's vector functions (a few ulp);
sums and norms accumulate in double, so they are closer to the exact value than a float32 NumPy sum.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("cffi")
from opweave_cpu.kernels import _c_kernels as ck  # noqa: E402
from opweave_cpu.kernels import _c_path  # noqa: E402

F = ow.nn.functional
DTYPES = (np.float32, np.float64)


@pytest.fixture(autouse=True, scope="module")
def c_path():
    ow.cpu.set_kernel_path("c")
    if _c_path.library() is None:
        ow.cpu.set_kernel_path(None)
        pytest.skip(f"no compiled C kernels: {_c_path.describe()}")
    yield
    ow.cpu.set_kernel_path(None)


def _values(dtype, special: bool):
    finite = st.floats(-30, 30, width=np.dtype(dtype).itemsize * 8)
    if not special:
        return finite
    return st.one_of(finite, st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0]))


@st.composite
def arrays(draw, min_dims=0, max_dims=3, min_side=0, special=True, dtype=None):
    dtype = dtype or draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=6))
    return draw(hnp.arrays(dtype, shape, elements=_values(dtype, special)))


def ulps(dtype, n=4):
    return n * np.finfo(dtype).eps


def close(actual, expected, rtol, atol=0.0):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


def _same_special(actual, expected):
    """nan and ±inf where the formula has them, with their signs."""
    e = np.asarray(expected)
    for mask in (np.isnan(e), e == np.inf, e == -np.inf):
        assert np.array_equal(np.asarray(actual)[mask], e[mask], equal_nan=True)


def _direct(name, *args):
    r = ck.C_KERNELS[name](*args)
    assert r is not None, f"the C kernel of {name} did not take the call"
    return r.numpy()


# -- elementwise ---------------------------------------------------------------------------------


def _np_sigmoid(x):
    return sp.expit(x)


UNARY = {
    "exp": (np.exp, ow.exp),
    "expm1": (np.expm1, ow.expm1),
    "log": (np.log, ow.log),
    "log1p": (np.log1p, ow.log1p),
    "tanh": (np.tanh, ow.tanh),
    "sigmoid": (_np_sigmoid, ow.sigmoid),
    "erf": (sp.erf, ow.erf),
    "sqrt": (np.sqrt, ow.sqrt),
}


@pytest.mark.parametrize("op", sorted(UNARY))
@given(x=arrays(min_side=1))
def test_unary_matches_numpy(op, x):
    formula, public = UNARY[op]
    if op in ("log", "sqrt", "log1p"):
        x = np.abs(x) if op != "log1p" else np.abs(x) - 0.5
    with np.errstate(all="ignore"):
        want = formula(x.astype(np.float64)).astype(x.dtype)
    got = _direct(f"prims::{op}", ow.tensor(x))
    # a few ulp relative, and an absolute ulp of 1 near the zeros of expm1/log1p/tanh/erf
    close(got, want, rtol=ulps(x.dtype), atol=np.finfo(x.dtype).tiny * 4)
    _same_special(got, want)
    t = ow.tensor(x)
    if t.ndim == 2:  # a transposed view: no C loop, NumPy's kernel
        t, want = t.t(), want.T
    close(public(t).numpy(), want, ulps(x.dtype), atol=np.finfo(x.dtype).tiny * 4)


@given(x=arrays(min_side=1), approximate=st.sampled_from(["none", "tanh"]))
def test_gelu_and_silu(x, approximate):
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if approximate == "none":
            want = 0.5 * x64 * (1 + sp.erf(x64 / math.sqrt(2)))
        else:
            want = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
        silu = x64 * sp.expit(x64)
    finite = np.isfinite(x)
    got = _direct("gelu", ow.tensor(x), approximate)
    close(got[finite], want.astype(x.dtype)[finite], rtol=ulps(x.dtype, 8), atol=ulps(x.dtype, 8))
    got = F.silu(ow.tensor(x)).numpy()
    close(got[finite], silu.astype(x.dtype)[finite], rtol=ulps(x.dtype, 8), atol=np.finfo(x.dtype).tiny * 4)
    assert np.isnan(got[np.isnan(x)]).all()
    assert (got[x == np.inf] == np.inf).all()


@st.composite
def binary_operands(draw):
    """Two same-dtype arrays of one shape, the second possibly broadcast from a row, a column or a scalar."""
    a = draw(arrays(min_dims=1, min_side=1))
    kind = draw(st.sampled_from(["same", "row", "column", "scalar"]))
    shape = {"same": a.shape, "row": (1,) * (a.ndim - 1) + a.shape[-1:], "column": a.shape[:1] + (1,) * (a.ndim - 1)}
    b = draw(hnp.arrays(a.dtype, shape.get(kind, ()), elements=_values(a.dtype, True)))
    return a, b


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@given(ab=binary_operands(), swap=st.booleans())
def test_binary_matches_numpy(op, ab, swap):
    a, b = ab
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    if swap:
        a, b = np.broadcast_to(b, a.shape), a
    b = np.broadcast_to(b, a.shape)
    with np.errstate(all="ignore"):
        want = fn(a, b)
    ta = ow.tensor(np.ascontiguousarray(a))
    tb = ow.tensor(np.ascontiguousarray(b[(0,) * b.ndim])).expand(*b.shape) if b.strides == (0,) * b.ndim else None
    tb = tb if tb is not None else ow.tensor(np.ascontiguousarray(b))
    got = _direct(f"prims::{op}", ta, tb)
    close(got, want, rtol=0)  # one IEEE operation: exact
    got = _direct(f"{op}.Tensor", ta, tb)
    close(got, want, rtol=0)
    scalar = float(b.reshape(-1)[0])
    if math.isfinite(scalar):
        got = getattr(ow, op)(ta, scalar).numpy()
        with np.errstate(all="ignore"):
            close(got, fn(a, np.asarray(scalar, a.dtype)), rtol=0)


# -- reductions -------------------------------------------------------------------------------------------


@st.composite
def reduction_case(draw):
    x = draw(arrays(min_dims=1, min_side=1))
    lo = draw(st.integers(0, x.ndim - 1))
    hi = draw(st.integers(lo, x.ndim - 1))
    dims = list(range(lo, hi + 1))
    if draw(st.booleans()):
        dims = [d - x.ndim for d in dims]
    return x, dims


@given(case=reduction_case())
def test_sum_amax_amin_var(case):
    x, dims = case
    axes = tuple(d % x.ndim for d in dims)
    t = ow.tensor(x)
    n = math.prod(x.shape[a] for a in axes)
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        total = x64.sum(axis=axes)
        scale = np.abs(x64).sum(axis=axes)
        got = _direct("prims::sum", t, dims)
        # double accumulation: one rounding to the dtype, plus double's own n-term error
        close(got, total.astype(x.dtype), rtol=ulps(x.dtype, 1), atol=0)
        finite = np.isfinite(scale)
        err = np.abs(got.astype(np.float64) - total)[finite]
        assert np.all(err <= np.finfo(x.dtype).eps * scale[finite] + 1e-300)
        close(_direct("prims::amax", t, dims), x.max(axis=axes), rtol=0)
        close(_direct("prims::amin", t, dims), x.min(axis=axes), rtol=0)
        correction = 1 if n > 1 else 0
        mean = x64.mean(axis=axes, keepdims=True)
        var = ((x64 - mean) ** 2).sum(axis=axes) / max(n - correction, 0)
        close(_direct("prims::var", t, dims, correction), var.astype(x.dtype), rtol=ulps(x.dtype, 8), atol=0)
        close(t.mean(dims).numpy(), x64.mean(axis=axes).astype(x.dtype), rtol=ulps(x.dtype, 4))


@given(x=arrays(min_dims=0, max_dims=3, min_side=0))
def test_reductions_of_any_layout(x):
    """0-dim, empty and transposed tensors: the public ops on the c path agree with NumPy."""
    t = ow.tensor(x)
    if x.ndim >= 2:
        t, x = t.transpose(0, 1), x.swapaxes(0, 1)
    with np.errstate(all="ignore"):
        _sum_close(t.sum().numpy(), x, None)
        if x.size:
            close(t.amax().numpy(), np.asarray(x.max(), x.dtype), rtol=0)
        if x.ndim:
            _sum_close(t.sum(-1).numpy(), x, -1)


def _sum_close(got: np.ndarray, x: np.ndarray, axis) -> None:
    """A sum within its rounding bound: n·eps·Σ|x| (cancellation makes the result's own ulp meaningless), exact
    where the terms hold nan or ±inf (the float64 sum's nan/inf rounded to the dtype)."""
    x64 = x.astype(np.float64)
    exact, scale = np.asarray(x64.sum(axis=axis)), np.asarray(np.abs(x64).sum(axis=axis))
    got64 = np.asarray(got, np.float64)
    assert got64.shape == np.shape(exact) and got.dtype == x.dtype
    finite = np.isfinite(scale)
    np.testing.assert_array_equal(got64[~finite], np.asarray(exact.astype(x.dtype), np.float64)[~finite])
    n = max(x.size if axis is None else x.shape[axis], 1)
    bound = n * np.finfo(x.dtype).eps * scale[finite] + np.finfo(x.dtype).smallest_subnormal
    assert np.all(np.abs(got64[finite] - exact[finite]) <= bound)


# -- row kernels -------------------------------------------------------------------------------------------


def _np_log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


@given(x=arrays(min_dims=1, min_side=1), data=st.data(), log=st.booleans())
def test_softmax_along_any_dim(x, data, log):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    with np.errstate(all="ignore"):
        want = _np_log_softmax(x.astype(np.float64), dim)
        if not log:
            want = np.exp(want)
    want = want.astype(x.dtype)
    name = "log_softmax.int" if log else "softmax.int"
    got = _direct(name, ow.tensor(x), dim)
    close(got, want, rtol=ulps(x.dtype, 16), atol=ulps(x.dtype, 4))
    public = (F.log_softmax if log else F.softmax)(ow.tensor(x), dim).numpy()
    close(public, want, rtol=ulps(x.dtype, 16), atol=ulps(x.dtype, 4))


@given(x=arrays(min_dims=1, min_side=1, special=False), data=st.data(), affine=st.booleans())
def test_layer_norm_and_rms_norm(x, data, affine):
    k = data.draw(st.integers(1, x.ndim))
    shape = x.shape[x.ndim - k :]
    axes = tuple(range(x.ndim - k, x.ndim))
    w = data.draw(hnp.arrays(x.dtype, shape, elements=_values(x.dtype, False))) if affine else None
    b = data.draw(hnp.arrays(x.dtype, shape, elements=_values(x.dtype, False))) if affine else None
    x64 = x.astype(np.float64)
    eps = 1e-5
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    ln = (x64 - mean) / np.sqrt(var + eps)
    rms_eps = np.finfo(x.dtype).eps
    ms = (x64**2).mean(axis=axes, keepdims=True)
    rms = x64 / np.sqrt(ms + rms_eps)
    # x - mean carries the rounding of |x|: its error, in units of the standard deviation
    ln_scale = 1 + np.abs(x64).max(axis=axes, keepdims=True) / np.sqrt(var + eps)
    rms_scale = 1 + np.abs(x64).max(axis=axes, keepdims=True) / np.sqrt(ms + rms_eps)
    if affine:
        ln, rms = ln * w + b, rms * w
        ln_scale = ln_scale * (1 + np.abs(w)) + np.abs(b)
        rms_scale = rms_scale * (1 + np.abs(w))
    tw = None if w is None else ow.tensor(w)
    tb = None if b is None else ow.tensor(b)
    tol = ulps(x.dtype, 16)
    got = _direct("layer_norm", ow.tensor(x), list(shape), tw, tb, eps)
    assert got.dtype == x.dtype and np.all(np.abs(got - ln) <= tol * ln_scale)
    got = F.rms_norm(ow.tensor(x), list(shape), tw).numpy()
    assert got.dtype == x.dtype and np.all(np.abs(got - rms) <= tol * rms_scale)


@given(
    x=arrays(min_dims=2, max_dims=2, min_side=1),
    data=st.data(),
    reduction=st.sampled_from(["none", "mean", "sum"]),
)
def test_cross_entropy(x, data, reduction):
    rows, classes = x.shape
    target = data.draw(hnp.arrays(np.int64, (rows,), elements=st.sampled_from([*range(classes), -100])))
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        lsm = _np_log_softmax(x64, 1)
        keep = target != -100
        loss = np.where(keep, -np.take_along_axis(lsm, np.where(keep, target, 0)[:, None], 1)[:, 0], 0.0)
        want = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / keep.sum()}[reduction]
    got = F.cross_entropy(ow.tensor(x), ow.tensor(target), reduction=reduction).numpy()
    close(got, np.asarray(want).astype(x.dtype), rtol=ulps(x.dtype, 32), atol=ulps(x.dtype, 32))
    code = {"none": 0, "mean": 1, "sum": 2}[reduction]
    close(_direct("cross_entropy_loss", ow.tensor(x), ow.tensor(target), None, code), got, rtol=0)


def test_cross_entropy_bad_target_raises_like_the_decomposition():
    with pytest.raises((IndexError, RuntimeError, ValueError)):
        F.cross_entropy(ow.ones(2, 3), ow.tensor([0, 3]))


def test_declines_what_it_has_no_loop_for():
    x = ow.ones(4, 4, dtype=ow.float16)
    assert ck.C_KERNELS["prims::exp"](x) is None
    assert ck.C_KERNELS["prims::sum"](ow.ones(2, 3, 4), [0, 2]) is None  # not one run of dims
    assert ck.C_KERNELS["prims::exp"](ow.ones(4, 4).t()) is None  # not C-contiguous
    assert ck.C_KERNELS["prims::sum"](ow.ones(2, 3, dtype=ow.float64), [1], ow.float32) is None


def test_auto_takes_only_large_calls():
    ow.cpu.set_kernel_path("auto")
    try:
        assert ck.C_KERNELS["prims::exp"](ow.ones(4)) is None
        big = _c_path.AUTO_MIN["prims::exp"]
        assert ck.C_KERNELS["prims::exp"](ow.zeros(big)) is not None
    finally:
        ow.cpu.set_kernel_path("c")


@pytest.mark.parametrize("op", sorted(UNARY))
def test_canonical_op_runs_its_prims_c_kernel_with_the_same_bits(op):
    """``ow.sigmoid(x)`` on ``auto`` takes the C kernel from the prim's size, as its decomposition would.

    An op ``auto`` leaves on NumPy (no :data:`AUTO_MIN` entry) stays there for both.
    """
    formula, public = UNARY[op]
    least = _c_path.AUTO_MIN.get(f"prims::{op}")
    x = np.linspace(0.25, 3.0, least or 1 << 12, dtype=np.float32)
    ow.cpu.set_kernel_path("auto")
    try:
        assert (ck.C_KERNELS[op](ow.tensor(x)) is not None) == (least is not None)
        got, prim = public(ow.tensor(x)).numpy(), getattr(ow.ops.prims, op)(ow.tensor(x)).numpy()
    finally:
        ow.cpu.set_kernel_path("c")
    np.testing.assert_array_equal(got, prim)
    close(got, formula(x.astype(np.float64)).astype(np.float32), ulps(np.float32), atol=0.0)


def test_numpy_path_runs_no_c_kernel():
    ow.cpu.set_kernel_path("numpy")
    try:
        assert ck.C_KERNELS["prims::exp"](ow.ones(1 << 20)) is None
        assert "C kernels off" in ow.cpu.kernel_paths()
    finally:
        ow.cpu.set_kernel_path("c")


def test_without_a_compiler_the_cpu_stays_on_numpy(tmp_path):
    script = (
        "import opweave as ow, numpy as np\n"
        "from opweave.cli import main\n"
        "y = ow.softmax(ow.zeros(2, 4), -1).numpy()\n"
        "print(y.ravel().tolist())\n"
        "main(['doctor'])\n"
    )
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"), OPWEAVE_CPU_KERNELS="c")
    env["OPWEAVE_KERNEL_CACHE"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.stdout.splitlines()[0] == str([0.25] * 8)
    assert "C kernels off (no C compiler" in out.stdout, out.stdout + out.stderr


@given(x=arrays(min_dims=0, max_dims=3, min_side=0))
def test_elementwise_and_softmax_of_0dim_and_empty(x):
    """0-dim and empty tensors on the c path: the C kernels decline what they have no loop for."""
    t = ow.tensor(x)
    with np.errstate(all="ignore"):
        close(ow.exp(t).numpy(), np.exp(x.astype(np.float64)).astype(x.dtype), ulps(x.dtype))
        close((t + t).numpy(), x + x, rtol=0)
        close((t * 2.0).numpy(), x * x.dtype.type(2), rtol=0)
        if x.ndim and not x.size:
            assert F.softmax(t, -1).numpy().shape == x.shape
        elif x.ndim:
            want = np.exp(_np_log_softmax(x.astype(np.float64), -1)).astype(x.dtype)
            close(F.softmax(t, -1).numpy(), want, rtol=ulps(x.dtype, 16), atol=ulps(x.dtype, 4))
