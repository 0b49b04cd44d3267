"""nn.functional: activations, normalization, dropout, losses, embeddings, distances, attention.

Where PyTorch's ``torch.nn.functional`` signature is the ATen schema, the function is the
op packet itself (``layer_norm = canonical.layer_norm``). The others are thin wrappers
with F's signature that translate their arguments (``inplace=``, ``training=``, string
``reduction``, the deprecated ``size_average``/``reduce``) and call canonical ops.
"""

from __future__ import annotations

import math
import warnings

from .. import _dtype
from .._ops import canonical
from ..errors import ValueRuntimeError

__all__ = [
    # activations
    "relu",
    "relu_",
    "relu6",
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "leaky_relu",
    "leaky_relu_",
    "hardtanh",
    "hardtanh_",
    "hardsigmoid",
    "hardswish",
    "silu",
    "mish",
    "threshold",
    "threshold_",
    "rrelu",
    "rrelu_",
    "gelu",
    "glu",
    "prelu",
    "logsigmoid",
    "softplus",
    "softshrink",
    "hardshrink",
    "tanhshrink",
    "softsign",
    "sigmoid",
    "tanh",
    "softmax",
    "softmin",
    "log_softmax",
    "gumbel_softmax",
    # normalization
    "batch_norm",
    "instance_norm",
    "layer_norm",
    "group_norm",
    "rms_norm",
    "local_response_norm",
    "normalize",
    # dropout
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    # losses
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "cross_entropy",
    "nll_loss",
    "ctc_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "cosine_embedding_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "soft_margin_loss",
    "multi_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    # embeddings and distances
    "embedding",
    "embedding_bag",
    "one_hot",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
    "cdist",
    # attention
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
]

# -- activations ---------------------------------------------------------------------------------


def _inplace(name, inplace, input, *args):
    op = getattr(canonical, name + "_" if inplace else name)
    return op(input, *args)


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return _inplace("relu", inplace, input)


