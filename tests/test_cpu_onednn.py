"""The CPU plugin's oneDNN path (float32 softmax, log_softmax, layer_norm, gelu, convolution) and its blocked
scaled dot-product attention, against NumPy formulas written here, on hypothesis inputs: non-contiguous,
transposed, broadcast and empty tensors and special values. ``OPWEAVE_CPU_KERNELS=numpy`` selects NumPy."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

path = pytest.importorskip("opweave_cpu.kernels._onednn_path")
attention = pytest.importorskip("opweave_cpu.kernels.attention")
F = ow.nn.functional
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 30.0, -30.0], np.float32)


@pytest.fixture(autouse=True)
def onednn_for_every_size(monkeypatch):
    """The default path, with oneDNN taking even tiny tensors (so hypothesis's small inputs reach it)."""
    path.set_path("auto")
    monkeypatch.setattr(path, "MIN_ELEMENTS", 1)
    yield
    path.set_path(None)


needs_onednn = pytest.mark.skipif(not path.active(), reason="oneDNN is not available here")


def _values(rng, shape, specials):
    a = rng.standard_normal(shape).astype(np.float32) * 3
    if specials and a.size:
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, min(3, flat.size))
        flat[picks] = rng.choice(SPECIALS, picks.size)
    return a


def _pair(rng, shape, layout, specials):
    """float32 values as a NumPy array and an opweave view laid out as ``layout``.

    contiguous; transposed (a transposed view of the last two dims); sliced (every other row of the first dim).
    """
    if layout == "transposed" and len(shape) >= 2:
        base = _values(rng, shape[:-2] + shape[-2:][::-1], specials)
        return np.swapaxes(base, -1, -2), ow.tensor(base).transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        base = _values(rng, (shape[0] * 2,) + tuple(shape[1:]), specials)
        return base[::2], ow.tensor(base)[::2]
    a = _values(rng, shape, specials)
    return a, ow.tensor(a)


layouts = st.sampled_from(["contiguous", "transposed", "sliced"])
shapes = st.sampled_from([(3, 5), (2, 3, 4), (7,), (0, 3), (4, 1), (2, 64, 33)])


def _close(got, want, rtol=2e-5, atol=2e-6):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _softmax64(x, axis):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        e = np.exp(shifted)
        return e / e.sum(axis=axis, keepdims=True), shifted - np.log(e.sum(axis=axis, keepdims=True))


@needs_onednn
@settings(max_examples=20, deadline=None)
@given(shape=shapes, layout=layouts, specials=st.booleans(), dim=st.integers(-1, 0), seed=st.integers(0, 2**16))
def test_softmax_and_log_softmax(shape, layout, specials, dim, seed):
    a, t = _pair(np.random.default_rng(seed), shape, layout, specials)
    soft, log = _softmax64(a, dim)
    _close(F.softmax(t, dim).numpy(), soft)
    _close(F.log_softmax(t, dim).numpy(), log, rtol=2e-5, atol=2e-5)


@needs_onednn
@settings(max_examples=20, deadline=None)
@given(
    shape=st.sampled_from([(3, 5), (2, 3, 4), (4, 1), (2, 64, 33), (0, 6)]),
    layout=layouts,
    affine=st.sampled_from(["none", "weight", "both"]),
    eps=st.sampled_from([1e-5, 1e-2]),
    seed=st.integers(0, 2**16),
)
def test_layer_norm(shape, layout, affine, eps, seed):
    rng = np.random.default_rng(seed)
    a, t = _pair(rng, shape, layout, False)
    width = shape[-1]
    w = rng.standard_normal(width).astype(np.float32) if affine != "none" else None
    b = rng.standard_normal(width).astype(np.float32) if affine == "both" else None
    x = a.astype(np.float64)
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    want = want * (1 if w is None else w) + (0 if b is None else b)
    got = F.layer_norm(t, [width], None if w is None else ow.tensor(w), None if b is None else ow.tensor(b), eps)
    _close(got.numpy(), want, rtol=1e-4, atol=1e-4)


@needs_onednn
@settings(max_examples=20, deadline=None)
@given(shape=shapes, layout=layouts, specials=st.booleans(), tanh=st.booleans(), seed=st.integers(0, 2**16))
def test_gelu(shape, layout, specials, tanh, seed):
    a, t = _pair(np.random.default_rng(seed), shape, layout, specials)
    x = a.astype(np.float64)
    with np.errstate(all="ignore"):
        if tanh:
            want = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
        else:
            want = 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))
        want = np.where(np.isposinf(x), np.inf, want)  # x * 1 at +inf
    got = F.gelu(t, approximate="tanh" if tanh else "none").numpy()
    _close(got, want, rtol=1e-5, atol=1e-5)


