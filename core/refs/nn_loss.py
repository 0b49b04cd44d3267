"""Loss functions as canonical ops (ATen's schemas: ``int reduction``, 0 none / 1 mean / 2 sum).

Each loss is computed in the computation dtype (float32 for float16/bfloat16) and
rounded once to the result dtype. Elementwise losses broadcast ``self`` and
``target`` like PyTorch's ATen ops (``torch.nn.functional`` warns about that; see
``opweave.nn.functional``). Class-index targets are int64; an index outside
``[0, C)`` that is not ``ignore_index`` raises ValueError naming the op.
The string reductions of ``torch.nn.functional`` (``reduction="mean"``) live in
``opweave.nn.functional``.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._nn_utils import any_true, c, check_float, keep, like, opmath, reduce_loss, reduction_enum
from ._tensor_utils import expand, reshape, squeeze, unsqueeze
from ._utils import broadcast_shapes, common_device, define_with_variants, to_device, to_dtype

# -- helpers ------------------------------------------------------------------------------------


def _pair(op, self, target, names=("self", "target"), int_to_float=False):
    """``self`` and ``target`` promoted, broadcast and in the computation dtype; plus the result dtype.

    ``int_to_float``: integral inputs compute in the default float dtype (PyTorch's losses written as
    elementwise math, such as ``poisson_nll_loss``), instead of raising TypeError.
    """
    result = _dtype.result_type(self, target)
    if int_to_float and not (result.is_floating_point or result.is_complex):
        result = _dtype.get_default_dtype()
    if not result.is_floating_point:
        raise TypeError(f"{op}: expected floating point '{names[0]}' and '{names[1]}', but got {result.name}")
    compute = _dtype.opmath_dtype(result)
    shape = broadcast_shapes(op, self.shape, target.shape)
    device = common_device([self, target])
    x = expand(to_device(to_dtype(self, compute), device), shape)
    y = expand(to_device(to_dtype(target, compute), device), shape)
    return x, y, result


def _finish(loss, reduction, dtype):
    return to_dtype(reduce_loss(loss, reduction), dtype)


def _relu(x):
    return prims.maximum(x, c(0.0, x))


# -- elementwise regression losses -------------------------------------------------------------


def mse_loss(self, target, reduction=1):
    """``(self - target)²``, reduced."""
    op = "mse_loss"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, self, target)
    d = prims.sub(x, y)
    return _finish(prims.mul(d, d), r, dt)


def l1_loss(self, target, reduction=1):
    """``|self - target|``, reduced."""
    op = "l1_loss"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, self, target)
    return _finish(prims.abs(prims.sub(x, y)), r, dt)


def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta == 0``: L1)."""
    op = "smooth_l1_loss"
    r = reduction_enum(op, reduction)
    if beta < 0:
        raise ValueError(f"{op}: argument 'beta' must be non-negative, got {beta}")
    x, y, dt = _pair(op, self, target)
    d = prims.abs(prims.sub(x, y))
    if beta == 0:
        return _finish(d, r, dt)
    quad = prims.div(prims.mul(prims.mul(d, d), c(0.5, d)), c(beta, d))
    return _finish(prims.where(prims.lt(d, c(beta, d)), quad, prims.sub(d, c(0.5 * beta, d))), r, dt)


def huber_loss(self, target, reduction=1, delta=1.0):
    """``0.5 d²`` where ``|d| <= delta``, else ``delta (|d| - 0.5 delta)``."""
    op = "huber_loss"
    r = reduction_enum(op, reduction)
    if delta <= 0:
        raise ValueError(f"{op}: argument 'delta' must be positive, got {delta}")
    x, y, dt = _pair(op, self, target)
    d = prims.abs(prims.sub(x, y))
    quad = prims.mul(prims.mul(d, d), c(0.5, d))
    lin = prims.mul(prims.sub(d, c(0.5 * delta, d)), c(delta, d))
    return _finish(prims.where(prims.le(d, c(delta, d)), quad, lin), r, dt)


def soft_margin_loss(self, target, reduction=1):
    """``log(1 + exp(-target * self))``, reduced."""
    op = "soft_margin_loss"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, self, target)
    return _finish(prims.log1p(prims.exp(prims.neg(prims.mul(x, y)))), r, dt)


# -- probabilistic losses -------------------------------------------------------------------------


