"""nn layers (convolution, pooling, padding, folding, shuffles, resampling, grid sampling) against NumPy/SciPy.

Oracles are written here: convolution with ``scipy.signal.correlate`` per channel pair
(stride and dilation applied to the kernel and the output), pooling with explicit
window loops, padding with ``np.pad``, linear resampling and grid sampling with
``scipy.ndimage.map_coordinates`` (order 1, with the padding mode as its boundary mode),
bicubic resampling and the shuffles from their definitions.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import opweave as ow
import opweave.nn.functional as F
import pytest
import scipy.ndimage as ndi
import scipy.signal as sig
from hypothesis import given, settings
from hypothesis import strategies as st


def T(a, dtype=None):
    """An opweave tensor from a NumPy array."""
    return ow.tensor(np.asarray(a), dtype=dtype)


def close(actual, expected, rtol=1e-10, atol=1e-10):
    actual = actual.numpy() if isinstance(actual, ow.Tensor) else actual
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# -- oracles ---------------------------------------------------------------------------------------


def conv_oracle(x, w, b, stride, padding, dilation, groups):
    """Batched N-d convolution: per (output, input) channel pair, a SciPy correlation with the dilated kernel."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    c_in, c_out = x.shape[1] // groups, w.shape[0] // groups
    dilated_shape = [dl * (k - 1) + 1 for k, dl in zip(w.shape[2:], dilation)]
    out = None
    for n in range(x.shape[0]):
        rows = []
        for o in range(w.shape[0]):
            g = o // c_out
            acc = 0
            for c in range(c_in):
                kernel = np.zeros(dilated_shape)
                kernel[tuple(slice(None, None, dl) for dl in dilation)] = w[o, c]
                full = sig.correlate(xp[n, g * c_in + c], kernel, mode="valid", method="direct")
                acc = acc + full[tuple(slice(None, None, s) for s in stride)]
            rows.append(acc + (b[o] if b is not None else 0))
        sample = np.stack(rows)
        out = sample[None] if out is None else np.concatenate([out, sample[None]])
    if out is None:  # an empty batch
        sizes = [(n - dl * (k - 1) - 1) // s + 1 for n, k, s, dl in zip(xp.shape[2:], w.shape[2:], stride, dilation)]
        return np.zeros((0, w.shape[0], *sizes))
    return out


def conv_transpose_oracle(x, w, b, stride, padding, output_padding, groups, dilation):
    """Batched transposed convolution: every input element scatters ``x * kernel`` into the output."""
    d = x.ndim - 2
    c_in, c_out = x.shape[1] // groups, w.shape[1]
    sizes = [
        (n - 1) * s - 2 * p + dl * (k - 1) + op + 1
        for n, s, p, dl, k, op in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding)
    ]
    full = np.zeros((x.shape[0], c_out * groups) + tuple(s + 2 * p for s, p in zip(sizes, padding)))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        g = c // c_in
        for pos in itertools.product(*(range(s) for s in x.shape[2:])):
            for off in itertools.product(*(range(k) for k in w.shape[2:])):
                target = tuple(q * s + o * dl for q, s, o, dl in zip(pos, stride, off, dilation))
                if all(t < f for t, f in zip(target, full.shape[2:])):
                    full[(n, slice(g * c_out, (g + 1) * c_out)) + target] += x[(n, c) + pos] * w[(c, slice(None)) + off]
    out = full[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, sizes))]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * d)
    return out


def pool_oracle(x, kernel, stride, padding, dilation, ceil_mode, how, count_include_pad=True, divisor=None):
    """Max (values, flat indices) or average over explicit windows of the trailing ``len(kernel)`` dims."""
    d = len(kernel)
    spatial = x.shape[x.ndim - d :]
    outs = []
    for n, k, s, p, dl in zip(spatial, kernel, stride, padding, dilation):
        o = math.floor((n + 2 * p - dl * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) / s) + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        outs.append(o)
    lead = x.shape[: x.ndim - d]
    values = np.zeros(lead + tuple(outs), x.dtype)
    indices = np.zeros(values.shape, np.int64)
    for o_idx in itertools.product(*(range(o) for o in outs)):
        starts = [o * s - p for o, s, p in zip(o_idx, stride, padding)]
        taps = [[st + j * dl for j in range(k)] for st, k, dl in zip(starts, kernel, dilation)]
        valid = [[t for t in tp if 0 <= t < n] for tp, n in zip(taps, spatial)]
        for l_idx in np.ndindex(*lead):
            if how == "max":
                best, at = -np.inf, 0
                for pos in itertools.product(*valid):
                    v = x[l_idx + pos]
                    if v > best or np.isnan(v):
                        best, at = v, int(np.ravel_multi_index(pos, spatial))
                values[l_idx + o_idx], indices[l_idx + o_idx] = best, at
            else:
                total = sum(x[l_idx + pos] for pos in itertools.product(*valid))
                if divisor:
                    div = divisor
                elif count_include_pad:
                    div = math.prod(min(st + k, n + p) - st for st, k, n, p in zip(starts, kernel, spatial, padding))
                else:
                    div = math.prod(len(v) for v in valid)
                values[l_idx + o_idx] = total / div
    return values, indices


