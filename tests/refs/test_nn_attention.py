"""Scaled dot-product attention against ``softmax(Q Kᵀ · scale + mask) V`` in NumPy; masks (bool, additive,
causal, fully masked rows), scale, grouped-query heads, dropout statistics, errors, multi_head_attention_forward."""

from __future__ import annotations

import math

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

F = ow.nn.functional
C = ow.ops.canonical
TOL = {ow.float16: 1e-2, ow.bfloat16: 5e-2, ow.float32: 1e-5, ow.float64: 1e-10}


def _vals(t):
    return S.wide(np.array(t.numpy()))


def _close(actual, expected, dtype=None, tol=None):
    dtype = dtype or actual.dtype
    assert actual.dtype is dtype
    tol = TOL[dtype] if tol is None else tol
    np.testing.assert_allclose(_vals(actual), np.asarray(expected, dtype=np.float64), rtol=tol, atol=tol)


def _softmax(s):
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0, m))
    return np.where(dead, 0.0, e / np.where(dead, 1, e.sum(-1, keepdims=True)))


def _sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    if gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    elif mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    w = _softmax(s)
    return w @ v, w


@settings(max_examples=25)
@given(
    batch=st.sampled_from([(), (2,), (2, 3)]),
    sizes=st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(1, 4), st.integers(1, 4)),
    mask=st.sampled_from(["none", "bool", "float", "causal"]),
    scale=st.sampled_from([None, 0.5]),
    dtype=st.sampled_from([ow.float16, ow.bfloat16, ow.float32, ow.float64]),
    layout=st.sampled_from(["contiguous", "transposed", "sliced"]),
    seed=st.integers(0, 2**16),
)
def test_sdpa_matches_numpy(batch, sizes, mask, scale, dtype, layout, seed):
    length, source, e, ev = sizes
    rng = np.random.default_rng(seed)
    q = S.make(rng.standard_normal((*batch, length, e)), dtype, layout)
    k = S.make(rng.standard_normal((*batch, source, e)), dtype)
    v = S.make(rng.standard_normal((*batch, source, ev)), dtype, layout)
    m = None
    if mask == "bool":
        m = rng.random((length, source)) < 0.7
    elif mask == "float":
        m = rng.standard_normal((length, source))
    mt = None if m is None else ow.tensor(m, dtype=ow.bool if m.dtype == bool else dtype)
    mv = None if m is None else (m if m.dtype == bool else _vals(mt))
    out = F.scaled_dot_product_attention(q, k, v, mt, is_causal=mask == "causal", scale=scale)
    ref, _ = _sdpa(_vals(q), _vals(k), _vals(v), mv, mask == "causal", scale)
    _close(out, ref, dtype)


def test_sdpa_fully_masked_rows_are_zero_and_weights():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    mask = np.ones((3, 3), bool)
    mask[1] = False
    out, w = C._scaled_dot_product_attention_math(ow.tensor(q), ow.tensor(k), ow.tensor(v), ow.tensor(mask))
    ref_out, ref_w = _sdpa(q, k, v, mask)
    _close(out, ref_out)
    _close(w, ref_w)
    assert not np.isnan(_vals(out)).any() and (_vals(out)[:, 1] == 0).all()


def test_sdpa_grouped_query_attention():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 6, 3, 4))
    k, v = rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((2, 2, 5, 4))
    out = F.scaled_dot_product_attention(ow.tensor(q), ow.tensor(k), ow.tensor(v), enable_gqa=True)
    _close(out, _sdpa(q, k, v, gqa=True)[0])
    with pytest.raises(ValueError, match="enable_gqa"):
        F.scaled_dot_product_attention(ow.tensor(q[:, :5]), ow.tensor(k), ow.tensor(v), enable_gqa=True)


def test_sdpa_dropout():
    q = ow.zeros(1, 64, 8, dtype=ow.float64)  # uniform attention weights 1 / 64
    v = ow.ones(1, 64, 8, dtype=ow.float64)
    ow.manual_seed(5)
    a = F.scaled_dot_product_attention(q, q, v, dropout_p=0.25)
    ow.manual_seed(5)
    b = F.scaled_dot_product_attention(q, q, v, dropout_p=0.25)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert abs(_vals(a).mean() - 1.0) < 0.05  # the kept weights are scaled by 1 / (1 - p)
    keep = np.arange(64 * 64).reshape(1, 64, 64) % 4 != 0
    out, w = C._scaled_dot_product_attention_math(q, q, v, None, 0.25, False, ow.tensor(keep))
    _close(w, np.where(keep, 1 / 64 / 0.75, 0.0))
    _close(out, np.full((1, 64, 8), 1.0))


