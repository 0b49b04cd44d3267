"""Op database entries: normalization, activations with parameters, dropout, losses, embeddings, distances, attention.

Every oracle is a NumPy formula written here (float inputs arrive as float64):
norms via mean/var, cross entropy via log-sum-exp and ``take_along_axis``, attention
via ``softmax(Q Kᵀ · scale + mask) V``, distances via ``np.linalg.norm``. Ops that
draw random numbers (``feature_dropout``, ``feature_alpha_dropout``) are checked by
seeded reproducibility; ``rrelu`` is checked by value in evaluation mode.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow

from . import register
from ._cases import TA, B, C, Idx, K, S, T, Val, entry, sample
from ._core import FLOAT, ErrorInput

TOL = {"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2), "float32": (2e-5, 2e-5), "float64": (1e-7, 1e-7)}
LOOSE = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-4), "float64": (1e-7, 1e-7)}
I64 = ow.int64


def E(name, oracle, cases, dtypes=FLOAT, *, tol=TOL, errors=None, **kw):
    """One entry from a case list, with this family's tolerances and error cases."""
    info = entry(name, oracle, cases, dtypes, **kw)
    info.tolerances = dict(tol)
    if errors is not None:
        info.error_inputs = _errors(errors)
    return info


def _errors(cases):
    """``error_inputs`` from ``(error type, K(...), description)`` triples."""

    def gen(rng, dtype):
        for error, (args, kwargs), desc in cases:
            s = sample(args, kwargs, rng, dtype)
            s.desc = desc
            yield ErrorInput(s, error)

    return gen


def _reduce(loss, reduction=1):
    r = {"Mean": 1, "Sum": 2, "None": 0}.get(reduction, reduction)
    return loss if r == 0 else (np.mean(loss) if r == 1 else np.sum(loss))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


# -- norms ----------------------------------------------------------------------------------------


def _chan(v, ndim, dim=1):
    shape = [1] * ndim
    shape[dim] = -1
    return np.reshape(v, shape)


def _affine(y, weight, bias):
    if weight is not None:
        y = y * _chan(weight, y.ndim)
    if bias is not None:
        y = y + _chan(bias, y.ndim)
    return y