# -- convolution -----------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_conv_nd_matches_scipy(data):
    d = data.draw(st.integers(1, 2), label="d")
    groups = data.draw(st.sampled_from([1, 2]))
    c_in, c_out = groups * data.draw(st.integers(1, 2)), groups * data.draw(st.integers(1, 2))
    ks = [data.draw(st.integers(1, 3)) for _ in range(d)]
    stride = [data.draw(st.integers(1, 2)) for _ in range(d)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(d)]
    padding = [data.draw(st.integers(0, 2)) for _ in range(d)]
    spatial = [data.draw(st.integers(dl * (k - 1) + 1, 6)) for k, dl in zip(ks, dilation)]
    n = data.draw(st.integers(0, 2))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, c_in, *spatial))
    w = rng.standard_normal((c_out, c_in // groups, *ks))
    b = rng.standard_normal(c_out) if data.draw(st.booleans()) else None
    fn = ow.conv1d if d == 1 else ow.conv2d
    got = fn(T(x), T(w), None if b is None else T(b), stride, padding, dilation, groups)
    close(got, conv_oracle(x, w, b, stride, padding, dilation, groups), 1e-9, 1e-9)


def test_conv_unbatched_noncontiguous_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 7)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    xt = T(x).transpose(0, 1)  # (3, 5, 7) view, non-contiguous
    got = F.conv2d(xt, T(w), None, 1, 1)
    expect = conv_oracle(x.transpose(1, 0, 2)[None].astype(np.float64), w, None, (1, 1), (1, 1), (1, 1), 1)[0]
    assert got.dtype is ow.float32 and got.shape == expect.shape
    close(got, expect, 1e-5, 1e-5)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_conv_padding_same_and_valid(d):
    rng = np.random.default_rng(d)
    x = rng.standard_normal((2, 2) + (5,) * d)
    w = rng.standard_normal((3, 2) + (2,) * d)
    fn = getattr(F, f"conv{d}d")
    same = fn(T(x), T(w), None, 1, "same", 2)
    assert tuple(same.shape) == x.shape[:1] + (3,) + x.shape[2:]
    # dilation 2, kernel 2: total padding 2 per dim, 1 on each side
    close(same, conv_oracle(x, w, None, (1,) * d, (1,) * d, (2,) * d, 1))
    close(fn(T(x), T(w), padding="valid"), conv_oracle(x, w, None, (1,) * d, (0,) * d, (1,) * d, 1))
    odd = fn(T(x), T(w), padding="same")  # total padding 1: the extra element goes right
    padded = np.pad(x, [(0, 0), (0, 0)] + [(0, 1)] * d)
    close(odd, conv_oracle(padded, w, None, (1,) * d, (0,) * d, (1,) * d, 1))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_conv_transpose_scatter_oracle(data):
    d = data.draw(st.integers(1, 2), label="d")
    groups = data.draw(st.sampled_from([1, 2]))
    c_in, c_out = groups * data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    ks = [data.draw(st.integers(1, 3)) for _ in range(d)]
    stride = [data.draw(st.integers(1, 3)) for _ in range(d)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(d)]
    output_padding = [data.draw(st.integers(0, max(s, dl) - 1)) for s, dl in zip(stride, dilation)]
    spatial = [data.draw(st.integers(1, 4)) for _ in range(d)]
    padding = [
        data.draw(st.integers(0, max(0, ((n - 1) * s + dl * (k - 1)) // 2)))
        for n, s, dl, k in zip(spatial, stride, dilation, ks)
    ]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((2, c_in, *spatial))
    w = rng.standard_normal((c_in, c_out, *ks))
    b = rng.standard_normal(c_out * groups)
    fn = ow.conv_transpose1d if d == 1 else ow.conv_transpose2d
    got = fn(T(x), T(w), T(b), stride, padding, output_padding, groups, dilation)
    close(got, conv_transpose_oracle(x, w, b, stride, padding, output_padding, groups, dilation), 1e-9, 1e-9)


def test_convolution_generic_and_transposed_3d():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 2, 3, 3, 2)), rng.standard_normal((2, 1, 2, 2, 1))
    got = ow.convolution(T(x), T(w), None, [2], [1], [1], True, [1], 1)
    close(got, conv_transpose_oracle(x, w, None, (2,) * 3, (1,) * 3, (1,) * 3, 1, (1,) * 3))
    got3 = ow.conv_transpose3d(T(x), T(w), None, 2, 1, 1)
    close(got3, got)
    out = ow.empty(0, dtype=ow.float64)
    ow.convolution(T(x), T(w), None, [2], [1], [1], True, [1], 1, out=out)
    close(out, got)


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 2, 3, 3)), ValueError, "conv2d"),
        (lambda: ow.conv2d(ow.ones(3, 4), ow.ones(2, 3, 1, 1)), ValueError, "conv2d"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 3, 5, 5)), ValueError, "conv2d"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 3, 1, 1), stride=0), ValueError, "stride"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4, dtype=ow.bool), ow.ones(2, 3, 1, 1)), TypeError, "input"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 3, 1, 1, dtype=ow.float64)), TypeError, "weight"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 3, 1, 1), ow.ones(3)), ValueError, "bias"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 3, 1, 1), None, 2, "same"), ValueError, "same"),
        (lambda: ow.conv2d(ow.ones(1, 3, 4, 4), ow.ones(2, 3, 1, 1), None, 1, "full"), ValueError, "padding"),
        (
            lambda: ow.conv_transpose2d(ow.ones(1, 2, 3, 3), ow.ones(2, 1, 2, 2), None, 1, 0, 1),
            ValueError,
            "output_padding",
        ),
        (lambda: ow.conv1d(ow.ones(1, 4, 5), ow.ones(2, 2, 1), groups=3), ValueError, "groups"),
    ],
)
def test_conv_errors(call, exc, text):
    with pytest.raises(exc, match=text):
        call()


