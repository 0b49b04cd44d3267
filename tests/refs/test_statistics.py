"""Statistics canonical ops (quantile, nanquantile, cov, corrcoef, histogram, histogramdd, diff, gradient, renorm,
frobenius_norm, nuclear_norm, norm_except_dim, sum_to_size) against NumPy oracles written here: shapes (0-dim,
empty), dims, non-contiguous inputs, NaN, dtypes, in-place and out= variants, the vnpu device, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def T(a, dtype=None, device="cpu", layout="contiguous"):
    """An opweave tensor of ``a``'s values, optionally laid out transposed or strided in memory."""
    a = np.asarray(a)
    if layout == "transposed" and a.ndim >= 2:
        return ow.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dtype, device=device).transpose(-1, -2)
    if layout == "strided" and a.ndim >= 1:
        wide = np.repeat(a, 2, axis=-1)
        return ow.tensor(wide, dtype=dtype, device=device)[..., ::2]
    return ow.tensor(a, dtype=dtype, device=device)


def N(t):
    """The values of tensor ``t`` as a NumPy array."""
    return t.cpu().numpy() if t.device.type != "cpu" else t.numpy()


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(N(actual), np.asarray(expected), rtol=rtol, atol=atol, equal_nan=True)


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)
layouts = st.sampled_from(["contiguous", "transposed", "strided"])


# -- quantile ------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    shape=shapes,
    data=st.data(),
    mode=st.sampled_from(MODES),
    keepdim=st.booleans(),
    layout=layouts,
    nans=st.booleans(),
    dtype=st.sampled_from([ow.float32, ow.float64]),
)
def test_quantile_and_nanquantile_match_numpy(shape, data, mode, keepdim, layout, nans, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.uniform(-5, 5, shape).astype(dtype.numpy)
    if nans:
        x[rng.random(shape) < 0.3] = np.nan
    dim = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    q = np.sort(rng.uniform(0, 1, data.draw(st.integers(1, 4)))).astype(dtype.numpy)
    t = T(x, dtype, layout=layout)
    for fn, oracle in ((ow.quantile, np.quantile), (ow.nanquantile, np.nanquantile)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = oracle(x.astype(np.float64), q.astype(np.float64), axis=dim, keepdims=keepdim, method=mode)
            want_scalar = oracle(x.astype(np.float64), float(q[0]), axis=dim, keepdims=keepdim, method=mode)
        got = fn(t, T(q, dtype), dim, keepdim, interpolation=mode)
        assert got.dtype is dtype and got.shape == want.shape
        close(got, want, rtol=1e-5, atol=1e-5)
        got_scalar = fn(t, float(q[0]), dim=dim, keepdim=keepdim, interpolation=mode)
        assert got_scalar.shape == np.shape(want_scalar)
        close(got_scalar, want_scalar, rtol=1e-5, atol=1e-5)


def test_quantile_zero_dim_out_and_method():
    x = T(np.float32(2.5))
    assert ow.quantile(x, 0.3, dim=0, keepdim=True).shape == ()
    out = ow.empty(0)
    r = ow.quantile(T([1.0, 2.0, 4.0, 8.0]), T([0.5, 0.25]), out=out)
    assert r is out
    close(out, np.quantile([1.0, 2.0, 4.0, 8.0], [0.5, 0.25]))
    close(T([[3.0, 1.0], [2.0, 0.0]]).quantile(0.5, dim=1), [2.0, 1.0])


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: ow.quantile(T([1.0, 2.0]), 1.5), ValueError),
        (lambda: ow.quantile(T([1.0, 2.0]), -0.1), ValueError),
        (lambda: ow.quantile(T([1.0, 2.0]), T([0.5, 1.5])), ValueError),
        (lambda: ow.quantile(T([1.0, 2.0]), T([[0.5]])), ValueError),
        (lambda: ow.quantile(T(np.zeros(0)), 0.5), ValueError),
        (lambda: ow.quantile(T([1.0, 2.0]), 0.5, interpolation="cubic"), ValueError),
        (lambda: ow.quantile(T([1.0, 2.0]), 0.5, dim=1), ValueError),
        (lambda: ow.quantile(T([1, 2]), 0.5), TypeError),
        (lambda: ow.quantile(T([1.0, 2.0], ow.float16), 0.5), TypeError),
        (lambda: ow.quantile(T([1.0, 2.0], ow.float32), T([0.5], ow.float64)), TypeError),
        (lambda: ow.nanquantile(T([1.0, 2.0]), 2.0), ValueError),
    ],
)
def test_quantile_errors_name_the_op(call, error):
    with pytest.raises(error, match="quantile"):
        call()


