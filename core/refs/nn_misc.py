"""Activations with parameters or noise, feature dropout, embeddings, one-hot and distances.

``glu``, ``prelu``/``_prelu_kernel``, ``rrelu``/``rrelu_with_noise`` (random slopes when
training), ``feature_dropout``/``feature_alpha_dropout`` (one draw per (sample, channel)),
``embedding``, ``embedding_renorm`` (``embedding_renorm_`` rescales rows in place),
``embedding_bag`` (sum / mean / max bags given by ``offsets``), ``one_hot``,
``cosine_similarity``, ``pairwise_distance``, ``pdist`` and ``cdist``.

``embedding_bag`` returns ``(output, offset2bag, bag_size, max_indices)``: ``offset2bag[i]``
is the bag of ``indices[i]`` (the last bag starting at or before ``i``), ``bag_size[b]`` the
number of indices of bag ``b`` that are not ``padding_idx``, ``max_indices[b, d]`` the row
chosen by max mode (-1 for empty bags; other modes: zeros of shape ``[bags]``). PyTorch's CPU
kernel leaves some of these buffers empty or partly filled depending on its fast paths; they
feed its backward only.
``cdist`` computes every distance directly (``compute_mode`` is accepted and checked, but the
matrix-product shortcut for p = 2 is not taken: results are the exact differences').
"""

from __future__ import annotations

import math

from .. import _dtype
from .._errors import IndexOutOfBoundsError
from .._ops import canonical as ops
from .._ops import prims
from ._nn_utils import any_true, c, check_float, keep, opmath
from ._tensor_utils import expand, flatten, reshape, squeeze, unsqueeze
from ._utils import broadcast_shapes, common_device, define_with_variants, to_device, to_dtype, wrap_dim
from .random import _draw, _uniform_values

# -- activations ------------------------------------------------------------------------------