# -- pooling ------------------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_max_and_avg_pool_match_window_loops(data):
    d = data.draw(st.integers(1, 3), label="d")
    ks = [data.draw(st.integers(1, 3)) for _ in range(d)]
    stride = [data.draw(st.integers(1, 3)) for _ in range(d)]
    padding = [data.draw(st.integers(0, k // 2)) for k in ks]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(d)]
    spatial = [data.draw(st.integers(dl * (k - 1) + 1, 6)) for k, dl in zip(ks, dilation)]
    ceil_mode = data.draw(st.booleans())
    lead = [data.draw(st.integers(1, 2)) for _ in range(data.draw(st.integers(1, 2)))]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((*lead, *spatial))
    if data.draw(st.booleans()):
        x.flat[rng.integers(0, x.size)] = np.nan
    values, indices = getattr(ow, f"max_pool{d}d_with_indices")(T(x), ks, stride, padding, dilation, ceil_mode)
    ev, ei = pool_oracle(x, ks, stride, padding, dilation, ceil_mode, "max")
    close(values, ev, 0, 0)
    np.testing.assert_array_equal(indices.numpy(), ei)
    count_include_pad = data.draw(st.booleans())
    avg = getattr(F, f"avg_pool{d}d")(T(x), ks, stride, padding, ceil_mode, count_include_pad)
    expect, _ = pool_oracle(x, ks, stride, padding, (1,) * d, ceil_mode, "avg", count_include_pad)
    close(avg, expect)


def test_avg_pool_divisor_override_and_out():
    x = np.arange(2 * 5 * 6, dtype=np.float32).reshape(1, 2, 5, 6)
    got = ow.avg_pool2d(T(x), [2, 3], [2, 2], [1, 1], True, False, 4)
    expect, _ = pool_oracle(x.astype(np.float64), (2, 3), (2, 2), (1, 1), (1, 1), True, "avg", False, 4)
    close(got, expect, 1e-6, 1e-6)
    out = ow.empty(0)
    assert ow.avg_pool2d(T(x), 2, out=out) is out
    close(out, pool_oracle(x.astype(np.float64), (2, 2), (2, 2), (0, 0), (1, 1), False, "avg")[0], 1e-6, 1e-6)
    with pytest.raises(ValueError, match="divisor_override"):
        ow.avg_pool2d(T(x), 2, divisor_override=0)
    with pytest.raises(TypeError, match="avg_pool2d"):
        ow.avg_pool2d(T(x, ow.bool), 2)


def test_max_pool_integer_and_named_out_variant():
    x = np.random.default_rng(1).integers(-50, 50, (2, 3, 5, 4))
    v, i = F.max_pool2d(T(x), 2, 1, 1, return_indices=True)
    ev, ei = pool_oracle(x, (2, 2), (1, 1), (1, 1), (1, 1), False, "max")
    np.testing.assert_array_equal(v.numpy(), ev)
    np.testing.assert_array_equal(i.numpy(), ei)
    out, ind = ow.empty(0, dtype=ow.int64), ow.empty(0, dtype=ow.int64)
    res = ow.max_pool2d_with_indices(T(x), 2, 1, 1, out=out, indices=ind)
    assert res[0] is out and res[1] is ind
    np.testing.assert_array_equal(ind.numpy(), ei)


def test_adaptive_pools():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 7, 5))
    for out_size in ([3, 2], [7, 5], [1, 1], [4, 6]):
        rows = [(i * 7 // out_size[0], -(-(i + 1) * 7 // out_size[0])) for i in range(out_size[0])]
        cols = [(j * 5 // out_size[1], -(-(j + 1) * 5 // out_size[1])) for j in range(out_size[1])]
        mean = np.array([[x[..., a:b, c:e].mean(axis=(-1, -2)) for c, e in cols] for a, b in rows])
        close(F.adaptive_avg_pool2d(T(x), out_size), np.moveaxis(mean, (0, 1), (-2, -1)))
        v, i = F.adaptive_max_pool2d(T(x), out_size, return_indices=True)
        mx = np.array([[x[..., a:b, c:e].max(axis=(-1, -2)) for c, e in cols] for a, b in rows])
        close(v, np.moveaxis(mx, (0, 1), (-2, -1)))
        flat = x.reshape(2, 3, -1)
        np.testing.assert_array_equal(
            np.take_along_axis(flat, i.numpy().reshape(2, 3, -1), -1), v.numpy().reshape(2, 3, -1)
        )
    assert F.adaptive_avg_pool2d(T(x), [None, 2]).shape == (2, 3, 7, 2)
    close(F.adaptive_avg_pool1d(T(x[0, 0]), 1), x[0, 0].mean(-1, keepdims=True))
    close(F.adaptive_avg_pool3d(T(x), 1), x.mean(axis=(-3, -2, -1), keepdims=True))


def test_max_unpool_inverts_max_pool():
    rng = np.random.default_rng(4)
    x = rng.permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6).astype(np.float64)
    v, i = F.max_pool2d(T(x), 2, return_indices=True)
    up = F.max_unpool2d(v, i, 2)
    expect = np.zeros_like(x).reshape(2, 3, -1)
    np.put_along_axis(expect, i.numpy().reshape(2, 3, -1), v.numpy().reshape(2, 3, -1), -1)
    close(up, expect.reshape(x.shape))
    v1, i1 = F.max_pool1d(T(x[0, :, 0]), 3, return_indices=True)
    up1 = F.max_unpool1d(v1, i1, 3)
    assert up1.shape == (3, 6)
    np.testing.assert_array_equal(up1.numpy().max(-1), x[0, :, 0].max(-1))
    v3, i3 = F.max_pool3d(T(x[None, 0]), 2, return_indices=True)
    up3 = F.max_unpool3d(v3, i3, 2)
    assert up3.shape == (1, 2, 6, 6)
    np.testing.assert_array_equal(np.sort(up3.numpy()[up3.numpy() != 0]), np.sort(v3.numpy().ravel()))
    with pytest.raises(RuntimeError, match="max_unpool2d"):  # PyTorch: RuntimeError (an IndexError too here)
        ow.max_unpool2d(v, i * 100, [6, 6])
    with pytest.raises(TypeError, match="indices"):
        ow.max_unpool2d(v, i.to(ow.int32), [6, 6])
    with pytest.raises(ValueError, match="output_size"):
        F.max_unpool2d(v, i, 2, output_size=[9, 9])


def test_lp_pool():
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 2.0, (2, 3, 6, 4))
    got = F.lp_pool2d(T(x), 3, [2, 2])
    expect = (x.reshape(2, 3, 3, 2, 2, 2) ** 3).sum(axis=(3, 5)) ** (1 / 3)
    close(got, expect)
    got1 = F.lp_pool1d(T(x[0]), 2.0, 2)
    close(got1, np.sqrt((x[0].reshape(3, 6, 2, 2) ** 2).sum(-1)))


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda: ow.max_pool2d(ow.ones(1, 2, 4, 4), 3, 1, 2), ValueError, "padding"),
        (lambda: ow.max_pool2d(ow.ones(4, 4), 2), ValueError, "max_pool2d"),
        (lambda: ow.max_pool2d(ow.ones(1, 1, 2, 2), 3), ValueError, "output size"),
        (lambda: ow.max_pool2d(ow.ones(1, 1, 4, 4), [2, 2, 2]), ValueError, "kernel_size"),
        (lambda: ow.max_pool2d(ow.ones(1, 1, 4, 4, dtype=ow.bool), 2), TypeError, "max_pool2d"),
        (lambda: ow.avg_pool1d(ow.ones(1, 0, 4), 2), ValueError, "avg_pool1d"),
        (lambda: ow.adaptive_avg_pool2d(ow.ones(1, 1, 4, 4), [-1, 2]), ValueError, "output_size"),
    ],
)
def test_pool_errors(call, exc, text):
    with pytest.raises(exc, match=text):
        call()