def binary_cross_entropy(self, target, weight=None, reduction=1):
    """``-(target log(self) + (1 - target) log(1 - self))`` with each log clamped at -100; ``self`` in [0, 1]."""
    op = "binary_cross_entropy"
    r = reduction_enum(op, reduction)
    if self.shape != target.shape:
        raise ValueError(
            f"{op}: 'target' shape {list(target.shape)} must be the same as 'self' shape {list(self.shape)}"
        )
    x, y, dt = _pair(op, self, target)
    if any_true(prims.logical_or(prims.lt(x, c(0.0, x)), prims.gt(x, c(1.0, x)))):
        raise ValueError(f"{op}: all elements of 'self' should be between 0 and 1")
    floor = c(-100.0, x)
    log_x = prims.maximum(prims.log(x), floor)
    log_1mx = prims.maximum(prims.log1p(prims.neg(x)), floor)
    loss = prims.neg(prims.add(prims.mul(y, log_x), prims.mul(prims.sub(c(1.0, y), y), log_1mx)))
    if weight is not None:
        loss = prims.mul(loss, expand(to_dtype(like(weight, self), loss.dtype), loss.shape))
    return _finish(loss, r, dt)


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    """BCE of ``sigmoid(self)`` computed stably; ``pos_weight`` scales the positive term (broadcast on classes)."""
    op = "binary_cross_entropy_with_logits"
    r = reduction_enum(op, reduction)
    if self.shape != target.shape:
        raise ValueError(
            f"{op}: 'target' shape {list(target.shape)} must be the same as 'self' shape {list(self.shape)}"
        )
    x, y, dt = _pair(op, self, target)
    softplus_neg = prims.add(prims.log1p(prims.exp(prims.neg(prims.abs(x)))), _relu(prims.neg(x)))
    one_minus_y = prims.sub(c(1.0, y), y)
    if pos_weight is not None:
        pw = expand(to_dtype(like(pos_weight, self), x.dtype), broadcast_shapes(op, pos_weight.shape, x.shape))
        scale = prims.add(c(1.0, x), prims.mul(prims.sub(pw, c(1.0, pw)), y))
        loss = prims.add(prims.mul(one_minus_y, x), prims.mul(scale, softplus_neg))
    else:
        loss = prims.add(prims.mul(one_minus_y, x), softplus_neg)
    if weight is not None:
        loss = prims.mul(loss, expand(to_dtype(like(weight, self), loss.dtype), loss.shape))
    return _finish(loss, r, dt)


def kl_div(self, target, reduction=1, log_target=False):
    """``target (log target - self)`` (``log_target``: ``exp(target) (target - self)``); 0 where target is 0."""
    op = "kl_div"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, self, target)
    if log_target:
        loss = prims.mul(prims.exp(y), prims.sub(y, x))
    else:
        loss = prims.sub(prims.xlogy(y, y), prims.mul(y, x))
    return _finish(loss, r, dt)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``exp(input) - target input`` (``log_input``) or ``input - target log(input + eps)``; ``full`` adds Stirling."""
    op = "poisson_nll_loss"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, input, target, ("input", "target"), int_to_float=True)
    if log_input:
        loss = prims.sub(prims.exp(x), prims.mul(y, x))
    else:
        loss = prims.sub(x, prims.mul(y, prims.log(prims.add(x, c(eps, x)))))
    if full:
        stirling = prims.add(
            prims.sub(prims.xlogy(y, y), y), prims.mul(c(0.5, y), prims.log(prims.mul(y, c(2 * math.pi, y))))
        )
        loss = prims.add(loss, prims.where(prims.gt(y, c(1.0, y)), stirling, c(0.0, y)))
    return _finish(loss, r, dt)


# -- margin losses ---------------------------------------------------------------------------------


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``max(0, -target (input1 - input2) + margin)``, reduced."""
    op = "margin_ranking_loss"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, ops.sub.Tensor(input1, input2), target, ("input1", "target"), int_to_float=True)
    return _finish(_relu(prims.add(prims.neg(prims.mul(y, x)), c(margin, x))), r, dt)