def relu_(input):
    """In-place ``relu``."""
    return canonical.relu_(input)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return _inplace("relu6", inplace, input)


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, else ``alpha * (exp(input) - 1)``."""
    return _inplace("elu", inplace, input, alpha)


def elu_(input, alpha=1.0):
    """In-place ``elu``."""
    return canonical.elu_(input, alpha)


def selu(input, inplace=False):
    """Scaled ELU with the self-normalising constants."""
    return _inplace("selu", inplace, input)


def selu_(input):
    """In-place ``selu``."""
    return canonical.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return _inplace("celu", inplace, input, alpha)


def celu_(input, alpha=1.0):
    """In-place ``celu``."""
    return canonical.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, else ``negative_slope * input``."""
    return _inplace("leaky_relu", inplace, input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place ``leaky_relu``."""
    return canonical.leaky_relu_(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to ``[min_val, max_val]``; ValueError when ``min_val > max_val``, as PyTorch."""
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    return _inplace("hardtanh", inplace, input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place ``hardtanh``."""
    return canonical.hardtanh_(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    """``relu6(input + 3) / 6``."""
    return _inplace("hardsigmoid", inplace, input)


def hardswish(input, inplace=False):
    """``input * relu6(input + 3) / 6``."""
    return _inplace("hardswish", inplace, input)


def silu(input, inplace=False):
    """``input * sigmoid(input)``."""
    return _inplace("silu", inplace, input)


def mish(input, inplace=False):
    """``input * tanh(softplus(input))``."""
    return _inplace("mish", inplace, input)


def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, else ``input``."""
    return _inplace("threshold", inplace, input, threshold, value)


def threshold_(input, threshold, value):
    """In-place ``threshold``."""
    return canonical.threshold_(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (random negative slopes in ``[lower, upper]`` when ``training``)."""
    return _inplace("rrelu", inplace, input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place ``rrelu``."""
    return canonical.rrelu_(input, lower, upper, training)


def gelu(input, approximate="none"):
    """``input * Phi(input)`` (``approximate="tanh"``: the tanh approximation)."""
    return canonical.gelu(input, approximate=approximate)


def glu(input, dim=-1):
    """``a * sigmoid(b)`` for the two halves ``a``, ``b`` of ``input`` along ``dim``."""
    return canonical.glu(input, dim)


def prelu(input, weight):
    """``input`` where positive, else ``weight * input`` (one weight per channel or one in all)."""
    return canonical.prelu(input, weight)


def logsigmoid(input):
    """``log(sigmoid(input))``, computed stably."""
    return canonical.log_sigmoid(input)


def softshrink(input, lambd=0.5):
    """Shrink towards 0 by ``lambd`` (0 inside ``[-lambd, lambd]``)."""
    return canonical.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    """0 inside ``[-lambd, lambd]``, else ``input``."""
    return canonical.hardshrink(input, lambd)


def tanhshrink(input):
    """``input - tanh(input)``."""
    return canonical.tanhshrink(input)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta`` (linear above ``threshold``)."""
    return canonical.softplus(input, beta, threshold)


def softsign(input):
    """``input / (1 + |input|)``."""
    return canonical.div(input, canonical.add(canonical.abs(input), 1))


def sigmoid(input):
    """``1 / (1 + exp(-input))``."""
    return canonical.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return canonical.tanh(input)


def _softmax_dim(name, ndim, stacklevel):
    """PyTorch's implicit dim: 0 for 0-, 1- and 3-dim inputs, else 1 (with a deprecation warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(input) / sum(exp(input))`` along ``dim`` (None: PyTorch's implicit dim, with a warning)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    if dtype is None:  # positional only: the op's cached overload choice without keyword matching
        return canonical.softmax(input, dim)
    return canonical.softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)`` along ``dim`` (None: PyTorch's implicit dim, with a warning)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    x = input if dtype is None else canonical.to(input, dtype)
    return canonical.softmax(canonical.neg(x), dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``input - logsumexp(input)`` along ``dim`` (None: PyTorch's implicit dim, with a warning)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    if dtype is None:  # positional only: the op's cached overload choice without keyword matching
        return canonical.log_softmax(input, dim)
    return canonical.log_softmax(input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Softmax of ``(logits + Gumbel noise) / tau``; ``hard``: the one-hot of its argmax."""
    exponential = canonical.exponential(canonical.empty_like(logits))
    gumbels = canonical.neg(canonical.log(exponential))
    y = canonical.softmax(canonical.div(canonical.add(logits, gumbels), tau), dim)
    if not hard:
        return y
    index = canonical.argmax(y, dim, True)
    return canonical.scatter(canonical.zeros_like(logits), dim, index, 1.0)


# -- normalization --------------------------------------------------------------------------------


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization over dim 1; ``training`` updates the running statistics in place."""
    if training:  # PyTorch's check: the values per channel, N * prod(spatial), must not be exactly 1
        per_channel = input.shape[0] if input.ndim else 1
        for size in input.shape[2:]:
            per_channel *= size
        if per_channel == 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when training, got input size {list(input.shape)}"
            )
    if input.ndim < 2 and input.numel() == 0:  # PyTorch returns an empty 0- or 1-D input as it is
        return input.clone()
    return canonical.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(
    input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-5
):
    """Instance normalization (each sample and channel over its spatial dims)."""
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial <= 1:
            raise ValueError(
                f"instance_norm: expected more than 1 spatial element when training, got input size {list(input.shape)}"
            )
    return canonical.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False
    )


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the trailing ``normalized_shape`` dims."""
    return canonical.layer_norm(input, list(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization: ``num_groups`` groups of channels per sample."""
    return canonical.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """RMS normalization over the trailing ``normalized_shape`` dims."""
    return canonical.rms_norm(input, list(normalized_shape), weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization across channels."""
    return canonical.local_response_norm(input, size, alpha, beta, k)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(‖input‖_p, eps)`` along ``dim``."""
    if out is None:
        return canonical.normalize(input, p, dim, eps)
    return canonical.normalize(input, p, dim, eps, out=out)


# -- dropout ------------------------------------------------------------------------------------------


def _check_p(name, p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability ``p`` and scale the rest by ``1 / (1 - p)`` when ``training``."""
    _check_p("dropout", p)
    return _inplace("dropout", inplace, input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout (keeps SELU's mean and variance)."""
    _check_p("alpha_dropout", p)
    return _inplace("alpha_dropout", inplace, input, p, training)


def _feature(name, input, p, training, inplace, dims, batched_dims):
    _check_p(name, p)
    if input.ndim not in (dims, batched_dims):
        raise ValueError(f"{name}: expected a {dims}-D or {batched_dims}-D input, but got {input.ndim} dims")
    if input.ndim == dims:  # no batch dim: channels are dim 0
        x = canonical.unsqueeze(input, 0)
        out = canonical.feature_dropout(x, p, training)
        out = canonical.squeeze.dim(out, 0)
        return canonical.copy_(input, out) if inplace else out
    return _inplace("feature_dropout", inplace, input, p, training)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    return _feature("dropout1d", input, p, training, inplace, 2, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) inputs."""
    return _feature("dropout2d", input, p, training, inplace, 3, 4)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    return _feature("dropout3d", input, p, training, inplace, 4, 5)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels; the identity (any number of dims) when not training."""
    _check_p("feature_alpha_dropout", p)
    if not training:
        return input
    return _inplace("feature_alpha_dropout", inplace, input, p, training)


# -- losses ---------------------------------------------------------------------------------------------

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _reduction(name, reduction, size_average=None, reduce=None):
    """The ATen enum of a string ``reduction`` (or of the deprecated ``size_average``/``reduce``)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=3,
        )
    if reduction not in _ENUM:
        raise ValueError(f"{name}: {reduction!r} is not a valid value for reduction")
    return _ENUM[reduction]


def _warn_shape(name, input, target):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"{name}: using a target size ({list(target.shape)}) that is different to the input size "
            f"({list(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (``weight`` scales each element before the reduction)."""
    _warn_shape("mse_loss", input, target)
    r = _reduction("mse_loss", reduction, size_average, reduce)
    if weight is None:
        return canonical.mse_loss(input, target, r)
    return _weighted(canonical.mse_loss(input, target, 0), weight, r)


def _weighted(loss, weight, r):
    loss = canonical.mul(loss, weight)
    return loss if r == 0 else (canonical.mean(loss) if r == 1 else canonical.sum(loss))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error; complex inputs give the real ``|input - target|``, as PyTorch."""
    _warn_shape("l1_loss", input, target)
    r = _reduction("l1_loss", reduction, size_average, reduce)
    if input.dtype.is_complex or target.dtype.is_complex:
        loss = canonical.abs(canonical.sub(input, target))
        return _weighted(loss, 1.0 if weight is None else weight, r)
    if weight is None:
        return canonical.l1_loss(input, target, r)
    return _weighted(canonical.l1_loss(input, target, 0), weight, r)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1 (quadratic below ``beta``)."""
    _warn_shape("smooth_l1_loss", input, target)
    return canonical.smooth_l1_loss(input, target, _reduction("smooth_l1_loss", reduction, size_average, reduce), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss (quadratic below ``delta``)."""
    _warn_shape("huber_loss", input, target)
    r = _reduction("huber_loss", reduction)
    if weight is None:
        return canonical.huber_loss(input, target, r, delta)
    return _weighted(canonical.huber_loss(input, target, 0, delta), weight, r)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Cross entropy of logits ``input`` against class indices or class probabilities ``target``."""
    r = _reduction("cross_entropy", reduction, size_average, reduce)
    return canonical.cross_entropy_loss(input, target, weight, r, ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of log-probabilities ``input`` (N, C, ...) at class indices ``target``."""
    r = _reduction("nll_loss", reduction, size_average, reduce)
    return canonical.nll_loss_nd(input, target, weight, r, ignore_index)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss of log-probabilities ``log_probs`` (T, N, C) or (T, C).

    ``targets`` are padded (N, S) or concatenated 1-D label sequences; ``input_lengths`` and
    ``target_lengths`` are int sequences or integer tensors; ``"mean"`` divides each sequence's loss by
    its target length before averaging; ``zero_infinity`` turns the infinite losses of impossible
    alignments into 0.
    """
    r = _reduction("ctc_loss", reduction)
    if hasattr(input_lengths, "dtype") or hasattr(target_lengths, "dtype"):
        if not (hasattr(input_lengths, "dtype") and hasattr(target_lengths, "dtype")):
            raise TypeError("ctc_loss: input_lengths and target_lengths must both be tensors or both be int lists")
        return canonical.ctc_loss.Tensor(log_probs, targets, input_lengths, target_lengths, blank, r, zero_infinity)
    return canonical.ctc_loss.IntList(
        log_probs, targets, list(input_lengths), list(target_lengths), blank, r, zero_infinity
    )


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of probabilities ``input``."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"binary_cross_entropy: using a target size ({list(target.shape)}) that is different to the input size "
            f"({list(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    r = _reduction("binary_cross_entropy", reduction, size_average, reduce)
    if weight is not None:
        weight = canonical.expand(weight, list(input.shape))
    return canonical.binary_cross_entropy(input, target, weight, r)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    """Binary cross entropy of logits ``input`` (``pos_weight`` weighs the positive class)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"binary_cross_entropy_with_logits: target size ({list(target.shape)}) must be the same as input size "
            f"({list(input.shape)})"
        )
    r = _reduction("binary_cross_entropy_with_logits", reduction, size_average, reduce)
    return canonical.binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence of log-probabilities ``input`` from ``target``; ``reduction="batchmean"`` divides by N."""
    if reduction == "batchmean":
        if size_average is not None or reduce is not None:
            raise ValueError("kl_div: reduction='batchmean' cannot be combined with size_average/reduce")
        total = canonical.kl_div(input, target, 2, log_target=log_target)
        return canonical.div(total, input.shape[0]) if input.ndim else total
    if reduction == "mean" and size_average is None and reduce is None:
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            UserWarning,
            stacklevel=2,
        )
    r = _reduction("kl_div", reduction, size_average, reduce)
    return canonical.kl_div(input, target, r, log_target=log_target)


def poisson_nll_loss(
    input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"
):
    """Poisson negative log likelihood."""
    r = _reduction("poisson_nll_loss", reduction, size_average, reduce)
    return canonical.poisson_nll_loss(input, target, log_input, full, eps, r)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood: ``0.5 (log(max(var, eps)) + (input - target)² / max(var, eps))``."""
    name = "gaussian_nll_loss"
    if isinstance(var, (int, float)):
        var = canonical.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = canonical.unsqueeze(var, -1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError(f"{name}: 'var' is of incorrect size {list(var.shape)}")
    if reduction not in _ENUM:
        raise ValueError(f"{name}: {reduction!r} is not a valid value for reduction")
    if canonical.any(canonical.lt(var, 0)).item():
        raise ValueError(f"{name}: 'var' has negative entry/entries")
    var = canonical.clamp(var, min=eps)
    diff = canonical.sub(input, target)
    loss = canonical.mul(canonical.add(canonical.log(var), canonical.div(canonical.mul(diff, diff), var)), 0.5)
    if full:
        loss = canonical.add(loss, 0.5 * math.log(2 * math.pi))
    r = _ENUM[reduction]
    return loss if r == 0 else (canonical.mean(loss) if r == 1 else canonical.sum(loss))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos`` for similar pairs (target 1), ``max(0, cos - margin)`` for dissimilar ones (-1)."""
    r = _reduction("cosine_embedding_loss", reduction, size_average, reduce)
    return canonical.cosine_embedding_loss(input1, input2, target, margin, r)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target (input1 - input2) + margin)``."""
    if not (input1.ndim == input2.ndim == target.ndim):
        raise ValueRuntimeError(
            f"margin_ranking_loss: all input tensors should have the same number of dims, got "
            f"{input1.ndim}, {input2.ndim} and {target.ndim}"
        )
    r = _reduction("margin_ranking_loss", reduction, size_average, reduce)
    return canonical.margin_ranking_loss(input1, input2, target, margin, r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` for target 1, ``max(0, margin - input)`` for target -1."""
    r = _reduction("hinge_embedding_loss", reduction, size_average, reduce)
    return canonical.hinge_embedding_loss(input, target, margin, r)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-class multi-label hinge loss (targets listed up to the first -1)."""
    r = _reduction("multilabel_margin_loss", reduction, size_average, reduce)
    return canonical.multilabel_margin_loss(input, target, r)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-mean_c(target log sigmoid(input) + (1 - target) log sigmoid(-input))`` per sample."""
    r = _reduction("multilabel_soft_margin_loss", reduction, size_average, reduce)
    ls = canonical.log_sigmoid
    loss = canonical.neg(
        canonical.add(
            canonical.mul(target, ls(input)), canonical.mul(canonical.rsub(target, 1), ls(canonical.neg(input)))
        )
    )
    if weight is not None:
        loss = canonical.mul(loss, weight)
    loss = canonical.mean(loss, input.ndim - 1)
    return loss if r == 0 else (canonical.mean(loss) if r == 1 else canonical.sum(loss))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``."""
    r = _reduction("soft_margin_loss", reduction, size_average, reduce)
    return canonical.soft_margin_loss(input, target, r)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-class hinge loss."""
    r = _reduction("multi_margin_loss", reduction, size_average, reduce)
    return canonical.multi_margin_loss(input, target, p, margin, weight, r)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the p-norm distance; ``margin > 0``."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    r = _reduction("triplet_margin_loss", reduction, size_average, reduce)
    return canonical.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, r)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """Triplet loss with any ``distance_function`` (default: ``pairwise_distance``)."""
    name = "triplet_margin_with_distance_loss"
    if margin <= 0:
        raise ValueError(f"{name}: margin must be greater than 0, got {margin}")
    if reduction not in _ENUM:
        raise ValueError(f"{name}: {reduction!r} is not a valid value for reduction")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = canonical.minimum(d_neg, dist(positive, negative))
    loss = canonical.clamp_min(canonical.add(canonical.sub(d_pos, d_neg), margin), 0)
    r = _ENUM[reduction]
    return loss if r == 0 else (canonical.mean(loss) if r == 1 else canonical.sum(loss))


# -- embeddings and distances -----------------------------------------------------------------------------


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at ``input``; ``max_norm`` renormalizes the looked-up rows of ``weight`` in place first."""
    if padding_idx is not None:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise ValueError(f"embedding: padding_idx {padding_idx} must be within the {rows} rows of 'weight'")
        padding_idx = padding_idx % rows
    else:
        padding_idx = -1
    if max_norm is not None:
        canonical.embedding_renorm_(weight, input, max_norm, norm_type)
    return canonical.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Sums, means or maxima of bags of embeddings: 2-D ``input`` (one bag per row) or 1-D with ``offsets``."""
    name = "embedding_bag"
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError(f"{name}: mode has to be one of sum, mean or max, got {mode!r}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{name}: if input is 2D, then offsets has to be None")
        bags, length = input.shape
        offsets = canonical.arange(0, bags * length, max(length, 1), device=input.device)
        input = canonical.reshape(input, [-1])
        if per_sample_weights is not None:
            per_sample_weights = canonical.reshape(per_sample_weights, [-1])
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError(f"{name}: offsets has to be a 1D Tensor but got None")
    else:
        raise ValueError(f"{name}: input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if padding_idx is not None:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise ValueError(f"{name}: padding_idx must be within the {rows} rows of 'weight'")
        padding_idx = padding_idx % rows
    else:
        padding_idx = -1
    if max_norm is not None:
        canonical.embedding_renorm_(weight, input, max_norm, norm_type)
    out = canonical._embedding_bag(
        weight,
        input,
        offsets,
        scale_grad_by_freq,
        modes[mode],
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )
    return out[0]


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding of class indices."""
    return canonical.one_hot(tensor, num_classes)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity along ``dim``."""
    return canonical.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm distance between corresponding rows."""
    return canonical.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2):
    """Distances between every pair of rows."""
    return canonical.pdist(input, p)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between each row of ``x1`` and each row of ``x2`` (the string ``compute_mode`` of ``torch.cdist``)."""
    modes = {
        "use_mm_for_euclid_dist_if_necessary": None,
        "use_mm_for_euclid_dist": 1,
        "donot_use_mm_for_euclid_dist": 2,
    }
    if compute_mode not in modes:
        raise ValueError(f"cdist: {compute_mode!r} is not a valid value for compute_mode")
    return canonical.cdist(x1, x2, p, modes[compute_mode])


# -- attention --------------------------------------------------------------------------------------------


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """``softmax(query keyᵀ · scale + mask) value``."""
    return canonical.scaled_dot_product_attention(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
    )


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """PyTorch's multi-head attention forward: ``(attn_output, attn_weights or None)``.

    Inputs are (L, N, E) or unbatched (L, E). Supported: packed or separate input
    projections, ``bias_k``/``bias_v``, ``add_zero_attn``, boolean or additive
    ``attn_mask`` (2-D or 3-D) and ``key_padding_mask`` (True = ignore), ``is_causal``
    with an ``attn_mask``, ``need_weights`` and ``average_attn_weights``. ``static_k``/``static_v``
    are not supported (ValueError).
    """
    name = "multi_head_attention_forward"
    if static_k is not None or static_v is not None:
        raise ValueError(f"{name}: static_k and static_v are not supported")
    batched = query.ndim == 3
    if not batched:
        query, key, value = (canonical.unsqueeze(t, 1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = canonical.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"{name}: was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(f"{name}: embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise ValueError(f"{name}: need attn_mask if specifying the is_causal hint")
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = canonical.chunk(in_proj_weight, 3)
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = canonical.chunk(in_proj_bias, 3)
    q = canonical.linear(query, wq, bq)
    k = canonical.linear(key, wk, bk)
    v = canonical.linear(value, wv, bv)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            attn_mask = canonical.unsqueeze(attn_mask, 0)
        if attn_mask.dtype is not _dtype.bool_ and not attn_mask.dtype.is_floating_point:
            raise TypeError(f"{name}: only bool and floating types of attn_mask are supported")
    if bias_k is not None and bias_v is not None:
        k = canonical.cat([k, canonical.expand(canonical.reshape(bias_k, [1, 1, embed_dim]), [1, bsz, embed_dim])])
        v = canonical.cat([v, canonical.expand(canonical.reshape(bias_v, [1, 1, embed_dim]), [1, bsz, embed_dim])])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    # (L, N, E) -> (N * H, L, head_dim)
    q = canonical.transpose(canonical.reshape(q, [tgt_len, bsz * num_heads, head_dim]), 0, 1)
    k = canonical.transpose(canonical.reshape(k, [k.shape[0], bsz * num_heads, head_dim]), 0, 1)
    v = canonical.transpose(canonical.reshape(v, [v.shape[0], bsz * num_heads, head_dim]), 0, 1)
    if add_zero_attn:
        k = canonical.cat([k, canonical.zeros([bsz * num_heads, 1, head_dim], dtype=k.dtype, device=k.device)], 1)
        v = canonical.cat([v, canonical.zeros([bsz * num_heads, 1, head_dim], dtype=v.dtype, device=v.device)], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    mask = _as_additive(attn_mask, q.dtype)
    if key_padding_mask is not None:
        kpm = _as_additive(key_padding_mask, q.dtype, ignore_true=True)
        kpm = canonical.reshape(
            canonical.expand(canonical.reshape(kpm, [bsz, 1, 1, src_len]), [bsz, num_heads, 1, src_len]),
            [bsz * num_heads, 1, src_len],
        )
        mask = kpm if mask is None else canonical.add(mask, kpm)
    if not training:
        dropout_p = 0.0
    scores = canonical.bmm(canonical.mul(q, 1.0 / math.sqrt(head_dim)), canonical.transpose(k, -2, -1))
    if mask is not None:
        scores = canonical.add(scores, mask)
    weights = canonical.softmax(scores, -1)
    if dropout_p > 0:
        weights = canonical.dropout(weights, dropout_p, True)
    out = canonical.bmm(weights, v)  # (N * H, L, head_dim)
    out = canonical.reshape(canonical.transpose(out, 0, 1), [tgt_len * bsz, embed_dim])
    out = canonical.reshape(canonical.linear(out, out_proj_weight, out_proj_bias), [tgt_len, bsz, embed_dim])
    if not batched:
        out = canonical.squeeze.dim(out, 1)
    if not need_weights:
        return out, None
    weights = canonical.reshape(weights, [bsz, num_heads, tgt_len, src_len])
    if average_attn_weights:
        weights = canonical.mean(weights, 1)
    if not batched:
        weights = canonical.squeeze.dim(weights, 0)
    return out, weights


def _pad_last(mask):
    """``mask`` with one more (zero / False) column at the end of its last dim."""
    if mask is None:
        return None
    pad = canonical.zeros([*mask.shape[:-1], 1], dtype=mask.dtype, device=mask.device)
    return canonical.cat([mask, pad], -1)


def _as_additive(mask, dtype, ignore_true=True):
    """A boolean mask (True = masked out, as ``nn.MultiheadAttention``) as an additive float mask."""
    if mask is None:
        return None
    if mask.dtype is _dtype.bool_:
        return canonical.masked_fill(
            canonical.zeros(list(mask.shape), dtype=dtype, device=mask.device), mask, -math.inf
        )
    return canonical.to(mask, dtype)