# -- padding --------------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_pad_modes_match_numpy(data):
    d = data.draw(st.integers(1, 3), label="d")
    spatial = [data.draw(st.integers(1, 5)) for _ in range(d)]
    mode = data.draw(st.sampled_from(["reflect", "replicate", "circular", "constant"]))
    pads = []
    for n in reversed(spatial):
        limit = n - 1 if mode == "reflect" else n if mode == "circular" else 4
        pads += [data.draw(st.integers(-min(1, n - 1) if n > 1 else 0, limit)) for _ in range(2)]
    if any(n + pads[2 * (d - 1 - i)] + pads[2 * (d - 1 - i) + 1] < 1 for i, n in enumerate(spatial)):
        return
    x = np.random.default_rng(d).standard_normal((2, 2, *spatial))
    widths = [(0, 0), (0, 0)] + [(max(pads[2 * (d - 1 - i)], 0), max(pads[2 * (d - 1 - i) + 1], 0)) for i in range(d)]
    crop = [slice(None)] * 2 + [
        slice(max(-pads[2 * (d - 1 - i)], 0), n + sum(widths[2 + i]) - max(-pads[2 * (d - 1 - i) + 1], 0))
        for i, n in enumerate(spatial)
    ]
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap", "constant": "constant"}[mode]
    if mode == "circular":  # PyTorch crops by the negative pads first, then wraps around what is left
        cut = [slice(None)] * 2 + [
            slice(max(-pads[2 * (d - 1 - i)], 0), n - max(-pads[2 * (d - 1 - i) + 1], 0)) for i, n in enumerate(spatial)
        ]
        kept = x[tuple(cut)]
        if any(max(w) > m for w, m in zip(widths[2:], kept.shape[2:], strict=True)):
            with pytest.raises(ValueError, match="wrap around"):
                F.pad(T(x), pads, mode=mode)
            return
        expect = np.pad(kept, widths, mode="wrap")
    else:
        expect = np.pad(x, widths, mode=np_mode)[tuple(crop)]
    close(F.pad(T(x), pads, mode=mode), expect, 0, 0)
    if mode in ("reflect", "replicate"):
        op = getattr(ow, f"{'reflection' if mode == 'reflect' else 'replication'}_pad{d}d")
        close(op(T(x)[0], pads), expect[0], 0, 0)