# -- cov, corrcoef ----------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 4),
    cols=st.integers(2, 6),
    correction=st.integers(0, 1),
    weights=st.sampled_from(["none", "f", "a", "fa"]),
    dtype=st.sampled_from([ow.float32, ow.float64, ow.int32, ow.complex64]),
    layout=layouts,
    seed=st.integers(0, 2**16),
)
def test_cov_matches_numpy(rows, cols, correction, weights, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (rows, cols))
    if dtype.is_complex:
        x = x + 1j * rng.uniform(-3, 3, (rows, cols))
    if not (dtype.is_floating_point or dtype.is_complex):
        x = np.round(x)
    x = x.astype(dtype.numpy)
    fw = rng.integers(1, 4, cols) if "f" in weights else None
    aw = rng.uniform(0.5, 2, cols) if "a" in weights else None
    kwargs = {"correction": correction}
    if fw is not None:
        kwargs["fweights"] = T(fw)
    if aw is not None:
        kwargs["aweights"] = T(aw)
    got = ow.cov(T(x, dtype, layout=layout), **kwargs)
    want = np.cov(
        x.astype(np.complex128 if dtype.is_complex else np.float64), ddof=correction, fweights=fw, aweights=aw
    )
    tol = 1e-4 if dtype in (ow.float32, ow.complex64, ow.int32) else 1e-9
    close(got, want, rtol=tol, atol=tol)
    corr = ow.corrcoef(T(x, dtype, layout=layout))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        close(corr, np.corrcoef(x.astype(np.complex128 if dtype.is_complex else np.float64)), rtol=tol, atol=tol)


def test_cov_shapes_dtypes_and_degrees_of_freedom():
    assert ow.cov(T([1.0, 2.0, 4.0])).shape == ()
    assert ow.cov(T([[1, 2, 4]])).dtype is ow.float32
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert np.isnan(N(ow.cov(T(3.0))))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        c = ow.cov(T([[1.0, 2.0, 4.0], [3.0, 1.0, 1.0]]), correction=5)
    assert np.isinf(N(c)).all()
    close(ow.corrcoef(T([1.0, 2.0, 4.0])), 1.0)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"fweights": T([1.0, 2.0, 1.0])}, TypeError),
        ({"aweights": T([1, 2, 1])}, TypeError),
        ({"fweights": T([1, -2, 1])}, ValueError),
        ({"aweights": T([1.0, 2.0])}, ValueError),
        ({"fweights": T([[1, 2, 1]])}, ValueError),
    ],
)
def test_cov_weight_errors(kwargs, error):
    x = T([[1.0, 2.0, 4.0], [3.0, 1.0, 1.0]])
    with pytest.raises(error, match="cov"):
        ow.cov(x, **kwargs)


def test_cov_rejects_3d_and_bool():
    with pytest.raises(ValueError, match="cov"):
        ow.cov(ow.ones(2, 2, 2))
    with pytest.raises(TypeError, match="cov"):
        ow.cov(T([[True, False]]))


