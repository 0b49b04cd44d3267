"""Convolution and pooling prims against naive nested-loop oracles with PyTorch's semantics."""

from __future__ import annotations

import itertools
import math

import numpy as np
import opweave as ow
import pytest
from _prim_support import COMPLEXES, FLOATS, INTS, LAYOUTS, P, check_meta_call, in_layout, meta, run_in_layout
from hypothesis import assume, given, settings
from hypothesis import strategies as st

TOL = {ow.float16: 2e-3, ow.bfloat16: 2e-2, ow.float32: 1e-5, ow.float64: 1e-12, ow.complex64: 1e-5}
TOL[ow.complex128] = 1e-12


# --- inputs ------------------------------------------------------------------------------------------


def data(rng, shape, dtype, special=True, ties=False):
    """Random values of ``dtype``; floating dtypes get nan/±inf/-0.0 sprinkled in when ``special``."""
    if dtype.kind in ("int", "uint"):
        lo = 0 if dtype.kind == "uint" else -5
        return rng.integers(lo, 6, shape).astype(dtype.numpy)
    a = rng.standard_normal(shape)
    if ties:
        a = np.round(a * 2) / 2
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    if special and a.size:
        r = rng.random(shape)
        a = np.where(r < 0.04, np.nan, np.where(r < 0.07, np.inf, np.where(r < 0.1, -np.inf, a)))
        a = np.where((r > 0.97) & (r < 0.98), -0.0, a)
    return a.astype(dtype.numpy)


def assert_same_bits(a, b):
    """Bitwise equality (nan-safe for every dtype, bfloat16 included)."""
    assert a.shape == b.shape and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def assert_close(got, ref, dtype, scale):
    """Compare with a per-dtype tolerance; ``scale`` bounds the magnitude of the summed terms."""
    t = TOL[dtype]
    np.testing.assert_allclose(
        got.astype(ref.dtype), ref, rtol=t, atol=t * max(float(np.nanmax(scale, initial=0)), 1.0), equal_nan=True
    )


# --- convolution oracles (loops over output pixels and kernel offsets) ------------------------------------


def conv_out(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def conv_ref(x, w, b, stride, padding, dilation, groups):
    n, c = x.shape[:2]
    c_out, ks = w.shape[0], w.shape[2:]
    cg, og = c // groups, c_out // groups
    outs = [conv_out(*a) for a in zip(x.shape[2:], ks, stride, padding, dilation)]
    y = np.zeros((n, c_out, *outs), np.result_type(x, w))
    for o in itertools.product(*map(range, outs)):
        for kk in itertools.product(*map(range, ks)):
            pos = [oi * s - p + ki * d for oi, ki, s, p, d in zip(o, kk, stride, padding, dilation)]
            if not all(0 <= q < size for q, size in zip(pos, x.shape[2:])):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg), *pos)]
                ws = w[(slice(g * og, (g + 1) * og), slice(None), *kk)]
                y[(slice(None), slice(g * og, (g + 1) * og), *o)] += xs @ ws.T
    return y if b is None else y + b.reshape((-1,) + (1,) * len(ks))


def conv_transpose_ref(x, w, b, stride, padding, dilation, output_padding, groups):
    n, c_in = x.shape[:2]
    ks = w.shape[2:]
    cg, og = c_in // groups, w.shape[1]
    outs = [
        (i - 1) * s - 2 * p + d * (k - 1) + op + 1
        for i, k, s, p, d, op in zip(x.shape[2:], ks, stride, padding, dilation, output_padding)
    ]
    y = np.zeros((n, og * groups, *outs), np.result_type(x, w))
    for i in itertools.product(*map(range, x.shape[2:])):
        for kk in itertools.product(*map(range, ks)):
            pos = [ii * s - p + ki * d for ii, ki, s, p, d in zip(i, kk, stride, padding, dilation)]
            if not all(0 <= q < size for q, size in zip(pos, outs)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg), *i)]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None), *kk)]
                y[(slice(None), slice(g * og, (g + 1) * og), *pos)] += xs @ ws
    return y if b is None else y + b.reshape((-1,) + (1,) * len(ks))