def test_pad_errors_and_bool():
    x = ow.ones(1, 2, 3)
    with pytest.raises(ValueError, match="reflection_pad1d"):
        ow.reflection_pad1d(x, [3, 0])
    with pytest.raises(ValueError, match="wrap around"):
        ow._pad_circular(x, [4, 0])
    with pytest.raises(ValueError, match="value"):
        F.pad(x, [1, 1], mode="reflect", value=2.0)
    with pytest.raises(ValueError, match="Unrecognised"):
        F.pad(x, [1, 1], mode="mirror")
    with pytest.raises(ValueError, match="_pad_enum"):
        ow._pad_enum(ow.ones(2), [1, 1, 1, 1, 1, 1], 1)
    b = ow.tensor([[True, False, False]])
    np.testing.assert_array_equal(ow.replication_pad1d(b, [1, 2]).numpy(), [[True, True, False, False, False, False]])


# -- folding and shuffles ---------------------------------------------------------------------------


def test_unfold_fold_adjoint_and_oracle():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 6, 7))
    k, dl, p, s = (2, 3), (2, 1), (1, 0), (2, 2)
    cols = F.unfold(T(x), k, dl, p, s)
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (0, 0)])
    oh, ow_ = (8 - 3) // 2 + 1, (7 - 3) // 2 + 1
    expect = np.stack(
        [
            xp[:, :, i * 2 : i * 2 + 2 * (oh - 1) + 1 : 2, j : j + 2 * (ow_ - 1) + 1 : 2].reshape(2, 3, -1)
            for i in range(2)
            for j in range(3)
        ],
        2,
    ).reshape(2, 18, -1)
    close(cols, expect, 0, 0)
    y = rng.standard_normal(cols.shape)
    folded = F.fold(T(y), (6, 7), k, dl, p, s)
    # fold is unfold's adjoint: <unfold(x), y> == <x, fold(y)>
    np.testing.assert_allclose((expect * y).sum(), (x * folded.numpy()).sum(), rtol=1e-10)
    assert F.unfold(T(x[0]), 2).shape == (12, 30)
    with pytest.raises(ValueError, match="col2im"):
        F.fold(T(y), (6, 9), k, dl, p, s)