# -- histogram, histogramdd ---------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(0, 30),
    bins=st.integers(1, 8),
    use_range=st.booleans(),
    weighted=st.booleans(),
    density=st.booleans(),
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from([ow.float32, ow.float64]),
)
def test_histogram_matches_numpy(n, bins, use_range, weighted, density, seed, dtype):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, n).astype(dtype.numpy)
    rng_ = (-2.0, 2.5) if use_range else None
    w = rng.uniform(0, 2, n).astype(dtype.numpy) if weighted else None
    hist, edges = ow.histogram(
        T(x, dtype),
        bins,
        range=list(rng_) if rng_ else None,
        weight=T(w, dtype) if weighted else None,
        density=density,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want_hist, want_edges = np.histogram(x.astype(np.float64), bins, range=rng_, weights=w, density=density)
    close(edges, want_edges, rtol=1e-6, atol=1e-6)
    close(hist, want_hist, rtol=1e-5, atol=1e-5)
    assert hist.dtype is dtype and edges.dtype is dtype


def test_histogram_bins_tensor_and_out():
    x = T([[0.5, 1.0, 2.0], [2.5, 3.0, 9.0]], layout="transposed")
    edges = T([0.0, 1.0, 2.5, 3.0])
    hist, e = ow.histogram(x, edges)
    close(hist, np.histogram(N(x).ravel(), N(edges))[0])
    close(e, N(edges))
    h_out, e_out = ow.empty(3), ow.empty(0)
    res = ow.ops.histogram.bins_tensor_out(x, edges, density=True, hist=h_out, bin_edges=e_out)
    assert res[0] is h_out
    close(h_out, np.histogram(N(x).ravel(), N(edges), density=True)[0])


def test_histogramdd_matches_numpy():
    rng = np.random.default_rng(3)
    pts = rng.uniform(-2, 2, (4, 5, 3))
    w = rng.uniform(0, 1, (4, 5))
    hist, edges = ow.histogramdd(T(pts), [2, 3, 4], weight=T(w), density=True)
    want, want_edges = np.histogramdd(pts.reshape(-1, 3), [2, 3, 4], weights=w.reshape(-1), density=True)
    assert hist.shape == (2, 3, 4) and len(edges) == 3
    close(hist, want)
    for got_e, w_e in zip(edges, want_edges):
        close(got_e, w_e)
    counts, _ = ow.histogramdd(T(pts), [2, 3, 4])
    assert float(counts.sum()) == 20
    hist2, edges2 = ow.histogramdd(T(pts), 3, [-2.0, 2.0, -1.0, 1.0, 0.0, 2.0])
    want2, _ = np.histogramdd(pts.reshape(-1, 3), 3, range=[(-2, 2), (-1, 1), (0, 2)])
    close(hist2, want2)
    hist3, _ = ow.histogramdd(T(pts), [T([-2.0, 0.0, 2.0]), T([-2.0, 2.0]), T([-1.0, 0.0, 0.5, 2.0])])
    want3, _ = np.histogramdd(pts.reshape(-1, 3), [[-2.0, 0.0, 2.0], [-2.0, 2.0], [-1.0, 0.0, 0.5, 2.0]])
    close(hist3, want3)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: ow.histogram(T([1.0, 2.0]), 0), ValueError),
        (lambda: ow.histogram(T([1.0, 2.0]), 3, range=[2.0, 1.0]), ValueError),
        (lambda: ow.histogram(T([1.0, np.nan]), 3), ValueError),
        (lambda: ow.histogram(T([1, 2]), 3), TypeError),
        (lambda: ow.histogram(T([1.0, 2.0], ow.float32), T([0.0, 1.0], ow.float64)), TypeError),
        (lambda: ow.histogram(T([1.0, 2.0]), 3, weight=T([1.0])), ValueError),
        (lambda: ow.histogramdd(T([1.0, 2.0]), [2]), ValueError),
        (lambda: ow.histogramdd(T([[1.0, 2.0]]), [2]), ValueError),
    ],
)
def test_histogram_errors(call, error):
    with pytest.raises(error, match="histogram"):
        call()


# -- diff, gradient -----------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    shape=shapes,
    data=st.data(),
    dtype=st.sampled_from([ow.float32, ow.float64, ow.int64, ow.uint8, ow.bool, ow.float16, ow.complex64]),
    layout=layouts,
)
def test_diff_matches_numpy(shape, data, dtype, layout):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = (rng.uniform(0, 9, shape) if dtype is not ow.bool else rng.random(shape) < 0.5).astype(dtype.numpy)
    n = data.draw(st.integers(0, 4))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    kwargs = {}
    if data.draw(st.booleans()):
        side = list(shape)
        side[dim] = 2
        kwargs["prepend"] = rng.uniform(0, 9, side).astype(dtype.numpy)
    got = ow.diff(T(x, dtype, layout=layout), n, dim, **{k: T(v, dtype) for k, v in kwargs.items()})
    want = np.diff(x, n=n, axis=dim, **kwargs)
    assert got.dtype is dtype and got.shape == want.shape
    close(got, want, rtol=1e-3, atol=1e-3)


