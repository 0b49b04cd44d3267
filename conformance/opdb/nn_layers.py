"""Op database entries: nn layers (convolution, pooling, padding, folding, shuffles, resampling, grid sampling).

Every oracle is written here with NumPy from the definition, independently of
opweave's kernels: convolution as a shift-and-accumulate over kernel offsets (one
``einsum`` per offset), transposed convolution as a scatter-add of input times
kernel, pooling as explicit loops over windows with PyTorch's divisor and NaN rules,
padding with ``np.pad``, ``im2col``/``col2im`` as strided slice copies/additions,
resampling from the per-dim source-index formulas, and grid sampling per output
point. Samples cover batched and unbatched inputs, transposed and strided layouts,
groups, dilation, ``ceil_mode``, ``align_corners`` and empty batches where the op
admits them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import opweave as ow

from . import register
from ._cases import TA, Gen, K, S, T, Val, entry, sample
from ._core import ALL, FLOAT, REAL, Arr, ErrorInput

NUMERIC_NO_BOOL = tuple(d for d in ALL if d is not ow.bool)
TOL = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-4, 1e-4),
    "float64": (1e-9, 1e-9),
    "complex64": (1e-4, 1e-4),
    "complex128": (1e-9, 1e-9),
}


def _per_dim(v, d):
    v = [v] if isinstance(v, (int, np.integer)) else list(v)
    return v * d if len(v) == 1 else v


def _errors(*cases):
    """An ``error_inputs`` generator from ``(K(...), ExceptionType)`` pairs."""

    def gen(rng, dtype):
        for (args, kwargs), exc in cases:
            yield ErrorInput(sample(args, kwargs, rng, dtype), exc)

    return gen


# -- convolution ------------------------------------------------------------------------------


def _batched(fn):
    """Run a batched oracle on an unbatched input (C, *S) too."""

    def oracle(x, w, *args, d, **kwargs):
        if x.ndim == d + 1:
            return fn(x[None], w, *args, d=d, **kwargs)[0]
        return fn(x, w, *args, d=d, **kwargs)

    return oracle


@_batched
def _conv_np(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, *, d):
    stride, dilation = _per_dim(stride, d), _per_dim(dilation, d)
    ks = w.shape[2:]
    if isinstance(padding, str):
        if padding == "same":
            total = [dl * (k - 1) for k, dl in zip(ks, dilation)]
            x = np.pad(x, [(0, 0), (0, 0)] + [(t // 2, t - t // 2) for t in total])
        padding = [0] * d
    padding = _per_dim(padding, d)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [(n - dl * (k - 1) - 1) // s + 1 for n, k, s, dl in zip(xp.shape[2:], ks, stride, dilation)]
    c_in, c_out = x.shape[1] // groups, w.shape[0] // groups
    y = np.zeros((x.shape[0], w.shape[0], *out), dtype=np.result_type(x, w))
    for g in range(groups):
        xs = xp[:, g * c_in : (g + 1) * c_in]
        for off in itertools.product(*(range(k) for k in ks)):
            window = tuple(
                slice(o * dl, o * dl + s * (n - 1) + 1, s) for o, dl, s, n in zip(off, dilation, stride, out)
            )
            patch = xs[(slice(None), slice(None), *window)]
            y[:, g * c_out : (g + 1) * c_out] += np.einsum(
                "nc...,oc->no...", patch, w[(slice(g * c_out, (g + 1) * c_out), slice(None), *off)]
            )
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * d)
    return y


@_batched
def _conv_transpose_np(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, *, d):
    stride, padding, dilation = _per_dim(stride, d), _per_dim(padding, d), _per_dim(dilation, d)
    output_padding = _per_dim(output_padding, d)
    ks, spatial = w.shape[2:], x.shape[2:]
    c_in, c_out = x.shape[1] // groups, w.shape[1]
    full = [
        (n - 1) * s + dl * (k - 1) + 1 + op for n, s, dl, k, op in zip(spatial, stride, dilation, ks, output_padding)
    ]
    y = np.zeros((x.shape[0], c_out * groups, *full), dtype=np.result_type(x, w))
    for g in range(groups):
        xs = x[:, g * c_in : (g + 1) * c_in]
        for off in itertools.product(*(range(k) for k in ks)):
            target = tuple(
                slice(o * dl, o * dl + s * (n - 1) + 1, s) for o, dl, s, n in zip(off, dilation, stride, spatial)
            )
            kernel = w[(slice(g * c_in, (g + 1) * c_in), slice(None), *off)]
            y[(slice(None), slice(g * c_out, (g + 1) * c_out), *target)] += np.einsum("nc...,co->no...", xs, kernel)
    sizes = [
        (n - 1) * s - 2 * p + dl * (k - 1) + op + 1
        for n, s, p, dl, k, op in zip(spatial, stride, padding, dilation, ks, output_padding)
    ]
    y = y[(slice(None), slice(None), *(slice(p, p + n) for p, n in zip(padding, sizes)))]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * d)
    return y


def _convolution_np(x, w, b, stride, padding, dilation, transposed, output_padding, groups, *flags):
    d = x.ndim - 2
    if transposed:
        return _conv_transpose_np(x, w, b, stride, padding, output_padding, groups, dilation, d=d)
    return _conv_np(x, w, b, stride, padding, dilation, groups, d=d)


def _conv_tbc_np(x, w, b, pad=0):
    """y[t, n, o] = b[o] + sum over k, c of x_padded[t + k, n, c] * w[k, c, o]."""
    xp = np.pad(x, [(pad, pad), (0, 0), (0, 0)])
    steps = xp.shape[0] - w.shape[0] + 1
    y = np.zeros((steps, x.shape[1], w.shape[2])) + b
    for k in range(w.shape[0]):
        y += np.einsum("tnc,co->tno", xp[k : k + steps], w[k])
    return y


def _conv_lines():
    def conv(name, d, cases, oracle, dtypes=FLOAT, errors=None):
        return entry(name, lambda *a, **k: oracle(*a, d=d, **k), cases, dtypes, tolerances=TOL, error_inputs=errors)

    c1 = [
        K(TA((2, 4, 7), T), TA((6, 2, 3)), TA((6,)), 2, 1, 1, 2),
        K(TA((3, 9), S), TA((2, 3, 2)), None, 1, 0, 2),
        K(TA((1, 2, 5)), TA((3, 2, 5)), TA((3,)), [1], [2], [1], 1),
        K(TA((0, 2, 5)), TA((3, 2, 2))),
    ]
    c2 = [
        K(TA((2, 4, 6, 7), T), TA((6, 2, 3, 3)), TA((6,)), 2, 1, 1, 2),
        K(TA((3, 5, 6), S), TA((2, 3, 2, 3)), None, [1, 2], [0, 1], [2, 1]),
        K(TA((1, 2, 5, 5)), TA((3, 2, 1, 1)), TA((3,)), stride=3),
        K(TA((2, 3, 4, 4)), TA((6, 1, 2, 2), T), None, 1, 1, 1, 3),
        K(TA((0, 2, 4, 4)), TA((3, 2, 2, 2))),
    ]
    c3 = [
        K(TA((1, 4, 4, 5, 5), T), TA((2, 2, 2, 3, 2)), TA((2,)), 1, 1, 1, 2),
        K(TA((2, 3, 4, 4), S), TA((2, 2, 2, 2, 2)), None, 2, 0, [1, 2, 1]),
        K(TA((1, 1, 3, 3, 3)), TA((1, 1, 1, 1, 1)), TA((1,))),
    ]
    p1 = [K(TA((2, 3, 7), T), TA((4, 3, 4)), TA((4,)), 1, "same", 2), K(TA((3, 6)), TA((2, 3, 3)), None, 1, "valid")]
    p1 += [K(TA((1, 4, 6), S), TA((4, 2, 2)), TA((4,)), padding="same", groups=2)]
    p2 = [K(TA((2, 3, 6, 7), T), TA((4, 3, 2, 3)), TA((4,)), 1, "same", [2, 1])]
    p2 += [
        K(TA((3, 5, 6), S), TA((2, 3, 3, 2)), None, 1, "valid"),
        K(TA((1, 2, 4, 4)), TA((2, 1, 4, 1)), None, 1, "same", 1, 2),
    ]
    p3 = [
        K(TA((1, 2, 4, 5, 4), T), TA((3, 2, 2, 3, 2)), TA((3,)), 1, "same"),
        K(TA((2, 3, 3, 3)), TA((1, 2, 2, 1, 2)), None, 1, "valid"),
    ]
    t1 = [
        K(TA((2, 4, 5), T), TA((4, 3, 3)), TA((6,)), 2, 1, 1, 2),
        K(TA((3, 6), S), TA((3, 2, 2)), None, 1, 0, 0, 1, 2),
        K(TA((1, 2, 4)), TA((2, 3, 4)), TA((3,)), 3, 2, 2),
        K(TA((0, 2, 4)), TA((2, 3, 2))),
    ]
    t2 = [
        K(TA((2, 4, 3, 4), T), TA((4, 3, 3, 2)), TA((6,)), 2, 1, 1, 2),
        K(TA((3, 4, 5), S), TA((3, 2, 2, 3)), None, [1, 2], [0, 1], [0, 1], 1, [2, 1]),
        K(TA((1, 2, 3, 3)), TA((2, 1, 3, 3)), TA((1,)), 3, 1, 2),
    ]
    t3 = [
        K(TA((1, 4, 2, 3, 3), T), TA((4, 1, 2, 2, 3)), TA((2,)), 2, 1, 1, 2),
        K(TA((2, 3, 3, 2), S), TA((2, 2, 2, 1, 2)), None, 1, 0, 0, 1, 2),
    ]
    conv_generic = [
        K(TA((2, 4, 6, 7), T), TA((6, 2, 3, 3)), TA((6,)), [2, 1], [1, 0], [1, 2], False, [0], 2),
        K(TA((2, 4, 5), S), TA((4, 3, 3)), TA((6,)), [2], [1], [1], True, [1], 2),
        K(TA((1, 2, 3, 3, 3)), TA((2, 1, 2, 2, 2)), None, [1], [0], [1], True, [0], 1),
    ]
    flags = [K(*c[0], False, True, False, True) for c in conv_generic]
    tbc = [K(TA((6, 2, 3), T), TA((3, 3, 4)), TA((4,)), 1), K(TA((5, 1, 2), S), TA((2, 2, 3)), TA((3,)))]
    tbc += [K(TA((4, 0, 2)), TA((1, 2, 2)), TA((2,)), 2)]
    bad_conv = _errors(
        (K(TA((2, 3, 5, 5)), TA((4, 2, 3, 3))), ValueError),
        (K(TA((2, 3, 2, 2)), TA((4, 3, 3, 3))), ValueError),
        (K(TA((2, 3, 5, 5, 5, 5)), TA((4, 3, 3, 3))), ValueError),
        (K(TA((2, 3, 5, 5)), TA((4, 3, 3, 3)), TA((3,))), ValueError),
        (K(TA((2, 3, 5, 5)), TA((4, 3, 3, 3), dtype=ow.int64)), TypeError),
    )
    bad_same = _errors((K(TA((2, 3, 5, 5)), TA((4, 3, 3, 3)), None, 2, "same"), ValueError))
    bad_t = _errors(
        (K(TA((2, 3, 4, 4)), TA((2, 3, 3, 3))), ValueError),
        (K(TA((2, 2, 4, 4)), TA((2, 3, 3, 3)), None, 1, 0, 2), ValueError),
    )
    return [
        conv("conv1d", 1, c1, _conv_np),
        conv("conv2d", 2, c2, _conv_np, errors=bad_conv),
        conv("conv3d", 3, c3, _conv_np),
        conv("conv1d.padding", 1, p1, _conv_np),
        conv("conv2d.padding", 2, p2, _conv_np, errors=bad_same),
        conv("conv3d.padding", 3, p3, _conv_np),
        conv("conv_transpose1d", 1, t1, _conv_transpose_np),
        conv("conv_transpose2d.input", 2, t2, _conv_transpose_np, errors=bad_t),
        conv("conv_transpose3d.input", 3, t3, _conv_transpose_np),
        entry("convolution", _convolution_np, conv_generic, FLOAT, tolerances=TOL),
        entry("_convolution", _convolution_np, flags, FLOAT, tolerances=TOL),
        entry("conv_tbc", _conv_tbc_np, tbc, FLOAT, tolerances=TOL),
    ]


# -- pooling ------------------------------------------------------------------------------------------


def _windows(n, k, s, p, dl, ceil_mode):
    """Per output index: the input positions of its window (may fall outside ``[0, n)``)."""
    out = (n + 2 * p - dl * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return [[o * s - p + j * dl for j in range(k)] for o in range(out)]


def _max_pool_np(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, d, indices=False):
    ks = _per_dim(kernel_size, d)
    st = [stride] if isinstance(stride, int) else list(stride)
    st = _per_dim(st, d) if st else ks
    pd, dl = _per_dim(padding, d), _per_dim(dilation, d)
    spatial = x.shape[x.ndim - d :]
    wins = [_windows(n, k, s, p, di, ceil_mode) for n, k, s, p, di in zip(spatial, ks, st, pd, dl)]
    lead = x.shape[: x.ndim - d]
    values = np.zeros(lead + tuple(len(w) for w in wins), x.dtype)
    where = np.zeros(values.shape, np.int64)
    for out_idx in itertools.product(*(range(len(w)) for w in wins)):
        for lead_idx in np.ndindex(*lead):
            best, best_at = None, 0
            for pos in itertools.product(*(wins[i][o] for i, o in enumerate(out_idx))):
                if any(q < 0 or q >= n for q, n in zip(pos, spatial)):
                    continue
                v = x[lead_idx + pos]
                if best is None or v > best or np.isnan(v):
                    best, best_at = v, int(np.ravel_multi_index(pos, spatial))
            values[lead_idx + out_idx], where[lead_idx + out_idx] = best, best_at
    return (values, where) if indices else values


def _avg_pool_np(
    x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None, *, d
):
    ks = _per_dim(kernel_size, d)
    st = list(stride) if not isinstance(stride, int) else [stride]
    st = _per_dim(st, d) if st else ks
    pd = _per_dim(padding, d)
    spatial = x.shape[x.ndim - d :]
    ranges = []
    for n, k, s, p in zip(spatial, ks, st, pd):
        dim_ranges = []
        for win in _windows(n, k, s, p, 1, ceil_mode):
            start, end = win[0], min(win[0] + k, n + p)
            dim_ranges.append((start, end, max(start, 0), min(end, n)))
        ranges.append(dim_ranges)
    lead = x.shape[: x.ndim - d]
    out = np.zeros(lead + tuple(len(r) for r in ranges))
    for out_idx in itertools.product(*(range(len(r)) for r in ranges)):
        rs = [ranges[i][o] for i, o in enumerate(out_idx)]
        region = x[(Ellipsis, *(slice(a, b) for _, _, a, b in rs))]
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = math.prod(e - s for s, e, _, _ in rs)
        else:
            div = math.prod(b - a for _, _, a, b in rs)
        out[(Ellipsis, *out_idx)] = region.sum(axis=tuple(range(x.ndim - d, x.ndim))) / div
    return out


def _adaptive_np(x, output_size, *, d, kind):
    output_size = _per_dim(output_size, d)
    spatial = x.shape[x.ndim - d :]
    bounds = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip(spatial, output_size)]
    lead = x.shape[: x.ndim - d]
    values = np.zeros(lead + tuple(output_size), x.dtype if kind == "max" else np.float64)
    where = np.zeros(values.shape, np.int64)
    for out_idx in itertools.product(*(range(o) for o in output_size)):
        b = [bounds[i][o] for i, o in enumerate(out_idx)]
        region = x[(Ellipsis, *(slice(lo, hi) for lo, hi in b))]
        if kind == "avg":
            values[(Ellipsis, *out_idx)] = region.mean(axis=tuple(range(x.ndim - d, x.ndim)))
            continue
        for lead_idx in np.ndindex(*lead):
            best, best_at = None, 0
            for pos in itertools.product(*(range(lo, hi) for lo, hi in b)):
                v = x[lead_idx + pos]
                if best is None or v > best or np.isnan(v):
                    best, best_at = v, int(np.ravel_multi_index(pos, spatial))
            values[lead_idx + out_idx], where[lead_idx + out_idx] = best, best_at
    return (values, where) if kind == "max" else values


def _unpool_np(x, indices, output_size, *rest):
    d = len(output_size)
    lead = x.shape[: x.ndim - d]
    out = np.zeros((math.prod(lead), math.prod(output_size)), x.dtype)
    flat_x, flat_i = x.reshape(len(out), -1), indices.reshape(len(out), -1)
    for r in range(len(out)):
        out[r, flat_i[r]] = flat_x[r]
    return out.reshape(lead + tuple(output_size))


def _unpool_indices(shape, plane_out, rng_seed):
    """Distinct int64 positions per plane, shaped like ``shape`` (a max pool's indices never repeat in a plane)."""
    rng = np.random.default_rng(rng_seed)
    rows, per = math.prod(shape[:-2]) if len(shape) > 2 else 1, shape[-1] * shape[-2]
    values = np.stack([rng.permutation(plane_out)[:per] for _ in range(rows)])
    return Val(values.reshape(shape), ow.int64)


def _intervals_np(sample, n, out, k, dt):
    """PyTorch's ``generate_intervals`` in the computation dtype ``dt``."""
    seq = np.zeros(out, np.int64)
    if out > 1:
        alpha = dt(n - k) / dt(out - 1)
        for i in range(out - 1):
            seq[i] = int(dt((dt(i) + dt(sample)) * alpha)) - int(dt(dt(sample) * alpha))
    seq[out - 1] = n - k
    return seq


def _fractional_np(x, kernel_size, output_size, samples):
    """Fractional max pooling by loops: per plane, window starts from its samples; last NaN wins, else first max."""
    d = len(output_size)
    ks = _per_dim(kernel_size, d)
    if x.ndim == d + 1:
        v, i = _fractional_np(x[None], kernel_size, output_size, samples)
        return v[0], i[0]
    spatial, dt = x.shape[2:], samples.dtype.type
    values = np.zeros(x.shape[:2] + tuple(output_size), x.dtype)
    where = np.zeros(values.shape, np.int64)
    order = (1, 0) if d == 2 else (0, 1, 2)
    for n, c in np.ndindex(*x.shape[:2]):
        seqs = [_intervals_np(samples[n, c, order[i]], spatial[i], output_size[i], ks[i], dt) for i in range(d)]
        for o in np.ndindex(*output_size):
            starts = [seqs[i][o[i]] for i in range(d)]
            best, at = -np.inf, int(np.ravel_multi_index(starts, spatial))
            for off in np.ndindex(*ks):
                pos = tuple(s + q for s, q in zip(starts, off))
                v = x[(n, c) + pos]
                if v > best or np.isnan(v):
                    best, at = v, int(np.ravel_multi_index(pos, spatial))
            values[(n, c) + o], where[(n, c) + o] = best, at
    return values, where


def _uniform(shape):
    return Gen(lambda rng, dtype: Arr(rng.random(shape), dtype))


def _pool_lines():
    def mp(d, with_indices):
        return lambda *a, **k: _max_pool_np(*a, d=d, indices=with_indices, **k)

    nan_map = np.array([[[1.0, np.nan, 2.0, 0.5], [3.0, 1.0, np.nan, 4.0], [0.0, 1.0, 2.0, 2.0]]])
    m1 = [
        K(TA((2, 3, 9), T), 3, 2, 1),
        K(TA((3, 8), S), [2], [], 0, 2, True),
        K(TA((1, 2, 7)), 2, 3, 1, 1, True),
        K(TA((0, 2, 6)), 2),
    ]
    m2 = [
        K(TA((2, 3, 6, 7), T), 3, 2, 1),
        K(TA((3, 7, 8), S), [2, 3], [], [1, 0], [2, 1], True),
        K(Val(nan_map), [2, 2], [1, 2]),
        K(TA((1, 2, 5, 5)), 2, 2, 0, 1, True),
        K(TA((0, 2, 4, 4)), 2),
    ]
    m3 = [K(TA((1, 2, 4, 5, 5), T), 2, 2, 1), K(TA((2, 4, 4, 5), S), [2, 2, 3], [1, 2, 2], 0, [1, 1, 1], True)]
    a1 = [
        K(TA((2, 3, 9), T), 3, 2, 1),
        K(TA((3, 8), S), [2], [], 0, True, False),
        K(TA((1, 2, 7)), 3, 2, 1, False, False),
    ]
    a2 = [
        K(TA((2, 3, 6, 7), T), 3, 2, 1),
        K(TA((3, 7, 8), S), [2, 3], [], [1, 0], True, False),
        K(TA((1, 2, 5, 5)), 2, 2, 1, True, True, 3),
        K(TA((2, 2, 5, 6)), [3, 2], [2, 1], [1, 1], False, False),
        K(TA((0, 2, 4, 4)), 2),
    ]
    a3 = [K(TA((1, 2, 4, 5, 5), T), 2, 2, 1), K(TA((2, 4, 4, 5), S), [2, 2, 3], [1, 2, 2], [1, 0, 1], True, False, 5)]
    ad = {
        1: [K(TA((2, 3, 9), T), [4]), K(TA((3, 5), S), [7]), K(TA((1, 2, 6)), [1])],
        2: [
            K(TA((2, 3, 7, 9), T), [3, 4]),
            K(TA((3, 5, 4), S), [5, 7]),
            K(TA((1, 2, 6, 6)), [1, 1]),
            K(TA((0, 2, 4, 4)), [2, 2]),
        ],
        3: [K(TA((1, 2, 4, 5, 6), T), [2, 3, 4]), K(TA((2, 3, 4, 5), S), [3, 2, 5])],
    }
    bad_pool = _errors(
        (K(TA((2, 3, 4, 4)), 3, 1, 2), ValueError),
        (K(TA((4, 4)), 2), ValueError),
        (K(TA((2, 3, 4, 4)), [2, 2, 2]), ValueError),
        (K(TA((2, 3, 2, 2)), 3), ValueError),
    )
    unpool2 = [
        K(TA((2, 3, 3, 2), T), _unpool_indices((2, 3, 3, 2), 30, 1), [5, 6]),
        K(TA((3, 2, 2), S), _unpool_indices((3, 2, 2), 12, 2), [4, 3]),
    ]
    unpool3 = [
        K(TA((1, 2, 2, 2, 2), T), _unpool_indices((1, 2, 2, 2, 2), 64, 3), [4, 4, 4], [2, 2, 2], [0, 0, 0]),
        K(TA((2, 1, 2, 3)), _unpool_indices((2, 1, 2, 3), 24, 4), [2, 3, 4], [2, 2, 2], [1, 1, 1]),
    ]
    bad_unpool = _errors((K(TA((1, 2, 2, 2)), Val(np.full((1, 2, 2, 2), 99), ow.int64), [3, 3]), RuntimeError))
    nan_plane = np.arange(30, dtype=np.float64).reshape(1, 1, 5, 6)
    nan_plane[0, 0, 1, 2] = np.nan
    frac2 = [
        K(TA((2, 3, 9, 11), T), [2, 3], [5, 4], _uniform((2, 3, 2))),
        K(TA((3, 7, 7), S), 3, [4, 5], _uniform((1, 3, 2))),
        K(Val(nan_plane), 2, [3, 4], _uniform((1, 1, 2))),
        K(TA((1, 2, 5, 5)), 1, [1, 5], _uniform((1, 2, 2))),
    ]
    frac3 = [
        K(TA((1, 2, 5, 6, 7), T), 2, [3, 3, 4], _uniform((1, 2, 3))),
        K(TA((2, 4, 5, 5), S), [1, 2, 3], [2, 3, 2], _uniform((1, 2, 3))),
    ]
    bad_frac = _errors(
        (K(TA((1, 2, 5, 5)), 3, [4, 4], _uniform((1, 2, 2))), ValueError),
        (K(TA((1, 2, 5, 5)), 2, [3, 3], _uniform((2, 2, 2))), ValueError),
    )
    lines = [
        entry("fractional_max_pool2d", _fractional_np, frac2, FLOAT, upcast="opmath", error_inputs=bad_frac),
        entry("fractional_max_pool3d", _fractional_np, frac3, FLOAT, upcast="opmath"),
        entry("max_unpool2d", _unpool_np, unpool2, REAL, error_inputs=bad_unpool),
        entry("max_unpool3d", _unpool_np, unpool3, REAL),
    ]
    for d, mcases, acases in ((1, m1, a1), (2, m2, a2), (3, m3, a3)):
        lines.append(entry(f"max_pool{d}d", mp(d, False), mcases, REAL, error_inputs=bad_pool if d == 2 else None))
        lines.append(entry(f"max_pool{d}d_with_indices", mp(d, True), mcases, REAL))
        lines.append(
            entry(f"avg_pool{d}d", lambda *a, d=d, **k: _avg_pool_np(*a, d=d, **k), acases, FLOAT, tolerances=TOL)
        )
        avg = lambda *a, d=d: _adaptive_np(*a, d=d, kind="avg")  # noqa: E731
        mx = lambda *a, d=d: _adaptive_np(*a, d=d, kind="max")  # noqa: E731
        lines.append(entry(f"adaptive_avg_pool{d}d", avg, ad[d], FLOAT, tolerances=TOL))
        lines.append(entry(f"adaptive_max_pool{d}d", mx, ad[d], REAL))
        if d > 1:
            lines.append(entry(f"_adaptive_avg_pool{d}d", avg, ad[d], FLOAT, tolerances=TOL))
    return lines


# -- padding ----------------------------------------------------------------------------------------------

_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap", "constant": "constant"}


def _pad_np(x, pad, mode, value=None):
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for k in range(len(pad) // 2):
        lo, hi = pad[2 * k], pad[2 * k + 1]
        dim = x.ndim - 1 - k
        widths[dim] = (max(lo, 0), max(hi, 0))
        n = x.shape[dim] + max(lo, 0) + max(hi, 0)
        crop[dim] = slice(max(-lo, 0), n - max(-hi, 0))
    kwargs = {"constant_values": value or 0} if mode == "constant" else {}
    if mode == "circular":  # PyTorch crops by the negative pads first, then wraps around what is left
        cut = [slice(None)] * x.ndim
        for k in range(len(pad) // 2):
            dim = x.ndim - 1 - k
            cut[dim] = slice(max(-pad[2 * k], 0), x.shape[dim] - max(-pad[2 * k + 1], 0))
        return np.pad(x[tuple(cut)], widths, mode="wrap")
    return np.pad(x, widths, mode=_NP_MODES[mode], **kwargs)[tuple(crop)]


def _pad_lines():
    cases = {
        1: [K(TA((2, 3, 6), T), [2, 3]), K(TA((3, 5), S), [0, 4]), K(TA((0, 2, 5)), [1, 1]), K(TA((2, 6)), [-1, 2])],
        2: [
            K(TA((2, 3, 4, 5), T), [1, 2, 3, 0]),
            K(TA((3, 4, 5), S), [4, 0, 1, 3]),
            K(TA((1, 2, 3, 3)), [-1, 2, 2, -1]),
        ],
        3: [K(TA((1, 2, 3, 4, 5), T), [1, 2, 0, 3, 2, 1]), K(TA((2, 3, 3, 4), S), [2, 0, 1, 1, 0, 2])],
    }
    bad = _errors((K(TA((2, 3, 4)), [4, 0]), ValueError), (K(TA((4,)), [1, 1]), ValueError))
    lines = []
    for d in (1, 2, 3):
        lines.append(
            entry(
                f"reflection_pad{d}d",
                lambda x, p: _pad_np(x, p, "reflect"),
                cases[d],
                ALL,
                error_inputs=bad if d == 1 else None,
            )
        )
        lines.append(entry(f"replication_pad{d}d", lambda x, p: _pad_np(x, p, "replicate"), cases[d], ALL))
    circ = [K(TA((2, 3, 5), T), [2, 5]), K(TA((1, 3, 4, 5), S), [1, 2, 3, -1]), K(TA((2, 2, 3)), [-1, 2, 1, 1])]
    enum = [
        K(TA((2, 3, 5), T), [2, 3], 1),
        K(TA((1, 3, 4, 5), S), [1, 2, 3, 0], 2),
        K(TA((2, 3, 3)), [2, 3, 1, 1], 3),
        K(TA((2, 3)), [1, 2], 0, 1.5),
        K(TA((1, 2, 3, 4, 5)), [1, 1, 2, 0, 1, 2], 2),
    ]
    bad_enum = _errors((K(TA((2, 3, 4)), [1, 1], 1, 2.0), ValueError), (K(TA((2, 3, 4)), [1, 1, 1], 2), ValueError))
    return lines + [
        entry("_pad_circular", lambda x, p: _pad_np(x, p, "circular"), circ, ALL),
        entry(
            "_pad_enum",
            lambda x, p, m, v=None: _pad_np(x, p, ("constant", "reflect", "replicate", "circular")[m], v),
            enum,
            ALL,
            error_inputs=bad_enum,
        ),
    ]


# -- folding and shuffles ------------------------------------------------------------------------------


def _im2col_np(x, kernel_size, dilation, padding, stride):
    if x.ndim == 3:
        return _im2col_np(x[None], kernel_size, dilation, padding, stride)[0]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_per_dim(v, 2) for v in (kernel_size, dilation, padding, stride))
    xp = np.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)])
    n, c, hp, wp = xp.shape
    oh, ow_ = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c, kh, kw, oh, ow_), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i, j] = xp[
                :, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow_ - 1) + 1 : sw
            ]
    return out.reshape(n, c * kh * kw, oh * ow_)