def _bn(x, weight, bias, rm, rv, training, momentum, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    else:
        mean, var = rm, rv
    invstd = 1.0 / np.sqrt(var + eps)
    y = (x - _chan(mean, x.ndim)) * _chan(invstd, x.ndim)
    return _affine(y, weight, bias), mean, invstd


def batch_norm_oracle(x, weight, bias, rm, rv, training, momentum, eps, cudnn=False):
    return _bn(x, weight, bias, rm, rv, training, momentum, eps)[0]


def native_batch_norm_oracle(x, weight, bias, rm, rv, training, momentum, eps):
    out, mean, invstd = _bn(x, weight, bias, rm, rv, training, momentum, eps)
    if not training:
        return out, np.zeros(0), np.zeros(0)
    return out, mean, invstd


def batch_norm_with_update_oracle(x, weight, bias, rm, rv, momentum, eps):
    out, mean, invstd = native_batch_norm_oracle(x, weight, bias, rm, rv, True, momentum, eps)
    return out, mean, invstd, np.zeros(0, np.uint8)


def legit_no_stats_oracle(x, weight, bias, training, momentum, eps):
    return native_batch_norm_oracle(x, weight, bias, None, None, True, momentum, eps)


def legit_no_training_oracle(x, weight, bias, rm, rv, momentum, eps):
    return native_batch_norm_oracle(x, weight, bias, rm, rv, False, momentum, eps)


def instance_norm_oracle(x, weight, bias, rm, rv, use_input_stats, momentum, eps, cudnn=False):
    if not use_input_stats:
        return batch_norm_oracle(x, weight, bias, rm, rv, False, momentum, eps)
    axes = tuple(range(2, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return _affine(y, weight, bias)


def _ln(x, shape, weight, bias, eps):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    y = (x - mean) * rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, rstd


def layer_norm_oracle(x, shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _ln(x, shape, weight, bias, eps)[0]


def native_layer_norm_oracle(x, shape, weight, bias, eps):
    return _ln(x, shape, weight, bias, eps)


def rms_norm_oracle(x, shape, weight=None, eps=None):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    return y if weight is None else y * weight


def _gn(x, weight, bias, groups, eps):
    n, ch = x.shape[:2]
    g = x.reshape(n, groups, -1)
    mean, var = g.mean(axis=2), g.var(axis=2)
    rstd = 1.0 / np.sqrt(var + eps)
    y = ((g - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    return _affine(y, weight, bias), mean, rstd


def group_norm_oracle(x, groups, weight=None, bias=None, eps=1e-5, cudnn=True):
    return _gn(x, weight, bias, groups, eps)[0]


def native_group_norm_oracle(x, weight, bias, n, c, hxw, groups, eps):
    return _gn(x, weight, bias, groups, eps)


def lrn_oracle(x, size, alpha=1e-4, beta=0.75, k=1.0):
    ch = x.shape[1]
    sq = x * x
    total = np.zeros_like(x)
    for c in range(ch):
        lo, hi = max(c - size // 2, 0), min(c + (size - 1) // 2, ch - 1)
        total[:, c] = sq[:, lo : hi + 1].sum(axis=1)
    return x / (k + alpha / size * total) ** beta


def normalize_oracle(x, p=2.0, dim=1, eps=1e-12):
    norm = np.linalg.norm(np.moveaxis(x, dim, -1), ord=p, axis=-1, keepdims=True)
    return x / np.moveaxis(np.maximum(norm, eps), -1, dim)


def bn_stats_oracle(x, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    return x.mean(axis=axes), 1.0 / np.sqrt(x.var(axis=axes) + eps)


def bn_elemt_oracle(x, weight, bias, mean, invstd, eps):
    return _affine((x - _chan(mean, x.ndim)) * _chan(invstd, x.ndim), weight, bias)


def weight_norm_oracle(v, g, dim=0):
    if dim == -1:
        return v * (g / np.sqrt(np.sum(v * v)))
    axes = tuple(i for i in range(v.ndim) if i != dim % v.ndim)
    return v * (g / np.sqrt(np.sum(v * v, axis=axes, keepdims=True)))


def _bn_cases():
    p3 = lambda: [TA((3,)), TA((3,)), TA((3,), domain="pos")]  # noqa: E731  weight, bias/mean, var
    return [
        K(TA((4, 3, 5)), TA((3,)), TA((3,)), None, None, True, 0.1, 1e-5),
        K(TA((4, 3, 5), T), None, None, TA((3,)), TA((3,), domain="pos"), False, 0.1, 1e-5),
        K(TA((2, 3, 2, 3), S), TA((3,)), None, None, None, True, 0.2, 1e-3),
        K(TA((6, 3)), *p3()[:2], TA((3,)), TA((3,), domain="pos"), False, 0.1, 1e-5),
        K(TA((2, 3, 4), B), None, TA((3,)), None, None, True, 0.1, 1e-5),
    ]


def _norm_lines():
    bn = _bn_cases()
    bn_err = [
        (ValueError, K(TA((4, 3, 5)), TA((4,)), None, None, None, True, 0.1, 1e-5, False), "weight of the wrong size"),
        (ValueError, K(TA((4,)), None, None, None, None, True, 0.1, 1e-5, False), "1-D input"),
        (
            ValueError,
            K(TA((4, 3)), None, None, None, None, False, 0.1, 1e-5, False),
            "eval without running stats",
        ),
    ]
    legit = [
        K(TA((4, 3, 5)), TA((3,)), TA((3,)), TA((3,)), TA((3,), domain="pos"), True, 0.1, 1e-5),
        K(TA((4, 3, 5), T), None, None, TA((3,)), TA((3,), domain="pos"), False, 0.1, 1e-5),
        K(TA((5, 3), S), TA((3,)), None, TA((3,)), TA((3,), domain="pos"), True, 0.3, 1e-3),
    ]
    ln = [
        K(TA((4, 5)), [5], TA((5,)), TA((5,))),
        K(TA((2, 3, 4), T), [3, 4]),
        K(TA((3, 6), S), [6], TA((6,)), None, 1e-3),
        K(TA((2, 3, 4), B), [4], None, TA((4,))),
        K(TA((0, 4)), [4]),
    ]
    ln_err = [
        (ValueError, K(TA((4, 5)), [4]), "normalized_shape does not match"),
        (ValueError, K(TA((4, 5)), [5], TA((4,))), "weight of the wrong shape"),
        (TypeError, K(TA((4, 5), dtype=I64), [5]), "integer input"),
    ]
    gn = [
        K(TA((2, 4, 3)), 2, TA((4,)), TA((4,))),
        K(TA((3, 6, 2, 2), T), 3),
        K(TA((2, 4), S), 4, TA((4,)), None, 1e-3),
        K(TA((2, 6, 5), B), 1, None, TA((6,))),
    ]
    return [
        E("batch_norm", batch_norm_oracle, [K(*a, False, **kw) for a, kw in bn], errors=bn_err),
        E("native_batch_norm", native_batch_norm_oracle, bn),
        E("_native_batch_norm_legit", native_batch_norm_oracle, legit),
        E(
            "_batch_norm_with_update",
            batch_norm_with_update_oracle,
            [
                K(TA((4, 3, 5)), TA((3,)), TA((3,)), TA((3,)), TA((3,), domain="pos"), 0.1, 1e-5),
                K(TA((5, 3), S), None, None, TA((3,)), TA((3,), domain="pos"), 0.3, 1e-3),
            ],
        ),
        E(
            "_native_batch_norm_legit.no_stats",
            legit_no_stats_oracle,
            [K(TA((4, 3, 5)), TA((3,)), TA((3,)), True, 0.1, 1e-5), K(TA((3, 2), T), None, None, True, 0.1, 1e-5)],
        ),
        E(
            "_native_batch_norm_legit_no_training",
            legit_no_training_oracle,
            [
                K(TA((4, 3, 5)), TA((3,)), TA((3,)), TA((3,)), TA((3,), domain="pos"), 0.1, 1e-5),
                K(TA((4, 3), S), None, None, TA((3,)), TA((3,), domain="pos"), 0.1, 1e-5),
            ],
        ),
        E(
            "instance_norm",
            instance_norm_oracle,
            [
                K(TA((2, 3, 5)), TA((3,)), TA((3,)), None, None, True, 0.1, 1e-5, False),
                K(TA((2, 3, 2, 3), T), None, None, None, None, True, 0.1, 1e-5, False),
                K(TA((2, 3, 4)), None, TA((3,)), TA((3,)), TA((3,), domain="pos"), False, 0.1, 1e-5, False),
                K(TA((2, 3, 6), S), TA((3,)), None, None, None, True, 0.1, 1e-3, False),
            ],
        ),
        E("layer_norm", layer_norm_oracle, ln, errors=ln_err),
        E(
            "native_layer_norm",
            native_layer_norm_oracle,
            [K(*a[:2], *(list(a[2:]) + [None, None])[:2], 1e-5) for a, _ in ln[:4]],
        ),
        E(
            "rms_norm",
            rms_norm_oracle,
            [
                K(TA((4, 5)), [5], TA((5,)), 1e-6),
                K(TA((2, 3, 4), T), [3, 4], None, 1e-5),
                K(TA((3, 6), S), [6], None, 1e-3),
                K(TA((2, 3, 4), B), [4], TA((4,)), 1e-6),
            ],
        ),
        E(
            "group_norm",
            group_norm_oracle,
            gn,
            errors=[(ValueError, K(TA((2, 4, 3)), 3), "groups do not divide the channels")],
        ),
        E(
            "native_group_norm",
            native_group_norm_oracle,
            [
                K(TA((2, 4, 3)), TA((4,)), TA((4,)), 2, 4, 3, 2, 1e-5),
                K(TA((3, 6, 2, 2), T), None, None, 3, 6, 4, 3, 1e-5),
                K(TA((2, 4), S), TA((4,)), None, 2, 4, 1, 4, 1e-3),
            ],
        ),
        E(
            "batch_norm_stats",
            bn_stats_oracle,
            [K(TA((4, 3, 5)), 1e-5), K(TA((5, 2), T), 1e-3), K(TA((2, 3, 2, 2), S), 1e-5)],
        ),
        E(
            "batch_norm_elemt",
            bn_elemt_oracle,
            [
                K(TA((4, 3, 5)), TA((3,)), TA((3,)), TA((3,)), TA((3,), domain="pos"), 1e-5),
                K(TA((5, 2), T), None, None, TA((2,)), TA((2,), domain="pos"), 1e-5),
                K(TA((2, 3, 2, 2), S), TA((3,)), None, TA((3,)), TA((3,), domain="pos"), 1e-5),
            ],
        ),
        E(
            "_weight_norm",
            weight_norm_oracle,
            [
                K(TA((4, 3)), TA((4, 1))),
                K(TA((4, 3), T), TA((1, 3)), 1),
                K(TA((2, 3, 4), S), TA((2, 1, 1))),
                K(TA((3, 2)), TA(()), -1),
            ],
        ),
        E(
            "local_response_norm",
            lrn_oracle,
            [
                K(TA((2, 5, 3)), 3),
                K(TA((2, 4, 3, 3), T), 2, 1e-2, 0.5, 2.0),
                K(TA((1, 6, 4), S), 4),
                K(TA((2, 3, 2, 2, 2), B), 5, 1e-1),
            ],
            errors=[(ValueError, K(TA((2, 5)), 3), "2-D input")],
        ),
        E(
            "normalize",
            normalize_oracle,
            [
                K(TA((4, 5))),
                K(TA((4, 5), T), 1.0, 0),
                K(TA((2, 3, 4), S), 3.0, -1),
                K(TA((3, 4), B), math.inf, 1, 1e-3),
                K(TA((3, 4)), 2.0, 1, 10.0),
            ],
        ),
    ]


# -- activations -------------------------------------------------------------------------------------


def glu_oracle(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a * _sigmoid(b)


def prelu_oracle(x, w):
    if w.size != 1 and x.ndim > 1:
        w = _chan(w, x.ndim)
    else:
        w = np.reshape(w, ())
    return np.where(x > 0, x, w * x)


def prelu_kernel_oracle(x, w):
    return np.where(x > 0, x, w * x)


def rrelu_eval_oracle(x, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return np.where(x >= 0, x, x * (lower + upper) / 2)


def rrelu_noise_oracle(x, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return rrelu_eval_oracle(x, lower, upper)


def _act_lines():
    dropout_cases = [
        K(TA((4, 5, 3)), 0.5, True),
        K(TA((8, 4), T), 0.3, True),
        K(TA((4, 6, 2, 2), S), 0.7, True),
    ]
    return [
        E(
            "glu",
            glu_oracle,
            [K(TA((4, 6))), K(TA((4, 6), T), 0), K(TA((2, 4, 3), S), 1), K(TA((3, 2), B), -1), K(TA((0, 4)))],
            errors=[(ValueError, K(TA((4, 5))), "odd halving dim"), (ValueError, K(TA(())), "0-dim input")],
        ),
        E(
            "prelu",
            prelu_oracle,
            [
                K(TA((4, 3)), TA((3,))),
                K(TA((2, 3, 4), T), TA((1,))),
                K(TA((5,), S), TA((1,))),
                K(TA((4, 2, 2), B), TA((2,))),
            ],
            errors=[(ValueError, K(TA((4, 3)), TA((4,))), "wrong number of weights")],
        ),
        E(
            "_prelu_kernel",
            prelu_kernel_oracle,
            [K(TA((4, 3)), TA((3,))), K(TA((2, 3, 4), T), TA((3, 1))), K(TA((5, 2), S), TA((1,)))],
        ),
        E(
            "rrelu",
            rrelu_eval_oracle,
            [K(TA((4, 5))), K(TA((3, 4), T), 0.1, 0.5), K(TA((6,), S), 0.2, 0.2, False), K(TA((3, 2), B))],
            errors=[(ValueError, K(TA((4,)), 0.5, 0.1), "lower > upper")],
        ),
        E(
            "rrelu_with_noise",
            rrelu_noise_oracle,
            [K(TA((4, 5)), TA((4, 5))), K(TA((3, 4), T), TA((3, 4)), 0.1, 0.5)],
        ),
        E("feature_dropout", None, dropout_cases, random=True),
        E("feature_alpha_dropout", None, dropout_cases, random=True),
    ]


# -- losses --------------------------------------------------------------------------------------------


def mse_oracle(x, y, reduction=1):
    return _reduce((x - y) ** 2, reduction)


def l1_oracle(x, y, reduction=1):
    return _reduce(np.abs(x - y), reduction)


def smooth_l1_oracle(x, y, reduction=1, beta=1.0):
    d = np.abs(x - y)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / max(beta, 1e-300), d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_oracle(x, y, reduction=1, delta=1.0):
    d = np.abs(x - y)
    return _reduce(np.where(d <= delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def soft_margin_oracle(x, y, reduction=1):
    return _reduce(np.log1p(np.exp(-y * x)), reduction)


def bce_oracle(x, y, weight=None, reduction=1):
    loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def bce_logits_oracle(x, y, weight=None, pos_weight=None, reduction=1):
    log_sig = -np.logaddexp(0, -x)
    log_1m = -np.logaddexp(0, x)
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * y * log_sig + (1 - y) * log_1m)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div_oracle(x, y, reduction=1, log_target=False):
    if log_target:
        loss = np.exp(y) * (y - x)
    else:
        with np.errstate(all="ignore"):
            loss = np.where(y > 0, y * np.log(np.where(y > 0, y, 1)), 0.0) - y * x
    return _reduce(loss, reduction)


def poisson_oracle(x, y, log_input, full, eps, reduction):
    loss = np.exp(x) - y * x if log_input else x - y * np.log(x + eps)
    if full:
        with np.errstate(all="ignore"):
            st = y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y)
        loss = loss + np.where(y > 1, st, 0.0)
    return _reduce(loss, reduction)


def margin_ranking_oracle(x1, x2, y, margin=0.0, reduction=1):
    return _reduce(np.maximum(0, -y * (x1 - x2) + margin), reduction)


def hinge_oracle(x, y, margin=1.0, reduction=1):
    loss = np.where(y == 1, x, 0.0) + np.where(y == -1, np.maximum(0, margin - x), 0.0)
    loss = np.where((y != 1) & (y != -1), x + np.maximum(0, margin - x), loss)
    return _reduce(loss, reduction)


def cosine_embedding_oracle(x1, x2, y, margin=0.0, reduction=1):
    eps = 1e-12
    cos = np.sum(x1 * x2, -1) / np.sqrt((np.sum(x1 * x1, -1) + eps) * (np.sum(x2 * x2, -1) + eps))
    loss = np.where(y == 1, 1 - cos, 0.0) + np.where(y == -1, np.maximum(0, cos - margin), 0.0)
    return _reduce(loss, reduction)


def multi_margin_oracle(x, t, p=1, margin=1, weight=None, reduction=1):
    x2 = np.atleast_2d(x)
    t1 = np.atleast_1d(t)
    n, c = x2.shape
    loss = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j == t1[i]:
                continue
            z = max(0.0, margin - x2[i, t1[i]] + x2[i, j]) ** p
            loss[i] += z * (1.0 if weight is None else weight[t1[i]])
    loss /= c
    return _reduce(loss if x.ndim == 2 else loss[0], reduction)


def multilabel_margin_oracle(x, t, reduction=1):
    x2, t2 = np.atleast_2d(x), np.atleast_2d(t)
    n, c = x2.shape
    loss = np.zeros(n)
    for i in range(n):
        targets = []
        for v in t2[i]:
            if v < 0:
                break
            targets.append(int(v))
        others = [k for k in range(c) if k not in targets]
        for j in targets:  # a repeated target counts once per listing, as PyTorch's kernel does
            for k in others:
                loss[i] += max(0.0, 1 - (x2[i, j] - x2[i, k]))
    loss /= c
    return _reduce(loss if x.ndim == 2 else loss[0], reduction)


def _pdist_pair(a, b, p, eps):
    return np.linalg.norm(a - b + eps, ord=p, axis=-1)


def triplet_oracle(a, pos, neg, margin=1.0, p=2, eps=1e-6, swap=False, reduction=1):
    d_pos = _pdist_pair(a, pos, p, eps)
    d_neg = _pdist_pair(a, neg, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, _pdist_pair(pos, neg, p, eps))
    return _reduce(np.maximum(margin + d_pos - d_neg, 0), reduction)


def _nll(logp, t, weight, reduction, ignore_index):
    cdim = 0 if logp.ndim == 1 else 1
    lp = np.moveaxis(logp, cdim, -1)
    ignore = t == ignore_index
    safe = np.where(ignore, 0, t)
    picked = np.take_along_axis(lp, safe[..., None], axis=-1)[..., 0]
    w = np.ones(lp.shape[-1]) if weight is None else weight
    wt = np.where(ignore, 0.0, w[safe])
    loss = np.where(ignore, 0.0, -picked * wt)
    r = {"Mean": 1}.get(reduction, reduction)
    if r == 0:
        return loss
    if r == 2:
        return np.sum(loss)
    with np.errstate(all="ignore"):
        return np.sum(loss) / np.sum(wt)


def nll_oracle(x, t, weight=None, reduction=1, ignore_index=-100):
    return _nll(x, t, weight, reduction, ignore_index)


def cross_entropy_oracle(x, t, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    cdim = 0 if x.ndim == 1 else 1
    classes = x.shape[cdim]
    logp = _log_softmax(x, cdim)
    w = np.ones(classes) if weight is None else weight
    wb = _chan(w, x.ndim, cdim)
    r = {"Mean": 1}.get(reduction, reduction)
    if t.dtype.kind == "f":  # class probabilities
        y = t * (1 - label_smoothing) + label_smoothing / classes
        loss = -np.sum(logp * y * wb, axis=cdim)
        if r == 1:
            return np.sum(loss) / (x.size / classes)
        return loss if r == 0 else np.sum(loss)
    nll = _nll(logp, t, weight, r, ignore_index)
    if label_smoothing == 0:
        return nll
    ignore = t == ignore_index
    smooth = np.where(ignore, 0.0, -np.sum(logp * wb, axis=cdim))
    if r == 1:
        denom = np.sum(np.where(ignore, 0.0, w[np.where(ignore, 0, t)]))
        smooth = np.sum(smooth) / denom
    elif r == 2:
        smooth = np.sum(smooth)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


def _pair_cases(dom_x="any", dom_y="any", reductions=(1, 0, 2, 1, 1), extra=((), (), (), (), ())):
    layouts = (C, T, S, B, C)
    shapes = ((4, 5), (3, 4), (2, 3, 4), (3, 5), (0, 3))
    return [
        K(TA(sh, lay, domain=dom_x), TA(sh, lay, domain=dom_y), r, *ex)
        for sh, lay, r, ex in zip(shapes, layouts, reductions, extra)
    ]


def _loss_lines():
    nll_cases = [
        K(TA((4, 5)), Idx((4,), 5)),
        K(TA((4, 5), T), Idx((4,), 5), TA((5,), domain="pos"), 0),
        K(TA((3, 4), S), Val([1, -100, 3], dtype=I64), None, 1, -100),
        K(TA((5,)), Val(2, dtype=I64), TA((5,), domain="pos"), 2),
        K(TA((6, 3), B), Idx((6,), 3), TA((3,), domain="pos"), 1, 1),
    ]
    nll_err = [
        (ValueError, K(TA((4, 5)), Val([0, 1, 5, 2], dtype=I64)), "class index out of range"),
        (TypeError, K(TA((4, 5)), Val([0, 1, 2, 2], dtype=ow.int32)), "int32 target"),
        (ValueError, K(TA((4, 5)), Idx((3,), 5)), "target of the wrong shape"),
    ]
    ce_cases = [
        K(TA((4, 5)), Idx((4,), 5)),
        K(TA((2, 3, 4), T), Idx((2, 4), 3), TA((3,), domain="pos"), 0),
        K(TA((4, 5), S), TA((4, 5), domain="prob"), None, 1, -100, 0.0),
        K(TA((4, 5)), Val([1, -100, 3, 0], dtype=I64), TA((5,), domain="pos"), 1, -100, 0.2),
        K(TA((3, 4, 2), B), Idx((3, 2), 4), None, 2, -100, 0.1),
        K(TA((5,)), Val(3, dtype=I64), None, 1, -100, 0.3),
        K(TA((3, 4)), TA((3, 4), domain="prob"), TA((4,), domain="pos"), 0, -100, 0.25),
        K(TA((4, 5)), Val([1, 2, 3, 0], dtype=I64), None, 1, 2, 0.1),
    ]
    return [
        E("mse_loss", mse_oracle, _pair_cases(), errors=[(ValueError, K(TA((3, 4)), TA((2, 4))), "shapes mismatch")]),
        E("l1_loss", l1_oracle, _pair_cases()),
        E("smooth_l1_loss", smooth_l1_oracle, _pair_cases(extra=((), (0.5,), (0.0,), (2.0,), ()))),
        E("huber_loss", huber_oracle, _pair_cases(extra=((), (0.5,), (2.0,), (1.5,), ()))),
        E("soft_margin_loss", soft_margin_oracle, _pair_cases()),
        E(
            "binary_cross_entropy",
            bce_oracle,
            [
                K(TA((4, 5), domain="prob"), TA((4, 5), domain="prob")),
                K(TA((3, 4), T, domain="prob"), TA((3, 4), domain="prob"), TA((3, 4), domain="pos"), 0),
                K(TA((6,), S, domain="prob"), TA((6,), domain="prob"), None, 2),
                K(Val([0.0, 1.0, 0.5]), Val([1.0, 0.0, 0.5])),
            ],
            errors=[(ValueError, K(Val([0.5, 1.5]), Val([1.0, 0.0])), "input above 1")],
        ),
        E(
            "binary_cross_entropy_with_logits",
            bce_logits_oracle,
            [
                K(TA((4, 5)), TA((4, 5), domain="prob")),
                K(TA((3, 4), T), TA((3, 4), domain="prob"), TA((3, 4), domain="pos"), TA((4,), domain="pos"), 0),
                K(TA((6,), S), TA((6,), domain="prob"), None, TA((6,), domain="pos"), 2),
                K(TA((2, 3), B), TA((2, 3), domain="prob"), TA((3,)), None, 1),
            ],
        ),
        E(
            "kl_div",
            kl_div_oracle,
            [
                K(TA((4, 5)), TA((4, 5), domain="prob")),
                K(TA((3, 4), T), TA((3, 4)), 2, log_target=True),
                K(TA((6,), S), Val([0.0, 0.5, 0.2, 0.0, 1.0, 0.3]), 0),
                K(TA((2, 3), B), TA((2, 3), domain="nonneg"), 1),
            ],
        ),
        E(
            "poisson_nll_loss",
            poisson_oracle,
            [
                K(TA((4, 5)), TA((4, 5), domain="nonneg"), True, False, 1e-8, 1),
                K(TA((3, 4), T, domain="pos"), TA((3, 4), domain="nonneg"), False, True, 1e-8, 0),
                K(TA((6,), S), TA((6,), domain="nonneg"), True, True, 1e-8, 2),
            ],
        ),
        E(
            "margin_ranking_loss",
            margin_ranking_oracle,
            [
                K(TA((5,)), TA((5,)), Val([1.0, -1.0, 1.0, -1.0, 1.0])),
                K(TA((3, 4), T), TA((3, 4)), TA((3, 4)), 0.5, 0),
                K(TA((6,), S), TA((6,)), TA((6,)), 0.2, 2),
            ],
        ),
        E(
            "hinge_embedding_loss",
            hinge_oracle,
            [
                K(TA((4, 5)), Val(np.where(np.arange(20).reshape(4, 5) % 3 == 0, 1.0, -1.0))),
                K(TA((3, 4), T), Val(np.where(np.arange(12).reshape(3, 4) % 2 == 0, 1.0, -1.0)), 0.5, 0),
                K(TA((6,), S), Val([1.0, -1.0, 1.0, 1.0, -1.0, -1.0]), 2.0, 2),
            ],
        ),
        E(
            "cosine_embedding_loss",
            cosine_embedding_oracle,
            [
                K(TA((4, 5)), TA((4, 5)), Val([1.0, -1.0, 1.0, -1.0])),
                K(TA((3, 4), T), TA((3, 4)), Val([-1.0, -1.0, 1.0]), 0.2, 0),
                K(TA((5,), S), TA((5,)), Val(1.0), 0.0, 2),
            ],
            errors=[(ValueError, K(TA((4, 5)), TA((4, 5)), Val([1.0, -1.0])), "target of the wrong size")],
        ),
        E(
            "multi_margin_loss",
            multi_margin_oracle,
            [
                K(TA((4, 5)), Idx((4,), 5)),
                K(TA((3, 4), T), Idx((3,), 4), 2, 0.5, TA((4,), domain="pos"), 0),
                K(TA((5,), S), Val(2, dtype=I64), 1, 1.0, None, 2),
            ],
            errors=[(ValueError, K(TA((4, 5)), Idx((4,), 5), 3), "p = 3")],
        ),
        E(
            "multilabel_margin_loss",
            multilabel_margin_oracle,
            [
                K(TA((3, 4)), Val([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 1, 2, 0]], dtype=I64)),
                K(TA((2, 5), T), Val([[4, 2, 2, -1, 0], [1, -1, 0, 0, 0]], dtype=I64), 0),
                K(TA((4,), S), Val([1, 2, -1, 0], dtype=I64), 2),
            ],
        ),
        E(
            "triplet_margin_loss",
            triplet_oracle,
            [
                K(TA((4, 5)), TA((4, 5)), TA((4, 5))),
                K(TA((3, 4), T), TA((3, 4)), TA((3, 4)), 0.5, 1.0, 1e-6, True, 0),
                K(TA((5,), S), TA((5,)), TA((5,)), 2.0, 3.0, 1e-6, False, 2),
            ],
        ),
        E("nll_loss", nll_oracle, nll_cases, errors=nll_err),
        E("nll_loss_nd", nll_oracle, nll_cases + [K(TA((2, 3, 2, 2), T), Idx((2, 2, 2), 3), TA((3,), domain="pos"))]),
        E(
            "nll_loss2d",
            nll_oracle,
            [
                K(TA((2, 3, 2, 2)), Idx((2, 2, 2), 3)),
                K(TA((2, 4, 3, 2), T), Idx((2, 3, 2), 4), TA((4,), domain="pos"), 0),
                K(TA((1, 3, 2, 4), S), Val([[[0, -100, 2, 1], [1, 1, -100, 0]]], dtype=I64), None, 2),
            ],
        ),
        E(
            "cross_entropy_loss",
            cross_entropy_oracle,
            ce_cases,
            errors=[
                (ValueError, K(TA((4, 5)), Idx((4,), 5), None, 1, -100, 1.5), "label_smoothing above 1"),
                (ValueError, K(TA((4, 5)), TA((4, 4))), "probabilities of the wrong shape"),
            ],
        ),
    ]


# -- embeddings, one-hot, distances ------------------------------------------------------------------------


def embedding_oracle(w, idx, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return w[idx]


def renorm_oracle(w, idx, max_norm, p):
    out = w.copy()
    for r in np.unique(idx):
        norm = np.linalg.norm(w[r], ord=p)
        if norm > max_norm:
            out[r] = w[r] * (max_norm / (norm + 1e-7))
    return out


def _bag_oracle(w, idx, offsets, mode, psw, include_last, padding_idx):
    n = len(idx)
    bags = len(offsets) - 1 if include_last else len(offsets)
    ends = list(offsets[1:bags]) + [offsets[bags] if include_last else n]
    out = np.zeros((bags, w.shape[1]))
    bag_of = np.zeros(n, dtype=np.int64)
    size = np.zeros(bags, dtype=np.int64)
    max_idx = np.full((bags, w.shape[1]), -1, dtype=np.int64) if mode == 2 else np.zeros(bags, dtype=np.int64)
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    for i in range(n):  # the last bag starting at or before i
        bag_of[i] = max([b for b in range(bags) if offsets[b] <= i], default=0)
    for b in range(bags):
        members = [i for i in range(offsets[b], ends[b]) if idx[i] != pad]
        size[b] = len(members)
        if not members:
            continue
        rows = w[idx[members]]
        if mode == 0:
            weights = np.ones(len(members)) if psw is None else psw[members]
            out[b] = np.sum(rows * weights[:, None], axis=0)
        elif mode == 1:
            out[b] = rows.mean(axis=0)
        else:
            out[b] = rows.max(axis=0)
            max_idx[b] = idx[members][np.argmax(rows, axis=0)]
    return out, bag_of, size, max_idx


def embedding_bag_oracle(w, idx, offsets, scale=False, mode=0, sparse=False, psw=None, include_last=False):
    return _bag_oracle(w, idx, offsets, mode, psw, include_last, None)


def embedding_bag_pad_oracle(w, idx, offsets, scale, mode, sparse, psw, include_last, padding_idx):
    return _bag_oracle(w, idx, offsets, mode, psw, include_last, padding_idx)


def embedding_bag_internal_oracle(
    w, idx, offsets, scale=False, mode=0, sparse=False, psw=None, include_last=False, padding_idx=-1
):
    return _bag_oracle(w, idx, offsets, mode, psw, include_last, padding_idx)


def one_hot_oracle(x, num_classes=-1):
    n = int(x.max()) + 1 if num_classes == -1 else num_classes
    return (x[..., None] == np.arange(n)).astype(np.int64)


def cosine_similarity_oracle(x1, x2, dim=1, eps=1e-8):
    a, b = np.broadcast_arrays(x1, x2)
    na = np.maximum(np.linalg.norm(a, axis=dim, keepdims=True), eps)
    nb = np.maximum(np.linalg.norm(b, axis=dim, keepdims=True), eps)
    return np.sum((a / na) * (b / nb), axis=dim)


def pairwise_distance_oracle(x1, x2, p=2, eps=1e-6, keepdim=False):
    d = x1 - x2 + eps
    if d.ndim == 0:
        return np.abs(d)
    return np.linalg.norm(d, ord=p, axis=-1, keepdims=keepdim)


def pdist_oracle(x, p=2):
    n = x.shape[0]
    return np.array([np.linalg.norm(x[i] - x[j], ord=p) for i in range(n) for j in range(i + 1, n)])


def cdist_oracle(x1, x2, p=2, compute_mode=None):
    d = x1[..., :, None, :] - x2[..., None, :, :]
    return np.linalg.norm(d, ord=p, axis=-1)


_BAG_W = TA((6, 3))


def _embed_lines():
    i64 = ow.int64
    bag = [
        K(_BAG_W, Val([0, 2, 4, 1, 5], dtype=i64), Val([0, 2], dtype=i64)),
        K(_BAG_W, Val([0, 2, 4, 1, 5], dtype=i64), Val([0, 2, 2], dtype=i64), False, 1),
        K(TA((6, 3), T), Val([0, 2, 4, 1, 5, 3], dtype=i64), Val([0, 3, 3, 6], dtype=i64), False, 2, False, None, True),
        K(_BAG_W, Val([3, 2, 3, 1], dtype=i64), Val([0, 1], dtype=i64), False, 0, False, TA((4,))),
        K(TA((5, 2), S), Val([4, 4, 0], dtype=i64), Val([0], dtype=i64), False, 2),
    ]
    bag_pad = [
        K(_BAG_W, Val([0, 2, 4, 1, 5], dtype=i64), Val([0, 2], dtype=i64), False, 1, False, None, False, 2),
        K(_BAG_W, Val([2, 2, 4, 1, 5], dtype=i64), Val([0, 2], dtype=i64), False, 0, False, TA((5,)), False, 2),
        K(TA((6, 3), T), Val([0, 2, 4, 1], dtype=i64), Val([0, 1, 4], dtype=i64), False, 2, False, None, True, 0),
        K(_BAG_W, Val([0, 2, 4], dtype=i64), Val([0, 1], dtype=i64), False, 1, False, None, False, None),
    ]
    dist = [
        K(TA((4, 5)), TA((4, 5))),
        K(TA((3, 4), T), TA((1, 4)), 1.0),
        K(TA((2, 3, 4), S), TA((3, 4)), 3.0, 1e-6, True),
        K(TA((3, 4), B), TA((3, 4)), math.inf),
        K(TA((3, 4)), TA((3, 4)), 0.0),
    ]
    return [
        E(
            "embedding",
            embedding_oracle,
            [
                K(TA((6, 3)), Idx((4,), 6)),
                K(TA((6, 3), T), Idx((2, 3), 6)),
                K(TA((5, 4), S), Idx((), 5), 2),
                K(TA((5, 4)), Idx((2, 0), 5)),
                K(TA((5, 2)), Idx((3,), 5, dtype=ow.int32)),
            ],
            errors=[
                (IndexError, K(TA((6, 3)), Val([0, 6], dtype=I64)), "index out of range"),
                (TypeError, K(TA((6, 3)), TA((2,))), "float indices"),
            ],
        ),
        E(
            "embedding_renorm",
            renorm_oracle,
            [
                K(TA((6, 3)), Val([0, 2, 2, 5], dtype=I64), 1.0, 2.0),
                K(TA((6, 3), T), Val([1, 3], dtype=I64), 0.5, 1.0),
                K(TA((5, 4), S), Val([[0, 1], [4, 4]], dtype=I64), 2.0, 3.0),
            ],
        ),
        E("embedding_bag", embedding_bag_oracle, bag),
        E("embedding_bag.padding_idx", embedding_bag_pad_oracle, bag_pad),
        E("_embedding_bag", embedding_bag_internal_oracle, bag[:3] + bag_pad[:1]),
        E(
            "one_hot",
            one_hot_oracle,
            [K(Idx((4,), 5), 5), K(Idx((2, 3), 4), 6), K(Val(2, dtype=ow.int64), 3), K(Val([0, 3, 1], dtype=ow.int64))],
            (None,),
            data_dependent=True,
            errors=[(ValueError, K(Val([0, 5], dtype=ow.int64), 3), "class value out of range")],
        ),
        E(
            "cosine_similarity",
            cosine_similarity_oracle,
            [
                K(TA((4, 5)), TA((4, 5))),
                K(TA((3, 4), T), TA((1, 4)), 1),
                K(TA((2, 3, 4), S), TA((3, 4)), -1),
                K(TA((3, 4), B), TA((3, 4)), 0, 1e-3),
            ],
        ),
        E("pairwise_distance", pairwise_distance_oracle, dist),
        E(
            "pdist",
            pdist_oracle,
            [K(TA((4, 3))), K(TA((5, 2), T), 1.0), K(TA((3, 4), S), math.inf), K(TA((1, 3))), K(TA((4, 3)), 0.0)],
            errors=[(ValueError, K(TA((4,))), "1-D input"), (ValueError, K(TA((4, 3)), -1.0), "negative p")],
        ),
        E("_pdist_forward", pdist_oracle, [K(TA((4, 3))), K(TA((5, 2), T), 3.0)]),
        E(
            "cdist",
            cdist_oracle,
            [
                K(TA((4, 3)), TA((5, 3))),
                K(TA((2, 4, 3), T), TA((2, 3, 3)), 1.0),
                K(TA((3, 2), S), TA((4, 2)), math.inf),
                K(TA((2, 3, 4)), TA((5, 4)), 0.5, 2),
                K(TA((0, 3)), TA((2, 3))),
            ],
            errors=[(ValueError, K(TA((4, 3)), TA((5, 2))), "column mismatch")],
        ),
        E("_euclidean_dist", cdist_oracle, [K(TA((4, 3)), TA((5, 3))), K(TA((3, 2), T), TA((2, 2), S))]),
        E("_embedding_bag_forward_only", embedding_bag_internal_oracle, bag[:3] + bag_pad[:1]),
        E(
            "_cdist_forward",
            cdist_oracle,
            [K(TA((4, 3)), TA((5, 3)), 2.0, None), K(TA((2, 4, 3), T), TA((2, 3, 3)), 1.0, None)],
        ),
    ]


# -- attention -------------------------------------------------------------------------------------------


def _softmax_rows(s):
    m = np.max(s, axis=-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0, m))
    total = np.sum(e, axis=-1, keepdims=True)
    return np.where(dead, 0.0, e / np.where(dead, 1, total))


def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if enable_gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    length, source = s.shape[-2:]
    if is_causal:
        s = np.where(np.tril(np.ones((length, source), bool)), s, -np.inf)
    elif attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == bool else s + attn_mask
    w = _softmax_rows(s)
    return w @ v, w


def sdpa_oracle(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    return _sdpa(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)[0]


def sdpa_math_oracle(
    q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None, enable_gqa=False
):
    out, w = _sdpa(q, k, v, attn_mask, 0.0, is_causal, scale, enable_gqa)
    if dropout_mask is not None:
        w = np.where(dropout_mask, w / (1 - dropout_p), 0.0)
        out = w @ v
    return out, w


def safe_softmax_oracle(x, dim, dtype=None):
    return np.moveaxis(_softmax_rows(np.moveaxis(x, dim, -1)), -1, dim) if x.ndim else _softmax_rows(x[None])[0]


def _attention_lines():
    bmask = np.tril(np.ones((3, 5), bool), 1)
    bmask[2] = False  # a fully masked row
    cases = [
        K(TA((2, 2, 3, 4)), TA((2, 2, 5, 4)), TA((2, 2, 5, 4))),
        K(TA((2, 3, 4), T), TA((2, 3, 4)), TA((2, 3, 6)), is_causal=True),
        K(TA((2, 2, 3, 4)), TA((2, 2, 5, 4), S), TA((2, 2, 5, 3)), Val(bmask, dtype=ow.bool), scale=0.3),
        K(TA((1, 2, 3, 4)), TA((1, 2, 5, 4)), TA((1, 2, 5, 4), B), TA((3, 5))),
        K(TA((1, 4, 3, 4)), TA((1, 2, 5, 4)), TA((1, 2, 5, 4)), enable_gqa=True),
        K(TA((3, 4)), TA((3, 4)), TA((3, 2)), None, 0.0, True),
    ]
    errors = [
        (ValueError, K(TA((2, 3, 4)), TA((2, 3, 5)), TA((2, 3, 4))), "feature size mismatch"),
        (ValueError, K(TA((2, 3, 4)), TA((2, 3, 4)), TA((2, 3, 4)), TA((3, 3)), 0.0, True), "mask with is_causal"),
        (ValueError, K(TA((1, 3, 3, 4)), TA((1, 2, 5, 4)), TA((1, 2, 5, 4)), enable_gqa=True), "heads not a multiple"),
    ]
    dmask = Val(np.arange(30).reshape(2, 3, 5) % 3 != 0, dtype=ow.bool)
    dead = np.array([[0.5, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]])
    return [
        E(
            "_safe_softmax",
            safe_softmax_oracle,
            [K(TA((3, 4)), 1), K(TA((3, 4), T), 0), K(Val(dead), 1), K(Val(dead), 0), K(TA((2, 3, 2), S), -1)],
        ),
        E("scaled_dot_product_attention", sdpa_oracle, cases, tol=LOOSE, errors=errors),
        E(
            "_scaled_dot_product_attention_math",
            sdpa_math_oracle,
            cases[:4] + [K(TA((2, 3, 4)), TA((2, 5, 4)), TA((2, 5, 4)), None, 0.25, False, dmask)],
            tol=LOOSE,
        ),
    ]


register(*_norm_lines(), *_act_lines(), *_loss_lines(), *_embed_lines(), *_attention_lines())