def test_sdpa_errors():
    q = ow.randn(2, 3, 4)
    with pytest.raises(ValueError, match="scaled_dot_product_attention.*feature"):
        F.scaled_dot_product_attention(q, ow.randn(2, 3, 5), ow.randn(2, 3, 4))
    with pytest.raises(ValueError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, ow.ones(3, 3, dtype=ow.bool), is_causal=True)
    with pytest.raises(ValueError, match="attn_mask"):
        F.scaled_dot_product_attention(q, q, q, ow.ones(4, 4, dtype=ow.bool))
    with pytest.raises(TypeError, match="attn_mask"):
        F.scaled_dot_product_attention(q, q, q, ow.ones(3, 3, dtype=ow.int64))
    with pytest.raises(TypeError, match="dtype"):
        F.scaled_dot_product_attention(q, q, ow.randn(2, 3, 4, dtype=ow.float64))
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    assert F.scaled_dot_product_attention(*(ow.empty(2, 3, 4, device="meta"),) * 3).shape == (2, 3, 4)


def _mha_ref(q, k, v, heads, w_in, b_in, w_out, b_out, key_padding_mask=None, attn_mask=None):
    length, batch, embed = q.shape
    hd = embed // heads
    wq, wk, wv = np.split(w_in, 3)
    bq, bk, bv = np.split(b_in, 3)
    proj = lambda x, w, b: x @ w.T + b  # noqa: E731
    qp, kp, vp = proj(q, wq, bq), proj(k, wk, bk), proj(v, wv, bv)
    split = lambda x: x.reshape(x.shape[0], batch * heads, hd).transpose(1, 0, 2)  # noqa: E731
    qh, kh, vh = split(qp), split(kp), split(vp)
    s = qh @ kh.transpose(0, 2, 1) / math.sqrt(hd)
    if attn_mask is not None:
        s = s + np.where(attn_mask, -np.inf, 0.0)
    if key_padding_mask is not None:
        pad = np.repeat(key_padding_mask[:, None, None, :], heads, axis=1).reshape(batch * heads, 1, -1)
        s = s + np.where(pad, -np.inf, 0.0)
    w = _softmax(s)
    o = (w @ vh).transpose(1, 0, 2).reshape(length, batch, embed)
    return o @ w_out.T + b_out, w.reshape(batch, heads, length, -1).mean(1)


def test_multi_head_attention_forward():
    rng = np.random.default_rng(2)
    embed, heads = 8, 2
    q, k = rng.standard_normal((3, 2, embed)), rng.standard_normal((5, 2, embed))
    v = rng.standard_normal((5, 2, embed))
    w_in, b_in = rng.standard_normal((3 * embed, embed)) * 0.3, rng.standard_normal(3 * embed)
    w_out, b_out = rng.standard_normal((embed, embed)) * 0.3, rng.standard_normal(embed)
    kpm = np.zeros((2, 5), bool)
    kpm[1, -2:] = True
    am = np.triu(np.ones((3, 5), bool), 3)
    t = ow.tensor
    out, w = F.multi_head_attention_forward(
        t(q), t(k), t(v), embed, heads, t(w_in), t(b_in), None, None, False, 0.0, t(w_out), t(b_out),
        training=False, key_padding_mask=t(kpm), attn_mask=t(am),
    )  # fmt: skip
    ref_out, ref_w = _mha_ref(q, k, v, heads, w_in, b_in, w_out, b_out, kpm, am)
    _close(out, ref_out, tol=1e-9)
    _close(w, ref_w, tol=1e-9)
    out1, w1 = F.multi_head_attention_forward(
        t(q[:, 0]), t(k[:, 0]), t(v[:, 0]), embed, heads, t(w_in), t(b_in), None, None, False, 0.0, t(w_out),
        t(b_out), training=False, need_weights=False,
    )  # fmt: skip
    assert w1 is None
    _close(out1, _mha_ref(q[:, :1], k[:, :1], v[:, :1], heads, w_in, b_in, w_out, b_out)[0][:, 0], tol=1e-9)
    with pytest.raises(ValueError, match="multi_head_attention_forward"):
        F.multi_head_attention_forward(
            t(q), t(k), t(v), 7, heads, t(w_in), t(b_in), None, None, False, 0.0, t(w_out), t(b_out)
        )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_safe_softmax(dim):
    x = np.array([[0.5, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]])
    moved = np.moveaxis(x, dim, -1)
    ref = np.moveaxis(_softmax(moved), -1, dim)
    _close(C._safe_softmax(ow.tensor(x), dim), ref)
    assert C._safe_softmax(ow.tensor(x, dtype=ow.float32), dim, dtype=ow.float64).dtype is ow.float64
