"""Normalization ops against NumPy mean/var formulas: batch, instance, layer, group, RMS and local response
norm, ``normalize``; running-statistics updates, ``native_*`` statistics, errors, the F wrappers."""

from __future__ import annotations

import math
import warnings

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

F = ow.nn.functional
C = ow.ops.canonical
pytestmark = pytest.mark.filterwarnings("ignore:(Mean of empty|Degrees of freedom):RuntimeWarning")
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")
TOL = {ow.float16: 5e-3, ow.bfloat16: 3e-2, ow.float32: 2e-5, ow.float64: 1e-10}


def _t(v, dtype=ow.float32, layout="contiguous"):
    return S.make(v, dtype, layout)


def _vals(t):
    return S.wide(np.array(t.numpy()))


def _close(actual, expected, dtype=None, tol=None):
    dtype = dtype or actual.dtype
    assert actual.dtype is dtype
    tol = TOL[dtype] if tol is None else tol
    np.testing.assert_allclose(_vals(actual), np.asarray(expected, dtype=np.float64), rtol=tol, atol=tol)


def _chan(v, ndim):
    return np.reshape(v, [1, -1] + [1] * (ndim - 2))


def _bn_ref(x, w, b, mean, var, eps):
    y = (x - _chan(mean, x.ndim)) / np.sqrt(_chan(var, x.ndim) + eps)
    if w is not None:
        y = y * _chan(w, x.ndim)
    if b is not None:
        y = y + _chan(b, x.ndim)
    return y


shapes_nc = st.sampled_from([(4, 3), (2, 3, 5), (3, 2, 2, 3), (2, 4, 1, 2, 2)])


@settings(max_examples=15)
@given(shape=shapes_nc, layout=st.sampled_from(LAYOUTS), affine=st.booleans(), seed=st.integers(0, 2**16))
def test_batch_norm_training_matches_numpy_and_updates_running_stats(shape, layout, affine, seed):
    rng = np.random.default_rng(seed)
    x = _t(rng.standard_normal(shape), ow.float64, layout)
    xv = _vals(x)
    ch = shape[1]
    w = rng.standard_normal(ch) if affine else None
    b = rng.standard_normal(ch) if affine else None
    rm0, rv0 = rng.standard_normal(ch), rng.uniform(0.5, 2, ch)
    rm, rv = ow.tensor(rm0), ow.tensor(rv0)
    wt, bt = (ow.tensor(w), ow.tensor(b)) if affine else (None, None)
    out = C.batch_norm(x, wt, bt, rm, rv, True, 0.2, 1e-5, False)
    axes = (0,) + tuple(range(2, len(shape)))
    mean, var = xv.mean(axis=axes), xv.var(axis=axes)
    _close(out, _bn_ref(xv, w, b, mean, var, 1e-5))
    n = xv.size // ch
    _close(rm, 0.8 * rm0 + 0.2 * mean)
    _close(rv, 0.8 * rv0 + 0.2 * var * n / (n - 1))


@pytest.mark.parametrize("dtype", [ow.float16, ow.bfloat16, ow.float32, ow.float64])
def test_batch_norm_eval_uses_running_stats(dtype):
    rng = np.random.default_rng(1)
    x = _t(rng.standard_normal((4, 3, 5)), dtype)
    rm, rv = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    rmt, rvt = ow.tensor(rm, dtype=dtype), ow.tensor(rv, dtype=dtype)
    before = S.snapshot(rmt, rvt)
    out = F.batch_norm(x, rmt, rvt, ow.tensor(w, dtype=dtype), ow.tensor(b, dtype=dtype), training=False)
    S.unchanged([rmt, rvt], before)
    _close(
        out,
        _bn_ref(
            _vals(x),
            S.wide(np.array(ow.tensor(w, dtype=dtype).numpy())),
            S.wide(np.array(ow.tensor(b, dtype=dtype).numpy())),
            _vals(rmt),
            _vals(rvt),
            1e-5,
        ),
    )