def _conv2d64(x, w, b, stride, padding, dilation, groups):
    """Grouped 2-d cross-correlation in float64, by explicit sums over the kernel offsets."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow_ = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow_))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[
                    :,
                    :,
                    i * dilation[0] : i * dilation[0] + stride[0] * (oh - 1) + 1 : stride[0],
                    j * dilation[1] : j * dilation[1] + stride[1] * (ow_ - 1) + 1 : stride[1],
                ]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og : (g + 1) * og, :, i, j])
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@needs_onednn
@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 2),
    groups=st.sampled_from([1, 2]),
    cin=st.integers(1, 3),
    cout=st.integers(1, 3),
    hw=st.tuples(st.integers(3, 9), st.integers(3, 9)),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 3)),
    padding=st.tuples(st.integers(0, 2), st.integers(0, 1)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_conv2d(n, groups, cin, cout, hw, k, stride, padding, dilation, bias, seed):
    rng = np.random.default_rng(seed)
    c, o = cin * groups, cout * groups
    if any(s + 2 * p < d * (kk - 1) + 1 for s, p, d, kk in zip(hw, padding, dilation, k)):
        return  # no output position: the op raises, tested elsewhere
    x = rng.standard_normal((n, c) + hw).astype(np.float32)
    w = rng.standard_normal((o, cin) + k).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    got = F.conv2d(ow.tensor(x), ow.tensor(w), None if b is None else ow.tensor(b), stride, padding, dilation, groups)
    _close(got.numpy(), _conv2d64(x, w, b, stride, padding, dilation, groups), rtol=1e-4, atol=1e-4)


def _conv_transpose2d64(x, w, b, stride, padding, output_padding, groups, dilation):
    """Grouped 2-d transposed convolution in float64: each input element scatters ``x * w`` into the output."""
    n, c, h, wd = x.shape
    cg, og, kh, kw = w.shape[0] // groups, w.shape[1], w.shape[2], w.shape[3]
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + output_padding[0]
    full_w = (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + output_padding[1]
    full = np.zeros((n, og * groups, full_h, full_w))
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                part = np.einsum("nchw,co->nohw", xs, w[g * cg : (g + 1) * cg, :, i, j])
                rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (h - 1) + 1, stride[0])
                cols = slice(j * dilation[1], j * dilation[1] + stride[1] * (wd - 1) + 1, stride[1])
                full[:, g * og : (g + 1) * og, rows, cols] += part
    oh, ow_ = full_h - 2 * padding[0], full_w - 2 * padding[1]
    out = full[:, :, padding[0] : padding[0] + oh, padding[1] : padding[1] + ow_]
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@needs_onednn
@settings(max_examples=15, deadline=None)
@given(
    groups=st.sampled_from([1, 2]),
    cin=st.integers(1, 3),
    cout=st.integers(1, 3),
    hw=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 2)),
    padding=st.tuples(st.integers(0, 1), st.integers(0, 2)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    extra=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_conv_transpose2d(groups, cin, cout, hw, k, stride, padding, dilation, extra, bias, seed):
    output_padding = tuple(min(e, max(s, d) - 1) for e, s, d in zip(extra, stride, dilation))
    sizes = [
        (s - 1) * st_ - 2 * p + d * (kk - 1) + op + 1
        for s, st_, p, d, kk, op in zip(hw, stride, padding, dilation, k, output_padding)
    ]
    if min(sizes) <= 0:
        return  # no output: the op raises, tested elsewhere
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, cin * groups) + hw).astype(np.float32)
    w = rng.standard_normal((cin * groups, cout) + k).astype(np.float32)
    b = rng.standard_normal(cout * groups).astype(np.float32) if bias else None
    got = F.conv_transpose2d(
        ow.tensor(x),
        ow.tensor(w),
        None if b is None else ow.tensor(b),
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
    want = _conv_transpose2d64(x, w, b, stride, padding, output_padding, groups, dilation)
    _close(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_conv2d_of_a_transposed_input():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 6, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    t = ow.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2))).transpose(-1, -2)
    got = F.conv2d(t, ow.tensor(w), None, 1, 1)
    _close(got.numpy(), _conv2d64(x, w, None, (1, 1), (1, 1), (1, 1), 1), rtol=1e-4, atol=1e-4)


@needs_onednn
def test_bfloat16_conv_keeps_a_nan_in_its_own_pixel():
    """A NaN or inf pixel reaches only the outputs whose window holds it (oneDNN's bfloat16 kernels pair pixels)."""
    x = np.array([[[[0.5, 1.0, np.nan, 2.0, 3.0, np.inf, 1.0, -1.0]]]], np.float32)
    w = np.array([[[[2.0]]]], np.float32)
    got = F.conv2d(ow.tensor(x, dtype=ow.bfloat16), ow.tensor(w, dtype=ow.bfloat16)).float().numpy()
    np.testing.assert_array_equal(got, x * 2)


# -- blocked attention ------------------------------------------------------------------------------


def _sdpa64(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q kᵀ scale + mask) v in float64; a row with every score masked gives zeros."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    elif mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == np.bool_ else s + mask
    with np.errstate(all="ignore"):
        peak = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isneginf(peak), 0, peak))
        total = e.sum(-1, keepdims=True)
        return (e / np.where(total == 0, 1, total)) @ v


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks small enough that hypothesis's inputs span several query and key blocks."""
    monkeypatch.setattr(attention, "QUERY_BLOCK", 3)
    monkeypatch.setattr(attention, "KEY_BLOCK", 4)
    monkeypatch.setattr(attention, "SCORE_BLOCK", 24)