def test_pixel_and_channel_shuffle():
    x = np.arange(2 * 12 * 2 * 3).reshape(2, 12, 2, 3)
    ps = F.pixel_shuffle(T(x), 2).numpy()
    for c, h, w in itertools.product(range(3), range(4), range(6)):
        assert ps[1, c, h, w] == x[1, c * 4 + (h % 2) * 2 + w % 2, h // 2, w // 2]
    np.testing.assert_array_equal(F.pixel_unshuffle(T(ps), 2).numpy(), x)
    cs = F.channel_shuffle(T(x), 3).numpy()
    np.testing.assert_array_equal(cs[:, 1], x[:, 4])
    np.testing.assert_array_equal(cs[:, 3], x[:, 1])
    t = T(x)
    out = ow.pixel_shuffle(t, 1)
    assert out.data_ptr() != t.data_ptr()
    with pytest.raises(ValueError, match="pixel_shuffle"):
        F.pixel_shuffle(T(x), 5)


# -- resampling --------------------------------------------------------------------------------------


def _linear_coords(n, out, align_corners, scale=None):
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        return dst * ((n - 1) / (out - 1) if out > 1 else 0)
    return np.maximum((dst + 0.5) * (1 / scale if scale else n / out) - 0.5, 0)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_linear_modes_match_map_coordinates(data):
    d = data.draw(st.integers(1, 3), label="d")
    spatial = [data.draw(st.integers(1, 5)) for _ in range(d)]
    size = [data.draw(st.integers(1, 8)) for _ in range(d)]
    align = data.draw(st.booleans())
    x = np.random.default_rng(d).standard_normal((2, 2, *spatial))
    mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[d]
    got = F.interpolate(T(x), size=size, mode=mode, align_corners=align)
    grids = np.meshgrid(*(_linear_coords(n, o, align) for n, o in zip(spatial, size)), indexing="ij")
    expect = np.stack(
        [[ndi.map_coordinates(x[a, b], grids, order=1, mode="nearest") for b in range(2)] for a in range(2)]
    )
    close(got, expect, 1e-9, 1e-9)


def test_nearest_modes_and_scale_factor():
    x = np.arange(2 * 5 * 7, dtype=np.float32).reshape(1, 2, 5, 7)
    got = F.interpolate(T(x), size=(8, 3), mode="nearest")
    rows = np.minimum(np.floor(np.arange(8) * np.float32(5 / 8)).astype(int), 4)
    cols = np.minimum(np.floor(np.arange(3) * np.float32(7 / 3)).astype(int), 6)
    close(got, x[:, :, rows][..., cols], 0, 0)
    exact = F.interpolate(T(x), size=(8, 3), mode="nearest-exact")
    rows = np.minimum(np.floor((np.arange(8) + 0.5) * np.float32(5 / 8)).astype(int), 4)
    cols = np.minimum(np.floor((np.arange(3) + 0.5) * np.float32(7 / 3)).astype(int), 6)
    close(exact, x[:, :, rows][..., cols], 0, 0)
    up = F.interpolate(T(x), scale_factor=2)
    close(up, x.repeat(2, 2).repeat(2, 3), 0, 0)
    sf = F.interpolate(T(x), scale_factor=1.5, mode="nearest")
    assert sf.shape == (1, 2, 7, 10)
    rows = np.minimum(np.floor(np.arange(7) * np.float32(1 / 1.5)).astype(int), 4)
    close(sf[..., 0], x[:, :, rows, 0], 0, 0)
    rec = F.interpolate(T(x), scale_factor=1.5, mode="nearest", recompute_scale_factor=True)
    rows = np.minimum(np.floor(np.arange(7) * np.float32(5 / 7)).astype(int), 4)
    close(rec[..., 0], x[:, :, rows, 0], 0, 0)
    ints = F.interpolate(T(x.astype(np.int64)), size=(3, 3))
    assert ints.dtype is ow.int64
    area = F.interpolate(T(x), size=(5, 7), mode="area")
    close(area, x, 0, 0)


def test_bicubic_keys_kernel():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 4, 5))
    a = -0.75

    def weights(t):
        def near(v):
            return ((a + 2) * v - (a + 3)) * v * v + 1

        def far(v):
            return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    def resize(img, axis, out, align):
        n = img.shape[axis]
        dst = np.arange(out, dtype=np.float64)
        src = dst * (n - 1) / (out - 1) if align else (dst + 0.5) * n / out - 0.5
        base = np.floor(src).astype(int)
        res = 0
        for k, w in enumerate(weights(src - base)):
            idx = np.clip(base + k - 1, 0, n - 1)
            shape = [1] * img.ndim
            shape[axis] = out
            res = res + np.take(img, idx, axis=axis) * w.reshape(shape)
        return res

    for align in (False, True):
        got = F.interpolate(T(x), size=(7, 3), mode="bicubic", align_corners=align)
        close(got, resize(resize(x, 3, 3, align), 2, 7, align), 1e-9, 1e-9)
    close(F.interpolate(T(x), size=(4, 5), mode="bicubic"), x, 0, 0)


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"size": 3, "scale_factor": 2.0}, ValueError, "only one"),
        ({}, ValueError, "either size or scale_factor"),
        ({"size": 3, "align_corners": True}, ValueError, "align_corners"),
        ({"size": [3, 3, 3]}, ValueError, "spatial dimensions"),
        ({"size": 3, "mode": "linear"}, NotImplementedError, "linear"),
        ({"size": 3, "mode": "nearest", "antialias": True}, ValueError, "nti-alias"),
        ({"size": 3, "mode": "cubic"}, NotImplementedError, "cubic"),
        ({"size": 3, "recompute_scale_factor": True}, ValueError, "recompute_scale_factor"),
    ],
)
def test_interpolate_errors(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        F.interpolate(ow.ones(1, 1, 4, 4), **kwargs)


def test_upsample_ops_out_and_errors():
    x = ow.randn(1, 2, 3, 4)
    out = ow.empty(0)
    assert ow.upsample_bilinear2d(x, [6, 8], False, out=out) is out
    close(out, ow.upsample_bilinear2d(x, [6, 8], False).numpy(), 0, 0)
    with pytest.raises(ValueError, match="exactly one"):
        ow.upsample_nearest2d(x, [4, 4], [2.0, 2.0])
    with pytest.raises(ValueError, match="upsample_nearest2d"):
        ow.upsample_nearest2d(ow.ones(2, 3, 4), [4, 4])
    with pytest.raises(TypeError, match="upsample_bilinear2d"):
        ow.upsample_bilinear2d(ow.ones(1, 1, 2, 2, dtype=ow.int64), [4, 4], False)
    with pytest.warns(UserWarning, match="deprecated"):
        assert F.upsample_bilinear(x, scale_factor=2).shape == (1, 2, 6, 8)


# -- grid sampling ---------------------------------------------------------------------------------


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bilinear_matches_map_coordinates(padding_mode, align_corners):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-1.6, 1.6, (2, 3, 6, 2))
    got = F.grid_sample(T(x), T(grid), "bilinear", padding_mode, align_corners)
    h, w = x.shape[2:]
    gx, gy = grid[..., 0], grid[..., 1]
    if align_corners:
        ix, iy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
    else:
        ix, iy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
    scipy_mode = {"zeros": "grid-constant", "border": "nearest"}.get(padding_mode)
    scipy_mode = scipy_mode or ("mirror" if align_corners else "reflect")
    expect = np.stack(
        [
            [ndi.map_coordinates(x[n, c], [iy[n], ix[n]], order=1, mode=scipy_mode, cval=0.0) for c in range(3)]
            for n in range(2)
        ]
    )
    close(got, expect, 1e-9, 1e-9)