def test_native_batch_norm_statistics():
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((5, 3, 4))
    out, mean, invstd = C.native_batch_norm(ow.tensor(xv), None, None, None, None, True, 0.1, 1e-3)
    _close(mean, xv.mean(axis=(0, 2)))
    _close(invstd, 1 / np.sqrt(xv.var(axis=(0, 2)) + 1e-3))
    out, mean, invstd = C.native_batch_norm(
        ow.tensor(xv), None, None, ow.zeros(3, dtype=ow.float64), ow.ones(3, dtype=ow.float64), False, 0.1, 1e-3
    )
    assert mean.shape == (0,) and invstd.shape == (0,)
    _close(out, xv / np.sqrt(1 + 1e-3))


def test_native_batch_norm_legit_variants():
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((6, 2, 3))
    rm, rv = ow.zeros(2, dtype=ow.float64), ow.ones(2, dtype=ow.float64)
    out, mean, _ = C._native_batch_norm_legit(ow.tensor(xv), None, None, rm, rv, True, 0.5, 1e-5)
    _close(rm, 0.5 * xv.mean(axis=(0, 2)))
    out2, _, _ = C._native_batch_norm_legit(ow.tensor(xv), None, None, True, 0.5, 1e-5)
    _close(out2, _vals(out))
    out3, _, _ = C._native_batch_norm_legit_no_training(ow.tensor(xv), None, None, rm, rv, 0.5, 1e-5)
    _close(out3, _bn_ref(xv, None, None, _vals(rm), _vals(rv), 1e-5))


def test_batch_norm_errors_leave_running_stats_intact():
    x = ow.randn(4, 3)
    rm, rv = ow.zeros(3), ow.ones(3)
    with pytest.raises(ValueError, match="batch_norm.*weight"):
        C.batch_norm(x, ow.ones(4), None, rm, rv, True, 0.1, 1e-5, False)
    assert rm.numpy().tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="running_mean"):
        C.batch_norm(x, None, None, None, None, False, 0.1, 1e-5, False)
    with pytest.raises(TypeError, match="batch_norm.*input"):
        C.batch_norm(ow.ones(4, 3, dtype=ow.int64), None, None, None, None, True, 0.1, 1e-5, False)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(ow.randn(1, 3), rm, rv, training=True)
    # an empty 1-D input comes back as it is (PyTorch), the running statistics untouched
    empty = F.batch_norm(ow.zeros(0), ow.zeros(0), ow.ones(0), training=True)
    assert empty.shape == (0,) and empty.dtype == ow.float32