@settings(max_examples=25, deadline=None)
@given(
    batch=st.sampled_from([(), (2,), (2, 3), (1, 3)]),
    lengths=st.tuples(st.integers(1, 11), st.integers(1, 11)),
    e=st.integers(1, 6),
    ev=st.integers(1, 5),
    kind=st.sampled_from(["none", "causal", "bool", "additive", "broadcast-bool"]),
    scale=st.sampled_from([None, 0.3]),
    blocks=st.sampled_from(["small", "default"]),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_blocked_attention(batch, lengths, e, ev, kind, scale, blocks, dtype, seed):
    saved = attention.QUERY_BLOCK, attention.KEY_BLOCK, attention.SCORE_BLOCK
    if blocks == "small":
        attention.QUERY_BLOCK, attention.KEY_BLOCK, attention.SCORE_BLOCK = 3, 4, 24
    try:
        _check_attention(batch, lengths, e, ev, kind, scale, dtype, seed)
    finally:
        attention.QUERY_BLOCK, attention.KEY_BLOCK, attention.SCORE_BLOCK = saved


def _check_attention(batch, lengths, e, ev, kind, scale, dtype, seed):
    rng = np.random.default_rng(seed)
    length, source = lengths
    q = rng.standard_normal(batch + (length, e)).astype(dtype)
    k = rng.standard_normal(batch + (source, e)).astype(dtype)
    v = rng.standard_normal(batch + (source, ev)).astype(dtype)
    mask = None
    if kind == "bool":
        mask = rng.random(batch + (length, source)) > 0.4
        mask[..., 0, :] = False  # a row with every key masked gives zeros
    elif kind == "broadcast-bool":
        mask = rng.random((length, 1)) > 0.3
    elif kind == "additive":
        mask = rng.standard_normal((length, source)).astype(dtype)
    got = F.scaled_dot_product_attention(
        ow.tensor(q),
        ow.tensor(k),
        ow.tensor(v),
        attn_mask=None if mask is None else ow.tensor(mask),
        is_causal=kind == "causal",
        scale=scale,
    )
    tol = 1e-5 if dtype == np.float32 else 1e-12
    _close(got.numpy(), _sdpa64(q, k, v, mask, kind == "causal", scale), rtol=tol, atol=tol)


@pytest.mark.usefixtures("small_blocks")
def test_blocked_attention_with_gqa_nan_and_empty():
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 4, 7, 3)).astype(np.float32)
    k = rng.standard_normal((2, 2, 9, 3)).astype(np.float32)
    v = rng.standard_normal((2, 2, 9, 2)).astype(np.float32)
    got = F.scaled_dot_product_attention(ow.tensor(q), ow.tensor(k), ow.tensor(v), enable_gqa=True).numpy()
    _close(got, _sdpa64(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)), rtol=1e-5, atol=1e-5)
    q[0, 0, 2, 1] = np.nan  # a NaN query row gives a NaN output row, the others are untouched
    got = F.scaled_dot_product_attention(ow.tensor(q), ow.tensor(k), ow.tensor(v), enable_gqa=True).numpy()
    assert np.isnan(got[0, 0, 2]).all() and not np.isnan(np.delete(got[0, 0], 2, axis=0)).any()
    empty = F.scaled_dot_product_attention(ow.tensor(q[:, :, :0]), ow.tensor(k), ow.tensor(v), enable_gqa=True)
    assert tuple(empty.shape) == (2, 4, 0, 2)
    no_keys = F.scaled_dot_product_attention(
        ow.tensor(q), ow.tensor(k[:, :, :0]), ow.tensor(v[:, :, :0]), enable_gqa=True
    )
    assert tuple(no_keys.shape) == (2, 4, 7, 2)