def hinge_embedding_loss(self, target, margin=1.0, reduction=1):
    """``self`` where target is 1, ``max(0, margin - self)`` where it is -1 (both terms where neither), reduced."""
    op = "hinge_embedding_loss"
    r = reduction_enum(op, reduction)
    x, y, dt = _pair(op, self, target)
    zero = c(0.0, x)
    margin_term = prims.where(prims.ne(y, c(1.0, y)), _relu(prims.sub(c(margin, x), x)), zero)
    self_term = prims.where(prims.ne(y, c(-1.0, y)), x, zero)
    return _finish(prims.add(margin_term, self_term), r, dt)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``1 - cos(input1, input2)`` where target is 1, ``max(0, cos - margin)`` where it is -1, reduced."""
    op = "cosine_embedding_loss"
    r = reduction_enum(op, reduction)
    if input1.shape != input2.shape or input1.ndim not in (1, 2):
        raise ValueError(
            f"{op}: expected 'input1' and 'input2' of one 1-D or 2-D shape, got {list(input1.shape)} "
            f"and {list(input2.shape)}"
        )
    batch = () if input1.ndim == 1 else input1.shape[:1]
    if tuple(target.shape) != tuple(batch):
        raise ValueError(f"{op}: expected 'target' of shape {list(batch)}, but got {list(target.shape)}")
    a, b, dt = _pair(op, input1, input2, ("input1", "input2"), int_to_float=True)
    last = [a.ndim - 1]
    eps = 1e-12
    dot = prims.sum(prims.mul(a, b), last)
    na = prims.add(prims.sum(prims.mul(a, a), last), c(eps, dot))
    nb = prims.add(prims.sum(prims.mul(b, b), last), c(eps, dot))
    cos = prims.div(dot, prims.sqrt(prims.mul(na, nb)))
    y = to_dtype(like(target, cos), cos.dtype)
    zero = c(0.0, cos)
    pos = prims.where(prims.eq(y, c(1.0, y)), prims.sub(c(1.0, cos), cos), zero)
    neg = prims.where(prims.eq(y, c(-1.0, y)), _relu(prims.sub(cos, c(margin, cos))), zero)
    return _finish(prims.add(pos, neg), r, dt)


def _class_input(op, self, target, what="self"):
    """``(x as (N, C) in opmath, target as (N,), squeeze_back)`` for 1-D/2-D class losses."""
    check_float(op, self, what)
    if self.ndim not in (1, 2) or self.numel() == 0 and self.ndim == 1:
        raise ValueError(f"{op}: expected a non-empty 1-D or 2-D '{what}', but got shape {list(self.shape)}")
    x = opmath(op, self, what)
    if self.ndim == 1:
        return unsqueeze(x, 0), True
    return x, False


def _check_long(op, target, name="target"):
    if target.dtype is not _dtype.int64:
        raise TypeError(f"{op}: expected int64 class indices for argument '{name}', but got {target.dtype.name}")


def multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=1):
    """``sum over i != y of max(0, margin - x[y] + x[i])^p * weight[y] / C`` per sample, reduced."""
    op = "multi_margin_loss"
    r = reduction_enum(op, reduction)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got {p}")
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"{op}: argument 'weight' must be one-dimensional, got shape {list(weight.shape)}")
    _check_long(op, target)
    # a 0-dim input is one sample of one class (PyTorch)
    x, _ = _class_input(op, reshape(self, (1,)) if self.ndim == 0 else self, target)
    n, classes = x.shape
    t = unsqueeze(target, 0) if target.ndim == 0 else target
    if tuple(t.shape) != (n,):
        raise ValueError(f"{op}: expected 'target' of shape [{n}], but got {list(target.shape)}")
    if weight is not None and weight.shape[0] != classes:
        raise ValueError(f"{op}: inconsistent 'weight' size, expected {classes} but got {list(weight.shape)}")
    _check_index_range(op, t, classes)
    idx = unsqueeze(t, 1)
    picked = prims.gather(x, 1, idx)  # (N, 1)
    z = _relu(prims.add(prims.sub(c(margin, x), expand(picked, x.shape)), x))
    if p == 2:
        z = prims.mul(z, z)
    is_target = prims.eq(expand(idx, x.shape), _class_iota(x))
    z = prims.where(is_target, c(0.0, z), z)
    if weight is not None:
        w = prims.take(to_dtype(like(weight, x), x.dtype), t)
        z = prims.mul(z, expand(unsqueeze(w, 1), z.shape))
    loss = prims.div(prims.sum(z, [1]), c(classes, prims.sum(z, [1])))
    if target.ndim == 0:  # unreduced: one loss per sample, 0-dim for a 0-dim target (PyTorch)
        loss = reshape(loss, ())
    return _finish(loss, r, self.dtype)


def _class_iota(x):
    """The class index of every element of an (N, C) tensor."""
    iota = prims.iota(x.shape[1], start=0, step=1, dtype=_dtype.int64, device=x.device)
    return prims.broadcast_in_dim(iota, list(x.shape), [1])


def _check_index_range(op, index, classes, ignore=None):
    bad = prims.logical_or(prims.lt(index, c(0, index)), prims.ge(index, c(classes, index)))
    if ignore is not None:
        bad = prims.logical_and(bad, prims.logical_not(ignore))
    if any_true(bad):
        raise ValueError(f"{op}: 'target' holds a class index out of bounds for {classes} classes")


def multilabel_margin_loss(self, target, reduction=1):
    """Hinge loss between each target class and each non-target class; targets end at the first -1."""
    op = "multilabel_margin_loss"
    r = reduction_enum(op, reduction)
    _check_long(op, target)
    if self.ndim == 0 and target.ndim == 0:  # PyTorch treats a 0-dim input as one sample of one class
        out = multilabel_margin_loss(reshape(self, (1,)), reshape(target, (1,)), reduction)
        return reshape(out, ())
    if target.shape != self.shape:
        raise ValueError(f"{op}: 'target' shape {list(target.shape)} must match 'self' shape {list(self.shape)}")
    x, squeezed = _class_input(op, self, target)
    t = unsqueeze(target, 0) if squeezed else target
    n, classes = x.shape
    valid = prims.cumprod(prims.convert_element_type(prims.ne(t, c(-1, t)), _dtype.int64), 1)
    valid = prims.ne(valid, c(0, valid))
    _check_index_range(op, t, classes, prims.logical_not(valid))
    # is_target[n, j]: class j is listed among the valid targets of sample n
    hits = prims.eq(
        prims.broadcast_in_dim(t, [n, classes, classes], [0, 1]),
        prims.broadcast_in_dim(
            prims.iota(classes, start=0, step=1, dtype=_dtype.int64, device=x.device), [n, classes, classes], [2]
        ),
    )
    hits = prims.logical_and(hits, prims.broadcast_in_dim(valid, [n, classes, classes], [0, 1]))
    is_target = prims.any(hits, [1])
    # [n, s (target slot), i (other class)]: every valid slot counts, so a repeated target counts twice (as PyTorch)
    shape3 = [n, classes, classes]
    xt = prims.gather(x, 1, prims.where(valid, t, c(0, t)))
    xj = prims.broadcast_in_dim(xt, shape3, [0, 1])
    xi = prims.broadcast_in_dim(x, shape3, [0, 2])
    hinge = _relu(prims.add(prims.sub(c(1.0, xj), xj), xi))
    pair = prims.logical_and(
        prims.broadcast_in_dim(valid, shape3, [0, 1]),
        prims.logical_not(prims.broadcast_in_dim(is_target, shape3, [0, 2])),
    )
    total = prims.sum(prims.where(pair, hinge, c(0.0, hinge)), [1, 2])
    loss = prims.div(total, c(classes, total))
    if squeezed:
        loss = squeeze(loss, 0)
    return _finish(loss, r, self.dtype)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=1):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d = pairwise_distance(p, eps)``."""
    op = "triplet_margin_loss"
    r = reduction_enum(op, reduction)
    dims = {anchor.ndim, positive.ndim, negative.ndim}
    if len(dims) != 1:
        raise ValueError(
            f"{op}: 'anchor', 'positive' and 'negative' must have one number of dims, got "
            f"{anchor.ndim}, {positive.ndim} and {negative.ndim}"
        )
    d_pos = ops.pairwise_distance(anchor, positive, p, eps)
    d_neg = ops.pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, ops.pairwise_distance(positive, negative, p, eps))
    x, y, dt = _pair(op, d_pos, d_neg, ("anchor", "negative"))
    return _finish(_relu(prims.add(prims.sub(x, y), c(margin, x))), r, dt)