@settings(max_examples=15)
@given(
    shape=st.sampled_from([(2, 3, 4), (3, 2, 2, 3), (1, 4, 5)]),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_instance_norm(shape, layout, seed):
    rng = np.random.default_rng(seed)
    x = _t(rng.standard_normal(shape) * 3 + 1, ow.float64, layout)
    xv = _vals(x)
    if np.ptp(xv) == 0:
        return
    ch = shape[1]
    w, b = rng.standard_normal(ch), rng.standard_normal(ch)
    rm, rv = ow.zeros(ch, dtype=ow.float64), ow.ones(ch, dtype=ow.float64)
    out = F.instance_norm(x, rm, rv, ow.tensor(w), ow.tensor(b), use_input_stats=True, momentum=0.1, eps=1e-5)
    axes = tuple(range(2, len(shape)))
    m, v = xv.mean(axis=axes, keepdims=True), xv.var(axis=axes, keepdims=True)
    _close(out, (xv - m) / np.sqrt(v + 1e-5) * _chan(w, len(shape)) + _chan(b, len(shape)))
    n = int(np.prod(shape[2:]))
    _close(rm, 0.1 * m.reshape(shape[0], ch).mean(0))
    _close(rv, 0.9 + 0.1 * (v.reshape(shape[0], ch) * n / (n - 1)).mean(0))


@settings(max_examples=20)
@given(
    shape=st.sampled_from([(4, 5), (2, 3, 4), (0, 4), (5,), (2, 1, 3)]),
    k=st.integers(1, 2),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from([ow.float16, ow.bfloat16, ow.float32, ow.float64]),
    affine=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_layer_norm_and_native_layer_norm(shape, k, layout, dtype, affine, seed):
    k = min(k, len(shape))
    rng = np.random.default_rng(seed)
    x = _t(rng.standard_normal(shape), dtype, layout)
    xv = _vals(x)
    ns = list(shape[len(shape) - k :])
    w = ow.tensor(rng.standard_normal(ns), dtype=dtype) if affine else None
    b = ow.tensor(rng.standard_normal(ns), dtype=dtype) if affine else None
    axes = tuple(range(len(shape) - k, len(shape)))
    with np.errstate(all="ignore"):
        mean = xv.mean(axis=axes, keepdims=True)
        rstd = 1 / np.sqrt(xv.var(axis=axes, keepdims=True) + 1e-5)
    ref = (xv - mean) * rstd
    if affine:
        ref = ref * _vals(w) + _vals(b)
    _close(F.layer_norm(x, ns, w, b), ref, dtype)
    out, m, r = C.native_layer_norm(x, ns, w, b, 1e-5)
    _close(out, ref, dtype)
    assert m.shape == mean.shape and r.shape == rstd.shape
    if xv.size:
        _close(m, mean, dtype)
        _close(r, rstd, dtype, tol=max(TOL[dtype], 1e-4))


def test_layer_norm_errors():
    x = ow.randn(4, 5)
    with pytest.raises(ValueError, match="layer_norm.*normalized_shape"):
        F.layer_norm(x, [4])
    with pytest.raises(ValueError, match="layer_norm.*weight"):
        F.layer_norm(x, [5], ow.ones(4))
    with pytest.raises(TypeError, match="layer_norm"):
        F.layer_norm(ow.ones(4, 5, dtype=ow.int32), [5])


@pytest.mark.parametrize("dtype", [ow.bfloat16, ow.float32, ow.float64])
def test_rms_norm(dtype):
    rng = np.random.default_rng(4)
    x = _t(rng.standard_normal((3, 4, 5)), dtype, "transposed")
    xv = _vals(x)
    w = ow.tensor(rng.standard_normal(5), dtype=dtype)
    eps = np.finfo(np.float64 if dtype is ow.float64 else np.float32).eps
    ref = xv / np.sqrt(np.mean(xv**2, axis=-1, keepdims=True) + eps) * _vals(w)
    _close(F.rms_norm(x, [5], w), ref, dtype)
    ref2 = xv / np.sqrt(np.mean(xv**2, axis=(1, 2), keepdims=True) + 0.1)
    _close(F.rms_norm(x, (4, 5), eps=0.1), ref2, dtype)


@settings(max_examples=15)
@given(
    shape=st.sampled_from([(2, 4, 3), (3, 6, 2, 2), (2, 6), (1, 4, 0)]),
    groups=st.sampled_from([1, 2]),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_group_norm(shape, groups, layout, seed):
    rng = np.random.default_rng(seed)
    x = _t(rng.standard_normal(shape), ow.float64, layout)
    xv = _vals(x)
    n, ch = shape[:2]
    w, b = rng.standard_normal(ch), rng.standard_normal(ch)
    g = xv.reshape(n, groups, -1)
    with np.errstate(all="ignore"):
        mean, var = g.mean(axis=2), g.var(axis=2)
        ref = ((g - mean[..., None]) / np.sqrt(var[..., None] + 1e-5)).reshape(shape)
    ref = ref * _chan(w, len(shape)) + _chan(b, len(shape))
    _close(F.group_norm(x, groups, ow.tensor(w), ow.tensor(b)), ref)
    hxw = int(np.prod(shape[2:]))
    out, m, r = C.native_group_norm(x, ow.tensor(w), ow.tensor(b), n, ch, hxw, groups, 1e-5)
    _close(out, ref)
    assert m.shape == (n, groups) and r.shape == (n, groups)
    with pytest.raises(ValueError, match="group_norm.*num_groups"):
        F.group_norm(x, 5)


@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((2, 4, 3, 3), 2), ((1, 6, 2, 2, 2), 5), ((1, 3, 4), 1)])
def test_local_response_norm(shape, size):
    rng = np.random.default_rng(5)
    xv = rng.standard_normal(shape)
    ch = shape[1]
    sq = xv**2
    total = np.zeros_like(xv)
    for c in range(ch):
        lo, hi = max(0, c - size // 2), min(ch - 1, c + (size - 1) // 2)
        total[:, c] = sq[:, lo : hi + 1].sum(axis=1)
    ref = xv / (2.0 + 0.1 / size * total) ** 0.6
    _close(F.local_response_norm(ow.tensor(xv), size, 0.1, 0.6, 2.0), ref)
    with pytest.raises(ValueError, match="local_response_norm"):
        F.local_response_norm(ow.randn(3, 4), 2)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1), (math.inf, 1)])