def glu(self, dim=-1):
    """``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of ``self`` along ``dim``."""
    op = "glu"
    if self.ndim == 0:
        raise ValueError(f"{op}: glu does not support 0-dim tensors ('self')")
    d = wrap_dim(op, dim, self.ndim)
    size = self.shape[d]
    if size % 2:
        raise ValueError(f"{op}: halving dimension must be even, but dimension {d} of 'self' is size {size}")
    x = opmath(op, self)
    a = prims.slice_in_dim(x, 0, size // 2, 1, d)
    b = prims.slice_in_dim(x, size // 2, size, 1, d)
    return to_dtype(prims.mul(a, prims.sigmoid(b)), self.dtype)


def _prelu(op, self, weight):
    x = opmath(op, self)
    check_float(op, weight, "weight")
    shape = broadcast_shapes(op, self.shape, weight.shape)
    x = expand(x, shape)
    w = expand(to_device(to_dtype(weight, x.dtype), x.device), shape)
    return to_dtype(prims.where(prims.gt(x, c(0.0, x)), x, prims.mul(w, x)), self.dtype)


def prelu_kernel(self, weight):
    """``self`` where positive, else ``weight * self`` (``self`` and ``weight`` broadcast together)."""
    return _prelu("_prelu_kernel", self, weight)


def prelu(self, weight):
    """``self`` where positive, else ``weight[c] * self`` with one weight per channel (dim 1) or one in all."""
    op = "prelu"
    n = weight.numel()
    if weight.ndim > 1:
        raise ValueError(f"{op}: 'weight' must be 0-D or 1-D, but got {weight.ndim} dims")
    if n != 1:
        if self.ndim == 0:
            raise ValueError(f"{op}: a 0-dim 'self' needs a single 'weight', but got {n}")
        channels = self.shape[1] if self.ndim > 1 else 1
        if channels != n:
            raise ValueError(f"{op}: 'weight' has {n} parameters, but 'self' has {channels} channels")
        shape = [1] * self.ndim
        shape[1] = n
        weight = reshape(weight, shape)
    elif self.ndim:
        weight = reshape(weight, [1] * self.ndim)
    else:
        weight = reshape(weight, [])
    return _prelu(op, self, weight)


def _check_rrelu(op, self, lower, upper):
    check_float(op, self)
    if lower > upper:
        raise ValueError(f"{op}: 'lower' bound {lower} must be less than or equal to 'upper' bound {upper}")


def _rrelu(op, self, lower, upper, training, generator):
    """``(output, noise)``: negatives times U(lower, upper) slopes when training, else the mean slope."""
    _check_rrelu(op, self, lower, upper)
    x = opmath(op, self)
    positive = prims.ge(x, c(0.0, x))
    if training:
        slopes = _uniform_values(op, list(x.shape), float(lower), float(upper), x.dtype, x.device, generator)
        noise = prims.where(positive, c(1.0, x), slopes)
    else:
        noise = prims.where(positive, c(1.0, x), c((float(lower) + float(upper)) / 2, x))
    return to_dtype(prims.mul(x, noise), self.dtype), noise


def rrelu(self, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """Randomized leaky ReLU: negative values times a slope drawn from U(lower, upper) when training."""
    return _rrelu("rrelu", self, lower, upper, training, generator)[0]


def rrelu_with_noise(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """``rrelu`` that also writes the slopes it used into ``noise`` (1 for non-negative inputs) when training."""
    op = "rrelu_with_noise"
    if noise.shape != self.shape:
        raise ValueError(f"{op}: 'noise' shape {list(noise.shape)} must match 'self' shape {list(self.shape)}")
    out, slopes = _rrelu(op, self, lower, upper, training, generator)
    if training:
        prims.copy_to(noise, to_dtype(slopes, noise.dtype))
    return out


# -- feature dropout ------------------------------------------------------------------------------


def _feature_mask(op, input, p, generator=None):
    """1/0 keep mask of shape (N, C, 1, ...) in the computation dtype (one draw per sample and channel)."""
    compute = _dtype.opmath_dtype(input.dtype)
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    probs = prims.full(
        shape, 1.0 - p, dtype=_dtype.float64 if compute is _dtype.float64 else _dtype.float32, device=input.device
    )
    seed, offset = _draw(op, generator, input.device, "bernoulli", probs.numel(), probs.dtype)
    return expand(to_dtype(prims.bernoulli(probs, seed, offset), compute), input.shape)


def _check_feature(op, input, p):
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    check_float(op, input, "input")
    if input.ndim < 2:
        raise ValueError(f"{op}: feature dropout needs at least 2 dims (N, C, ...), but 'input' has {input.ndim}")
    return p


def feature_dropout(input, p, train):
    """Zero whole channels (dim 1) with probability ``p``, scaling the rest by ``1 / (1 - p)``."""
    op = "feature_dropout"
    p = _check_feature(op, input, p)
    if p == 0 or not train or input.numel() == 0:
        return input
    x = opmath(op, input, "input")
    if p == 1:
        return to_dtype(prims.mul(x, c(0.0, x)), input.dtype)
    mask = _feature_mask(op, input, p)
    return to_dtype(prims.mul(x, prims.div(mask, c(1.0 - p, mask))), input.dtype)


_ALPHA = 1.7580993408473766  # -scale * alpha of SELU


def feature_alpha_dropout(input, p, train):
    """Alpha dropout of whole channels: dropped channels become SELU's negative saturation, then an affine map."""
    op = "feature_alpha_dropout"
    p = _check_feature(op, input, p)
    if p == 0 or not train or input.numel() == 0:
        return input
    x = opmath(op, input, "input")
    if p == 1:
        return to_dtype(prims.mul(x, c(0.0, x)), input.dtype)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1.0) * (1.0 - p))
    mask = _feature_mask(op, input, p)
    b = prims.add(prims.mul(prims.sub(mask, c(1.0, mask)), c(_ALPHA * a, mask)), c(_ALPHA * a * p, mask))
    return to_dtype(prims.add(prims.mul(x, prims.mul(mask, c(a, mask))), b), input.dtype)


# -- embeddings -----------------------------------------------------------------------------------------


def _check_indices(op, indices, name="indices"):
    if indices.dtype not in (_dtype.int64, _dtype.int32):
        raise TypeError(f"{op}: expected int64 or int32 for argument '{name}', but got {indices.dtype.name}")


def _check_rows(op, index, rows, name="indices"):
    if any_true(prims.logical_or(prims.lt(index, c(0, index)), prims.ge(index, c(rows, index)))):
        raise IndexOutOfBoundsError(f"{op}: '{name}' holds an index out of range for a weight with {rows} rows")


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of the 2-D ``weight`` picked by ``indices``: shape ``indices.shape + [embedding_dim]``."""
    op = "embedding"
    if weight.ndim != 2:
        raise ValueError(f"{op}: 'weight' must be 2-D, but got {weight.ndim} dims")
    _check_indices(op, indices)
    flat = to_device(flatten(indices), weight.device)
    _check_rows(op, flat, weight.shape[0])
    rows = prims.index_select(weight, 0, flat)
    return reshape(rows, list(indices.shape) + [weight.shape[1]])


def embedding_renorm(self, indices, max_norm, norm_type):
    """``self`` with each row named in ``indices`` whose ``norm_type``-norm exceeds ``max_norm`` rescaled to it.

    The scale is ``max_norm / (norm + 1e-7)``, as PyTorch's ``embedding_renorm_``.
    """
    op = "embedding_renorm"
    if self.ndim != 2:
        raise ValueError(f"{op}: 'self' must be 2-D, but got {self.ndim} dims")
    check_float(op, self)
    _check_indices(op, indices)
    flat = to_device(flatten(indices), self.device)
    _check_rows(op, flat, self.shape[0])
    x = opmath(op, self)
    norms = ops.norm.ScalarOpt_dim(x, norm_type, [1], False)
    hit = prims.index_fill(prims.full([self.shape[0]], False, dtype=_dtype.bool_, device=self.device), 0, flat, True)
    scale = prims.div(c(float(max_norm), norms), prims.add(norms, c(1e-7, norms)))
    scale = prims.where(prims.logical_and(hit, prims.gt(norms, c(float(max_norm), norms))), scale, c(1.0, norms))
    return to_dtype(prims.mul(x, keep(scale, [1], x)), self.dtype)


_MODES = {0: "sum", 1: "mean", 2: "max"}


def _embedding_bag(op, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx):
    if weight.ndim != 2:
        raise ValueError(f"{op}: 'weight' must be 2-D, but got {weight.ndim} dims")
    check_float(op, weight, "weight")
    _check_indices(op, indices)
    _check_indices(op, offsets, "offsets")
    if indices.ndim != 1 or offsets.ndim != 1:
        raise ValueError(f"{op}: 'indices' and 'offsets' must be 1-D, got {indices.ndim} and {offsets.ndim} dims")
    if mode not in _MODES:
        raise ValueError(f"{op}: argument 'mode' must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    if per_sample_weights is not None:
        if mode != 0:
            raise ValueError(f"{op}: 'per_sample_weights' is only supported for mode 'sum', got mode {_MODES[mode]}")
        if per_sample_weights.shape != indices.shape:
            raise ValueError(f"{op}: 'per_sample_weights' must have the shape of 'indices' {list(indices.shape)}")
    rows, dim = weight.shape
    if padding_idx is not None and padding_idx != -1 and padding_idx < 0:
        padding_idx += rows
    n = indices.shape[0]
    device = weight.device
    idx = to_dtype(to_device(indices, device), _dtype.int64)
    offs = to_dtype(to_device(offsets, device), _dtype.int64)
    bags = offs.shape[0] - 1 if include_last_offset else offs.shape[0]
    if bags < 0:
        raise ValueError(f"{op}: 'offsets' must hold at least one offset when include_last_offset=True")
    _check_rows(op, idx, rows)
    if offs.shape[0] and any_true(prims.logical_or(prims.lt(offs, c(0, offs)), prims.gt(offs, c(n, offs)))):
        raise ValueError(f"{op}: 'offsets' must lie in [0, {n}]")
    first = prims.slice_in_dim(offs, 0, min(offs.shape[0], 1), 1, 0)
    if any_true(prims.ne(first, c(0, first))):
        raise ValueError(f"{op}: offsets[0] has to be 0 (the first bag starts at position 0)")
    starts = prims.slice_in_dim(offs, 0, bags, 1, 0)
    if bags and any_true(
        prims.gt(prims.slice_in_dim(starts, 0, bags - 1, 1, 0), prims.slice_in_dim(starts, 1, bags, 1, 0))
    ):
        raise ValueError(f"{op}: 'offsets' must be non-decreasing")
    positions = prims.iota(n, start=0, step=1, dtype=_dtype.int64, device=device)
    if bags:
        bag = prims.sub(prims.searchsorted(starts, positions, True), c(1, positions))
        in_bag = prims.ge(bag, c(0, bag))
        if include_last_offset:  # indices from the last offset on belong to no bag
            last = prims.slice_in_dim(offs, bags, bags + 1, 1, 0)
            in_bag = prims.logical_and(in_bag, prims.lt(positions, expand(last, positions.shape)))
    else:
        bag = prims.full([n], 0, dtype=_dtype.int64, device=device)
        in_bag = prims.full([n], False, dtype=_dtype.bool_, device=device)
    counted = in_bag
    if padding_idx is not None and 0 <= padding_idx < rows:
        counted = prims.logical_and(counted, prims.ne(idx, c(padding_idx, idx)))
    safe_bag = prims.where(counted, bag, c(0, bag))
    x = opmath(op, weight, "weight")
    picked = prims.index_select(x, 0, idx)  # (n, dim)
    bag_size = prims.scatter_add(
        prims.full([bags], 0, dtype=_dtype.int64, device=device),
        0,
        safe_bag,
        prims.convert_element_type(counted, _dtype.int64),
    )
    keep_rows = expand(unsqueeze(counted, 1), picked.shape)
    bag_rows = expand(unsqueeze(safe_bag, 1), picked.shape)
    if mode == 2:
        neg_inf = c(-math.inf, picked)
        src = prims.where(keep_rows, picked, neg_inf)
        init = prims.full([bags, dim], -math.inf, dtype=x.dtype, device=device)
        out = prims.scatter_reduce(init, 0, bag_rows, src, "amax", True)
        empty = expand(unsqueeze(prims.eq(bag_size, c(0, bag_size)), 1), out.shape)
        out = prims.where(empty, c(0.0, out), out)
        # the first index of each bag reaching the maximum
        hit = prims.logical_and(keep_rows, prims.eq(src, prims.gather(out, 0, bag_rows)))
        cand = prims.where(hit, expand(unsqueeze(idx, 1), picked.shape), c(rows, bag_rows))
        order = prims.where(hit, expand(unsqueeze(positions, 1), picked.shape), c(n, bag_rows))
        first = prims.scatter_reduce(
            prims.full([bags, dim], n, dtype=_dtype.int64, device=device), 0, bag_rows, order, "amin", True
        )
        chosen = prims.logical_and(hit, prims.eq(order, prims.gather(first, 0, bag_rows)))
        max_idx = prims.scatter_reduce(
            prims.full([bags, dim], -1, dtype=_dtype.int64, device=device),
            0,
            bag_rows,
            prims.where(chosen, cand, c(-1, cand)),
            "amax",
            True,
        )
        return to_dtype(out, weight.dtype), bag, bag_size, max_idx
    if per_sample_weights is not None:
        psw = to_dtype(to_device(per_sample_weights, device), x.dtype)
        picked = prims.mul(picked, expand(unsqueeze(psw, 1), picked.shape))
    src = prims.where(keep_rows, picked, c(0.0, picked))
    out = prims.scatter_add(prims.full([bags, dim], 0, dtype=x.dtype, device=device), 0, bag_rows, src)
    if mode == 1:
        count = prims.convert_element_type(prims.maximum(bag_size, c(1, bag_size)), x.dtype)
        out = prims.div(out, expand(unsqueeze(count, 1), out.shape))
    max_idx = prims.full([bags], 0, dtype=_dtype.int64, device=device)
    return to_dtype(out, weight.dtype), bag, bag_size, max_idx


def embedding_bag(
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
):
    """Sum (mode 0), mean (1) or max (2) of the embeddings of each bag; bag ``b`` starts at ``offsets[b]``."""
    return _embedding_bag(
        "embedding_bag", weight, indices, offsets, mode, per_sample_weights, include_last_offset, None
    )


def embedding_bag_padding_idx(
    weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx
):
    """``embedding_bag`` that leaves out the indices equal to ``padding_idx``."""
    return _embedding_bag(
        "embedding_bag", weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx
    )


def embedding_bag_internal(
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=-1,
):
    """ATen's ``_embedding_bag``: ``embedding_bag`` with ``padding_idx`` (-1: none)."""
    return _embedding_bag(
        "_embedding_bag", weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx
    )


def embedding_bag_forward_only(
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=-1,
):
    """ATen's ``_embedding_bag_forward_only``: ``_embedding_bag`` (no buffers kept for a backward)."""
    return _embedding_bag(
        "_embedding_bag_forward_only",
        weight,
        indices,
        offsets,
        mode,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )


def one_hot(self, num_classes=-1):
    """int64 tensor with a trailing dim of ``num_classes`` holding 1 at each value of ``self`` (-1: max + 1)."""
    op = "one_hot"
    if self.dtype is not _dtype.int64:
        raise TypeError(f"{op}: one_hot is only applicable to index tensors (int64), got {self.dtype.name}")
    if num_classes == -1:
        if self.device.type == "meta":
            raise NotImplementedError(f"{op}: num_classes=-1 reads the data, which the meta device does not have")
        if self.numel() == 0:
            raise ValueError(f"{op}: can not infer the total number of classes from an empty tensor")
        num_classes = int(prims.item(prims.amax(self, list(range(self.ndim))))) + 1
    elif num_classes < -1:
        raise ValueError(f"{op}: argument 'num_classes' must be -1 or non-negative, got {num_classes}")
    if any_true(prims.logical_or(prims.lt(self, c(0, self)), prims.ge(self, c(num_classes, self)))):
        raise ValueError(f"{op}: class values must be in [0, {num_classes})")
    shape = [*self.shape, num_classes]
    iota = prims.iota(num_classes, start=0, step=1, dtype=_dtype.int64, device=self.device)
    hit = prims.eq(
        prims.broadcast_in_dim(self, shape, list(range(self.ndim))), prims.broadcast_in_dim(iota, shape, [self.ndim])
    )
    return prims.convert_element_type(hit, _dtype.int64)


# -- distances -------------------------------------------------------------------------------------------


def _float_pair(op, x1, x2, int_to_float=False, allow_complex=False):
    result = _dtype.result_type(x1, x2)
    if int_to_float and not (result.is_floating_point or result.is_complex):  # pairwise_distance, as PyTorch
        result = _dtype.get_default_dtype()
    if not (result.is_floating_point or (allow_complex and result.is_complex)):
        raise TypeError(f"{op}: expected floating point inputs, but got {x1.dtype.name} and {x2.dtype.name}")
    compute = _dtype.opmath_dtype(result)
    device = common_device([x1, x2])
    return to_device(to_dtype(x1, compute), device), to_device(to_dtype(x2, compute), device), result


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 * x2, dim) / (max(‖x1‖, eps) * max(‖x2‖, eps))`` after broadcasting ``x1`` and ``x2``."""
    op = "cosine_similarity"
    a, b, dt = _float_pair(op, x1, x2)
    shape = broadcast_shapes(op, a.shape, b.shape)
    a, b = expand(a, shape), expand(b, shape)
    d = wrap_dim(op, dim, len(shape))
    dims = [d] if shape else []
    na = prims.maximum(prims.sqrt(prims.sum(prims.mul(a, a), dims)), c(eps, prims.sum(a, dims)))
    nb = prims.maximum(prims.sqrt(prims.sum(prims.mul(b, b), dims)), c(eps, prims.sum(b, dims)))
    a = prims.div(a, keep(na, dims, a))
    b = prims.div(b, keep(nb, dims, b))
    return to_dtype(prims.sum(prims.mul(a, b), dims), dt)


def pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False):
    """``‖x1 - x2 + eps‖_p`` along the last dim of the broadcast inputs (real for complex inputs, as PyTorch)."""
    op = "pairwise_distance"
    a, b, dt = _float_pair(op, x1, x2, int_to_float=True, allow_complex=True)
    dt = dt.to_real() if dt.is_complex else dt
    ndim = max(x1.ndim, x2.ndim)
    diff = prims.add(ops.sub.Tensor(a, b), c(eps, ops.sub.Tensor(a, b)))
    if ndim == 0:
        return to_dtype(prims.abs(diff), dt)
    return to_dtype(ops.norm.ScalarOpt_dim(diff, p, [ndim - 1], keepdim), dt)


def _check_p(op, p):
    if p < 0:
        raise ValueError(f"{op}: argument 'p' must be non-negative, got {p}")


def _pdist(op, self, p):
    check_float(op, self)
    if self.ndim != 2:
        raise ValueError(f"{op}: 'self' must be 2-D, but got {self.ndim} dims")
    _check_p(op, p)
    n = self.shape[0]
    x = opmath(op, self)
    if n < 2:
        return prims.full([0], 0, dtype=self.dtype, device=self.device)
    pairs = prims.triu_indices(n, n, 1, dtype=_dtype.int64, device=self.device)
    i = squeeze(prims.slice_in_dim(pairs, 0, 1, 1, 0), 0)
    j = squeeze(prims.slice_in_dim(pairs, 1, 2, 1, 0), 0)
    diff = prims.sub(prims.index_select(x, 0, i), prims.index_select(x, 0, j))
    return to_dtype(ops.norm.ScalarOpt_dim(diff, p, [1], False), self.dtype)


def pdist(self, p=2):
    """Distances between every pair of rows ``i < j`` of the 2-D ``self``, in row-major order of the pairs."""
    return _pdist("pdist", self, p)


def pdist_forward(self, p=2):
    """ATen's ``_pdist_forward``: ``pdist``."""
    return _pdist("_pdist_forward", self, p)


def _cdist(op, x1, x2, p, compute_mode):
    _check_p(op, p)
    if compute_mode not in (None, 0, 1, 2):
        raise ValueError(f"{op}: argument 'compute_mode' must be None, 0, 1 or 2, got {compute_mode}")
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(f"{op}: 'x1' and 'x2' must have at least 2 dims, got {x1.ndim} and {x2.ndim}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(
            f"{op}: 'x1' and 'x2' must have the same number of columns, got {x1.shape[-1]} and {x2.shape[-1]}"
        )
    a, b, dt = _float_pair(op, x1, x2)
    batch = broadcast_shapes(op, a.shape[:-2], b.shape[:-2])
    rows1, rows2, m = a.shape[-2], b.shape[-2], a.shape[-1]
    nb = len(batch)
    shape = [*batch, rows1, rows2, m]
    ea = prims.broadcast_in_dim(expand(a, [*batch, rows1, m]), shape, [*range(nb), nb, nb + 2])
    eb = prims.broadcast_in_dim(expand(b, [*batch, rows2, m]), shape, [*range(nb), nb + 1, nb + 2])
    diff = prims.sub(ea, eb)
    if m == 0:
        return to_dtype(prims.full(shape[:-1], 0, dtype=a.dtype, device=a.device), dt)
    return to_dtype(ops.norm.ScalarOpt_dim(diff, p, [nb + 2], False), dt)


def euclidean_dist(x1, x2):
    """ATen's ``_euclidean_dist``: Euclidean distances between the rows of ``x1`` and of ``x2``."""
    return _cdist("_euclidean_dist", x1, x2, 2.0, None)


def cdist(x1, x2, p=2, compute_mode=None):
    """p-norm distance between each row of ``x1`` (…, P, M) and each row of ``x2`` (…, R, M): (…, P, R)."""
    return _cdist("cdist", x1, x2, p, compute_mode)


def cdist_forward(x1, x2, p, compute_mode):
    """ATen's ``_cdist_forward``: ``cdist``."""
    return _cdist("_cdist_forward", x1, x2, p, compute_mode)


# -- definitions ------------------------------------------------------------------------------------------

_BAG = "Tensor weight, Tensor indices, Tensor offsets"
_QUAD = "(Tensor, Tensor, Tensor, Tensor)"

# (schema, decomposition, in-place?, out=?, tags)
DEFINITIONS = [
    ("glu(Tensor self, int dim=-1) -> Tensor", glu, False, True, ()),
    ("prelu(Tensor self, Tensor weight) -> Tensor", prelu, False, False, ()),
    ("_prelu_kernel(Tensor self, Tensor weight) -> Tensor", prelu_kernel, False, False, ()),
    (
        "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
        "Generator? generator=None) -> Tensor",
        rrelu,
        True,
        False,
        ("nondeterministic_seeded",),
    ),
    (
        "rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
        "bool training=False, Generator? generator=None) -> Tensor",
        rrelu_with_noise,
        False,
        False,
        ("nondeterministic_seeded",),
    ),
    (
        "feature_dropout(Tensor input, float p, bool train) -> Tensor",
        feature_dropout,
        True,
        False,
        ("nondeterministic_seeded",),
    ),
    (
        "feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor",
        feature_alpha_dropout,
        True,
        False,
        ("nondeterministic_seeded",),
    ),
    (
        "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
        "bool sparse=False) -> Tensor",
        embedding,
        False,
        False,
        ("core",),
    ),
    (
        "embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor",
        embedding_renorm,
        True,
        True,
        (),
    ),
    (
        f"embedding_bag({_BAG}, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
        f"Tensor? per_sample_weights=None, bool include_last_offset=False) -> {_QUAD}",
        embedding_bag,
        False,
        False,
        (),
    ),
    (
        f"embedding_bag.padding_idx({_BAG}, bool scale_grad_by_freq, int mode, bool sparse, "
        f"Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> {_QUAD}",
        embedding_bag_padding_idx,
        False,
        False,
        (),
    ),
    (
        f"_embedding_bag({_BAG}, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
        f"Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> {_QUAD}",
        embedding_bag_internal,
        False,
        False,
        (),
    ),
    (
        f"_embedding_bag_forward_only({_BAG}, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
        f"Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> {_QUAD}",
        embedding_bag_forward_only,
        False,
        False,
        (),
    ),
    ("_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", euclidean_dist, False, True, ()),
    ("one_hot(Tensor self, int num_classes=-1) -> Tensor", one_hot, False, False, ()),
    (
        "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",
        cosine_similarity,
        False,
        False,
        (),
    ),
    (
        "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor",
        pairwise_distance,
        False,
        False,
        (),
    ),
    ("pdist(Tensor self, float p=2) -> Tensor", pdist, False, False, ()),
    ("_pdist_forward(Tensor self, float p=2) -> Tensor", pdist_forward, False, True, ()),
    ("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor", cdist, False, False, ()),
    ("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor", cdist_forward, False, True, ()),
]


def _define():
    for schema, fn, inplace, out, tags in DEFINITIONS:
        define_with_variants(schema, fn, tags=tags, inplace=inplace, out=out)


_define()
