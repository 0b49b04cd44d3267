"""Scaled dot-product attention in blocks (flash-style): no full L×S score matrix is materialised.

Queries are taken ``QUERY_BLOCK`` rows at a time; for each such block the keys are visited
``KEY_BLOCK`` at a time with an online softmax: a running row maximum ``m``, a running
denominator ``l`` and an accumulator ``acc = Σ exp(s - m) V``, rescaled by ``exp(m_old - m_new)``
whenever a later key block raises the maximum. A block's scores are one batched matmul of
the scaled query block with the key block, its weights times values another. Under causal
masking the key blocks wholly above the diagonal are skipped.

Semantics are the reference decomposition's (``opweave.refs.nn_attention``): boolean masks
(True = take part) or additive masks broadcast to (…, L, S), ``is_causal`` (query i sees keys
j <= i), ``scale`` (default ``1/sqrt(E)``), ``enable_gqa`` (each key/value head shared by
``Hq / Hkv`` query heads), and a row whose every score is masked gives zeros. The kernel takes
float32/float64 inputs of one dtype without dropout and declines everything else (including
invalid arguments): the decomposition runs then, with its errors and its random dropout draw.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
from opweave.backends.kernel import Decline

from . import _onednn_path as dnnl
from ._common import native, wrap

QUERY_BLOCK = 128
KEY_BLOCK = 1024
SCORE_BLOCK = 1 << 21
_FAST = frozenset({opweave.float32, opweave.float64})


def _exp_inplace(s: np.ndarray, fast: bool) -> bool:
    """``s = exp(s)``; with ``fast``, a oneDNN eltwise (both cores) for large float32 blocks. Whether oneDNN ran.

    oneDNN's exp gives +inf at NaN (and flushes results below float32's normal range to zero, harmless
    next to a row maximum's exp(0) = 1), so a caller that used it checks its row sums for non-finite values.
    """
    if fast and dnnl.supports(s.dtype, s.size) and s.flags.c_contiguous:
        if dnnl.eltwise(dnnl.exp_algorithm(), s, out=s) is not None:
            return True
    np.exp(s, out=s)
    return False


def _check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    """The batch shape the inputs broadcast to, or Decline."""
    dtype = query.dtype
    if dtype not in _FAST or key.dtype is not dtype or value.dtype is not dtype or dropout_p != 0:
        raise Decline("not float32/float64 attention of one dtype without dropout")
    if min(query.ndim, key.ndim, value.ndim) < 2 or any(t.device.type != "cpu" for t in (query, key, value)):
        raise Decline("inputs of fewer than 2 dims or off the CPU")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise Decline("feature or sequence sizes disagree: the decomposition raises")
    if attn_mask is not None and (
        is_causal or attn_mask.device.type != "cpu" or not (attn_mask.dtype is opweave.bool or attn_mask.dtype is dtype)
    ):
        raise Decline("a mask the kernel does not take")
    q_batch, k_batch, v_batch = (tuple(t.shape[:-2]) for t in (query, key, value))
    if enable_gqa:
        if min(query.ndim, key.ndim, value.ndim) < 3:
            raise Decline("enable_gqa without a heads dim")
        hq, hk, hv = q_batch[-1], k_batch[-1], v_batch[-1]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise Decline("query heads are not a multiple of the key/value heads")
        k_batch, v_batch = k_batch[:-1] + (hq,), v_batch[:-1] + (hq,)
    try:
        batch = np.broadcast_shapes(q_batch, k_batch, v_batch)
    except ValueError:
        raise Decline("batch dims do not broadcast") from None
    if attn_mask is not None:
        full = batch + (query.shape[-2], key.shape[-2])
        try:
            if np.broadcast_shapes(tuple(attn_mask.shape), full) != full:
                raise Decline("the mask does not broadcast to the scores")
        except ValueError:
            raise Decline("the mask does not broadcast to the scores") from None
    return batch


def _heads(a: np.ndarray, batch: tuple, gqa: bool) -> np.ndarray:
    """``a`` broadcast to ``batch`` (each key/value head repeated for its query heads with GQA), as (N, rows, cols)."""
    if gqa and a.shape[-3] != batch[-1]:
        a = np.repeat(a, batch[-1] // a.shape[-3], axis=-3)
    return np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """Blocked attention of float32/float64 inputs without dropout (else the decomposition)."""
    batch = _check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    dtype = query.dtype
    length, source, ev = query.shape[-2], key.shape[-2], value.shape[-1]
    n = math.prod(batch)
    out = np.zeros((n, length, ev), dtype.numpy)
    if out.size == 0 or source == 0:
        return wrap(out.reshape(batch + (length, ev)), dtype)
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    typ = np.dtype(dtype.numpy).type
    q = np.multiply(_heads(native(query), batch, False), typ(factor))
    k = _heads(native(key), batch, enable_gqa)
    v = _heads(native(value), batch, enable_gqa)
    kt = k.swapaxes(-1, -2)
    mask = None
    if attn_mask is not None:
        m = native(attn_mask)
        if math.prod(m.shape[:-2]) == 1:  # one mask for every head: broadcast, never copied
            mask = np.broadcast_to(m.reshape(m.shape[-2:]), (n, length, source))
        else:
            mask = np.broadcast_to(m, batch + (length, source)).reshape((n, length, source))
    # heads go in groups whose score block (heads × QUERY_BLOCK × min(S, KEY_BLOCK)) stays near SCORE_BLOCK
    group = max(1, SCORE_BLOCK // (min(length, QUERY_BLOCK) * min(source, KEY_BLOCK)))
    one_pass = mask is None and source <= KEY_BLOCK and dnnl.supports(q.dtype, min(n, group) * QUERY_BLOCK * source)
    scratch = np.empty(min(n, group) * min(length, QUERY_BLOCK) * source, q.dtype) if one_pass else None
    with np.errstate(all="ignore"):
        for h0 in range(0, n, group):
            h = slice(h0, min(h0 + group, n))
            hq, hkt, hv, hmask = q[h], kt[h], v[h], None if mask is None else mask[h]
            for i0 in range(0, length, QUERY_BLOCK):
                i1 = min(i0 + QUERY_BLOCK, length)
                if one_pass and _query_block_onednn(hq, hkt, hv, is_causal, i0, i1, out[h, i0:i1], scratch):
                    continue
                block = (hq, hkt, hv, hmask, is_causal, i0, i1, out[h, i0:i1], typ)
                if not _query_block(*block, fast=True):  # a NaN met oneDNN's exp: again with NumPy's
                    _query_block(*block, fast=False)
    return wrap(out.reshape(batch + (length, ev)), dtype)


def _query_block_onednn(q, kt, v, causal, i0, i1, out, scratch) -> bool:
    """Query rows ``i0:i1`` when all keys fit one block and no mask can empty a row: oneDNN matmuls and softmax.

    With one key block the online softmax is the plain one, so the block's scores (in ``scratch``) go
    through one multi-threaded softmax primitive. False when a primitive is unavailable, or when the
    block's output holds a NaN: a NaN or +inf score makes oneDNN's softmax row hold a NaN (where
    PyTorch's row is all NaN), and so the output row; the NumPy block then computes it by the
    reference's rules (a NaN from the values themselves is recomputed too, to the same result).
    """
    source = kt.shape[-1]
    s = scratch[: q.shape[0] * (i1 - i0) * source].reshape(q.shape[0], i1 - i0, source)
    if dnnl.matmul(q[:, i0:i1], kt, out=s) is None:
        return False
    if causal and source - 1 > i0:
        np.copyto(s, -np.inf, where=np.arange(source)[None, :] > np.arange(i0, i1)[:, None])
    if dnnl.softmax(s, 2, False, out=s) is None or dnnl.matmul(s, v, out=out) is None:
        return False
    return not np.isnan(out.sum())


def _query_block(q, kt, v, mask, causal, i0, i1, out, typ, fast: bool) -> bool:
    """Attention of query rows ``i0:i1`` into ``out`` (N, i1 - i0, Ev), visiting key blocks with an online softmax.

    False when oneDNN's exp (``fast``) met a NaN score: ``out`` is then incomplete and the caller runs
    the block again without ``fast``."""
    source = kt.shape[-1]
    qb = q[:, i0:i1]
    rows = np.arange(i0, i1)[:, None]
    m = total = None
    # under causal masking row i sees keys 0..i: the first key block is never wholly masked
    stop = min(source, i1) if causal else source  # keys beyond the last row's position are all masked
    for j0 in range(0, stop, KEY_BLOCK):
        j1 = min(j0 + KEY_BLOCK, stop)
        s = np.matmul(qb, kt[:, :, j0:j1])
        if mask is not None:
            block = mask[:, i0:i1, j0:j1]
            if block.dtype == np.bool_:
                np.copyto(s, -np.inf, where=~block)
            else:
                np.add(s, block, out=s)
        if causal and j1 - 1 > i0:
            np.copyto(s, -np.inf, where=np.arange(j0, j1)[None, :] > rows)
        peak = s.max(axis=-1, keepdims=True)
        if m is not None:
            np.maximum(peak, m, out=peak)
        shift = np.where(np.isneginf(peak), typ(0), peak)
        np.subtract(s, shift, out=s)
        used_onednn = _exp_inplace(s, fast)
        part = s.sum(axis=-1, keepdims=True)
        if used_onednn and not np.isfinite(part).all():
            return False
        if m is None:
            np.matmul(s, v[:, j0:j1], out=out)
            total = part
        else:
            rescale = np.exp(m - shift)
            total = total * rescale + part
            np.multiply(out, rescale, out=out)
            out += np.matmul(s, v[:, j0:j1])
        m = peak
    np.divide(out, np.where(total == 0, typ(1), total), out=out)
    return True


KERNELS = {"scaled_dot_product_attention": scaled_dot_product_attention}