@st.composite
def conv_params(draw, transposed):
    d = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 2))
    ks = draw(st.lists(st.integers(1, 3), min_size=d, max_size=d))
    stride = draw(st.lists(st.integers(1, 3), min_size=d, max_size=d))
    dilation = draw(st.lists(st.integers(1, 2), min_size=d, max_size=d))
    padding = draw(st.lists(st.integers(0, 2), min_size=d, max_size=d))
    sizes = draw(st.lists(st.integers(1, 5 if d < 3 else 4), min_size=d, max_size=d))
    if transposed:
        output_padding = [draw(st.integers(0, max(s, dl) - 1)) for s, dl in zip(stride, dilation)]
        outs = [
            (i - 1) * s - 2 * p + dl * (k - 1) + op + 1
            for i, k, s, p, dl, op in zip(sizes, ks, stride, padding, dilation, output_padding)
        ]
    else:
        output_padding = [0] * d
        outs = [conv_out(*a) for a in zip(sizes, ks, stride, padding, dilation)]
    assume(all(o > 0 for o in outs))
    return dict(
        d=d,
        groups=groups,
        ks=ks,
        stride=stride,
        dilation=dilation,
        padding=padding,
        sizes=sizes,
        output_padding=output_padding,
        n=draw(st.integers(0, 2)),
        cin=groups * draw(st.integers(1, 2)),
        cout=groups * draw(st.integers(1, 2)),
        bias=draw(st.booleans()),
        layout=draw(st.sampled_from(LAYOUTS)),
        seed=draw(st.integers(0, 2**16)),
    )