# -- negative log likelihood and cross entropy ----------------------------------------------------------


def _class_layout(op, self, target):
    """Check an (N, C, d...) or (C,) input against its class-index target; returns the class dim."""
    check_float(op, self)
    _check_long(op, target)
    if self.ndim == 0:
        raise ValueError(f"{op}: expected 'self' with at least 1 dim, but got a 0-dim tensor")
    cdim = 0 if self.ndim == 1 else 1
    expected = tuple(self.shape[:cdim]) + tuple(self.shape[cdim + 1 :])
    if tuple(target.shape) != expected:
        raise ValueError(
            f"{op}: expected 'target' of shape {list(expected)} for 'self' of shape {list(self.shape)}, "
            f"but got {list(target.shape)}"
        )
    return cdim


def _check_weight(op, weight, classes):
    if weight is None:
        return
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise ValueError(f"{op}: expected 'weight' of shape [{classes}], but got {list(weight.shape)}")
    check_float(op, weight, "weight")


def _nll(op, logp, target, weight, reduction, ignore_index, cdim):
    """Per-element ``-weight[t] logp[t]`` (0 where ignored), reduced; ``logp`` in the computation dtype."""
    classes = logp.shape[cdim]
    _check_weight(op, weight, classes)
    ignore = prims.eq(target, c(ignore_index, target))
    _check_index_range(op, target, classes, ignore)
    safe = prims.where(ignore, c(0, target), target)
    picked = squeeze(prims.gather(logp, cdim, unsqueeze(safe, cdim)), cdim)
    if weight is not None:
        w = prims.take(to_dtype(like(weight, logp), logp.dtype), safe)
    else:
        w = c(1.0, picked)
    w = prims.where(ignore, c(0.0, w), w)
    loss = prims.where(ignore, c(0.0, picked), prims.neg(prims.mul(picked, w)))  # 0 even where the input is nan
    if reduction == 0:
        return loss
    dims = list(range(loss.ndim))
    total = prims.sum(loss, dims)
    if reduction == 2:
        return total
    return prims.div(total, prims.sum(w, dims))