def test_normalize(p, dim):
    rng = np.random.default_rng(6)
    xv = rng.standard_normal((3, 4))
    xv[1] = 0.0
    norm = np.linalg.norm(xv, ord=p, axis=dim, keepdims=True)
    ref = xv / np.maximum(norm, 1e-12)
    _close(F.normalize(ow.tensor(xv), p, dim), ref)
    out = ow.empty(3, 4, dtype=ow.float64)
    F.normalize(ow.tensor(xv), p, dim, out=out)
    _close(out, ref)


def test_norms_on_meta_device():
    x = ow.empty(2, 3, 4, device="meta")
    assert F.layer_norm(x, [4]).shape == (2, 3, 4)
    assert F.group_norm(x, 3).shape == (2, 3, 4)
    assert C.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)[1].shape == (3,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert F.rms_norm(x, [4]).device.type == "meta"


@pytest.mark.parametrize("dtype", [ow.bfloat16, ow.float32, ow.float64])
def test_batch_norm_stats_and_elemt(dtype):
    rng = np.random.default_rng(7)
    x = S.make(rng.standard_normal((4, 3, 5)), dtype, "transposed")
    xv = _vals(x)
    mean, invstd = C.batch_norm_stats(x, 1e-3)
    compute = ow.float64 if dtype is ow.float64 else ow.float32
    _close(mean, xv.mean(axis=(0, 2)), compute)
    _close(invstd, 1 / np.sqrt(xv.var(axis=(0, 2)) + 1e-3), compute, tol=max(TOL[compute], 1e-5))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    out = C.batch_norm_elemt(x, ow.tensor(w, dtype=dtype), ow.tensor(b, dtype=dtype), mean, invstd, 1e-3)
    wv, bv = _vals(ow.tensor(w, dtype=dtype)), _vals(ow.tensor(b, dtype=dtype))
    ref = (xv - _chan(xv.mean(axis=(0, 2)), 3)) / np.sqrt(_chan(xv.var(axis=(0, 2)), 3) + 1e-3)
    _close(out, ref * _chan(wv, 3) + _chan(bv, 3), dtype)
    with pytest.raises(ValueError, match="batch_norm_elemt"):
        C.batch_norm_elemt(x, None, None, ow.ones(4), invstd, 1e-3)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_weight_norm(dim):
    rng = np.random.default_rng(8)
    v = rng.standard_normal((4, 3))
    g = rng.standard_normal(() if dim == -1 else [(4, 1), (1, 3)][dim])
    norm = np.sqrt((v * v).sum()) if dim == -1 else np.sqrt((v * v).sum(axis=1 - dim, keepdims=True))
    _close(C._weight_norm(ow.tensor(v), ow.tensor(g), dim), v * g / norm)