@pytest.mark.parametrize("dtype", FLOATS + COMPLEXES)
@pytest.mark.parametrize("transposed", [False, True])
@settings(max_examples=15, deadline=None)
@given(data_=st.data())
def test_convolution(dtype, transposed, data_):
    c = data_.draw(conv_params(transposed))
    rng = np.random.default_rng(c["seed"])
    g = c["groups"]
    # complex inf arithmetic is implementation-defined (C99 Annex G vs BLAS): specials for real dtypes only
    x = data(rng, [c["n"], c["cin"], *c["sizes"]], dtype, special=not dtype.is_complex)
    wshape = [c["cin"], c["cout"] // g] if transposed else [c["cout"], c["cin"] // g]
    w = data(rng, wshape + c["ks"], dtype, special=False)
    b = data(rng, [c["cout"]], dtype, special=False) if c["bias"] else None
    tx, x, kx = in_layout(x, c["layout"])
    tw, w, kw = in_layout(w, c["layout"])
    tb = None if b is None else ow.from_numpy(b)
    before = tx.numpy().copy(), tw.numpy().copy()
    args = (c["stride"], c["padding"], c["dilation"], transposed, c["output_padding"], g)
    out = P.convolution(tx, tw, tb, *args)
    check_meta_call(P.convolution, [tx, tw, tb], args, [out])
    assert_same_bits(tx.numpy(), before[0])
    assert_same_bits(tw.numpy(), before[1])
    wide = np.complex128 if dtype.is_complex else np.float64
    xw, ww = x.astype(wide), w.astype(wide)
    bw = None if b is None else b.astype(wide)
    with np.errstate(all="ignore"):
        ref, scale = conv_oracles(xw, ww, bw, c, transposed)
    assert out.dtype == dtype and tuple(out.shape) == ref.shape
    assert_close(out.numpy(), ref, dtype, scale)
    del kx, kw


def conv_oracles(xw, ww, bw, c, transposed):
    """The reference result and the magnitude of its summed terms (for the tolerance)."""
    g, geometry = c["groups"], (c["stride"], c["padding"], c["dilation"])
    if transposed:
        geometry += (c["output_padding"],)
    ref_fn = conv_transpose_ref if transposed else conv_ref
    magnitude = np.abs(np.nan_to_num(xw, posinf=0, neginf=0))
    return ref_fn(xw, ww, bw, *geometry, g), ref_fn(magnitude, np.abs(ww), None, *geometry, g)


def test_convolution_known_values():
    x = ow.from_numpy(np.arange(5.0).reshape(1, 1, 5))
    w = ow.from_numpy(np.array([[[1.0, 10.0]]]))
    out = P.convolution(x, w, None, [1], [0], [1], False, [0], 1).numpy()
    np.testing.assert_array_equal(out, [[[10.0, 21.0, 32.0, 43.0]]])  # cross-correlation: no kernel flip
    up = P.convolution(x, w, None, [2], [0], [1], True, [1], 1).numpy()
    np.testing.assert_array_equal(up, [[[0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0, 0.0]]])


# --- pooling oracles (torch's loops) -------------------------------------------------------------------


def pool_out(n, k, s, p, d, ceil):
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= n + p:
        out -= 1
    return out


def lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool_ref(x, ks, stride, padding, dilation, ceil):
    """torch's max_pool loop: ``if val > maxval or isnan(val)``, index starting at the first in-range position."""
    d = len(ks)
    lead, sizes = x.shape[: x.ndim - d], x.shape[x.ndim - d :]
    flat = x.reshape((-1,) + sizes)
    outs = [pool_out(*a, ceil) for a in zip(sizes, ks, stride, padding, dilation)]
    plane = np.cumprod((1,) + sizes[::-1])[::-1][1:]
    values = np.zeros((flat.shape[0], *outs), x.dtype)
    indices = np.zeros((flat.shape[0], *outs), np.int64)
    for o in itertools.product(*map(range, outs)):
        starts = [oi * s - p for oi, s, p in zip(o, stride, padding)]
        first = [st_ + (-st_ + dl - 1) // dl * dl if st_ < 0 else st_ for st_, dl in zip(starts, dilation)]
        best = np.full(flat.shape[0], lowest(x.dtype), x.dtype)
        where = np.full(flat.shape[0], int(np.dot(first, plane)))  # torch's ih0 * W + iw0, even if out of range
        for kk in itertools.product(*map(range, ks)):
            pos = [st_ + ki * dl for st_, ki, dl in zip(starts, kk, dilation)]
            if not all(0 <= q < n for q, n in zip(pos, sizes)):
                continue
            val = flat[(slice(None), *pos)]
            take = (val > best) | (np.isnan(val) if x.dtype.kind == "f" else False)
            best = np.where(take, val, best)
            where = np.where(take, np.ravel_multi_index(pos, sizes), where)
        values[(slice(None), *o)] = best
        indices[(slice(None), *o)] = where
    return values.reshape(lead + tuple(outs)), indices.reshape(lead + tuple(outs))


def avg_pool_ref(x, ks, stride, padding, ceil, count_include_pad, divisor):
    d = len(ks)
    lead, sizes = x.shape[: x.ndim - d], x.shape[x.ndim - d :]
    flat = x.reshape((-1,) + sizes)
    outs = [pool_out(n, k, s, p, 1, ceil) for n, k, s, p in zip(sizes, ks, stride, padding)]
    out = np.zeros((flat.shape[0], *outs), x.dtype)
    for o in itertools.product(*map(range, outs)):
        lo = [oi * s - p for oi, s, p in zip(o, stride, padding)]
        hi = [min(a + k, n + p) for a, k, n, p in zip(lo, ks, sizes, padding)]
        pool = math.prod(h - a for a, h in zip(lo, hi))
        lo2 = [max(a, 0) for a in lo]
        hi2 = [min(h, n) for h, n in zip(hi, sizes)]
        if any(a >= h for a, h in zip(lo2, hi2)):
            continue
        box = flat[(slice(None), *(slice(a, h) for a, h in zip(lo2, hi2)))]
        div = divisor or (pool if count_include_pad else math.prod(h - a for a, h in zip(lo2, hi2)))
        out[(slice(None), *o)] = box.sum(axis=tuple(range(1, box.ndim))) / div
    return out.reshape(lead + tuple(outs))


def adaptive_windows(n, out):
    return [(i * n // out, -(-(i + 1) * n // out)) for i in range(out)]


def adaptive_ref(x, output_size, reduce):
    d = len(output_size)
    lead, sizes = x.shape[: x.ndim - d], x.shape[x.ndim - d :]
    flat = x.reshape((-1,) + sizes)
    wins = [adaptive_windows(n, o) for n, o in zip(sizes, output_size)]
    values = np.zeros((flat.shape[0], *output_size), x.dtype)
    indices = np.zeros((flat.shape[0], *output_size), np.int64)
    for o in itertools.product(*map(range, output_size)):
        box = [wins[i][oi] for i, oi in enumerate(o)]
        if reduce == "mean":
            region = flat[(slice(None), *(slice(a, b) for a, b in box))]
            values[(slice(None), *o)] = region.mean(axis=tuple(range(1, region.ndim)))
            continue
        best = np.full(flat.shape[0], lowest(x.dtype), x.dtype)
        where = np.full(flat.shape[0], np.ravel_multi_index([a for a, _ in box], sizes))
        for pos in itertools.product(*(range(a, b) for a, b in box)):
            val = flat[(slice(None), *pos)]
            take = (val > best) | (np.isnan(val) if x.dtype.kind == "f" else False)
            best = np.where(take, val, best)
            where = np.where(take, np.ravel_multi_index(pos, sizes), where)
        values[(slice(None), *o)], indices[(slice(None), *o)] = best, where
    shape = lead + tuple(output_size)
    return values.reshape(shape), indices.reshape(shape)


@st.composite
def pool_params(draw, with_dilation=True):
    d = draw(st.integers(1, 3))
    ks = draw(st.lists(st.integers(1, 3), min_size=d, max_size=d))
    stride = draw(st.one_of(st.just([]), st.lists(st.integers(1, 3), min_size=d, max_size=d)))
    padding = [draw(st.integers(0, k // 2)) for k in ks]
    dilation = draw(st.lists(st.integers(1, 3), min_size=d, max_size=d)) if with_dilation else [1] * d
    ceil = draw(st.booleans())
    sizes = draw(st.lists(st.integers(1, 6 if d < 3 else 4), min_size=d, max_size=d))
    lead = draw(st.sampled_from([(), (2,), (0, 2), (2, 3)]))
    eff_stride = stride or ks
    assume(all(pool_out(*a, ceil) > 0 for a in zip(sizes, ks, eff_stride, padding, dilation)))
    return dict(
        ks=ks,
        stride=stride,
        eff_stride=eff_stride,
        padding=padding,
        dilation=dilation,
        ceil=ceil,
        shape=lead + tuple(sizes),
        layout=draw(st.sampled_from(LAYOUTS)),
        seed=draw(st.integers(0, 2**16)),
    )


def run(op, x, layout, *args):
    """Run a pooling prim on ``x`` in ``layout``: checks meta agreement and that the input is unchanged."""
    outs, (values,) = run_in_layout(op, [x], layout, *args, same=assert_same_bits)
    return [o.numpy() for o in outs], values


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@settings(max_examples=15, deadline=None)
@given(data_=st.data())
def test_max_pool(dtype, data_):
    c = data_.draw(pool_params())
    x = data(np.random.default_rng(c["seed"]), c["shape"], dtype, ties=True)
    args = (c["ks"], c["stride"], c["padding"], c["dilation"], c["ceil"])
    (values, indices), x = run(P.max_pool, x, c["layout"], *args)
    wide = x.astype(np.float64) if dtype.is_floating_point else x
    ref_v, ref_i = max_pool_ref(wide, c["ks"], c["eff_stride"], c["padding"], c["dilation"], c["ceil"])
    assert values.dtype == dtype.numpy and indices.dtype == np.int64
    np.testing.assert_array_equal(values.astype(ref_v.dtype), ref_v)
    np.testing.assert_array_equal(indices, ref_i)


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=15, deadline=None)
@given(data_=st.data(), count_include_pad=st.booleans(), divisor=st.sampled_from([None, None, 3, -2]))
def test_avg_pool(dtype, data_, count_include_pad, divisor):
    c = data_.draw(pool_params(with_dilation=False))
    x = data(np.random.default_rng(c["seed"]), c["shape"], dtype)
    args = (c["ks"], c["stride"], c["padding"], c["ceil"], count_include_pad, divisor)
    (out,), x = run(P.avg_pool, x, c["layout"], *args)
    with np.errstate(all="ignore"):
        ref = avg_pool_ref(
            x.astype(np.float64), c["ks"], c["eff_stride"], c["padding"], c["ceil"], count_include_pad, divisor
        )
    assert out.dtype == dtype.numpy
    assert_close(out, ref, dtype, np.abs(np.nan_to_num(x.astype(np.float64), posinf=0, neginf=0)))


@st.composite
def adaptive_params(draw):
    d = draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(1, 7 if d < 3 else 4), min_size=d, max_size=d))
    output_size = draw(st.lists(st.integers(0, 5), min_size=d, max_size=d))
    lead = draw(st.sampled_from([(), (2,), (0, 1), (1, 2)]))
    return dict(
        shape=lead + tuple(sizes),
        output_size=output_size,
        layout=draw(st.sampled_from(LAYOUTS)),
        seed=draw(st.integers(0, 2**16)),
    )


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=15, deadline=None)
@given(c=adaptive_params())
def test_adaptive_avg_pool(dtype, c):
    x = data(np.random.default_rng(c["seed"]), c["shape"], dtype)
    (out,), x = run(P.adaptive_avg_pool, x, c["layout"], c["output_size"])
    with np.errstate(all="ignore"):
        ref, _ = adaptive_ref(x.astype(np.float64), c["output_size"], "mean")
    assert out.dtype == dtype.numpy
    assert_close(out, ref, dtype, np.abs(np.nan_to_num(x.astype(np.float64), posinf=0, neginf=0)))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@settings(max_examples=15, deadline=None)
@given(c=adaptive_params())
def test_adaptive_max_pool(dtype, c):
    x = data(np.random.default_rng(c["seed"]), c["shape"], dtype, ties=True)
    (values, indices), x = run(P.adaptive_max_pool, x, c["layout"], c["output_size"])
    wide = x.astype(np.float64) if dtype.is_floating_point else x
    ref_v, ref_i = adaptive_ref(wide, c["output_size"], "max")
    assert values.dtype == dtype.numpy and indices.dtype == np.int64
    np.testing.assert_array_equal(values.astype(ref_v.dtype), ref_v)
    np.testing.assert_array_equal(indices, ref_i)


def test_max_pool_nan_and_tie_rules():
    x = ow.from_numpy(np.array([[1.0, np.nan, 3.0, np.nan, -np.inf, -np.inf, -np.inf, -np.inf]]))
    v, i = P.max_pool(x, [4], [4], [0], [1], False)
    np.testing.assert_array_equal(v.numpy(), [[np.nan, -np.inf]])
    np.testing.assert_array_equal(i.numpy(), [[3, 4]])  # the last NaN wins; all -inf: the first position
    v, i = P.max_pool(ow.from_numpy(np.array([[1.0, 3.0, 3.0, 0.0]])), [4], [], [0], [1], False)
    assert i.numpy().tolist() == [[1]]  # ties: the first maximum


def test_ceil_mode_output_sizes():
    x = ow.from_numpy(np.zeros((1, 1, 5)))
    assert P.max_pool(x, [2], [2], [0], [1], False)[0].shape[-1] == 2
    assert P.max_pool(x, [2], [2], [0], [1], True)[0].shape[-1] == 3
    # the last window would start in the right padding: dropped
    assert P.avg_pool(ow.from_numpy(np.zeros((1, 5))), [2], [2], [1], True, True, None).shape[-1] == 3  # not 4


# --- errors ---------------------------------------------------------------------------------------------


def cpu(shape, dtype=ow.float32):
    return ow.from_numpy(np.zeros(shape, dtype.numpy))


@pytest.mark.parametrize("make", [meta, cpu])
def test_errors(make):
    x, w = make((1, 4, 5)), make((2, 4, 3))
    conv = P.convolution
    cases = [
        (TypeError, "convolution", lambda: conv(x, make((2, 4, 3), ow.float64), None, [1], [0], [1], False, [0], 1)),
        (
            TypeError,
            "convolution",
            lambda: conv(make((1, 4, 5), ow.int32), make((2, 4, 3), ow.int32), None, [1], [0], [1], False, [0], 1),
        ),
        (ValueError, "convolution", lambda: conv(make((4, 5)), make((2, 3)), None, [1], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, make((2, 4, 3, 3)), None, [1], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, w, None, [1], [0], [1], False, [0], 3)),
        (ValueError, "convolution", lambda: conv(x, make((2, 3, 3)), None, [1], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, make((2, 4, 7)), None, [1], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, w, make((3,)), [1], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, w, None, [0], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, w, None, [1, 1], [0], [1], False, [0], 1)),
        (ValueError, "convolution", lambda: conv(x, make((4, 2, 3)), None, [2], [0], [1], True, [2], 1)),
        (ValueError, "convolution", lambda: conv(make((1, 4, 0)), w, None, [1], [0], [1], False, [0], 1)),
        (ValueError, "max_pool", lambda: P.max_pool(x, [2], [1], [2], [1], False)),
        (ValueError, "max_pool", lambda: P.max_pool(x, [2, 2, 2, 2], [1], [0], [1], False)),
        (ValueError, "max_pool", lambda: P.max_pool(x, [7], [1], [0], [1], False)),
        (ValueError, "max_pool", lambda: P.max_pool(x, [2], [0], [0], [1], False)),
        (TypeError, "max_pool", lambda: P.max_pool(make((2, 3), ow.complex64), [2], [1], [0], [1], False)),
        (TypeError, "max_pool", lambda: P.max_pool(make((2, 3), ow.bool), [2], [1], [0], [1], False)),
        (TypeError, "avg_pool", lambda: P.avg_pool(make((2, 3), ow.int32), [2], [1], [0], False, True, None)),
        (ValueError, "avg_pool", lambda: P.avg_pool(x, [2], [1], [0], False, True, 0)),
        (ValueError, "adaptive_avg_pool", lambda: P.adaptive_avg_pool(x, [-1])),
        (ValueError, "adaptive_avg_pool", lambda: P.adaptive_avg_pool(make((2, 0)), [2])),
        (TypeError, "adaptive_avg_pool", lambda: P.adaptive_avg_pool(make((2, 3), ow.int64), [2])),
        (ValueError, "adaptive_max_pool", lambda: P.adaptive_max_pool(x, [1, 1, 1, 1])),
        (TypeError, "adaptive_max_pool", lambda: P.adaptive_max_pool(make((2, 3), ow.complex128), [2])),
    ]
    for exc, name, fn in cases:
        with pytest.raises(exc, match=f"prims::{name}"):
            fn()