def test_diff_out_and_errors():
    out = ow.empty(2, dtype=ow.int64)
    assert ow.diff(T([1, 3, 7]), out=out) is out
    close(out, [2, 4])
    close(T([1, 3, 7]).diff(prepend=T([0.5])), [0.5, 2.0, 4.0])
    with pytest.raises(ValueError, match="diff"):
        ow.diff(T(1.0))
    with pytest.raises(ValueError, match="diff"):
        ow.diff(T([1.0, 2.0]), n=-1)
    with pytest.raises(ValueError, match="diff"):
        ow.diff(ow.ones(2, 3), dim=0, prepend=ow.ones(1, 2))
    with pytest.raises(ValueError, match="diff"):
        ow.diff(ow.ones(2, 3), prepend=ow.ones(3))


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(3, 5), min_size=1, max_size=3).map(tuple),
    edge_order=st.sampled_from([1, 2]),
    dtype=st.sampled_from([ow.float32, ow.float64, ow.int64]),
    data=st.data(),
)
def test_gradient_overloads_match_numpy(shape, edge_order, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.uniform(-5, 5, shape)
    x = (np.round(x) if dtype is ow.int64 else x).astype(dtype.numpy)
    xf = x.astype(np.float64)
    t = T(x, dtype)
    ndim = len(shape)
    tol = {"rtol": 1e-4, "atol": 1e-4}

    def want(spacings, axes):
        return [np.gradient(xf, h, axis=a, edge_order=edge_order) for h, a in zip(spacings, axes)]

    for got, expected in zip(ow.gradient(t, edge_order=edge_order), want([1.0] * ndim, range(ndim))):
        close(got, expected, **tol)
    h = float(data.draw(st.sampled_from([0.5, 2.0])))
    dim = data.draw(st.integers(0, ndim - 1))
    (got,) = ow.gradient(t, spacing=h, dim=dim, edge_order=edge_order)
    close(got, want([h], [dim])[0], **tol)
    dims = list(range(ndim))[::-1]
    for got, expected in zip(ow.gradient(t, dim=dims, edge_order=edge_order), want([1.0] * ndim, dims)):
        close(got, expected, **tol)
    for got, expected in zip(ow.gradient(t, spacing=h, dim=dims, edge_order=edge_order), want([h] * ndim, dims)):
        close(got, expected, **tol)
    steps = [float(s) for s in rng.uniform(0.5, 2, ndim)]
    for got, expected in zip(ow.gradient(t, spacing=steps, edge_order=edge_order), want(steps, range(ndim))):
        close(got, expected, **tol)
    for got, expected in zip(ow.gradient(t, spacing=steps, dim=dims, edge_order=edge_order), want(steps, dims)):
        close(got, expected, **tol)
    coords = [np.cumsum(rng.uniform(0.5, 2, n)) for n in shape]
    got_all = ow.gradient(t, spacing=[T(c) for c in coords], edge_order=edge_order)
    for got, expected in zip(got_all, want(coords, range(ndim))):
        close(got, expected, **tol)
    got_dims = ow.gradient(t, spacing=[T(coords[d]) for d in dims], dim=dims, edge_order=edge_order)
    for got, expected in zip(got_dims, want([coords[d] for d in dims], dims)):
        close(got, expected, **tol)


def test_gradient_dtype_zero_dim_and_errors():
    (g,) = ow.gradient(T([1, 3, 7]))
    assert g.dtype is ow.float32
    assert ow.gradient(T(1.0)) == []
    with pytest.raises(ValueError, match="gradient"):
        ow.gradient(T([1.0, 2.0]), edge_order=2)
    with pytest.raises(ValueError, match="gradient"):
        ow.gradient(T([1.0, 2.0, 3.0]), edge_order=3)
    with pytest.raises(ValueError, match="gradient"):
        ow.gradient(ow.ones(3, 4), spacing=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="gradient"):
        ow.gradient(ow.ones(3, 4), dim=[0, 0])
    with pytest.raises(ValueError, match="gradient"):
        ow.gradient(ow.ones(3, 4), spacing=[T([0.0, 1.0])], dim=0)
    with pytest.raises(ValueError, match="gradient"):
        ow.gradient(ow.ones(3, 4), spacing=[ow.ones(3, 1)], dim=0)
    with pytest.raises(TypeError, match="gradient"):
        ow.gradient(T([True, False, True]))


# -- renorm, norms, sum_to_size -----------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple),
    p=st.sampled_from([1, 2, 3.5, float("inf")]),
    maxnorm=st.sampled_from([0.0, 0.5, 2.0, 100.0]),
    data=st.data(),
    layout=layouts,
)
def test_renorm_matches_formula(shape, p, maxnorm, data, layout):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.uniform(-3, 3, shape)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    axes = tuple(i for i in range(len(shape)) if i != dim % len(shape))
    a = np.abs(x)
    norm = a.max(axis=axes, keepdims=True) if np.isinf(p) else (a**p).sum(axis=axes, keepdims=True) ** (1 / p)
    want = x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    t = T(x, ow.float64, layout=layout)
    close(ow.renorm(t, p, dim, maxnorm), want, rtol=1e-9, atol=1e-12)
    same = T(x, ow.float64)
    assert same.renorm_(p, dim, maxnorm) is same
    close(same, want, rtol=1e-9, atol=1e-12)


