"""Convolution and pooling kernels against loop-by-tap NumPy formulas written here, over any layout."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave import _fallback

P = ow.ops.prims


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.ascontiguousarray(a)).to("opencl")


def host(t):
    return t.numpy(force=True)


def laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a view: contiguous, channels-last (permuted), strided (every other), or offset."""
    if layout == "permuted" and x.ndim >= 3:
        order = (0, *range(2, x.ndim), 1)
        back = (0, x.ndim - 1, *range(1, x.ndim - 1))
        return dev(np.transpose(x, order)).permute(*back)
    if layout == "strided" and x.ndim >= 1:
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset":
        return dev(np.concatenate([np.zeros((1,) + x.shape[1:], x.dtype), x]))[1:]
    return dev(x)


def on_device(fn, *args):
    """``fn(*args)``, checking that no prim ran through the CPU fallback."""
    before = sum(_fallback.calls.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = fn(*args)
    assert sum(_fallback.calls.values()) == before, "a prim ran through the CPU fallback"
    return result


# -- reference formulas ------------------------------------------------------------------------------


def conv_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """Grouped N-d convolution, one kernel tap at a time (float64)."""
    d = x.ndim - 2
    n, c_in = x.shape[:2]
    ks = w.shape[2:]
    cpg = c_in // groups
    if not transposed:
        c_out = w.shape[0]
        opg = c_out // groups
        xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
        outs = [(xp.shape[2 + i] - dilation[i] * (ks[i] - 1) - 1) // stride[i] + 1 for i in range(d)]
        y = np.zeros((n, c_out, *outs), np.result_type(x, w))
        for tap in itertools.product(*[range(k) for k in ks]):
            sl = tuple(slice(t * dl, t * dl + s * (o - 1) + 1, s) for t, dl, s, o in zip(tap, dilation, stride, outs))
            patch = xp[(slice(None), slice(None), *sl)]  # (N, C_in, *O)
            for g in range(groups):
                wt = w[(slice(g * opg, (g + 1) * opg), slice(None), *tap)]  # (opg, cpg)
                y[:, g * opg : (g + 1) * opg] += np.einsum("nc...,oc->no...", patch[:, g * cpg : (g + 1) * cpg], wt)
    else:
        opg = w.shape[1]
        c_out = opg * groups
        full = [
            (s - 1) * st + dl * (k - 1) + 1 + op
            for s, st, dl, k, op in zip(x.shape[2:], stride, dilation, ks, output_padding)
        ]
        y = np.zeros((n, c_out, *full), np.result_type(x, w))
        for tap in itertools.product(*[range(k) for k in ks]):
            sl = tuple(
                slice(t * dl, t * dl + st * (s - 1) + 1, st) for t, dl, st, s in zip(tap, dilation, stride, x.shape[2:])
            )
            for g in range(groups):
                wt = w[(slice(g * cpg, (g + 1) * cpg), slice(None), *tap)]  # (cpg, opg)
                y[(slice(None), slice(g * opg, (g + 1) * opg), *sl)] += np.einsum(
                    "nc...,co->no...", x[:, g * cpg : (g + 1) * cpg], wt
                )
        sizes = [f - 2 * p for f, p in zip(full, padding)]
        y = y[(slice(None), slice(None), *(slice(p, p + s) for p, s in zip(padding, sizes)))]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * d)
    return y


def pool_out(n, k, s, p, dl, ceil_mode):
    out = (n + 2 * p - dl * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def windows(sizes, ks, ss, ps, dls, ceil_mode):
    """For each output position: the in-range taps (coords) and torch's first index of an empty window."""
    outs = [pool_out(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in zip(sizes, ks, ss, ps, dls)]
    for o in itertools.product(*[range(v) for v in outs]):
        starts = [oi * s - p for oi, s, p in zip(o, ss, ps)]
        per_dim = [
            [st + t * dl for t in range(k) if 0 <= st + t * dl < n] for st, k, dl, n in zip(starts, ks, dls, sizes)
        ]
        first = [st if st >= 0 else st + (-st + dl - 1) // dl * dl for st, dl in zip(starts, dls)]
        yield o, list(itertools.product(*per_dim)), first, outs


def flat(c, sizes):
    return (
        int(np.ravel_multi_index(c, sizes))
        if all(0 <= v < n for v, n in zip(c, sizes))
        else int(sum(v * int(np.prod(sizes[i + 1 :])) for i, v in enumerate(c)))
    )


def max_pool_ref(x, ks, ss, ps, dls, ceil_mode):
    d = len(ks)
    sizes = x.shape[x.ndim - d :]
    lead = x.shape[: x.ndim - d]
    floating = x.dtype.kind == "f"
    lowest = -np.inf if floating else np.iinfo(x.dtype).min
    values, indices = {}, {}
    for o, taps, first, _ in windows(sizes, ks, ss, ps, dls, ceil_mode):
        for b in itertools.product(*[range(v) for v in lead]):
            best, bi, nan = lowest, None, False
            for c in taps:
                v = x[b + c]
                if floating and np.isnan(v):
                    best, bi, nan = v, flat(c, sizes), True
                elif not nan and (bi is None or v > best):
                    best, bi = v, flat(c, sizes)
            values[b + o], indices[b + o] = best, flat(first, sizes) if bi is None else bi
    shape = lead + tuple(pool_out(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in zip(sizes, ks, ss, ps, dls))
    v, i = np.zeros(shape, np.float64 if floating else x.dtype), np.zeros(shape, np.int64)
    for key in values:
        v[key], i[key] = values[key], indices[key]
    return v, i


def avg_pool_ref(x, ks, ss, ps, ceil_mode, count_include_pad, divisor):
    d = len(ks)
    sizes = x.shape[x.ndim - d :]
    lead = x.shape[: x.ndim - d]
    shape = lead + tuple(pool_out(n, k, s, p, 1, ceil_mode) for n, k, s, p in zip(sizes, ks, ss, ps))
    out = np.zeros(shape)
    for o, taps, _, _ in windows(sizes, ks, ss, ps, [1] * d, ceil_mode):
        starts = [oi * s - p for oi, s, p in zip(o, ss, ps)]
        padded = np.prod([min(st + k, n + p) - st for st, k, n, p in zip(starts, ks, sizes, ps)])
        for b in itertools.product(*[range(v) for v in lead]):
            total = sum(float(x[b + c]) for c in taps)
            div = divisor if divisor else (padded if count_include_pad else len(taps))
            out[b + o] = total / div if taps else 0.0
    return out


def adaptive_ref(x, output_size, kind):
    d = len(output_size)
    sizes = x.shape[x.ndim - d :]
    lead = x.shape[: x.ndim - d]
    out = np.zeros(lead + tuple(output_size))
    idx = np.zeros(out.shape, np.int64)
    for o in itertools.product(*[range(v) for v in output_size]):
        ranges = [range(i * n // m, -(-(i + 1) * n // m)) for i, n, m in zip(o, sizes, output_size)]
        taps = list(itertools.product(*ranges))
        for b in itertools.product(*[range(v) for v in lead]):
            vals = [float(x[b + c]) for c in taps]
            if kind == "avg":
                out[b + o] = sum(vals) / len(vals)
            else:
                nans = [j for j, v in enumerate(vals) if np.isnan(v)]
                j = nans[-1] if nans else int(np.argmax(vals))
                out[b + o], idx[b + o] = vals[j], flat(taps[j], sizes)
    return out, idx


# -- convolution -----------------------------------------------------------------------------------


@st.composite
def conv_cases(draw):
    d = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 2))
    transposed = draw(st.booleans())
    cpg, opg = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3)) for _ in range(d)]
    stride = [draw(st.integers(1, 2)) for _ in range(d)]
    dilation = [draw(st.integers(1, 2)) for _ in range(d)]
    padding = [draw(st.integers(0, 2)) for _ in range(d)]
    sizes = [draw(st.integers(1, 5)) + dl * (k - 1) for k, dl in zip(ks, dilation)]
    if transposed:
        output_padding = [draw(st.integers(0, max(s, dl) - 1)) for s, dl in zip(stride, dilation)]
        padding = [min(p, (n - 1) * s // 2) for p, n, s in zip(padding, sizes, stride)]
        w_shape = (cpg * groups, opg, *ks)
    else:
        output_padding = [0] * d
        w_shape = (opg * groups, cpg, *ks)
    x_shape = (draw(st.integers(1, 2)), cpg * groups, *sizes)
    return x_shape, w_shape, opg * groups, stride, padding, dilation, transposed, output_padding, groups


@given(
    conv_cases(),
    st.booleans(),
    st.sampled_from(["contiguous", "permuted", "strided", "offset"]),
    st.sampled_from(["contiguous", "permuted", "strided"]),
    st.integers(0, 2**31),
)
def test_convolution_matches_tap_loop(ocl, case, with_bias, x_layout, w_layout, seed):
    x_shape, w_shape, c_out, stride, padding, dilation, transposed, output_padding, groups = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(c_out) if with_bias else None
    bias = laid_out(b, "strided") if with_bias else None
    args = (stride, padding, dilation, transposed, output_padding, groups)
    got = on_device(P.convolution, laid_out(x, x_layout), laid_out(w, w_layout), bias, *args)
    expected = conv_ref(x, w, b, *args)
    assert tuple(got.shape) == expected.shape
    assert got.is_contiguous()
    np.testing.assert_allclose(host(got), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex64"])
def test_convolution_dtypes(ocl, dtype):
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2)), rng.standard_normal(6)
    if dtype == "complex64":
        x, w, b = x + 1j * rng.standard_normal(x.shape), w + 1j * rng.standard_normal(w.shape), b + 0.5j
    args = ([2, 1], [1, 0], [1, 2], False, [0], 2)
    t = getattr(ow, dtype)
    got = on_device(P.convolution, *[dev(v.astype(t.numpy)) for v in (x, w, b)], *args)
    assert got.dtype is t
    wide = np.complex128 if dtype == "complex64" else np.float64
    rounded = [v.astype(t.numpy).astype(wide) for v in (x, w, b)]
    tol = 3e-2 if dtype == "bfloat16" else 1e-5
    np.testing.assert_allclose(host(got).astype(rounded[0].dtype), conv_ref(*rounded, *args), rtol=tol, atol=tol)


def test_convolution_special_values_and_empty_batch(ocl):
    x = np.ones((1, 1, 4))
    x[0, 0, 1] = np.nan
    x[0, 0, 3] = np.inf
    w = np.array([[[1.0, -0.0]]])
    got = host(on_device(P.convolution, dev(x), dev(w), None, [1], [0], [1], False, [0], 1))
    np.testing.assert_array_equal(got, conv_ref(x, w, None, [1], [0], [1], False, [0], 1))
    empty = on_device(P.convolution, dev(np.ones((0, 1, 4))), dev(w), None, [1], [0], [1], False, [0], 1)
    assert tuple(empty.shape) == (0, 1, 3)


# -- pooling ---------------------------------------------------------------------------------------


@st.composite
def pool_cases(draw):
    d = draw(st.integers(1, 3))
    ks = [draw(st.integers(1, 3)) for _ in range(d)]
    ss = [draw(st.integers(1, 3)) for _ in range(d)]
    ps = [draw(st.integers(0, k // 2)) for k in ks]
    dls = [draw(st.integers(1, 3)) for _ in range(d)]
    ceil_mode = draw(st.booleans())
    sizes = [draw(st.integers(0, 4)) + dl * (k - 1) + 1 for k, dl in zip(ks, dls)]
    lead = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    return lead + tuple(sizes), ks, ss, ps, dls, ceil_mode


@given(pool_cases(), st.sampled_from(["contiguous", "strided", "offset"]), st.integers(0, 2**31))
def test_max_pool_matches_window_loop(ocl, case, layout, seed):
    shape, ks, ss, ps, dls, ceil_mode = case
    x = np.random.default_rng(seed).integers(-3, 3, shape).astype(np.float64)  # ties
    if x.size > 2:
        x.flat[:: max(x.size // 2, 1)] = np.nan
    values, indices = on_device(P.max_pool, laid_out(x, layout), ks, ss, ps, dls, ceil_mode)
    ev, ei = max_pool_ref(x, ks, ss, ps, dls, ceil_mode)
    np.testing.assert_array_equal(host(values), ev)
    np.testing.assert_array_equal(host(indices), ei)


@given(pool_cases(), st.booleans(), st.sampled_from([None, 3]), st.integers(0, 2**31))
def test_avg_pool_matches_window_loop(ocl, case, count_include_pad, divisor, seed):
    shape, ks, ss, ps, _, ceil_mode = case
    x = np.random.default_rng(seed).standard_normal(shape)
    got = on_device(P.avg_pool, laid_out(x, "strided"), ks, ss, ps, ceil_mode, count_include_pad, divisor)
    np.testing.assert_allclose(
        host(got), avg_pool_ref(x, ks, ss, ps, ceil_mode, count_include_pad, divisor), rtol=1e-12
    )


def test_max_pool_empty_dilated_window_and_int_dtypes(ocl):
    # Taps -1 and 2 of a size-2 dim: no input element; value -inf, torch's first index 2.
    values, indices = on_device(P.max_pool, dev(np.array([[1.0, 2.0]])), [2], [1], [1], [3], False)
    np.testing.assert_array_equal(host(values), [[-np.inf]])
    np.testing.assert_array_equal(host(indices), [[2]])
    for dtype in (np.int8, np.uint8, np.int32, np.int64):
        x = np.random.default_rng(3).integers(0, 100, (2, 5, 6)).astype(dtype)
        v, i = on_device(P.max_pool, dev(x), [2, 3], [2], [1, 1], [1], True)
        ev, ei = max_pool_ref(x, [2, 3], [2, 2], [1, 1], [1, 1], True)
        assert host(v).dtype == dtype
        np.testing.assert_array_equal(host(v), ev)
        np.testing.assert_array_equal(host(i), ei)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_pool_low_precision_dtypes(ocl, dtype):
    t = getattr(ow, dtype)
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 8)).astype(t.numpy).astype(np.float64)
    xt = dev(x.astype(t.numpy))
    got = on_device(P.avg_pool, xt, [3, 2], [2], [1], False, True, None)
    np.testing.assert_allclose(
        host(got).astype(np.float64), avg_pool_ref(x, [3, 2], [2, 2], [1, 1], False, True, None), rtol=1e-2
    )
    v, i = on_device(P.max_pool, xt, [3, 3], [2], [1], [1], False)
    ev, ei = max_pool_ref(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
    np.testing.assert_array_equal(host(v).astype(np.float64), ev)
    np.testing.assert_array_equal(host(i), ei)


@given(
    st.lists(st.integers(1, 7), min_size=1, max_size=3),
    st.data(),
    st.sampled_from(["contiguous", "permuted", "strided"]),
    st.integers(0, 2**31),
)
def test_adaptive_pools_match_window_loop(ocl, sizes, data, layout, seed):
    output_size = [data.draw(st.integers(1, 2 * n)) for n in sizes]
    x = np.random.default_rng(seed).standard_normal((2, 3, *sizes))
    if x.size > 3:
        x.flat[3] = np.nan
    xd = laid_out(x, layout)
    np.testing.assert_allclose(
        host(on_device(P.adaptive_avg_pool, xd, output_size)), adaptive_ref(x, output_size, "avg")[0]
    )
    values, indices = on_device(P.adaptive_max_pool, xd, output_size)
    ev, ei = adaptive_ref(x, output_size, "max")
    np.testing.assert_array_equal(host(values), ev)
    np.testing.assert_array_equal(host(indices), ei)


def test_pools_of_empty_and_zero_output(ocl):
    x = dev(np.ones((0, 3, 4)))
    assert tuple(on_device(P.max_pool, x, [2], [], [0], [1], False)[0].shape) == (0, 3, 2)
    assert tuple(on_device(P.adaptive_avg_pool, dev(np.ones((2, 4))), [0]).shape) == (2, 0)
    assert tuple(on_device(P.adaptive_max_pool, dev(np.ones((4,))), [2])[1].shape) == (2,)


@pytest.mark.parametrize("args", [{"padding": 1}, {"stride": 2}, {"dilation": 2, "padding": 2}])
def test_large_convolutions_take_im2col_and_match_the_direct_formula(ocl, args):
    from opweave import _fallback

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 16, 30, 33)).astype(np.float32)
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    before = sum(_fallback.calls.values())
    got = ow.nn.functional.conv2d(dev(x), dev(w), dev(b), **args).numpy(force=True)
    assert sum(_fallback.calls.values()) == before
    s, p, d = args.get("stride", 1), args.get("padding", 0), args.get("dilation", 1)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow_ = (xp.shape[2] - d * 2 - 1) // s + 1, (xp.shape[3] - d * 2 - 1) // s + 1
    want = np.zeros((2, 24, oh, ow_)) + b[None, :, None, None]
    for i in range(3):
        for j in range(3):
            patch = xp[:, :, i * d : i * d + s * (oh - 1) + 1 : s, j * d : j * d + s * (ow_ - 1) + 1 : s]
            want += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