def _col2im_np(cols, output_size, kernel_size, dilation, padding, stride):
    if cols.ndim == 2:
        return _col2im_np(cols[None], output_size, kernel_size, dilation, padding, stride)[0]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_per_dim(v, 2) for v in (kernel_size, dilation, padding, stride))
    hp, wp = output_size[0] + 2 * ph, output_size[1] + 2 * pw
    oh, ow_ = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    blocks = cols.reshape(n, c, kh, kw, oh, ow_)
    out = np.zeros((n, c, hp, wp), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow_ - 1) + 1 : sw] += blocks[
                :, :, i, j
            ]
    return out[:, :, ph : ph + output_size[0], pw : pw + output_size[1]]


def _pixel_shuffle_np(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c // (r * r), h * r, w * r), x.dtype)
    for i in range(r):
        for j in range(r):
            out[..., i::r, j::r] = x[..., i * r + j :: r * r, :, :]
    return out


def _pixel_unshuffle_np(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c * r * r, h // r, w // r), x.dtype)
    for i in range(r):
        for j in range(r):
            out[..., i * r + j :: r * r, :, :] = x[..., i::r, j::r]
    return out


def _channel_shuffle_np(x, groups):
    c = x.shape[1]
    source = [(k % groups) * (c // groups) + k // groups for k in range(c)]
    return x[:, source]


def _fold_lines():
    im = [
        K(TA((2, 3, 6, 7), T), [2, 3], [1, 2], [1, 0], [2, 1]),
        K(TA((3, 5, 5), S), [3, 3], [1, 1], [1, 1], [1, 1]),
        K(TA((1, 2, 4, 4)), [1, 1], [1, 1], [0, 0], [3, 3]),
        K(TA((0, 2, 4, 4)), [2, 2], [1, 1], [0, 0], [1, 1]),
    ]
    col = [
        K(TA((2, 18, 12), T), [6, 7], [2, 3], [1, 2], [1, 0], [2, 1]),
        K(TA((45, 25), S), [5, 5], [3, 3], [1, 1], [1, 1], [1, 1]),
        K(TA((1, 8, 4)), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
    ]
    bad_col = _errors(
        (K(TA((1, 7, 4)), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), ValueError),
        (K(TA((1, 8, 5)), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), ValueError),
    )
    shuf = [K(TA((2, 8, 2, 3), T), 2), K(TA((9, 2, 2), S), 3), K(TA((2, 2, 4, 3, 2)), 1), K(TA((0, 4, 1, 1)), 2)]
    unshuf = [K(TA((2, 2, 4, 6), T), 2), K(TA((1, 6, 3), S), 3), K(TA((2, 2, 1, 2, 2)), 2)]
    chan = [K(TA((2, 6, 3, 2), T), 2), K(TA((1, 6, 5), S), 3), K(TA((2, 4, 2, 1, 2)), 4), K(TA((0, 4, 2)), 2)]
    bad_shuffle = _errors((K(TA((2, 6, 2, 2)), 2), ValueError), (K(TA((6, 2)), 1), ValueError))
    return [
        entry("im2col", _im2col_np, im, ALL),
        entry("col2im", _col2im_np, col, NUMERIC_NO_BOOL, tolerances=TOL, error_inputs=bad_col),
        entry("pixel_shuffle", _pixel_shuffle_np, shuf, ALL, error_inputs=bad_shuffle),
        entry("pixel_unshuffle", _pixel_unshuffle_np, unshuf, ALL),
        entry("channel_shuffle", _channel_shuffle_np, chan, ALL),
        entry("native_channel_shuffle", _channel_shuffle_np, chan, ALL),
    ]


# -- resampling ---------------------------------------------------------------------------------------


def _nearest_src(n, out, scale, exact):
    dst = np.arange(out)
    if not exact and out == n:
        return dst
    if not exact and out == 2 * n:
        return dst // 2
    ratio = np.float32(1.0 / scale) if scale else np.float32(n) / np.float32(out)
    pos = dst.astype(np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return np.minimum(np.floor(pos * ratio).astype(np.int64), n - 1)


def _linear_taps(n, out, align_corners, scale, cubic):
    """Source index lists and weights of each output position along one dim (float64 from the formula)."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:
        ratio = 1.0 / scale if scale else n / out
        src = (dst + 0.5) * ratio - 0.5
        if not cubic:
            src = np.maximum(src, 0)
    if not cubic:
        i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
        lam = np.clip(src - i0, 0, 1)
        return [i0, np.minimum(i0 + 1, n - 1)], [1 - lam, lam]
    base = np.floor(src).astype(np.int64)
    t = src - base
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [np.clip(base + k, 0, n - 1) for k in (-1, 0, 1, 2)], [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resize_np(x, output_size, scales, how, align_corners=False):
    d = len(output_size)
    for k in range(d):
        axis = x.ndim - d + k
        n, out = x.shape[axis], output_size[k]
        if how in ("nearest", "exact"):
            x = np.take(x, _nearest_src(n, out, scales[k], how == "exact"), axis=axis)
            continue
        if how == "cubic" and n == out and scales[k] is None:
            continue
        idx, weights = _linear_taps(n, out, align_corners, scales[k], how == "cubic")
        shape = [1] * x.ndim
        shape[axis] = out
        x = sum(np.take(x, i, axis=axis) * w.reshape(shape) for i, w in zip(idx, weights))
    return x


def _aa_matrix(n, out, align_corners, scale, kind):
    """Normalised antialiasing weights (out, n): the filter widened by the downscaling ratio."""
    if align_corners:
        ratio = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1 / scale if scale else n / out
    half = 1.0 if kind == "linear" else 2.0
    support, inv = (half * ratio, 1 / ratio) if ratio >= 1 else (half, 1.0)
    w = np.zeros((out, n))
    for i in range(out):
        centre = ratio * (i + 0.5)
        for j in range(max(int(centre - support + 0.5), 0), min(int(centre + support + 0.5), n)):
            t = abs((j - centre + 0.5) * inv)
            if kind == "linear":
                w[i, j] = max(0.0, 1 - t)
            else:
                a = -0.5
                w[i, j] = (
                    ((a + 2) * t - (a + 3)) * t * t + 1 if t < 1 else ((((t - 5) * t + 8) * t - 4) * a if t < 2 else 0)
                )
        if w[i].sum():
            w[i] /= w[i].sum()
    return w


def _aa_np(x, output_size, align_corners, scales, kind):
    wh = _aa_matrix(x.shape[2], output_size[0], align_corners, scales[0], kind)
    ww = _aa_matrix(x.shape[3], output_size[1], align_corners, scales[1], kind)
    return np.einsum("oh,nchw,pw->ncop", wh, x, ww)


def _aa_vec_np(x, output_size, align_corners, scale_factors, kind):
    size, scales = _vec_sizes(x, output_size, scale_factors)
    return _aa_np(x, size, align_corners, scales, kind)


def _vec_sizes(x, output_size, scale_factors):
    if output_size is not None:
        return list(output_size), [None] * len(output_size)
    d = len(scale_factors)
    return [int(math.floor(n * s)) for n, s in zip(x.shape[x.ndim - d :], scale_factors)], list(scale_factors)


def _resample_lines():
    lines = []
    shapes = {1: ((2, 3, 5), (3, 2, 4)), 2: ((2, 3, 4, 5), (1, 2, 3, 3)), 3: ((1, 2, 2, 3, 4), (2, 1, 3, 2, 2))}
    sizes = {1: ([9], [3], [8]), 2: ([7, 9], [3, 2], [6, 6]), 3: ([3, 5, 7], [2, 3, 2], [4, 4, 8])}
    scales_of = {1: [1.7], 2: [1.5, 0.6], 3: [2.0, 1.3, 0.75]}
    for d in (1, 2, 3):
        a, b = shapes[d]
        s0, s1, s2 = sizes[d]
        for name, how, dtypes in (
            (f"upsample_nearest{d}d", "nearest", REAL),
            (f"_upsample_nearest_exact{d}d", "exact", REAL),
        ):
            plain = [K(TA(a, T), s0), K(TA(b, S), s1), K(TA(a), s2, *[2.0] * d), K(TA((0,) + a[1:]), s0)]
            vec = [
                K(TA(a, T), s0, None),
                K(TA(b, S), None, scales_of[d]),
                K(TA(a), None, [1.0] * d),
                K(TA((0,) + a[1:]), None, [2.0] * d),
            ]
            lines.append(
                entry(
                    name,
                    lambda x, size, *sc, how=how: _resize_np(x, size, list(sc) + [None] * (len(size) - len(sc)), how),
                    plain,
                    dtypes,
                )
            )
            lines.append(
                entry(
                    f"{name}.vec",
                    lambda x, size, sf, how=how: _resize_np(x, *_vec_sizes(x, size, sf), how),
                    vec,
                    dtypes,
                )
            )
    bad_vec = _errors(
        (K(TA((1, 2, 3, 3)), [4, 4], False, [2.0, 2.0]), ValueError),
        (K(TA((2, 3, 3)), [4, 4], False, None), ValueError),
    )
    for name, d, how in (
        ("upsample_linear1d", 1, "linear"),
        ("upsample_bilinear2d", 2, "linear"),
        ("upsample_trilinear3d", 3, "linear"),
        ("upsample_bicubic2d", 2, "cubic"),
    ):
        a, b = shapes[d]
        s0, s1, s2 = sizes[d]
        plain = [
            K(TA(a, T), s0, False),
            K(TA(b, S), s1, True),
            K(TA(a), s2, False, *[1.6] * d),
            K(TA((0,) + a[1:]), s0, True),
            K(TA(b), list(b[2:]), False),
        ]
        vec = [
            K(TA(a, T), s0, False, None),
            K(TA(b, S), None, True, scales_of[d]),
            K(TA(a), None, False, scales_of[d]),
            K(TA((0,) + a[1:]), None, False, [2.0] * d),
        ]
        lines.append(
            entry(
                name,
                lambda x, size, ac, *sc, how=how: _resize_np(
                    x, size, list(sc) + [None] * (len(size) - len(sc)), how, ac
                ),
                plain,
                FLOAT,
                tolerances=TOL,
            )
        )
        lines.append(
            entry(
                f"{name}.vec",
                lambda x, size, ac, sf, how=how: _resize_np(x, *_vec_sizes(x, size, sf), how, ac),
                vec,
                FLOAT,
                tolerances=TOL,
                error_inputs=bad_vec if d == 2 else None,
            )
        )
    for name, kind in (("_upsample_bilinear2d_aa", "linear"), ("_upsample_bicubic2d_aa", "cubic")):
        a, b = shapes[2]
        plain = [
            K(TA((2, 3, 9, 7), T), [4, 3], False),
            K(TA((1, 2, 5, 6), S), [7, 3], True),
            K(TA(a), [2, 9], False, 0.4, 1.8),
        ]
        plain += [K(TA((0, 2, 4, 4)), [2, 2], False), K(TA(b), [1, 1], True)]
        vec = [K(TA((2, 3, 9, 7), T), [4, 3], False, None), K(TA((1, 2, 5, 6), S), None, True, [0.5, 0.4])]
        vec += [K(TA(a), None, False, [0.6, 1.5])]
        lines.append(
            entry(
                name,
                lambda x, size, ac, *sc, kind=kind: _aa_np(x, size, ac, list(sc) + [None] * (2 - len(sc)), kind),
                plain,
                FLOAT,
                tolerances=TOL,
            )
        )
        lines.append(
            entry(
                f"{name}.vec",
                lambda x, size, ac, sf, kind=kind: _aa_vec_np(x, size, ac, sf, kind),
                vec,
                FLOAT,
                tolerances=TOL,
            )
        )
    return lines


# -- grid sampling -------------------------------------------------------------------------------------


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return np.zeros_like(c)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = np.abs(c - low)
    extra, flips = np.fmod(c, span), np.floor(c / span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def _grid_sample_np(x, grid, interpolation_mode, padding_mode, align_corners):
    d = x.ndim - 2
    sizes = x.shape[2:]

    def unnormalize(c, n):
        return (c + 1) / 2 * (n - 1) if align_corners else ((c + 1) * n - 1) / 2

    def pad_coord(c, n):
        if padding_mode == 1:
            return np.clip(c, 0, n - 1)
        if padding_mode == 2:
            c = _reflect(c, 0, 2 * (n - 1)) if align_corners else _reflect(c, -1, 2 * n - 1)
            return np.clip(c, 0, n - 1)
        return c

    def value(b, coords):
        ok = np.all([(c >= 0) & (c <= n - 1) for c, n in zip(coords, sizes)], axis=0)
        idx = tuple(np.where(ok, c, 0).astype(np.int64) for c in coords)
        return np.where(ok, x[b][(slice(None), *idx)], 0)

    n_batch = x.shape[0]
    out = np.zeros((n_batch, x.shape[1]) + grid.shape[1:-1])
    for b in range(n_batch):
        raw = [grid[b][..., d - 1 - k] for k in range(d)]  # slowest spatial dim first
        if interpolation_mode == 2:
            iy, ix = (unnormalize(r, n) for r, n in zip(raw, sizes))
            y0, x0 = np.floor(iy), np.floor(ix)
            _, wy = _cubic_weights(iy - y0)
            _, wx = _cubic_weights(ix - x0)
            total = 0
            for i in range(4):
                for j in range(4):
                    yy, xx = pad_coord(y0 + i - 1, sizes[0]), pad_coord(x0 + j - 1, sizes[1])
                    total = total + value(b, [np.trunc(yy), np.trunc(xx)]) * wy[i] * wx[j]
            out[b] = total
            continue
        coords = [pad_coord(unnormalize(r, n), n) for r, n in zip(raw, sizes)]
        if interpolation_mode == 1:
            out[b] = value(b, [np.round(c) for c in coords])
            continue
        lows = [np.floor(c) for c in coords]
        total = 0
        for corner in itertools.product((0, 1), repeat=d):
            taps = [lo + h for lo, h in zip(lows, corner)]
            weight = np.prod([(c - lo) if h else (1 - (c - lo)) for c, lo, h in zip(coords, lows, corner)], axis=0)
            total = total + value(b, taps) * weight
        out[b] = total
    return out


def _cubic_weights(t):
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return None, [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _affine_grid_np(theta, size, align_corners):
    spatial = size[2:]
    d = len(spatial)

    def base(n):
        if n <= 1:
            return np.zeros(n)
        v = np.linspace(-1, 1, n)
        return v if align_corners else v * (n - 1) / n

    axes = np.meshgrid(*(base(n) for n in spatial), indexing="ij")  # slowest first
    points = np.stack([axes[d - 1 - k] for k in range(d)] + [np.ones(spatial)], -1)
    return np.einsum("...j,nij->n...i", points, theta)


def _grid_lines():
    def g(shape, lo=-1.2, hi=1.2):
        return Gen(lambda rng, dtype: Arr(rng.uniform(lo, hi, shape), dtype))

    cases2 = [
        K(TA((2, 3, 4, 5), T), g((2, 3, 4, 2)), 0, 0, False),
        K(TA((1, 2, 5, 4), S), g((1, 2, 6, 2)), 0, 1, True),
        K(TA((2, 1, 3, 4)), g((2, 4, 3, 2), -2.5, 2.5), 0, 2, False),
        K(TA((1, 2, 4, 4)), g((1, 3, 3, 2), -2.5, 2.5), 1, 2, True),
        K(TA((2, 2, 3, 5)), g((2, 3, 2, 2)), 2, 0, False),
        K(TA((1, 2, 4, 3)), g((1, 2, 3, 2), -2.0, 2.0), 2, 1, True),
        K(TA((1, 1, 4, 4)), g((1, 3, 3, 2), -2.0, 2.0), 2, 2, False),
        K(TA((1, 3, 4, 5)), g((1, 2, 5, 2)), 1, 0, False),
    ]
    cases3 = [
        K(TA((1, 2, 3, 4, 5), T), g((1, 2, 3, 2, 3)), 0, 0, False),
        K(TA((2, 1, 2, 3, 4), S), g((2, 2, 2, 2, 3), -2.0, 2.0), 0, 2, True),
        K(TA((1, 2, 3, 3, 3)), g((1, 1, 2, 3, 3)), 1, 1, False),
    ]
    bad = _errors(
        (K(TA((1, 2, 3, 4)), g((2, 2, 2, 2)), 0, 0, False), ValueError),
        (K(TA((1, 2, 3, 4)), g((1, 2, 2, 2)), 3, 0, False), ValueError),
    )
    aff = [
        K(TA((2, 2, 3), T), [2, 3, 4, 5], False),
        K(TA((1, 2, 3)), [1, 1, 3, 1], True),
        K(TA((2, 3, 4), S), [2, 1, 2, 3, 4], True),
        K(TA((1, 3, 4)), [1, 2, 3, 1, 2], False),
    ]
    tol = {**TOL, "float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1)}
    return [
        entry("grid_sampler_2d", _grid_sample_np, cases2, FLOAT, tolerances=tol, error_inputs=bad),
        entry("grid_sampler", _grid_sample_np, cases2[:3] + cases3[:2], FLOAT, tolerances=tol),
        entry("grid_sampler_3d", _grid_sample_np, cases3, FLOAT, tolerances=tol),
        entry("affine_grid_generator", _affine_grid_np, aff, FLOAT, tolerances=tol),
    ]


register(*_conv_lines(), *_pool_lines(), *_pad_lines(), *_fold_lines(), *_resample_lines(), *_grid_lines())