def test_renorm_errors_and_complex():
    for args, error in (((0, 0, 1.0), ValueError), ((2, 0, -1.0), ValueError), ((2, 2, 1.0), ValueError)):
        with pytest.raises(error, match="renorm"):
            ow.renorm(ow.ones(2, 2), *args)
    with pytest.raises(ValueError, match="renorm"):
        ow.renorm(ow.ones(3), 2, 0, 1.0)
    with pytest.raises(TypeError, match="renorm"):
        ow.renorm(T([[1, 2], [3, 4]]), 2, 0, 1.0)
    x = np.array([[1 + 1j, 2], [3, 4]])
    got = ow.renorm(T(x, ow.complex128), 1, 0, 3)
    norm = np.abs(x).sum(1, keepdims=True)
    close(got, x * np.where(norm > 3, 3 / (norm + 1e-7), 1.0))


def test_frobenius_nuclear_norm_except_dim_and_sum_to_size():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (2, 3, 4))
    t = T(x)
    close(ow.frobenius_norm(t, [0, 2]), np.sqrt((x**2).sum((0, 2))), rtol=1e-5)
    close(ow.frobenius_norm(t, [1], True), np.sqrt((x**2).sum(1, keepdims=True)), rtol=1e-5)
    with pytest.raises(ValueError, match="frobenius_norm"):
        ow.frobenius_norm(t, [0, 1, 2])
    m = x[0]
    close(ow.nuclear_norm(T(m)), np.linalg.svd(m, compute_uv=False).sum(), rtol=1e-5)
    close(ow.nuclear_norm(T(m), True), np.linalg.svd(m, compute_uv=False).sum().reshape(1, 1), rtol=1e-5)
    want = np.linalg.svd(np.moveaxis(x, (0, 2), (-2, -1)), compute_uv=False).sum(-1)
    close(ow.nuclear_norm(t, [0, 2]), want, rtol=1e-5)
    with pytest.raises(ValueError, match="nuclear_norm"):
        ow.nuclear_norm(t)
    close(ow.norm_except_dim(t, 2, 1), np.sqrt((x**2).sum((0, 2), keepdims=True)), rtol=1e-5)
    close(ow.norm_except_dim(t, 2, -1), np.sqrt((x**2).sum()), rtol=1e-5)
    close(ow.norm_except_dim(T(x[0, 0]), 2, 0), np.abs(x[0, 0]), rtol=1e-5)
    close(t.sum_to_size([3, 1]), x.sum(axis=(0, 2), keepdims=True)[0], rtol=1e-5)
    assert ow.ones(2, 3, dtype=ow.int32).sum_to_size([1, 3]).dtype is ow.int64
    # an empty size sums everything, a 0-dim input too: bool counts in int64 (PyTorch's sum_to)
    flag = ow.tensor(True)
    assert flag.sum_to_size([]).dtype is ow.int64 and flag.sum_to_size([]).item() == 1
    assert ow.tensor([[True, False]]).sum_to_size([1, 2]).dtype is ow.bool  # nothing to sum: kept as it is
    with pytest.raises(ValueError, match="sum_to_size"):
        t.sum_to_size([2, 4])


# -- a device that implements only prims ------------------------------------------------------------


def test_statistics_on_vnpu_agree_with_numpy():
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, (4, 6))
    v = T(x, ow.float32, device="vnpu", layout="transposed")
    close(ow.quantile(v, T([0.1, 0.9], ow.float32, device="vnpu"), 1), np.quantile(x, [0.1, 0.9], axis=1), 1e-5, 1e-5)
    close(ow.cov(v), np.cov(x), 1e-4, 1e-4)
    hist, edges = ow.histogram(v, 5)
    close(hist, np.histogram(x, 5)[0])
    close(ow.diff(v, 2, 0), np.diff(x, 2, 0), 1e-5, 1e-5)
    close(ow.gradient(v, dim=1)[0], np.gradient(x, axis=1), 1e-5, 1e-5)
    close(ow.renorm(v, 2, 0, 1.0), x * np.minimum(1.0, 1.0 / (np.sqrt((x**2).sum(1, keepdims=True)) + 1e-7)), 1e-5)