def test_grid_sample_nearest_bicubic_and_3d():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 2, 4, 4))
    # grid points exactly on pixel centres: every mode returns the pixels themselves
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 4), indexing="ij")
    grid = np.stack([xs, ys], -1)[None]
    for mode in ("nearest", "bilinear", "bicubic"):
        close(F.grid_sample(T(x), T(grid), mode, "border", True), x, 1e-12, 1e-12)
    x3 = rng.standard_normal((1, 2, 3, 4, 5))
    zs, ys, xs = np.meshgrid(*(np.linspace(-1, 1, n) for n in (3, 4, 5)), indexing="ij")
    g3 = np.stack([xs, ys, zs], -1)[None]
    close(F.grid_sample(T(x3), T(g3), "bilinear", "zeros", True), x3, 1e-12, 1e-12)
    close(F.grid_sample(T(x3), T(g3), "nearest", "zeros", True), x3, 0, 0)
    with pytest.raises(ValueError, match="bicubic"):
        F.grid_sample(T(x3), T(g3), "bicubic", align_corners=True)
    with pytest.raises(ValueError, match="grid_sampler"):
        ow.grid_sampler_2d(T(x), T(grid[..., :1]), 0, 0, False)
    with pytest.warns(UserWarning, match="align_corners"):
        F.grid_sample(T(x), T(grid))


def test_affine_grid_identity_and_formula():
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0.5, -0.2, 0.1], [0.3, 1.5, -0.4]]])
    for align in (False, True):
        g = F.affine_grid(T(theta), [2, 1, 3, 4], align_corners=align).numpy()
        xs = np.linspace(-1, 1, 4) * (1 if align else 3 / 4)
        ys = np.linspace(-1, 1, 3) * (1 if align else 2 / 3)
        base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((3, 4))), -1)
        np.testing.assert_allclose(g, np.einsum("hwj,nij->nhwi", base, theta), rtol=1e-12, atol=1e-12)
    g3 = F.affine_grid(T(np.eye(3, 4)[None]), [1, 1, 2, 3, 4], align_corners=True)
    assert g3.shape == (1, 2, 3, 4, 3)
    np.testing.assert_allclose(g3.numpy()[0, 1, 2, 3], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="affine_grid_generator"):
        ow.affine_grid_generator(T(theta), [2, 1, 3, 4, 5], False)