@pytest.mark.parametrize("blocks", [(3, 4, 24), (128, 1024, 1 << 21)])
@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_attention_special_scores(blocks, special, monkeypatch):
    for name, value in zip(("QUERY_BLOCK", "KEY_BLOCK", "SCORE_BLOCK"), blocks):
        monkeypatch.setattr(attention, name, value)
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((2, 3, 9, 4)).astype(np.float32), rng.standard_normal((2, 3, 10, 4)).astype(np.float32)
    v = rng.standard_normal((2, 3, 10, 3)).astype(np.float32)
    q[1, 2, 4, 1] = special
    k[0, 1, 6, 0] = special
    for causal in (False, True):
        got = F.scaled_dot_product_attention(ow.tensor(q), ow.tensor(k), ow.tensor(v), is_causal=causal).numpy()
        _close(got, _sdpa64(q, k, v, causal=causal), rtol=1e-5, atol=1e-5)


def test_attention_errors_are_the_decomposition_s():
    q = ow.tensor(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="scaled_dot_product_attention"):
        F.scaled_dot_product_attention(q, ow.tensor(np.zeros((2, 3, 5), np.float32)), q)
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


# -- path selection ---------------------------------------------------------------------------------


def test_numpy_path_is_selectable_and_described():
    script = (
        "import opweave as ow, numpy as np\n"
        "from opweave_cpu.kernels import _onednn_path as p\n"
        "p.MIN_ELEMENTS = 1\n"
        "ow.nn.functional.gelu(ow.tensor(np.ones(4, np.float32)))\n"
        "print(p.active(), p.eltwise_primitive.cache_info().currsize, p.describe())\n"
    )
    env = dict(os.environ, OPWEAVE_CPU_KERNELS="numpy")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    active, made, described = out.stdout.strip().split(" ", 2)
    assert active == "False" and made == "0" and "NumPy only" in described and "OPWEAVE_CPU_KERNELS=numpy" in described


def test_without_onednn_numpy_serves():
    script = (
        "import opweave as ow, numpy as np\n"
        "from opweave_cpu.kernels import _onednn_path as p\n"
        "p.MIN_ELEMENTS = 1\n"
        "y = ow.nn.functional.conv2d(ow.ones(1, 1, 3, 3), ow.ones(1, 1, 2, 2)).numpy()\n"
        "print(p.active(), y.ravel().tolist(), ow.cpu.kernel_paths())\n"
    )
    env = dict(os.environ, OPWEAVE_ONEDNN_LIBRARY="/nonexistent/libdnnl.so.3")
    env.pop("OPWEAVE_CPU_KERNELS", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    active, rest = out.stdout.strip().split(" ", 1)
    assert active == "False" and rest.startswith("[4.0, 4.0, 4.0, 4.0]")
    assert "NumPy only" in rest and "could not be loaded" in rest


def test_set_path_rejects_unknown_names():
    with pytest.raises(ValueError, match="OPWEAVE_CPU_KERNELS"):
        path.set_path("fast")


@needs_onednn
def test_primitives_are_cached_per_shape():
    path.eltwise_primitive.cache_clear()
    x = ow.tensor(np.linspace(-2, 2, 12, dtype=np.float32))
    for _ in range(3):
        F.gelu(x)
    info = path.eltwise_primitive.cache_info()
    assert info.currsize == 1 and info.hits == 2
    F.gelu(x.reshape(3, 4))
    assert path.eltwise_primitive.cache_info().currsize == 2
    F.gelu(x.double())  # float64 stays on NumPy
    assert path.eltwise_primitive.cache_info().currsize == 2


@needs_onednn
@settings(max_examples=10, deadline=None)
@given(shape=st.sampled_from([(3, 5), (2, 64, 33), (0, 4)]), seed=st.integers(0, 2**16))
def test_bfloat16_results_are_within_a_bfloat16_ulp(shape, seed):
    t = ow.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 3).to(ow.bfloat16)
    x = t.float().numpy().astype(np.float64)
    soft, _ = _softmax64(x, -1)
    normed = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) if x.size else x
    cases = [
        (F.gelu(t), 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))),
        (F.softmax(t, -1), soft),
        (F.layer_norm(t, [shape[-1]]), normed),
    ]
    for got, want in cases:
        assert got.dtype is ow.bfloat16
        # float32 math rounded to bfloat16 (8 significant bits); oneDNN's softmax may round once more inside:
        # within one ulp, 2**-7 relative
        _close(got.float().numpy(), want, rtol=2**-7, atol=1e-5)


@needs_onednn
@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 9),
    c=st.integers(1, 7),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    specials=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_cross_entropy(n, c, reduction, specials, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, (n, c), specials)
    t = rng.integers(0, c, n)
    t[rng.random(n) < 0.2] = -100  # ignored rows
    _, logp = _softmax64(x, 1)
    losses = np.where(t == -100, 0.0, -logp[np.arange(n), np.where(t == -100, 0, t)])
    kept = np.count_nonzero(t != -100)
    want = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / kept if kept else np.nan}[reduction]
    got = F.cross_entropy(ow.tensor(x), ow.tensor(t), reduction=reduction).numpy()
    _close(got, np.asarray(want), rtol=2e-5, atol=2e-5)
