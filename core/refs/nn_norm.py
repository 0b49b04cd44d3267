"""Normalization ops: batch, layer, group, instance and RMS norm, local response norm, ``normalize``.

Statistics are computed in the computation dtype (float32 for float16/bfloat16
inputs) and the output is rounded once to the input's dtype. Variances used to
normalize are biased (divide by n); the running variance of batch and instance
norm is updated with the unbiased one (n / (n - 1)), as PyTorch does. Running
statistics are written in place only after every argument has been checked.

The ``native_*`` ops return ``(output, mean, rstd)`` (batch norm: ``save_mean``,
``save_invstd``) in the input's dtype; ``native_batch_norm`` in evaluation mode
returns empty statistics, as PyTorch's CPU kernel does.

``batch_norm_stats`` returns its statistics in the computation dtype (float32 for 16-bit
inputs). ``local_response_norm`` and ``normalize`` exist only in Python in PyTorch
(``torch.nn.functional``); they decompose cleanly, so they are canonical ops here
with F's signature (``normalize``'s ``out=`` is the generated variant).
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._nn_utils import c, channel, check_float, keep, like, mean, opmath
from ._tensor_utils import reshape
from ._utils import define_with_variants, to_dtype, wrap_dim

# -- batch norm -------------------------------------------------------------------------


def _check_channel_param(op: str, name: str, t, channels: int) -> None:
    if t is not None and (t.ndim != 1 or t.shape[0] != channels):
        raise ValueError(f"{op}: expected '{name}' of shape [{channels}], but got {list(t.shape)}")


def _check_bn(op: str, input, weight, bias, running_mean, running_var, training: bool) -> None:
    check_float(op, input, "input")
    if input.ndim < 2:
        raise ValueError(f"{op}: expected 'input' with at least 2 dims (N, C, ...), but got {input.ndim}")
    channels = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        _check_channel_param(op, name, t, channels)
    if not training and (running_mean is None or running_var is None):
        raise ValueError(f"{op}: 'running_mean' and 'running_var' must be defined in evaluation mode")


def _affine(y, weight, bias, dim: int = 1):
    """``y * weight + bias`` with per-channel parameters along ``dim`` (either may be None)."""
    if weight is not None:
        y = prims.mul(y, channel(like(weight, y), y, dim))
    if bias is not None:
        y = prims.add(y, channel(like(bias, y), y, dim))
    return y


def _update_running(running, stat, momentum: float) -> None:
    """``running = (1 - momentum) * running + momentum * stat``, in place."""
    r = like(running, stat)
    new = prims.add(prims.mul(r, c(1.0 - momentum, r)), prims.mul(stat, c(momentum, stat)))
    prims.copy_to(running, to_dtype(new, running.dtype))


def _unbiased(var, n: int):
    return prims.mul(var, c(n / (n - 1) if n > 1 else float("inf"), var))


def _batch_norm(op, input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(output, save_mean, save_invstd)``; updates the running statistics when training."""
    _check_bn(op, input, weight, bias, running_mean, running_var, training)
    x = opmath(op, input, "input")
    dims = [0] + list(range(2, x.ndim))
    if training:
        n = input.numel() // max(input.shape[1], 1)
        m = mean(x, dims)
        var = prims.var(x, dims, 0)
        invstd = prims.rsqrt(prims.add(var, c(eps, var)))
        if running_mean is not None:
            _update_running(running_mean, m, momentum)
        if running_var is not None:
            _update_running(running_var, _unbiased(var, n), momentum)
    else:
        m = like(running_mean, x)
        var = like(running_var, x)
        invstd = prims.rsqrt(prims.add(var, c(eps, var)))
    y = prims.mul(prims.sub(x, channel(m, x)), channel(invstd, x))
    out = to_dtype(_affine(y, weight, bias), input.dtype)
    if not training:
        empty = prims.full([0], 0, dtype=input.dtype, device=input.device)
        return out, empty, empty
    return out, to_dtype(m, input.dtype), to_dtype(invstd, input.dtype)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """Normalize each channel (dim 1) over the batch and spatial dims; running statistics in evaluation mode."""
    return _batch_norm("batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(output, save_mean, save_invstd)`` of batch norm (statistics empty in evaluation mode)."""
    return _batch_norm("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)


def native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``native_batch_norm`` with required running statistics (updated in place when training)."""
    op = "_native_batch_norm_legit"
    return _batch_norm(op, input, weight, bias, running_mean, running_var, training, momentum, eps)


def native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    """``native_batch_norm`` without running statistics (always uses the batch's)."""
    op = "_native_batch_norm_legit"
    if not training:
        raise ValueError(f"{op}: without running statistics 'training' must be True")
    return _batch_norm(op, input, weight, bias, None, None, True, momentum, eps)


def native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    """``native_batch_norm`` in evaluation mode (normalizes with the running statistics)."""
    op = "_native_batch_norm_legit_no_training"
    return _batch_norm(op, input, weight, bias, running_mean, running_var, False, momentum, eps)


# -- instance norm ------------------------------------------------------------------------


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """Normalize each (sample, channel) over its spatial dims; running statistics averaged over the batch."""
    op = "instance_norm"
    _check_bn(op, input, weight, bias, running_mean, running_var, use_input_stats)
    if not use_input_stats:
        return _batch_norm(op, input, weight, bias, running_mean, running_var, False, momentum, eps)[0]
    x = opmath(op, input, "input")
    dims = list(range(2, x.ndim))
    m = mean(x, dims)
    var = prims.var(x, dims, 0)
    invstd = prims.rsqrt(prims.add(var, c(eps, var)))
    y = prims.mul(prims.sub(x, keep(m, dims, x)), keep(invstd, dims, x))
    n = 1
    for d in dims:
        n *= x.shape[d]
    if running_mean is not None:
        _update_running(running_mean, mean(m, [0]), momentum)
    if running_var is not None:
        _update_running(running_var, mean(_unbiased(var, n), [0]), momentum)
    return to_dtype(_affine(y, weight, bias), input.dtype)


# -- layer norm and RMS norm ---------------------------------------------------------------------


def _check_normalized(op, input, normalized_shape, weight, bias=None) -> list:
    """The normalized dims of ``input`` (its last ``len(normalized_shape)``); ValueError on mismatch."""
    shape = [int(s) for s in normalized_shape]
    k = len(shape)
    if k == 0:
        raise ValueError(f"{op}: expected 'normalized_shape' to have at least 1 dim, but got []")
    if input.ndim < k or list(input.shape[input.ndim - k :]) != shape:
        raise ValueError(
            f"{op}: given normalized_shape={shape}, expected 'input' with shape [*, {', '.join(map(str, shape))}], "
            f"but got {list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise ValueError(f"{op}: expected '{name}' of shape {shape}, but got {list(t.shape)}")
    return list(range(input.ndim - k, input.ndim))


def _trailing(t, x):
    """A parameter shaped like ``x``'s trailing dims, broadcast to ``x``."""
    return prims.broadcast_in_dim(like(t, x), list(x.shape), list(range(x.ndim - t.ndim, x.ndim)))


def _layer_norm(op, input, normalized_shape, weight, bias, eps):
    dims = _check_normalized(op, input, normalized_shape, weight, bias)
    x = opmath(op, input, "input")
    m = mean(x, dims)
    var = prims.var(x, dims, 0)
    rstd = prims.rsqrt(prims.add(var, c(eps, var)))
    y = prims.mul(prims.sub(x, keep(m, dims, x)), keep(rstd, dims, x))
    if weight is not None:
        y = prims.mul(y, _trailing(weight, y))
    if bias is not None:
        y = prims.add(y, _trailing(bias, y))
    stat_shape = list(input.shape[: input.ndim - len(dims)]) + [1] * len(dims)
    return (
        to_dtype(y, input.dtype),
        reshape(to_dtype(m, input.dtype), stat_shape),
        reshape(to_dtype(rstd, input.dtype), stat_shape),
    )


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """Normalize over the trailing ``normalized_shape`` dims (biased variance), then ``* weight + bias``."""
    return _layer_norm("layer_norm", input, normalized_shape, weight, bias, eps)[0]


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)`` of layer norm; the statistics keep the normalized dims as size 1."""
    return _layer_norm("native_layer_norm", input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input²) + eps) * weight`` over the trailing dims; ``eps`` defaults to the dtype's eps."""
    op = "rms_norm"
    dims = _check_normalized(op, input, normalized_shape, weight)
    # complex inputs as PyTorch's composite: the mean of the complex squares, a complex rsqrt
    x = to_dtype(input, _dtype.opmath_dtype(input.dtype)) if input.dtype.is_complex else opmath(op, input, "input")
    eps = _dtype.finfo(x.dtype.to_real() if x.dtype.is_complex else x.dtype).eps if eps is None else eps
    ms = mean(prims.mul(x, x), dims)
    y = prims.mul(x, keep(prims.rsqrt(prims.add(ms, c(eps, ms))), dims, x))
    if weight is not None:
        y = prims.mul(y, _trailing(weight, y))
    return to_dtype(y, input.dtype)


# -- group norm -----------------------------------------------------------------------------------


def _group_norm(op, input, weight, bias, n, channels, hxw, group, eps):
    check_float(op, input, "input")
    if group <= 0 or channels % group:
        raise ValueError(f"{op}: expected 'num_groups' to divide the {channels} channels, but got {group}")
    if input.numel() != n * channels * hxw:
        raise ValueError(f"{op}: 'input' of shape {list(input.shape)} is not N={n} x C={channels} x HxW={hxw}")
    _check_channel_param(op, "weight", weight, channels)
    _check_channel_param(op, "bias", bias, channels)
    x = reshape(opmath(op, input, "input"), (n, group, (channels // group) * hxw))
    m = mean(x, [2])
    var = prims.var(x, [2], 0)
    rstd = prims.rsqrt(prims.add(var, c(eps, var)))
    y = prims.mul(prims.sub(x, keep(m, [2], x)), keep(rstd, [2], x))
    y = _affine(reshape(y, (n, channels, hxw)), weight, bias)
    return to_dtype(reshape(y, input.shape), input.dtype), to_dtype(m, input.dtype), to_dtype(rstd, input.dtype)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """Split the channels into ``num_groups`` groups and normalize each group of each sample."""
    op = "group_norm"
    if input.ndim < 2:
        raise ValueError(f"{op}: expected 'input' with at least 2 dims (N, C, ...), but got {input.ndim}")
    n, channels = input.shape[0], input.shape[1]
    hxw = 1
    for s in input.shape[2:]:
        hxw *= s
    return _group_norm(op, input, weight, bias, n, channels, hxw, num_groups, eps)[0]


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)`` of group norm; the statistics have shape (N, group)."""
    return _group_norm("native_group_norm", input, weight, bias, N, C, HxW, group, eps)


# -- split batch norm and weight norm ------------------------------------------------------------


def batch_norm_stats(input, eps):
    """``(mean, invstd)`` per channel (dim 1) over the batch and spatial dims, in the computation dtype."""
    op = "batch_norm_stats"
    _check_bn(op, input, None, None, None, None, True)
    x = opmath(op, input, "input")
    dims = [0] + list(range(2, x.ndim))
    var = prims.var(x, dims, 0)
    return mean(x, dims), prims.rsqrt(prims.add(var, c(eps, var)))


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """``(input - mean) * invstd * weight + bias`` with per-channel statistics (``eps`` is already in ``invstd``)."""
    op = "batch_norm_elemt"
    _check_bn(op, input, weight, bias, mean, invstd, True)
    x = opmath(op, input, "input")
    y = prims.mul(prims.sub(x, channel(like(mean, x), x)), channel(like(invstd, x), x))
    return to_dtype(_affine(y, weight, bias), input.dtype)


def weight_norm(v, g, dim=0):
    """``v * (g / norm_except_dim(v, 2, dim))``: the weight-normalized parameter."""
    op = "_weight_norm"
    check_float(op, v, "v")
    check_float(op, g, "g")
    return ops.mul.Tensor(v, ops.div.Tensor(g, ops.norm_except_dim(v, 2, dim)))


# -- local response norm and normalize ---------------------------------------------------------


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``input / (k + alpha / size * sum of input² over a window of `size` channels) ** beta``.

    The window of channel c covers ``[c - size // 2, c + (size - 1) // 2]``, zero-padded at the edges.
    """
    op = "local_response_norm"
    if input.ndim < 3:
        raise ValueError(f"{op}: expected 'input' with 3 or more dims, but got {input.ndim}")
    if size <= 0:
        raise ValueError(f"{op}: argument 'size' must be positive, got {size}")
    integral = not (input.dtype.is_floating_point or input.dtype.is_complex)
    if integral:  # as PyTorch: the squares' window mean in int64 (truncated), the rest in the default float
        squares = to_dtype(input, _dtype.int64)
        input = to_dtype(input, _dtype.get_default_dtype())  # noqa: A001
    x = opmath(op, input, "input")
    if x.numel() == 0:
        return prims.clone(input)
    sq = prims.mul(squares, squares) if integral else prims.mul(x, x)
    channels = x.shape[1]
    front, back = size // 2, (size - 1) // 2
    pad = lambda n: prims.full([x.shape[0], n, *x.shape[2:]], 0, dtype=sq.dtype, device=x.device)  # noqa: E731
    padded = ops.cat([pad(front), sq, pad(back)], 1)
    total = None
    for j in range(size):
        part = prims.slice_in_dim(padded, j, j + channels, 1, 1)
        total = part if total is None else prims.add(total, part)
    if integral:
        total = prims.mul(to_dtype(ops.div(total, size, rounding_mode="trunc"), x.dtype), c(float(size), x))
    div = prims.pow(prims.add(prims.mul(total, c(alpha / size, total)), c(k, total)), c(beta, total))
    return to_dtype(prims.div(x, div), input.dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``input / max(‖input‖_p along dim, eps)``."""
    op = "normalize"
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise TypeError(f"{op}: expected a floating point or complex 'input', but got {input.dtype.name}")
    d = wrap_dim(op, dim, input.ndim)
    norm = ops.norm.ScalarOpt_dim(input, p, [d], True)
    denom = ops.clamp_min(norm, eps)
    return ops.div.Tensor(input, ops.expand(denom, list(input.shape)))


# -- definitions ------------------------------------------------------------------------------

_BN_ARGS = "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var"
_LEGIT_ARGS = "Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var"
_TRIPLE = "(Tensor, Tensor, Tensor)"

DEFINITIONS = [
    (
        f"batch_norm({_BN_ARGS}, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
        batch_norm,
        False,
    ),
    (f"native_batch_norm({_BN_ARGS}, bool training, float momentum, float eps) -> {_TRIPLE}", native_batch_norm, False),
    (
        f"_native_batch_norm_legit({_LEGIT_ARGS}, bool training, float momentum, float eps) -> {_TRIPLE}",
        native_batch_norm_legit,
        False,
    ),
    (
        "_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, "
        f"float eps) -> {_TRIPLE}",
        native_batch_norm_legit_no_stats,
        False,
    ),
    (
        "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, "
        f"Tensor running_var, float momentum, float eps) -> {_TRIPLE}",
        native_batch_norm_legit_no_training,
        False,
    ),
    (
        f"instance_norm({_BN_ARGS}, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",
        instance_norm,
        False,
    ),
    (
        "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
        "bool cudnn_enable=True) -> Tensor",
        layer_norm,
        False,
    ),
    (
        "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
        f"-> {_TRIPLE}",
        native_layer_norm,
        False,
    ),
    (
        "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
        rms_norm,
        False,
    ),
    (
        "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
        "bool cudnn_enabled=True) -> Tensor",
        group_norm,
        False,
    ),
    (
        "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
        f"float eps) -> {_TRIPLE}",
        native_group_norm,
        False,
    ),
    (
        "local_response_norm(Tensor input, int size, float alpha=0.0001, float beta=0.75, float k=1.0) -> Tensor",
        local_response_norm,
        False,
    ),
    ("normalize(Tensor input, float p=2.0, int dim=1, float eps=1e-12) -> Tensor", normalize, True),
    ("batch_norm_stats(Tensor input, float eps) -> (Tensor, Tensor)", batch_norm_stats, False),
    (
        "batch_norm_elemt(Tensor input, Tensor? weight, Tensor? bias, Tensor mean, Tensor invstd, float eps) -> Tensor",
        batch_norm_elemt,
        True,
    ),
    ("_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor", weight_norm, False),
]
CORE = {"native_batch_norm", "native_layer_norm", "native_group_norm", "_native_batch_norm_legit"}


def _define():
    for schema, fn, out in DEFINITIONS:
        name = schema.split("(", 1)[0]
        tags = ("core",) if name in CORE else ()
        define_with_variants(schema, fn, tags=tags, inplace=False, out=out)


_define()