def _nll_entry(op, self, target, weight, reduction, ignore_index, ndims=None):
    r = reduction_enum(op, reduction)
    if ndims is not None and self.ndim not in ndims:
        raise ValueError(f"{op}: expected 'self' with {' or '.join(map(str, ndims))} dims, but got {self.ndim}")
    cdim = _class_layout(op, self, target)
    return to_dtype(_nll(op, opmath(op, self), target, weight, r, ignore_index, cdim), self.dtype)


def nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
    """``-weight[t] * self[n, t]`` for (N, C) or (C,) log-probabilities; mean divides by the summed weights."""
    return _nll_entry("nll_loss", self, target, weight, reduction, ignore_index, (1, 2))


def nll_loss2d(self, target, weight=None, reduction=1, ignore_index=-100):
    """``nll_loss`` for (N, C, H, W) log-probabilities and (N, H, W) targets."""
    return _nll_entry("nll_loss2d", self, target, weight, reduction, ignore_index, (4,))


def nll_loss_nd(self, target, weight=None, reduction=1, ignore_index=-100):
    """``nll_loss`` for any (N, C, d1, ...) or (C,) input."""
    return _nll_entry("nll_loss_nd", self, target, weight, reduction, ignore_index)


def cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    """``nll_loss(log_softmax(self, class dim))`` for class indices, or ``-sum(target * log_softmax)`` for
    class probabilities (a floating ``target`` shaped like ``self``); ``label_smoothing`` mixes in the uniform
    distribution as PyTorch does."""
    op = "cross_entropy_loss"
    r = reduction_enum(op, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: argument 'label_smoothing' must be between 0.0 and 1.0, got {label_smoothing}")
    check_float(op, self)
    if self.ndim == 0:
        raise ValueError(f"{op}: expected 'self' with at least 1 dim, but got a 0-dim tensor")
    cdim = 0 if self.ndim == 1 else 1
    classes = self.shape[cdim]
    x = opmath(op, self)
    logp = _log_softmax(x, cdim)
    if target.dtype.is_floating_point:
        if target.shape != self.shape:
            raise ValueError(
                f"{op}: class-probability 'target' must have the shape of 'self' {list(self.shape)}, "
                f"got {list(target.shape)}"
            )
        _check_weight(op, weight, classes)
        y = to_dtype(like(target, x), x.dtype)
        if label_smoothing > 0:
            y = prims.add(prims.mul(y, c(1.0 - label_smoothing, y)), c(label_smoothing / classes, y))
        term = prims.mul(logp, y)
        if weight is not None:
            term = prims.mul(term, prims.broadcast_in_dim(to_dtype(like(weight, x), x.dtype), list(x.shape), [cdim]))
        loss = prims.neg(prims.sum(term, [cdim]))
        if r == 1:
            total = prims.sum(loss, list(range(loss.ndim)))
            loss = prims.div(total, c(self.numel() // max(classes, 1) if classes else 0, total))
        elif r == 2:
            loss = prims.sum(loss, list(range(loss.ndim)))
        return to_dtype(loss, self.dtype)
    _class_layout(op, self, target)
    nll = _nll(op, logp, target, weight, r, ignore_index, cdim)
    if label_smoothing <= 0:
        return to_dtype(nll, self.dtype)
    ignore = prims.eq(target, c(ignore_index, target))
    if weight is not None:
        w = prims.broadcast_in_dim(to_dtype(like(weight, x), x.dtype), list(x.shape), [cdim])
        smooth = prims.neg(prims.sum(prims.mul(logp, w), [cdim]))
    else:
        smooth = prims.neg(prims.sum(logp, [cdim]))
    smooth = prims.where(ignore, c(0.0, smooth), smooth)
    dims = list(range(smooth.ndim))
    if r == 1:
        if weight is not None:
            safe = prims.where(ignore, c(0, target), target)
            wt = prims.take(to_dtype(like(weight, x), x.dtype), safe)
            denom = prims.sum(prims.where(ignore, c(0.0, wt), wt), dims)
        else:
            keep_ = prims.convert_element_type(prims.logical_not(ignore), x.dtype)
            denom = prims.sum(keep_, dims)
        smooth = prims.div(prims.sum(smooth, dims), denom)
    elif r == 2:
        smooth = prims.sum(smooth, dims)
    out = prims.add(
        prims.mul(nll, c(1.0 - label_smoothing, nll)), prims.mul(smooth, c(label_smoothing / classes, smooth))
    )
    return to_dtype(out, self.dtype)


def _log_softmax(x, dim):
    """Log-softmax of ``x`` (computation dtype) along ``dim``."""
    if x.numel() == 0:
        return prims.clone(x)
    peak = prims.amax(x, [dim])
    shifted = prims.sub(x, keep(peak, [dim], x))
    total = prims.sum(prims.exp(shifted), [dim])
    return prims.sub(shifted, keep(prims.log(total), [dim], x))


# -- definitions -----------------------------------------------------------------------------------

_R = "int reduction=Mean"
_NLL = "Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100"

# (schema, decomposition, out variant?)
DEFINITIONS = [
    (f"mse_loss(Tensor self, Tensor target, {_R}) -> Tensor", mse_loss, True),
    (f"l1_loss(Tensor self, Tensor target, {_R}) -> Tensor", l1_loss, False),
    (f"smooth_l1_loss(Tensor self, Tensor target, {_R}, float beta=1.0) -> Tensor", smooth_l1_loss, True),
    (f"huber_loss(Tensor self, Tensor target, {_R}, float delta=1.0) -> Tensor", huber_loss, True),
    (f"soft_margin_loss(Tensor self, Tensor target, {_R}) -> Tensor", soft_margin_loss, True),
    (
        f"binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, {_R}) -> Tensor",
        binary_cross_entropy,
        True,
    ),
    (
        "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
        f"Tensor? pos_weight=None, {_R}) -> Tensor",
        binary_cross_entropy_with_logits,
        False,
    ),
    (f"kl_div(Tensor self, Tensor target, {_R}, *, bool log_target=False) -> Tensor", kl_div, False),
    (
        "poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor",
        poisson_nll_loss,
        False,
    ),
    (
        f"margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, {_R}) -> Tensor",
        margin_ranking_loss,
        False,
    ),
    (
        f"hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, {_R}) -> Tensor",
        hinge_embedding_loss,
        False,
    ),
    (
        f"cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, {_R}) -> Tensor",
        cosine_embedding_loss,
        False,
    ),
    (
        f"multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, {_R}) "
        "-> Tensor",
        multi_margin_loss,
        True,
    ),
    (f"multilabel_margin_loss(Tensor self, Tensor target, {_R}) -> Tensor", multilabel_margin_loss, True),
    (
        "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, "
        f"float eps=1e-06, bool swap=False, {_R}) -> Tensor",
        triplet_margin_loss,
        False,
    ),
    (f"nll_loss({_NLL}) -> Tensor", nll_loss, True),
    (f"nll_loss2d({_NLL}) -> Tensor", nll_loss2d, True),
    (f"nll_loss_nd({_NLL}) -> Tensor", nll_loss_nd, False),
    (
        "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
        "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
        cross_entropy_loss,
        False,
    ),
]


def _define():
    for schema, fn, out in DEFINITIONS:
        define_with_variants(schema, fn, inplace=False, out=out)


_define()