# -- other devices ------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["meta", "vnpu"])
def test_layers_on_other_devices(device):
    if device == "vnpu":
        pytest.importorskip("opweave_vendor_example")
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((2, 4, 6, 6)).astype(np.float32), rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    calls = [
        lambda x, w: F.conv2d(x, w, None, 1, 1, 1, 2),
        lambda x, w: F.conv_transpose2d(x, w, None, 2, 1),
        lambda x, w: F.max_pool2d(x, 3, 2, 1),
        lambda x, w: F.interpolate(x, scale_factor=1.5, mode="bicubic"),
        lambda x, w: F.pad(x, [1, 2, 2, 1], mode="reflect"),
        lambda x, w: F.unfold(x, 2),
        lambda x, w: F.grid_sample(
            x,
            F.affine_grid(ow.eye(2, 3, device=x.device)[None].expand(2, 2, 3), [2, 4, 3, 3], False),
            align_corners=False,
        ),
    ]
    for call in calls:
        ref = call(T(x), T(w))
        got = call(T(x).to(device), T(w).to(device))
        assert got.device.type == device and got.shape == ref.shape and got.dtype is ref.dtype
        if device != "meta":
            close(got.to("cpu"), ref.numpy(), 1e-5, 1e-5)


# -- antialiasing, fractional pooling, conv_tbc ------------------------------------------------------


def _aa_matrix(n, out, kind):
    """PIL-style resampling weights (out, n): the filter stretched by the downscaling ratio, rows normalised."""
    ratio = n / out
    support = (1.0 if kind == "bilinear" else 2.0) * max(ratio, 1.0)
    stretch = max(ratio, 1.0)
    w = np.zeros((out, n))
    for i in range(out):
        centre = ratio * (i + 0.5)
        for j in range(max(int(centre - support + 0.5), 0), min(int(centre + support + 0.5), n)):
            t = abs((j + 0.5 - centre) / stretch)
            if kind == "bilinear":
                w[i, j] = max(0.0, 1 - t)
            else:
                a = -0.5
                w[i, j] = (
                    ((a + 2) * t - (a + 3)) * t * t + 1 if t < 1 else (a * (((t - 5) * t + 8) * t - 4) if t < 2 else 0)
                )
        w[i] /= w[i].sum()
    return w


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias(mode):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 12, 9))
    got = F.interpolate(T(x), size=(5, 4), mode=mode, antialias=True)
    expect = np.einsum("oh,nchw,pw->ncop", _aa_matrix(12, 5, mode), x, _aa_matrix(9, 4, mode))
    close(got, expect, 1e-9, 1e-9)
    # upsampling with antialias keeps the plain filter's support
    up = F.interpolate(T(x), size=(15, 9), mode=mode, antialias=True)
    close(up, np.einsum("oh,nchw->ncow", _aa_matrix(12, 15, mode), x), 1e-9, 1e-9)


def test_fractional_max_pool_windows():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 10, 7))
    samples = rng.random((2, 3, 2))
    v, i = F.fractional_max_pool2d(T(x), (3, 2), output_size=(4, 5), return_indices=True, _random_samples=T(samples))
    for n, c in itertools.product(range(2), range(3)):
        u_w, u_h = samples[n, c]
        rows = [int((k + u_h) * (7 / 3)) - int(u_h * (7 / 3)) for k in range(3)] + [7]
        cols = [int((k + u_w) * (5 / 4)) - int(u_w * (5 / 4)) for k in range(4)] + [5]
        for a, b in itertools.product(range(4), range(5)):
            window = x[n, c, rows[a] : rows[a] + 3, cols[b] : cols[b] + 2]
            assert v.numpy()[n, c, a, b] == window.max()
            r, q = np.unravel_index(window.argmax(), window.shape)
            assert i.numpy()[n, c, a, b] == (rows[a] + r) * 7 + cols[b] + q
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        F.fractional_max_pool2d(T(x), 2)
    with pytest.raises(ValueError, match="too large"):
        ow.fractional_max_pool2d(T(x), [3, 3], [9, 5], T(samples))
    with pytest.raises(ValueError, match="random_samples"):
        ow.fractional_max_pool2d(T(x), [2, 2], [4, 4], T(samples[:1]))
    assert F.fractional_max_pool3d(ow.randn(1, 2, 6, 6, 6), 2, output_ratio=(0.5, 0.5, 0.5)).shape == (1, 2, 3, 3, 3)


def test_conv_tbc():
    rng = np.random.default_rng(13)
    x, w, b = rng.standard_normal((6, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    xp = np.pad(x, [(1, 1), (0, 0), (0, 0)])
    expect = np.stack([np.einsum("knc,kco->no", xp[t : t + 3], w) + b for t in range(6)])
    close(ow.conv_tbc(T(x), T(w), T(b), 1), expect)
    with pytest.raises(ValueError, match="conv_tbc"):
        ow.conv_tbc(T(x), T(w[:, :2]), T(b), 1)
