"""Scaled dot-product attention: ``softmax(Q Kᵀ · scale + mask) V``.

``query`` is (…, L, E), ``key`` (…, S, E), ``value`` (…, S, Ev); the batch dims broadcast.
``attn_mask`` is boolean (True = take part) or additive (added to the scores), broadcast
to (…, L, S); ``is_causal`` masks the upper triangle (query i sees keys j <= i) and excludes
``attn_mask``; ``scale`` defaults to ``1 / sqrt(E)``; ``enable_gqa`` lets ``key``/``value``
have fewer heads (dim -3) than ``query``, each shared by ``Hq / Hkv`` query heads;
``dropout_p`` drops attention weights (random, seeded by the default generator).

A row whose every score is masked gives zeros (PyTorch's math backend's ``_safe_softmax``),
not NaN. Scores are computed in the computation dtype (float32 for 16-bit inputs).
"""

from __future__ import annotations

import math

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._nn_utils import c, check_float, keep
from ._tensor_utils import expand
from ._utils import broadcast_shapes, to_device, to_dtype, wrap_dim


def _check(op, query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_float(op, t, name)
        if t.ndim < 2:
            raise ValueError(f"{op}: '{name}' must have at least 2 dims (..., seq, features), but got {t.ndim}")
    if not (query.dtype is key.dtype is value.dtype):
        raise TypeError(
            f"{op}: 'query', 'key' and 'value' must have one dtype, got "
            f"{query.dtype.name}, {key.dtype.name} and {value.dtype.name}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"{op}: 'query' and 'key' must have one feature size, got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"{op}: 'key' and 'value' must have one sequence length, got {key.shape[-2]} and {value.shape[-2]}"
        )
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{op}: argument 'dropout_p' must be in [0, 1], got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{op}: 'attn_mask' and is_causal=True cannot be given together")
    if attn_mask is not None and not (attn_mask.dtype is _dtype.bool_ or attn_mask.dtype.is_floating_point):
        raise TypeError(f"{op}: 'attn_mask' must be bool or floating point, got {attn_mask.dtype.name}")
    if enable_gqa:
        if query.ndim < 3 or key.ndim < 3 or value.ndim < 3:
            raise ValueError(f"{op}: enable_gqa needs a heads dim (-3) in 'query', 'key' and 'value'")
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise ValueError(
                f"{op}: with enable_gqa the query heads ({hq}) must be a multiple of the key/value heads ({hk}, {hv})"
            )


def _repeat_heads(t, groups):
    """``t`` with each head (dim -3) repeated ``groups`` times in a row (``repeat_interleave``)."""
    if groups == 1:
        return t
    shape = list(t.shape)
    h = shape[-3]
    wide = shape[:-3] + [h, groups] + shape[-2:]
    dims = list(range(t.ndim - 2)) + [t.ndim - 1, t.ndim]
    out = prims.broadcast_in_dim(t, wide, dims)
    return ops.reshape(out, shape[:-3] + [h * groups] + shape[-2:])


def _attention(op, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, dropout_mask=None):
    """``(output, weights)`` of scaled dot-product attention."""
    _check(op, query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    compute = _dtype.opmath_dtype(query.dtype)
    q, k, v = (to_dtype(t, compute) for t in (query, key, value))
    if enable_gqa:
        k = _repeat_heads(k, query.shape[-3] // key.shape[-3])
        v = _repeat_heads(v, query.shape[-3] // value.shape[-3])
    length, source = q.shape[-2], k.shape[-2]
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = ops.matmul(prims.mul(q, c(factor, q)), ops.transpose.int(k, -2, -1))
    masked = None
    if is_causal:
        rows = prims.iota(length, start=0, step=1, dtype=_dtype.int64, device=q.device)
        cols = prims.iota(source, start=0, step=1, dtype=_dtype.int64, device=q.device)
        allowed = prims.ge(
            prims.broadcast_in_dim(rows, [length, source], [0]), prims.broadcast_in_dim(cols, [length, source], [1])
        )
        masked = prims.logical_not(allowed)
    elif attn_mask is not None:
        mask = to_device(attn_mask, q.device)
        try:
            shape = broadcast_shapes(op, scores.shape, mask.shape)
        except ValueError:
            shape = None
        if shape is None or tuple(shape) != tuple(scores.shape):
            raise ValueError(
                f"{op}: 'attn_mask' of shape {list(mask.shape)} does not broadcast to {list(scores.shape)}"
            )
        if mask.dtype is _dtype.bool_:
            masked = prims.logical_not(expand(mask, scores.shape))
        else:
            scores = prims.add(scores, expand(to_dtype(mask, compute), scores.shape))
    if masked is not None:
        scores = prims.where(expand(masked, scores.shape), c(-math.inf, scores), scores)
    weights = _safe_softmax(scores)
    if dropout_mask is not None:
        keep_ = expand(to_device(dropout_mask, q.device), weights.shape)
        keep_ = keep_ if keep_.dtype is _dtype.bool_ else prims.ne(keep_, c(0, keep_))
        scale_ = 0.0 if dropout_p >= 1 else 1.0 / (1.0 - dropout_p)
        weights = prims.where(keep_, prims.mul(weights, c(scale_, weights)), c(0.0, weights))
    elif dropout_p > 0:
        weights = ops.dropout(weights, dropout_p, True)
    out = ops.matmul(weights, v)
    return to_dtype(out, query.dtype), to_dtype(weights, query.dtype)


def _safe_softmax(scores):
    """Softmax over the last dim; rows that are all -inf give zeros."""
    if scores.numel() == 0:
        return scores
    last = [scores.ndim - 1]
    peak = prims.amax(scores, last)
    dead = prims.isneginf(peak)
    peak = prims.where(dead, c(0.0, peak), peak)
    exps = prims.exp(prims.sub(scores, keep(peak, last, scores)))
    total = prims.sum(exps, last)
    total = prims.where(dead, c(1.0, total), total)
    return prims.div(exps, keep(total, last, scores))


def safe_softmax(self, dim, dtype=None):
    """ATen's ``_safe_softmax``: softmax along ``dim`` where a row that is all -inf gives zeros, not NaN."""
    op = "_safe_softmax"
    x = to_dtype(self, dtype) if dtype is not None else self
    check_float(op, x)
    d = wrap_dim(op, dim, x.ndim)
    xc = to_dtype(x, _dtype.opmath_dtype(x.dtype))
    if xc.ndim == 0:
        return to_dtype(_safe_scalar(xc), x.dtype)
    moved = ops.movedim.int(xc, d, -1)
    return to_dtype(ops.movedim.int(_safe_softmax(moved), -1, d), x.dtype)


def _safe_scalar(x):
    """Softmax of a single element: 1, or 0 where it is -inf."""
    return prims.where(prims.isneginf(x), c(0.0, x), c(1.0, x))


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """``softmax(query keyᵀ · scale + mask) value`` (see the module docstring for the options)."""
    op = "scaled_dot_product_attention"
    return _attention(op, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)[0]


def scaled_dot_product_attention_math(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None, enable_gqa=False
):
    """``(output, attention weights)``; ``dropout_mask`` (True = keep) replaces the random dropout draw."""
    op = "_scaled_dot_product_attention_math"
    return _attention(op, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, dropout_mask)


def _define():
    from ._utils import define_with_variants

    define_with_variants(
        "_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", safe_softmax, inplace=False, out=False
    )
    define_with_variants(
        "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
        "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
        scaled_dot_product_attention,
        inplace=False,
        out=False,
    )
    define_with_variants(
        "_scaled_dot_product_attention_math(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
        "float dropout_p=0.0, bool is_causal=False, Tensor? dropout_mask=None, *, float? scale=None, "
        "bool enable_gqa=False) -> (Tensor, Tensor)",
        scaled_dot_product_attention_math,
        inplace=False,
        out=False,
    )


_define()
